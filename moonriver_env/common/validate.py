"""Validators every game's config, environments and doors share; each error says what is allowed."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from .errors import IllegalActionError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_C = TypeVar("_C", bound="DataclassInstance")  # a config dataclass


def config_from_dict(cls: type[_C], d: Mapping[str, object]) -> _C:
    """A config dataclass from its fields by name; an unknown key: ValueError naming the allowed."""
    known = {f.name for f in fields(cls)}
    unknown = set(d) - known
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown fields {sorted(unknown)}; allowed: "
                         f"{sorted(known)}")
    return cls(**d)


def action_id(action: object, num_actions: int) -> int:
    """An action's int id from a (numpy) integer, else IllegalActionError; no range check."""
    if type(action) is int:
        return action
    if isinstance(action, np.integer) or (
            isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu"):
        return int(action)
    raise IllegalActionError(f"{action!r:.40}", f"an action is an integer id 0..{num_actions - 1} "
                             "(int or numpy integer; not bool, float or str)")


def game_seed(seed: object) -> int:
    """A game's seed: a non-negative integer (never bool), or fresh 63-bit entropy for None."""
    if seed is None:
        entropy = np.random.SeedSequence().entropy  # an int when drawn fresh
        assert isinstance(entropy, int)
        return entropy % (2**63)
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    return int(seed)


def check_seed(seed: object) -> int | None:
    """A reset seed: None or a non-negative integer (numpy integers too, never bool)."""
    if seed is None:
        return None
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
        return int(seed)
    raise ValueError(f"seed must be None or a non-negative integer, got {seed!r}")


def check_time_limit(time_limit: object) -> float:
    """A search's cap on the seconds of one decision (0: none); else a ValueError."""
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float, np.integer,
                                                                   np.floating)) \
            or not math.isfinite(time_limit) or time_limit < 0:
        raise ValueError(f"time_limit must be a finite number of seconds >= 0 (0: no limit), "
                         f"got {time_limit!r:.40}")
    return float(time_limit)
