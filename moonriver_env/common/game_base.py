"""``RecordedGame``: what every Python engine does alike (chance history, copies, records, text)."""

from __future__ import annotations

import copy
from importlib import import_module
from typing import Any, ClassVar, TypeVar

G = TypeVar("G", bound="RecordedGame")


class RecordedGame:
    """Base of a Python engine; a subclass names its record and text modules (dotted paths)."""

    RECORD_MODULE: ClassVar[str]  # offers to_record(game, include_seed), from_record(...)
    TEXT_MODULE: ClassVar[str]  # offers table_text(game)
    _history: list[dict[str, Any]]
    rng: Any

    def clone(self: G) -> G:
        """An independent copy (each engine writes its own)."""
        raise NotImplementedError

    def _chance(self, event: str, **payload: object) -> None:
        self._history.append({"type": "chance", "event": event, **payload})

    def __deepcopy__(self: G, memo: dict[int, object]) -> G:
        g = self.clone()
        g.rng = copy.deepcopy(self.rng, memo)
        return g

    def to_record(self, include_seed: bool = False) -> dict[str, Any]:
        """JSON-serialisable record of the game so far; seed null while it runs unless asked for."""
        record: dict[str, Any] = import_module(self.RECORD_MODULE).to_record(self, include_seed)
        return record

    @classmethod
    def from_record(cls: type[G], record: dict[str, Any], verify: bool = True) -> G:
        """Replay a record to the same state (checked if ``verify``); no seed: ValueError."""
        game: G = import_module(cls.RECORD_MODULE).from_record(record, verify=verify)
        return game

    def table_text(self) -> str:
        """The whole table as readable text."""
        text: str = import_module(self.TEXT_MODULE).table_text(self)
        return text
