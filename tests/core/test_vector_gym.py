"""The batched envs as Gymnasium 1.x, SB3 and TorchRL expect them (issue 30, points 1 and 3):
autoreset modes, per-game seeds and resets, masks in infos, make_vec, illegal="penalty", and
seeds that a later reset never replays."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import moonriver_env  # noqa: F401  (registers MoonRiver-v0)
from moonriver_env.common.errors import IllegalActionError
from moonriver_env.moonriver.batch import (
    BatchIllegalActionError,
    MoonRiverVectorEnv,
    make_sb3_vec_env,
)
from moonriver_env.moonriver.core import Game
from moonriver_env.moonriver.rules.config import GameConfig

TWO = GameConfig(num_players=2)


def _policy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A legal action that depends only on the row's observation (0 for a row with none)."""
    acts = np.zeros(len(mask), np.int64)
    for g, (o, m) in enumerate(zip(obs, mask, strict=True)):
        legal = np.flatnonzero(m)
        if legal.size:
            acts[g] = legal[int(abs(float(o.sum())) * 1000) % legal.size]
    return acts


def _random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask], np.int64)


def _trajectories(mode: AutoresetMode, steps: int, n: int = 3) -> list[list[tuple]]:
    """Per row: its observations, and (reward, last observation) at each episode's end, with
    NEXT_STEP's extra reset steps folded in."""
    env = MoonRiverVectorEnv(n, TWO, opponents="random", autoreset_mode=mode)
    obs, infos = env.reset(seed=7)
    rows: list[list[tuple]] = [[("obs", obs[g].tobytes())] for g in range(n)]
    restarting = np.zeros(n, bool)
    for _ in range(steps):
        obs, rew, term, trunc, infos = env.step(_policy(obs, infos["action_mask"]))
        assert not trunc.any()
        np.testing.assert_array_equal(infos["action_mask"], env.action_masks())
        for g in range(n):
            if restarting[g]:  # NEXT_STEP: the action was ignored, the next game begins
                assert rew[g] == 0 and not term[g]
                rows[g].append(("obs", obs[g].tobytes()))
            elif term[g] and mode == AutoresetMode.SAME_STEP:
                rows[g].append(("end", rew[g], infos["final_obs"][g].tobytes()))
                rows[g].append(("obs", obs[g].tobytes()))
            elif term[g]:
                rows[g].append(("end", rew[g], obs[g].tobytes()))
                assert infos["action_mask"][g].all()  # any action: the next step ignores it
            else:
                rows[g].append(("obs", obs[g].tobytes()))
        restarting = term.copy()
    return rows


def test_next_step_autoreset_plays_the_same_games_as_same_step():
    same = _trajectories(AutoresetMode.SAME_STEP, 300)
    following = _trajectories(AutoresetMode.NEXT_STEP, 320)
    for a, b in zip(same, following, strict=True):
        assert sum(1 for item in a if item[0] == "end") >= 2
        assert a[:len(b)] == b[:len(a)] and min(len(a), len(b)) >= 300


def test_autoreset_mode_is_an_attribute_a_constructor_argument_and_metadata():
    env = MoonRiverVectorEnv(2, TWO)
    assert env.autoreset_mode == env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    for mode in AutoresetMode:
        env = MoonRiverVectorEnv(2, TWO, autoreset_mode=mode)
        assert env.autoreset_mode == env.metadata["autoreset_mode"] == mode
    assert MoonRiverVectorEnv(2, TWO, autoreset_mode="SameStep").autoreset_mode \
        == AutoresetMode.SAME_STEP
    assert MoonRiverVectorEnv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    with pytest.raises(ValueError, match=r"autoreset_mode must be one of .*NEXT_STEP"):
        MoonRiverVectorEnv(2, TWO, autoreset_mode="same")


def test_disabled_autoreset_waits_for_a_masked_reset():
    env = MoonRiverVectorEnv(3, TWO, autoreset_mode=AutoresetMode.DISABLED)
    obs, infos = env.reset(seed=11)
    for _ in range(400):
        obs, _, term, _, infos = env.step(_policy(obs, infos["action_mask"]))
        if term.any():
            break
    assert term.any() and not infos["action_mask"][term].any()
    ended = np.flatnonzero(term)
    seeds = [env.games.episode_seed(g) for g in range(3)]
    records = [env.games.game(g).to_record() for g in range(3)]
    with pytest.raises(RuntimeError, match=r"ended: restart them with reset\(options="):
        env.step(_policy(obs, infos["action_mask"]))
    obs2, infos = env.reset(options={"reset_mask": term})
    for g in range(3):
        if g in ended:  # the game's next episode, never a replay
            assert env.games.episode_seed(g) == seeds[g] + 3
            assert infos["action_mask"][g].any()
        else:  # untouched
            assert env.games.episode_seed(g) == seeds[g]
            assert env.games.game(g).to_record() == records[g]
            np.testing.assert_array_equal(obs2[g], obs[g])
    env.step(_policy(obs2, infos["action_mask"]))


