"""Circles: Far West: the PettingZoo AEC environment, in PettingZoo's pattern of a thin module
naming the game package's environment (``moonriver_env.circles.aec_env``)."""

from moonriver_env.circles.aec_env import env, raw_env

__all__ = [
    "env",
    "raw_env",
]
