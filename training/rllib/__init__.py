"""Training with Ray RLlib (``moonriver-train-rllib``)."""