@pytest.mark.parametrize("mode", list(AutoresetMode))
def test_reset_seeds_and_reset_mask(mode):
    env = MoonRiverVectorEnv(3, TWO, autoreset_mode=mode)
    env.reset(seed=[40, 7, 1000])
    assert [env.games.game(g).seed for g in range(3)] == [40, 7, 1000]
    assert env.games.game(1).to_record()["events"][0] == Game(TWO, 7).to_record()["events"][0]
    obs, _ = env.reset(seed=20)
    assert [env.games.game(g).seed for g in range(3)] == [20, 21, 22]
    rng = np.random.default_rng(0)
    for _ in range(3):
        obs, *_, infos = env.step(_random_legal(env.action_masks(), rng))
    records = [env.games.game(g).to_record() for g in range(3)]
    mask = np.array([False, True, False])
    obs2, infos = env.reset(seed=[None, 500, None], options={"reset_mask": mask})
    assert env.games.game(1).seed == 500 and infos["action_mask"][1].any()
    assert [env.games.game(g).to_record() for g in (0, 2)] == [records[0], records[2]]
    np.testing.assert_array_equal(obs2[[0, 2]], obs[[0, 2]])
    env.reset(options={"reset_mask": np.array([True, False, False])})
    assert env.games.game(0).seed == 23  # game 0's next episode: 20 + 0 + 3 * 1
    with pytest.raises(ValueError, match="reset_mask must be a bool array of shape"):
        env.reset(options={"reset_mask": np.array([1, 0, 0])})
    with pytest.raises(ValueError, match="options may hold only 'reset_mask'"):
        env.reset(options={"mask": mask})
    with pytest.raises(ValueError, match="a list of 3 seeds"):
        env.reset(seed=[1, 2])


def test_masks_in_infos_and_the_dict_observation():
    env = MoonRiverVectorEnv(2, TWO, dict_observation=True)
    obs, infos = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert set(obs) == {"observation", "action_mask"} and obs["action_mask"].dtype == np.int8
    np.testing.assert_array_equal(obs["action_mask"], infos["action_mask"])
    np.testing.assert_array_equal(infos["action_mask"].astype(bool), env.action_masks())
    for _ in range(5):
        obs, *_, infos = env.step(_policy(obs["observation"], obs["action_mask"]))
        assert env.observation_space.contains(obs)
        np.testing.assert_array_equal(obs["action_mask"], env.games.mask)


def test_make_vec_builds_the_batched_env():
    env = gymnasium.make_vec("MoonRiver-v0", num_envs=4, vectorization_mode="vector_entry_point",
                             num_players=2, opponents="greedy", reward="rank")
    assert isinstance(env, MoonRiverVectorEnv) and env.num_envs == 4
    assert env.games.seats == ("learner", "greedy") and env.games.reward == "rank"
    assert env.spec is not None and env.spec.id == "MoonRiver-v0"
    _, infos = env.reset(seed=0)
    assert infos["action_mask"].shape == (4, 2710)
    assert isinstance(gymnasium.make_vec("MoonRiver-v0", num_envs=2), MoonRiverVectorEnv)
    with pytest.raises(ValueError, match="needs a fixed learner seat"):
        gymnasium.make_vec("MoonRiver-v0", num_envs=2, seat=None)
    with pytest.raises(TypeError, match=r"built-in seats played in the core.*'mcts:SIMS'"):
        gymnasium.make_vec("MoonRiver-v0", num_envs=2, opponents=[object()])


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_an_illegal_action_under_penalty_ends_only_its_game(mode):
    env = MoonRiverVectorEnv(3, TWO, autoreset_mode=mode, illegal="penalty",
                             illegal_penalty=-5.0)
    twin = MoonRiverVectorEnv(3, TWO, autoreset_mode=mode)
    obs, infos = env.reset(seed=4)
    twin.reset(seed=4)
    actions = _policy(obs, infos["action_mask"])
    last_view = obs[1].copy()
    bad = actions.copy()
    bad[1] = int(np.flatnonzero(infos["action_mask"][1] == 0)[0])
    with pytest.raises(BatchIllegalActionError, match="in game 1 of the batch"):
        twin.step(bad)  # illegal="raise": no game changes
    obs, rew, term, _, infos = env.step(bad)
    t_obs, t_rew, t_term, _, _ = twin.step(actions)
    assert rew[1] == -5.0 and term[1] and infos["illegal_action"].tolist() == [False, True, False]
    for g in (0, 2):  # the other games stepped as usual
        np.testing.assert_array_equal(obs[g], t_obs[g])
        assert rew[g] == t_rew[g] and term[g] == t_term[g]
    seed = env.games.episode_seed(1)
    if mode == AutoresetMode.SAME_STEP:  # the row's next game is there at once
        np.testing.assert_array_equal(infos["final_obs"][1], last_view)
        assert infos["_final_obs"][1] and infos["action_mask"][1].any()
    else:  # it shows the dropped game; the next step starts the row's next game
        np.testing.assert_array_equal(obs[1], last_view)
        assert infos["action_mask"][1].all()  # every action: ignored
        obs, rew, term, _, infos = env.step(np.zeros(3, np.int64) + 99999)  # row 1 ignored
        assert rew[1] == 0 and not term[1] and env.games.episode_seed(1) == seed + 3
        assert infos["illegal_action"].tolist() == [True, False, True]


