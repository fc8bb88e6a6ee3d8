"""Self-play opponents: a pool of frozen learner snapshots mixed with baseline agents.

The schedule: docs/design.md ("Self-play schedule")."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from moonriver_env.agents.base import Agent, Observation
from moonriver_env.agents.policy import PolicyAgent
from moonriver_env.agents.registry import make_agent
from moonriver_env.training.atomic import check_archive

from moonriver_env.moonriver.contract import MoonRiverGame


@functools.cache  # one per snapshot path, shared by every seat of a process
def _load(path: str) -> PolicyAgent:
    """The snapshot at ``path`` (sampled actions), loaded once, its checksums checked first."""
    import torch
    from sb3_contrib import MaskablePPO

    check_archive(path)  # SB3's loader reports a bad CRC as a file that is no zip
    torch.set_num_threads(1)
    return PolicyAgent(MaskablePPO.load(path, device="cpu"), deterministic=False)


class OpponentPool:
    """Baselines plus snapshot paths; shared by the seats of one environment."""

    def __init__(self, baselines: list[str], baseline_prob: float = 0.5,
                 snapshots: list[str] | None = None) -> None:
        if not baselines:
            raise ValueError("OpponentPool needs at least one baseline agent spec")
        if not 0.0 <= baseline_prob <= 1.0:
            raise ValueError(f"baseline_prob must be in [0, 1], got {baseline_prob}")
        self.baselines = [make_agent(spec) for spec in baselines]
        self.baseline_prob = baseline_prob
        self.snapshots: list[str] = list(snapshots or [])

    def add_snapshot(self, path: str) -> None:
        """Add a frozen learner policy (a saved MaskablePPO .zip); adding twice is a no-op."""
        if path not in self.snapshots:
            self.snapshots.append(path)

    def draw(self, rng: np.random.Generator) -> tuple[str, Agent[Any]]:
        """One opponent for an episode: ('baseline', agent) or ('snapshot', its agent)."""
        if not self.snapshots or rng.random() < self.baseline_prob:
            return "baseline", self.baselines[int(rng.integers(len(self.baselines)))]
        if len(self.snapshots) == 1 or rng.random() < 0.5:
            return "snapshot", _load(self.snapshots[-1])
        return "snapshot", _load(self.snapshots[int(rng.integers(len(self.snapshots) - 1))])


class PoolOpponent:
    """One opponent seat: draws from the pool at every episode start (Agent protocol)."""

    name = "pool"

    def __init__(self, pool: OpponentPool) -> None:
        self.pool = pool
        self.rng = np.random.default_rng()
        self.kind, self.player = "baseline", pool.baselines[0]

    def reset(self, seed: int | None = None) -> None:
        """Draw this episode's opponent."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.kind, self.player = self.pool.draw(self.rng)
        if self.kind == "baseline":
            self.player.reset(int(self.rng.integers(2**31)))

    def add_snapshot(self, path: str) -> None:
        """Forward a new snapshot to the shared pool."""
        self.pool.add_snapshot(path)

    def act(self, game: MoonRiverGame, observation: Observation) -> int:
        """The drawn opponent's action."""
        return self.player.act(game, observation)
