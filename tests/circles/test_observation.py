"""The Circles observation: every view reads the table, bounds, layout of the views."""

from __future__ import annotations

import numpy as np
import pytest

from moonriver_env.circles import CirclesConfig, CirclesGame
from moonriver_env.circles.config import ITEMS, MIN_PLAYERS
from moonriver_env.circles.game import Entry, coins
from moonriver_env.circles.observation import PLAYER_FEATURES, ObservationEncoder

_F = {name: i for i, name in enumerate(PLAYER_FEATURES)}


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_observation_reads_the_table(num_players: int) -> None:
    """Every player row, count and flag equals the game's own state, for every viewer."""
    observer = ObservationEncoder(CirclesConfig(num_players=num_players))
    cfg = observer.config
    rng = np.random.default_rng(num_players)
    checked = 0
    for seed in range(4):
        game = CirclesGame(cfg, seed=seed)
        while not game.is_over:
            for viewer in range(num_players):
                obs = observer.encode(game, viewer)
                assert obs.min() >= 0.0 and obs.max() <= observer.high
                players = observer.view(obs, "players")
                for rel in range(num_players):
                    p = (viewer + rel) % num_players
                    rubies, gold, silver = coins(game.money[p])
                    row = players[rel]
                    assert row[_F["money"]] == np.float32(game.money[p] / cfg.money_cap)
                    assert (row[_F["rubies"]], row[_F["gold"]], row[_F["silver"]]) == (
                        np.float32(rubies / 2), np.float32(gold / 2), np.float32(silver / 2))
                    for i, item in enumerate(ITEMS):
                        assert row[_F[f"{item}s"]] == np.float32(game.items[p][i]
                                                                 / cfg.stock[i])
                    entry = game.entry[p]
                    assert row[_F["bet_staked"]] == (entry == Entry.STAKED)
                    assert row[_F["bet_undecided"]] == (entry == Entry.UNDECIDED)
                assert not players[num_players:].any()
                assert observer.view(obs, "num_players")[num_players - MIN_PLAYERS] == 1.0
                assert observer.view(obs, "cup").sum() == game.cup_filled
                assert observer.view(obs, "mine").sum() == sum(v > 0 for v in game.mine_cells)
                np.testing.assert_allclose(observer.view(obs, "bag"),
                                           np.array(game.bag) / np.array(cfg.bag))
                assert observer.view(obs, "actor")[(game.current_player - viewer)
                                                   % num_players] == 1.0
                checked += 1
            ids = game.legal_action_ids()
            game.apply(ids[rng.integers(len(ids))])
        final = observer.encode(game, 0)
        assert not observer.view(final, "actor").any()  # nobody acts once it is over
    assert checked > 300


def test_encoder_refuses_a_game_of_another_config() -> None:
    observer = ObservationEncoder(CirclesConfig(num_players=3))
    with pytest.raises(ValueError, match="config differs"):
        observer.encode(CirclesGame(CirclesConfig(num_players=4), seed=0), 0)


def test_views_tile_the_vector() -> None:
    observer = ObservationEncoder()
    stops = [0]
    for view in observer.views.values():
        assert view.start == stops[-1] and view.stop - view.start == int(np.prod(view.shape))
        stops.append(view.stop)
    assert stops[-1] == observer.size
