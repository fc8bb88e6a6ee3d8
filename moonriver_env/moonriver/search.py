"""A batched search with network-valued leaves, its trees in the compiled core.

See docs/core.md ("Batched search with network-valued leaves").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from moonriver_env.common.validate import check_time_limit
from moonriver_env.moonriver.core import Game, _core

__all__ = ["ALGORITHMS", "BatchedSearch", "LeafBatch", "SearchResult"]

ALGORITHMS = ("gumbel", "puct")
NUM_ACTIONS = int(_core.NUM_ACTIONS)
MAX_SEATS = 4


@dataclass(frozen=True)
class LeafBatch:
    """The pending leaves, one row per unfinished game, in game order."""

    observation: np.ndarray  # float32 (M, 4934): the leaf seen by the seat to move there
    mask: np.ndarray  # int8 (M, 2710): its legal ids
    seat: np.ndarray  # int32 (M,): the seat to move
    game: np.ndarray  # int32 (M,): the game's index in the batch
    num_players: np.ndarray  # int32 (M,)
    prior: np.ndarray | None = None  # float32 (M, 2710): Greedy's prior (greedy_prior= only)

    def __len__(self) -> int:
        """The number of leaves."""
        return int(self.seat.shape[0])


@dataclass(frozen=True)
class SearchResult:
    """Each game's decision and training targets."""

    action: np.ndarray  # int64 (G,): the chosen id
    policy: np.ndarray  # float32 (G, 2710): the improved policy (zero off the legal ids)
    root_value: np.ndarray  # float32 (G, 4): per-seat value (NaN rows: forced, not searched)
    visits: np.ndarray  # int32 (G, 2710): the root's visit counts
    searched: np.ndarray  # bool (G,): False where the root had one legal id (no search)


def _count(value: object, name: str, low: int) -> int:
    """An int >= ``low`` (bools refused), else ValueError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"search: {name} must be an int >= {low} (got {value!r})")
    if value < low:
        raise ValueError(f"search: {name} must be an int >= {low} (got {value})")
    return int(value)


def _constant(value: Any, name: str, positive: bool = False) -> float:
    """A finite float >= 0 (> 0 with ``positive``), else ValueError naming ``name``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"search: {name} must be a number (got {value!r})") from None
    if not math.isfinite(number) or number < 0 or (positive and number == 0):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"search: {name} must be finite and {bound} (got {value!r})")
    return number


def _core_game(game: object, index: int) -> Any:
    """The compiled state of one of the games (a moonriver_env.moonriver.core.Game, not over)."""
    if not isinstance(game, Game):
        raise ValueError(f"search: games[{index}] must be a moonriver_env.moonriver.core.Game "
                         f"(backend='core'), got {type(game).__name__}")
    if game.is_over:
        raise ValueError(f"search: games[{index}] is over (search needs a decision to make)")
    return game.native


def _rows(array: npt.ArrayLike, name: str, rows: int, cols: int) -> np.ndarray:
    """``array`` as C-contiguous float32 of shape (rows, cols), else ValueError."""
    out = np.ascontiguousarray(np.asarray(array, dtype=np.float32))
    if out.shape != (rows, cols):
        raise ValueError(f"evaluate: {name} must have shape ({rows}, {cols}) "
                         f"(one row per pending leaf), got {out.shape}")
    return out


