"""moonriver-env: the Moon River board game as a rules engine and RL environments.

``moonriver_env.engine`` is the pure rules engine (Python + numpy). Importing this package
also registers the single-agent Gymnasium environment ``MoonRiver-v0`` when gymnasium is
installed; the PettingZoo environment is ``moonriver_env.moonriver.aec_env``. The second game,
Circles: Far West, has its engine in ``moonriver_env.circles``, its PettingZoo environment in
``moonriver_env.circles.aec_env`` and registers ``CirclesFarWest-v0``.
"""

__version__ = "0.1.0"

try:
    import gymnasium as _gymnasium
except ImportError:  # the engine alone needs only numpy
    pass
else:
    if "MoonRiver-v0" not in _gymnasium.registry:
        # No OrderEnforcing wrapper: the environment enforces reset-before-step itself, and
        # gymnasium.make then returns it unwrapped, with action_masks() in reach.
        _gymnasium.register(id="MoonRiver-v0",
                            entry_point="moonriver_env.agents.gym_entry:moonriver_gym_env",
                            vector_entry_point="moonriver_env.agents.gym_entry:"
                                               "moonriver_vector_env",
                            disable_env_checker=True, order_enforce=False)
    if "CirclesFarWest-v0" not in _gymnasium.registry:
        _gymnasium.register(id="CirclesFarWest-v0",
                            entry_point="moonriver_env.agents.gym_entry:circles_gym_env",
                            disable_env_checker=True)
