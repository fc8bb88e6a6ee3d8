"""What every game of the package shares. See docs/design.md.

Import ``common.aec``, ``common.gym`` and ``common.wrappers`` directly: they need gymnasium and
pettingzoo, which the engines must not."""

from .contract import ActionIds, ActionMask, TableGame
from .errors import IllegalActionError
from .view import LazyObservation

__all__ = ["ActionIds", "ActionMask", "IllegalActionError", "LazyObservation", "TableGame"]
