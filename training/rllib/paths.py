"""Where RLlib checkpoints of a run live: a run directory, an algorithm checkpoint, a module.

Imports neither Ray nor torch, so a bad path is reported before anything heavy starts."""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from moonriver_env.training.atomic import sha256
from moonriver_env.training.settings import warner

CHECKPOINT_DIR = "checkpoints"
MODULE_PATH = ("learner_group", "learner", "rl_module")
MODULE_FILE = "class_and_ctor_args.pkl"
MANIFEST = "moonriver_manifest.json"
_warn = warner("moonriver")


def write_manifest(folder: str) -> None:
    """Record the size and SHA-256 of every file of a checkpoint folder in its manifest."""
    files: dict[str, dict[str, int | str]] = {}
    for root, _, names in os.walk(folder):
        for name in names:
            full = os.path.join(root, name)
            relative = os.path.relpath(full, folder).replace(os.sep, "/")
            if relative != MANIFEST:
                files[relative] = {"size": os.path.getsize(full), "sha256": sha256(full)}
    with open(os.path.join(folder, MANIFEST), "w", encoding="utf-8") as fh:
        json.dump({"format": "moonriver-rllib-checkpoint/1", "files": dict(sorted(files.items()))},
                  fh, indent=1)


def checkpoint_problem(folder: str) -> str | None:
    """Why an algorithm checkpoint folder does not match its manifest (a short reason), or None."""
    try:
        with open(os.path.join(folder, MANIFEST), encoding="utf-8") as fh:
            files = json.load(fh)["files"]
    except FileNotFoundError:  # saved before manifests
        has_meta = os.path.isfile(os.path.join(folder, "rllib_checkpoint.json"))
        return None if has_meta else "no rllib_checkpoint.json in it"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"its {MANIFEST} cannot be read ({type(exc).__name__})"
    for rel, want in files.items():
        full = os.path.join(folder, *rel.split("/"))
        if not os.path.isfile(full):
            return f"{rel} is missing"
        if os.path.getsize(full) != want["size"]:
            return f"{rel} has {os.path.getsize(full)} bytes, not {want['size']}"
        if sha256(full) != want["sha256"]:
            return f"{rel} does not match its checksum"
    return None


def algorithm_checkpoint(path: str, report: Callable[[str], None] = _warn) -> str:
    """The algorithm checkpoint at ``path``, or the newest undamaged one of a run directory."""
    path = os.path.abspath(path)
    if os.path.isdir(os.path.join(path, MODULE_PATH[0])):
        problem = checkpoint_problem(path)
        if problem:
            raise ValueError(f"the RLlib checkpoint {path!r} is damaged: {problem} (give its "
                             f"run directory to take the newest undamaged checkpoint)")
        return path
    root = os.path.join(path, CHECKPOINT_DIR)
    if os.path.isdir(root):
        done = sorted(d for d in os.listdir(root) if d.startswith("iter_") and "." not in d)
        skipped: list[tuple[str, str]] = []  # (checkpoint, problem)
        for name in reversed(done):
            found = os.path.join(root, name)
            problem = checkpoint_problem(found)
            if problem is None:
                for damaged, why in skipped:
                    report(f"skipped the damaged RLlib checkpoint {damaged}: {why}; using "
                           f"{found}")
                return found
            skipped.append((found, problem))
        if done:
            raise ValueError(f"no undamaged RLlib checkpoint at {path!r} ({len(done)} "
                             f"damaged; the newest, {skipped[0][0]}: {skipped[0][1]})")
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
