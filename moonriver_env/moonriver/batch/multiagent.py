"""A typed multi-agent view of batched games for self-play: every seat a learner.

Each step returns a :class:`BatchState` (pgx's ``State``). See docs/vector.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from moonriver_env.moonriver.batch.compact import Observations
from moonriver_env.moonriver.batch.games import BatchedGames
from moonriver_env.moonriver.batch.seats import SeatLike
from moonriver_env.moonriver.core import Game as CoreGame
from moonriver_env.moonriver.rules.config import GameConfig

LegalMask = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class BatchState:
    """One step's results for a batch of games, every seat's rewards included (pgx's State)."""

    env_id: npt.NDArray[np.int64]
    current_player: npt.NDArray[np.int32]
    observation: Observations
    legal_action_mask: LegalMask
    rewards: npt.NDArray[np.float32]
    terminated: npt.NDArray[np.bool_]
    truncated: npt.NDArray[np.bool_]
    final_observation: Observations

    @property
    def num_players(self) -> int:
        """Seats per game (the width of ``rewards``)."""
        return int(self.rewards.shape[1])


def batch_state(games: BatchedGames, env_id: npt.NDArray[np.int64],
                copy: bool = True) -> BatchState:
    """The current arrays of ``games`` as a :class:`BatchState` (copies unless ``copy=False``)."""
    def out(arr: np.ndarray) -> np.ndarray:
        return arr.copy() if copy else arr

    return BatchState(env_id=env_id, current_player=out(games.player),
                      observation=out(games.obs),
                      legal_action_mask=out(games.mask.view(np.bool_)),
                      rewards=out(games.rewards), terminated=out(games.done),
                      truncated=np.zeros(games.num_games, np.bool_),
                      final_observation=out(games.final_obs))


class MultiAgentGames:
    """N games for self-play, every seat a learner, stepped in the core."""

    def __init__(self, num_games: int, config: GameConfig | None = None, reward: str = "win",
                 threads: int = 1, autoreset: bool = True, copy: bool = True) -> None:
        self.games = BatchedGames(num_games, config, None, reward, threads, autoreset)
        self.num_games = self.games.num_games
        self.config = self.games.config
        self.num_players = self.config.num_players
        self.copy = copy
        self.env_id = np.arange(self.num_games, dtype=np.int64)

    def reset(self, seed: int = 0, *, seeds: Sequence[int] | None = None,
              seats: Sequence[Sequence[SeatLike]] | None = None) -> BatchState:
        """Start every game (game g from ``seed + g``; ``seeds``, ``seats`` as BatchedGames')."""
        self.games.reset(seed, seeds=seeds, seats=seats)
        return self.state()

    def step(self, actions: npt.ArrayLike) -> BatchState:
        """Apply one decision per game (N action ids, each for that game's current player)."""
        self.games.step(actions)
        return self.state()

    def state(self) -> BatchState:
        """The batch's current :class:`BatchState`."""
        if self.games.seed is None:
            raise RuntimeError("call reset(seed) first")
        return batch_state(self.games, self.env_id, self.copy)

    def episode_seed(self, g: int, k: int | None = None) -> int:
        """The core seed of game g's k-th episode (its current one when k is None)."""
        return self.games.episode_seed(g, k)

    def game(self, g: int) -> CoreGame:
        """A copy of game g's current state as a core Game (records, text, checks)."""
        return self.games.game(g)
