"""Moon River's contract: ``MoonRiverGame`` (``TableGame`` plus the whole table), offered by both
engines, and ``CoreExtras``, what the compiled core adds. See docs/design.md."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeGuard, runtime_checkable

import numpy as np
import numpy.typing as npt

from moonriver_env.common.contract import TableGame
from moonriver_env.moonriver.rules.actions import Action
from moonriver_env.moonriver.rules.components import Board
from moonriver_env.moonriver.rules.config import GameConfig
from moonriver_env.moonriver.rules.data import GameData
from moonriver_env.moonriver.rules.phase import Context, Phase
from moonriver_env.moonriver.rules.scoring import ScoreBreakdown


@runtime_checkable
class RanchView(Protocol):
    """One player's ranch as the table shows it (read-only); cell arrays are row-major."""

    @property
    def rows(self) -> int:
        """Rows of the ranch."""

    @property
    def board(self) -> Board:
        """The ranch board (its reserve, bridges and art)."""

    @property
    def capacity(self) -> int:
        """Plots the reserve holds."""

    @property
    def hand(self) -> list[int]:
        """Plot ids in the reserve (the hand)."""

    @property
    def bonus_taken(self) -> bool:
        """True once this player placed a 2-player bonus tile."""

    @property
    def kind(self) -> npt.NDArray[np.integer]:
        """Plot kind id per cell (-1: empty)."""

    @property
    def cows(self) -> npt.NDArray[np.integer]:
        """Cows per cell."""

    @property
    def partner(self) -> npt.NDArray[np.integer]:
        """Partner token id per cell (-1: none)."""

    @property
    def face(self) -> npt.NDArray[np.integer]:
        """Face of the partner per cell (-1: none)."""

    @property
    def plot(self) -> npt.NDArray[np.integer]:
        """Plot id per cell (bonus tile t: -2 - t; -1: empty)."""

    @property
    def terrain(self) -> npt.NDArray[np.integer]:
        """Terrain per cell (-1: empty)."""

    @property
    def label(self) -> npt.NDArray[np.integer]:
        """Territory label per cell (-1: none)."""

    @property
    def bridge(self) -> npt.NDArray[np.bool_]:
        """True on the board's bridge cells."""

    @property
    def empty(self) -> npt.NDArray[np.bool_]:
        """True on the free cells a plot may go on."""

    @property
    def in_hand(self) -> bool:
        """True when the reserve is over-full (a forced expansion)."""