def test_gymnasiums_vector_wrappers_run_on_make_vec():
    """NormalizeObservation (NEXT_STEP only) and RecordEpisodeStatistics on the default env."""
    env = gymnasium.make_vec("MoonRiver-v0", num_envs=3, num_players=2, opponents="random")
    env = gymnasium.wrappers.vector.RecordEpisodeStatistics(
        gymnasium.wrappers.vector.NormalizeObservation(env))
    obs, infos = env.reset(seed=2)
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(300):
        obs, _, term, _, infos = env.step(_random_legal(infos["action_mask"], rng))
        assert np.isfinite(obs).all()
        if term.any():
            assert (infos["_episode"] == term).all()
            assert set(infos["episode"]["r"][term].tolist()) <= {-1.0, 1.0}
            episodes += int(term.sum())
    assert episodes >= 3
    env.close()


def test_a_later_reset_of_the_gymnasium_env_plays_new_games_deterministically():
    def play() -> tuple[set[int], list[int]]:
        env = MoonRiverVectorEnv(2, TWO)
        obs, _ = env.reset(seed=5)
        played = {env.games.episode_seed(g) for g in range(2)}
        while min(env.games.episodes) < 2:
            obs, *_ = env.step(_policy(obs, env.action_masks()))
            played |= {env.games.episode_seed(g) for g in range(2)}
        env.reset()
        return played, [env.games.episode_seed(g) for g in range(2)]

    played, after = play()
    assert not set(after) & played
    assert play() == (played, after)  # the same calls give the same games


def test_a_later_reset_of_the_sb3_vec_env_plays_new_games():
    venv = make_sb3_vec_env(2, TWO, opponents="random", seed=5)
    games = venv.venv.games
    venv.reset()
    played = {games.episode_seed(g) for g in range(2)}
    rng = np.random.default_rng(0)
    while min(games.episodes) < 2:  # every game played its second episode
        venv.step(_random_legal(venv.action_masks(), rng))
        played |= {games.episode_seed(g) for g in range(2)}
    venv.reset()
    assert not {games.episode_seed(g) for g in range(2)} & played
    venv.seed(5)
    venv.reset()  # an explicit seed replays on purpose
    assert [games.episode_seed(g) for g in range(2)] == [5, 6]


def test_sb3_vec_env_takes_illegal_penalty():
    venv = make_sb3_vec_env(2, TWO, illegal="penalty", illegal_penalty=-2.0, seed=1)
    venv.reset()
    assert venv.autoreset_mode == AutoresetMode.SAME_STEP
    masks = venv.action_masks()
    actions = np.array([int(np.flatnonzero(masks[0] == 0)[0]), int(np.flatnonzero(masks[1])[0])])
    _, rew, done, infos = venv.step(actions)
    assert all("action_mask" in info for info in infos)
    assert rew[0] == -2.0 and done[0] and infos[0]["illegal_action"]
    assert "terminal_observation" in infos[0] and "illegal_action" not in infos[1]


