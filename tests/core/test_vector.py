"""Batched games (moonriver_env.moonriver.batch) against single core games stepped one by one;
the package's layout."""

from __future__ import annotations

import gc
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from moonriver_env.agents.greedy import action_values

from moonriver_env.moonriver.aec_env import final_rewards
from moonriver_env.moonriver.batch import (
    BatchedGames,
    BatchIllegalActionError,
    MoonRiverVectorEnv,
    SingleGameEnv,
    make_sb3_vec_env,
)
from moonriver_env.moonriver.core import Game
from moonriver_env.moonriver.rules.config import GameConfig
from moonriver_env.moonriver.rules.game import IllegalActionError
from tests.helpers import HANG_GUARD


def _random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) for row in mask], np.int64)


def test_reset_gives_game_g_the_game_of_seed_plus_g():
    config = GameConfig(num_players=3)
    batch = BatchedGames(5, config)
    batch.reset(seed=40)
    for g in range(5):
        ref = Game(config, 40 + g)
        assert batch.player[g] == ref.current_player
        np.testing.assert_array_equal(batch.obs[g], ref.observe(ref.current_player))
        np.testing.assert_array_equal(batch.mask[g], ref.legal_mask())
        assert batch.mask.dtype == ref.legal_mask().dtype
        assert batch.game(g).to_record() == ref.to_record()
        assert batch.episode_seed(g) == 40 + g


@pytest.mark.parametrize(("reward", "options"), [
    ("win", {}), ("rank", {}), ("score", {}), ("margin", {}),
    ("rank", {"mode": "legends", "auto_forced": True}), ("win", {"mode": "legends"}),
    ("rank", {"num_players": 4}), ("margin", {"num_players": 3, "mode": "legends"})])
def test_lockstep_with_single_games_through_autoresets(reward, options):
    config = GameConfig(**{"num_players": 2, **options})
    n, seed = 3, 7
    batch = BatchedGames(n, config, reward=reward)
    batch.reset(seed)
    refs = [Game(config, seed + g) for g in range(n)]
    episodes = [0] * n
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(260):
        actions = _random_actions(batch.mask, rng)
        actors = batch.player.copy()
        batch.step(actions)
        for g in range(n):
            ref = refs[g]
            ref.apply(int(actions[g]))
            assert bool(batch.done[g]) == ref.is_over
            if ref.is_over:
                ended += 1
                np.testing.assert_allclose(batch.rewards[g], final_rewards(ref, reward),
                                           rtol=0, atol=1e-6)
                np.testing.assert_array_equal(batch.final_obs[g], ref.observe(int(actors[g])))
                episodes[g] += 1
                ref = refs[g] = Game(config, seed + g + n * episodes[g])
            else:
                assert not batch.rewards[g].any()
            assert batch.player[g] == ref.current_player
            np.testing.assert_array_equal(batch.mask[g], ref.legal_mask())
            np.testing.assert_array_equal(batch.obs[g], ref.observe(ref.current_player))
    assert ended >= n  # every game went through an autoreset at least once
    assert list(batch.episodes) == episodes


def test_builtin_seats_leave_only_learner_decisions_and_play_legally():
    config = GameConfig(num_players=3)
    batch = BatchedGames(4, config, seats=("random", "learner", "greedy"))
    batch.reset(3)
    rng = np.random.default_rng(2)
    greedy_checked = 0
    for _ in range(40):
        assert (batch.player == 1).all()
        before = [batch.game(g) for g in range(4)]
        actions = _random_actions(batch.mask, rng)
        batch.step(actions)
        for g in range(4):
            if batch.done[g]:
                continue
            game = batch.game(g)
            record = game.to_record(include_seed=True)
            Game.from_record(record)  # replays and checks every decision
            # The greedy seat (2) played one of GreedyAgent's best-ranked actions each time.
            replay = before[g]
            for event in game.history[len(replay.history):]:
                if event["type"] != "decision":
                    continue
                if replay.current_player == 2:
                    ids = replay.legal_action_ids()
                    ranking = action_values(replay, ids.tolist())
                    assert ranking[ids.tolist().index(event["action"])] == max(ranking)
                    greedy_checked += 1
                replay.apply(event["action"])
            assert replay.to_record(include_seed=True) == record
    assert batch.builtin_decisions > 0 and greedy_checked > 20