@runtime_checkable
class MoonRiverGame(TableGame, Protocol):
    """A game of Moon River as both engines offer it; never edit the lists it hands out."""

    @property
    def config(self) -> GameConfig:
        """The game's configuration."""

    @property
    def data(self) -> GameData:
        """The game's data tables (plots, partners, boards)."""

    @property
    def seed(self) -> int:
        """The seed the set-up was drawn from."""

    @property
    def scenario(self) -> int | None:
        """The *Legends of the West* scenario (None: the base game)."""

    @property
    def board_names(self) -> tuple[str, ...]:
        """The ranch board of each seat."""

    @property
    def setup_order(self) -> list[int]:
        """Seats in the order of the set-up picks."""

    @property
    def chosen_draws(self) -> bool:
        """True once draws were chosen (set_next_draws): the record replays its draws."""

    @property
    def player(self) -> int:
        """The seat whose turn it is (kept once the game is over)."""

    @property
    def phase(self) -> Phase:
        """The current decision's phase."""

    @property
    def round(self) -> int:
        """The round (0 during set-up)."""

    @property
    def last_round(self) -> bool:
        """True in the last round (the box ran short)."""

    @property
    def emptying(self) -> bool:
        """True while the reserves are emptied at game end."""

    @property
    def forced(self) -> bool:
        """True during a forced expansion (reserve over-full)."""

    @property
    def builds_done(self) -> int:
        """Dominoes built this expansion."""

    @property
    def builds_allowed(self) -> int:
        """Dominoes this expansion may build."""

    @property
    def skulls(self) -> list[int]:
        """Cells of the skulls still to resolve (a drought)."""

    @property
    def circles(self) -> list[int]:
        """Cells of the unresolved circles of the current domino (-1: none)."""

    @property
    def effect_cell(self) -> int:
        """Cell of the partner whose effect is resolving (-1: none)."""

    @property
    def cowboy_moves_left(self) -> int:
        """Cow moves left to the cowboy."""

    @property
    def supply(self) -> int:
        """Cows left in the supply."""

    @property
    def saloon(self) -> list[int]:
        """Partner token id per saloon slot (-1: empty)."""

    @property
    def active(self) -> list[int] | None:
        """Plot ids of the column this round (None: none could be drawn)."""

    @property
    def active_owner(self) -> list[int]:
        """Seat that took each position of the active column (-1: free)."""

    @property
    def pending(self) -> list[int] | None:
        """Plot ids of the next round's column (None until drawn)."""

    @property
    def pending_owner(self) -> list[int]:
        """Seat that took each position of the pending column (-1: free)."""

    @property
    def order(self) -> list[int]:
        """Column positions in turn order this round."""

    @property
    def turn_index(self) -> int:
        """Index of the turn in ``order``."""

    @property
    def empty_order(self) -> list[int]:
        """Seats in the order they empty their reserves at game end."""

    @property
    def box(self) -> list[int]:
        """Plot ids left in the box (hidden order; drawn from the end)."""

    @property
    def pile(self) -> list[int]:
        """Partner token ids left in the pile (hidden order; drawn from the end)."""

    @property
    def removed(self) -> list[int]:
        """Plots removed from the column (3 players)."""

    @property
    def discarded(self) -> list[int]:
        """Plots discarded (forced and end-game discards)."""

    @property
    def recruited_this_round(self) -> bool:
        """True once a partner was recruited this round."""

    @property
    def bonus_tiles(self) -> list[bool]:
        """Which 2-player bonus tiles are still to take."""

    @property
    def ranches(self) -> Sequence[RanchView]:
        """Each seat's ranch."""

    @property
    def history(self) -> list[dict[str, Any]]:
        """Decisions and chance events so far, in order (a copy)."""

    def context(self) -> Context:
        """The pending context of the current decision."""

    def legal_actions(self) -> list[Action]:
        """Structured legal actions of the current player."""

    def apply(self, action: Action | int) -> None:
        """Play one decision (id or structured); illegal: IllegalActionError, state unchanged."""

    def running_scores(self) -> list[ScoreBreakdown]:
        """What each seat would score if the game ended now."""

    def running_score(self, player: int) -> ScoreBreakdown:
        """One seat's entry of ``running_scores``."""

    def scores(self) -> list[ScoreBreakdown]:
        """Final scores with breakdown; the game must be over."""

    def set_next_draws(self, source: str, items: Sequence[int]) -> None:
        """Make ``items`` the next draws from "box" or "pile" (explicit chance)."""

    def clone(self) -> MoonRiverGame:
        """An independent copy of the whole state."""

    def observe(self, player: int, out: npt.NDArray[np.float32] | None = None
                ) -> npt.NDArray[np.float32]:
        """The observation of ``player`` (docs/observation.md), written into ``out`` when given."""


@runtime_checkable
class CoreExtras(Protocol):
    """What the compiled core adds to a ``MoonRiverGame`` (check with :func:`has_core_extras`)."""

    def greedy_values(self, ids: npt.NDArray[np.int64] | None = None
                      ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
        """Greedy's (value, tie-break) of each of ``ids`` (every legal id when None)."""

    def greedy_ties(self) -> tuple[int, list[int]]:
        """How many legal ids there are, and Greedy's tied best among them."""

    def mcts_search(self, simulations: int = 100, seconds: float | None = None,
                    rollout_depth: int = 20, exploration: float = 1.0,
                    value_scale: float = 20.0, seed: int = 0, time_limit: float = 0.0
                    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """IS-MCTS from this state: the root's actions and their visit counts."""

    def random_rollout(self, depth: int, seed: int) -> int:
        """Play up to ``depth`` uniform random decisions in place; how many were played."""

    def determinized_clone(self, seed: int) -> MoonRiverGame:
        """A copy whose hidden box and pile are reshuffled by the core's own generator."""


def has_core_extras(game: object) -> TypeGuard[CoreExtras]:
    """Whether ``game``'s class has ``CoreExtras`` in its bases (the compiled core's extras)."""
    return CoreExtras in type(game).__mro__  # a protocol isinstance costs 10-20 us a call
