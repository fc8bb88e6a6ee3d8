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


def score_ranch(terrain: np.ndarray, kind: np.ndarray, cows: np.ndarray, partner_kind: np.ndarray,
                face: np.ndarray, data, scenario: int | None) -> ScoreBreakdown:
    """Score one ranch from per-cell terrain (-1 empty), kind, cows, partner kind and face."""
    terr = terrain.tolist()
    cow = cows.tolist()
    placed = kind >= 0
    kinds = kind[placed]
    nuggets = int(data.nugget[kinds].sum())
    beavers = int(data.beaver[kinds].sum())
    corn = int(data.corn[kinds].sum())
    territories = 0
    largest = 0
    terr_groups = groups(terr)
    for g in terr_groups:
        largest = max(largest, len(g))
        if terr[g[0]] != Terrain.CORNFIELD:
            territories += len(g) * sum(cow[c] for c in g)
    partners = 0
    for c in np.flatnonzero(face == Face.SPECIALIST).tolist():
        k = partner_kind[c]
        if k == PartnerKind.GOLD_DIGGER:
            partners += nuggets
        elif k == PartnerKind.TRAPPER:
            partners += beavers
        elif k == PartnerKind.FARMER:
            partners += corn
    bonus = 0
    if scenario is not None:
        bonus = scenario_points(scenario, terr, terr_groups, kind, face, partner_kind, data)
    return ScoreBreakdown(territories, nuggets + beavers + corn, partners, bonus, largest,
                          int(sum(cow)))


def scenario_points(scenario: int, terr: list[int], terr_groups: list[list[int]],
                    kind: np.ndarray, face: np.ndarray, partner_kind: np.ndarray, data) -> int:
    """End-game points of one Legends scenario (1-4) for one ranch."""
    total = 0
    if scenario in (1, 4):
        wanted = Terrain.FOREST if scenario == 1 else Terrain.FARM
        for g in terr_groups:
            if terr[g[0]] != wanted or len(g) < SCENARIO_MIN_UNITS:
                continue
            if scenario == 1 and not any(c < COLS for c in g):
                continue  # Timber Rafting needs a forest plot touching the river (row 0)
            total += scenario_value(len(g))
    elif scenario == 2:
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
