"""Training with Stable-Baselines3's MaskablePPO (``moonriver-train``)."""
