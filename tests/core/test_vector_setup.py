"""Batches set up their games inside the core: a reset's games and every game that follows
an ended one are drawn there from the seed (base + stride * k), with no Python set-up per game,
and they are the games ``core.Game(config, seed)`` and the engine set up from those seeds."""

from __future__ import annotations

import numpy as np
import pytest

from moonriver_env.moonriver.batch.async_env import AsyncBatchedGames
from moonriver_env.moonriver.batch.games import BatchedGames
from moonriver_env.moonriver.core import Game, _core
from moonriver_env.moonriver.core import game as core_game
from moonriver_env.moonriver.rules import Game as EngineGame
from moonriver_env.moonriver.rules.config import GameConfig


def _refuse(*args, **kwargs):
    raise AssertionError("a batch set a game up in Python")


def _same_setup(game, ref) -> None:
    assert (game.scenario, game.board_names, game.setup_order, game.box, game.pile,
            game.saloon, game.active) == (ref.scenario, ref.board_names, ref.setup_order,
                                          ref.box, ref.pile, ref.saloon, ref.active)


@pytest.mark.parametrize("config", [GameConfig(num_players=2),
                                    GameConfig(num_players=3, mode="legends")],
                         ids=["2-base", "3-legends"])
def test_ended_games_are_replaced_inside_the_core(config, monkeypatch):
    N = 6
    games = BatchedGames(N, config, seats=("learner",) + ("random",) * (config.num_players - 1))
    games.reset(2**64 - 3)  # seeds past 2**64: the core adds to the seed's words
    for name in ("_setup_draws", "setup_plan_of", "setup_plan"):  # every set-up path in Python
        monkeypatch.setattr(core_game, name, _refuse)
    monkeypatch.setattr(np.random, "default_rng", _refuse)  # and the engine's draws
    ended = 0
    for _ in range(3000):  # a cap on steps, not on time
        games.step(games.random_actions())
        ended += int(games.done.sum())
        if ended >= 2 * N and games.episodes.min() >= 1:
            break
    assert ended >= 2 * N and games.episodes.min() >= 1
    assert [games._batch.episode(g) for g in range(N)] == games.episodes.tolist()
    monkeypatch.undo()
    for g in range(N):  # each slot now plays a later episode, seeded base + N * k
        seed = games.episode_seed(g)
        assert seed == 2**64 - 3 + g + N * int(games.episodes[g])
        fresh = Game(config, seed)
        _same_setup(fresh, EngineGame(config, seed))
        if games.game(g).history == []:  # not played yet in its slot: the same table
            _same_setup(games.game(g), fresh)


def test_game_g_is_the_core_game_of_its_episode_seed():
    config = GameConfig()
    games = BatchedGames(4, config)
    games.reset(11, seeds=[5, 2**70, 0, 9])
    for g, seed in enumerate([5, 2**70, 0, 9]):
        _same_setup(games.game(g), EngineGame(config, seed))


def test_a_part_of_an_async_pool_sets_up_the_pools_episodes():
    config = GameConfig(num_players=2)
    with AsyncBatchedGames(6, batch_size=3, config=config, seats=("learner", "random")) as pool:
        pool.reset(40)
        part, g = pool._part(4)
        part.episodes[g] = 2
        part._begin(g, 2)  # the pool's game 4, third episode: 40 + 4 + 6 * 2
        assert part.episode_seed(g) == 40 + 4 + 6 * 2
        _same_setup(part.game(g), EngineGame(config, 40 + 4 + 6 * 2))


VARIANTS = [GameConfig(), GameConfig(num_players=2), GameConfig(num_players=3),
            GameConfig(mode="legends"), GameConfig(num_players=2, mode="legends"),
            GameConfig(num_players=3, mode="legends"),
            GameConfig(num_players=3, mode="legends", scenario=3),
            GameConfig(num_players=2, mode="legends", boards=("mary", "wesley")),
            GameConfig(num_players=4, auto_forced=True)]
EDGE_SEEDS = [0, 2**32 - 1, 2**32, 2**63, 2**64 - 1, 2**64, 2**70 + 5, 2**200 + 3]


