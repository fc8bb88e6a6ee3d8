"""numpy's default generator inside the core (``_core.Pcg64``): the seed's words, and a numpy
``Generator``'s PCG64 state handed to the core and back, so the core's draws are the draws
numpy would make and the generator ends where numpy would leave it."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _core

_MASK64 = (1 << 64) - 1


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


def take_pcg64(rng: np.random.Generator) -> Any | None:
    """A core generator in ``rng``'s exact state (None unless its bit generator is PCG64)."""
    bits = rng.bit_generator
    if type(bits) is not np.random.PCG64:
        return None
    state = bits.state
    core = _core.Pcg64([0])
    s, inc = state["state"]["state"], state["state"]["inc"]
    core.state = (s >> 64, s & _MASK64, inc >> 64, inc & _MASK64, bool(state["has_uint32"]),
                  int(state["uinteger"]))
    return core


def give_back_pcg64(rng: np.random.Generator, core: Any) -> None:
    """Move ``rng`` on to the core generator's state (after its draws)."""
    s_hi, s_lo, inc_hi, inc_lo, has_uint32, uinteger = core.state
    rng.bit_generator.state = {"bit_generator": "PCG64",
                               "state": {"state": s_hi << 64 | s_lo, "inc": inc_hi << 64 | inc_lo},
                               "has_uint32": int(has_uint32), "uinteger": uinteger}
