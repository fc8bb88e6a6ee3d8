"""Statistics the tournaments and benchmarks report: Wilson and normal 95% intervals."""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959964


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (95% by default)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: np.ndarray, low: float = -math.inf, high: float = math.inf,
                  z: float = 1.96) -> tuple[float, float, float]:
    """Mean and its normal interval (95% by default), cut to the range the values can take."""
    half = z * float(values.std(ddof=1)) / math.sqrt(values.size)
    mean = float(values.mean())
    return mean, max(low, mean - half), min(high, mean + half)
