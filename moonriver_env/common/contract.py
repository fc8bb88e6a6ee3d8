"""The ``TableGame`` contract: what every engine offers (Moon River's Python engine and its
compiled core, Circles: Far West), so that agents, search, tournaments and tests code against
one interface, in the manner of OpenSpiel's ``State`` and pgx's ``init/step/observe``.
``MoonRiverGame`` extends it with Moon River's whole table (``RanchView`` per seat): what
renderers, records, text, agents, the play server and the adapters read.

Players are seats ``0..num_players-1``; ``current_player`` is -1 once the game is over. Action
ids run over one flat enumeration per game; ``legal_mask()`` is an int8 array over all of it
(all zeros once over) and ``legal_action_ids()`` its nonzero ids, ascending. An illegal
``apply`` raises :class:`~moonriver_env.common.errors.IllegalActionError` and changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:  # Moon River's own types, for MoonRiverGame (no import cycle at run time)
    from moonriver_env.engine.actions import Action
    from moonriver_env.engine.components import Board
    from moonriver_env.engine.config import GameConfig
    from moonriver_env.engine.data import GameData
    from moonriver_env.engine.game import Context, Phase
    from moonriver_env.engine.scoring import ScoreBreakdown

ActionIds = npt.NDArray[np.intp]
ActionMask = npt.NDArray[np.int8]


@runtime_checkable
class TableGame(Protocol):
    """A turn-based table game's state, as every engine of this package offers it."""

    @property
    def num_players(self) -> int:
        """Number of players (seats)."""
        ...

    @property
    def current_player(self) -> int:
        """The seat to decide now; -1 once the game is over."""
        ...

    @property
    def is_over(self) -> bool:
        """True once the game has ended."""
        ...

    def legal_action_ids(self) -> ActionIds:
        """Ids of the legal actions, ascending, as a numpy int array (empty once over)."""
        ...

    def legal_mask(self) -> ActionMask:
        """Read-only int8 mask over the whole action enumeration (zeros once over)."""
        ...

    def apply(self, action: Any) -> None:
        """Play one decision (an id or a structured action); illegal: IllegalActionError,
        state unchanged."""
        ...

    def clone(self) -> TableGame:
        """An independent copy: playing on in one never changes the other."""
        ...

    def determinize(self, rng: np.random.Generator) -> None:
        """Redraw, in place and from ``rng``, what the players cannot see."""
        ...

    def scores(self) -> Sequence[Any]:
        """Final scores per player (the game's own kind of score); the game must be over."""
        ...

    def returns(self) -> list[float]:
        """Final reward per seat (+1 a win, -1 a loss; the game's rule for a shared win); zeros
        before the end."""
        ...

    def winners(self) -> list[int]:
        """Winning seats (more than one on a shared win); the leaders so far while it runs."""
        ...

    def to_record(self, include_seed: bool = False) -> dict[str, Any]:
        """JSON-serialisable record that replays to this state (seed hidden while it runs)."""
        ...

    def table_text(self) -> str:
        """The whole table as readable text."""
        ...

    @classmethod
    def from_record(cls, record: dict[str, Any], verify: bool = True) -> TableGame:
        """The game a record replays to; a malformed or tampered record: ValueError."""
        ...


@runtime_checkable
class RanchView(Protocol):
    """One player's ranch as the table shows it (read-only): the engine's ``Ranch`` and the
    core's ranch view both offer it. Cell arrays run over the ranch's cells, row-major."""

    @property
    def rows(self) -> int:
        """Rows of the ranch."""
        ...

    @property
    def board(self) -> Board:
        """The ranch board (its reserve, bridges and art)."""
        ...

    @property
    def capacity(self) -> int:
        """Plots the reserve holds."""
        ...

    @property
    def hand(self) -> list[int]:
        """Plot ids in the reserve (the hand)."""
        ...

    @property
    def bonus_taken(self) -> bool:
        """True once this player placed a 2-player bonus tile."""
        ...

    @property
    def kind(self) -> npt.NDArray[Any]:
        """Plot kind id per cell (-1: empty)."""
        ...

    @property
    def cows(self) -> npt.NDArray[Any]:
        """Cows per cell."""
        ...

    @property
    def partner(self) -> npt.NDArray[Any]:
        """Partner token id per cell (-1: none)."""
        ...

    @property
    def face(self) -> npt.NDArray[Any]:
        """Face of the partner per cell (-1: none)."""
        ...

    @property
    def plot(self) -> npt.NDArray[Any]:
        """Plot id per cell (bonus tile t: -2 - t; -1: empty)."""
        ...

    @property
    def terrain(self) -> npt.NDArray[Any]:
        """Terrain per cell (-1: empty)."""
        ...

    @property
    def label(self) -> npt.NDArray[Any]:
        """Territory label per cell (-1: none)."""
        ...

    @property
    def bridge(self) -> npt.NDArray[np.bool_]:
        """True on the board's bridge cells."""
        ...

    @property
    def empty(self) -> npt.NDArray[np.bool_]:
        """True on the free cells a plot may go on."""
        ...

    @property
    def in_hand(self) -> bool:
        """True when the reserve is over-full (a forced expansion)."""
        ...


