"""Self-play by search: a batch of core games of mixed variants, a batched search at every
decision, recorded with its targets. Forced decisions, and the seats Greedy plays, are played
without a search, not kept."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from moonriver_env.agents.az import SEATS
from moonriver_env.agents.greedy import GreedyAgent
from moonriver_env.training.variants import variant_config

from moonriver_env.moonriver.core import Game
from moonriver_env.moonriver.observation import OBSERVATION_SIZE
from moonriver_env.moonriver.rules import NUM_ACTIONS
from moonriver_env.moonriver.search import LeafBatch, SearchResult

# one step's recorded decisions, a row per live game: game indices, movers, observations,
# masks, policy targets, Greedy priors
Step = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
# (leaves) -> (logits (M, 2710), win shares by player id (M, 4)): the network's answer
Evaluate = Callable[[LeafBatch], tuple[np.ndarray, np.ndarray]]


class Search(Protocol):
    """What self-play asks of a search: ``BatchedSearch``'s API (``tables.TableSearch`` too)."""

    evaluated: int

    def phase_seconds(self) -> dict[str, float]: ...
    def leaves(self) -> LeafBatch | None: ...
    def evaluate(self, policy_logits: Any, values: Any) -> None: ...
    def run(self, net: Any) -> SearchResult: ...
    def result(self) -> SearchResult: ...
    def roots(self, greedy_prior: float | None = None) -> tuple[np.ndarray, np.ndarray,
                                                                np.ndarray | None]: ...


# (games, seed) -> a search of those games
MakeSearch = Callable[[list[Game], int], Search]


@dataclass
class Samples:
    """Recorded decisions with their targets, as arrays of one length."""

    obs: np.ndarray  # (n, 4934) float32: the mover's observation
    mask: np.ndarray  # (n, 2710) int8: the legal actions
    policy: np.ndarray  # (n, 2710) float32: the search's improved policy
    outcome: np.ndarray  # (n, 4) float32: win share by seat relative to the mover
    margin: np.ndarray  # (n, 4) float32: score minus the mean, by relative seat (points)
    num_players: np.ndarray  # (n,) int32
    prior: np.ndarray  # (n, 2710) float32: Greedy's prior (zeros for a network without it)

    @classmethod
    def empty(cls) -> Samples:
        """No decisions."""
        return cls(np.zeros((0, OBSERVATION_SIZE), np.float32),
                   np.zeros((0, NUM_ACTIONS), np.int8), np.zeros((0, NUM_ACTIONS), np.float32),
                   np.zeros((0, SEATS), np.float32), np.zeros((0, SEATS), np.float32),
                   np.zeros(0, np.int32), np.zeros((0, NUM_ACTIONS), np.float32))

    def __len__(self) -> int:
        return len(self.obs)


@dataclass
class PlayStats:
    """What one batch of self-play did."""

    games: int = 0
    decisions: int = 0  # searched decisions (the samples)
    leaves: int = 0  # network leaf evaluations
    steps: int = 0  # network calls (one per search step)
    seconds: dict[str, float] = field(default_factory=dict)  # by phase (PHASES)

    def add(self, other: PlayStats) -> None:
        """Add ``other``'s counts and seconds to these."""
        self.games += other.games
        self.decisions += other.decisions
        self.leaves += other.leaves
        self.steps += other.steps
        for phase, seconds in other.seconds.items():
            self.charge(phase, seconds)

    def charge(self, phase: str, seconds: float) -> None:
        """Add ``seconds`` to ``phase``'s time."""
        self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds


# Where self-play's time goes: the search's phases (the core's, BatchedSearch.phase_seconds:
# thread-seconds when the search runs on several threads), then the searches' set-up, the
# recorded decisions (observation, mask, prior, the move, and the forced moves and Greedy
# seats' moves after it) and the rest (Python between the calls, the first such moves
# included); the trainer adds its updates.
PHASES = ("select", "determinize", "apply", "observe", "prior", "network", "rollout", "backup",
          "setup", "record", "other")


