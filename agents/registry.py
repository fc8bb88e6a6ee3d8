"""Build agents from short text specs (for the CLI and worker processes), for either game.

Moon River (``game="moonriver"``, the default): ``random``, ``greedy``, ``mcts:SIMS`` (e.g.
``mcts:100``), ``mcts:SECONDSs`` (``mcts:0.5s``),
``policy:PATH.zip`` (a saved MaskablePPO model; ``policy-sample:PATH`` samples instead of
taking the most likely action), ``rllib:PATH`` (an RLlib run or checkpoint directory of
``moonriver-train-rllib``; ``rllib-sample:PATH`` samples), ``pretrained`` (the shipped
network for every variant, ``weights/all.npz``: 2-4 players, base and each Legends scenario;
its policy alone), ``pretrained+search:SIMS`` / ``pretrained+search:SECONDSs`` (the batched
search valued by that network, any variant), ``pretrained:4p-base`` / ``pretrained:2p-base``
(the PPO recipe's weights for that variant alone, kept for comparison) and
``pretrained:PATH.npz`` (exported PPO weights), ``puct:SIMS`` / ``puct:SECONDSs`` (PUCT search,
heuristic prior; ``pretrained+puct:BUDGET`` with the 4p-base PPO policy as its prior, or
``pretrained+puct:VARIANT:BUDGET`` with that variant's), ``az:PATH.npz`` (a
``moonriver-train-az`` network's policy, any variant; ``az-sample:PATH.npz`` samples) and
``az+search:PATH.npz:SIMS`` / ``az+search:PATH.npz:SECONDSs`` (the batched search with that
network's values).

Circles: Far West (``game="circles"``): ``random`` (RandomAgent reads only the mask, so it
plays any game) and ``heuristic`` (CirclesHeuristicAgent).
"""

from __future__ import annotations

import re
from typing import Any

from moonriver_env.agents.base import Agent, TimeCapped

from moonriver_env.common.validate import check_time_limit

SPECS = ("random", "greedy", "mcts:SIMS", "mcts:SECONDSs", "policy:PATH",
         "policy-sample:PATH", "rllib:PATH", "rllib-sample:PATH", "pretrained",
         "pretrained+search:SIMS", "pretrained+search:SECONDSs", "pretrained:VARIANT",
         "pretrained:PATH.npz", "puct:SIMS", "puct:SECONDSs",
         "pretrained+puct[:VARIANT]:BUDGET", "az:PATH.npz", "az-sample:PATH.npz",
         "az+search:PATH.npz:SIMS", "az+search:PATH.npz:SECONDSs")
CIRCLES_SPECS = ("random", "heuristic")
GAME_SPECS = {"moonriver": SPECS, "circles": CIRCLES_SPECS}
# The specs that name no file: an untrusted caller (a play server's request) may pick these.
REQUEST_SPECS = ("random", "greedy", "mcts:SIMS", "mcts:SECONDSs", "pretrained",
                 "pretrained+search:SIMS", "pretrained+search:SECONDSs",
                 "pretrained:VARIANT", "puct:SIMS", "puct:SECONDSs",
                 "pretrained+puct[:VARIANT]:BUDGET")
_SIMS = re.compile(r"[0-9]{1,12}")
SECONDS_BUDGET = re.compile(r"([0-9]{1,12}(\.[0-9]{0,12})?|\.[0-9]{1,12})s")  # SECONDSs


def request_spec_problem(spec: str, max_seconds: float = 10.0,
                         max_simulations: int = 5000) -> str | None:
    """Why ``spec`` may not come from an untrusted request, or None when it may.

    Only specs without paths (REQUEST_SPECS with a shipped VARIANT) and budgets within
    ``max_seconds`` seconds or ``max_simulations`` simulations a decision are allowed.
    """
    from moonriver_env.agents.pretrained import VARIANTS

    def budget(text: str) -> str | None:
        if _SIMS.fullmatch(text) and 1 <= int(text) <= max_simulations:
            return None
        if SECONDS_BUDGET.fullmatch(text) and 0 < float(text[:-1]) <= max_seconds:
            return None
        return (f"the budget must be 1 to {max_simulations} simulations or a time over 0 and "
                f"at most {max_seconds:g}s, got {text!r:.40}")

    if not isinstance(spec, str):
        return f"an agent spec must be a string, got {spec!r:.40}"
    kind, colon, arg = spec.partition(":")
    parts = arg.split(":") if colon else []
    problem: str | None = "not one of the allowed forms"
    if kind in ("random", "greedy") and not colon:
        problem = None
    elif kind in ("mcts", "puct") and len(parts) <= 1:
        problem = budget(parts[0]) if parts else None
    elif kind == "pretrained+search" and len(parts) == 1:
        problem = budget(parts[0])
    elif kind == "pretrained" and len(parts) <= 1:
        if parts and parts[0] not in VARIANTS:
            problem = f"the variant must be one of {', '.join(VARIANTS)} (no file paths)"
        else:
            problem = None
    elif kind == "pretrained+puct" and 1 <= len(parts) <= 2:
        if len(parts) == 2 and parts[0] not in VARIANTS:
            problem = f"the variant must be one of {', '.join(VARIANTS)} (no file paths)"
        else:
            problem = budget(parts[-1])
    if problem is None:
        return None
    return (f"agent spec {spec!r:.80} is not allowed here: {problem}; allowed: "
            f"{', '.join(REQUEST_SPECS)} (VARIANT: {', '.join(VARIANTS)}; SIMS at most "
            f"{max_simulations}, SECONDS at most {max_seconds:g})")


