"""The Gymnasium entry points of ``MoonRiver-v0`` and ``CirclesFarWest-v0``: opponents by name.

The environments never import agents; these turn names into agents or batch seats first.
"""

from __future__ import annotations

from typing import Any

from moonriver_env.agents.registry import batch_seat, make_agent
from moonriver_env.agents.specs import rows


def named_opponents(opponents: Any, count: int, game: str, config: Any = None) -> Any:
    """``opponents`` with every agent name made an agent of ``game`` (one name: one per seat)."""
    if isinstance(opponents, str):
        return [make_agent(opponents, game=game, config=config) for _ in range(count)]
    if isinstance(opponents, (list, tuple)):
        return [make_agent(o, game=game, config=config) if isinstance(o, str) else o
                for o in opponents]
    return opponents


def _variant(kwargs: dict[str, Any]) -> Any:
    """The Moon River variant of the env's arguments; None when they are bad (the env says why)."""
    from moonriver_env.moonriver.rules import GameConfig

    try:
        return GameConfig(num_players=kwargs.get("num_players", 4),
                          mode=kwargs.get("mode", "base"), scenario=kwargs.get("scenario"))
    except (ValueError, TypeError):
        return None


def _resolved(opponents: Any, kwargs: dict[str, Any], game: str) -> Any:
    players = kwargs.get("num_players", 4)
    count = players - 1 if isinstance(players, int) else 0  # a bad count: the env says why
    try:
        config = _variant(kwargs) if game == "moonriver" else None
        return named_opponents(opponents, count, game, config)
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


def vector_opponents(opponents: Any) -> Any:
    """The vector env's opponents with every name made a batch seat; anything else: TypeError."""
    if isinstance(opponents, str):
        return _seat(opponents)
    if isinstance(opponents, (list, tuple)) and all(isinstance(o, str) for o in opponents):
        return [_seat(o) for o in opponents]
    seated = ", ".join(f"'{row.pattern}'" for row in rows("moonriver") if row.seat)
    raise TypeError(f"the vector env's opponents are batch seats given by name: built-in seats "
                    f"played in the core or network seats ({seated}), one for every opponent "
                    f"seat or a list of one per opponent seat; got {opponents!r:.60}")


def _seat(name: str) -> Any:
    """A network seat for a network's name; a built-in seat's name unchanged (the env shows it)."""
    from moonriver_env.moonriver.batch.seats import NetworkSeat

    seat = batch_seat(name)
    return seat if isinstance(seat, NetworkSeat) else name


def moonriver_vector_env(num_envs: int = 1, opponents: Any = None, seat: Any = 0,
                         num_players: int = 4, mode: str = "base", **kwargs: Any) -> Any:
    """``MoonRiverVectorEnv`` for ``gymnasium.make_vec("MoonRiver-v0", num_envs=N)``."""
    from moonriver_env.moonriver.batch.vector_env import MoonRiverVectorEnv
    from moonriver_env.moonriver.rules import GameConfig

    env_keys = ("reward", "threads", "copy", "autoreset_mode", "illegal", "illegal_penalty",
                "dict_observation", "observation")
    env_kwargs = {k: kwargs.pop(k) for k in env_keys if k in kwargs}
    try:  # a bad argument is raised from here, the caller's own call
        if seat is None:
            raise ValueError("the vector env needs a fixed learner seat (a player id); "
                             "seat=None (drawn each episode) is the single env's")
        config = GameConfig(num_players=num_players, mode=mode, **kwargs)
        seats = vector_opponents(opponents if opponents is not None else "random")
        return MoonRiverVectorEnv(num_envs, config, seat, seats, **env_kwargs)
    except (ValueError, TypeError) as exc:
        raise exc.with_traceback(None) from None
