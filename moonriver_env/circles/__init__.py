"""Rules engine for Circles: Far West (pure Python + numpy; see docs/circles.md).

``image`` and ``gym_env`` are not imported here, so the engine needs only numpy."""

from .actions import (
    Action,
    ActionCodec,
    Bet,
    Buy,
    Deposit,
    Dig,
    Fold,
    Pass,
    Stake,
    Steal,
    Throw,
    Tickets,
    Withdraw,
    actions_for,
)
from .config import ITEMS, CirclesConfig, Space
from .game import CirclesGame, ContestStage, Entry, IllegalActionError, Phase, coins
from .skill import flick_outcomes, out_probability

__all__ = ["ITEMS", "Action", "ActionCodec", "Bet", "Buy", "CirclesConfig", "CirclesGame",
           "ContestStage", "Deposit", "Dig", "Entry", "Fold", "IllegalActionError", "Pass", "Phase",
           "Space", "Stake", "Steal", "Throw", "Tickets", "Withdraw", "actions_for", "coins",
           "flick_outcomes", "out_probability"]