def make_agent(spec: str, seed: int | None = None, game: str = "moonriver",
               config: Any = None, time_limit: float = 0.0) -> Agent:
    """An agent of ``game`` from its spec; an unknown spec is a clear error listing the
    allowed forms. ``config`` (a ``GameConfig``: players, mode, scenario) is the variant the
    agent will play: weights trained for another variant are refused (``VariantError``, one
    line naming the variant, the spec and what it can play). ``time_limit`` (seconds, 0: none)
    caps each decision of an agent that searches, whatever its budget (:func:`cap_time`)."""
    if game not in GAME_SPECS:
        raise ValueError(f"unknown game {game!r}; allowed: {', '.join(GAME_SPECS)}")
    if not isinstance(spec, str):
        raise TypeError(f"an agent spec must be a string, got {spec!r:.40}")
    time_limit = check_time_limit(time_limit)
    if game == "circles":
        return _circles_agent(spec, seed)
    agent = _moonriver_agent(spec, seed)
    if config is not None:
        check_variant(spec, agent, config)
    cap_time(agent, time_limit)
    return agent


def cap_time(agent: Agent, time_limit: float) -> None:
    """Cap each decision of ``agent`` at ``time_limit`` seconds (0: none): search agents
    (:class:`~moonriver_env.agents.base.TimeCapped`: mcts, puct, pretrained+puct) stop their
    search there; random, greedy and the policies decide in one step (a rule, or one pass of
    a network). The batched search's agents (pretrained+search, az+search) are not
    TimeCapped yet: their simulation budget alone bounds them."""
    if time_limit and isinstance(agent, TimeCapped):
        agent.time_limit = time_limit


def check_variant(spec: str, agent: Agent, config: Any) -> None:
    """Refuse (``VariantError``) an agent whose weights (its ``meta``) were trained for
    another variant than ``config``'s players, mode and scenario."""
    from moonriver_env.agents.pretrained import VariantError, variant_refusal

    problem = variant_refusal(spec, getattr(agent, "meta", None), config.num_players,
                              config.mode, getattr(config, "scenario", None))
    if problem is not None:
        raise VariantError(problem)


def _moonriver_agent(spec: str, seed: int | None) -> Agent:
    """A Moon River agent from its spec (any variant)."""
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
    if spec == "pretrained":  # the shipped network for every variant
        from moonriver_env.agents.az import AZAgent, shipped_path

        return AZAgent(shipped_path(), deterministic=True, seed=seed, name=spec)
    if kind == "pretrained" and arg:  # the PPO weights of one variant
        from moonriver_env.agents.pretrained import PretrainedAgent

        return PretrainedAgent(arg, name=spec)
    if kind == "pretrained+search":
        return _pretrained_search(spec, arg, seed)
    if kind in ("az", "az-sample", "az+search"):
        from moonriver_env.agents.az import az_from_spec

        return az_from_spec(spec, seed)
    if kind in ("puct", "pretrained+puct"):
        from moonriver_env.agents.puct import puct_from_spec

        return puct_from_spec(spec, seed)
    raise ValueError(f"unknown agent spec {spec!r}; allowed: {', '.join(SPECS)}")


def _pretrained_search(spec: str, budget: str, seed: int | None) -> Agent:
    """``pretrained+search:SIMS`` or ``pretrained+search:SECONDSs``: the batched search on the
    shipped network for every variant; a bad budget says what is allowed."""
    from moonriver_env.agents.az import MAX_SIMULATIONS, AZSearchAgent, shipped_path

    if not (_SIMS.fullmatch(budget) or SECONDS_BUDGET.fullmatch(budget)):
        raise ValueError(f"agent spec {spec!r:.80}: expected pretrained+search:SIMS (an integer "
                         f"from 1 to {MAX_SIMULATIONS}) or pretrained+search:SECONDSs (a number "
                         f"of seconds over 0)")
    try:
        if budget.endswith("s"):
            return AZSearchAgent(shipped_path(), seed=seed, name=spec,
                                 seconds=float(budget[:-1]))
        return AZSearchAgent(shipped_path(), int(budget), seed=seed, name=spec)
    except ValueError as exc:
        raise ValueError(f"agent spec {spec!r:.80}: {exc}") from None


def _circles_agent(spec: str, seed: int | None) -> Agent:
    if spec == "random":
        from moonriver_env.agents.random_agent import RandomAgent

        return RandomAgent(seed=seed, name=spec)
    if spec == "heuristic":
        from moonriver_env.agents.circles_heuristic import CirclesHeuristicAgent

        return CirclesHeuristicAgent(seed=seed, name=spec)
    raise ValueError(f"unknown Circles agent spec {spec!r}; allowed: {', '.join(CIRCLES_SPECS)}")
