"""Circles' doors refuse what they cannot play: structured actions holding a non-integer, steps
after a penalty ended the Gymnasium episode, and AEC steps before reset or after every agent
left (Moon River's AEC env alike)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from moonriver_env import circles_far_west_v0, moonriver_v0
from moonriver_env.circles import (
    Buy,
    CirclesConfig,
    CirclesGame,
    IllegalActionError,
    Phase,
    Steal,
    Throw,
    Tickets,
)
from moonriver_env.circles.gym_env import CirclesGymEnv
from moonriver_env.moonriver.gym_env import MoonRiverGymEnv


def at_phase(phase: Phase, action: Any) -> CirclesGame:
    """A game (random legal play, seed 0) where ``action``'s id is legal in ``phase``."""
    game = CirclesGame(CirclesConfig(num_players=2), seed=0)
    rng = np.random.default_rng(0)
    for _ in range(2000):
        if game.phase == phase and game.codec.encode(action) in game.legal_action_ids():
            return game
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(len(ids))]))
    raise AssertionError(f"no {phase.name} decision allowing {action} within 2000 decisions")


def snapshot(game: CirclesGame) -> str:
    return json.dumps([game.to_record(include_seed=True), game.rng.bit_generator.state])


# ------------------------------------------------------------- structured actions
@pytest.mark.parametrize(("bad", "good", "message"), [
    (Throw(5.0), Throw(5), "Throw.distance must be an integer from 2 to 20"),
    (Throw(np.float64(5)), Throw(5), "Throw.distance must be an integer from 2 to 20"),
    (Throw(5 + 0j), Throw(5), "Throw.distance must be an integer from 2 to 20"),
    (Tickets(True), Tickets(1), "Tickets.count must be an integer from 0 to 19"),
    (Tickets(1.0), Tickets(1), "Tickets.count must be an integer from 0 to 19"),
    (Tickets(np.float32(1)), Tickets(1), "Tickets.count must be an integer from 0 to 19"),
], ids=["float", "numpy-float", "complex", "bool", "float-tickets", "numpy-float32"])
def test_structured_action_holding_a_non_integer_is_refused(bad: Any, good: Any,
                                                            message: str) -> None:
    phase = Phase.FLICK if isinstance(good, Throw) else Phase.TICKETS
    game = at_phase(phase, good)  # the integer action is legal here: a coercion would play it
    before = snapshot(game)
    with pytest.raises(IllegalActionError) as info:
        game.apply(bad)
    text = str(info.value)
    assert message in text and "not bool, float or complex" in text
    assert f"got {bad[0]!r}" in text
    assert snapshot(game) == before
    with pytest.raises(ValueError, match=message):
        game.codec.encode(bad)


def test_structured_action_holding_a_numpy_integer_plays_as_the_int() -> None:
    game = at_phase(Phase.FLICK, Throw(5))
    by_numpy, by_int = game.clone(), game.clone()
    by_numpy.apply(Throw(np.int64(5)))
    by_int.apply(Throw(5))
    assert by_numpy.to_record(include_seed=True) == by_int.to_record(include_seed=True)


@pytest.mark.parametrize(("bad", "message"), [
    (Buy(1), "Buy.item must be one of 'shovel', 'ticket', 'wagon', got 1"),
    (Buy("gold"), "Buy.item must be one of 'shovel', 'ticket', 'wagon', got 'gold'"),
    (Steal(9), "Steal.opponent must be an integer from 1 to 4"),
    (Throw(1), "Throw.distance must be an integer from 2 to 20"),
    ((5,), "not an action of the enumeration"),
])
def test_structured_action_outside_the_enumeration_says_what_is_allowed(
        bad: Any, message: str) -> None:
    game = CirclesGame(CirclesConfig(num_players=2), seed=0)
    before = snapshot(game)
    with pytest.raises(IllegalActionError, match=message):
        game.apply(bad)
    assert snapshot(game) == before


# ------------------------------------------------------------ Gymnasium: penalty
@pytest.mark.parametrize("make", [
    lambda: CirclesGymEnv(num_players=2, illegal="penalty"),
    lambda: MoonRiverGymEnv(num_players=2, illegal="penalty"),
], ids=["circles", "moonriver"])
def test_step_after_a_penalty_is_refused_until_reset(make: Any) -> None:
    env = make()
    env.reset(seed=1)
    illegal = int(np.flatnonzero(env.action_masks() == 0)[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert terminated and not truncated and info["illegal_action"] and reward == -1.0
    assert env.action_masks().all()  # terminal mask: the autoreset ignores the action
    before = json.dumps(env.game.to_record(include_seed=True))
    legal = int(np.flatnonzero(env.game.legal_mask())[0])
    with pytest.raises(RuntimeError, match="the episode is over; call reset"):
        env.step(legal)
    assert json.dumps(env.game.to_record(include_seed=True)) == before
    env.reset(seed=2)
    assert env.action_masks().any()
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # plays again after reset


def test_circles_step_after_the_game_ended_is_refused() -> None:
    env = CirclesGymEnv(num_players=2)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    terminated = False
    for _ in range(5000):
        legal = np.flatnonzero(env.action_masks())
        _, _, terminated, _, _ = env.step(int(legal[rng.integers(legal.size)]))
        if terminated:
            break
    assert terminated
    with pytest.raises(RuntimeError, match="the episode is over; call reset"):
        env.step(0)


# --------------------------------------------------------------- AEC: raw_env doors
MODULES = [moonriver_v0, circles_far_west_v0]


@pytest.mark.parametrize("module", MODULES, ids=["moonriver_v0", "circles_far_west_v0"])
def test_raw_env_step_before_reset_is_a_clear_error(module: Any) -> None:
    env = module.raw_env(num_players=2)
    for action in (0, None):
        with pytest.raises(RuntimeError, match=r"call reset\(\) before"):
            env.step(action)


@pytest.mark.parametrize("module", MODULES, ids=["moonriver_v0", "circles_far_west_v0"])
def test_raw_env_step_after_every_agent_left_is_a_clear_error(module: Any) -> None:
    env = module.raw_env(num_players=2)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in env.agent_iter(20_000):
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
        else:
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
    assert env.agents == [] and env.game.is_over
    record = env.game_record()
    for action in (None, 0):
        with pytest.raises(RuntimeError, match="every agent has left; call reset"):
            env.step(action)
    assert env.game_record() == record
    env.reset(seed=2)
    assert env.agents == env.possible_agents
