"""Validating readers for the data files: plot manifest, boards, partners, bonus tiles."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from .components import Board, PartnerKind, PlotKind, Terrain

MAX_RESERVE = 4  # the largest reserve of any board; observations and actions are sized by it
MAX_BRIDGE_ROW = 1  # bridges border the river: rows 0 and 1 only

_PLOT_COLUMNS = ("kind", "terrain", "nugget", "beaver", "corn", "cows", "skull", "circle",
                 "count", "number")
_BONUS_COLUMNS = ("tile", "face", "terrain", "nugget", "beaver", "corn", "cows", "skull",
                  "circle")
_SPECIALISTS = {k.name.lower(): k for k in PartnerKind if k != PartnerKind.COWBOY}


class DataFileError(ValueError):
    """A data file is malformed; the message names the file, the place and what is allowed."""


@cache
def default_path(name: str) -> str:
    """Path of one of the package's own data files."""
    return str(resources.files("moonriver_env.engine") / "data" / name)


def _int_field(path: str, line: int, row: dict, key: str, lo: int, hi: int) -> int:
    raw = (row.get(key) or "").strip()
    try:
        value = int(raw)
    except ValueError:
        raise DataFileError(f"{path}, line {line}: '{key}' must be an integer, "
                            f"got {raw!r}") from None
    if not lo <= value <= hi:
        raise DataFileError(f"{path}, line {line}: '{key}' must be in {lo}..{hi}, got {value}")
    return value


def _terrain_field(path: str, line: int, row: dict) -> Terrain:
    raw = (row.get("terrain") or "").strip().lower()
    names = [t.name.lower() for t in Terrain]
    if raw not in names:
        raise DataFileError(f"{path}, line {line}: terrain must be one of {names}, got {raw!r}")
    return Terrain[raw.upper()]


def _read_csv(path: str, columns: tuple[str, ...]) -> list[tuple[int, dict]]:
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            header = tuple(reader.fieldnames or ())
            if header != columns:
                raise DataFileError(f"{path}: header must be {','.join(columns)}, got "
                                    f"{','.join(header) or 'nothing'}")
            return [(i + 2, row) for i, row in enumerate(reader)]
    except OSError as exc:
        raise DataFileError(f"cannot read data file {path}: {exc.strerror}") from None


def _symbols(path: str, line: int, row: dict, label: str) -> PlotKind:
    terrain = _terrain_field(path, line, row)
    kind = PlotKind(
        label=label,
        terrain=terrain,
        nugget=_int_field(path, line, row, "nugget", 0, 3),
        beaver=_int_field(path, line, row, "beaver", 0, 3),
        corn=_int_field(path, line, row, "corn", 0, 3),
        cows=_int_field(path, line, row, "cows", 0, 2),
        skull=bool(_int_field(path, line, row, "skull", 0, 1)),
        circle=bool(_int_field(path, line, row, "circle", 0, 1)),
        number=_int_field(path, line, row, "number", 0, 999) if "number" in row else 0,
    )
    return kind


def read_plot_manifest(path: str) -> tuple[tuple[PlotKind, ...], tuple[int, ...]]:
    """Read a plot manifest CSV: the plot kinds and how many plots of each are in the box."""
    kinds: list[PlotKind] = []
    counts: list[int] = []
    labels: set[str] = set()
    for line, row in _read_csv(path, _PLOT_COLUMNS):
        label = (row["kind"] or "").strip()
        if not label or label in labels:
            raise DataFileError(f"{path}, line {line}: 'kind' must be a unique non-empty label, "
                                f"got {label!r}")
        labels.add(label)
        kinds.append(_symbols(path, line, row, label))
        counts.append(_int_field(path, line, row, "count", 0, 96))
    total = sum(counts)
    if total < 8:
        raise DataFileError(f"{path}: the box must hold at least 8 plots (two columns), "
                            f"got {total}")
    return tuple(kinds), tuple(counts)


def read_bonus_tiles(path: str) -> tuple[tuple[PlotKind, PlotKind], ...]:
    """Read the 2-player bonus tiles: two faces per tile, each a single plot."""
    tiles: dict[str, list[PlotKind]] = {}
    for line, row in _read_csv(path, _BONUS_COLUMNS):
        tile = (row["tile"] or "").strip()
        face = _int_field(path, line, row, "face", 0, 1)
        faces = tiles.setdefault(tile, [])
        if face != len(faces):
            raise DataFileError(f"{path}, line {line}: tile {tile!r} faces must be listed 0 then 1")
        faces.append(_symbols(path, line, row, f"bonus-{tile}{face}"))
    if len(tiles) != 2 or any(len(f) != 2 for f in tiles.values()):
        raise DataFileError(f"{path}: exactly 2 bonus tiles with faces 0 and 1 are required")
    return tuple((f[0], f[1]) for f in tiles.values())


def read_partners(path: str) -> tuple[PartnerKind, ...]:
    """Read the partner tokens: the Specialist face of each token (every back is a Cowboy)."""
    tokens: list[PartnerKind] = []
    for line, row in _read_csv(path, ("specialist", "count")):
        name = (row["specialist"] or "").strip().lower()
        if name not in _SPECIALISTS:
            raise DataFileError(f"{path}, line {line}: specialist must be one of "
                                f"{sorted(_SPECIALISTS)}, got {name!r}")
        tokens += [_SPECIALISTS[name]] * _int_field(path, line, row, "count", 0, 20)
    if not tokens:
        raise DataFileError(f"{path}: at least one partner token is required")
    return tuple(tokens)


