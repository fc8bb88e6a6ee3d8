"""One player's ranch: the grid, cows and partners on it, its reserve, and placement legality."""

from __future__ import annotations

import numpy as np

from .components import Board, Terrain
from .grid import GEO_OK, NEIGHBORS, NUM_CELLS, PLACE_FIRST, PLACE_SECOND, usable_cells
from .scoring import territory_of

NUM_TERRAINS = len(Terrain)


class Ranch:
    """A ranch grid plus the owner's reserve (``hand``: reserve plots, then any plot in hand)."""

    __slots__ = ("adj", "board", "bonus_taken", "bridge", "capacity", "cows", "empty", "face",
                 "hand", "kind", "partner", "plot", "rows", "terrain")

    def __init__(self, rows: int, board: Board) -> None:
        self.rows = rows
        self.board = board
        self.capacity = board.reserve
        self.kind = np.full(NUM_CELLS, -1, dtype=np.int16)  # plot kind id, -1 empty
        self.plot = np.full(NUM_CELLS, -1, dtype=np.int16)  # plot id (bonus tile: -2 - tile)
        self.terrain = np.full(NUM_CELLS, -1, dtype=np.int8)
        self.cows = np.zeros(NUM_CELLS, dtype=np.int8)
        self.partner = np.full(NUM_CELLS, -1, dtype=np.int8)  # partner token id
        self.face = np.full(NUM_CELLS, -1, dtype=np.int8)  # Face of that token
        self.empty = usable_cells(rows)  # free cells a plot may go on
        self.bridge = np.zeros(NUM_CELLS, dtype=bool)
        for r, c in board.bridges:
            self.bridge[r * 5 + c] = True
        # adj[t, cell]: some orthogonal neighbour of cell holds a plot of terrain t.
        self.adj = np.zeros((NUM_TERRAINS, NUM_CELLS), dtype=bool)
        self.hand: list[int] = []
        self.bonus_taken = False

    def clone(self) -> Ranch:
        """An independent copy (arrays copied, no deep copy)."""
        r = Ranch.__new__(Ranch)
        r.rows, r.board, r.capacity, r.bonus_taken = (self.rows, self.board, self.capacity,
                                                      self.bonus_taken)
        for name in ("kind", "plot", "terrain", "cows", "partner", "face", "empty", "adj"):
            setattr(r, name, getattr(self, name).copy())
        r.bridge = self.bridge  # never changes after construction
        r.hand = list(self.hand)
        return r

    @property
    def in_hand(self) -> bool:
        """True when the reserve is over-full: a plot is held in hand (forced expansion)."""
        return len(self.hand) > self.capacity

    @property
    def reach(self) -> int:
        """The furthest row from the river holding a plot (-1 for an empty ranch)."""
        filled = np.flatnonzero(self.kind >= 0)
        return int(filled[-1]) // 5 if filled.size else -1

    def place(self, cell: int, plot: int, kind: int, terrain: int) -> None:
        """Put one plot on a free cell."""
        self.kind[cell] = kind
        self.plot[cell] = plot
        self.terrain[cell] = terrain
        self.empty[cell] = False
        for n in NEIGHBORS[cell]:
            self.adj[terrain, n] = True

    def domino_legality(self, terrain_a: np.ndarray, terrain_b: np.ndarray) -> np.ndarray:
        """Legal placements (P x 100 bool) for plot pairs with the given terrains."""
        empty = self.empty
        free = empty[PLACE_FIRST] & empty[PLACE_SECOND] & GEO_OK
        bridge = self.bridge[PLACE_FIRST] | self.bridge[PLACE_SECOND]
        return free & (bridge | self.adj[terrain_a][:, PLACE_FIRST]
                       | self.adj[terrain_b][:, PLACE_SECOND])

    def single_legality(self, terrain: int) -> np.ndarray:
        """Cells where a single plot of ``terrain`` may be placed (bonus tile)."""
        return self.empty & (self.bridge | self.adj[terrain])

    def territory(self, cell: int) -> list[int]:
        """Cells of the territory holding ``cell``."""
        return territory_of(self.terrain.tolist(), cell)

    def protected(self) -> np.ndarray:
        """Cells whose territory holds a partner (herd guard): their cows cannot be stolen."""
        out = np.zeros(NUM_CELLS, dtype=bool)
        terr = self.terrain.tolist()
        for cell in np.flatnonzero(self.partner >= 0).tolist():
            if not out[cell]:
                out[territory_of(terr, cell)] = True
        return out
