"""The fast recipe: PPO on batched self-play in the compiled core (``moonriver-train-fast``)."""

import os

# Waiting OpenMP threads spin by default: on a busy 2-core machine the second update thread's
# spinning halved the learner's rate (docs/training.md). Set here, before any module of the
# recipe loads torch, whose OpenMP runtime reads it once; the play workers inherit it. An
# explicit setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
