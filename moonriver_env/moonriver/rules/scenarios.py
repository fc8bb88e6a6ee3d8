"""The *Legends of the West* scenarios in one table (all that depends on a scenario reads it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .components import Face, PartnerKind, Terrain
from .grid import COLS, groups

if TYPE_CHECKING:
    from .data import GameData

_FOREST, _FARM = int(Terrain.FOREST), int(Terrain.FARM)
SCENARIO_BASE = 10  # a qualifying group scores 10 ...
SCENARIO_PER_UNIT = 10  # ... plus 10 per unit beyond the third
SCENARIO_MIN_UNITS = 3


def scenario_value(units: int) -> int:
    """Points of one qualifying scenario group with ``units`` units."""
    return SCENARIO_BASE + SCENARIO_PER_UNIT * (units - SCENARIO_MIN_UNITS)


class RanchFacts(NamedTuple):
    """What a scenario scorer reads of one ranch: territory sizes and per-cell lists and arrays."""

    sizes: dict[int, int]
    terrain: list[int]
    label: list[int]
    kind: np.ndarray
    face: np.ndarray
    partner_kind: np.ndarray
    data: GameData


@dataclass(frozen=True)
class Scenario:
    """One scenario: its number (1-4), its name and the points it adds to a ranch."""

    number: int
    name: str
    score: Callable[[RanchFacts], int]


def _territories(wanted: int, riverside_only: bool) -> Callable[[RanchFacts], int]:
    def score(r: RanchFacts) -> int:
        riverside = set(r.label[:COLS])
        return sum(scenario_value(n) for t, n in r.sizes.items()
                   if r.terrain[t] == wanted and n >= SCENARIO_MIN_UNITS
                   and (not riverside_only or t in riverside))
    return score


def _gold_rush(r: RanchFacts) -> int:
    """Groups of connected plots with nuggets: points by their nuggets."""
    nug = np.where(r.kind >= 0, r.data.nugget[np.maximum(r.kind, 0)], 0)
    label = [0 if n > 0 else -1 for n in nug.tolist()]
    return sum(scenario_value(int(nug[g].sum())) for g in groups(label)
               if len(g) >= SCENARIO_MIN_UNITS)


_OUTLAWS = (PartnerKind.DESPERADO, PartnerKind.CATTLE_THIEF)


def _outlaws(r: RanchFacts) -> int:
    """Groups of connected partners holding an outlaw specialist: points by their size."""
    face, kind = r.face, r.partner_kind
    label = [0 if f >= 0 else -1 for f in face.tolist()]
    return sum(scenario_value(len(g)) for g in groups(label)
               if len(g) >= SCENARIO_MIN_UNITS
               and any(face[c] == Face.SPECIALIST and kind[c] in _OUTLAWS for c in g))


SCENARIOS: dict[int, Scenario] = {s.number: s for s in (
    Scenario(1, "Timber Rafting", _territories(_FOREST, riverside_only=True)),
    Scenario(2, "Gold Rush", _gold_rush),
    Scenario(3, "Outlaws", _outlaws),
    Scenario(4, "Moon River City", _territories(_FARM, riverside_only=False)),
)}


def scenario_bonus(scenario: int | None, facts: Callable[[], RanchFacts]) -> int:
    """The scenario's points for a ranch (0 without a scenario); ``facts`` is called only then."""
    return 0 if scenario is None else SCENARIOS[scenario].score(facts())
