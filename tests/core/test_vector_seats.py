"""``mcts:N`` as a built-in seat of batches (issue 30, point 4): the core's IS-MCTS played
inside the batched step, seeded from each game's stream."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from moonriver_env.moonriver.batch import (
    BatchedGames,
    BuiltinSeat,
    MoonRiverVectorEnv,
    NetworkSeat,
    seat_kind,
)
from moonriver_env.moonriver.core import _core
from moonriver_env.moonriver.rules import Game, GameConfig


def _play(batch: BatchedGames, seed: int, seeds: list[int] | None = None,
          seats: list[tuple[str, ...]] | None = None) -> list[tuple[np.ndarray, ...]]:
    """Reset, then drive every learner seat with the batch's own random driver until every
    game of the fixed list is over; the trace of every step's outputs."""
    batch.reset(seed, seeds=seeds, seats=seats)
    trace = []
    while not batch.over.all():
        batch.step(batch.random_actions())
        trace.append((batch.obs.copy(), batch.mask.copy(), batch.player.copy(),
                      batch.rewards.copy(), batch.done.copy()))
    return trace


def test_mcts_seats_play_inside_the_step_and_only_learners_reach_python() -> None:
    config = GameConfig(num_players=3)
    seats = ("learner", "mcts:8", "random")
    batch = BatchedGames(3, config, seats, autoreset=False, threads=2)
    trace = _play(batch, seed=5)
    assert batch.builtin_decisions > 3 * 40
    for *_, player, _rewards, _done in trace:
        assert all(seats[p] == "learner" for p in player[player >= 0])
    for g in range(3):  # every decision of the ended game replays legally in the engine
        replay = Game(config, 5 + g)
        for event in batch.game(g).history:
            if event["type"] == "decision" and not event.get("auto"):
                replay.apply(event["action"])
        assert replay.is_over


def test_mcts_seats_are_reproducible_and_thread_count_free() -> None:
    """The same seed gives the same games; 1 or 2 threads give the same; another seed
    gives other games."""
    config = GameConfig(num_players=2)
    runs = []
    for threads, seed in ((1, 11), (2, 11), (1, 11), (2, 12)):
        batch = BatchedGames(4, config, ("mcts:6", "learner"), autoreset=False, threads=threads)
        runs.append(_play(batch, seed, seeds=[40, 41, 42, 43]))
    a, b, c, d = runs
    for trace in (b, c):
        assert len(trace) == len(a)
        for x, y in zip(a, trace, strict=True):
            assert all(np.array_equal(u, v) for u, v in zip(x, y, strict=True))
    assert len(d) != len(a) or any(not np.array_equal(x[0], y[0])
                                   for x, y in zip(a, d, strict=True))


def test_mcts_beats_random_seats_clearly() -> None:
    """24 two-player games (seats alternating) of mcts:24 against uniform random play: the
    search wins at least 20."""
    config = GameConfig(num_players=2)
    seats = [("mcts:24", "learner") if g % 2 == 0 else ("learner", "mcts:24") for g in range(24)]
    batch = BatchedGames(24, config, autoreset=False, threads=2)
    wins = 0.0
    batch.reset(3, seats=seats)
    while not batch.over.all():
        batch.step(batch.random_actions())
        for g in np.flatnonzero(batch.done):
            mcts = seats[g].index("mcts:24")
            wins += batch.rewards[g, mcts] > 0
    assert wins >= 20, wins


def test_vector_env_takes_mcts_opponents() -> None:
    env = MoonRiverVectorEnv(2, GameConfig(num_players=2), opponents="mcts:5")
    obs, _ = env.reset(seed=1)
    assert env.games.seats == ("learner", "mcts:5")
    for _ in range(5):
        obs, *_ = env.step(env.games.random_actions())
    assert obs.shape == (2, 4934) and env.games.builtin_decisions > 0


@pytest.mark.parametrize("name", ["mcts:0", "mcts:", "mcts:x", "mcts:65536", "mcts:01",
                                  "mcts: 5", "MCTS:5", "mcts:٣", "mcts:-1", 5])
