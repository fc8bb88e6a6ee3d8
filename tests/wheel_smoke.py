"""Smoke test of an installed wheel, run with the Python it is installed in, away from the sources.

    python tests/wheel_smoke.py

It needs the package with its ``eval`` extra and nothing else (no torch, no compiler, no pytest):
tests/test_wheel.py runs it in a fresh virtual environment and cibuildwheel after each build
(``[tool.cibuildwheel]`` in pyproject.toml). Each step prints one line; a failure raises.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig

import numpy as np


def check_installed() -> None:
    """The package and its compiled core come from this environment's site-packages."""
    import moonriver_env.moonriver.core._core as core

    import moonriver_env

    site = {os.path.realpath(sysconfig.get_paths()[k]) for k in ("purelib", "platlib")}
    for path in (moonriver_env.__file__, core.__file__):
        assert any(os.path.realpath(path).startswith(s + os.sep) for s in site), path
    assert moonriver_env.__version__ == importlib.metadata.version("moonriver-env")
    print(f"installed: moonriver-env {moonriver_env.__version__}, core {core.__file__}")


def check_pettingzoo() -> None:
    """PettingZoo's api_test on the AEC environment, compiled core and Python engine."""
    from pettingzoo.test import api_test

    from moonriver_env import moonriver_v0

    for backend in ("core", "python"):
        api_test(moonriver_v0.env(num_players=3, backend=backend), num_cycles=200,
                 verbose_progress=False)
    print("pettingzoo: api_test passed (core and python)")


def check_batched() -> None:
    """gymnasium.make_vec("MoonRiver-v0") plays random legal actions over a batch of games."""
    import gymnasium

    import moonriver_env  # noqa: F401  (registers MoonRiver-v0)

    envs = gymnasium.make_vec("MoonRiver-v0", num_envs=4, num_players=2)
    rng = np.random.default_rng(0)
    _, infos = envs.reset(seed=0)
    ended = 0
    for _ in range(300):
        masks = infos["action_mask"]
        actions = [rng.choice(np.flatnonzero(m)) for m in masks]
        _, _, terminated, truncated, infos = envs.step(np.asarray(actions))
        ended += int(np.sum(terminated | truncated))
    envs.close()
    assert ended > 0, "no game of the batch ended in 300 steps"
    print(f"batched: 4 games x 300 steps, {ended} games ended")


def check_pretrained() -> None:
    """The shipped pretrained agent plays a 2-player game as the Gymnasium env's opponent."""
    import gymnasium

    import moonriver_env  # noqa: F401  (registers MoonRiver-v0)

    env = gymnasium.make("MoonRiver-v0", num_players=2, opponents="pretrained")
    rng = np.random.default_rng(1)
    env.reset(seed=1)
    done, steps = False, 0
    while not done:
        legal = np.flatnonzero(env.unwrapped.action_masks())
        _, _, terminated, truncated, _ = env.step(int(rng.choice(legal)))
        done, steps = terminated or truncated, steps + 1
    print(f"pretrained: a game against it ended after {steps} decisions")


def check_eval() -> None:
    """A 4-game moonriver-eval between pretrained and greedy (the console script)."""
    script = shutil.which("moonriver-eval", path=os.path.dirname(sys.executable))
    assert script is not None, "moonriver-eval is not installed beside this Python"
    proc = subprocess.run([script, "--agents", "pretrained", "greedy", "--players", "2",
                           "--games", "4", "--no-progress"], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "pretrained" in proc.stdout and "greedy" in proc.stdout, proc.stdout
    print("moonriver-eval: 4 games, pretrained vs greedy")


def main() -> int:
    """Run every check; the first failure raises."""
    for check in (check_installed, check_pettingzoo, check_batched, check_pretrained, check_eval):
        check()
    print("wheel smoke test: passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
