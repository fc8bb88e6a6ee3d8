"""Many Moon River games a call on the compiled core: ``games`` (``BatchedGames``, the Gymnasium
vector env, the SB3 VecEnv), ``async_env`` (EnvPool-style send/recv) and ``multiagent`` (every
seat a learner)."""
