"""Validating readers for the data files: plot manifest, boards, partners, bonus tiles."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from .components import Board, PartnerKind, PlotKind, Terrain

MAX_RESERVE = 4  # the largest reserve of any board; observations and actions are sized by it
# Limits that keep every id inside its int16 array and every observation value inside the
# Box bound (64): plot numbers / 25, partner tokens per specialist / 5, rounds / 24.
MAX_PLOT_KINDS = 256
MAX_PLOTS = 4096
MAX_PARTNERS = 320
MAX_ROWS = 10  # a bridge may lie on any row of the largest (2-player) ranch
_HOMESTEAD = (0, 2)

_PLOT_COLUMNS = ("kind", "terrain", "nugget", "beaver", "corn", "cows", "skull", "circle",
                 "count", "number")
_BONUS_COLUMNS = ("tile", "face", "terrain", "nugget", "beaver", "corn", "cows", "skull",
                  "circle")
_PARTNER_COLUMNS = ("specialist", "count")
_SPECIALISTS = {k.name.lower(): k for k in PartnerKind if k != PartnerKind.COWBOY}
_INTEGER = re.compile(r"-?[0-9]+")  # plain digits: no blanks, signs, underscores or exponents
_FIELD_LIMIT = 1000  # characters; no valid field comes near it
MAX_FILE_BYTES = 1 << 20  # a manifest at the limits is about 100 kB


class DataFileError(ValueError):
    """A data file is malformed; the message names the file, the place and what is allowed."""

    # Messages never quote the file's text (a record may name any file on the machine).


@cache
def default_path(name: str) -> str:
    """Path of one of the package's own data files."""
    return str(resources.files("moonriver_env.moonriver.rules") / "data" / name)