def phase_line(seconds: dict[str, float]) -> str:
    """Each phase's share of the time, e.g. ``select 4% determinize 11% ...``."""
    total = sum(seconds.values()) or 1.0
    keys = [k for k in PHASES if k in seconds] + [k for k in seconds if k not in PHASES]
    return " ".join(f"{k} {100 * seconds[k] / total:.0f}%" for k in keys)


def new_games(variants: Sequence[str], count: int, rng: np.random.Generator) -> list[Game]:
    """``count`` fresh core games, each of a variant drawn uniformly, seeded from ``rng``."""
    picks = rng.integers(len(variants), size=count)
    seeds = rng.integers(2**62, size=count)
    return [Game(variant_config(variants[int(v)]), seed=int(s))
            for v, s in zip(picks, seeds, strict=True)]


def seat_outcome(game: Game, mover: int) -> tuple[np.ndarray, np.ndarray]:
    """Win share and score margin of every seat relative to ``mover`` (zeros beyond)."""
    n = game.num_players
    winners = game.winners()
    totals = np.array([s.total for s in game.scores()], np.float32)
    share, margin = np.zeros(SEATS, np.float32), np.zeros(SEATS, np.float32)
    for k in range(n):
        p = (mover + k) % n
        share[k] = 1.0 / len(winners) if p in winners else 0.0
        margin[k] = totals[p] - totals.mean()
    return share, margin


def greedy_seats(games: Sequence[Game], chance: float,
                 rng: np.random.Generator) -> list[frozenset[int]]:
    """Each game's seats for Greedy: every seat but one drawn at random, each with ``chance``
    (0: none, and nothing drawn from ``rng``)."""
    if chance == 0:
        return [frozenset()] * len(games)
    seats = []
    for game in games:
        n = game.num_players
        searched = int(rng.integers(n))
        drawn = rng.random(n) < chance
        seats.append(frozenset(p for p in range(n) if p != searched and drawn[p]))
    return seats


def _play_forced(games: list[Game], greedy: Sequence[frozenset[int]],
                 agent: GreedyAgent | None) -> None:
    """Play every decision with one legal action and every move of a Greedy seat (``greedy``:
    each game's, played by ``agent``): no search needed."""
    for g, game in enumerate(games):
        seats = greedy[g] if greedy else frozenset()
        while not game.is_over:
            if agent is not None and game.current_player in seats:
                game.apply(agent.act(game, {}))
            elif len(legal := game.legal_action_ids()) == 1:
                game.apply(int(legal[0]))
            else:
                break


@dataclass(frozen=True)
class CoreLeaves:
    """Leaves valued inside the core by ``net`` (a ``_core.AzNet``), each search run to its end."""

    net: Any


def _search_step(games: list[Game], live: list[int], evaluate: Evaluate | CoreLeaves,
                 make_search: MakeSearch, seed: int,
                 stats: PlayStats) -> tuple[Search, SearchResult]:
    """One batched search over the live games (its phases' seconds added to ``stats``)."""
    t0 = time.perf_counter()
    search = make_search([games[i] for i in live], seed)
    stats.charge("setup", time.perf_counter() - t0)
    if isinstance(evaluate, CoreLeaves):
        result = search.run(evaluate.net)
        stats.leaves += search.evaluated
        stats.steps += 1
    else:
        network = 0.0
        while (leaves := search.leaves()) is not None:
            t1 = time.perf_counter()
            logits, values = evaluate(leaves)
            network += time.perf_counter() - t1
            search.evaluate(logits, values)
            stats.leaves += len(leaves.seat)
            stats.steps += 1
        stats.charge("network", network)
        result = search.result()
    for phase, spent in search.phase_seconds().items():
        stats.charge(phase, spent)
    return search, result


