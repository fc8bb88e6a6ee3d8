"""Plot a run's learning curve (PNG) from its logs.

    python -m moonriver_env.training.plot_curve runs/ppo4p --out docs/learning_curve.png

Top: win rate against each fixed baseline over training (from ``eval_*/evaluations.npz``,
written by the periodic masked evaluations; win reward +1, loss -1, so win rate =
(mean + 1) / 2). Bottom: mean training episode reward (TensorBoard ``rollout/ep_rew_mean``).
"""

from __future__ import annotations

import argparse
import glob
import os

import numpy as np


def eval_curves(run: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Baseline name -> (timesteps, win rate) from a run directory."""
    curves = {}
    for path in sorted(glob.glob(os.path.join(run, "eval_*", "evaluations.npz"))):
        data = np.load(path)
        name = os.path.basename(os.path.dirname(path))[len("eval_"):]
        curves[name] = (data["timesteps"], (data["results"].mean(axis=1) + 1) / 2)
    return curves


def train_curve(run: str) -> tuple[np.ndarray, np.ndarray]:
    """(timesteps, mean episode reward) from the run's TensorBoard logs."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    steps, values = [], []
    for path in sorted(glob.glob(os.path.join(run, "tb", "*"))):
        acc = EventAccumulator(path)
        acc.Reload()
        if "rollout/ep_rew_mean" in acc.Tags().get("scalars", []):
            for event in acc.Scalars("rollout/ep_rew_mean"):
                steps.append(event.step)
                values.append(event.value)
    return np.array(steps), np.array(values)


def plot(run: str, out: str, title: str | None = None) -> str:
    """Draw the curves into ``out`` and return its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for name, (steps, rate) in eval_curves(run).items():
        top.plot(steps, rate, marker="o", label=f"vs {name}")
    top.axhline(0.6, color="grey", linestyle="--", linewidth=1, label="60%")
    top.set_ylabel("win rate (evaluation)")
    top.set_ylim(0, 1)
    top.legend()
    top.set_title(title or f"MaskablePPO learning curve ({os.path.basename(run.rstrip('/'))})")
    steps, values = train_curve(run)
    if steps.size:
        bottom.plot(steps, values, color="tab:green")
    bottom.set_xlabel("timesteps")
    bottom.set_ylabel("mean training episode reward")
    fig.tight_layout()
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="run directory of moonriver-train")
    parser.add_argument("--out", default="learning_curve.png")
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)
    print("wrote", plot(args.run, args.out, args.title))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
