"""Game components: terrains, resources, partners, plot kinds and boards."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

COLUMN_SIZE = 4  # plots on offer in a column of the river
NUM_COWS = 32  # cow meeples in the game


class Terrain(IntEnum):
    """The six landscape terrains."""

    DESERT = 0
    CANYON = 1
    MEADOW = 2
    FOREST = 3
    CORNFIELD = 4
    FARM = 5


NUM_TERRAINS = len(Terrain)

# One letter per terrain for text views (cornfield is Z for maize, farm is R for ranch-farm).
TERRAIN_LETTERS: dict[Terrain, str] = dict(zip(Terrain, "DCMFZR", strict=True))


class Resource(IntEnum):
    """Resource symbols, each worth one point at the end."""

    NUGGET = 0
    BEAVER = 1
    CORN = 2


class PartnerKind(IntEnum):
    """What a placed partner token shows: the Cowboy face or one of five Specialist faces."""

    COWBOY = 0
    DESPERADO = 1
    CATTLE_THIEF = 2
    GOLD_DIGGER = 3
    TRAPPER = 4
    FARMER = 5


NUM_PARTNER_KINDS = len(PartnerKind)

PARTNER_LETTERS: dict[PartnerKind, str] = dict(zip(PartnerKind, "wdtgpf", strict=True))

# End-of-game specialists and the resource each one counts.
SPECIALIST_RESOURCE = {
    PartnerKind.GOLD_DIGGER: Resource.NUGGET,
    PartnerKind.TRAPPER: Resource.BEAVER,
    PartnerKind.FARMER: Resource.CORN,
}


class Face(IntEnum):
    """Which side of a partner token faces up."""

    SPECIALIST = 0
    COWBOY = 1


@dataclass(frozen=True)
class PlotKind:
    """One kind of plot face: terrain, symbols and the number on its back."""

    label: str
    terrain: Terrain
    nugget: int = 0
    beaver: int = 0
    corn: int = 0
    cows: int = 0
    skull: bool = False
    circle: bool = False
    number: int = 0

    @property
    def resources(self) -> int:
        """Total resource symbols on the plot."""
        return self.nugget + self.beaver + self.corn

    def describe(self) -> str:
        """Short human description, e.g. 'meadow (1 cow, circle)'."""
        bits = []
        for name, n in (("nugget", self.nugget), ("beaver", self.beaver), ("corn", self.corn),
                        ("cow", self.cows)):
            if n:
                bits.append(f"{n} {name}{'s' if n > 1 and name != 'corn' else ''}")
        if self.skull:
            bits.append("skull")
        if self.circle:
            bits.append("circle")
        inner = f" ({', '.join(bits)})" if bits else ""
        return f"{self.terrain.name.lower()}{inner}"


@dataclass(frozen=True)
class Board:
    """A reserve board side: its reserve size and the bridge cells of the ranch."""

    name: str
    side: str
    colour: str
    reserve: int
    bridges: tuple[tuple[int, int], ...]
