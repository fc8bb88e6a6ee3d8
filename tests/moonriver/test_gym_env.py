"""The single-agent Gymnasium wrapper: checkers, opponents, rewards, masks, MaskablePPO."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from moonriver_env.agents import RandomAgent

import moonriver_env  # noqa: F401  (registers MoonRiver-v0)
from moonriver_env.moonriver.gym_env import MoonRiverGymEnv
from moonriver_env.moonriver.rules import IllegalActionError
from tests.helpers import check_gym_env


def random_episode(env, rng) -> tuple[list[float], dict]:
    """Play one episode with random legal actions; return rewards and the last info."""
    env.reset(seed=int(rng.integers(1000)))
    rewards, done, info = [], False, {}
    while not done:
        legal = np.flatnonzero(env.unwrapped.action_masks())
        _, reward, done, truncated, info = env.step(int(legal[rng.integers(legal.size)]))
        assert not truncated
        rewards.append(reward)
    return rewards, info


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_gymnasium_and_sb3_checkers(num_players: int) -> None:
    # The checkers sample unmasked actions, so they run with the penalty policy.
    env = gymnasium.make("MoonRiver-v0", num_players=num_players, illegal="penalty")
    check_gym_env(env.unwrapped)


def test_final_reward_reaches_the_last_transition() -> None:
    env = gymnasium.make("MoonRiver-v0", num_players=4)
    rng = np.random.default_rng(0)
    for _ in range(4):
        rewards, info = random_episode(env, rng)
        seat = info["seat"]
        assert rewards[-1] == (1.0 if seat in info["winners"] else -1.0)
        assert sum(rewards[:-1]) == 0.0  # win reward only, no shaping
        assert env.unwrapped.action_masks().all()  # terminal: all ones (autoreset ignores it)


def test_shaping_sums_to_own_final_score() -> None:
    env = MoonRiverGymEnv(num_players=3, reward="score", shaping=1.0)
    rewards, info = random_episode(env, np.random.default_rng(1))
    own = info["scores"][info["seat"]]["total"]
    assert sum(rewards) == pytest.approx(2 * own / 100)


def test_seat_fixed_or_random() -> None:
    env = MoonRiverGymEnv(num_players=4, seat=2)
    assert {env.reset(seed=s)[1]["seat"] for s in range(6)} == {2}
    env = MoonRiverGymEnv(num_players=4)
    assert len({env.reset(seed=s)[1]["seat"] for s in range(12)}) > 1


def test_reset_is_reproducible() -> None:
    env = MoonRiverGymEnv(num_players=4)
    a, _ = env.reset(seed=42)
    b, _ = env.reset(seed=42)
    np.testing.assert_array_equal(a, b)
    other = MoonRiverGymEnv(num_players=4)
    other.reset(seed=42)
    assert other.game.to_record() == env.game.to_record()
    other.reset(seed=43)
    assert other.game.to_record()["events"] != env.game.to_record()["events"]


def test_opponents_callable_agent_and_list() -> None:
    calls = []

    def first_legal(obs):
        calls.append(1)
        return int(np.flatnonzero(obs["action_mask"])[0])

    rng = np.random.default_rng(2)
    for spec in (first_legal, RandomAgent(seed=1), [RandomAgent(seed=1), first_legal]):
        env = MoonRiverGymEnv(num_players=3, opponents=spec)
        _, info = random_episode(env, rng)
        assert "winners" in info
    assert calls
    with pytest.raises(ValueError, match="one per opponent"):
        MoonRiverGymEnv(num_players=4, opponents=[RandomAgent()])
    with pytest.raises(TypeError, match="an opponent must be"):
        MoonRiverGymEnv(num_players=2, opponents=[42])


def test_illegal_action_policies() -> None:
    env = MoonRiverGymEnv(num_players=4)
    env.reset(seed=0)
    bad = int(np.flatnonzero(env.action_masks() == 0)[0])
    before = env.game.to_record()
    with pytest.raises(IllegalActionError):
        env.step(bad)
    assert env.game.to_record() == before
    env = MoonRiverGymEnv(num_players=4, illegal="penalty", illegal_penalty=-5.0)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(bad)
    assert terminated and reward == -5.0 and info["illegal_action"]


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="seat must be"):
        MoonRiverGymEnv(num_players=2, seat=3)
    with pytest.raises(ValueError, match="illegal must be one of"):
        MoonRiverGymEnv(illegal="ignore")


def test_maskable_ppo_smoke_with_subprocess_envs() -> None:
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.evaluation import evaluate_policy
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    # illegal="raise": any unmasked action reaching the engine would crash the run.
    vec = make_vec_env(MoonRiverGymEnv, n_envs=2, seed=0, vec_env_cls=SubprocVecEnv,
                       env_kwargs={"num_players": 4, "illegal": "raise"})
    try:
        vec.reset()
        masks = vec.env_method("action_masks")
        assert len(masks) == 2 and all(m.any() for m in masks)
        model = MaskablePPO("MlpPolicy", vec, n_steps=256, batch_size=128, n_epochs=2, seed=0,
                            device="cpu", policy_kwargs={"net_arch": [64, 64]})
        model.learn(total_timesteps=2048)
        mean, _ = evaluate_policy(model, vec, n_eval_episodes=4, use_masking=True, warn=False)
        assert -1.0 <= mean <= 1.0
    finally:
        vec.close()
