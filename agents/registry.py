"""Build agents from short text specs (for the CLI and worker processes).

``random``, ``greedy``, ``mcts:SIMS`` (e.g. ``mcts:100``), ``mcts:SECONDSs`` (``mcts:0.5s``),
``policy:PATH.zip`` (a saved MaskablePPO model; ``policy-sample:PATH`` samples instead of
taking the most likely action), ``rllib:PATH`` (an RLlib run or checkpoint directory of
``moonriver-train-rllib``; ``rllib-sample:PATH`` samples), ``pretrained`` (the shipped 4-player
base policy; ``pretrained:2p-base`` the 2-player one, ``pretrained:PATH.npz`` exported weights),
``puct:SIMS`` / ``puct:SECONDSs`` (PUCT search, heuristic prior; ``pretrained+puct:BUDGET`` or
``pretrained+puct:VARIANT:BUDGET`` with the pretrained policy as its prior).
"""

from __future__ import annotations

from moonriver_env.agents.base import Agent

SPECS = ("random", "greedy", "mcts:SIMS", "mcts:SECONDSs", "policy:PATH",
         "policy-sample:PATH", "rllib:PATH", "rllib-sample:PATH", "pretrained",
         "pretrained:VARIANT", "pretrained:PATH.npz", "puct:SIMS", "puct:SECONDSs",
         "pretrained+puct[:VARIANT]:BUDGET")


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
            budget = {"seconds": float(arg[:-1])} if arg.endswith("s") else \
                {"simulations": int(arg or 100)}
        except ValueError:
            raise ValueError(f"agent spec {spec!r}: the budget must be mcts:SIMS (an integer "
                             f">= 1) or mcts:SECONDSs (a number > 0)") from None
        try:
            return MCTSAgent(**budget, seed=seed, name=spec)
        except ValueError as exc:
            raise ValueError(f"agent spec {spec!r}: {exc}") from None
    if kind in ("policy", "policy-sample") and arg:
        import os

        from moonriver_env.agents.policy import PolicyAgent

        if not os.path.isfile(arg):  # checked here: the loader would look for PATH.zip.zip
            raise FileNotFoundError(2, "policy checkpoint not found", arg)
        try:
            return PolicyAgent(arg, deterministic=kind == "policy", name=spec)
        except (ValueError, KeyError, EOFError, AssertionError) as exc:  # not an SB3 .zip
            raise ValueError(f"agent spec {spec!r}: cannot load the checkpoint "
                             f"({str(exc).removeprefix('Error: ')})") from None
    if kind in ("rllib", "rllib-sample") and arg:
        from moonriver_env.agents.rllib_agent import RLlibAgent

        return RLlibAgent(arg, deterministic=kind == "rllib", seed=seed, name=spec)
    if kind == "pretrained":
        from moonriver_env.agents.pretrained import DEFAULT_VARIANT, PretrainedAgent

        return PretrainedAgent(arg or DEFAULT_VARIANT, name=spec)
    if kind in ("puct", "pretrained+puct"):
        from moonriver_env.agents.puct import puct_from_spec

        return puct_from_spec(spec, seed)
    raise ValueError(f"unknown agent spec {spec!r}; allowed: {', '.join(SPECS)}")