def test_bad_mcts_seats_are_refused(name: object) -> None:
    assert seat_kind(name) is None
    with pytest.raises(ValueError, match=r"seats must name one of .*'mcts:N' \(N simulations, "
                                         r"1\.\.65535\)"):
        BatchedGames(1, GameConfig(num_players=2), ("learner", name))
    with pytest.raises(ValueError, match="opponents must be one of 'random', 'greedy', "
                                         "'mcts:N'"):
        MoonRiverVectorEnv(1, GameConfig(num_players=2), opponents=name)


def test_the_core_refuses_other_seat_kinds() -> None:
    assert seat_kind("mcts:65535") == _core.SEAT_MCTS + 65535 == 2 * _core.SEAT_MCTS - 1
    batch = BatchedGames(1, GameConfig(num_players=2))
    batch.reset(0)
    for kind in (_core.SEAT_MCTS, 2 * _core.SEAT_MCTS, 4, -1):
        with pytest.raises(ValueError, match="SEAT_MCTS \\+ simulations"):
            batch._batch.set_seats(0, [_core.SEAT_LEARNER, kind])


class _FirstLegal:
    """A network of no agent's: its logits rank the legal actions by id (the lowest first)."""

    core = None

    def evaluate(self, obs, mask, num_players, prior=None):  # type: ignore[no-untyped-def]
        logits = np.where(mask > 0, -np.arange(mask.shape[1], dtype=np.float32), -np.inf)
        return logits, np.zeros((len(obs), 4), np.float32)


def test_a_network_seat_is_any_network_the_batch_is_handed() -> None:
    """The batch builds no agent: a NetworkSeat carries a loaded network (here one of the
    test's), whose most likely legal action the seat plays."""
    seat = NetworkSeat(_FirstLegal(), name="first-legal")
    batch = BatchedGames(2, GameConfig(num_players=2), ("learner", seat), autoreset=False)
    assert batch.seats == ("learner", "first-legal")
    batch.reset(4)
    while not batch.over.all():
        batch.step(batch.random_actions())
    for g in range(2):
        game = Game(GameConfig(num_players=2), batch.episode_seed(g))
        for event in batch.game(g).history:
            if event["type"] == "decision" and not event.get("auto"):
                if event["player"] == 1:
                    assert event["action"] == int(game.legal_action_ids()[0])
                game.apply(event["action"])
    assert batch.network_decisions > 20


@pytest.mark.parametrize(("make", "words"), [
    (lambda: BuiltinSeat("pretrained"), "a built-in seat is one of 'learner'"),
    (lambda: NetworkSeat(object()), "must have evaluate"),
    (lambda: NetworkSeat(_FirstLegal(), simulations=-1), "simulations must be an int >= 0"),
    (lambda: NetworkSeat(_FirstLegal(), simulations=True), "simulations must be an int"),
    (lambda: NetworkSeat(_FirstLegal(), greedy_prior=float("nan")), "finite number"),
])
def test_bad_seats_are_refused_when_made(make, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        make()


def test_the_vector_env_takes_one_opponent_per_seat() -> None:
    """``opponents`` a list of one seat per other seat (names or seats), in seat order."""
    config = GameConfig(num_players=3)
    env = MoonRiverVectorEnv(2, config, seat=1, opponents=["greedy", BuiltinSeat("mcts:3")])
    assert env.games.seats == ("greedy", "learner", "mcts:3")
    env.reset(seed=0)
    env.step(env.games.random_actions())
    assert env.games.builtin_decisions > 0
    for bad in (["greedy"], ["greedy", "learner"], ["greedy", 3], ("random",) * 3):
        with pytest.raises(ValueError, match=r"a list of one per other seat \(2\)"):
            MoonRiverVectorEnv(1, config, opponents=bad)
    made = gymnasium.make_vec("MoonRiver-v0", num_envs=1, num_players=3,
                              opponents=["random", "greedy"])
    assert made.games.seats == ("learner", "random", "greedy")