class BatchedSearch:
    """One search per game, the leaves of all games valued together by the caller."""

    def __init__(self, games: Sequence[Game], simulations: int = 32, seed: int = 0,
                 algorithm: str = "gumbel", max_considered: int = 16, c_visit: float = 50.0,
                 c_scale: float = 1.0, c_puct: float = 1.5, gumbel_scale: float = 1.0,
                 threads: int = 1, indices: Sequence[int] | None = None,
                 greedy_prior: float | None = None, time_limit: float = 0.0,
                 timers: bool = False, rollout_weight: float = 0.0, rollout_depth: int = 0,
                 rollout_temperature: float = 10.0) -> None:
        """Start one search per game (``indices``: each game's place in the seeding)."""
        # greedy_prior: leaves also carry agents.pretrained.greedy_prior with this tie-break
        # weight; time_limit > 0: seconds after which each search stops (one simulation at least);
        # rollout_weight > 0: each leaf's value is (1 - w) x the network's + w x the softmax of
        # the running totals / rollout_temperature points after rollout_depth random decisions
        # (0: to the end of the game; the core refuses a weight over 1).
        if algorithm not in ALGORITHMS:
            raise ValueError(f"search: algorithm must be one of {', '.join(ALGORITHMS)} "
                             f"(got {algorithm!r})")
        games = list(games)
        if not games:
            raise ValueError("search: games must hold at least one game")
        cores = [_core_game(g, i) for i, g in enumerate(games)]
        order = list(range(len(games))) if indices is None else [
            _count(i, "indices[]", 0) for i in indices]
        if len(order) != len(games):
            raise ValueError(f"search: indices must hold one int per game ({len(games)}), "
                             f"got {len(order)}")
        self._search = _core.AzSearch(
            cores, order, _count(simulations, "simulations", 1),
            _count(seed, "seed", 0) % 2**64, algorithm == "gumbel",
            _count(max_considered, "max_considered", 1), _constant(c_visit, "c_visit"),
            _constant(c_scale, "c_scale", positive=True), _constant(c_puct, "c_puct"),
            _constant(gumbel_scale, "gumbel_scale"), _count(threads, "threads", 1),
            time_limit=check_time_limit(time_limit), timers=bool(timers),
            rollout_weight=_constant(rollout_weight, "rollout_weight"),
            rollout_depth=_count(rollout_depth, "rollout_depth", 0),
            rollout_temperature=_constant(rollout_temperature, "rollout_temperature",
                                          positive=True))
        self._prior = None if greedy_prior is None else _constant(greedy_prior, "greedy_prior")
        self._pending = 0
        self.evaluated = 0  # leaves valued inside the core by run()

    @property
    def num_games(self) -> int:
        """The number of games searched."""
        return int(self._search.num_games)

    def phase_seconds(self) -> dict[str, float]:
        """Seconds spent in each phase so far, summed over the games (zeros unless ``timers``)."""
        return dict(self._search.phase_seconds())

    def leaves(self) -> LeafBatch | None:
        """Run every unfinished search to its next leaf; the leaves, or None when done."""
        out = self._search.leaves()
        if out is None:
            self._pending = 0
            return None
        obs, mask, seat, game, players = cast(tuple[np.ndarray, ...], out)  # typed object
        prior = None if self._prior is None else cast(np.ndarray,
                                                       self._search.leaf_priors(self._prior))
        batch = LeafBatch(obs, mask, seat, game, players, prior)
        self._pending = len(batch)
        return batch

    def evaluate(self, policy_logits: Any, values: Any) -> None:
        """Expand the leaves with logits (M, 2710); back up ``values`` (M, 4) win shares."""
        if self._pending == 0:
            raise ValueError("evaluate: no leaves are pending (call leaves() first)")
        logits = _rows(policy_logits, "policy_logits", self._pending, NUM_ACTIONS)
        seats = _rows(values, "values", self._pending, MAX_SEATS)
        self._search.evaluate(logits, seats)
        self._pending = 0

    def run(self, net: Any) -> SearchResult:
        """Run every search to its end, leaves valued in the core by ``net`` (``_core.AzNet``)."""
        if self._pending:
            raise ValueError("run: leaves are pending (evaluate them first)")
        if not isinstance(net, _core.AzNet):
            raise ValueError(f"run: net must be a moonriver_env.moonriver.core._core.AzNet "
                             f"(agents.az.NumpyAZNet.core), got {type(net).__name__}")
        if net.uses_prior and self._prior is None:
            raise ValueError("run: this network adds the greedy prior; make the search with "
                             "greedy_prior=")
        self.evaluated = int(self._search.run(net, self._prior or 0.0))
        return self.result()

    def roots(self, greedy_prior: float | None = None) -> tuple[np.ndarray, np.ndarray,
                                                                np.ndarray | None]:
        """Each game's root by its player to move: observation (N, 4934), mask (N, 2710) and,
        with ``greedy_prior`` (the tie-break weight), Greedy's prior (N, 2710; else None)."""
        weight = None if greedy_prior is None else _constant(greedy_prior, "greedy_prior")
        obs, mask, prior = cast(tuple[Any, ...], self._search.roots(weight))
        return obs, mask, prior

    def leaf_game(self, index: int) -> Any:
        """A copy of the ``index``-th pending leaf's compiled state (tests, debugging)."""
        if not 0 <= index < self._pending:
            raise ValueError(f"leaf_game: index must be in [0, {self._pending}) (got {index})")
        return self._search.leaf_state(index)

    def result(self) -> SearchResult:
        """Each game's chosen action and targets (after leaves() returned None)."""
        action, policy, root_value, visits, searched = self._search.result()
        return SearchResult(action, policy, root_value, visits, searched.astype(bool))
