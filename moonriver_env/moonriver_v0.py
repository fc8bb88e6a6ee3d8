"""Moon River: the PettingZoo AEC environment, PettingZoo's thin versioned module.
Spec sheet: ``moonriver_env.moonriver.aec_env``."""

from moonriver_env.moonriver.aec_env import (
    REWARD_MODES,
    action_id,
    env,
    final_rewards,
    raw_env,
    wrapped_env,
    wrapped_env_chain,
)

__all__ = ["REWARD_MODES", "action_id", "env", "final_rewards", "raw_env", "wrapped_env",
           "wrapped_env_chain"]
