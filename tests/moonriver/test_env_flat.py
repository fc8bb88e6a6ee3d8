"""env()'s flat class behaves as PettingZoo's stock wrapper chain over raw_env, step by step."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from moonriver_env import moonriver_v0
from moonriver_env.moonriver.rules import IllegalActionError


def _outcome(fn):
    """What a call did: ("ok", value) or ("raised", type, message)."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = fn()
        return ("ok", value, [str(w.message) for w in caught])
    except (AttributeError, AssertionError, IllegalActionError, ValueError, RuntimeError) as exc:
        return ("raised", type(exc).__name__, str(exc))


def _state(env):
    return (env.agents, env.agent_selection if env.agents else None, dict(env.rewards),
            dict(env._cumulative_rewards), dict(env.terminations), dict(env.truncations),
            env.infos)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_flat_env_matches_the_wrapper_chain(seed):
    flat = moonriver_v0.env(num_players=3)
    chain = moonriver_v0.wrapped_env_chain(num_players=3)
    assert type(flat) is moonriver_v0.wrapped_env
    for name in ("agents", "rewards", "agent_selection", "num_agents", "_secret"):
        assert _outcome(lambda e=flat, n=name: getattr(e, n)) == \
            _outcome(lambda e=chain, n=name: getattr(e, n))
    for call in (lambda e: e.step(0), lambda e: e.observe("player_0"), lambda e: e.state(),
                 lambda e: e.render(), lambda e: e.agent_iter()):
        assert _outcome(lambda c=call: c(flat))[:2] == _outcome(lambda c=call: c(chain))[:2]
    rng = np.random.default_rng(seed)
    for game in range(3):
        flat.reset(seed=100 * seed + game)
        chain.reset(seed=100 * seed + game)
        illegal_at = int(rng.integers(5, 60)) if game == 1 else -1
        for step, (a, b) in enumerate(zip(flat.agent_iter(), chain.agent_iter(), strict=True)):
            assert a == b
            of, rf, tf, uf, inf = flat.last()
            oc, rc, tc, uc, inc = chain.last()
            assert np.array_equal(of["observation"], oc["observation"])
            assert np.array_equal(of["action_mask"], oc["action_mask"])
            assert (rf, tf, uf, inf) == (rc, tc, uc, inc)
            if tf or uf:
                action = None
            elif step == illegal_at:
                action = int(np.flatnonzero(of["action_mask"] == 0)[0])
            else:
                legal = np.flatnonzero(of["action_mask"])
                action = int(legal[rng.integers(legal.size)])
            for bad in (True, 2.0, "3", -1, 2710):  # refused before the game sees them
                if action is not None:
                    assert _outcome(lambda e=flat, x=bad: e.step(x)) == \
                        _outcome(lambda e=chain, x=bad: e.step(x))
            assert _outcome(lambda x=action: flat.step(x)) == \
                _outcome(lambda x=action: chain.step(x))
            assert _state(flat) == _state(chain)
        assert _outcome(lambda: flat.step(None)) == _outcome(lambda: chain.step(None))
        assert flat.game_record() == chain.unwrapped.game_record()


def test_flat_env_asserts_a_step_between_agents():
    env = moonriver_v0.env(num_players=2)
    env.reset(seed=1)
    it = iter(env.agent_iter())
    next(it)
    with pytest.raises(AssertionError, match="need to call step"):
        next(it)
