"""CirclesConfig: the frozen, validated, serialisable description of one Circles game.

Every rules constant is a field (defaults: the Far West face); see docs/circles.md."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import IntEnum
from typing import Any

from moonriver_env.common.validate import config_from_dict


class Space(IntEnum):
    """Kinds of ring space; spaces of one kind share one mine, bank, cup and shop."""

    RANCH = 0
    GOLD = 1
    SHOP = 2
    MONEY_BAG = 3
    MINE = 4
    DIG = 5
    CUP = 6
    BANK = 7
    THIEF = 8
    SALOON = 9


# Index 0..19 clockwise, the marble starts on the RANCH.
FAR_WEST_LAYOUT: tuple[str, ...] = (
    "RANCH", "GOLD", "SHOP", "MONEY_BAG", "MINE", "DIG", "CUP", "GOLD", "BANK", "THIEF",
    "SALOON", "GOLD", "DIG", "SHOP", "MINE", "MONEY_BAG", "CUP", "THIEF", "DIG", "BANK",
)
SILVER, GOLD_COIN, RUBY = 1, 3, 9  # coin values
MIN_PLAYERS, MAX_PLAYERS = 2, 5
DIE_FACES = 6
ITEMS = ("shovel", "ticket", "wagon")  # shop items; stock, prices and holdings use this order
SHOVEL, TICKET, WAGON = range(3)


def _positive_int(name: str, value: object, low: int = 0) -> None:
    if type(value) is not int or value < low:
        raise ValueError(f"CirclesConfig.{name} must be an integer >= {low}, got {value!r}")


def _int_tuple(name: str, value: object, length: int | None, low: int) -> tuple[int, ...]:
    if isinstance(value, list):
        value = tuple(value)
    if (not isinstance(value, tuple) or any(type(v) is not int or v < low for v in value)
            or (length is not None and len(value) != length)):
        size = f"{length} " if length is not None else ""
        raise ValueError(f"CirclesConfig.{name} must be a tuple of {size}integers >= {low}, "
                         f"got {value!r}")
    return value


@dataclass(frozen=True)
class CirclesConfig:
    """Which Circles game to play: players, ring layout, skill model, capital, limits."""

    num_players: int = 4
    layout: tuple[str, ...] = FAR_WEST_LAYOUT
    out_free: int = 8  # out_free/out_slope: probability of leaving the ring
    out_slope: float = 0.015
    spread_base: int = 1  # spread_base/spread_step: deviation width
    spread_step: int = 5
    min_travel: int = 2  # a shorter flick is invalid
    start_tickets: int = 2
    start_silver: int = 2
    start_wagons: int = 1
    start_shovels: int = 0
    money_cap: int = 18
    ranch_rubies: int = 2
    max_turns_per_player: int = 60  # the turn cap is this times the players
    mine: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 9)  # cell values from the entrance
    bag: tuple[int, ...] = (16, 8, 1, 2)  # silver, gold, ruby, stones
    stock: tuple[int, ...] = (10, 20, 5)  # items in the box, in ITEMS order; prices too
    prices: tuple[int, ...] = (1, 3, 3)
    cup_costs: tuple[int, ...] = (1, 2, 3)  # the donation slots in filling order
    fold_price: int = 3  # what refusing a saloon bet costs
    auto_forced: bool = False  # play every decision with a single legal action automatically

    def __post_init__(self) -> None:
        n = self.num_players
        if type(n) is not int or not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise ValueError(f"CirclesConfig.num_players must be {MIN_PLAYERS}..{MAX_PLAYERS}, "
                             f"got {n!r}")
        layout = tuple(self.layout) if isinstance(self.layout, list) else self.layout
        names = [s.name for s in Space]
        if not isinstance(layout, tuple) or any(s not in names for s in layout):
            raise ValueError(f"CirclesConfig.layout must be a tuple of space names from "
                             f"{names}, got {self.layout!r}")
        object.__setattr__(self, "layout", layout)
        for single in ("RANCH", "SALOON"):
            if layout.count(single) != 1:
                raise ValueError(f"CirclesConfig.layout must hold exactly one {single}, "
                                 f"got {layout.count(single)}")
        missing = [s for s in names if s not in layout]
        if missing:
            raise ValueError(f"CirclesConfig.layout must hold every kind of space; "
                             f"missing {missing}")
        _positive_int("min_travel", self.min_travel)
        if len(layout) <= self.min_travel:
            raise ValueError(f"CirclesConfig.layout must have more than min_travel "
                             f"({self.min_travel}) spaces, got {len(layout)}")
        for name in ("out_free", "spread_base", "start_tickets", "start_silver",
                     "start_wagons", "start_shovels"):
            _positive_int(name, getattr(self, name))
        for name in ("spread_step", "money_cap", "ranch_rubies", "max_turns_per_player",
                     "fold_price"):
            _positive_int(name, getattr(self, name), 1)
        slope = self.out_slope
        if isinstance(slope, bool) or not isinstance(slope, (int, float)) or not 0 <= slope <= 1:
            raise ValueError(f"CirclesConfig.out_slope must be a number in [0, 1], got {slope!r}")
        object.__setattr__(self, "out_slope", float(slope))
        if self.money_cap < RUBY * self.ranch_rubies:
            raise ValueError(f"CirclesConfig.money_cap ({self.money_cap}) must be at least "
                             f"{RUBY * self.ranch_rubies} (ranch_rubies rubies of {RUBY}), or the "
                             f"ranch could never be bought")
        if self.start_silver > self.money_cap:
            raise ValueError(f"CirclesConfig.start_silver must be at most money_cap "
                             f"({self.money_cap}), got {self.start_silver}")
        for name, length, low in (("mine", None, 1), ("bag", 4, 0), ("stock", 3, 0),
                                  ("prices", 3, 1), ("cup_costs", None, 1)):
            object.__setattr__(self, name, _int_tuple(name, getattr(self, name), length, low))
        if not self.mine or not self.cup_costs:
            raise ValueError("CirclesConfig.mine and cup_costs need at least one entry")
        if sum(self.bag) == 0:
            raise ValueError("CirclesConfig.bag must hold at least one token")
        for item, held, total in zip(ITEMS, self.start_items, self.stock, strict=True):
            if held * n > total:
                raise ValueError(f"CirclesConfig: {n} players x {held} starting {item} exceed "
                                 f"the stock of {total}")
        if not isinstance(self.auto_forced, bool):
            raise ValueError(f"CirclesConfig.auto_forced must be True or False, "
                             f"got {self.auto_forced!r}")

    # ------------------------------------------------------------ derived
    @property
    def ring_size(self) -> int:
        """Number of spaces on the ring (``RING_SIZE``)."""
        return len(self.layout)

    @property
    def spaces(self) -> tuple[Space, ...]:
        """The layout as :class:`Space` values, index 0 clockwise."""
        return tuple(Space[s] for s in self.layout)

    @property
    def start_items(self) -> tuple[int, int, int]:
        """Items dealt to each player, in :data:`ITEMS` order."""
        return (self.start_shovels, self.start_tickets, self.start_wagons)

    @property
    def max_turns(self) -> int:
        """Turn cap of the whole game (``MAX_TURNS``)."""
        return self.max_turns_per_player * self.num_players

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CirclesConfig:
        """Inverse of :meth:`to_dict`; unknown keys are an error."""
        return config_from_dict(cls, d)