def read_boards(path: str) -> dict[str, Board]:
    """Read board layouts (JSON): reserve size and bridge cells per board side."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except OSError as exc:
        raise DataFileError(f"cannot read data file {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise DataFileError(f"{path}: not valid JSON ({exc})") from None
    entries = doc.get("boards") if isinstance(doc, dict) else None
    if not isinstance(entries, list) or not entries:
        raise DataFileError(f"{path}: expected an object with a non-empty 'boards' list")
    boards: dict[str, Board] = {}
    for i, entry in enumerate(entries):
        where = f"{path}, boards[{i}]"
        if not isinstance(entry, dict):
            raise DataFileError(f"{where}: each board must be an object")
        name, side = entry.get("name"), entry.get("side")
        if not isinstance(name, str) or not name or name in boards:
            raise DataFileError(f"{where}: 'name' must be a unique non-empty string")
        if side not in ("camp", "legend"):
            raise DataFileError(f"{where}: 'side' must be 'camp' or 'legend', got {side!r}")
        reserve = entry.get("reserve")
        if not isinstance(reserve, int) or not 1 <= reserve <= MAX_RESERVE:
            raise DataFileError(f"{where}: 'reserve' must be an integer in 1..{MAX_RESERVE}")
        bridges = entry.get("bridges")
        if not isinstance(bridges, list) or not bridges:
            raise DataFileError(f"{where}: 'bridges' must be a non-empty list of [row, col]")
        cells = []
        for b in bridges:
            ok = (isinstance(b, list) and len(b) == 2 and all(isinstance(v, int) for v in b)
                  and 0 <= b[0] <= MAX_BRIDGE_ROW and 0 <= b[1] <= 4 and tuple(b) != (0, 2))
            if not ok:
                raise DataFileError(f"{where}: bridge {b!r} must be [row, col] with row 0..1, "
                                    "col 0..4, and not the homestead (0, 2)")
            cells.append((b[0], b[1]))
        boards[name] = Board(name, side, str(entry.get("colour", "")), reserve, tuple(cells))
    if not any(b.side == "camp" for b in boards.values()):
        raise DataFileError(f"{path}: at least one board with side 'camp' is required")
    return boards


@dataclass(frozen=True)
class GameData:
    """Every table the rules need, loaded once per set of data files."""

    kinds: tuple[PlotKind, ...]  # box kinds, then the bonus tile faces (tile t face f at 2t+f)
    box_counts: tuple[int, ...]
    num_box_kinds: int
    boards: dict[str, Board]
    partner_specialists: tuple[PartnerKind, ...]
    # Columns of kinds as arrays, indexed by kind id (box kinds then bonus faces).
    terrain: np.ndarray
    nugget: np.ndarray
    beaver: np.ndarray
    corn: np.ndarray
    cows: np.ndarray
    skull: np.ndarray
    circle: np.ndarray
    number: np.ndarray
    plot_kind: np.ndarray  # plot id -> kind id, for the plots of the box

    @property
    def score_memo(self) -> dict:
        """Memo of ranch scores for these tables (filled by Game)."""
        memo = self.__dict__.get("_score_memo")
        if memo is None:
            memo = {}
            object.__setattr__(self, "_score_memo", memo)
        return memo

    @property
    def symbol_rows(self) -> list[tuple[int, int, int]]:
        """(nuggets, beavers, corn) of each kind id, as plain ints for the scoring loop."""
        cached = self.__dict__.get("_symbol_rows")
        if cached is None:
            cached = list(zip(self.nugget.tolist(), self.beaver.tolist(), self.corn.tolist(),
                              strict=True))
            object.__setattr__(self, "_symbol_rows", cached)
        return cached

    @property
    def num_plots(self) -> int:
        """How many plots the box holds at the start."""
        return int(self.plot_kind.shape[0])

    @property
    def num_partners(self) -> int:
        """How many partner tokens there are."""
        return len(self.partner_specialists)

    def bonus_kind(self, tile: int, face: int) -> int:
        """Kind id of a bonus tile's face."""
        return self.num_box_kinds + 2 * tile + face


@lru_cache(maxsize=16)
def load_game_data(plots_file: str, boards_file: str, partners_file: str,
                   bonus_file: str) -> GameData:
    """Load and validate all data files (cached per set of paths)."""
    kinds, counts = read_plot_manifest(plots_file)
    bonus = read_bonus_tiles(bonus_file)
    all_kinds = kinds + tuple(face for tile in bonus for face in tile)

    def col(attr: str, dtype: type) -> np.ndarray:
        arr = np.array([getattr(k, attr) for k in all_kinds], dtype=dtype)
        arr.setflags(write=False)
        return arr

    plot_kind = np.repeat(np.arange(len(kinds), dtype=np.int16), counts)
    plot_kind.setflags(write=False)
    return GameData(
        kinds=all_kinds, box_counts=counts, num_box_kinds=len(kinds),
        boards=read_boards(boards_file), partner_specialists=read_partners(partners_file),
        terrain=col("terrain", np.int8), nugget=col("nugget", np.int8),
        beaver=col("beaver", np.int8), corn=col("corn", np.int8), cows=col("cows", np.int8),
        skull=col("skull", np.bool_), circle=col("circle", np.bool_),
        number=col("number", np.int16), plot_kind=plot_kind,
    )


def resolve_path(path: str | None, default_name: str) -> str:
    """The given data file path (checked to exist) or the package default."""
    if path is None:
        return default_path(default_name)
    if not Path(path).is_file():
        raise DataFileError(f"data file not found: {path}")
    return str(Path(path).resolve())
