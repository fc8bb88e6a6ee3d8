"""EnvPool-style async stepping (moonriver_env.moonriver.batch.async_env) against synchronous
stepping."""

from __future__ import annotations

import json
import pathlib
import pickle
import subprocess
import sys
import threading

import numpy as np
import pytest

from moonriver_env.moonriver.batch import BatchedGames, BatchIllegalActionError
from moonriver_env.moonriver.batch.async_env import AsyncBatchedGames
from moonriver_env.moonriver.core import Game
from moonriver_env.moonriver.rules.config import GameConfig
from tests.helpers import HANG_GUARD

BENCHMARK = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "vector_async.py"


def _choose(mask_row: np.ndarray, game_id: int, step: int) -> int:
    """A legal action that depends only on the game, its step count and its mask."""
    legal = np.flatnonzero(mask_row)
    return int(legal[np.random.default_rng([game_id, step]).integers(legal.size)])


def _record(log: dict, state) -> None:
    for r, g in enumerate(state.env_id.tolist()):
        log.setdefault(g, []).append((int(state.current_player[r]), state.observation[r].copy(),
                                      state.rewards[r].copy(), bool(state.terminated[r])))


def _sync_run(config: GameConfig, n: int, seed: int, rounds: int, **kwargs) -> dict:
    """Every game's (player, obs, rewards, terminated) per step under plain BatchedGames."""
    batch = BatchedGames(n, config, **kwargs)
    batch.reset(seed)
    log: dict[int, list] = {}
    for step in range(rounds):
        actions = np.array([_choose(batch.mask[g], g, step) for g in range(n)])
        batch.step(actions)
        for g in range(n):
            log.setdefault(g, []).append((int(batch.player[g]), batch.obs[g].copy(),
                                          batch.rewards[g].copy(), bool(batch.done[g])))
    return log


def _async_run(pool: AsyncBatchedGames, seed: int, rounds: int, order: int) -> dict:
    """The same through send/recv: parts sent in a random order (drawn from ``order``), some
    sent before others come back, each received as it finishes."""
    pool.async_reset(seed)
    ready = [pool.recv() for _ in pool.parts]
    steps = np.zeros(pool.num_games, np.int64)
    log: dict[int, list] = {}
    rng = np.random.default_rng(order)
    in_flight = 0
    while ready or in_flight:
        if ready and (not in_flight or rng.random() < 0.5):
            state = ready.pop(int(rng.integers(len(ready))))
            ids = state.env_id[::-1]  # any order of a part's ids
            if steps[ids[0]] == rounds:
                continue
            actions = [_choose(state.legal_action_mask[np.flatnonzero(state.env_id == g)[0]],
                               g, int(steps[g])) for g in ids.tolist()]
            steps[ids] += 1
            pool.send(np.array(actions), ids)
            in_flight += 1
        else:
            state = pool.recv()
            in_flight -= 1
            _record(log, state)
            ready.append(state)
    return log


def _assert_same(sync: dict, other: dict) -> None:
    assert sorted(sync) == sorted(other)
    for g in sync:
        assert len(sync[g]) == len(other[g])
        for (p, obs, rew, done), (q, obs2, rew2, done2) in zip(sync[g], other[g], strict=True):
            assert (p, done) == (q, done2)
            np.testing.assert_array_equal(obs, obs2)
            np.testing.assert_array_equal(rew, rew2)


@pytest.mark.parametrize("batch_size", [2, 3, 6])
def test_async_steps_every_game_as_synchronous_batched_games(batch_size):
    """Self-play (every seat a learner): game g of the pool plays exactly game g of
    BatchedGames(6) reset with the same seed, for the same actions, whatever the parts and
    the order in which they come back; ended games continue with the same next episodes."""
    config = GameConfig(num_players=2)
    sync = _sync_run(config, 6, 30, 260)
    assert sum(done for g in sync for *_, done in sync[g]) >= 2
    with AsyncBatchedGames(6, batch_size, config) as pool:
        _assert_same(sync, _async_run(pool, 30, 260, order=0))
        assert [pool.episode_seed(g) for g in range(6)] == [
            30 + g + 6 * sum(d for *_, d in sync[g]) for g in range(6)]


