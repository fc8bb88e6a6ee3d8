"""Where RLlib checkpoints of a run live: a run directory, an algorithm checkpoint, a module.

Imports neither Ray nor torch, so a bad path is reported before anything heavy starts.
"""

from __future__ import annotations

import os

CHECKPOINT_DIR = "checkpoints"
MODULE_PATH = ("learner_group", "learner", "rl_module")
MODULE_FILE = "class_and_ctor_args.pkl"


def algorithm_checkpoint(path: str) -> str:
    """The algorithm checkpoint at ``path``, or the newest one of a run directory."""
    path = os.path.abspath(path)
    if os.path.isdir(os.path.join(path, MODULE_PATH[0])):
        return path
    root = os.path.join(path, CHECKPOINT_DIR)
    if os.path.isdir(root):
        done = sorted(d for d in os.listdir(root) if d.startswith("iter_") and "." not in d)
        if done:
            return os.path.join(root, done[-1])
    raise FileNotFoundError(f"no RLlib checkpoint at {path!r} (expected a run directory with "
                            f"{CHECKPOINT_DIR}/iter_*, or a checkpoint directory holding "
                            f"{MODULE_PATH[0]}/)")


def module_checkpoint(path: str, module_id: str = "shared") -> str:
    """The RLModule checkpoint of ``module_id`` in a run, algorithm or module directory."""
    path = os.path.abspath(path)
    if os.path.isdir(os.path.join(path, MODULE_PATH[0])) or os.path.isdir(
            os.path.join(path, CHECKPOINT_DIR)):
        found = os.path.join(algorithm_checkpoint(path), *MODULE_PATH, module_id)
    elif os.path.isfile(os.path.join(path, module_id, MODULE_FILE)):
        found = os.path.join(path, module_id)  # the multi-module directory (rl_module/)
    elif os.path.isfile(os.path.join(path, MODULE_FILE)):
        return path
    else:
        return algorithm_checkpoint(path)  # raises the error that says what is expected
    if not os.path.isfile(os.path.join(found, MODULE_FILE)):
        raise FileNotFoundError(f"the checkpoint at {path!r} has no module {module_id!r}")
    return found
