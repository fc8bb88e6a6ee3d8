"""Pure rules engine for Moon River (Python + numpy only)."""

from .actions import (
    ACTIONS,
    NUM_ACTIONS,
    Action,
    ActionCodec,
    Bonus,
    Build,
    CowboyMove,
    Desperado,
    Discard,
    Drought,
    Pass,
    Recruit,
    Select,
    Thief,
)
from .components import Face, PartnerKind, PlotKind, Resource, Terrain
from .config import GameConfig
from .data import DataFileError
from .game import Game, IllegalActionError
from .phase import Context, Phase
from .scoring import ScoreBreakdown

__all__ = ["ACTIONS", "NUM_ACTIONS", "Action", "ActionCodec", "Bonus", "Build", "Context",
           "CowboyMove", "DataFileError", "Desperado", "Discard", "Drought", "Face", "Game",
           "GameConfig", "IllegalActionError", "PartnerKind", "Pass", "Phase", "PlotKind",
           "Recruit", "Resource", "ScoreBreakdown", "Select", "Terrain", "Thief"]