def test_built_in_seats_do_not_depend_on_timing_or_recv_order():
    config = GameConfig(num_players=3)
    seats = ("learner", "random", "greedy")
    runs = []
    for order, workers in ((0, 1), (1, 3), (2, 2)):
        with AsyncBatchedGames(6, 2, config, seats=seats, workers=workers) as pool:
            runs.append(_async_run(pool, 5, 80, order))
    _assert_same(runs[0], runs[1])
    _assert_same(runs[0], runs[2])
    with AsyncBatchedGames(6, 2, config, seats=seats) as pool:  # part p: BatchedGames(2)
        pool.reset(5)  # reset with seed + 2p: the same first games and built-in draws
        parts = [BatchedGames(2, config, seats) for _ in range(3)]
        for p, part in enumerate(parts):
            part.reset(5 + 2 * p)
        for step in range(40):  # up to the first game's end (later episodes are the pool's)
            for p, part in enumerate(parts):
                acts = np.array([_choose(part.mask[g], 2 * p + g, step) for g in range(2)])
                state = pool.step(acts, np.arange(2 * p, 2 * p + 2))
                part.step(acts)
                going = ~part.done  # an ended game's next one is the pool's next episode
                np.testing.assert_array_equal(state.observation[going], part.obs[going])
                np.testing.assert_array_equal(state.rewards, part.rewards)
                np.testing.assert_array_equal(state.final_observation[~going],
                                              part.final_obs[~going])
            if any(part.done.any() for part in parts):
                break
        assert step >= 10 and pool.parts[0].builtin_decisions > step


def test_reset_returns_all_games_as_batched_games_do():
    config = GameConfig(num_players=4)
    with AsyncBatchedGames(4, 2, config) as pool:
        state = pool.reset(12)
        assert state.env_id.tolist() == [0, 1, 2, 3]
        for g in range(4):
            ref = Game(config, 12 + g)
            assert state.current_player[g] == ref.current_player
            np.testing.assert_array_equal(state.observation[g], ref.observe(ref.current_player))
            assert pool.game(g).to_record() == ref.to_record()


def test_an_illegal_action_is_raised_by_recv_and_changes_no_game():
    config = GameConfig(num_players=2)
    with AsyncBatchedGames(4, 2, config) as pool:
        state = pool.reset(3)
        legal = [int(np.flatnonzero(row)[0]) for row in state.legal_action_mask]
        illegal = int(np.flatnonzero(~state.legal_action_mask[3])[0])
        pool.send(np.array([legal[0], legal[1]]), np.array([0, 1]))
        pool.send(np.array([legal[2], illegal]), np.array([2, 3]))
        errors, states = [], []
        for _ in range(2):
            try:
                states.append(pool.recv())
            except BatchIllegalActionError as err:
                errors.append(err)
        assert len(errors) == 1 and [s.env_id.tolist() for s in states] == [[0, 1]]
        err = errors[0]
        assert err.game_index == 3 and "in game 3 of the batch" in str(err)
        assert err.reason and err.legal
        again = pickle.loads(pickle.dumps(err))  # it crosses process boundaries as it is
        assert type(again) is BatchIllegalActionError and str(again) == str(err)
        assert pool.game(3).to_record() == Game(config, 6).to_record()  # unchanged
        after = pool.step(np.array([legal[2], legal[3]]), np.array([2, 3]))  # may resend
        assert after.env_id.tolist() == [2, 3]


