"""Bad constructor arguments are raised from the user's own call (the door), not from deep
inside the engine's config checks: the traceback ends in env(), raw_env() or the Gymnasium
env's constructor, and its message says what is allowed."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

import gymnasium
import pytest

import moonriver_env  # noqa: F401  (registers MoonRiver-v0)
from moonriver_env import circles_far_west_v0, moonriver_v0


def _frames(call: Callable[[], Any], error: type[Exception]) -> tuple[list[str], str]:
    """The function names of the traceback below the test, and the message."""
    with pytest.raises(error) as info:
        call()
    names = [frame.name for frame in traceback.extract_tb(info.value.__traceback__)]
    return names[names.index("<lambda>") + 1:], str(info.value)  # below this test's lambda


@pytest.mark.parametrize("call, door, words", [
    (lambda: moonriver_v0.env(mode="legend"), ["env"], "('base', 'legends'), got 'legend'"),
    (lambda: moonriver_v0.env(num_players=9), ["env"], "2, 3 or 4, got 9"),
    (lambda: moonriver_v0.env(reward="best"), ["env"], "reward"),
    (lambda: moonriver_v0.raw_env(num_players=9), ["__init__"], "2, 3 or 4, got 9"),
    (lambda: circles_far_west_v0.env(num_players=9), ["env"], "2..5, got 9"),
    (lambda: circles_far_west_v0.raw_env(num_players=1), ["__init__"], "2..5, got 1"),
])
def test_pettingzoo_env_raises_at_the_door(call, door, words) -> None:
    frames, message = _frames(call, ValueError)
    assert frames == door
    assert words in message


@pytest.mark.parametrize("kwargs, words", [
    ({"num_players": 9}, "2, 3 or 4, got 9"),
    ({"mode": "legend"}, "('base', 'legends'), got 'legend'"),
    ({"num_players": 2, "seat": 3}, "seat must be"),
])
def test_gymnasium_make_raises_from_the_env_constructor(kwargs, words) -> None:
    frames, message = _frames(lambda: gymnasium.make("MoonRiver-v0", **kwargs), ValueError)
    assert frames[-1] == "__init__" and len(frames) <= 3  # make, (its env creator), __init__
    assert words in message


def test_the_engines_own_config_still_raises_where_it_checks() -> None:
    from moonriver_env.moonriver.rules import GameConfig

    frames, _ = _frames(lambda: GameConfig(num_players=9), ValueError)
    assert frames[-1] == "__post_init__"
