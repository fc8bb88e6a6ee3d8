"""Hardening of the engine and environments at their public doors: bad actions, masks,
history, data files and their limits, records, options and the Gymnasium wrappers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import moonriver_env  # noqa: F401  (registers MoonRiver-v0)
from moonriver_env import moonriver_v0
from moonriver_env.moonriver.gym_env import MoonRiverGymEnv
from moonriver_env.moonriver.rules import DataFileError, Game, GameConfig, IllegalActionError, Phase
from moonriver_env.moonriver.rules import actions as A
from moonriver_env.moonriver.rules.data import default_path
from tests.helpers import random_playout

PLOT_HEADER = "kind,terrain,nugget,beaver,corn,cows,skull,circle,count,number"
BONUS_HEADER = "tile,face,terrain,nugget,beaver,corn,cows,skull,circle"


def write(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


def default_text(name: str) -> str:
    return Path(default_path(name)).read_text(encoding="utf-8")


def first_decisions(game: Game, count: int) -> Game:
    """Play ``count`` decisions, always the first legal id."""
    for _ in range(count):
        game.apply(int(game.legal_action_ids()[0]))
    return game


# ----------------------------------------------------------- defect 3: history is a copy
def test_history_is_a_deep_copy_that_cannot_change_the_game() -> None:
    game = first_decisions(Game(GameConfig(num_players=4), seed=1), 30)
    clone = game.clone()
    before = json.dumps(game.to_record(include_seed=True))
    history = game.history
    decision = next(e for e in reversed(history) if e["type"] == "decision")
    decision["action"] = 2004
    column = next(e for e in history if e.get("event") == "column")
    column["plots"].append(999)
    game.to_record()["events"][0]["boards"].append("nowhere")
    assert json.dumps(game.to_record(include_seed=True)) == before
    assert json.dumps(clone.to_record(include_seed=True)) == before
    assert (Game.from_record(json.loads(before)).to_record(include_seed=True)
            == game.to_record(include_seed=True))


# ---------------------------------------------------- record order: a decision, then chance
def test_record_lists_each_decision_before_the_chance_events_it_causes() -> None:
    game = Game(GameConfig(num_players=4), seed=0)
    first_decisions(game, 4)  # the last setup placement draws the pending column
    kinds = [e["type"] if e["type"] == "decision" else e["event"] for e in game.history]
    assert kinds == ["setup", "saloon", "column", "decision", "decision", "decision",
                     "decision", "column"]
    for n, auto in ((2, False), (3, True), (4, False)):
        game = Game(GameConfig(num_players=n, auto_forced=auto), seed=n)
        rng = np.random.default_rng(n)
        caused = 0
        while not game.is_over:
            seen = len(game._history)  # (read directly: game.history deep-copies)
            ids = game.legal_action_ids()
            game.apply(int(ids[rng.integers(ids.size)]))
            new = game._history[seen:]
            assert new[0]["type"] == "decision" and not new[0].get("auto")
            caused += sum(e["type"] == "chance" for e in new)
        assert caused > 10  # columns and saloon refills came after the decisions
        record = json.loads(json.dumps(game.to_record()))
        assert Game.from_record(record).scores() == game.scores()


def test_version_1_records_still_replay_and_verify() -> None:
    """Records written before the order fix list the decision after its chance events."""
    game = Game(GameConfig(num_players=3), seed=4)
    random_playout(game, np.random.default_rng(4))
    record = json.loads(json.dumps(game.to_record()))
    old: list[dict] = []
    pending: list[dict] = []
    for event in record["events"]:  # rewrite into the old order: chance before its decision
        if event["type"] == "decision":
            if pending:
                old.append(pending.pop())
            pending.append(event)
        else:
            old.append(event)
    old += pending
    record.update(version=1, events=old)
    assert Game.from_record(record).scores() == game.scores()
    column = next(e for e in record["events"] if e.get("event") == "column")
    column["plots"] = column["plots"][::-1]
    with pytest.raises(ValueError, match="differ"):
        Game.from_record(record)


# ------------------------------------------------------------ defect 8: immutable masks
def test_legal_masks_cannot_be_made_writable() -> None:
    game = first_decisions(Game(GameConfig(num_players=4), seed=2), 6)
    for mask in (game.legal_mask(), Game(GameConfig(num_players=4), seed=2).legal_mask()):
        arr = np.asarray(mask)
        with pytest.raises(ValueError):
            arr.setflags(write=True)
        base = arr.base
        while isinstance(base, np.ndarray):  # no array underneath may be made writable either
            with pytest.raises(ValueError):
                base.setflags(write=True)
            base = base.base
    aec = moonriver_v0.raw_env(num_players=4)
    aec.reset(seed=0)
    other = next(a for a in aec.agents if a != aec.agent_selection)
    with pytest.raises(ValueError):
        np.asarray(aec.observe(other)["action_mask"]).setflags(write=True)


def test_writing_to_a_mask_cannot_corrupt_another_game() -> None:
    game = Game(GameConfig(num_players=4), seed=5)
    mask = np.asarray(game.legal_mask())
    try:
        mask.setflags(write=True)
        mask[:] = 0
    except ValueError:
        pass
    fresh = Game(GameConfig(num_players=4), seed=5)
    assert fresh.legal_mask().sum() > 0
    fresh.apply(int(fresh.legal_action_ids()[0]))


# ------------------------------------------------------- defect 9: last-round saloon refill
def recruiting_game(seed: int, num_players: int = 4) -> tuple[Game, list[int], int]:
    """Recruit whenever offered, else take the last legal id, until the emptying starts."""
    game = Game(GameConfig(num_players=num_players), seed=seed)
    while not game.emptying and not game.is_over:
        ids = game.legal_action_ids().tolist()
        recruits = [i for i in ids if A.RECRUIT0 <= i < A.COWBOY0]
        game.apply(recruits[0] if recruits else ids[-1])
    return game, list(game.saloon), len(game.pile)


def test_saloon_is_refilled_at_the_end_of_the_last_round() -> None:
    game, saloon, pile = recruiting_game(3)
    assert game.emptying
    # Before the fix the emptying started with saloon [-1, 18, 3, 11, 5] and 5 in the pile.
    assert -1 not in saloon
    assert pile == 4
    refills = [e for e in game.history if e.get("event") == "saloon"]
    assert refills[-1]["filled"] == [[0, saloon[0]]]
    decisions = [i for i, e in enumerate(game.history) if e["type"] == "decision"]
    assert game.history.index(refills[-1]) > decisions[-1]  # after the last round's turns


def test_last_round_refill_happens_in_every_player_count() -> None:
    for n in (2, 3, 4):
        for seed in range(6):
            _, saloon, pile = recruiting_game(seed, n)
            assert pile == 0 or -1 not in saloon, (n, seed)


# ---------------------------------------------------- defects 4, 5: data-file size limits
def test_huge_plot_manifest_is_refused_at_load(tmp_path: Path) -> None:
    rows = "".join(f"k{i},farm,0,0,0,0,0,0,96,1\n" for i in range(200))
    path = write(tmp_path, "plots.csv", PLOT_HEADER + "\n" + rows)
    with pytest.raises(DataFileError, match=r"plots\.csv.*at most \d+ plots"):
        GameConfig(plots_file=path)
    rows = "".join(f"k{i},farm,0,0,0,0,0,0,1,1\n" for i in range(1000))
    path = write(tmp_path, "kinds.csv", PLOT_HEADER + "\n" + rows)
    with pytest.raises(DataFileError, match=r"kinds\.csv, line 258: a manifest has at most "
                                            r"256 kinds"):
        GameConfig(plots_file=path)
    rows = "".join(f"k{i},farm,0,0,0,0,0,0,1,1\n" for i in range(40_000))
    path = write(tmp_path, "kinds.csv", PLOT_HEADER + "\n" + rows)
    with pytest.raises(DataFileError, match=r"kinds\.csv"):  # (too large a file, too)
        GameConfig(plots_file=path)


def test_largest_allowed_manifest_plays_without_overflow(tmp_path: Path) -> None:
    from moonriver_env.moonriver.rules.data import MAX_PLOT_KINDS, MAX_PLOTS

    per_kind = MAX_PLOTS // MAX_PLOT_KINDS
    rows = "".join(f"k{i},{('farm', 'meadow', 'desert')[i % 3]},0,0,0,{i % 3},0,{i % 2},"
                   f"{per_kind},{i % 999}\n" for i in range(MAX_PLOT_KINDS))
    path = write(tmp_path, "plots.csv", PLOT_HEADER + "\n" + rows)
    env = moonriver_v0.raw_env(num_players=3, plots_file=path)
    env.reset(seed=0)
    assert env.game.data.num_plots == MAX_PLOTS
    space = env.observation_space("player_0")["observation"]
    rng = np.random.default_rng(0)
    steps = 0
    while not env.game.is_over:
        obs = env.observe(env.agent_selection)
        if steps % 50 == 0:
            assert space.contains(obs["observation"])
        ids = np.flatnonzero(obs["action_mask"])
        env.step(int(ids[rng.integers(ids.size)]))
        steps += 1
    for agent in env.agents:
        assert space.contains(env.observe(agent)["observation"])


def test_partners_file_that_would_leave_the_observation_space_is_refused(tmp_path) -> None:
    path = write(tmp_path, "partners.csv", "specialist,count\n" + "desperado,20\n" * 17)
    with pytest.raises(DataFileError, match=r"partners\.csv.*at most \d+ partner tokens"):
        GameConfig(partners_file=path)


def test_largest_allowed_partners_file_stays_inside_the_space(tmp_path: Path) -> None:
    from moonriver_env.moonriver.rules.data import MAX_PARTNERS

    rows = "desperado,20\n" * (MAX_PARTNERS // 20)
    path = write(tmp_path, "partners.csv", "specialist,count\n" + rows)
    env = moonriver_v0.raw_env(num_players=4, partners_file=path)
    env.reset(seed=1)
    space = env.observation_space("player_0")["observation"]
    rng = np.random.default_rng(1)
    while not env.game.is_over:
        obs = env.observe(env.agent_selection)
        assert space.contains(obs["observation"])
        ids = np.flatnonzero(obs["action_mask"])
        env.step(int(ids[rng.integers(ids.size)]))


# ---------------------------------------------------------------- data readers' errors
def manifest(line: str) -> str:
    return default_text("plots.csv") + line + "\n"


BAD_PLOT_FILES = {
    "not utf-8": (default_text("plots.csv").encode() + b"26,farm,0,0,0,0,0,0,1,\xe9\n", 27,
                  "not UTF-8"),
    "huge field": (manifest("26,farm,0,0,0,0,0,0,1," + "9" * 200_000), 27, "over-long field"),
    "extra field": (manifest("26,farm,0,0,0,0,0,0,1,9,extra"), 27, "expected 10 fields"),
    "missing field": (manifest("26,farm,0,0,0,0,0,0,1"), 27, "expected 10 fields"),
    "blank-padded count": (manifest("26,farm,0,0,0,0,0,0, 7 ,9"), 27, "plain digits"),
    "signed count": (manifest("26,farm,0,0,0,0,0,0,+7,9"), 27, "plain digits"),
    "underscored count": (manifest("26,farm,0,0,0,0,0,0,1_0,9"), 27, "plain digits"),
    "unbalanced quote": (manifest('26,farm,0,0,0,0,0,0,"1,9'), 27, "not valid CSV"),
    "nul byte": (manifest("26,farm,0,0,0,0,0,0,1,9\x00"), 27, "plain digits"),
}


@pytest.mark.parametrize("case", list(BAD_PLOT_FILES), ids=list(BAD_PLOT_FILES))
def test_bad_plot_files_are_data_file_errors_naming_file_and_line(tmp_path, case) -> None:
    text, line, allowed = BAD_PLOT_FILES[case]
    path = write(tmp_path, "bad_plots.csv", text)
    with pytest.raises(DataFileError) as info:
        GameConfig(plots_file=path)
    message = str(info.value)
    assert "bad_plots.csv" in message and f"line {line}" in message and allowed in message, \
        message


def test_oversized_data_file_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    with open(path, "wb") as fh:
        fh.write(PLOT_HEADER.encode() + b"\n")
        fh.truncate(64 << 20)  # 64 MB, sparse
    with pytest.raises(DataFileError, match=r"big\.csv: larger than \d+ bytes"):
        GameConfig(plots_file=str(path))


def test_boards_json_errors(tmp_path: Path) -> None:
    doc = json.loads(default_text("boards.json"))
    nested = write(tmp_path, "nested.json", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(DataFileError, match=r"nested\.json: JSON nested too deeply"):
        GameConfig(boards_file=nested)
    doc["boards"][0]["reserve"] = True
    path = write(tmp_path, "bool.json", json.dumps(doc))
    with pytest.raises(DataFileError, match=r"boards\[0\]: 'reserve' must be an integer in 1\.\.4"):
        GameConfig(boards_file=path)
    doc = json.loads(default_text("boards.json"))
    doc["boards"][0]["bridges"] = [[0, 0], [1, 2], [0, 0]]
    path = write(tmp_path, "dup.json", json.dumps(doc))
    with pytest.raises(DataFileError, match=r"boards\[0\]: bridges\[2\] repeats \(0, 0\)"):
        GameConfig(boards_file=path)
    path = write(tmp_path, "latin1.json", default_text("boards.json").replace(
        '"any"', '"gr\u00fcn"').encode("latin-1"))
    with pytest.raises(DataFileError, match=r"latin1\.json, line \d+: not UTF-8"):
        GameConfig(boards_file=path)


def test_header_error_never_quotes_the_file(tmp_path: Path) -> None:
    secret = "root:x:0:0:root:/root:/bin/bash"
    path = write(tmp_path, "passwd", secret + "\n" + secret + "\n")
    for field in ("plots_file", "partners_file", "bonus_file", "boards_file"):
        with pytest.raises(DataFileError) as info:
            GameConfig(**{field: path})
        assert "root" not in str(info.value).replace(str(tmp_path), ""), str(info.value)
    record = Game(GameConfig(num_players=4), seed=0).to_record(include_seed=True)
    record["config"]["plots_file"] = path
    with pytest.raises(ValueError) as info:
        Game.from_record(record)
    assert "root:x" not in str(info.value) and "passwd" in str(info.value)


def test_bridges_beyond_row_1_are_allowed_where_the_ranch_has_the_row(tmp_path) -> None:
    doc = json.loads(default_text("boards.json"))
    camp = next(b for b in doc["boards"] if b["name"] == "camp")
    camp["bridges"] = [[3, 0], [4, 4]]
    path = write(tmp_path, "deep.json", json.dumps(doc))
    game = Game(GameConfig(num_players=4, boards_file=path), seed=0)
    while game.phase != Phase.BUILD:
        game.apply(int(game.legal_action_ids()[0]))
    cells = {c for aid in game.legal_action_ids().tolist() if aid != A.PASS_ID
             for c in A.ACTIONS[aid].cells}
    assert (3, 0) in cells and (4, 4) in cells and (0, 0) not in cells
    camp["bridges"] = [[7, 1]]
    path = write(tmp_path, "deeper.json", json.dumps(doc))
    assert Game(GameConfig(num_players=2, boards_file=path), seed=0)
    with pytest.raises(ValueError, match=r"board 'camp' has bridges \[\(7, 1\)\] outside the "
                                         r"5-row ranch"):
        GameConfig(num_players=4, boards_file=path)


# ------------------------------------------------------------------ data-file cache
def test_edited_data_file_is_read_again_by_a_new_config(tmp_path: Path) -> None:
    path = write(tmp_path, "plots.csv", PLOT_HEADER + "\n1,farm,0,0,0,1,0,0,8,1\n")
    assert GameConfig(plots_file=path).data.num_plots == 8
    Path(path).write_text(PLOT_HEADER + "\n1,farm,0,0,0,1,0,0,12,1\n", encoding="utf-8")
    assert GameConfig(plots_file=path).data.num_plots == 12
    Path(path).write_text(PLOT_HEADER + "\n1,farm,0,0,0,1,0,0,x,1\n", encoding="utf-8")
    with pytest.raises(DataFileError, match="line 2"):
        GameConfig(plots_file=path)


# ------------------------------------------------------ records with relative data paths
def test_record_with_relative_data_path_replays_from_another_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "data").mkdir()
    write(tmp_path / "data", "plots.csv", default_text("plots.csv"))
    monkeypatch.chdir(tmp_path)
    config = GameConfig(num_players=3, plots_file="data/plots.csv")
    assert config.plots_file == str((tmp_path / "data" / "plots.csv").resolve())
    game = Game(config, seed=7)
    random_playout(game, np.random.default_rng(7))
    record = json.loads(json.dumps(game.to_record()))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert Game.from_record(record).scores() == game.scores()


# ----------------------------------------------------- defect 1: bad action values
BAD_ACTIONS = [1.9, -0.5, 0.99, "2", True, False, np.float32(1.0), np.bool_(True), None,
               [3], np.array([3]), 2.0]


def setup_ids(env) -> list[int]:
    return np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist()


@pytest.mark.parametrize("action", BAD_ACTIONS, ids=repr)
def test_raw_env_refuses_non_integer_actions(action) -> None:
    env = moonriver_v0.raw_env(num_players=4)
    env.reset(seed=0)
    before = env.game_record()
    with pytest.raises(IllegalActionError, match="an action is an integer id"):
        env.step(action)
    assert env.game_record() == before


@pytest.mark.parametrize("action", BAD_ACTIONS, ids=repr)
def test_wrapped_env_refuses_non_integer_actions(action) -> None:
    env = moonriver_v0.env(num_players=4)
    env.reset(seed=0)
    before = env.unwrapped.game_record()
    with pytest.raises(IllegalActionError, match="an action is an integer id"):
        env.step(action)
    assert env.unwrapped.game_record() == before
    assert not any(env.terminations.values())


def test_integer_types_are_accepted_everywhere() -> None:
    for make in (moonriver_v0.raw_env, moonriver_v0.env):
        env = make(num_players=4)
        env.reset(seed=0)
        for convert in (int, np.int64, np.int16, np.uint32, np.array):
            first = setup_ids(env)[0]
            env.step(convert(first))
        assert len([e for e in env.unwrapped.game.history if e["type"] == "decision"]) == 5


@pytest.mark.parametrize("action", BAD_ACTIONS, ids=repr)
def test_gym_env_refuses_or_penalises_non_integer_actions(action) -> None:
    env = MoonRiverGymEnv(num_players=4, seat=0)
    env.reset(seed=0)
    before = env.game.to_record()
    with pytest.raises(IllegalActionError, match="an action is an integer id"):
        env.step(action)
    assert env.game.to_record() == before
    env = gymnasium.make("MoonRiver-v0", seat=0, illegal="penalty")
    env.reset(seed=0)
    before = env.unwrapped.game.to_record()
    _, reward, terminated, _, info = env.step(action)
    assert terminated and reward == -1.0 and info["illegal_action"]
    assert env.unwrapped.game.to_record() == before


# ------------------------------------------ defect 2: no steps after termination
def test_gym_env_refuses_steps_after_termination_until_reset() -> None:
    env = gymnasium.make("MoonRiver-v0", seat=0, illegal="penalty")
    env.reset(seed=0)
    _, _, terminated, _, _ = env.step(A.NUM_ACTIONS - 1)
    assert terminated
    assert env.unwrapped.action_masks().all()  # terminal mask
    legal = int(env.unwrapped.game.legal_action_ids()[0])  # the game itself is not over
    before = env.unwrapped.game.to_record()
    with pytest.raises(RuntimeError, match=r"episode is over; call reset\(\)"):
        env.step(legal)
    assert env.unwrapped.game.to_record() == before
    env.reset(seed=1)
    env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))  # playable again
    env = MoonRiverGymEnv(num_players=2, seat=0)
    env.reset(seed=0)
    done = False
    rng = np.random.default_rng(0)
    while not done:
        legal = np.flatnonzero(env.action_masks())
        _, _, done, _, _ = env.step(int(legal[rng.integers(legal.size)]))
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(0)


# ------------------------------------------------------ options and the order of calls
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_shaping_and_penalty_are_refused(value: float) -> None:
    with pytest.raises(ValueError, match="shaping must be a finite number"):
        moonriver_v0.raw_env(shaping=value)
    with pytest.raises(ValueError, match="shaping must be a finite number"):
        MoonRiverGymEnv(shaping=value)
    with pytest.raises(ValueError, match="illegal_penalty must be a finite number"):
        MoonRiverGymEnv(illegal="penalty", illegal_penalty=value)
    with pytest.raises(ValueError, match="illegal_penalty must be a finite number"):
        MoonRiverGymEnv(illegal_penalty=True)


@pytest.mark.parametrize("seed", [True, False, -1, 1.5, "3"], ids=repr)
def test_bad_reset_seeds_are_refused(seed) -> None:
    env = moonriver_v0.raw_env(num_players=3)
    with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
        env.reset(seed=seed)
    gym = MoonRiverGymEnv(num_players=3)
    with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
        gym.reset(seed=seed)
    env.reset(seed=np.int64(3))  # numpy integers are seeds
    gym.reset(seed=np.int64(3))


def test_raw_env_step_before_reset_is_a_clear_error() -> None:
    env = moonriver_v0.raw_env(num_players=4)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before"):
        env.step(0)


# ------------------------------------------------------------- the Gymnasium wrapper
def test_action_masks_reachable_through_gymnasium_make_and_sb3() -> None:
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    env = gymnasium.make("MoonRiver-v0", num_players=3)
    env.reset(seed=0)
    assert env.action_masks().any()
    assert np.array_equal(get_action_masks(env), env.unwrapped.action_masks())
    limited = gymnasium.make("MoonRiver-v0", num_players=3, max_episode_steps=500)
    limited.reset(seed=0)
    assert limited.get_wrapper_attr("action_masks")().any()
    vec = DummyVecEnv([lambda: Monitor(gymnasium.make("MoonRiver-v0", num_players=2))])
    vec.reset()
    assert is_masking_supported(vec) and get_action_masks(vec).shape == (1, A.NUM_ACTIONS)


def test_opponents_by_name() -> None:
    env = gymnasium.make("MoonRiver-v0", num_players=3, opponents=["greedy", "random"])
    names = [type(o).__name__ for o in env.unwrapped.opponents]
    assert names == ["GreedyAgent", "RandomAgent"]
    env = gymnasium.make("MoonRiver-v0", num_players=4, opponents="greedy", seat=1).unwrapped
    assert [type(o).__name__ for o in env.opponents] == ["GreedyAgent"] * 3
    assert len({id(o) for o in env.opponents}) == 3
    first = env.reset(seed=5)[0]
    again = gymnasium.make("MoonRiver-v0", num_players=4, opponents="greedy", seat=1)
    assert np.array_equal(again.reset(seed=5)[0], first)
    with pytest.raises(ValueError, match="agent spec"):
        gymnasium.make("MoonRiver-v0", num_players=2, opponents=["grandmaster"])
    circles = gymnasium.make("CirclesFarWest-v0", num_players=3, opponents="heuristic")
    assert [type(o).__name__ for o in circles.unwrapped.opponents] == \
        ["CirclesHeuristicAgent"] * 2


def test_the_env_classes_take_agents_not_names() -> None:
    """Names are resolved by gymnasium.make's entry point; the env classes never import
    agents, so a name given to a class is refused with what to do instead."""
    from moonriver_env.circles.gym_env import CirclesGymEnv

    for make in (lambda: MoonRiverGymEnv(num_players=2, opponents="greedy"),
                 lambda: CirclesGymEnv(num_players=2, opponents=["random"])):
        with pytest.raises(TypeError, match=r"agent name.*make_agent"):
            make()


def test_mask_at_game_over_is_read_only_and_fresh() -> None:
    env = MoonRiverGymEnv(num_players=2, seat=0)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    done = False
    while not done:
        legal = np.flatnonzero(env.action_masks())
        _, _, done, _, info = env.step(int(legal[rng.integers(legal.size)]))
    mask = env.action_masks()
    assert mask.all() and info["action_mask"].all()  # terminal: all ones, ignored by a reset
    with pytest.raises(ValueError):
        mask[0] = 1
    with pytest.raises(ValueError):
        np.asarray(mask).setflags(write=True)
    assert env.action_masks() is not mask
    env.reset(seed=4)
    mask = env.action_masks()
    assert np.array_equal(mask, env.game.legal_mask()) and not mask.all()


# ------------------------------------------------- docs/actions.md: off-grid ids never legal
def test_off_grid_and_homestead_build_ids_are_never_legal() -> None:
    never = {i for i, a in enumerate(A.ACTIONS) if isinstance(a, A.Build)
             and any(not (0 <= r < 10 and 0 <= c < 5) or (r, c) == (0, 2) for r, c in a.cells)}
    assert A.ActionCodec.encode(A.ACTIONS[12]) == 12 and 12 in never  # (0,4)-(0,5)
    assert len(never) > 100
    never_ids = np.array(sorted(never))
    for n, mode in ((2, "base"), (3, "legends"), (4, "base")):
        for seed in range(3):
            game = Game(GameConfig(num_players=n, mode=mode), seed=seed)
            rng = np.random.default_rng(seed)
            while not game.is_over:
                assert not game.legal_mask()[never_ids].any()
                ids = game.legal_action_ids()
                game.apply(int(ids[rng.integers(ids.size)]))
    text = (Path(__file__).resolve().parents[2] / "docs" / "actions.md").read_text()
    assert "`(0,4)-(0,5)`" in text and "never legal" in text


def test_codec_decode_refuses_non_integer_ids() -> None:
    for bad in (1.9, True, "2", np.float64(3.0), None):
        with pytest.raises(ValueError, match="action ids are integers"):
            A.ActionCodec.decode(bad)
        with pytest.raises(ValueError, match="action ids are integers"):
            A.ActionCodec.to_text(bad)
    assert A.ActionCodec.decode(np.int64(12)) == A.ACTIONS[12]


@pytest.mark.filterwarnings("ignore:.*illegal move")
def test_wrapped_env_out_of_range_id_raises_and_illegal_id_ends_the_game() -> None:
    env = moonriver_v0.env(num_players=3)
    env.reset(seed=2)
    before = env.unwrapped.game_record()
    for bad in (A.NUM_ACTIONS, -1, np.int64(10**6)):
        with pytest.raises(IllegalActionError, match="action ids run from 0 to 2709"):
            env.step(bad)
    assert env.unwrapped.game_record() == before
    offender = env.agent_selection
    illegal = np.int16(np.flatnonzero(env.observe(offender)["action_mask"] == 0)[0])
    env.step(illegal)  # an id of the space that is illegal now: the PettingZoo penalty
    assert all(env.terminations.values()) and env._cumulative_rewards[offender] == -1.0
