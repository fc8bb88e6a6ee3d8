"""Every decision of the game as one fixed enumeration, with id <-> structured <-> text converters.

The same for every variant, so one network plays them all. See docs/actions.md.
"""

from __future__ import annotations

from itertools import combinations, permutations
from typing import NamedTuple, get_type_hints

import numpy as np

from .grid import COLS, DIRECTION_NAMES, NUM_CELLS, NUM_PLACEMENTS

HAND_SLOTS = 5  # largest reserve (4) plus the plot in hand
SALOON_SLOTS = 5
MAX_OPPONENTS = 3
MAX_CIRCLES = 2
COWBOY_MOVES = 3

# Ordered (a, b) for Build, sorted so that the pairs within h held plots form a prefix
# (2, 6, 12, 20 pairs for h = 2..5): legality rows for a hand then fill one contiguous block.
PAIRS = tuple(sorted(permutations(range(HAND_SLOTS), 2), key=lambda p: (max(p), p)))
UNORDERED_PAIRS = tuple(combinations(range(HAND_SLOTS), 2))  # {a, b} for Discard


class Select(NamedTuple):
    """Put the ranchero on a free plot of a column (pending column, or the first at setup)."""

    position: int

    def text(self) -> str:
        """Readable form."""
        return f"select position {self.position}"


