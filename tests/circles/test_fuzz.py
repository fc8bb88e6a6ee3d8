"""Random-play fuzzing of Circles with invariants checked after every decision.

Invariants: money in 0..cap and deposits >= 0; every shop item (shovels, tickets, wagons)
conserved between the players and the shop; value conserved between purses, deposits, cup,
mine, bag and the (unlimited) reserve's ledger; the bag only loses coins and always holds its
stones; the mine empties from the entrance; the cup fills in order; the mask is the legal set;
the observation stays in its space; the game ends by the ranch or at the turn cap.
The default run plays 1500 games (2-5 players) and 120 games of each of four config variants;
``-m slow`` plays 20000 more.
"""

from __future__ import annotations

import numpy as np
import pytest

from moonriver_env.circles import CirclesConfig, CirclesGame, Phase
from moonriver_env.circles.config import ITEMS
from moonriver_env.circles.game import BAG_VALUES, Entry
from moonriver_env.circles.observation import ObservationEncoder

CONFIGS = {n: CirclesConfig(num_players=n) for n in range(2, 6)}
OBSERVERS = {n: ObservationEncoder(cfg) for n, cfg in CONFIGS.items()}


def total_value(game: CirclesGame) -> int:
    """Value on the table minus what the reserve has paid out: constant through a game."""
    bag = sum(c * v for c, v in zip(game.bag, BAG_VALUES, strict=True))
    return (sum(game.money) + sum(game.deposit) + game.cup_value + sum(game.mine_cells) + bag
            - game.reserve_out)


def check(game: CirclesGame, start_value: int, prev: dict, observe: bool,
          observer: ObservationEncoder | None = None) -> None:
    """Every invariant of the module docstring, for the state after a decision."""
    cfg = game.config
    n = game.num_players
    assert all(0 <= m <= cfg.money_cap for m in game.money), game.money
    assert all(d >= 0 for d in game.deposit)
    for i, item in enumerate(ITEMS):
        held = [game.items[p][i] for p in range(n)]
        assert min(held) >= 0 and game.shop[i] >= 0, item
        assert sum(held) + game.shop[i] == cfg.stock[i], item
    assert total_value(game) == start_value
    assert game.bag[3] == cfg.bag[3]  # stones always go back
    assert all(0 <= c <= s for c, s in zip(game.bag, prev["bag"], strict=True))
    assert prev["mine_next"] <= game.mine_next <= len(cfg.mine)
    assert 0 <= game.cup_filled <= len(cfg.cup_costs)
    assert prev["turns"] <= game.turns <= cfg.max_turns
    assert 0 <= game.marble < cfg.ring_size
    mask = game.legal_mask()
    ids = game.legal_action_ids()
    assert np.flatnonzero(mask).tolist() == ids.tolist()
    if game.is_over:
        assert ids.size == 0 and game.current_player == -1 and game.winners()
        assert game.end_reason in ("ranch", "turn_cap")
        if game.end_reason == "turn_cap":
            assert game.turns == cfg.max_turns
        else:
            assert game.money[game.winners()[0]] >= 9 * cfg.ranch_rubies
        assert sorted(game.returns()) in ([-1.0] * (n - 1) + [1.0],
                                          [-1.0] * (n - len(game.winners()))
                                          + [0.0] * len(game.winners()))
    else:
        assert ids.size and 0 <= game.current_player < n
        if game.phase in (Phase.STAKE, Phase.CONTEST_THROW):
            assert game.current_player in game.queue
            assert game.entry[game.owner] == Entry.STAKED
        else:
            assert game.current_player == game.owner
        assert (game.die != 0) == (game.phase == Phase.STEAL)
    if observe:
        observer = observer or OBSERVERS[n]
        obs = observer.encode(game, int(game.first_player))
        assert obs.dtype == np.float32 and obs.shape == (observer.size,)
        assert obs.min() >= 0.0 and obs.max() <= observer.high


def fuzz(games: int, seed: int, observe_every: int = 7, **variant) -> dict:
    """Play ``games`` random games (2-5 players), checking after every decision."""
    rng = np.random.default_rng(seed)
    stats = {"decisions": 0, "ranch": 0, "turn_cap": 0, "phases": set()}
    configs = {n: CirclesConfig(num_players=n, **variant) for n in CONFIGS} if variant else CONFIGS
    observers = {n: ObservationEncoder(cfg) for n, cfg in configs.items()} if variant else OBSERVERS
    for g in range(games):
        n = 2 + g % 4
        game = CirclesGame(configs[n], seed=seed * 100_000 + g)
        start = total_value(game)
        while not game.is_over:
            prev = {"bag": list(game.bag), "mine_next": game.mine_next, "turns": game.turns}
            stats["phases"].add(game.phase)
            ids = game.legal_action_ids()
            game.apply(ids[rng.integers(len(ids))])
            stats["decisions"] += 1
            check(game, start, prev, observe=stats["decisions"] % observe_every == 0,
                  observer=observers[n])
        stats[game.end_reason] += 1
    return stats


def test_fuzz_random_games_keep_every_invariant() -> None:
    stats = fuzz(1500, seed=1)
    assert stats["phases"] == set(Phase) - {Phase.GAME_OVER}  # every decision was reached
    assert stats["ranch"] > 0 and stats["turn_cap"] > 0
    assert stats["decisions"] > 100_000


SHORT_LAYOUT = ("RANCH", "GOLD", "SHOP", "MONEY_BAG", "MINE", "DIG", "CUP", "BANK", "THIEF",
                "SALOON", "DIG", "THIEF")


@pytest.mark.parametrize("variant", [
    {"bag": (3, 1, 0, 0), "start_shovels": 2, "mine": (9,)},  # the bag and mine run dry
    {"start_wagons": 0, "start_tickets": 4, "stock": (1, 20, 1), "prices": (1, 1, 1)},
    {"layout": SHORT_LAYOUT, "money_cap": 27, "max_turns_per_player": 10, "min_travel": 3},
    {"out_free": 0, "out_slope": 0.1, "spread_base": 3, "auto_forced": True, "fold_price": 1},
], ids=["dry-bag", "scarce-shop", "short-ring", "wild-flicks"])
def test_fuzz_config_variants_keep_every_invariant(variant: dict) -> None:
    stats = fuzz(120, seed=3, **variant)
    assert stats["decisions"] > 1000


@pytest.mark.slow
def test_fuzz_sweep_many_more_games() -> None:
    stats = fuzz(20_000, seed=2, observe_every=3)
    assert stats["phases"] == set(Phase) - {Phase.GAME_OVER}
