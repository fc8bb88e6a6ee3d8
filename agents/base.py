"""The Agent protocol used everywhere: tournaments, wrapper opponents, notebooks, CLI."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from moonriver_env.common.contract import ActionMask, TableGame

__all__ = ["ActionMask", "Agent", "CallableAgent", "Observation", "SeededAgent", "TimeCapped",
           "as_agent"]

Observation = Mapping[str, np.ndarray]
GameT_contra = TypeVar("GameT_contra", bound=TableGame, contravariant=True)


@runtime_checkable
class Agent(Protocol[GameT_contra]):
    """Chooses an action id for the player to act; never mutates the game (search a clone)."""

    name: str

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; ``seed`` reseeds the agent's own generator."""

    def act(self, game: GameT_contra, observation: Observation) -> int:
        """The chosen action id (legal under ``observation["action_mask"]``)."""


@runtime_checkable
class TimeCapped(Protocol):
    """A searching agent that stops after ``time_limit`` seconds a decision (0: no cap)."""

    time_limit: float


class CallableAgent:
    """Adapts a plain function ``f(observation) -> action id`` to the Agent protocol."""

    def __init__(self, fn: Callable[[Observation], int], name: str = "callable") -> None:
        self.fn = fn
        self.name = name

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reset."""

    def act(self, game: TableGame, observation: Observation) -> int:
        """Delegate to the function; its answer must be an integer id (never coerced)."""
        action = self.fn(observation)
        if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
            action = action.item()
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise TypeError(f"{self.name} returned {action!r:.40}; an agent's action is an "
                            "integer id (int or numpy integer; not bool, float or str)")
        return int(action)


def as_agent(obj: Agent[Any] | Callable[[Observation], int]) -> Agent[Any]:
    """An Agent from an agent or a callable; anything else is a clear error."""
    if isinstance(obj, Agent):
        return obj
    if callable(obj):
        return CallableAgent(obj, getattr(obj, "__name__", "callable"))
    raise TypeError(f"an opponent must be an Agent (reset/act) or a callable "
                    f"f(observation) -> action id, got {obj!r}")


class SeededAgent:
    """Base for agents that draw from their own seeded generator."""

    def __init__(self, seed: int | None = None, name: str = "agent") -> None:
        self.name = name
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed when a seed is given."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