def _identity(game) -> tuple:
    return game.scenario, game.board_names, game.setup_order


@pytest.mark.parametrize("config", VARIANTS, ids=lambda c: f"{c.num_players}-{c.mode}-"
                         f"{c.scenario}-{c.boards}-{c.auto_forced}")
def test_game_g_has_the_scenario_boards_and_order_of_its_seeds_game(config):
    seeds = list(range(120)) + EDGE_SEEDS
    games = BatchedGames(len(seeds), config)
    games.reset(3, seeds=seeds)
    for g, seed in enumerate(seeds):
        assert _identity(games.game(g)) == _identity(Game(config, seed)), seed


@pytest.mark.parametrize("config", VARIANTS[3:6], ids=lambda c: f"{c.num_players}-legends")
def test_game_g_reads_its_set_up_from_the_core_without_drawing_it_again(config, monkeypatch):
    N = 8
    games = BatchedGames(N, config)
    games.reset(2**64 - 5)
    expected = [_identity(Game(config, games.episode_seed(g))) for g in range(N)]
    for name in ("_setup_draws", "setup_plan_of", "setup_plan"):  # every set-up path in Python
        monkeypatch.setattr(core_game, name, _refuse)
    monkeypatch.setattr(np.random, "default_rng", _refuse)
    monkeypatch.setattr(core_game, "seed_words", _refuse)  # no seed is turned into draws
    assert [_identity(games.game(g)) for g in range(N)] == expected
    assert len({game[1] for game in expected}) > 1  # the boards differ between the games


def test_a_core_game_holds_its_set_up():
    config = GameConfig(num_players=2, mode="legends")
    names = core_game.board_pool(config, config.data)
    for seed in (0, 9, 2**64 + 1):
        native, ref = Game(config, seed).native, EngineGame(config, seed)
        assert (native.scenario, tuple(names[i] for i in native.board_indices),
                native.setup_order) == (ref.scenario, ref.board_names, ref.setup_order)


def test_game_of_refuses_a_core_game_it_cannot_name_the_boards_of():
    config = GameConfig(num_players=2, mode="legends")
    native = Game(config, 4).native
    restored = _core.Game.deserialize(core_game._tables(config.data), native.serialize())
    assert restored.board_indices is None  # bytes carry no plan (a pickled Game names its own)
    assert core_game.game_of(config, 4, native).board_names == Game(config, 4).board_names
    with pytest.raises(ValueError, match="set up from a plan"):
        core_game.game_of(config, 4, restored)
    with pytest.raises(ValueError, match="players"):
        core_game.game_of(GameConfig(num_players=3, mode="legends"), 4, native)


def test_begin_refuses_what_is_not_an_episode():
    games = BatchedGames(2)
    games.reset(0)
    # the core's own check, or (with the bindings' int checks) the argument's range
    with pytest.raises(ValueError, match=r"episode must be >= 0|k must be an int in \[0, "):
        games._batch.begin(0, [1], -1, 2)
    with pytest.raises(ValueError, match="at least one word"):
        games._batch.begin(0, [], 0, 2)
    with pytest.raises(IndexError):
        games._batch.begin(2, [1], 0, 2)
    assert np.all(games.episodes == 0)


def test_game_g_is_handed_over_as_a_core_game_without_bytes():
    config = GameConfig(num_players=2)
    games = BatchedGames(3, config, seats=("learner", "random"))
    games.reset(21)
    for _ in range(5):
        games.step(games.random_actions())
    assert not hasattr(games._batch, "serialize")  # one module: no byte state in between
    copy = games.game(1)
    assert type(copy._core) is _core.Game
    assert copy.seed == games.episode_seed(1)
    replay = Game(config, copy.seed)
    for event in copy.history:
        if event["type"] == "decision":
            replay.apply(event["action"])
    assert len(replay.history) == len(copy.history) > 5
    assert replay.legal_action_ids().tolist() == copy.legal_action_ids().tolist()
    before = games.game(1).legal_action_ids().tolist()
    copy.apply(int(copy.legal_action_ids()[0]))  # a copy: the batch's game does not move
    assert games.game(1).legal_action_ids().tolist() == before