def test_bad_ids_and_calls_are_refused():
    with AsyncBatchedGames(4, 2, GameConfig(num_players=2)) as pool:
        with pytest.raises(RuntimeError, match="reset"):
            pool.send(np.zeros(2, np.int64), np.array([0, 1]))
        with pytest.raises(RuntimeError, match="nothing to recv"):
            pool.recv()
        state = pool.reset(0)
        acts = np.array([int(np.flatnonzero(r)[0]) for r in state.legal_action_mask])
        for ids, match in (([0, 4], r"0\.\.3, got 4"), ([-1, 0], r"0\.\.3, got -1"),
                           ([0, 0], "repeat"), ([0, 2], "whole parts of 2"),
                           ([1], "whole parts"), ([], "non-empty"), ([[0, 1]], "1-d")):
            with pytest.raises(ValueError, match=match):
                pool.send(acts[:len(ids)] if ids and np.ndim(ids) == 1 else acts[:2],
                          np.array(ids, np.int64))
        with pytest.raises(ValueError, match="one per env_id"):
            pool.send(acts[:3], np.array([0, 1]))
        with pytest.raises(ValueError, match="env_id must be"):
            pool.send(acts[:2], np.array([0.0, 1.0]))
        pool.send(acts[:2], np.array([0, 1]))
        with pytest.raises(ValueError, match="still stepping"):
            pool.send(acts[:2], np.array([1, 0]))
        with pytest.raises(RuntimeError, match="recv"):
            pool.async_reset(1)
        pool.recv()
    with pytest.raises(ValueError, match="divide"):
        AsyncBatchedGames(5, 2)
    with pytest.raises(ValueError, match="batch_size"):
        AsyncBatchedGames(4, 5)


def test_benchmark_runs_at_a_tiny_size():
    proc = subprocess.run([sys.executable, str(BENCHMARK), "--games", "8", "--steps", "3",
                           "--rounds", "2", "--hidden", "8"], capture_output=True, text=True,
                          timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stderr
    last = json.loads(proc.stdout.strip().splitlines()[-1])
    assert last["benchmark"] == "vector_async" and last["machine"]["cpu_model"]
    assert last["async_over_sync_median"] > 0


def test_step_without_ids_steps_and_returns_every_game():
    """``step(actions)`` over several parts is synchronous stepping: all games come back."""
    config = GameConfig(num_players=2)
    ref = BatchedGames(4, config)
    ref.reset(3)
    with AsyncBatchedGames(4, 2, config) as pool:
        state = pool.reset(3)
        for _ in range(3):
            acts = ref.random_actions()
            ref.step(acts)
            state = pool.step(acts)
            assert state.env_id.tolist() == [0, 1, 2, 3]
            np.testing.assert_array_equal(state.observation, ref.obs)
        bad = np.full(4, 99999)
        with pytest.raises(BatchIllegalActionError, match="in game 0"):
            pool.step(bad)
        assert pool.step(ref.random_actions()).env_id.size == 4  # no part left stepping


def test_step_raises_the_lowest_parts_error_whatever_finishes_first():
    """Part 0 is held until part 1 has raised: the error is still game 0's."""
    with AsyncBatchedGames(4, 2, GameConfig(num_players=2)) as pool:
        pool.reset(3)
        first, second = pool.parts
        raised = threading.Event()
        step_first, step_second = first.step, second.step

        def late(actions):
            assert raised.wait(timeout=HANG_GUARD)  # a hang guard, not a time budget
            return step_first(actions)

        def early(actions):
            try:
                return step_second(actions)
            finally:
                raised.set()

        first.step, second.step = late, early
        with pytest.raises(BatchIllegalActionError, match="in game 0"):
            pool.step(np.full(4, 99999))


def test_a_closed_pool_says_so():
    pool = AsyncBatchedGames(4, 2, GameConfig(num_players=2))
    state = pool.reset(0)
    acts = np.array([int(np.flatnonzero(r)[0]) for r in state.legal_action_mask])
    pool.send(acts[:2], np.array([0, 1]))
    pool.close()  # waits for the part in flight
    with pytest.raises(RuntimeError, match="closed: make a new one"):
        pool.send(acts[2:], np.array([2, 3]))
    with pytest.raises(RuntimeError, match="closed: make a new one"):
        pool.reset(0)
