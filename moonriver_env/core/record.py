"""Records of core games: the engine's record format, replayed on the core.

Records are written by ``moonriver_env.engine.record.to_record`` (the same code for both
implementations); :func:`from_record` is the engine's reader with the core's Game.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moonriver_env.engine import record as _record
from moonriver_env.engine.config import GameConfig

if TYPE_CHECKING:
    from .game import Game


def from_record(record: dict[str, Any], verify: bool = True) -> Game:
    """Replay a record's decisions from its config and seed on the core; check it reaches the
    same record (the engine's checks and messages)."""
    from .game import Game

    if not isinstance(record, dict) or record.get("format") != _record.RECORD_FORMAT:
        raise ValueError(f"not a Moon River record: expected format {_record.RECORD_FORMAT!r}")
    version = record.get("version")
    if type(version) is not int or version not in _record.READABLE_VERSIONS:
        raise ValueError(f"record version {version!r} is not supported "
                         f"(this engine reads versions {list(_record.READABLE_VERSIONS)})")
    _record.require_seed(record)
    _record.check_fields(record, _record._REQUIRED)
    try:
        game = Game(GameConfig.from_dict(record["config"]), seed=record["seed"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"record config or seed is invalid: {exc}") from None
    _record.replay_decisions(game, record["events"], ("decision", "chance"))
    if verify:
        again = _record.to_record(game, include_seed=True)  # the record has its seed
        if version == 1:
            again.update(version=1, events=_record._version_1_order(again["events"]))
        _record.check_replay(again, record)
    return game