# ------------------------------------------------------------------------ TorchRL
def _masked_rollout_checks(td: Any) -> None:
    mask = td["action_mask"].bool()
    live = mask.any(-1)
    chosen = mask.gather(-1, td["action"].long().unsqueeze(-1)).squeeze(-1)
    assert live.float().mean() > 0.9 and bool(chosen[live].all())
    assert int(td["next", "done"].sum()) >= 2


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("mode", "as_dict"), [(AutoresetMode.SAME_STEP, False),
                                               (AutoresetMode.DISABLED, True)])
def test_torchrl_gym_wrapper_with_action_mask_runs_a_masked_rollout(mode, as_dict):
    """SAME_STEP with the mask in infos, DISABLED (TorchRL's preferred) with a Dict
    observation; illegal="penalty" because TorchRL's constructor takes one random step."""
    pytest.importorskip("torchrl")
    from torchrl.envs import GymWrapper, TransformedEnv
    from torchrl.envs.transforms import ActionMask

    venv = MoonRiverVectorEnv(4, TWO, autoreset_mode=mode, dict_observation=as_dict,
                              illegal="penalty")
    env = TransformedEnv(GymWrapper(venv, categorical_action_encoding=True), ActionMask())
    env.set_seed(0)
    td = env.rollout(300, break_when_any_done=False)
    _masked_rollout_checks(td)
    if not as_dict:
        assert not td["next", "illegal_action"].any()


def _masked_sample(observation: Any, action_mask: Any) -> Any:
    import torch

    logits = torch.zeros(action_mask.shape).masked_fill(action_mask == 0, -1e9)
    return torch.distributions.Categorical(logits=logits).sample()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_torchrl_gym_env_with_num_envs_runs_a_masked_rollout():
    """GymEnv(..., num_envs=4) runs single envs in an AsyncVectorEnv (fresh processes: the
    id names its module)."""
    pytest.importorskip("torchrl")
    from tensordict.nn import TensorDictModule
    from torchrl.envs import GymEnv

    env = GymEnv("moonriver_env:MoonRiver-v0", num_envs=4, categorical_action_encoding=True,
                 num_players=2, illegal="penalty")
    try:
        policy = TensorDictModule(_masked_sample, in_keys=["observation", "action_mask"],
                                  out_keys=["action"])
        env.set_seed(0)
        td = env.rollout(250, policy, break_when_any_done=False)
        _masked_rollout_checks(td)
        assert not td["next", "illegal_action"].any()
    finally:
        env.close()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_torchrl_gym_env_shows_the_workers_illegal_action_error():
    """Without illegal="penalty", TorchRL's random first step is refused: the worker's own
    error reaches the caller (it used to arrive as a TypeError from unpickling)."""
    pytest.importorskip("torchrl")
    from torchrl.envs import GymEnv

    with pytest.raises(IllegalActionError, match=r"illegal action .*Legal now"):
        GymEnv("moonriver_env:MoonRiver-v0", num_envs=2, num_players=2)


# ------------------------------------------------------------------ the docs' examples
DOCS = Path(__file__).resolve().parents[2] / "docs" / "vector.md"


def _docs_example(heading: str) -> str:
    """The first python block of docs/vector.md's section ``heading``."""
    text = DOCS.read_text()
    section = text[text.index(f"\n## {heading}\n"):]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)  # type: ignore[union-attr]


@pytest.mark.parametrize("heading", ["Gymnasium vector env", "TorchRL",
                                     "A CleanRL-style masked training loop"])
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_docs_examples_run(heading, capsys):
    if heading != "Gymnasium vector env":
        pytest.importorskip("torchrl" if heading == "TorchRL" else "torch")
    scope: dict[str, Any] = {}
    exec(compile(_docs_example(heading), f"docs/vector.md: {heading}", "exec"), scope)
    if heading == "TorchRL":
        mask = scope["rollout"]["action_mask"].bool()
        chosen = mask.gather(-1, scope["rollout"]["action"].unsqueeze(-1)).squeeze(-1)
        assert bool(chosen[mask.any(-1)].all())
    if heading.startswith("A CleanRL"):
        assert len(scope["episode_returns"]) >= 2 and "episodes, mean return" in \
            capsys.readouterr().out


_PLAIN_ID_SCRIPT = '''
import torch
from tensordict.nn import TensorDictModule
from torchrl.envs import GymEnv

import moonriver_env  # registers MoonRiver-v0 (spawned workers import this script again)


def masked_sample(observation, action_mask):
    logits = torch.zeros(action_mask.shape).masked_fill(action_mask == 0, -1e9)
    return torch.distributions.Categorical(logits=logits).sample()


if __name__ == "__main__":
    env = GymEnv("MoonRiver-v0", num_envs=4, categorical_action_encoding=True, num_players=2,
                 illegal="penalty")
    env.set_seed(0)
    policy = TensorDictModule(masked_sample, in_keys=["observation", "action_mask"],
                              out_keys=["action"])
    td = env.rollout(120, policy, break_when_any_done=False)
    env.close()
    assert td["action"].shape == (4, 120), td["action"].shape
    assert not td["next", "illegal_action"].any()
    print("steps", td["action"].numel(), "ended", int(td["next", "done"].sum()))
'''


