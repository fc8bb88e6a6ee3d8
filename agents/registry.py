"""Build agents from short text specs (for the CLI and worker processes).

``random``, ``greedy``, ``mcts:SIMS`` (e.g. ``mcts:100``), ``mcts:SECONDSs`` (``mcts:0.5s``),
``policy:PATH.zip`` (a saved MaskablePPO model; ``policy-sample:PATH`` samples instead of
taking the most likely action).
"""

from __future__ import annotations

from moonriver_env.agents.base import Agent

SPECS = ("random", "greedy", "mcts:SIMS", "mcts:SECONDSs", "policy:PATH",
         "policy-sample:PATH")


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """An agent from its spec; an unknown spec is a clear error listing the allowed forms."""
    kind, _, arg = spec.partition(":")
    if kind == "random" and not arg:
        from moonriver_env.agents.random_agent import RandomAgent

        return RandomAgent(seed=seed, name=spec)
    if kind == "greedy" and not arg:
        from moonriver_env.agents.greedy import GreedyAgent

        return GreedyAgent(seed=seed, name=spec)
    if kind == "mcts":
        from moonriver_env.agents.mcts import MCTSAgent

        try:
            if arg.endswith("s"):
                return MCTSAgent(seconds=float(arg[:-1]), seed=seed, name=spec)
            return MCTSAgent(simulations=int(arg or 100), seed=seed, name=spec)
        except ValueError:
            pass
    if kind in ("policy", "policy-sample") and arg:
        from moonriver_env.agents.policy import PolicyAgent

        return PolicyAgent(arg, deterministic=kind == "policy", name=spec)
    raise ValueError(f"unknown agent spec {spec!r}; allowed: {', '.join(SPECS)}")
