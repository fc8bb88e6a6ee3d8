"""The core's twin of ``numpy.random.default_rng(seed)`` (``_core.Pcg64``) and its seed words."""

from __future__ import annotations

from typing import Any

import moonriver_env.moonriver.core._core as _core


def seed_words(seed: int) -> list[int]:
    """``seed`` (an int >= 0) as numpy's SeedSequence reads it: little-endian 32-bit words."""
    words = [seed & 0xFFFFFFFF]
    seed >>= 32
    while seed:
        words.append(seed & 0xFFFFFFFF)
        seed >>= 32
    return words


def default_rng(seed: int) -> Any:
    """The core's twin of ``numpy.random.default_rng(seed)``."""
    return _core.Pcg64(seed_words(seed))
