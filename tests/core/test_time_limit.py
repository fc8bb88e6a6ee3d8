"""The core's searches with a deadline (``time_limit``): checked between simulations or steps,
a search stops early with the result so far; absent or 0, the search is bit-identical.

No test depends on machine speed: a limit of 1e-9 s has passed by the first check, and one of
1e9 s never passes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from moonriver_env.agents.az import core_net, shipped_path
from moonriver_env.agents.pretrained import SHAPE_WEIGHT, read_npz

from moonriver_env.moonriver.core import Game, _core
from moonriver_env.moonriver.rules import GameConfig

PASSED, NEVER = 1e-9, 1e9  # a deadline passed at the first check, and one that never passes


def position(num_players: int, seed: int, moves: int) -> Game:
    """A game after ``moves`` seeded random decisions, at a decision with a real choice."""
    game, rng = Game(GameConfig(num_players=num_players), seed=seed), np.random.default_rng(seed)
    for _ in range(moves):
        game.apply(int(rng.choice(game.legal_action_ids())))
    while game.legal_action_ids().size < 2:
        game.apply(int(game.legal_action_ids()[0]))
    return game


def mcts(game: Game, simulations: int, **limit: float) -> tuple[list, list, int]:
    """The core's IS-MCTS of ``game`` (seed 7): (actions, visits, simulations run)."""
    return game._core.mcts_search(simulations, 0.0, 20, 1.0, 20.0, 7, **limit)


@pytest.mark.parametrize("num_players,seed,moves", [(2, 1, 30), (4, 3, 12)])
def test_mcts_without_a_limit_or_with_one_not_reached_is_bit_identical(num_players, seed,
                                                                       moves) -> None:
    game = position(num_players, seed, moves)
    base = mcts(game, 150)
    assert base[2] == 150
    assert mcts(game, 150, time_limit=0.0) == base
    assert mcts(game, 150, time_limit=NEVER) == base


def test_mcts_with_a_passed_deadline_stops_after_one_simulation() -> None:
    game = position(3, 2, 45)
    actions, visits, simulations = mcts(game, 500, time_limit=PASSED)
    assert simulations == 1 and sum(visits) == 1 and len(actions) == 1
    # The one simulation is the unlimited search's first: the same root child.
    assert actions == mcts(game, 1)[0]
    # With ``seconds`` (a time budget), the limit still stops it after one simulation.
    assert game._core.mcts_search(1, NEVER, 20, 1.0, 20.0, 7, time_limit=PASSED)[2] == 1


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_mcts_refuses_a_time_limit_that_is_not_finite_and_non_negative(bad: float) -> None:
    with pytest.raises(ValueError, match="time_limit must be finite and >= 0"):
        mcts(position(2, 1, 30), 10, time_limit=bad)


def az_search(games: list[Game], algorithm_gumbel: bool, **limit: float):
    """A core AzSearch over ``games`` (32 simulations, seed 5)."""
    return _core.AzSearch([g._core for g in games], list(range(len(games))), 32, 5,
                          algorithm_gumbel, 16, 50.0, 1.0, 1.5, 1.0, 1, **limit)


def run_loop(search) -> tuple[tuple[np.ndarray, ...], int]:
    """Evaluate every step's leaves with fixed rows; (result, steps)."""
    steps = 0
    while (leaves := search.leaves()) is not None:
        rows = len(leaves[0])
        logits = np.tile(np.sin(0.01 * np.arange(2710, dtype=np.float32)), (rows, 1))
        search.evaluate(np.ascontiguousarray(logits, np.float32),
                        np.full((rows, 4), 0.5, np.float32))
        steps += 1
    return search.result(), steps


def games() -> list[Game]:
    return [position(2, 1, 30), position(3, 2, 45), position(4, 3, 12)]


def assert_same(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> None:
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("gumbel", [True, False], ids=["gumbel", "puct"])
def test_az_search_without_a_limit_or_with_one_not_reached_is_bit_identical(gumbel) -> None:
    base, steps = run_loop(az_search(games(), gumbel))
    assert steps > 2 and (base[3].sum(axis=1) == 32).all()
    for limit in (0.0, NEVER):
        again, again_steps = run_loop(az_search(games(), gumbel, time_limit=limit))
        assert again_steps == steps
        assert_same(again, base)


@pytest.mark.parametrize("gumbel", [True, False], ids=["gumbel", "puct"])
def test_az_search_with_a_passed_deadline_stops_after_one_simulation_each(gumbel) -> None:
    search = az_search(games(), gumbel, time_limit=PASSED)
    (action, policy, _, visits, searched), steps = run_loop(search)
    assert steps == 2  # the roots' step, then one simulation's leaves
    assert searched.all() and (visits.sum(axis=1) == 1).all()
    assert np.isfinite(policy).all() and np.allclose(policy.sum(axis=1), 1.0)
    assert all(visits[g, action[g]] == 1 for g in range(len(action)))  # the visited child


def test_az_run_in_the_core_stops_at_the_deadline_too() -> None:
    net = core_net(read_npz(shipped_path())[0])
    full = az_search(games(), True)
    full.run(net, SHAPE_WEIGHT)
    limited = az_search(games(), True, time_limit=PASSED)
    valued = limited.run(net, SHAPE_WEIGHT)
    assert valued == 2 * 3  # each game's root and one simulation
    assert (limited.result()[3].sum(axis=1) == 1).all()
    never = az_search(games(), True, time_limit=NEVER)
    never.run(net, SHAPE_WEIGHT)
    assert_same(never.result(), full.result())


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_az_search_refuses_a_time_limit_that_is_not_finite_and_non_negative(bad) -> None:
    with pytest.raises(ValueError, match="time_limit must be finite and >= 0"):
        az_search(games()[:1], True, time_limit=bad)
