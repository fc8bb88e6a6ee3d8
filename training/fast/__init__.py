"""The fast recipe: PPO on batched self-play in the compiled core (``moonriver-train-fast``)."""