def test_torchrl_gym_env_takes_the_plain_id_in_a_script(tmp_path):
    """A script that imports moonriver_env runs GymEnv("MoonRiver-v0", num_envs=4): TorchRL's
    spawned workers import the script again, which registers the id."""
    pytest.importorskip("torchrl")
    import subprocess
    import sys

    script = tmp_path / "rollout.py"
    script.write_text(_PLAIN_ID_SCRIPT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines()[-1].startswith("steps 480 "), proc.stdout


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_infos_keys_are_those_of_gymnasiums_sync_vector_env(mode):
    """Every info key comes with its "_key" rows, as SyncVectorEnv over the single env gives."""
    env = MoonRiverVectorEnv(2, TWO, autoreset_mode=mode)
    ref = gymnasium.vector.SyncVectorEnv(
        [lambda: gymnasium.make("MoonRiver-v0", num_players=2, seat=0)] * 2, autoreset_mode=mode)
    for infos in (env.reset(seed=1)[1], ref.reset(seed=1)[1]):
        assert {"action_mask", "_action_mask"} <= set(infos)
        assert infos["_action_mask"].dtype == np.bool_ and infos["_action_mask"].all()
    rng = np.random.default_rng(0)
    infos = env.step(_random_legal(env.games.mask, rng))[-1]
    assert infos["_action_mask"].shape == (2,) and infos["_action_mask"].all()


def _rows_played(env: MoonRiverVectorEnv, seed: list[int | None], steps: int) -> list[Any]:
    """Each row's observations over ``steps`` steps from ``reset(seed=seed)``."""
    obs, infos = env.reset(seed=seed)
    rows = [[o] for o in obs]
    for _ in range(steps):
        obs, *_, infos = env.step(_policy(obs, infos["action_mask"]))
        for row, o in zip(rows, obs, strict=True):
            row.append(o)
    return rows


def test_a_seed_list_with_none_entries_replays_its_seeded_games_whatever_came_before():
    """Gymnasium's reset(seed=[...]): a seeded row plays the same game, built-in seats too."""
    fresh, used = MoonRiverVectorEnv(3, TWO), MoonRiverVectorEnv(3, TWO)
    used.reset(seed=7)
    first = _rows_played(fresh, [1, None, 3], 40)
    again = _rows_played(fresh, [1, None, 3], 40)
    assert used.reset(seed=[1, None, 3]) and used.games.game(1).seed == 7 + 1 + 3  # next episode
    other = _rows_played(used, [1, None, 3], 40)
    for g in (0, 2):
        np.testing.assert_array_equal(first[g], again[g])
        np.testing.assert_array_equal(first[g], other[g])


def test_same_step_puts_an_illegal_action_in_final_info_as_sync_vector_env():
    """SAME_STEP: the ended step's info is ``final_info``; ``illegal_action`` is there too."""
    kwargs = {"illegal": "penalty", "num_players": 2, "seat": 0}
    env = MoonRiverVectorEnv(2, TWO, autoreset_mode=AutoresetMode.SAME_STEP, illegal="penalty")
    ref = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("MoonRiver-v0", **kwargs)] * 2,
                                         autoreset_mode=AutoresetMode.SAME_STEP)
    for venv in (env, ref):
        _, infos = venv.reset(seed=2)
        bad = np.array([int(np.flatnonzero(infos["action_mask"][0] == 0)[0]),
                        int(np.flatnonzero(infos["action_mask"][1])[0])])
        *_, term, _, infos = venv.step(bad)
        assert term.tolist() == [True, False]
        final = infos["final_info"]
        assert final["illegal_action"][0] and final["_illegal_action"].tolist() == [True, False]


def test_sb3_vec_env_fills_reset_infos_and_refuses_options():
    venv = make_sb3_vec_env(2, TWO, seed=1)
    venv.reset()
    np.testing.assert_array_equal([info["action_mask"] for info in venv.reset_infos],
                                  venv.action_masks())
    venv.set_options({})  # none given: fine
    with pytest.raises(ValueError, match="takes no reset options"):
        venv.set_options({"reset_mask": np.array([True, False])})
