"""The ``TableGame`` contract every engine offers and agents, search and tests code against.

See docs/design.md (The TableGame contract)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

ActionIds = npt.NDArray[np.intp]
ActionMask = npt.NDArray[np.int8]


@runtime_checkable
class TableGame(Protocol):
    """A turn-based table game's state, as every engine of this package offers it."""

    @property
    def num_players(self) -> int:
        """Number of players (seats)."""

    @property
    def current_player(self) -> int:
        """The seat to decide now; -1 once the game is over."""

    @property
    def is_over(self) -> bool:
        """True once the game has ended."""

    def legal_action_ids(self) -> ActionIds:
        """Ids of the legal actions, ascending, as a numpy int array (empty once over)."""

    def legal_mask(self) -> ActionMask:
        """Read-only int8 mask over the whole action enumeration (zeros once over)."""

    def apply(self, action: int) -> None:
        """Play one decision by its id; illegal: IllegalActionError, state unchanged."""

    def clone(self) -> TableGame:
        """An independent copy: playing on in one never changes the other."""

    def determinize(self, rng: np.random.Generator) -> None:
        """Redraw, in place and from ``rng``, what the players cannot see."""

    def scores(self) -> Sequence[object]:
        """Final scores per player (the game's own kind of score); the game must be over."""

    def returns(self) -> list[float]:
        """Final reward per seat (+1 a win, -1 a loss); zeros before the end."""

    def winners(self) -> list[int]:
        """Winning seats (more than one on a shared win); the leaders so far while it runs."""

    def to_record(self, include_seed: bool = False) -> dict[str, Any]:
        """JSON-serialisable record that replays to this state (seed hidden while it runs)."""

    def table_text(self) -> str:
        """The whole table as readable text."""

    @classmethod
    def from_record(cls, record: dict[str, Any], verify: bool = True) -> TableGame:
        """The game a record replays to; a malformed or tampered record: ValueError."""
