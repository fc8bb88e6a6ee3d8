"""Game-neutral helpers of the JSON game records: seed, field checks, replay and its check."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from .contract import TableGame
from .errors import IllegalActionError

G = TypeVar("G", bound=TableGame)


class SeededGame(Protocol):
    """A game that knows its seed and whether it is over (what a record's seed depends on)."""

    @property
    def seed(self) -> int:
        """The seed the game was built from."""

    @property
    def is_over(self) -> bool:
        """True once the game has ended."""


def record_seed(game: SeededGame, include_seed: bool) -> int | None:
    """The seed a record may show: the game's once it is over or when asked for, else None."""
    # The seed rebuilds every hidden draw too, so a running game's record must not show it.
    if type(include_seed) is not bool:
        raise TypeError(f"include_seed must be True or False, got {include_seed!r:.40}")
    return game.seed if include_seed or game.is_over else None


def require_seed(record: dict[str, Any]) -> int:
    """A record's seed, else a ValueError saying why a record may lack it and how to keep it."""
    seed: int | None = record.get("seed")
    if seed is None:
        raise ValueError("record has no seed, so the game cannot be rebuilt: the record of a "
                         "game still running leaves the seed out (it would reveal the hidden "
                         "draws); write it with to_record(include_seed=True) to resume it later")
    return seed


def check_fields(record: Mapping[str, object], required: dict[str, type]) -> None:
    """Each required field present with its type (never a bool), else a ValueError."""
    for key, kind in required.items():
        if not isinstance(record.get(key), kind) or isinstance(record.get(key), bool):
            raise ValueError(f"record field {key!r} must be a {kind.__name__}, "
                             f"got {record.get(key)!r:.60}")


def replay_decisions(game: TableGame, events: Sequence[object],
                     kinds: tuple[str, ...]) -> None:
    """Apply a record's non-automatic decisions to ``game``; any bad event: ValueError naming it."""
    allowed = f"{', '.join(kinds[:-1])} or {kinds[-1]}"
    for i, event in enumerate(events):
        if not isinstance(event, dict) or event.get("type") not in kinds:
            raise ValueError(f"record event {i} must be a {allowed} object")
        if event["type"] != "decision" or event.get("auto"):
            continue
        player, action = event.get("player"), event.get("action")
        if type(player) is not int or type(action) is not int:
            raise ValueError(f"record event {i}: 'player' and 'action' must be integers")
        if game.current_player != player:
            raise ValueError(f"record event {i}: player {player} decides, but the replay "
                             f"expects player {game.current_player}")
        try:
            game.apply(action)
        except IllegalActionError as exc:
            raise ValueError(f"record event {i} does not replay: {exc}") from None


def check_replay(replayed: Mapping[str, object], record: Mapping[str, object]) -> None:
    """The replay's record equals ``record``, else a ValueError naming the fields that differ."""
    differ = sorted(k for k in set(replayed) | set(record) if replayed.get(k) != record.get(k))
    if differ:
        raise ValueError(f"record does not replay: its {differ} differ from the replay")


def rebuild(record: object, *, game: str, fmt: str, versions: Sequence[int],
            required: dict[str, type], build: Callable[[dict[str, Any], int], G],
            kinds: tuple[str, ...], rewrite: Callable[[G, int], dict[str, Any]],
            verify: bool) -> G:
    """A game rebuilt from a checked record (and its rewrite compared if ``verify``); ValueError."""
    if not isinstance(record, dict) or record.get("format") != fmt:
        raise ValueError(f"not a {game} record: expected format {fmt!r}")
    version = record.get("version")
    if type(version) is not int or version not in versions:
        raise ValueError(f"record version {version!r} is not supported "
                         f"(this engine reads versions {list(versions)})")
    require_seed(record)
    check_fields(record, required)
    try:
        rebuilt = build(record["config"], record["seed"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"record config or seed is invalid: {exc}") from None
    replay_decisions(rebuilt, record["events"], kinds)
    if verify:
        check_replay(rewrite(rebuilt, version), record)
    return rebuilt
