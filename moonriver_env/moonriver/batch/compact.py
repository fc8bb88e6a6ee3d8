"""The compact observation of batched games: uint8 rows the core writes, expanded to float32.

See docs/observation.md ("Compact observation").
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from moonriver_env.moonriver import observation
from moonriver_env.moonriver.core import _core
from moonriver_env.moonriver.observation import OBSERVATION_SIZE, VIEWS
from moonriver_env.moonriver.rules.components import NUM_COWS

Observations = npt.NDArray[np.float32]
OBSERVATION_KINDS = ("float32", "compact")
COMPACT_SIZE = int(_core.COMPACT_SIZE)
_O_SCORES_HIGH = OBSERVATION_SIZE
_O_NUM_PLOTS = _O_SCORES_HIGH + observation.MAX_PLAYERS
_O_NUM_PARTNERS = _O_NUM_PLOTS + 1


def _compact_scales() -> npt.NDArray[np.float64]:
    """Each float observation value's divisor of its compact integer (1: unscaled)."""
    scales = np.ones(OBSERVATION_SIZE, np.float64)
    for view in ("reserves", "columns"):  # a plot's number: its last feature
        scales[VIEWS[view].start + 13:VIEWS[view].stop:14] = observation.NUMBER_SCALE
    scales[VIEWS["reserve_size"].start:VIEWS["reserve_size"].stop] = 4.0
    scales[VIEWS["pile"].start:VIEWS["pile"].stop] = 5.0
    scales[VIEWS["scores"].start:VIEWS["scores"].stop] = observation.SCORE_SCALE
    context, game = VIEWS["context"].start, VIEWS["game"].start
    scales[context + 3:context + 5] = 2.0  # builds done, builds allowed
    scales[context + 5] = 3.0  # cowboy moves left
    scales[context + 8] = 2.0  # bonus tiles left
    scales[game] = observation.NUM_ROUNDS
    scales[game + 3] = NUM_COWS
    return scales


_SCALES = _compact_scales()
_SCORES = np.arange(VIEWS["scores"].start, VIEWS["scores"].stop)
_RANCHES = VIEWS["ranches"]
_FREE = np.arange(_RANCHES.start, _RANCHES.stop).reshape(_RANCHES.shape)[
    :, observation.RANCH_CHANNELS.index("free")].ravel()  # the free planes' places


def check_compact(data: Any) -> None:
    """Refuse the compact observation for data files whose values a byte cannot hold."""
    sizes = {"plot number": int(data.number.max(initial=0)), "plots in the box":
             data.num_plots, "partner tokens": data.num_partners}
    over = {name: value for name, value in sizes.items() if value > 255}
    if over:
        found = ", ".join(f"{name} {value}" for name, value in over.items())
        raise ValueError(f"observation='compact' holds values up to 255; these data files "
                         f"have {found}: use observation='float32'")


def observation_row(kind: str) -> tuple[int, type]:
    """The length and dtype of an observation row of ``kind`` ("float32" or "compact")."""
    return (COMPACT_SIZE, np.uint8) if kind == "compact" else (OBSERVATION_SIZE, np.float32)


def expand_observation(compact: npt.ArrayLike) -> Observations:
    """The float32 observation(s) of compact ones (uint8, last axis COMPACT_SIZE), exactly."""
    c = np.asarray(compact)
    if c.dtype != np.uint8 or c.ndim < 1 or c.shape[-1] != COMPACT_SIZE:
        raise ValueError(f"expand_observation takes uint8 rows of {COMPACT_SIZE} (the compact "
                         f"observation), got {c.dtype} of shape {c.shape}")
    raw = c[..., :OBSERVATION_SIZE].astype(np.float64)
    raw[..., _SCORES] += 256.0 * c[..., _O_SCORES_HIGH:_O_NUM_PLOTS]
    raw[..., _FREE] = c[..., _FREE].view(np.int8)  # a built cell off the ranch: -1
    raw /= _SCALES
    game = VIEWS["game"].start
    raw[..., game + 1] /= c[..., _O_NUM_PLOTS]  # plots left in the box / the game's plots
    raw[..., game + 2] /= c[..., _O_NUM_PARTNERS]  # partners in the pile / the game's partners
    return raw.astype(np.float32)
