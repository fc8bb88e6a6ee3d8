"""Search inside the compiled core: determinized clones, Greedy's ranking, IS-MCTS."""

from __future__ import annotations

import math

import numpy as np
import pytest
from moonriver_env.agents.greedy import GreedyAgent, action_values
from moonriver_env.agents.mcts import MCTSAgent
from moonriver_env.agents.pretrained import greedy_prior

from moonriver_env.moonriver.backend import make_game
from moonriver_env.moonriver.rules import GameConfig


def _mid_game(seed: int, steps: int, num_players: int = 4):
    game = make_game(GameConfig(num_players=num_players), seed, "core")
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(len(ids))]))
    return game


def test_determinized_clone_reshuffles_only_the_hidden_order():
    game = _mid_game(3, 60)
    before = game.to_record()
    clone = game.determinized_clone(123)
    assert game.to_record() == before  # the original is untouched
    assert sorted(clone.box) == sorted(game.box) and sorted(clone.pile) == sorted(game.pile)
    assert clone.box != game.box  # 60-odd plots: a reshuffle that keeps the order is absurd
    assert np.array_equal(clone.legal_mask(), game.legal_mask())
    assert np.array_equal(clone.observe(0), game.observe(0))  # nothing hidden is observed
    again = game.determinized_clone(123)
    assert again.box == clone.box and again.pile == clone.pile  # same seed, same order
    assert game.determinized_clone(124).box != clone.box


@pytest.mark.parametrize("num_players,mode,seed", [(2, "base", 1), (3, "legends", 2),
                                                   (4, "base", 3)])
def test_greedy_values_in_core_equal_the_python_ranking(num_players, mode, seed):
    config = GameConfig(num_players=num_players, mode=mode)
    python, core = make_game(config, seed, "python"), make_game(config, seed, "core")
    a, b = GreedyAgent(seed=5), GreedyAgent(seed=5)
    while not core.is_over:
        legal = python.legal_action_ids().tolist()
        if len(legal) > 1:
            assert action_values(core, legal) == action_values(python, legal), python.phase
        x, y = a.act(python, None), b.act(core, None)
        assert x == y
        python.apply(x)
        core.apply(y)
    assert python.to_record() == core.to_record()


@pytest.mark.parametrize("num_players,mode,scenario", [(2, "legends", 3), (3, "base", None),
                                                       (4, "legends", 2)])
def test_greedy_prior_never_reads_the_hidden_order(num_players, mode, scenario):
    # the searches score a node's actions with Greedy on copies of the real game (the root
    # included): a value that moved with the box or pile order would let them read it
    config = GameConfig(num_players=num_players, mode=mode, scenario=scenario)
    rng = np.random.default_rng(num_players)
    compared = 0
    for seed in range(2):
        game = make_game(config, 9_900_000_000 + seed, "core")
        while not game.is_over:
            legal = game.legal_action_ids()
            if len(legal) > 1:
                prior = greedy_prior(game)
                for k in range(2):
                    assert np.array_equal(greedy_prior(game.determinized_clone(100 * seed + k)),
                                          prior), game.phase
                    compared += 1
            game.apply(int(rng.choice(legal)))
    assert compared > 100


def test_core_mcts_plays_legal_moves_and_is_deterministic_per_seed():
    def play(seed: int) -> list[int]:
        game = make_game(GameConfig(num_players=3), 8, "core")
        agents = [MCTSAgent(simulations=30, seed=seed + p) for p in range(3)]
        moves = []
        while not game.is_over and len(moves) < 60:
            move = agents[game.current_player].act(game, None)
            assert game.legal_mask()[move] == 1
            game.apply(move)
            moves.append(move)
        return moves

    assert play(1) == play(1)
    assert play(1) != play(2)


def test_core_mcts_search_counts_and_checks():
    game = _mid_game(4, 30)
    actions, visits = game.mcts_search(simulations=64, seed=9)
    assert np.all(np.diff(actions) > 0) and visits.sum() == 64
    assert all(game.legal_mask()[a] for a in actions)
    for bad in ({"simulations": 0}, {"seconds": -1.0}, {"rollout_depth": -1}, {"seed": -1}):
        with pytest.raises(ValueError):
            game.mcts_search(**bad)


def _duel(games: int, simulations: int) -> float:
    """Share of points (a shared win counts half) of the core MCTS against the Python MCTS,
    seats alternating, 2-player base games."""
    points = 0.0
    config = GameConfig(num_players=2)
    for g in range(games):
        core = make_game(config, 1000 + g, "core")
        python = make_game(config, 1000 + g, "python")  # the same game, played by the engine
        core_seat = g % 2
        agents = {core_seat: MCTSAgent(simulations=simulations, seed=2 * g),
                  1 - core_seat: MCTSAgent(simulations=simulations, seed=2 * g + 1)}
        while not core.is_over:
            p = core.current_player
            # The core player searches on the core game, the Python one on the engine game.
            move = agents[p].act(core if p == core_seat else python, None)
            core.apply(move)
            python.apply(move)
        winners = core.winners()
        if core_seat in winners:
            points += 1.0 / len(winners)
    return points / games


def _interval(share: float, games: int) -> tuple[float, float]:
    half = 1.96 * math.sqrt(max(share * (1 - share), 1e-9) / games)
    return share - half, share + half


def test_core_mcts_is_not_weaker_than_the_python_mcts():
    share = _duel(games=40, simulations=20)
    assert _interval(share, 40)[1] >= 0.5, share


@pytest.mark.slow
def test_core_mcts_is_not_weaker_than_the_python_mcts_at_50_simulations():
    share = _duel(games=100, simulations=50)
    print(f"core mcts:50 vs python mcts:50 over 100 games: {share:.3f}, 95% interval "
          f"{_interval(share, 100)}")
    assert _interval(share, 100)[1] >= 0.5, share
