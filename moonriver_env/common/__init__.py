"""What every game of the package shares: the ``TableGame`` contract, the illegal-action error,
validators, record helpers, lazy observations, and the AEC/Gymnasium plumbing and wrappers
(``common.aec``, ``common.gym``, ``common.wrappers``: import those modules directly, as they
need gymnasium and pettingzoo while the engines must not)."""

from .contract import ActionIds, ActionMask, TableGame
from .errors import IllegalActionError
from .view import LazyObservation

__all__ = ["ActionIds", "ActionMask", "IllegalActionError", "LazyObservation", "TableGame"]
