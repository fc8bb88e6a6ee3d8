"""Every Circles decision as one fixed enumeration (per ring size and money cap), with id <->
structured <-> text converters. See docs/circles.md (Actions)."""

from __future__ import annotations

from functools import lru_cache
from numbers import Integral
from typing import Any, NamedTuple

from .config import ITEMS, MAX_PLAYERS

MAX_OPPONENTS = MAX_PLAYERS - 1


class Throw(NamedTuple):
    """Flick the marble aiming at ``distance`` spaces clockwise (turn flick or contest)."""

    distance: int

    def text(self) -> str:
        """Readable form."""
        return f"throw {self.distance}"


class Tickets(NamedTuple):
    """Spend ``count`` train tickets to move the marble that many spaces clockwise."""

    count: int  # type: ignore[assignment]  # the field shadows tuple.count, by design

    def text(self) -> str:
        """Readable form."""
        return f"tickets {self.count}"


class Buy(NamedTuple):
    """Buy one shop item: 'shovel', 'ticket' or 'wagon'."""

    item: str

    def text(self) -> str:
        """Readable form."""
        return f"buy {self.item}"


class Dig(NamedTuple):
    """Draw a token from the bag with a shovel."""

    def text(self) -> str:
        """Readable form."""
        return "dig"


class Deposit(NamedTuple):
    """Put ``amount`` of money on one's bank cell."""

    amount: int

    def text(self) -> str:
        """Readable form."""
        return f"deposit {self.amount}"


class Withdraw(NamedTuple):
    """Take ``amount`` back from the bank, plus as much again as interest."""

    amount: int

    def text(self) -> str:
        """Readable form."""
        return f"withdraw {self.amount}"


class Bet(NamedTuple):
    """Open a saloon bet."""

    def text(self) -> str:
        """Readable form."""
        return "bet"


class Stake(NamedTuple):
    """Join a saloon bet with one's highest coin."""

    def text(self) -> str:
        """Readable form."""
        return "stake"


class Fold(NamedTuple):
    """Refuse a saloon bet by paying the fold price."""

    def text(self) -> str:
        """Readable form."""
        return "fold"


class Steal(NamedTuple):
    """The thief takes from the opponent ``opponent`` seats clockwise."""

    opponent: int

    def text(self) -> str:
        """Readable form."""
        return f"steal from +{self.opponent}"


class Pass(NamedTuple):
    """End shopping; decline a dig, the bank or a bet."""

    def text(self) -> str:
        """Readable form."""
        return "pass"


Action = Throw | Tickets | Buy | Dig | Deposit | Withdraw | Bet | Stake | Fold | Steal | Pass


class ActionCodec:
    """The enumeration for one ring size and money cap; see docs/circles.md (Actions)."""

    def __init__(self, ring_size: int, money_cap: int) -> None:
        self.ring_size = ring_size
        self.money_cap = money_cap
        segments: list[tuple[str, list[Action]]] = [
            ("throw", [Throw(k) for k in range(2, ring_size + 1)]),
            ("tickets", [Tickets(j) for j in range(ring_size)]),
            ("buy", [Buy(item) for item in ITEMS]),
            ("dig", [Dig()]),
            ("deposit", [Deposit(a) for a in range(1, money_cap + 1)]),
            ("withdraw", [Withdraw(a) for a in range(1, money_cap + 1)]),
            ("bet", [Bet()]),
            ("stake", [Stake(), Fold()]),
            ("steal", [Steal(o) for o in range(1, MAX_OPPONENTS + 1)]),
            ("pass", [Pass()]),
        ]
        self.actions: tuple[Action, ...] = tuple(a for _, seg in segments for a in seg)
        self.num_actions = len(self.actions)
        self.segments: dict[str, tuple[int, int]] = {}
        start = 0
        for name, seg in segments:
            self.segments[name] = (start, start + len(seg))
            start += len(seg)
        # Keyed by (type, fields): NamedTuples of different types compare equal as tuples.
        self._ids = {(type(a), tuple(a)): i for i, a in enumerate(self.actions)}
        self._text_ids = {a.text(): i for i, a in enumerate(self.actions)}
        # Each field's allowed values, in enumeration order: type -> [(field, values), ...]
        self._fields: dict[type, list[tuple[str, tuple[Any, ...]]]] = {}
        for kind in dict.fromkeys(type(a) for a in self.actions):
            of_kind = [a for a in self.actions if type(a) is kind]
            self._fields[kind] = [(name, tuple(dict.fromkeys(a[i] for a in of_kind)))
                                  for i, name in enumerate(kind._fields)]
        # The first id of each segment, in the order of ``segments``.
        (self.THROW0, self.TICKETS0, self.BUY0, self.DIG, self.DEPOSIT0, self.WITHDRAW0, self.BET,
         self.STAKE, self.STEAL0, self.PASS) = (lo for lo, _ in self.segments.values())
        self.FOLD = self.STAKE + 1

    def throw(self, k: int) -> int:
        """Id of Throw(k)."""
        return self.THROW0 + k - 2

    def decode(self, action_id: int) -> Action:
        """Structured action of an id; raises ValueError outside 0..num_actions-1."""
        if isinstance(action_id, bool) or not 0 <= action_id < self.num_actions:
            raise ValueError(f"action ids run from 0 to {self.num_actions - 1}, "
                             f"got {action_id!r}")
        return self.actions[int(action_id)]

    def encode(self, action: Action) -> int:
        """Id of a structured action; ValueError outside the enumeration or for a mistyped field."""
        fields = self._fields.get(type(action))
        if fields is None:
            raise ValueError(f"not an action of the enumeration: {action!r:.60} (see "
                             f"moonriver_env.circles.actions)")
        for (name, allowed), value in zip(fields, action, strict=True):
            if isinstance(allowed[0], str):
                ok, wanted = type(value) is str, "one of " + ", ".join(map(repr, allowed))
            else:
                ok = isinstance(value, Integral) and not isinstance(value, bool)
                wanted = (f"an integer from {min(allowed)} to {max(allowed)} (int or numpy "
                          f"integer; not bool, float or complex)")
            if not ok or value not in allowed:
                raise ValueError(f"{type(action).__name__}.{name} must be {wanted}, "
                                 f"got {value!r:.40}")
        return self._ids[(type(action), tuple(action))]

    def to_text(self, action: Action | int) -> str:
        """Readable text of an action or id."""
        if not isinstance(action, tuple):
            action = self.decode(action)
        return action.text()

    def from_text(self, text: str) -> int:
        """Id of an action's readable text (exactly as :meth:`to_text` writes it)."""
        try:
            return self._text_ids[text.strip()]
        except KeyError:
            raise ValueError(f"unknown action text {text!r}; see docs/circles.md") from None

    def segment_of(self, action_id: int) -> str:
        """Name of the segment holding an id."""
        for name, (lo, hi) in self.segments.items():
            if lo <= action_id < hi:
                return name
        raise ValueError(f"action id {action_id} outside 0..{self.num_actions - 1}")


@lru_cache(maxsize=16)
def actions_for(ring_size: int, money_cap: int) -> ActionCodec:
    """The (shared, immutable) enumeration of a ring size and money cap."""
    return ActionCodec(ring_size, money_cap)
