"""RandomAgent: uniform over the legal actions."""

from __future__ import annotations

import numpy as np
from moonriver_env.agents.base import Observation, SeededAgent

from moonriver_env.common.contract import TableGame


class RandomAgent(SeededAgent):
    """Picks uniformly among the legal actions, from its own seeded generator."""

    def __init__(self, seed: int | None = None, name: str = "random") -> None:
        super().__init__(seed, name)

    def act(self, game: TableGame, observation: Observation) -> int:
        """A uniformly random legal action id."""
        legal = observation["action_mask"].view(np.bool_).nonzero()[0]
        if legal.size == 0:
            raise ValueError("RandomAgent.act: no legal action in the mask (not this agent's "
                             "turn, or the game is over)")
        return int(legal[self.rng.integers(legal.size)])


def random_from_spec(spec: str, seed: int | None = None) -> RandomAgent:
    """``random`` (either game)."""
    return RandomAgent(seed=seed, name=spec)
