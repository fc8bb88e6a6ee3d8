"""The flick's skill model: where a marble flicked with an intended distance k ends up.

See docs/circles.md (How the flick is modelled)."""

from __future__ import annotations

import bisect
from functools import lru_cache

import numpy as np

from .config import CirclesConfig

OUT = -1  # travel of a marble that left the ring


def out_probability(config: CirclesConfig, k: int) -> float:
    """Probability that a flick aimed at ``k`` spaces leaves the ring."""
    return min(1.0, config.out_slope * max(0, k - config.out_free))


def spread(config: CirclesConfig, k: int) -> int:
    """Half-width ``w`` of the deviation of a flick aimed at ``k``."""
    return config.spread_base + k // config.spread_step


def flick_outcomes(config: CirclesConfig, k: int) -> dict[int, float]:
    """Probability of each travel ``t`` (``OUT`` for leaving the ring) of a flick aimed at k."""
    p_out = out_probability(config, k)
    w = spread(config, k)
    out: dict[int, float] = {OUT: p_out} if p_out > 0 else {}
    for delta in range(-w, w + 1):
        t = max(0, k + delta)
        out[t] = out.get(t, 0.0) + (1.0 - p_out) * (w + 1 - abs(delta)) / (w + 1) ** 2
    return out


@lru_cache(maxsize=1024)  # (config, aim) pairs: 19 per Far West config
def _table(config: CirclesConfig, k: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
    outcomes = flick_outcomes(config, k)
    travels = tuple(sorted(outcomes))
    cumulative = tuple(np.cumsum([outcomes[t] for t in travels]).tolist())
    return travels, cumulative


def sample_travel(config: CirclesConfig, k: int, rng: np.random.Generator) -> int:
    """One flick aimed at ``k``: the travel, or ``OUT``; one draw from ``rng``."""
    travels, cumulative = _table(config, k)
    i = bisect.bisect_right(cumulative, float(rng.random()))
    return travels[min(i, len(travels) - 1)]  # guards the last sum's rounding
