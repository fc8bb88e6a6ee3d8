"""The seats of batched games: who decides each seat's moves (``BuiltinSeat``, ``NetworkSeat``).

Network seats are built by ``moonriver_env.agents.registry.batch_seat``. See docs/vector.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from moonriver_env.moonriver.core import _core

LEARNER = "learner"
BUILTIN_KINDS = {LEARNER: _core.SEAT_LEARNER, "random": _core.SEAT_RANDOM,
                 "greedy": _core.SEAT_GREEDY}
MCTS_PREFIX = "mcts:"
OPPONENT_NAMES = (f"'random', 'greedy', 'mcts:N' (N simulations, "
                  f"1..{_core.MAX_MCTS_SIMULATIONS})")
SEAT_NAMES = f"'{LEARNER}', {OPPONENT_NAMES}"
# What a name that is no built-in seat's is told (the agents package owns the agent specs).
NETWORK_SEATS_HINT = ("other agents play as network seats, built from an agent spec by "
                      "moonriver_env.agents.registry.batch_seat(spec) (gymnasium.make_vec("
                      "'MoonRiver-v0', opponents=...) builds them from names)")


def builtin_kind(name: object) -> int | None:
    """The core's seat kind of a built-in seat name (``"mcts:N"``: ``SEAT_MCTS + N``), or None."""
    if not isinstance(name, str):
        return None
    if name in BUILTIN_KINDS:
        return BUILTIN_KINDS[name]
    sims = name.removeprefix(MCTS_PREFIX)
    if sims != name and sims.isascii() and sims.isdigit() and sims[0] != "0" \
            and int(sims) <= _core.MAX_MCTS_SIMULATIONS:
        return _core.SEAT_MCTS + int(sims)
    return None


@dataclass(frozen=True)
class BuiltinSeat:
    """A seat the core plays itself: ``"learner"``, ``"random"``, ``"greedy"`` or ``"mcts:N"``."""

    name: str

    def __post_init__(self) -> None:
        if builtin_kind(self.name) is None:
            raise ValueError(f"a built-in seat is one of {SEAT_NAMES}, got {self.name!r:.60}")

    @property
    def kind(self) -> int:
        """The core's seat kind."""
        kind = builtin_kind(self.name)
        assert kind is not None, self.name
        return kind


class SeatNetwork(Protocol):
    """What a network seat's network gives the batch (``agents.az.NumpyAZNet`` is one)."""

    def evaluate(self, obs: np.ndarray, mask: np.ndarray, num_players: Any,
                 prior: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Masked logits (B, 2710) and values of a forward over B rows."""

    @property
    def core(self) -> Any:
        """The same network in C++: ``BatchedSearch.run`` values a search's leaves with it."""


@dataclass(frozen=True, eq=False)
class NetworkSeat:
    """A seat a loaded network decides in the batch: its policy's best legal action, or a search."""

    network: SeatNetwork
    simulations: int = 0  # 0: the policy; else the batched Gumbel search's simulations a decision
    settings: Mapping[str, Any] = field(default_factory=dict)  # BatchedSearch's constants
    greedy_prior: float | None = None  # shape weight of Greedy's prior the network adds, or None
    name: str = "network"  # how the batch lists the seat (the agent spec it was built from)
    # settings added to ``settings`` at a table of that many players (the search agents fill it)
    table_settings: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not callable(getattr(self.network, "evaluate", None)):
            raise ValueError(f"a network seat's network must have evaluate(obs, mask, "
                             f"num_players, prior), got {type(self.network).__name__}")
        if isinstance(self.simulations, bool) or not isinstance(self.simulations, int) \
                or self.simulations < 0:
            raise ValueError(f"a network seat's simulations must be an int >= 0 (0: the policy "
                             f"alone), got {self.simulations!r:.40}")
        if self.greedy_prior is not None and not (
                isinstance(self.greedy_prior, (int, float)) and math.isfinite(self.greedy_prior)):
            raise ValueError(f"greedy_prior must be None or a finite number, got "
                             f"{self.greedy_prior!r:.40}")
        if not all(isinstance(n, int) and isinstance(s, Mapping)
                   for n, s in self.table_settings.items()):
            raise ValueError("table_settings maps a player count (int) to settings (a mapping)")

    def key(self) -> tuple[Any, ...]:
        """What makes two seats one player: network, simulations, settings (per table), prior."""
        tables = tuple(sorted((n, tuple(sorted(s.items())))
                              for n, s in self.table_settings.items()))
        return (id(self.network), self.simulations, tuple(sorted(self.settings.items())),
                self.greedy_prior, tables)

    def search_settings(self, num_players: int) -> dict[str, Any]:
        """``BatchedSearch``'s settings at a table of ``num_players``."""
        return {**self.settings, **self.table_settings.get(num_players, {})}


Seat = BuiltinSeat | NetworkSeat
SeatLike = str | BuiltinSeat | NetworkSeat  # a built-in seat's name, or a seat


def seat_kind(seat: object) -> int | None:
    """The core's seat kind of a seat or a built-in seat's name, or None for anything else."""
    if isinstance(seat, NetworkSeat):
        return _core.SEAT_NETWORK
    if isinstance(seat, BuiltinSeat):
        return seat.kind
    return builtin_kind(seat)


def as_seat(seat: object) -> Seat | None:
    """A seat from a seat or a built-in seat's name; None for anything else."""
    if isinstance(seat, (BuiltinSeat, NetworkSeat)):
        return seat
    return BuiltinSeat(seat) if isinstance(seat, str) and builtin_kind(seat) is not None \
        else None


def check_seats(seats: Sequence[SeatLike], num_players: int) -> tuple[Seat, ...]:
    """One seat per player, at least one of them the learner, else a ValueError."""
    given = tuple(seats)
    checked = tuple(map(as_seat, given))
    if len(given) != num_players or None in checked:
        raise ValueError(f"seats must name one of {SEAT_NAMES}, or be seats (BuiltinSeat, "
                         f"NetworkSeat), for each of the {num_players} players, got "
                         f"{given!r:.80}; {NETWORK_SEATS_HINT}")
    out = tuple(s for s in checked if s is not None)
    if not any(s.name == LEARNER for s in out if isinstance(s, BuiltinSeat)):
        raise ValueError(f"at least one seat must be 'learner', got {given!r:.80}")
    return out
