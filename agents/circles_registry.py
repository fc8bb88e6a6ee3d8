"""Circles agents from short text specs (for the tournament CLI and worker processes).

``random`` (uniform over the legal actions: the project's RandomAgent, which reads only the
mask and so plays any game) and ``heuristic`` (CirclesHeuristicAgent).
"""

from __future__ import annotations

from moonriver_env.agents.base import Agent

CIRCLES_SPECS = ("random", "heuristic")


def make_circles_agent(spec: str, seed: int | None = None) -> Agent:
    """A Circles agent from its spec; an unknown spec is a clear error listing the allowed."""
    if spec == "random":
        from moonriver_env.agents.random_agent import RandomAgent

        return RandomAgent(seed=seed, name=spec)
    if spec == "heuristic":
        from moonriver_env.agents.circles_heuristic import CirclesHeuristicAgent

        return CirclesHeuristicAgent(seed=seed, name=spec)
    raise ValueError(f"unknown Circles agent spec {spec!r}; allowed: {', '.join(CIRCLES_SPECS)}")
