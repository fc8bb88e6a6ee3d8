"""moonriver-env: the Moon River board game as a rules engine and RL environments."""

__version__ = "0.1.0"
