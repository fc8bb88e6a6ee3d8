"""Circles game records: a JSON-serialisable account of a game that replays to the same state.

See docs/circles.md (Decisions: Records)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moonriver_env.common.records import rebuild, record_seed

from .config import ITEMS, CirclesConfig
from .game import coins

if TYPE_CHECKING:
    from .game import CirclesGame

RECORD_FORMAT = "circles-record"
RECORD_VERSION = 1


def public_state(game: CirclesGame) -> dict[str, Any]:
    """Everything on the table now (the whole state is public)."""
    players = []
    for p in range(game.num_players):
        rubies, gold, silver = coins(game.money[p])
        players.append({"player": p, "money": game.money[p], "rubies": rubies, "gold": gold,
                        "silver": silver, "deposit": game.deposit[p],
                        **{f"{item}s": game.items[p][i] for i, item in enumerate(ITEMS)}})
    return {
        "phase": game.phase.name.lower(), "current_player": game.current_player,
        "turn_owner": game.owner, "turns": game.turns, "marble": game.marble,
        "players": players, "shop": dict(zip(ITEMS, game.shop, strict=True)),
        "mine": game.mine_cells, "cup_filled": game.cup_filled, "bag": list(game.bag),
        "reserve_out": game.reserve_out, "die": game.die,
    }


def to_record(game: CirclesGame, include_seed: bool = False) -> dict[str, Any]:
    """The game's record: config, seed (once over, or on request), events, final state, winners."""
    events = [{**e, "text": game.codec.to_text(e["action"])} if e["type"] == "decision" else e
              for e in game.history]
    over = game.is_over
    return {
        "format": RECORD_FORMAT, "version": RECORD_VERSION,
        "config": game.config.to_dict(), "seed": record_seed(game, include_seed),
        "events": events,
        "final": public_state(game), "over": over,
        "wealth": [game.wealth(p) for p in range(game.num_players)],
        "winners": game.winners() if over else None,
        "end_reason": game.end_reason or None,
    }


_REQUIRED = {"config": dict, "seed": int, "events": list, "final": dict}


def from_record(record: dict[str, Any], verify: bool = True) -> CirclesGame:
    """Replay a record from its config and seed, checked if ``verify``; any fault: ValueError."""
    from .game import CirclesGame

    return rebuild(record, game="Circles", fmt=RECORD_FORMAT, versions=(RECORD_VERSION,),
                   required=_REQUIRED,
                   build=lambda config, seed: CirclesGame(CirclesConfig.from_dict(config),
                                                          seed=seed),
                   kinds=("decision", "chance", "effect"),
                   rewrite=lambda game, version: to_record(game, include_seed=True),
                   verify=verify)
