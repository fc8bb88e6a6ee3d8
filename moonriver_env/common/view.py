"""Observation plumbing of any game: views (slices) of the vector, lazy observations, caches."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Generic, Protocol, TypeVar

import numpy as np

from .contract import ActionMask, TableGame

ViewSpec = tuple[str, tuple[int, ...], str]  # name, shape, doc
G = TypeVar("G", bound=TableGame)
G_contra = TypeVar("G_contra", bound=TableGame, contravariant=True)
K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True)
class View:
    """One named slice of the observation vector."""

    name: str
    start: int
    stop: int
    shape: tuple[int, ...]
    doc: str


def layout(specs: Sequence[ViewSpec]) -> dict[str, View]:
    """Views laid out one after the other in the order given, from offset 0."""
    views, start = {}, 0
    for name, shape, doc in specs:
        stop = start + int(np.prod(shape))
        views[name] = View(name, start, stop, shape, doc)
        start = stop
    return views


class Encoder(Protocol[G_contra]):
    """Writes a player's observation vector of a game."""

    def encode(self, game: G_contra, player: int) -> np.ndarray:
        """The observation vector of ``player``."""


@lru_cache(maxsize=4096)  # few distinct choice sets recur: their masks are shared
def choice_mask(width: int, choices: tuple[int, ...]) -> ActionMask:
    """The read-only mask of ``width`` actions with ``choices`` set, shared between callers."""
    mask = np.zeros(width, dtype=np.int8)
    mask[list(choices)] = 1
    # Over immutable bytes: no consumer can make it writable again.
    return np.frombuffer(mask.tobytes(), dtype=np.int8)


def bounded_store(cache: dict[K, V], key: K, value: V, limit: int) -> V:
    """``cache[key] = value``, the cache emptied first if it holds ``limit`` entries; ``value``."""
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value
    return value


def no_moves(width: int) -> ActionMask:
    """The read-only all-zeros mask of ``width`` actions: a player not to act, or a game over."""
    return choice_mask(width, ())


class LazyObservation(Mapping[str, np.ndarray], Generic[G]):
    """A player's ``{"observation", "action_mask"}``, the vector encoded only when read."""

    def __init__(self, encoder: Encoder[G], game: G, player: int) -> None:
        self._encoder, self._game, self._player = encoder, game, player
        self._mask = game.legal_mask() if game.current_player == player else None
        self._vector: np.ndarray | None = None

    def __getitem__(self, key: str) -> np.ndarray:
        if key == "action_mask":
            if self._mask is None:
                self._mask = no_moves(self._game.legal_mask().size)
            return self._mask
        if key == "observation":
            if self._vector is None:
                self._vector = self._encoder.encode(self._game, self._player)
            return self._vector
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(("observation", "action_mask"))

    def __len__(self) -> int:
        return 2
