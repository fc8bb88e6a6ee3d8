"""Ranch grid geometry: cells row-major over 10 x 5 (row 0 on the river, homestead cell 2).

Placement k = 2 * cell + orientation (0: second plot to the right, 1: below). See docs/actions.md.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable, Sequence

import numpy as np

COLS = 5
MAX_ROWS = 10
NUM_CELLS = MAX_ROWS * COLS
HOMESTEAD = 2  # row 0, column 2
ORIENTATIONS = 2
NUM_PLACEMENTS = NUM_CELLS * ORIENTATIONS
# Cowboy directions: (d_row, d_col); "up" is toward the river.
DIRECTIONS = ((-1, 0), (0, 1), (1, 0), (0, -1))
DIRECTION_NAMES = ("up", "right", "down", "left")


def step(cell: int, direction: int, rows: int = MAX_ROWS) -> int:
    """The neighbouring cell in a direction, or -1 off the grid."""
    r, c = divmod(cell, COLS)
    dr, dc = DIRECTIONS[direction]
    r, c = r + dr, c + dc
    if 0 <= r < rows and 0 <= c < COLS:
        return r * COLS + c
    return -1


def second_cell(cell: int, orientation: int) -> int:
    """The cell of a domino's second plot, or -1 if it falls off the 10x5 grid."""
    return step(cell, 1 if orientation == 0 else 2)


NEIGHBORS: tuple[tuple[int, ...], ...] = tuple(
    tuple(n for d in range(4) if (n := step(c, d)) >= 0) for c in range(NUM_CELLS)
)
# Placement k -> its two cells; off-grid second cells point at cell 0 and are masked by GEO_OK.
PLACE_FIRST = np.repeat(np.arange(NUM_CELLS), ORIENTATIONS)
_second = np.array([second_cell(c, o) for c in range(NUM_CELLS) for o in range(ORIENTATIONS)])
GEO_OK = _second >= 0
PLACE_SECOND = np.where(GEO_OK, _second, 0)


def groups(label: Sequence[int]) -> list[list[int]]:
    """Orthogonally connected groups of cells sharing a label; cells labelled -1 are left out."""
    seen = [False] * len(label)
    out = []
    for start, lab in enumerate(label):
        if lab < 0 or seen[start]:
            continue
        seen[start] = True
        group, stack = [], [start]
        while stack:
            cell = stack.pop()
            group.append(cell)
            for n in NEIGHBORS[cell]:
                if not seen[n] and label[n] == lab:
                    seen[n] = True
                    stack.append(n)
        out.append(group)
    return out


def usable_cells(rows: int) -> np.ndarray:
    """Boolean mask of the cells a ranch of ``rows`` rows can build on."""
    usable = np.zeros(NUM_CELLS, dtype=bool)
    usable[: rows * COLS] = True
    usable[HOMESTEAD] = False
    return usable


def _placement_bits() -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Per cell: placements covering it, and placements whose first/second cell neighbours it."""
    # Placement sets are ints with bit k for placement k: a pair's legality is a few int ops.
    touch = [0] * NUM_CELLS
    first_at = [0] * NUM_CELLS
    second_at = [0] * NUM_CELLS
    for k in range(NUM_PLACEMENTS):
        if GEO_OK[k]:
            a, b = int(PLACE_FIRST[k]), int(PLACE_SECOND[k])
            touch[a] |= 1 << k
            touch[b] |= 1 << k
            first_at[a] |= 1 << k
            second_at[b] |= 1 << k
    first_nb = tuple(_or(first_at[n] for n in NEIGHBORS[c]) for c in range(NUM_CELLS))
    second_nb = tuple(_or(second_at[n] for n in NEIGHBORS[c]) for c in range(NUM_CELLS))
    return tuple(touch), first_nb, second_nb


def _or(values: Iterable[int]) -> int:
    return functools.reduce(operator.or_, values, 0)


# TOUCH[c]: placements covering cell c. FIRST_NB[c] / SECOND_NB[c]: placements whose first /
# second plot lands next to cell c (so a plot placed on c can connect to them).
TOUCH, FIRST_NB, SECOND_NB = _placement_bits()
NEIGHBOR_BITS = tuple(_or(1 << n for n in NEIGHBORS[c]) for c in range(NUM_CELLS))


def placements_within(usable: np.ndarray) -> int:
    """Bits of the placements whose two cells are both usable."""
    return _or(1 << k for k in range(NUM_PLACEMENTS)
               if GEO_OK[k] and usable[PLACE_FIRST[k]] and usable[PLACE_SECOND[k]])


def placements_touching(cells: np.ndarray) -> int:
    """Bits of the placements covering at least one of the given cells (bool mask)."""
    return _or(TOUCH[c] for c in np.flatnonzero(cells).tolist())
