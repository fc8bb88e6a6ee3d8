"""A batched search whose settings depend on the table: one ``BatchedSearch`` per player count."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from moonriver_env.moonriver.core import Game
from moonriver_env.moonriver.search import BatchedSearch, LeafBatch, SearchResult


class TableSearch:
    """``BatchedSearch``'s API over games of mixed table sizes: the games of each player count
    searched together with ``settings`` plus ``by_table(n)``, the tables one after another."""

    def __init__(self, games: Sequence[Game], seed: int, settings: Mapping[str, Any],
                 by_table: Callable[[int], Mapping[str, Any]]) -> None:
        games = list(games)
        if not games:
            raise ValueError("search: games must hold at least one game")
        counts = sorted({g.num_players for g in games})
        # each group keeps its games' places in the batch (seeding and the answers' rows)
        self.places = [np.array([i for i, g in enumerate(games) if g.num_players == n], np.int32)
                       for n in counts]
        self.searches = [BatchedSearch([games[i] for i in rows], seed=seed, indices=rows.tolist(),
                                       **{**settings, **by_table(n)})
                         for n, rows in zip(counts, self.places, strict=True)]
        self.size = len(games)
        self.turn = 0  # the group whose leaves are pending or next (torch leaves)
        self.evaluated = 0

    def phase_seconds(self) -> dict[str, float]:
        """Seconds spent in each phase so far, summed over the groups."""
        total: dict[str, float] = {}
        for search in self.searches:
            for phase, seconds in search.phase_seconds().items():
                total[phase] = total.get(phase, 0.0) + seconds
        return total

    def leaves(self) -> LeafBatch | None:
        """The next group's pending leaves (game indices in the whole batch), None when done."""
        while self.turn < len(self.searches):
            batch = self.searches[self.turn].leaves()
            if batch is not None:
                return LeafBatch(batch.observation, batch.mask, batch.seat,
                                 self.places[self.turn][batch.game], batch.num_players,
                                 batch.prior)
            self.turn += 1
        return None

    def evaluate(self, policy_logits: Any, values: Any) -> None:
        """Expand the pending leaves (of the group whose turn it is)."""
        if self.turn >= len(self.searches):
            raise ValueError("evaluate: no leaves are pending (call leaves() first)")
        self.searches[self.turn].evaluate(policy_logits, values)

    def run(self, net: Any) -> SearchResult:
        """Run every group's searches to their ends, leaves valued in the core by ``net``."""
        self.evaluated = 0
        for search in self.searches:
            search.run(net)
            self.evaluated += search.evaluated
        self.turn = len(self.searches)
        return self.result()

    def roots(self, greedy_prior: float | None = None) -> tuple[np.ndarray, np.ndarray,
                                                                np.ndarray | None]:
        """Each game's root (``BatchedSearch.roots``), in the batch's order."""
        parts = [search.roots(greedy_prior) for search in self.searches]
        obs, mask = (self._rows([p[k] for p in parts]) for k in (0, 1))
        priors = [p[2] for p in parts]
        return obs, mask, None if priors[0] is None else self._rows(priors)

    def result(self) -> SearchResult:
        """Each game's chosen action and targets, in the batch's order."""
        parts = [search.result() for search in self.searches]
        return SearchResult(*(self._rows([getattr(p, name) for p in parts]) for name in
                              ("action", "policy", "root_value", "visits", "searched")))

    def _rows(self, parts: list[Any]) -> np.ndarray:
        """The groups' row arrays put back in the batch's order."""
        first = np.asarray(parts[0])
        out = np.empty((self.size, *first.shape[1:]), first.dtype)
        for rows, part in zip(self.places, parts, strict=True):
            out[rows] = part
        return out
