"""GameConfig: the frozen, validated, serialisable description of one game variant."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from moonriver_env.common.validate import config_from_dict

from .data import GameData, load_game_data, resolve_path
from .scenarios import SCENARIOS

MODES = ("base", "legends")
_DATA_FILES = ("plots_file", "boards_file", "partners_file", "bonus_file")


@dataclass(frozen=True)
class GameConfig:
    """Which game to play: players, mode, scenario, boards and data files."""

    num_players: int = 4
    mode: str = "base"
    scenario: int | None = None  # legends: None is drawn by the game's seeded generator
    boards: tuple[str, ...] | None = None  # legends: None is drawn too
    plots_file: str | None = None
    boards_file: str | None = None
    partners_file: str | None = None
    bonus_file: str | None = None
    auto_forced: bool = False  # play each decision with a single legal action automatically

    def __post_init__(self) -> None:
        for name in _DATA_FILES:
            value = getattr(self, name)
            if isinstance(value, os.PathLike):
                value = os.fspath(value)
            if isinstance(value, str) and value:
                # Absolute, so that a record replays from any working directory.
                object.__setattr__(self, name, str(Path(value).resolve()))
            elif value is not None:
                raise ValueError(f"GameConfig.{name} must be a path (str or os.PathLike) or "
                                 f"None for the package's data, got {value!r}")
        if type(self.num_players) is not int or self.num_players not in (2, 3, 4):
            raise ValueError(f"GameConfig.num_players must be 2, 3 or 4, got {self.num_players!r}")
        if self.mode not in MODES:
            raise ValueError(f"GameConfig.mode must be one of {MODES}, got {self.mode!r}")
        if not isinstance(self.auto_forced, bool):
            raise ValueError(f"GameConfig.auto_forced must be True or False, "
                             f"got {self.auto_forced!r}")
        if self.scenario is not None:
            if self.mode != "legends":
                raise ValueError("GameConfig.scenario applies only to mode='legends'; "
                                 "leave it None in the base game")
            if type(self.scenario) is not int or self.scenario not in SCENARIOS:
                raise ValueError(f"GameConfig.scenario must be one of {sorted(SCENARIOS)} or None "
                                 f"(drawn at random), got {self.scenario!r}")
        data = _load_data(self)  # validates the data files now
        object.__setattr__(self, "_data", data)
        for name in self._board_names_in_play(data):
            board = data.boards[name]
            outside = [b for b in board.bridges if b[0] >= self.rows]
            if outside:
                raise ValueError(f"GameConfig: board {name!r} has bridges {outside} outside the "
                                 f"{self.rows}-row ranch of a {self.num_players}-player game")
        legends = sorted(n for n, b in data.boards.items() if b.side == "legend")
        if self.boards is not None:
            if isinstance(self.boards, list):
                object.__setattr__(self, "boards", tuple(self.boards))
            if self.mode != "legends":
                raise ValueError("GameConfig.boards applies only to mode='legends'; the base game "
                                 "uses the Camp side for everyone")
            if not isinstance(self.boards, tuple) or len(self.boards) != self.num_players:
                raise ValueError(f"GameConfig.boards must name one board per player "
                                 f"({self.num_players}), got {self.boards!r}")
            for name in self.boards:
                if name not in legends:
                    raise ValueError(f"GameConfig.boards: unknown legend board {name!r}; "
                                     f"allowed: {legends}")
            if len(set(self.boards)) != len(self.boards):
                raise ValueError(f"GameConfig.boards must be distinct, got {self.boards!r}")
        elif self.mode == "legends" and len(legends) < self.num_players:
            raise ValueError(f"GameConfig: the boards file has {len(legends)} legend boards, "
                             f"fewer than {self.num_players} players")

    @property
    def data(self) -> GameData:
        """The validated data tables this configuration plays with (read when it was made)."""
        data = self.__dict__.get("_data")
        if data is None:  # an unpickled config reads its files again
            data = _load_data(self)
            object.__setattr__(self, "_data", data)
        return data

    def _board_names_in_play(self, data: GameData) -> list[str]:
        """The boards a game of this configuration may deal."""
        if self.mode == "base":
            return [next(k for k, b in data.boards.items() if b.side == "camp")]
        if self.boards is not None and all(name in data.boards for name in self.boards):
            return list(self.boards)
        return [k for k, b in data.boards.items() if b.side == "legend"]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_data", None)  # the tables (and their score memo) are read again
        return state

    @property
    def rows(self) -> int:
        """Rows of each ranch grid: 10 with 2 players, otherwise 5."""
        return 10 if self.num_players == 2 else 5

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        d = asdict(self)
        if d["boards"] is not None:
            d["boards"] = list(d["boards"])
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GameConfig:
        """Inverse of :meth:`to_dict`; unknown keys are an error."""
        return config_from_dict(cls, d)  # __post_init__ turns a boards list into a tuple


def _load_data(config: GameConfig) -> GameData:
    return load_game_data(
        resolve_path(config.plots_file, "plots.csv"),
        resolve_path(config.boards_file, "boards.json"),
        resolve_path(config.partners_file, "partners.csv"),
        resolve_path(config.bonus_file, "bonus_tiles.csv"),
    )
