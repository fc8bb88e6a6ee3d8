"""moonriver-env: the Moon River board game as a rules engine and RL environments.

``moonriver_env.engine`` is the pure rules engine (Python + numpy). Importing this package
also registers the single-agent Gymnasium environment ``MoonRiver-v0`` when gymnasium is
installed; the PettingZoo environment is ``moonriver_env.moonriver_v0``.
"""

__version__ = "0.1.0"

try:
    import gymnasium as _gymnasium
except ImportError:  # the engine alone needs only numpy
    pass
else:
    if "MoonRiver-v0" not in _gymnasium.registry:
        _gymnasium.register(id="MoonRiver-v0", entry_point="moonriver_env.gym_env:MoonRiverGymEnv",
                            disable_env_checker=True)
