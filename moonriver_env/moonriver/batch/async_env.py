"""Asynchronous stepping of batched games in the EnvPool manner: ``send(actions, env_id)`` and
``recv()`` over parts of ``batch_size`` games, each stepped by a worker thread.

See docs/vector.md ("Async stepping (EnvPool-style)").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

import numpy as np
import numpy.typing as npt

from moonriver_env.moonriver.batch.games import BatchedGames, check_int
from moonriver_env.moonriver.batch.multiagent import BatchState, batch_state
from moonriver_env.moonriver.batch.seats import SeatLike
from moonriver_env.moonriver.core import Game as CoreGame
from moonriver_env.moonriver.rules.config import GameConfig


class _Part(BatchedGames):
    """Games ``offset .. offset + n - 1`` of a pool of ``total``, seeded as the pool's games."""

    def __init__(self, offset: int, total: int, num_games: int, *args: Any) -> None:
        super().__init__(num_games, *args)
        self.offset = offset
        self._stride = total  # game g's k-th episode (episode_seed, the core's set-ups)
        self.env_id = np.arange(offset, offset + num_games, dtype=np.int64)


class AsyncBatchedGames:
    """``num_games`` games in parts of ``batch_size``, stepped by workers (EnvPool's send/recv)."""

    def __init__(self, num_games: int, batch_size: int | None = None,
                 config: GameConfig | None = None, seats: Sequence[SeatLike] | None = None,
                 reward: str = "win", threads: int = 1, workers: int | None = None,
                 copy: bool = True) -> None:
        self.num_games = check_int("num_games", num_games, 1)
        size = self.num_games if batch_size is None else batch_size
        self.batch_size = check_int("batch_size", size, 1, self.num_games)
        if self.num_games % self.batch_size:
            raise ValueError(f"batch_size must divide num_games ({self.num_games}) into equal "
                             f"parts, got {self.batch_size}")
        parts = self.num_games // self.batch_size
        self.workers = check_int("workers", parts if workers is None else workers, 1)
        self.copy = copy
        self.parts = [_Part(p * self.batch_size, self.num_games, self.batch_size, config, seats,
                            reward, threads) for p in range(parts)]
        self.config = self.parts[0].config
        self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="moonriver-step")
        self._in_flight: dict[int, Future[None]] = {}  # part -> its step or reset, in send order
        self._started = False
        self._closed = False

    # ------------------------------------------------------------------ reset
    def async_reset(self, seed: int = 0) -> None:
        """Start every game (game g from ``seed + g``) on the workers; ``recv`` returns parts."""
        seed = check_int("seed", seed, 0)
        self._check_open()
        if self._in_flight:
            raise RuntimeError(f"{len(self._in_flight)} part(s) still stepping: recv() them "
                               "before reset")
        for part in self.parts:
            self._in_flight[part.offset // self.batch_size] = self._executor.submit(
                part.reset, seed + part.offset)
        self._started = True

    def reset(self, seed: int = 0) -> BatchState:
        """Start every game and wait: the state of all ``num_games`` games, by env id."""
        self.async_reset(seed)
        return self._recv_all()

    def _recv_all(self) -> BatchState:
        """Every part in flight received: all their games' state, by env id (or an error)."""
        wait(list(self._in_flight.values()))
        states, errors = [], []
        for p in sorted(self._in_flight):
            try:
                states.append(self._collect(p))
            except Exception as exc:  # the part is back and unchanged
                errors.append(exc)
        if errors:
            raise errors[0]
        return BatchState(*(np.concatenate([getattr(s, f.name) for s in states])
                            for f in dataclasses.fields(BatchState)))

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this AsyncBatchedGames is closed: make a new one")

    # ------------------------------------------------------------- send/recv
    def send(self, actions: npt.ArrayLike, env_id: npt.ArrayLike) -> None:
        """Step the games ``env_id`` (whole parts, as ``recv`` gave them) on workers; no wait."""
        self._check_open()
        if not self._started:
            raise RuntimeError("call async_reset(seed) or reset(seed) before send()")
        ids = np.asarray(env_id)
        acts = np.asarray(actions)
        if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer) or ids.size == 0:
            raise ValueError(f"env_id must be a non-empty 1-d array of integer game ids, got "
                             f"{ids.dtype} array of shape {ids.shape}")
        if acts.shape != ids.shape or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be {ids.size} integer action ids (one per env_id), "
                             f"got {acts.dtype} array of shape {acts.shape}")
        for p, order in self._parts_of(ids).items():
            part = self.parts[p]
            local = np.empty(self.batch_size, np.int64)
            local[ids[order] - part.offset] = acts[order]
            self._in_flight[p] = self._executor.submit(part.step, local)

    def _parts_of(self, ids: np.ndarray) -> dict[int, np.ndarray]:
        """Each part named by ``ids`` -> the positions of its games in ``ids``, checked."""
        if ids.min() < 0 or ids.max() >= self.num_games:
            raise ValueError(f"env_id must hold game ids in 0..{self.num_games - 1}, got "
                             f"{int(ids.min() if ids.min() < 0 else ids.max())}")
        if np.unique(ids).size != ids.size:
            raise ValueError("env_id must not repeat a game")
        which = ids // self.batch_size
        out: dict[int, np.ndarray] = {}
        for p in np.unique(which).tolist():
            order = np.flatnonzero(which == p)
            games = f"games {p * self.batch_size}..{(p + 1) * self.batch_size - 1}"
            if order.size != self.batch_size:
                raise ValueError(f"env_id must name whole parts of {self.batch_size} games (as "
                                 f"recv returned them); {games} are named {order.size} times")
            if p in self._in_flight:
                raise ValueError(f"{games} are still stepping: recv() them before sending again")
            out[p] = order
        return out

    def recv(self) -> BatchState:
        """Wait for a sent part to finish and return its games' state (or raise its error)."""
        if not self._in_flight:
            raise RuntimeError("nothing to recv: send() actions (or async_reset) first")
        done, _ = wait(self._in_flight.values(), return_when=FIRST_COMPLETED)
        return self._collect(next(q for q, fut in self._in_flight.items() if fut in done))

    def _collect(self, p: int) -> BatchState:
        """Part ``p``, finished, taken out of flight: its games' state, or its own error."""
        self._in_flight.pop(p).result()
        part = self.parts[p]
        return batch_state(part, part.env_id.copy(), self.copy)

    def step(self, actions: npt.ArrayLike, env_id: npt.ArrayLike | None = None) -> BatchState:
        """``send(actions, env_id)`` then ``recv()``; ``env_id`` None: every game, by env id."""
        if env_id is not None:
            self.send(actions, env_id)
            return self.recv()
        self.send(actions, np.arange(self.num_games))
        return self._recv_all()

    # ----------------------------------------------------------------- views
    def _part(self, env_id: int) -> tuple[_Part, int]:
        g = check_int("env_id", env_id, 0, self.num_games - 1)
        p = g // self.batch_size
        if p in self._in_flight:
            raise RuntimeError(f"game {g} is stepping: recv() its part first")
        return self.parts[p], g - self.parts[p].offset

    def game(self, env_id: int) -> CoreGame:
        """A copy of game ``env_id``'s current state as a core Game (its part not stepping)."""
        part, g = self._part(env_id)
        return part.game(g)

    def episode_seed(self, env_id: int, k: int | None = None) -> int:
        """The core seed of game ``env_id``'s k-th episode (its current one when k is None)."""
        part, g = self._part(env_id)
        return part.episode_seed(g, k)

    def close(self) -> None:
        """Wait for the parts still stepping (their results dropped) and stop the worker threads."""
        self._closed = True
        self._executor.shutdown(wait=True)
        self._in_flight.clear()

    def __enter__(self) -> AsyncBatchedGames:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
