"""Scoring: territories, resources, partners, scenarios, and tie-break keys."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from .components import Face, PartnerKind, Terrain
from .grid import groups
from .scenarios import RanchFacts, scenario_bonus

if TYPE_CHECKING:
    from .data import GameData
    from .ranch import Ranch

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


def score_memo(data: GameData) -> dict[tuple[int | None, bool, bytes], ScoreBreakdown]:
    """Memo of ranch scores kept on ``data``: (scenario, overpopulated, ranch cells) -> score."""
    memo: dict[tuple[int | None, bool, bytes], ScoreBreakdown] | None = (
        data.__dict__.get("_score_memo"))
    if memo is None:
        memo = {}
        object.__setattr__(data, "_score_memo", memo)
    return memo


def territory_labels(terrain: Sequence[int]) -> np.ndarray:
    """Territory label of each cell (the smallest cell index of its territory), -1 if empty."""
    label = np.full(len(terrain), -1, dtype=np.int16)
    for g in groups(list(terrain)):
        label[g] = min(g)
    return label


def _partner_points(kind: int, nuggets: int, beavers: int, corn: int) -> int:
    """Points of one specialist: the ranch's count of the resource it collects."""
    return (nuggets if kind == _GOLD_DIGGER else beavers if kind == _TRAPPER
            else corn if kind == _FARMER else 0)


def score_ranch(terrain: np.ndarray, kind: np.ndarray, cows: np.ndarray, partner_kind: np.ndarray,
                face: np.ndarray, data: GameData, scenario: int | None,
                label: np.ndarray | None = None, cap_cows: bool = False) -> ScoreBreakdown:
    """Score one ranch from per-cell arrays (terrain -1: empty); ``cap_cows``: overpopulation."""
    # One plain-Python pass over the 50 cells: each numpy call costs more than a whole pass.
    terr = terrain.tolist()
    lab = territory_labels(terr).tolist() if label is None else label.tolist()
    kinds, herd_cows, faces = kind.tolist(), cows.tolist(), face.tolist()
    symbols = data.symbol_rows
    size: dict[int, int] = {}
    herd: dict[int, int] = {}
    nuggets = beavers = corn = total_cows = 0
    specialist_cells = []
    for cell, t in enumerate(lab):  # plots, cows and partners are only on territories
        if t < 0:
            continue
        size[t] = size.get(t, 0) + 1
        n, b, c = symbols[kinds[cell]]
        nuggets += n
        beavers += b
        corn += c
        herd_size = herd_cows[cell]
        if herd_size:
            if cap_cows:
                herd_size = 1
            herd[t] = herd.get(t, 0) + herd_size
            total_cows += herd_size
        if faces[cell] == _SPECIALIST:
            specialist_cells.append(cell)
    if not size:
        return ScoreBreakdown(0, 0, 0, 0, 0, 0)
    territories = sum(size[t] * n for t, n in herd.items() if terr[t] != _CORNFIELD)
    partners = sum(_partner_points(k, nuggets, beavers, corn)
                   for k in partner_kind[specialist_cells].tolist())
    bonus = scenario_bonus(scenario, lambda: RanchFacts(size, terr, lab, kind, face,
                                                        partner_kind, data))
    return ScoreBreakdown(territories, nuggets + beavers + corn, partners, bonus,
                          max(size.values()), total_cows)


def score_tracked(ranch: Ranch, data: GameData, scenario: int | None, token_kind: Sequence[int],
                  cap_cows: bool = False) -> ScoreBreakdown:
    """Score a :class:`~moonriver_env.moonriver.rules.ranch.Ranch` from what it keeps up to date."""
    # Equal to score_ranch on the ranch's arrays (a test checks it), but the work is per cow,
    # kind and partner, not per cell.
    sizes = ranch.sizes
    if not sizes:
        return ScoreBreakdown(0, 0, 0, 0, 0, 0)
    lab = ranch.label.tolist()
    terr = ranch.terrain.tolist()
    herd = ranch.cows.tolist()
    territories = total_cows = 0
    bits = ranch.cow_cells
    while bits:  # sum over herds of size x cows = sum over cow cells of cows x size
        low = bits & -bits
        bits ^= low
        cell = low.bit_length() - 1
        cows = 1 if cap_cows else herd[cell]
        total_cows += cows
        t = lab[cell]
        if terr[t] != _CORNFIELD:
            territories += sizes[t] * cows
    nuggets = beavers = corn = 0
    symbols = data.symbol_rows
    for k, count in ranch.kind_counts.items():
        n, b, c = symbols[k]
        nuggets += n * count
        beavers += b * count
        corn += c * count
    partners = 0
    if ranch.partner_cells:
        face, partner = ranch.face.tolist(), ranch.partner.tolist()
        for cell in ranch.partner_cells:
            if face[cell] == _SPECIALIST:
                partners += _partner_points(token_kind[partner[cell]], nuggets, beavers, corn)
    bonus = scenario_bonus(scenario, lambda: RanchFacts(
        sizes, terr, lab, ranch.kind, ranch.face, np.asarray(token_kind)[ranch.partner], data))
    return ScoreBreakdown(territories, nuggets + beavers + corn, partners, bonus,
                          max(sizes.values()), total_cows)