def read_text(path: str) -> str:
    """A data file's text; unreadable or non-UTF-8 files are DataFileErrors."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise DataFileError(f"cannot read data file {path}: {exc.strerror}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise DataFileError(f"{path}: larger than {MAX_FILE_BYTES} bytes; data files are small "
                            "CSV or JSON tables")
    try:
        return raw.decode("utf-8-sig")  # a byte order mark (spreadsheet export) is dropped
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataFileError(f"{path}, line {line}: not UTF-8 text (data files are UTF-8 "
                            "CSV or JSON)") from None


def _int_field(path: str, line: int, row: dict[str, str], key: str, lo: int, hi: int) -> int:
    raw = row[key]
    if not _INTEGER.fullmatch(raw):
        raise DataFileError(f"{path}, line {line}: '{key}' must be an integer in {lo}..{hi} "
                            "written as plain digits")
    value = int(raw)
    if not lo <= value <= hi:
        raise DataFileError(f"{path}, line {line}: '{key}' must be in {lo}..{hi}, got {value}")
    return value


def _terrain_field(path: str, line: int, row: dict[str, str]) -> Terrain:
    raw = row["terrain"].strip().lower()
    names = [t.name.lower() for t in Terrain]
    if raw not in names:
        raise DataFileError(f"{path}, line {line}: terrain must be one of {names}")
    return Terrain[raw.upper()]


def _read_csv(path: str, text: str, columns: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    """Rows of a CSV file as (line, {column: text}); blank lines are skipped."""
    rows: list[tuple[int, dict[str, str]]] = []
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        for fields in reader:
            line = reader.line_num
            if any(len(f) > _FIELD_LIMIT for f in fields):
                raise DataFileError(f"{path}, line {line}: a field is longer than "
                                    f"{_FIELD_LIMIT} characters")
            if line == 1:
                if tuple(fields) != columns:
                    raise DataFileError(f"{path}, line 1: the header must be "
                                        f"{','.join(columns)}")
                continue
            if not fields:
                continue
            if len(fields) != len(columns):
                raise DataFileError(f"{path}, line {line}: expected {len(columns)} fields "
                                    f"({','.join(columns)}), got {len(fields)}")
            rows.append((line, dict(zip(columns, fields, strict=True))))
    except csv.Error:
        raise DataFileError(f"{path}, line {reader.line_num}: not valid CSV (unbalanced "
                            "quotes, a NUL byte or an over-long field)") from None
    if reader.line_num == 0:
        raise DataFileError(f"{path}, line 1: the header must be {','.join(columns)}")
    return rows


def _symbols(path: str, line: int, row: dict[str, str], label: str) -> PlotKind:
    return PlotKind(
        label=label,
        terrain=_terrain_field(path, line, row),
        nugget=_int_field(path, line, row, "nugget", 0, 3),
        beaver=_int_field(path, line, row, "beaver", 0, 3),
        corn=_int_field(path, line, row, "corn", 0, 3),
        cows=_int_field(path, line, row, "cows", 0, 2),
        skull=bool(_int_field(path, line, row, "skull", 0, 1)),
        circle=bool(_int_field(path, line, row, "circle", 0, 1)),
        number=_int_field(path, line, row, "number", 0, 999) if "number" in row else 0,
    )


def read_plot_manifest(path: str, text: str | None = None
                       ) -> tuple[tuple[PlotKind, ...], tuple[int, ...]]:
    """Read a plot manifest CSV: the plot kinds and how many plots of each are in the box."""
    text = read_text(path) if text is None else text
    kinds: list[PlotKind] = []
    counts: list[int] = []
    labels: set[str] = set()
    for line, row in _read_csv(path, text, _PLOT_COLUMNS):
        label = row["kind"].strip()
        if not label or label in labels:
            raise DataFileError(f"{path}, line {line}: 'kind' must be a unique non-empty label")
        if len(kinds) == MAX_PLOT_KINDS:
            raise DataFileError(f"{path}, line {line}: a manifest has at most {MAX_PLOT_KINDS} "
                                "kinds")
        labels.add(label)
        kinds.append(_symbols(path, line, row, label))
        counts.append(_int_field(path, line, row, "count", 0, 96))
    total = sum(counts)
    if total < 8:
        raise DataFileError(f"{path}: the box must hold at least 8 plots (two columns), "
                            f"got {total}")
    if total > MAX_PLOTS:
        raise DataFileError(f"{path}: the box holds at most {MAX_PLOTS} plots, got {total}")
    return tuple(kinds), tuple(counts)


def read_bonus_tiles(path: str, text: str | None = None
                     ) -> tuple[tuple[PlotKind, PlotKind], ...]:
    """Read the 2-player bonus tiles: two faces per tile, each a single plot."""
    text = read_text(path) if text is None else text
    tiles: dict[str, list[PlotKind]] = {}
    for line, row in _read_csv(path, text, _BONUS_COLUMNS):
        tile = row["tile"].strip()
        face = _int_field(path, line, row, "face", 0, 1)
        faces = tiles.setdefault(tile, [])
        if face != len(faces):
            raise DataFileError(f"{path}, line {line}: each tile's faces must be listed "
                                "0 then 1")
        faces.append(_symbols(path, line, row, f"bonus-{tile}{face}"))
    if len(tiles) != 2 or any(len(f) != 2 for f in tiles.values()):
        raise DataFileError(f"{path}: exactly 2 bonus tiles with faces 0 and 1 are required")
    return tuple((f[0], f[1]) for f in tiles.values())


def read_partners(path: str, text: str | None = None) -> tuple[PartnerKind, ...]:
    """Read the partner tokens: the Specialist face of each token (every back is a Cowboy)."""
    text = read_text(path) if text is None else text
    tokens: list[PartnerKind] = []
    for line, row in _read_csv(path, text, _PARTNER_COLUMNS):
        name = row["specialist"].strip().lower()
        if name not in _SPECIALISTS:
            raise DataFileError(f"{path}, line {line}: specialist must be one of "
                                f"{sorted(_SPECIALISTS)}")
        tokens += [_SPECIALISTS[name]] * _int_field(path, line, row, "count", 0, 20)
        if len(tokens) > MAX_PARTNERS:
            raise DataFileError(f"{path}, line {line}: there are at most {MAX_PARTNERS} "
                                "partner tokens")
    if not tokens:
        raise DataFileError(f"{path}: at least one partner token is required")
    return tuple(tokens)


def read_boards(path: str, text: str | None = None) -> dict[str, Board]:
    """Read board layouts (JSON): reserve size and bridge cells per board side."""
    text = read_text(path) if text is None else text
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataFileError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise DataFileError(f"{path}: JSON nested too deeply (a boards file is an object "
                            "with a 'boards' list of flat objects)") from None
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
            raise DataFileError(f"{where}: 'side' must be 'camp' or 'legend'")
        reserve = entry.get("reserve")
        if type(reserve) is not int or not 1 <= reserve <= MAX_RESERVE:
            raise DataFileError(f"{where}: 'reserve' must be an integer in 1..{MAX_RESERVE}")
        colour = entry.get("colour", "")
        if not isinstance(colour, str):
            raise DataFileError(f"{where}: 'colour' must be a string")
        bridges = entry.get("bridges")
        if not isinstance(bridges, list) or not bridges:
            raise DataFileError(f"{where}: 'bridges' must be a non-empty list of [row, col]")
        cells: list[tuple[int, int]] = []
        for j, b in enumerate(bridges):
            ok = (isinstance(b, list) and len(b) == 2 and all(type(v) is int for v in b)
                  and 0 <= b[0] < MAX_ROWS and 0 <= b[1] <= 4 and tuple(b) != _HOMESTEAD)
            if not ok:
                raise DataFileError(f"{where}: bridges[{j}] must be [row, col] with row "
                                    f"0..{MAX_ROWS - 1}, col 0..4, and not the homestead (0, 2)")
            if (b[0], b[1]) in cells:
                raise DataFileError(f"{where}: bridges[{j}] repeats ({b[0]}, {b[1]}); each "
                                    "bridge cell is listed once")
            cells.append((b[0], b[1]))
        boards[name] = Board(name, side, colour, reserve, tuple(cells))
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


def load_game_data(plots_file: str, boards_file: str, partners_file: str,
                   bonus_file: str) -> GameData:
    """Load and validate all data files (cached on paths and contents: edits are read again)."""
    return _load(*((path, read_text(path)) for path in
                   (plots_file, boards_file, partners_file, bonus_file)))


@lru_cache(maxsize=16)
def _load(plots: tuple[str, str], boards: tuple[str, str], partners: tuple[str, str],
          bonus: tuple[str, str]) -> GameData:
    """Build the tables from (path, text) of each data file."""
    kinds, counts = read_plot_manifest(*plots)
    bonus_tiles = read_bonus_tiles(*bonus)
    all_kinds = kinds + tuple(face for tile in bonus_tiles for face in tile)

    def col(attr: str, dtype: type) -> np.ndarray:
        arr: np.ndarray = np.array([getattr(k, attr) for k in all_kinds], dtype=dtype)
        arr.setflags(write=False)
        return arr

    plot_kind = np.repeat(np.arange(len(kinds), dtype=np.int16), counts)
    plot_kind.setflags(write=False)
    return GameData(
        kinds=all_kinds, box_counts=counts, num_box_kinds=len(kinds),
        boards=read_boards(*boards), partner_specialists=read_partners(*partners),
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
