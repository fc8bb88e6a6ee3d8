"""numpy's default generator inside the core (``_core.Pcg64``, draw for draw the generator of
``numpy.random.default_rng(seed)``) and the seed's words it is seeded from."""

from __future__ import annotations

from typing import Any

import moonriver_env.moonriver.core._core as _core


def seed_words(seed: int) -> list[int]:
    """``seed`` (a non-negative int) as numpy's SeedSequence reads it: little-endian 32-bit
    words, one zero word for 0."""
    words = [seed & 0xFFFFFFFF]
    seed >>= 32
    while seed:
        words.append(seed & 0xFFFFFFFF)
        seed >>= 32
    return words


def default_rng(seed: int) -> Any:
    """The core's twin of ``numpy.random.default_rng(seed)``."""
    return _core.Pcg64(seed_words(seed))