class Build(NamedTuple):
    """Join the plots of two slots into a domino and place it."""

    slot_a: int
    slot_b: int
    row: int
    col: int
    vertical: bool

    @property
    def cells(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """(row, col) of slot_a's plot and of slot_b's plot."""
        second = (self.row + 1, self.col) if self.vertical else (self.row, self.col + 1)
        return (self.row, self.col), second

    def text(self) -> str:
        """Readable form."""
        (r1, c1), (r2, c2) = self.cells
        return f"build plots {self.slot_a}+{self.slot_b} at ({r1},{c1})-({r2},{c2})"


class Pass(NamedTuple):
    """Stop building, decline an optional effect, or end the Cowboy's moves."""

    def text(self) -> str:
        """Readable form."""
        return "pass"


class Discard(NamedTuple):
    """Forced discard of the plots in two slots (slot_a < slot_b)."""

    slot_a: int
    slot_b: int

    def text(self) -> str:
        """Readable form."""
        return f"discard plots {self.slot_a}+{self.slot_b}"


class Recruit(NamedTuple):
    """Recruit the partner of a saloon slot onto a circle (0: domino's first plot, 1: second)."""

    saloon_slot: int
    face: int  # Face.SPECIALIST (0) or Face.COWBOY (1)
    circle: int

    def text(self) -> str:
        """Readable form."""
        face = "cowboy" if self.face else "specialist"
        return f"recruit saloon {self.saloon_slot} as {face} on circle {self.circle}"


class CowboyMove(NamedTuple):
    """Move one cow from (row, col) one step in a direction (0 up/riverward, 1 right, ...)."""

    row: int
    col: int
    direction: int

    def text(self) -> str:
        """Readable form."""
        return f"move cow ({self.row},{self.col}) {DIRECTION_NAMES[self.direction]}"


class Drought(NamedTuple):
    """Remove one cow from (row, col) for a skull."""

    row: int
    col: int

    def text(self) -> str:
        """Readable form."""
        return f"drought removes cow at ({self.row},{self.col})"


class Desperado(NamedTuple):
    """Swap my reserve slot with a slot of an opponent's reserve."""

    my_slot: int
    opponent: int
    their_slot: int

    def text(self) -> str:
        """Readable form."""
        return f"swap my plot {self.my_slot} with opponent +{self.opponent} plot {self.their_slot}"


class Thief(NamedTuple):
    """Steal an unprotected cow from (row, col) of an opponent's ranch."""

    opponent: int
    row: int
    col: int

    def text(self) -> str:
        """Readable form."""
        return f"steal cow from opponent +{self.opponent} at ({self.row},{self.col})"


class Bonus(NamedTuple):
    """Place a 2-player bonus tile (0: A, 1: B) with a face at (row, col)."""

    tile: int
    face: int
    row: int
    col: int

    def text(self) -> str:
        """Readable form."""
        return f"bonus tile {'AB'[self.tile]} face {self.face} at ({self.row},{self.col})"


Action = (Select | Build | Pass | Discard | Recruit | CowboyMove | Drought | Desperado | Thief
          | Bonus)


def _enumerate() -> list[Action]:
    out: list[Action] = [Select(p) for p in range(4)]
    for a, b in PAIRS:
        for k in range(NUM_PLACEMENTS):
            cell, o = divmod(k, 2)
            out.append(Build(a, b, cell // COLS, cell % COLS, bool(o)))
    out.append(Pass())
    out += [Discard(a, b) for a, b in UNORDERED_PAIRS]
    out += [Recruit(s, f, c) for s in range(SALOON_SLOTS) for f in range(2)
            for c in range(MAX_CIRCLES)]
    out += [CowboyMove(x // COLS, x % COLS, d) for x in range(NUM_CELLS) for d in range(4)]
    out += [Drought(x // COLS, x % COLS) for x in range(NUM_CELLS)]
    out += [Desperado(i, o, j) for i in range(HAND_SLOTS) for o in range(1, MAX_OPPONENTS + 1)
            for j in range(HAND_SLOTS)]
    out += [Thief(o, x // COLS, x % COLS) for o in range(1, MAX_OPPONENTS + 1)
            for x in range(NUM_CELLS)]
    out += [Bonus(t, f, x // COLS, x % COLS) for t in range(2) for f in range(2)
            for x in range(NUM_CELLS)]
    return out


ACTIONS: tuple[Action, ...] = tuple(_enumerate())
NUM_ACTIONS = len(ACTIONS)
# Keyed by (type, fields): NamedTuples of different types compare equal as plain tuples.
ACTION_IDS: dict[tuple[type, tuple[object, ...]], int] = {(type(a), tuple(a)): i
                                             for i, a in enumerate(ACTIONS)}
_TEXT_IDS: dict[str, int] = {a.text(): i for i, a in enumerate(ACTIONS)}


_KINDS: list[type] = [type(a) for a in ACTIONS]
# The first id of each kind of action.
SELECT0, BUILD0, PASS_ID, DISCARD0, RECRUIT0, COWBOY0, DROUGHT0, DESPERADO0, THIEF0, BONUS0 = (
    _KINDS.index(kind) for kind in (Select, Build, Pass, Discard, Recruit, CowboyMove, Drought,
                                    Desperado, Thief, Bonus))

SEGMENTS: dict[str, tuple[int, int]] = {
    "select": (SELECT0, BUILD0), "build": (BUILD0, PASS_ID), "pass": (PASS_ID, DISCARD0),
    "discard": (DISCARD0, RECRUIT0), "recruit": (RECRUIT0, COWBOY0),
    "cowboy": (COWBOY0, DROUGHT0), "drought": (DROUGHT0, DESPERADO0),
    "desperado": (DESPERADO0, THIEF0), "thief": (THIEF0, BONUS0), "bonus": (BONUS0, NUM_ACTIONS),
}
# Each structured action's field types: a field is matched by type as well as value, so that
# 5.0, True or np.float64(5) never stand in for the integer 5 (nor 1 for the bool True).
_FIELD_TYPES: dict[type, tuple[tuple[str, type], ...]] = {
    cls: tuple(get_type_hints(cls).items()) for cls in {type(a) for a in ACTIONS}}


def _field_error(action: tuple[object, ...]) -> str | None:
    """Why a structured action's fields have the wrong types, or None when they are right."""
    for name, kind in _FIELD_TYPES.get(type(action), ()):
        value = getattr(action, name)
        if kind is bool:
            if not isinstance(value, (bool, np.bool_)):
                return f"{type(action).__name__}.{name} must be a bool, got {value!r:.40}"
        elif not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
            return (f"{type(action).__name__}.{name} must be an integer (int or numpy integer; "
                    f"not bool, float or complex), got {value!r:.40}")
    return None


PAIR_INDEX = {p: i for i, p in enumerate(PAIRS)}
UNORDERED_INDEX = {p: i for i, p in enumerate(UNORDERED_PAIRS)}


class ActionCodec:
    """Converters between action ids, structured actions and readable text."""

    num_actions: int = NUM_ACTIONS
    segments: dict[str, tuple[int, int]] = SEGMENTS

    @staticmethod
    def decode(action_id: int) -> Action:
        """Structured action of an integer id; raises ValueError for anything else."""
        if (not isinstance(action_id, (int, np.integer)) or isinstance(action_id, bool)
                or not 0 <= action_id < NUM_ACTIONS):
            raise ValueError(f"action ids are integers from 0 to {NUM_ACTIONS - 1}, "
                             f"got {action_id!r:.40}")
        return ACTIONS[int(action_id)]

    @staticmethod
    def encode(action: Action) -> int:
        """Id of a structured action; raises ValueError for one outside the enumeration."""
        try:
            action_id = ACTION_IDS[(type(action), tuple(action))]
        except (KeyError, TypeError):
            raise ValueError(f"not an action of the enumeration: {action!r}") from None
        why = _field_error(action)
        if why is not None:
            raise ValueError(f"not an action of the enumeration: {why}")
        return action_id

    @staticmethod
    def to_text(action: Action | int) -> str:
        """Readable text of an action or id."""
        if not isinstance(action, tuple):
            action = ActionCodec.decode(action)
        return action.text()

    @staticmethod
    def from_text(text: str) -> int:
        """Id of an action's readable text (exactly as :meth:`to_text` writes it)."""
        try:
            return _TEXT_IDS[text.strip()]
        except KeyError:
            raise ValueError(f"unknown action text {text!r}; see docs/actions.md") from None

    @staticmethod
    def segment_of(action_id: int) -> str:
        """Name of the segment holding an id."""
        for name, (lo, hi) in SEGMENTS.items():
            if lo <= action_id < hi:
                return name
        raise ValueError(f"action id {action_id} outside 0..{NUM_ACTIONS - 1}")
