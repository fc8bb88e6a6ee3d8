"""Learning curve of fast-recipe runs: every checkpoint against Greedy and random play.

Results go to ``curve.json`` in each run directory; ``--out`` also plots them."""

from __future__ import annotations

import argparse
import glob
import json
import os
from typing import Any

import torch
from moonriver_env.training.fast.rollout import TRAINING_SEEDS, evaluate
from moonriver_env.training.policy_net import load_net


def run_curve(run: str, games: int, opponents: tuple[str, ...]) -> list[dict[str, Any]]:
    """Evaluate every checkpoint of one run directory; writes and returns its curve."""
    paths = sorted(glob.glob(os.path.join(run, "checkpoints", "net_*.pt")))
    paths += [p for p in (os.path.join(run, "final.pt"),) if os.path.isfile(p)]
    if not paths:
        raise FileNotFoundError(f"{run}: no checkpoints/net_*.pt or final.pt")
    points: list[dict[str, Any]] = []
    for path in paths:
        net, meta = load_net(path)
        if points and meta["seconds"] == points[-1]["seconds"]:
            continue  # final.pt saved at the same moment as the last checkpoint
        point = {"checkpoint": os.path.basename(path), "seconds": meta["seconds"],
                 "samples": meta["samples"]}
        recipe = meta.get("config", {})  # a run over variants: its evaluation variant
        players = meta.get("num_players", recipe.get("num_players"))
        mode = meta.get("mode", recipe.get("mode"))
        for opponent in opponents:
            point[f"vs_{opponent}"] = evaluate(net, players, mode, games, opponent=opponent,
                                               seed=TRAINING_SEEDS)
        print(json.dumps(point), flush=True)
        points.append(point)
    with open(os.path.join(run, "curve.json"), "w", encoding="utf-8") as fh:
        json.dump({"games": games, "points": points}, fh, indent=1)
    return points


def plot(curves: dict[str, list[dict[str, Any]]], opponents: tuple[str, ...], out: str,
         games: int) -> None:
    """Win share against each opponent over training minutes, one line per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(opponents), figsize=(5 * len(opponents), 3.6))
    for ax, opponent in zip(list(getattr(axes, "flat", [axes])), opponents, strict=True):
        for run, points in curves.items():
            ax.plot([p["seconds"] / 60 for p in points], [p[f"vs_{opponent}"] for p in points],
                    marker="o", label=os.path.basename(run.rstrip("/")))
        ax.set_xlabel("training minutes (wall clock)")
        ax.set_ylabel(f"win share vs {opponent}")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"{games} games per point against each opponent, seats rotated", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="run directories of the fast recipe")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--opponents", nargs="+", default=["greedy", "random"],
                        choices=["greedy", "random"])
    parser.add_argument("--out", help="PNG to write")
    parser.add_argument("--replot", action="store_true",
                        help="plot each run's existing curve.json instead of evaluating")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    torch.set_num_threads(1)
    opponents = tuple(args.opponents)
    if args.replot:
        curves = {}
        for run in args.runs:
            with open(os.path.join(run, "curve.json"), encoding="utf-8") as fh:
                saved = json.load(fh)
            curves[run], args.games = saved["points"], saved["games"]
    else:
        curves = {run: run_curve(run, args.games, opponents) for run in args.runs}
    if args.out:
        plot(curves, opponents, args.out, args.games)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
