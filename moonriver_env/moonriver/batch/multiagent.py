"""A typed multi-agent view of batched games for self-play: every seat a learner.

``MultiAgentGames(N, config)`` steps N games of the compiled core (one
:class:`~moonriver_env.moonriver.batch.games.BatchedGames` with every seat ``"learner"``) and
returns each
step's results as a :class:`BatchState`, the batched counterpart of pgx's ``State``:

- ``current_player`` (N,) int32: the seat to decide next in each game;
- ``observation`` (N, 4934) float32: each game seen by that seat (docs/observation.md);
- ``legal_action_mask`` (N, 2710) bool: that seat's legal actions;
- ``rewards`` (N, players) float32: every seat's reward of this step (0 until a game ends,
  then the PettingZoo env's end-of-game rewards for ``reward=`` "win" | "rank" | "score" |
  "margin");
- ``terminated`` (N,) bool: the game ended in this step and its next game already took its
  place (same-step autoreset: the other fields but ``rewards`` and ``final_observation``
  belong to the new game); ``truncated`` (N,) bool is always False (games have no step limit);
- ``final_observation`` (N, 4934) float32: on terminated rows, the ended game seen by the
  seat whose decision ended it (other rows are stale);
- ``env_id`` (N,) int64: which games the rows are (``arange(N)`` here; a part of the batch
  in :mod:`moonriver_env.moonriver.batch.async_env`).

Seeds are ``BatchedGames``'s: game g's k-th episode is ``core.Game(config, seed + g + N * k)``.
``reset(seed, seats=[...])`` may give games built-in or network seats (``"greedy"``, a
``NetworkSeat`` the agents package built), played inside the batch: their decisions are never
rows.
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
    """The current arrays of ``games`` as a :class:`BatchState` (copies, or with
    ``copy=False`` the batch's own arrays, overwritten by its next step)."""
    def out(arr: np.ndarray) -> np.ndarray:
        return arr.copy() if copy else arr

    return BatchState(env_id=env_id, current_player=out(games.player),
                      observation=out(games.obs),
                      legal_action_mask=out(games.mask.view(np.bool_)),
                      rewards=out(games.rewards), terminated=out(games.done),
                      truncated=np.zeros(games.num_games, np.bool_),
                      final_observation=out(games.final_obs))


class MultiAgentGames:
    """N games for self-play, every seat a learner, stepped in the core; see the module."""

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
        """Start every game (game g from ``seed + g``; ``seeds``/``seats`` as
        ``BatchedGames.reset``: per-game seeds without autoreset, per-game seat kinds)."""
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