def play(games: list[Game], evaluate: Evaluate | CoreLeaves, make_search: MakeSearch,
         rng: np.random.Generator, prior: bool = False, target: str = "improved",
         searches: int = 1,
         greedy: Sequence[frozenset[int]] = ()) -> tuple[Samples, PlayStats]:
    """Play ``games`` to their ends, every decision searched in one batch (``searches`` > 1:
    that many times, each with its own seed; the policy target is their mean, or with
    ``target="steady"`` the action all of them chose and zeros where they differ; the first
    search's action is played), but the seats ``greedy`` gives each game, which Greedy plays
    unrecorded; the recorded samples."""
    from moonriver_env.agents.pretrained import SHAPE_WEIGHT

    if target == "steady" and searches < 2:
        raise ValueError("target='steady' needs searches >= 2 (the searches that must agree)")
    stats = PlayStats(games=len(games))
    steps: list[Step] = []
    start = time.perf_counter()
    record = 0.0
    if greedy and len(greedy) != len(games):
        raise ValueError(f"{len(games)} games but {len(greedy)} sets of Greedy seats")
    agent = GreedyAgent(int(rng.integers(2**31))) if any(greedy) else None
    _play_forced(games, greedy, agent)
    while live := [i for i, g in enumerate(games) if not g.is_over]:
        search, result = _search_step(games, live, evaluate, make_search,
                                      int(rng.integers(2**62)), stats)
        policy = _policy_targets(result, target)
        if searches > 1:  # further searches of the same roots: the mean of their targets
            total = policy.copy()
            for _ in range(searches - 1):
                total += _policy_targets(_search_step(games, live, evaluate, make_search,
                                                      int(rng.integers(2**62)), stats)[1], target)
            policy = total / searches
        if target == "steady":  # only the rows where every search chose one action
            policy *= (policy.max(1) == 1.0)[:, None]
        t0 = time.perf_counter()
        obs, mask, priors = search.roots(SHAPE_WEIGHT if prior else None)
        movers = np.array([games[i].current_player for i in live], np.int32)
        steps.append((np.array(live, np.int32), movers, obs, mask, policy,
                       priors if priors is not None else np.zeros(mask.shape, np.float32)))
        for j, i in enumerate(live):
            games[i].apply(int(result.action[j]))
        stats.decisions += len(live)
        _play_forced(games, greedy, agent)
        record += time.perf_counter() - t0
    t0 = time.perf_counter()
    samples = _samples(games, steps)
    stats.seconds["record"] = record + time.perf_counter() - t0
    measured = sum(stats.seconds.values())
    stats.seconds["other"] = max(0.0, time.perf_counter() - start - measured)
    return samples, stats


def _policy_targets(result: SearchResult, target: str) -> np.ndarray:
    """Each game's policy target: the search's improved policy, or its chosen action
    (``action``, ``steady``)."""
    if target == "improved":
        return np.asarray(result.policy, np.float32)
    onehot = np.zeros((len(result.action), NUM_ACTIONS), np.float32)
    onehot[np.arange(len(result.action)), result.action] = 1.0
    return onehot


def _samples(games: list[Game], steps: list[Step]) -> Samples:
    """The recorded decisions with their games' outcomes."""
    if not steps:
        return Samples.empty()
    index, movers = (np.concatenate([step[k] for step in steps]) for k in (0, 1))
    outcomes = {(int(i), int(m)): seat_outcome(games[i], int(m))  # one per game and mover
                for i, m in set(zip(index.tolist(), movers.tolist(), strict=True))}
    targets = [outcomes[i, m] for i, m in zip(index.tolist(), movers.tolist(), strict=True)]
    return Samples(obs=np.concatenate([step[2] for step in steps]),
                   mask=np.concatenate([step[3] for step in steps]),
                   policy=np.concatenate([step[4] for step in steps]),
                   outcome=np.stack([t[0] for t in targets]),
                   margin=np.stack([t[1] for t in targets]),
                   num_players=np.array([games[i].num_players for i in index], np.int32),
                   prior=np.concatenate([step[5] for step in steps]))
