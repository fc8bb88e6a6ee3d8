"""The search recipe: one policy-value network for every variant, trained on the targets of a
batched Gumbel search over the compiled core (``moonriver-train-az``, docs/training.md)."""
