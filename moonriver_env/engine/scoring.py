"""Scoring: territories, resources, partners, scenarios, and tie-break keys."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from .components import Face, PartnerKind, Terrain
from .grid import COLS, NEIGHBORS

SCENARIO_BASE = 10  # a qualifying group scores 10 ...
SCENARIO_PER_UNIT = 10  # ... plus 10 per unit beyond the third
SCENARIO_MIN_UNITS = 3
# Plain ints: numpy compares these much faster than IntEnum members.
_CORNFIELD, _FOREST, _FARM = int(Terrain.CORNFIELD), int(Terrain.FOREST), int(Terrain.FARM)
_SPECIALIST = int(Face.SPECIALIST)
_GOLD_DIGGER, _TRAPPER, _FARMER = (int(PartnerKind.GOLD_DIGGER), int(PartnerKind.TRAPPER),
                                   int(PartnerKind.FARMER))


@dataclass(frozen=True)
class ScoreBreakdown:
    """One player's score by category, with the tie-break keys."""

    territories: int
    resources: int
    partners: int
    scenario: int
    largest_territory: int
    cows: int

    @property
    def total(self) -> int:
        """The sum of the four scoring categories."""
        return self.territories + self.resources + self.partners + self.scenario

    def to_dict(self) -> dict[str, int]:
        """JSON-serialisable form, total included."""
        return {**asdict(self), "total": self.total}


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


def territory_of(label: Sequence[int], cell: int) -> list[int]:
    """The territory (connected cells of one terrain) containing ``cell``."""
    lab = label[cell]
    group, stack, seen = [], [cell], {cell}
    while stack:
        c = stack.pop()
        group.append(c)
        for n in NEIGHBORS[c]:
            if n not in seen and label[n] == lab:
                seen.add(n)
                stack.append(n)
    return group


def scenario_value(units: int) -> int:
    """Points of one qualifying scenario group with ``units`` units."""
    return SCENARIO_BASE + SCENARIO_PER_UNIT * (units - SCENARIO_MIN_UNITS)


def territory_labels(terrain: Sequence[int]) -> np.ndarray:
    """Territory label of each cell (the smallest cell index of its territory), -1 if empty."""
    label = np.full(len(terrain), -1, dtype=np.int16)
    for g in groups(list(terrain)):
        label[g] = min(g)
    return label


def score_ranch(terrain: np.ndarray, kind: np.ndarray, cows: np.ndarray, partner_kind: np.ndarray,
                face: np.ndarray, data, scenario: int | None,
                label: np.ndarray | None = None) -> ScoreBreakdown:
    """Score one ranch from per-cell terrain (-1 empty), kind, cows, partner kind and face.

    ``label`` (territory labels as :func:`territory_labels` gives) is computed when omitted.
    """
    if label is None:
        label = territory_labels(terrain.tolist())
    placed = np.flatnonzero(kind >= 0)
    if placed.size == 0:
        return ScoreBreakdown(0, 0, 0, 0, 0, 0)
    lab = label[placed].astype(np.intp)
    size = np.bincount(lab, minlength=len(label))
    herd = np.bincount(lab, weights=cows[placed], minlength=len(label)).astype(np.int64)
    ids = np.flatnonzero(size)
    ids_terrain = terrain[ids]
    territories = int((size[ids] * herd[ids])[ids_terrain != _CORNFIELD].sum())
    kinds = kind[placed]
    nuggets = int(data.nugget[kinds].sum())
    beavers = int(data.beaver[kinds].sum())
    corn = int(data.corn[kinds].sum())
    shown = partner_kind[face == _SPECIALIST]
    partners = (nuggets * int(np.count_nonzero(shown == _GOLD_DIGGER))
                + beavers * int(np.count_nonzero(shown == _TRAPPER))
                + corn * int(np.count_nonzero(shown == _FARMER)))
    bonus = 0
    if scenario in (1, 4):
        wanted = _FOREST if scenario == 1 else _FARM
        big = ids[(ids_terrain == wanted) & (size[ids] >= SCENARIO_MIN_UNITS)]
        if scenario == 1:  # Timber Rafting: a forest plot must touch the river (row 0)
            riverside = np.bincount(lab, weights=placed < COLS, minlength=len(label))
            big = big[riverside[big] > 0]
        bonus = sum(scenario_value(int(size[t])) for t in big)
    elif scenario in (2, 3):
        bonus = scenario_points(scenario, kind, face, partner_kind, data)
    return ScoreBreakdown(territories, nuggets + beavers + corn, partners, bonus,
                          int(size.max()), int(cows.sum()))


def scenario_points(scenario: int, kind: np.ndarray, face: np.ndarray,
                    partner_kind: np.ndarray, data) -> int:
    """End-game points of the group scenarios (2 Gold Rush, 3 Outlaws) for one ranch."""
    total = 0
    if scenario == 2:
        nug = np.where(kind >= 0, data.nugget[np.maximum(kind, 0)], 0)
        label = [0 if n > 0 else -1 for n in nug.tolist()]
        for g in groups(label):
            if len(g) >= SCENARIO_MIN_UNITS:
                total += scenario_value(int(nug[g].sum()))
    elif scenario == 3:
        label = [0 if f >= 0 else -1 for f in face.tolist()]
        outlaw = (PartnerKind.DESPERADO, PartnerKind.CATTLE_THIEF)
        for g in groups(label):
            if len(g) >= SCENARIO_MIN_UNITS and any(
                    face[c] == Face.SPECIALIST and partner_kind[c] in outlaw for c in g):
                total += scenario_value(len(g))
    return total
