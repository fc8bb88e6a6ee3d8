"""One player's ranch: the grid, cows and partners on it, its reserve, and placement legality."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

import moonriver_env.moonriver.rules.grid as grid

from .components import Board, Terrain
from .grid import COLS, FIRST_NB, NEIGHBOR_BITS, NUM_CELLS, SECOND_NB, TOUCH, usable_cells

NUM_TERRAINS = len(Terrain)


@lru_cache(maxsize=64)
def _static_bits(rows: int, bridges: tuple[tuple[int, int], ...]
                 ) -> tuple[int, int, int, int, np.ndarray]:
    """An empty ranch's free and bridge placements, usable and bridge cells (bits), bridge mask."""
    usable = usable_cells(rows)
    bridge = np.zeros(NUM_CELLS, dtype=bool)
    for r, c in bridges:
        bridge[r * COLS + c] = True
    bridge.flags.writeable = False  # shared by the ranches of these rows and bridges
    return (grid.placements_within(usable), grid.placements_touching(bridge),
            sum(1 << c for c in np.flatnonzero(usable).tolist()),
            sum(1 << c for c in np.flatnonzero(bridge).tolist()), bridge)


class Ranch:
    """A ranch grid plus the owner's reserve (``hand``: reserve plots, then any plot in hand)."""

    __slots__ = ("adj_cells", "board", "bonus_taken", "bridge", "bridge_cells", "bridged",
                 "capacity", "cells", "cow_cells", "cows", "derived", "empty", "empty_cells",
                 "face", "first_adj", "free", "hand", "kind", "kind_counts", "label", "partner",
                 "partner_cells", "plot", "rows", "second_adj", "sizes", "terrain",
                 "terrain_cells")

    _VIEWS = ("kind", "cows", "partner", "face")
    _KIND, _COWS, _PARTNER, _FACE = range(4)  # rows of ``cells``

    def __init__(self, rows: int, board: Board) -> None:
        self.rows = rows
        self.board = board
        self.capacity = board.reserve
        # Everything that scores, in one array so that one tobytes() keys the caches:
        # rows kind (plot kind id, -1 empty), cows, partner (token id, -1 none), face.
        self.cells = np.full((4, NUM_CELLS), -1, dtype=np.int16)
        self.cells[self._COWS] = 0
        self._views()
        # What readers compute from the contents (scores, planes); every change of the
        # contents starts a new dict, so nothing outlives them (a clone shares it till then).
        self.derived: dict[tuple[object, ...], object] = {}
        self.plot = np.full(NUM_CELLS, -1, dtype=np.int16)  # plot id (bonus tile: -2 - tile)
        self.terrain = np.full(NUM_CELLS, -1, dtype=np.int8)
        # Territory of each cell, named by its smallest cell index (-1 empty); plots never
        # move, so territories only merge and are kept up to date on placement.
        self.label = np.full(NUM_CELLS, -1, dtype=np.int16)
        self.sizes: dict[int, int] = {}  # territory label -> number of plots
        self.kind_counts: dict[int, int] = {}  # plot kind id -> plots of that kind placed
        self.cow_cells = 0  # bit c: cell c holds at least one cow
        self.partner_cells: list[int] = []  # cells holding a partner, in recruitment order
        self.empty = usable_cells(rows)  # free cells a plot may go on
        # Legality as int bitsets: a domino of terrains a, b fits at placement k when bit k
        # of free & (bridged | first_adj[a] | second_adj[b]) is set (Game._domino_rows).
        (self.free, self.bridged, self.empty_cells, self.bridge_cells,
         self.bridge) = _static_bits(rows, board.bridges)
        self.first_adj = [0] * NUM_TERRAINS
        self.second_adj = [0] * NUM_TERRAINS
        self.adj_cells = [0] * NUM_TERRAINS
        self.terrain_cells = [0] * NUM_TERRAINS  # bit c: cell c holds a plot of that terrain
        self.hand: list[int] = []
        self.bonus_taken = False

    def clone(self) -> Ranch:
        """An independent copy (arrays and lists copied, no deep copy)."""
        r = Ranch.__new__(Ranch)
        r.rows, r.board, r.capacity = self.rows, self.board, self.capacity
        r.bonus_taken, r.bridge, r.free, r.bridged = (self.bonus_taken, self.bridge, self.free,
                                                      self.bridged)
        r.empty_cells, r.bridge_cells = self.empty_cells, self.bridge_cells
        r.cells, r.plot, r.terrain = self.cells.copy(), self.plot.copy(), self.terrain.copy()
        r.label, r.empty = self.label.copy(), self.empty.copy()
        r._views()
        r.derived = self.derived
        r.sizes = dict(self.sizes)
        r.kind_counts = dict(self.kind_counts)
        r.cow_cells = self.cow_cells
        r.partner_cells = list(self.partner_cells)
        r.first_adj = list(self.first_adj)
        r.second_adj = list(self.second_adj)
        r.adj_cells = list(self.adj_cells)
        r.terrain_cells = list(self.terrain_cells)
        r.hand = list(self.hand)
        return r

    def _views(self) -> None:
        views = self.cells.view()
        views.flags.writeable = False  # write through the methods, which reset ``derived``
        self.kind, self.cows, self.partner, self.face = views

    def __getstate__(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__slots__
                if k not in self._VIEWS and k != "derived"}

    def __setstate__(self, state: dict[str, object]) -> None:
        for k, v in state.items():
            setattr(self, k, v)
        self._views()
        self.derived = {}

    # ----------------------------------------------------------- changes
    def add_cows(self, cell: int, count: int) -> None:
        """Add (or, with a negative count, remove) cows on a cell."""
        cows = self.cells[self._COWS]
        cows[cell] += count
        if cows[cell] > 0:
            self.cow_cells |= 1 << cell
        else:
            self.cow_cells &= ~(1 << cell)
        self.derived = {}

    def set_partner(self, cell: int, token: int, face: int) -> None:
        """Put a partner token on a cell, showing the given face."""
        if token < 0:
            raise ValueError(f"a partner token id is >= 0, got {token}")
        self.cells[self._PARTNER, cell] = token
        self.cells[self._FACE, cell] = face
        if cell not in self.partner_cells:
            self.partner_cells.append(cell)
        self.derived = {}

    def cap_cows(self) -> int:
        """Overpopulation: leave at most one cow per plot; return how many cows left."""
        cows = self.cells[self._COWS]
        excess = np.maximum(cows - 1, 0)
        cows -= excess
        self.derived = {}
        return int(excess.sum())

    @property
    def in_hand(self) -> bool:
        """True when the reserve is over-full: a plot is held in hand (forced expansion)."""
        return len(self.hand) > self.capacity

    @property
    def reach(self) -> int:
        """The furthest row from the river holding a plot (-1 for an empty ranch)."""
        filled = np.flatnonzero(self.kind >= 0)
        return int(filled[-1]) // COLS if filled.size else -1

    def place(self, cell: int, plot: int, kind: int, terrain: int) -> None:
        """Put one plot on a free cell."""
        if self.cells[self._KIND, cell] >= 0:
            raise ValueError(f"cell {cell} already holds a plot")
        self.cells[self._KIND, cell] = kind
        self.kind_counts[kind] = self.kind_counts.get(kind, 0) + 1
        self.derived = {}
        self.plot[cell] = plot
        self.terrain[cell] = terrain
        self.empty[cell] = False
        label = self.label
        same = NEIGHBOR_BITS[cell] & self.terrain_cells[terrain]
        self.terrain_cells[terrain] |= 1 << cell
        if not same:
            label[cell] = cell  # a new territory
            self.sizes[cell] = 1
        else:
            joined = set()
            while same:
                low = same & -same
                joined.add(int(label[low.bit_length() - 1]))
                same ^= low
            name = min(joined | {cell})
            label[cell] = name
            for other in joined - {name}:
                label[label == other] = name
            self.sizes[name] = 1 + sum(self.sizes.pop(t) for t in joined)
        self.free &= ~TOUCH[cell]
        self.empty_cells &= ~(1 << cell)
        self.first_adj[terrain] |= FIRST_NB[cell]
        self.second_adj[terrain] |= SECOND_NB[cell]
        self.adj_cells[terrain] |= NEIGHBOR_BITS[cell]

    def single_bits(self, terrain: int) -> int:
        """Cells (bit c) where a single plot of ``terrain`` may go (the bonus tile)."""
        return self.empty_cells & (self.bridge_cells | self.adj_cells[terrain])

    def territory(self, cell: int) -> list[int]:
        """Cells of the territory holding ``cell``."""
        return np.flatnonzero(self.label == self.label[cell]).tolist()

    def protected(self) -> np.ndarray:
        """Cells whose territory holds a partner (herd guard): their cows cannot be stolen."""
        guarded = self.label[self.partner >= 0]
        return np.isin(self.label, guarded) & (self.label >= 0)
