"""Build what an agent spec names: the agent (``make_agent``), its batch seat (``batch_seat``)
and the play server's checks (``request_spec_problem``, ``spec_paths``). See docs/agents.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from moonriver_env.agents.base import Agent, TimeCapped
from moonriver_env.agents.specs import SECONDS_BUDGET, SIMS, VARIANTS, find, patterns, rows

from moonriver_env.common.validate import check_time_limit

if TYPE_CHECKING:  # imported where used: building an agent needs no batch (nor the core)
    from moonriver_env.agents.specs import AgentSpec

    from moonriver_env.moonriver.batch.seats import BuiltinSeat, NetworkSeat

__all__ = ["CIRCLES_SPECS", "GAME_SPECS", "REQUEST_SPECS", "SECONDS_BUDGET", "SPECS",
           "batch_seat", "cap_time", "check_variant", "make_agent", "request_spec_problem",
           "spec_paths"]

SPECS = patterns("moonriver")
CIRCLES_SPECS = patterns("circles")
GAME_SPECS = {"moonriver": SPECS, "circles": CIRCLES_SPECS}
# The specs that name no file: an untrusted caller (a play server's request) may pick these.
REQUEST_SPECS = patterns("moonriver", request=True)
_GAME_NAMES = {"moonriver": "", "circles": "Circles "}  # "unknown Circles agent spec ..."


def _resolve(target: str) -> Any:
    """The function a table row names as ``"module:function"`` (its module imported now)."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def _filled(row: AgentSpec, parts: list[str]) -> list[tuple[str, str]] | None:
    """The spec's parts matched to the row's placeholders (optional ones from the left), or None."""
    placeholders = row.parts()
    spare = len(parts) - sum(not optional for _, optional in placeholders)
    if not 0 <= spare <= sum(optional for _, optional in placeholders):
        return None
    names = []
    for name, optional in placeholders:
        if optional and spare == 0:
            continue
        spare -= optional
        names.append(name)
    return list(zip(names, parts, strict=True))


def _part_problem(name: str, text: str, max_seconds: float,
                  max_simulations: int) -> str | None:
    """Why one part of a request's spec is not allowed (budget, variant, a file), or None."""
    if name == "VARIANT":
        return None if text in VARIANTS else \
            f"the variant must be one of {', '.join(VARIANTS)} (no file paths)"
    if name in ("SIMS", "SECONDSs", "BUDGET"):
        if SIMS.fullmatch(text) and 1 <= int(text) <= max_simulations:
            return None
        if SECONDS_BUDGET.fullmatch(text) and 0 < float(text[:-1]) <= max_seconds:
            return None
        return (f"the budget must be 1 to {max_simulations} simulations or a time over 0 and "
                f"at most {max_seconds:g}s, got {text!r:.40}")
    return f"{name} names a file"


def request_spec_problem(spec: str, max_seconds: float = 10.0,
                         max_simulations: int = 5000) -> str | None:
    """Why ``spec`` may not come from an untrusted request (files, big budgets), or None."""
    if not isinstance(spec, str):
        return f"an agent spec must be a string, got {spec!r:.40}"
    kind, colon, arg = spec.partition(":")
    parts = arg.split(":") if colon else []
    problems = []
    for row in rows("moonriver"):
        filled = _filled(row, parts) if row.request and row.kind == kind else None
        if filled is None:
            continue
        found = [p for p in (_part_problem(name, text, max_seconds, max_simulations)
                             for name, text in filled) if p]
        if not found:
            return None
        problems.append(found[0])
    problem = problems[0] if problems else "not one of the allowed forms"
    return (f"agent spec {spec!r:.80} is not allowed here: {problem}; allowed: "
            f"{', '.join(REQUEST_SPECS)} (VARIANT: {', '.join(VARIANTS)}; SIMS at most "
            f"{max_simulations}, SECONDS at most {max_seconds:g})")


def spec_paths(spec: str) -> list[str]:
    """The file paths an agent spec names ([] for specs without files)."""
    kind, _, arg = spec.partition(":")
    files = {row.files for row in rows("moonriver") if row.kind == kind and row.takes_arg}
    if "arg" in files:
        return [arg] if arg else []
    if "parts" in files:
        return [part for part in arg.split(":")
                if "/" in part or "\\" in part or part.endswith(".npz")]
    return []


def batch_seat(spec: str) -> BuiltinSeat | NetworkSeat:
    """The batch seat (built-in or network) that plays as ``spec`` does; else a ValueError."""
    from moonriver_env.moonriver.batch.seats import BuiltinSeat, NetworkSeat

    if not isinstance(spec, str):
        raise TypeError(f"an agent spec must be a string, got {spec!r:.40}")
    row = find(spec)
    seated = ", ".join(r.pattern for r in rows("moonriver") if r.seat)
    if row is None:
        raise ValueError(f"unknown batch seat {spec!r:.80}; batch seats: {seated}")
    if not row.seat:
        raise ValueError(f"agent spec {spec!r:.80} has no batch seat; batch seats: {seated}")
    if row.seat == "builtin":
        return BuiltinSeat(spec)
    seat = _resolve(row.seat_build)(spec)
    assert isinstance(seat, NetworkSeat), row
    return seat


def make_agent(spec: str, seed: int | None = None, game: str = "moonriver",
               config: Any = None, time_limit: float = 0.0) -> Agent[Any]:
    """An agent of ``game`` from ``spec``; ``VariantError`` if it cannot play ``config``."""
    if game not in GAME_SPECS:
        raise ValueError(f"unknown game {game!r}; allowed: {', '.join(GAME_SPECS)}")
    if not isinstance(spec, str):
        raise TypeError(f"an agent spec must be a string, got {spec!r:.40}")
    time_limit = check_time_limit(time_limit)
    row = find(spec, game)
    if row is None:
        raise ValueError(f"unknown {_GAME_NAMES[game]}agent spec {spec!r}; allowed: "
                         f"{', '.join(GAME_SPECS[game])}")
    agent: Agent[Any] = _resolve(row.build)(spec, seed)
    if config is not None and game == "moonriver":
        check_variant(spec, agent, config)
    cap_time(agent, time_limit)
    return agent


def cap_time(agent: Agent[Any], time_limit: float) -> None:
    """Cap each decision of a searching (``TimeCapped``) agent at ``time_limit`` s (0: none)."""
    if time_limit and isinstance(agent, TimeCapped):
        agent.time_limit = time_limit


def check_variant(spec: str, agent: Agent[Any], config: Any) -> None:
    """Refuse (``VariantError``) an agent whose weights were trained for another variant."""
    from moonriver_env.agents.pretrained import VariantError, variant_refusal

    problem = variant_refusal(spec, getattr(agent, "meta", None), config.num_players,
                              config.mode, getattr(config, "scenario", None))
    if problem is not None:
        raise VariantError(problem)
