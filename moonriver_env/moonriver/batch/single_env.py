"""One game of a one-game batch as a ``gymnasium.Env``, for the libraries' single-env checks."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium.vector import AutoresetMode

from moonriver_env.moonriver.batch.compact import Observations
from moonriver_env.moonriver.batch.games import BatchIllegalActionError
from moonriver_env.moonriver.batch.vector_env import MoonRiverVectorEnv, Opponents
from moonriver_env.moonriver.rules.config import GameConfig


class SingleGameEnv(gymnasium.Env[Observations, int]):
    """One game of a one-game batch as a ``gymnasium.Env`` (train with the vector envs)."""

    metadata = {"render_modes": []}

    def __init__(self, config: GameConfig | None = None, seat: int = 0,
                 opponents: Opponents = "random", reward: str = "win", illegal: str = "raise",
                 illegal_penalty: float = -1.0) -> None:
        if illegal not in ("raise", "penalty"):
            raise ValueError(f"illegal must be 'raise' or 'penalty', got {illegal!r}")
        self.vec = MoonRiverVectorEnv(1, config, seat, opponents, reward,
                                      autoreset_mode=AutoresetMode.SAME_STEP)
        self.observation_space = self.vec.single_observation_space
        self.action_space = self.vec.single_action_space
        self.illegal = illegal
        self.illegal_penalty = float(illegal_penalty)
        self._started = False

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Observations, dict[str, Any]]:
        """Start a game (from ``seed``), or continue with the next game of the batch."""
        super().reset(seed=seed)
        if seed is not None or not self._started:
            self.vec.reset(seed=seed if seed is not None else
                           int(self.np_random.integers(2**62)))
            self._started = True
        return self.vec.games.obs[0].copy(), {}

    def step(self, action: int) -> tuple[Observations, float, bool, bool, dict[str, Any]]:
        """One learner decision; an illegal one raises, or ends the episode if ``penalty``."""
        try:
            obs, rew, term, trunc, _ = self.vec.step(np.array([action]))
        except BatchIllegalActionError:
            if self.illegal == "raise":
                raise
            self._started = False
            return (self.vec.games.obs[0].copy(), self.illegal_penalty, True, False,
                    {"illegal_action": True})
        if term[0]:
            obs = self.vec.games.final_obs[:1].copy()
        return obs[0], float(rew[0]), bool(term[0]), bool(trunc[0]), {}

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """(2710,) bool legal actions."""
        mask: npt.NDArray[np.bool_] = self.vec.action_masks()[0]
        return mask
