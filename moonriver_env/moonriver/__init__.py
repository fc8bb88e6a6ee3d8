"""Moon River: its observation, actions, AEC and Gymnasium environments and drawings;
its rules are the engine package, ``moonriver_env.engine``."""
