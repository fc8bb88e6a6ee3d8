"""Records of core games: the engine's record format, replayed on the core.

Records are written by ``moonriver_env.engine.record.to_record`` (the same code for both
implementations); :func:`from_record` is the engine's reader with the core's Game.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moonriver_env.engine import record as _record

if TYPE_CHECKING:
    from .game import Game


def from_record(record: dict[str, Any], verify: bool = True) -> Game:
    """Replay a record's decisions from its config and seed on the core; check it reaches the
    same record (the engine's reader, checks and messages)."""
    from .game import Game

    return _record.from_record(record, verify, game_class=Game)
