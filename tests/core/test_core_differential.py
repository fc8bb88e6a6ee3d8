"""The compiled core against the Python engine (the reference): same seeds, same decisions.

Every game is played through both implementations in lockstep from the same config and seed,
the decision picked by a policy from the reference's legal ids. In *full* games every decision
compares the legal mask, the observation of every player, the running scores, the current
player and the phase; in *light* games (most of the default suite: the Python side is the
bottleneck) every decision compares the current player and the legal-id count, and the
chosen id must be legal in both. Every game ends comparing scores and winners, and the record
(byte-identical JSON: every decision and chance event, the final table, scores and winners) or,
in three light games of four (the reference's record costs more than its game), the events.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moonriver_env.moonriver import core
from moonriver_env.moonriver.observation import ObservationEncoder
from moonriver_env.moonriver.rules import Game, GameConfig, IllegalActionError
from moonriver_env.moonriver.rules import actions as A

ENCODER = ObservationEncoder()
Policy = Callable[[np.ndarray, np.random.Generator], int]


def uniform(ids: np.ndarray, rng: np.random.Generator) -> int:
    """Any legal id, uniformly."""
    return int(ids[rng.integers(len(ids))])


def _prefer(lo: int, hi: int, share: float = 0.9) -> Policy:
    def policy(ids: np.ndarray, rng: np.random.Generator) -> int:
        wanted = ids[(ids >= lo) & (ids < hi)]
        if len(wanted) and rng.random() < share:
            return int(wanted[rng.integers(len(wanted))])
        return int(ids[rng.integers(len(ids))])
    return policy


POLICIES: dict[str, Policy] = {
    "uniform": uniform,
    "build": _prefer(A.BUILD0, A.PASS_ID),
    # Partners and their effects (recruit, then cowboy moves, swaps and thefts before passing).
    "recruit": _prefer(A.RECRUIT0, A.BONUS0),
    "pass": _prefer(A.PASS_ID, A.PASS_ID + 1),
}


def lockstep(config: GameConfig, seed: int, policy: Policy, full: bool,
             record: bool = True) -> tuple[Game, object]:
    """Play one game through both implementations; assert they agree all along. ``record``
    compares the records as JSON text, else the event lists (the reference's own, uncopied)."""
    ref, fast = Game(config, seed), core.Game(config, seed)
    rng = np.random.default_rng(seed)
    n = config.num_players
    out = np.empty(ENCODER.size, dtype=np.float32)
    step = 0
    while True:
        where = f"{config} seed {seed} decision {step}"
        assert fast.current_player == ref.current_player, where
        assert fast.phase == ref.phase, where
        if full:
            assert np.array_equal(fast.legal_mask(), ref.legal_mask()), where
            assert fast.running_scores() == ref.running_scores(), where
            for p in range(n):
                assert np.array_equal(fast.observe(p, out), ENCODER.encode(ref, p)), \
                    f"{where} viewer {p}"
        if ref.is_over:
            break
        ids = ref.legal_action_ids()
        if full:
            assert np.array_equal(fast.legal_action_ids(), ids), where
        else:
            assert fast._core.num_legal() == len(ids), where
        aid = policy(ids, rng)
        ref.apply(aid)
        fast.apply(aid)
        step += 1
    assert fast.is_over
    if record:
        assert json.dumps(fast.to_record()) == json.dumps(ref.to_record())
    else:
        assert fast.history == ref._history
    assert fast.scores() == ref.scores()
    assert fast.winners() == ref.winners()
    return ref, fast


# ------------------------------------------------------------------ variants
def _custom_data(folder: Path) -> dict[str, str]:
    """Odd but valid data files: a small box crowded with skulls, circles and cows (the cow
    supply runs out), equal numbers (the column's stable sort), many outlaws, boards with
    names the observation does not know and bridges deep in the 2-player ranch, bonus tiles
    with symbols."""
    folder.mkdir(parents=True, exist_ok=True)
    plots = ["kind,terrain,nugget,beaver,corn,cows,skull,circle,count,number"]
    terrains = ("desert", "canyon", "meadow", "forest", "cornfield", "farm")
    for i, t in enumerate(terrains * 2):
        plots.append(f"k{i},{t},{i % 3 == 0:d},{i % 4 == 1:d},{(i % 5 == 2) * 2},"
                     f"{2 if i % 2 else 1},{i % 3 == 1:d},{i % 2 == 0:d},4,{i % 4}")
    (folder / "plots.csv").write_text("\n".join(plots) + "\n")
    (folder / "partners.csv").write_text("specialist,count\ndesperado,6\ncattle_thief,6\n"
                                         "gold_digger,1\ntrapper,1\nfarmer,1\n")
    (folder / "bonus.csv").write_text(
        "tile,face,terrain,nugget,beaver,corn,cows,skull,circle\n"
        "A,0,cornfield,0,0,3,2,1,1\nA,1,desert,2,0,0,0,0,0\n"
        "B,0,forest,0,2,0,1,1,0\nB,1,farm,0,0,0,2,0,1\n")
    boards = {"boards": [
        {"name": "yard", "side": "camp", "reserve": 2, "bridges": [[0, 0], [4, 4]]},
        {"name": "north", "side": "legend", "reserve": 4, "bridges": [[1, 2]]},
        {"name": "south", "side": "legend", "reserve": 1, "bridges": [[0, 1], [3, 3]]},
        {"name": "east", "side": "legend", "reserve": 3, "bridges": [[0, 4]]},
        {"name": "west", "side": "legend", "reserve": 2, "bridges": [[0, 0], [2, 0]]},
        {"name": "mary", "side": "legend", "reserve": 4, "bridges": [[0, 3], [4, 2]]},
    ]}
    (folder / "boards.json").write_text(json.dumps(boards))
    return {"plots_file": str(folder / "plots.csv"), "partners_file": str(folder / "partners.csv"),
            "bonus_file": str(folder / "bonus.csv"), "boards_file": str(folder / "boards.json")}


def variants(custom: dict[str, str]) -> list[GameConfig]:
    """Every variant: players x mode x scenario (drawn too), auto_forced, custom data."""
    out = []
    for n in (2, 3, 4):
        out.append(GameConfig(num_players=n))
        out.append(GameConfig(num_players=n, auto_forced=True))
        for scenario in (None, 1, 2, 3, 4):
            out.append(GameConfig(num_players=n, mode="legends", scenario=scenario))
        out.append(GameConfig(num_players=n, mode="legends", auto_forced=True))
        out.append(GameConfig(num_players=n, **custom))
        out.append(GameConfig(num_players=n, mode="legends", **custom))
    return out


def schedule(configs: list[GameConfig], games: int, full_every: int,
             first_seed: int) -> Iterator[tuple[GameConfig, int, str, bool, bool]]:
    """(config, seed, policy, full, record) for ``games`` games over configs and policies."""
    names = list(POLICIES)
    for g in range(games):
        config = configs[g % len(configs)]
        full = g % full_every == 0
        yield (config, first_seed + g, names[(g // len(configs)) % len(names)], full,
               full or g % 4 == 1)


@pytest.fixture(scope="module")
def configs(tmp_path_factory: pytest.TempPathFactory) -> list[GameConfig]:
    return variants(_custom_data(tmp_path_factory.mktemp("data")))


def test_five_thousand_games_agree(configs: list[GameConfig]) -> None:
    """5,040 games over every variant and policy; one in 24 compared at every decision."""
    seen = set()
    for config, seed, policy, full, record in schedule(configs, 5040, 24, first_seed=0):
        lockstep(config, seed, POLICIES[policy], full, record)
        seen.add((config.num_players, config.mode, config.scenario, policy, full))
    assert len(seen) >= 3 * 2 * 4  # every player count, mode and policy, full and light


@pytest.mark.slow
def test_two_hundred_thousand_games_agree(configs: list[GameConfig]) -> None:
    """The long run: 200,016 games, one in 50 compared at every decision."""
    for config, seed, policy, full, record in schedule(configs, 200_016, 50,
                                                       first_seed=10_000_000):
        lockstep(config, seed, POLICIES[policy], full, record)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.sampled_from([2, 3, 4]), mode=st.sampled_from(["base", "legends"]),
       scenario=st.sampled_from([None, 1, 2, 3, 4]), auto=st.booleans(),
       boards=st.booleans(), seed=st.integers(0, 2**63 - 1),
       policy=st.sampled_from(sorted(POLICIES)))
def test_odd_configs_agree_at_every_decision(n: int, mode: str, scenario: int | None,
                                             auto: bool, boards: bool, seed: int,
                                             policy: str) -> None:
    """Any variant and seed (huge ones too), chosen boards or drawn, compared in full."""
    legends = ("big_jo", "calamity", "mary", "wesley")
    config = GameConfig(num_players=n, mode=mode, auto_forced=auto,
                        scenario=scenario if mode == "legends" else None,
                        boards=tuple(legends[(seed + i) % 4] for i in range(n))
                        if boards and mode == "legends" else None)
    lockstep(config, seed, POLICIES[policy], full=True)


# ------------------------------------------------------------------ records
def _record_game(config: GameConfig, seed: int, steps: int) -> tuple[Game, object]:
    ref, fast = Game(config, seed), core.Game(config, seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if ref.is_over:
            break
        aid = uniform(ref.legal_action_ids(), rng)
        ref.apply(aid)
        fast.apply(aid)
    return ref, fast


@pytest.mark.parametrize("steps", [0, 7, 60, 10_000])
@pytest.mark.parametrize("config", [GameConfig(), GameConfig(num_players=2, mode="legends"),
                                    GameConfig(num_players=3, auto_forced=True)])
def test_records_replay_in_the_other(config: GameConfig, steps: int) -> None:
    """A record of either implementation (running or finished) replays in the other to the same
    record; running games' records leave the seed out in both."""
    ref, fast = _record_game(config, 5, steps)
    for include_seed in (False, True):
        a = json.dumps(ref.to_record(include_seed=include_seed))
        b = json.dumps(fast.to_record(include_seed=include_seed))
        assert a == b
    ref_record, fast_record = ref.to_record(True), fast.to_record(True)
    again = core.Game.from_record(ref_record)
    assert json.dumps(again.to_record(True)) == json.dumps(ref_record)
    back = Game.from_record(fast_record)
    assert json.dumps(back.to_record(True)) == json.dumps(fast_record)
    assert again.legal_action_ids().tolist() == ref.legal_action_ids().tolist()


def _errors(call: Callable[[], object]) -> tuple[type, str] | None:
    try:
        call()
    except Exception as exc:  # the reference's exception, compared below
        return type(exc), str(exc)
    return None


def _bad_records() -> list[object]:
    ref, _ = _record_game(GameConfig(num_players=3), 11, 40)
    good = ref.to_record(include_seed=True)
    tampered = json.loads(json.dumps(good))
    tampered["final"]["cow_supply"] += 1
    wrong_player = json.loads(json.dumps(good))
    decision = next(e for e in wrong_player["events"] if e["type"] == "decision")
    decision["player"] = (decision["player"] + 1) % 3
    illegal = json.loads(json.dumps(good))
    decision = next(e for e in illegal["events"] if e["type"] == "decision")
    decision["action"] = A.PASS_ID
    return [None, [], {"format": "other"}, {**good, "version": 9}, {**good, "seed": None},
            {**good, "seed": -4}, {**good, "events": "x"}, {**good, "config": {"players": 5}},
            {**good, "events": [*good["events"], 3]}, tampered, wrong_player, illegal,
            ref.to_record()]


def test_bad_records_raise_the_references_errors() -> None:
    """Malformed, tampered and seedless records: the same exception and message."""
    for record in _bad_records():
        expected = _errors(lambda r=record: Game.from_record(r))
        assert expected is not None
        assert _errors(lambda r=record: core.Game.from_record(r)) == expected, record


def test_bad_actions_raise_the_references_errors() -> None:
    """Out-of-range, illegal, float, bool and structured actions: the same error, no change."""
    ref, fast = _record_game(GameConfig(num_players=2), 3, 30)
    bad = [-1, A.NUM_ACTIONS, 10**30, np.int64(-3), 2.0, np.float64(4), True, np.bool_(True),
           "4", None, A.Pass(), A.Select(9), A.Select(0.0), (1, 2), A.DROUGHT0, A.BUILD0 + 4,
           A.PASS_ID, A.SELECT0 + 3, np.int32(A.BONUS0)]
    mask = ref.legal_mask()
    bad = [a for a in bad if not (isinstance(a, (int, np.integer)) and not isinstance(a, bool)
                                  and 0 <= a < A.NUM_ACTIONS and mask[a])]
    bad += [int(i) for i in range(A.NUM_ACTIONS) if not mask[i]][::97]
    before = json.dumps(fast.to_record(include_seed=True))
    for action in bad:
        expected = _errors(lambda a=action: ref.apply(a))
        assert expected is not None and expected[0] is IllegalActionError, action
        assert _errors(lambda a=action: fast.apply(a)) == expected, action
    assert json.dumps(fast.to_record(include_seed=True)) == before


def test_game_over_and_every_phase_errors_agree() -> None:
    """Illegal ids in each phase met, and after the end, give the reference's message."""
    config = GameConfig(num_players=2, mode="legends")
    ref, fast = Game(config, 21), core.Game(config, 21)
    rng = np.random.default_rng(0)
    probes = [0, A.BUILD0, A.PASS_ID, A.DISCARD0 + 9, A.RECRUIT0, A.COWBOY0 + 7, A.DROUGHT0 + 2,
              A.DESPERADO0 + 74, A.THIEF0 + 140, A.BONUS0 + 199, A.BUILD0 + 1999]
    while True:
        for aid in probes:
            if not ref.legal_mask()[aid]:
                assert _errors(lambda a=aid: fast.apply(a)) == _errors(lambda a=aid: ref.apply(a))
        if ref.is_over:
            break
        aid = POLICIES["recruit"](ref.legal_action_ids(), rng)
        ref.apply(aid)
        fast.apply(aid)
    assert _errors(fast.legal_action_ids) is None and len(fast.legal_action_ids()) == 0


# ------------------------------------------------------------------ search support
def test_clone_pickle_and_determinize_match_the_reference() -> None:
    """determinize with equal generators reshuffles both alike; clones and pickles of the core
    evolve like the original."""
    config = GameConfig(num_players=4, mode="legends")
    ref, fast = _record_game(config, 8, 50)
    ref.determinize(np.random.default_rng(99))
    fast.determinize(np.random.default_rng(99))
    assert fast.box == ref.box and fast.pile == ref.pile
    twin = fast.clone()
    thawed = pickle.loads(pickle.dumps(fast))
    rng = np.random.default_rng(1)
    while not ref.is_over:
        aid = uniform(ref.legal_action_ids(), rng)
        for g in (ref, fast, twin, thawed):
            g.apply(aid)
    record = json.dumps(ref.to_record())
    for g in (fast, twin, thawed):
        assert json.dumps(g.to_record()) == record


def test_explicit_draws_agree() -> None:
    """first_draws and set_next_draws (explicit chance, OpenSpiel) pick the same draws in both,
    and bad draws raise the reference's errors."""
    config = GameConfig(num_players=3, mode="legends")
    first = {"pile": [3, 1, 4, 0, 7], "box": [5, 9, 2, 6]}
    ref, fast = Game(config, 4, first_draws=first), core.Game(config, 4, first_draws=first)
    rng = np.random.default_rng(4)
    step = 0
    while not ref.is_over:
        if step % 23 == 0:
            box, pile = ref.box, ref.pile
            picks = {"box": box[:4][::-1], "pile": pile[-2:]}
            for source, items in picks.items():
                ref.set_next_draws(source, items)
                fast.set_next_draws(source, items)
            assert fast.box == ref.box and fast.pile == ref.pile
            for source, items in (("deck", [1]), ("box", [10**6]), ("pile", [1.0]),
                                  ("box", box[:1] * 2)):
                expected = _errors(lambda s=source, i=items: ref.set_next_draws(s, i))
                assert expected is not None and expected[0] is ValueError
                assert _errors(lambda s=source, i=items: fast.set_next_draws(s, i)) == expected
        aid = uniform(ref.legal_action_ids(), rng)
        ref.apply(aid)
        fast.apply(aid)
        step += 1
    assert json.dumps(fast.to_record()) == json.dumps(ref.to_record())
    bad = {"box": [10**6]}
    assert _errors(lambda: core.Game(config, 4, first_draws=bad)) == \
        _errors(lambda: Game(config, 4, first_draws=bad))
