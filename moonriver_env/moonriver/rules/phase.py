"""The decision a game waits on: its ``Phase`` and the pending ``Context`` of it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Phase(IntEnum):
    """What kind of decision the current player faces."""

    SETUP = 0  # place a ranchero on the first column
    BUILD = 1  # build a domino (or pass, when allowed)
    DISCARD = 2  # forced expansion with no legal placement: discard two plots
    DROUGHT = 3  # a skull: choose which cow of the territory leaves
    RECRUIT = 4  # a circle: choose a partner, its face and which circle first
    COWBOY = 5  # up to 3 cow moves, or pass
    DESPERADO = 6  # swap reserve plots with an opponent, or pass
    THIEF = 7  # steal an unprotected cow, or pass
    BONUS = 8  # 2 players: place a bonus tile
    SELECT = 9  # put the ranchero on the pending column
    GAME_OVER = 10


@dataclass(frozen=True)
class Context:
    """The pending context of the current decision (everything a Markov observation needs)."""

    phase: Phase
    player: int
    round: int
    last_round: bool
    emptying: bool
    forced: bool
    builds_done: int
    builds_allowed: int
    circles: tuple[int, int]  # cells of unresolved circles of the current domino (-1: none)
    skull_cell: int  # cell of the skull being resolved (-1: none)
    effect_cell: int  # cell of the partner whose effect is resolving (-1: none)
    cowboy_moves_left: int