def test_thread_count_does_not_change_results():
    config = GameConfig(num_players=4)
    runs = []
    for threads in (1, 2, 3):
        batch = BatchedGames(7, config, seats=("learner", "random", "greedy", "random"),
                             threads=threads)
        batch.reset(11)
        trace = []
        for _ in range(120):
            actions = batch.random_actions()  # the core's driver: legal, per-game streams
            assert all(batch.mask[g, a] for g, a in enumerate(actions))
            batch.step(actions)
            trace.append((batch.obs.copy(), batch.mask.copy(), batch.rewards.copy(),
                          batch.done.copy()))
        runs.append(trace)
    for other in runs[1:]:
        for a, b in zip(runs[0], other, strict=True):
            for x, y in zip(a, b, strict=True):
                np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("observation", ["float32", "compact"])
def test_thread_count_does_not_change_a_batch_of_cheap_seats(observation):
    """Learner and random seats: at least 16 games a thread, each thread its own share first."""
    runs = []
    for threads in (1, 2, 3):
        batch = BatchedGames(50, GameConfig(num_players=3), seats=("learner", "random", "learner"),
                             threads=threads, observation=observation)
        batch.reset(5)
        trace = []
        for _ in range(80):
            batch.step(batch.random_actions())
            trace.append((batch.obs.copy(), batch.rewards.copy(), batch.done.copy()))
        runs.append(trace)
    for other in runs[1:]:
        for a, b in zip(runs[0], other, strict=True):
            for x, y in zip(a, b, strict=True):
                np.testing.assert_array_equal(x, y)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_steps_a_threaded_batch_with_threads_of_its_own(tmp_path):
    """The parent's worker threads do not exist in a fork() child: the batch makes new ones
    there, plays the same games, and deleting it there touches none of the parent's."""
    batch = BatchedGames(64, GameConfig(num_players=4), threads=2)
    batch.reset(3)
    for _ in range(5):
        batch.step(batch.random_actions())  # the parent's workers exist now
    time.sleep(0.1)  # and sleep on their condition variable (they watch for about 1 ms at most)
    out = tmp_path / "child.npy"
    pid = os.fork()
    if pid == 0:  # the child: step on, save, leave without running the parent's cleanup
        code = 1
        try:
            for _ in range(30):
                batch.step(batch.random_actions())
            np.save(out, batch.obs)
            del batch  # its pools go: the parent's threads must not be joined here
            gc.collect()
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + HANG_GUARD  # joining the parent's threads would hang
    while (status := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    if status[0] == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung")
    assert os.waitstatus_to_exitcode(status[1]) == 0
    for _ in range(30):
        batch.step(batch.random_actions())
    np.testing.assert_array_equal(np.load(out), batch.obs)


def test_an_illegal_action_names_the_game_and_changes_nothing():
    batch = BatchedGames(4, GameConfig(num_players=2))
    batch.reset(0)
    rng = np.random.default_rng(0)
    batch.step(_random_actions(batch.mask, rng))
    actions = _random_actions(batch.mask, rng)
    actions[2] = int(np.flatnonzero(batch.mask[2] == 0)[0])
    states = [batch.game(g).to_record() for g in range(4)]
    arrays = [a.copy() for a in (batch.obs, batch.mask, batch.player, batch.rewards)]
    with pytest.raises(BatchIllegalActionError, match="in game 2 of the batch") as info:
        batch.step(actions)
    assert info.value.game_index == 2 and isinstance(info.value, IllegalActionError)
    assert "Legal now" in str(info.value)
    actions[2] = 99999
    with pytest.raises(BatchIllegalActionError, match=r"action ids are 0\.\.2709"):
        batch.step(actions)
    with pytest.raises(ValueError, match="4 integer action ids"):
        batch.step(actions[:3])
    assert [batch.game(g).to_record() for g in range(4)] == states
    for before, now in zip(arrays, (batch.obs, batch.mask, batch.player, batch.rewards),
                           strict=True):
        np.testing.assert_array_equal(before, now)


def test_bad_configuration_is_refused():
    with pytest.raises(ValueError, match="seats must name one of"):
        BatchedGames(2, GameConfig(num_players=2), seats=("learner", "mcts"))
    with pytest.raises(ValueError, match="at least one seat must be 'learner'"):
        BatchedGames(2, GameConfig(num_players=2), seats=("random", "random"))
    with pytest.raises(ValueError, match="num_games must be >= 1"):
        BatchedGames(0)
    with pytest.raises(ValueError, match="reward must be one of"):
        BatchedGames(1, reward="points")


def test_a_fixed_list_of_games_plays_each_game_once_with_its_own_seats():
    """autoreset=False: game g is Game(config, seeds[g]) with seats[g]; an ended game stays
    over (player -1, empty mask) and later steps skip it; the moves agree with a replay."""
    config = GameConfig(num_players=3)
    seeds = [90, 7, 12345, 7]
    seats = [("learner", "greedy", "random"), ("greedy", "learner", "learner"),
             ("learner", "learner", "learner"), ("random", "random", "learner")]
    batch = BatchedGames(4, config, autoreset=False, threads=2)
    batch.reset(3, seeds=seeds, seats=seats)
    rng = np.random.default_rng(1)
    ended_at: dict[int, int] = {}
    steps = 0
    while not batch.over.all():
        for g in np.flatnonzero(~batch.over):
            assert seats[g][batch.player[g]] == "learner"  # only learner seats reach Python
        actions = _random_actions(np.where(batch.over[:, None], 1, batch.mask), rng)
        batch.step(actions)
        steps += 1
        for g in np.flatnonzero(batch.done):
            assert g not in ended_at and batch.rewards[g].any()
            ended_at[int(g)] = steps
        assert not batch.mask[batch.over].any() and (batch.player[batch.over] == -1).all()
    assert sorted(ended_at) == [0, 1, 2, 3]
    batch.step(np.zeros(4, np.int64))  # every game over: nothing happens
    assert not batch.done.any() and batch.over.all()
    for g in range(4):
        record = batch.game(g).to_record(include_seed=True)
        replay = Game(config, seeds[g])
        for event in batch.game(g).history:
            if event["type"] == "decision" and not event.get("auto"):
                replay.apply(event["action"])
        assert replay.is_over and replay.to_record(include_seed=True) == record


def test_batched_greedy_prior_is_greedy_prior_of_each_game():
    from moonriver_env.agents.pretrained import SHAPE_WEIGHT, greedy_prior

    batch = BatchedGames(3, GameConfig(num_players=4), autoreset=False, threads=2)
    batch.reset(0, seeds=[4, 5, 6])
    rng = np.random.default_rng(2)
    out = np.full((3, 2710), np.nan, np.float32)
    checked = 0
    while not batch.over.all():
        live = np.flatnonzero(~batch.over)
        prior = batch.greedy_prior(live[::-1], out, SHAPE_WEIGHT)
        for row, g in enumerate(live[::-1]):
            np.testing.assert_array_equal(prior[row], greedy_prior(batch.game(int(g))))
            checked += int(np.count_nonzero(prior[row]) > 0)
        batch.step(_random_actions(np.where(batch.over[:, None], 1, batch.mask), rng))
    assert checked > 100
    with pytest.raises(ValueError, match="must exist and not be over"):
        batch.greedy_prior([0])


def test_fixed_list_settings_are_checked():
    config = GameConfig(num_players=2)
    batch = BatchedGames(2, config, autoreset=False)
    with pytest.raises(ValueError, match="one seed per game"):
        batch.reset(0, seeds=[1])
    with pytest.raises(ValueError, match="one seat list per game"):
        batch.reset(0, seeds=[1, 2], seats=[("learner", "greedy")])
    with pytest.raises(ValueError, match="at least one seat must be 'learner'"):
        batch.reset(0, seeds=[1, 2], seats=[("learner", "greedy"), ("greedy", "random")])
    with pytest.raises(ValueError, match="autoreset must be True or False"):
        BatchedGames(2, config, autoreset=1)


def test_seeds_with_autoreset_give_each_game_its_own_series():
    """seeds= with autoreset: game g's k-th episode is Game(config, seeds[g] + N * k)."""
    config = GameConfig(num_players=2)
    batch = BatchedGames(2, config)
    batch.reset(0, seeds=[500, 9])
    assert [batch.episode_seed(g, k) for g in (0, 1) for k in (0, 1)] == [500, 502, 9, 11]
    assert batch.game(1).to_record() == Game(config, 9).to_record()
    batch.restart([1])
    assert batch.game(1).to_record() == Game(config, 11).to_record()
    assert batch.game(0).to_record() == Game(config, 500).to_record()


def test_gymnasium_vector_env_spaces_and_same_step_autoreset():
    import gymnasium

    env = MoonRiverVectorEnv(3, GameConfig(num_players=2), opponents="random",
                             autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
    obs, _ = env.reset(seed=5)
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    finals = 0
    for _ in range(150):
        masks = env.action_masks()
        assert masks.shape == (3, 2710) and masks.dtype == bool and masks.any(axis=1).all()
        actions = _random_actions(masks, rng)
        assert env.action_space.contains(actions)
        obs, rew, term, trunc, infos = env.step(actions)
        assert env.observation_space.contains(obs)
        assert rew.shape == term.shape == trunc.shape == (3,)
        if term.any():
            finals += int(term.sum())
            assert (infos["_final_obs"] == term).all()
            assert set(rew[term].tolist()) <= {-1.0, 1.0}
    assert finals > 0


def test_gymnasium_vector_wrappers_count_the_learners_episodes():
    import gymnasium

    env = gymnasium.wrappers.vector.RecordEpisodeStatistics(
        MoonRiverVectorEnv(2, GameConfig(num_players=2), opponents="greedy",
                           autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP))
    env.reset(seed=1)
    episodes = 0
    for _ in range(200):
        masks = env.unwrapped.action_masks()
        _, _, term, _, infos = env.step(masks.argmax(axis=1))
        if term.any():
            assert (infos["_episode"] == term).all()
            assert set(infos["episode"]["r"][term].tolist()) <= {-1.0, 1.0}
            episodes += int(term.sum())
    assert episodes > 0
    env.close()


def test_single_game_env_passes_the_libraries_checks():
    from gymnasium.utils.env_checker import check_env as gym_check_env

    sb3_check_env = pytest.importorskip("stable_baselines3.common.env_checker").check_env

    config = GameConfig(num_players=2)
    gym_check_env(SingleGameEnv(config, illegal="penalty"), skip_render_check=True)
    sb3_check_env(SingleGameEnv(config, illegal="penalty"), warn=True)
    env = SingleGameEnv(config)
    env.reset(seed=1)
    with pytest.raises(BatchIllegalActionError, match="in game 0 of the batch"):
        env.step(0 if not env.action_masks()[0] else 2709)


def test_maskable_ppo_trains_on_the_sb3_vec_env():
    MaskablePPO = pytest.importorskip("sb3_contrib").MaskablePPO

    venv = make_sb3_vec_env(2, GameConfig(num_players=2), opponents="random", seed=3)
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=16, n_epochs=1,
                        policy_kwargs={"net_arch": [16]}, seed=0, device="cpu")
    model.learn(64)
    assert model.num_timesteps >= 64


ROOT = Path(__file__).resolve().parents[2]
MAX_MODULE_LINES = 800  # a module stays readable in one sitting


def test_each_module_of_the_batch_and_the_agents_has_one_job_and_stays_short():
    """The batch package is split by job (the batch, seats, compact observation, Gymnasium
    vector env, SB3 VecEnv, single env, self-play view, async pool), none over 800 lines."""
    folders = (ROOT / "moonriver_env" / "moonriver" / "batch", ROOT / "agents")
    lengths = {path.name: len(path.read_text().splitlines())
               for folder in folders for path in folder.glob("*.py")}
    assert {"games.py", "seats.py", "compact.py", "vector_env.py", "sb3_env.py",
            "single_env.py", "multiagent.py", "async_env.py", "registry.py", "specs.py"} \
        <= set(lengths)
    assert not {name: n for name, n in lengths.items() if n > MAX_MODULE_LINES}


def test_the_public_names_are_where_users_find_them():
    import moonriver_env
    import moonriver_env.moonriver.batch as batch

    assert sorted(batch.__all__) == sorted(batch._EXPORTS) == sorted(dir(batch))
    for name in batch.__all__:
        value = getattr(batch, name)
        assert getattr(value, "__module__", batch.__name__).startswith(batch.__name__), name
    assert moonriver_env.MoonRiverVectorEnv is batch.MoonRiverVectorEnv is MoonRiverVectorEnv
    assert moonriver_env.BatchedGames is batch.BatchedGames is BatchedGames
    with pytest.raises(AttributeError, match="no attribute 'vector'"):
        batch.vector  # noqa: B018
