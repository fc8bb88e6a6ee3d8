"""Training with Ray RLlib (``moonriver-train-rllib``); the names both of its modules read."""

ENV_BACKENDS = ("batched", "pettingzoo")  # env.py's two ways of playing (env.py imports Ray)
BATCHED_OPPONENTS = ("random", "greedy")  # the opponents the batched way seats in the core