@runtime_checkable
class MoonRiverGame(TableGame, Protocol):
    """A game of Moon River, as both engines offer it (``moonriver_env.engine.Game``, the
    reference, and ``moonriver_env.core.Game``, the compiled core): the ``TableGame`` contract
    and the whole table that renderers, records, text, agents, the play server and the adapters
    read. Lists handed out are the game's own (engine) or copies (core): never edit them."""

    @property
    def config(self) -> GameConfig:
        """The game's configuration."""
        ...

    @property
    def data(self) -> GameData:
        """The game's data tables (plots, partners, boards)."""
        ...

    @property
    def seed(self) -> int:
        """The seed the set-up was drawn from."""
        ...

    @property
    def scenario(self) -> int | None:
        """The *Legends of the West* scenario (None: the base game)."""
        ...

    @property
    def board_names(self) -> tuple[str, ...]:
        """The ranch board of each seat."""
        ...

    @property
    def setup_order(self) -> list[int]:
        """Seats in the order of the set-up picks."""
        ...

    @property
    def chosen_draws(self) -> bool:
        """True once draws were chosen (set_next_draws): the record replays its draws."""
        ...

    @property
    def player(self) -> int:
        """The seat whose turn it is (kept once the game is over)."""
        ...

    @property
    def phase(self) -> Phase:
        """The current decision's phase."""
        ...

    @property
    def round(self) -> int:
        """The round (0 during set-up)."""
        ...

    @property
    def last_round(self) -> bool:
        """True in the last round (the box ran short)."""
        ...

    @property
    def emptying(self) -> bool:
        """True while the reserves are emptied at game end."""
        ...

    @property
    def forced(self) -> bool:
        """True during a forced expansion (reserve over-full)."""
        ...

    @property
    def builds_done(self) -> int:
        """Dominoes built this expansion."""
        ...

    @property
    def builds_allowed(self) -> int:
        """Dominoes this expansion may build."""
        ...

    @property
    def skulls(self) -> list[int]:
        """Cells of the skulls still to resolve (a drought)."""
        ...

    @property
    def circles(self) -> list[int]:
        """Cells of the unresolved circles of the current domino (-1: none)."""
        ...

    @property
    def effect_cell(self) -> int:
        """Cell of the partner whose effect is resolving (-1: none)."""
        ...

    @property
    def cowboy_moves_left(self) -> int:
        """Cow moves left to the cowboy."""
        ...

    @property
    def supply(self) -> int:
        """Cows left in the supply."""
        ...

    @property
    def saloon(self) -> list[int]:
        """Partner token id per saloon slot (-1: empty)."""
        ...

    @property
    def active(self) -> list[int] | None:
        """Plot ids of the column this round (None: none could be drawn)."""
        ...

    @property
    def active_owner(self) -> list[int]:
        """Seat that took each position of the active column (-1: free)."""
        ...

    @property
    def pending(self) -> list[int] | None:
        """Plot ids of the next round's column (None until drawn)."""
        ...

    @property
    def pending_owner(self) -> list[int]:
        """Seat that took each position of the pending column (-1: free)."""
        ...

    @property
    def order(self) -> list[int]:
        """Column positions in turn order this round."""
        ...

    @property
    def turn_index(self) -> int:
        """Index of the turn in ``order``."""
        ...

    @property
    def empty_order(self) -> list[int]:
        """Seats in the order they empty their reserves at game end."""
        ...

    @property
    def box(self) -> list[int]:
        """Plot ids left in the box (hidden order; drawn from the end)."""
        ...

    @property
    def pile(self) -> list[int]:
        """Partner token ids left in the pile (hidden order; drawn from the end)."""
        ...

    @property
    def removed(self) -> list[int]:
        """Plots removed from the column (3 players)."""
        ...

    @property
    def discarded(self) -> list[int]:
        """Plots discarded (forced and end-game discards)."""
        ...

    @property
    def recruited_this_round(self) -> bool:
        """True once a partner was recruited this round."""
        ...

    @property
    def bonus_tiles(self) -> list[bool]:
        """Which 2-player bonus tiles are still to take."""
        ...

    @property
    def ranches(self) -> Sequence[RanchView]:
        """Each seat's ranch."""
        ...

    @property
    def history(self) -> list[dict[str, Any]]:
        """Decisions and chance events so far, in order (a copy)."""
        ...

    def context(self) -> Context:
        """The pending context of the current decision."""
        ...

    def legal_actions(self) -> list[Action]:
        """Structured legal actions of the current player."""
        ...

    def running_scores(self) -> list[ScoreBreakdown]:
        """What each seat would score if the game ended now."""
        ...

    def running_score(self, player: int) -> ScoreBreakdown:
        """One seat's entry of ``running_scores``."""
        ...

    def scores(self) -> list[ScoreBreakdown]:
        """Final scores with breakdown; the game must be over."""
        ...

    def set_next_draws(self, source: str, items: Sequence[int]) -> None:
        """Make ``items`` the next draws from "box" or "pile" (explicit chance)."""
        ...

    def clone(self) -> MoonRiverGame:
        """An independent copy of the whole state."""
        ...
