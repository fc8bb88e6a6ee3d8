"""The registered Gymnasium entry points: ``MoonRiver-v0`` and ``CirclesFarWest-v0`` with
opponents given by agent name.

The environments take opponents as agents or callables and never import agents; these entry
points (what ``gymnasium.make`` calls) turn names such as ``"greedy"`` or ``"mcts:200"`` into
agents first (:func:`moonriver_env.agents.make_agent`, one agent per opponent seat).
"""

from __future__ import annotations

from typing import Any

from moonriver_env.agents.registry import make_agent


def named_opponents(opponents: Any, count: int, game: str) -> Any:
    """``opponents`` with every agent name made an agent of ``game``: one name gives each of
    the ``count`` opponents its own agent; agents, callables and None pass unchanged."""
    if isinstance(opponents, str):
        return [make_agent(opponents, game=game) for _ in range(count)]
    if isinstance(opponents, (list, tuple)):
        return [make_agent(o, game=game) if isinstance(o, str) else o for o in opponents]
    return opponents


def _resolved(opponents: Any, kwargs: dict[str, Any], game: str) -> Any:
    players = kwargs.get("num_players", 4)
    count = players - 1 if isinstance(players, int) else 0  # a bad count: the env says why
    try:
        return named_opponents(opponents, count, game)
    except (ValueError, TypeError) as exc:  # a bad name: raised from the caller's call
        raise exc.with_traceback(None) from None


def moonriver_gym_env(opponents: Any = None, **kwargs: Any) -> Any:
    """``MoonRiverGymEnv(**kwargs)`` whose opponents may be agent names."""
    from moonriver_env.moonriver.gym_env import MoonRiverGymEnv

    return MoonRiverGymEnv(opponents=_resolved(opponents, kwargs, "moonriver"), **kwargs)


def circles_gym_env(opponents: Any = None, **kwargs: Any) -> Any:
    """``CirclesGymEnv(**kwargs)`` whose opponents may be agent names (random, heuristic)."""
    from moonriver_env.circles.gym_env import CirclesGymEnv

    return CirclesGymEnv(opponents=_resolved(opponents, kwargs, "circles"), **kwargs)
