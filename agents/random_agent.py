"""RandomAgent: uniform over the legal actions."""

from __future__ import annotations

import numpy as np

from agents.base import Observation
from moonriver_env.engine import Game


class RandomAgent:
    """Picks uniformly among the legal actions, from its own seeded generator."""

    def __init__(self, seed: int | None = None, name: str = "random") -> None:
        self.name = name
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed when a seed is given."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, game: Game, observation: Observation) -> int:
        """A uniformly random legal action id."""
        legal = observation["action_mask"].view(np.bool_).nonzero()[0]
        if legal.size == 0:
            raise ValueError("RandomAgent.act: no legal action in the mask (not this agent's "
                             "turn, or the game is over)")
        return int(legal[self.rng.integers(legal.size)])
