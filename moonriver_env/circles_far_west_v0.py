"""Circles: Far West: the PettingZoo AEC environment, PettingZoo's thin versioned module.
Spec sheet: ``moonriver_env.circles.aec_env``."""

from moonriver_env.circles.aec_env import env, raw_env

__all__ = ["env", "raw_env"]
