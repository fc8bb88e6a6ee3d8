"""One switch for the implementation behind the ``Game`` contract: ``backend="core" | "python"``.

See docs/core.md (``MOONRIVER_BACKEND`` sets the default at import).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from moonriver_env.moonriver.contract import MoonRiverGame
from moonriver_env.moonriver.observation import ObservationEncoder
from moonriver_env.moonriver.rules import Game as PythonGame
from moonriver_env.moonriver.rules import GameConfig

if TYPE_CHECKING:
    from moonriver_env.moonriver.core import Game as CoreGame

BACKENDS = ("core", "python")
BACKEND_ENV_VAR = "MOONRIVER_BACKEND"


def check_backend(backend: object) -> str:
    """``backend`` if it names an implementation, else a ValueError listing them."""
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r:.40}")
    return backend


def backend_from_env(environ: dict[str, str] | None = None) -> str:
    """The backend ``MOONRIVER_BACKEND`` names in ``environ`` (default os.environ), else "core"."""
    value = (os.environ if environ is None else environ).get(BACKEND_ENV_VAR)
    if value is None or value == "":
        return "core"
    if value not in BACKENDS:
        raise ValueError(f"environment variable {BACKEND_ENV_VAR} must be one of {BACKENDS}, "
                         f"got {value!r:.40}")
    return value


DEFAULT_BACKEND = backend_from_env()


def game_class(backend: str = DEFAULT_BACKEND) -> type[PythonGame] | type[CoreGame]:
    """The Game class of an implementation."""
    if check_backend(backend) == "python":
        return PythonGame
    from moonriver_env.moonriver.core import Game as _CoreGame

    return _CoreGame


def make_game(config: GameConfig | None = None, seed: int | None = None,
              backend: str = DEFAULT_BACKEND) -> MoonRiverGame:
    """A new game of ``config`` (None: the default variant) from ``seed`` on ``backend``."""
    return game_class(backend)(config, seed)


class Encoder(ObservationEncoder):
    """ObservationEncoder for games of either implementation (each game observes itself)."""

    def encode(self, game: MoonRiverGame, viewer: int,
               out: np.ndarray | None = None) -> np.ndarray:
        """Write the observation of ``viewer`` into ``out`` (allocated if None); return it."""
        return game.observe(viewer, out)
