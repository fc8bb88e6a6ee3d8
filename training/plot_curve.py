"""Plot a run's learning curve (PNG) from its logs.

Of a ``moonriver-train`` (SB3) run: evaluation win rates and the mean training episode reward."""

from __future__ import annotations

import glob
import os

import numpy as np

from moonriver_env.common.cli import ArgumentParser, CLIError, add_debug_flag, cli_main, require

PROG = "python -m moonriver_env.training.plot_curve"
FORMATS = (".png", ".svg", ".pdf")


def eval_curves(run: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Baseline name -> (timesteps, win rate) from a run directory."""
    curves = {}
    for path in sorted(glob.glob(os.path.join(run, "eval_*", "evaluations.npz"))):
        data = np.load(path)
        name = os.path.basename(os.path.dirname(path))[len("eval_"):]
        # rewards are +1 (win) and -1 (loss)
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


def figure(run: str, title: str | None = None):
    """The learning-curve figure of a run (constrained layout: no label is clipped)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not os.path.isdir(run):
        raise CLIError(f"run directory not found: {run}")
    curves = eval_curves(run)
    steps, values = train_curve(run)
    if not curves and not steps.size:
        raise CLIError(f"{run} has no evaluations (eval_*/evaluations.npz) and no TensorBoard "
                       f"logs (tb/): is it a moonriver-train run directory?")
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True, layout="constrained")
    for name, (eval_steps, rate) in curves.items():
        top.plot(eval_steps, rate, marker="o", label=f"vs {name}")
    top.axhline(0.6, color="grey", linestyle="--", linewidth=1, label="60%")
    top.set_ylabel("win rate (evaluation)")
    top.set_ylim(0, 1)
    top.legend(loc="best", fontsize="small")
    top.set_title(title or f"MaskablePPO learning curve ({os.path.basename(run.rstrip('/'))})",
                  wrap=True)
    if steps.size:
        bottom.plot(steps, values, color="tab:green")
    bottom.set_xlabel("timesteps")
    bottom.set_ylabel("mean training\nepisode reward")
    return fig


def clipped_axes(fig) -> list[str]:
    """Y labels of the axes whose drawn labels, ticks or title reach outside the figure."""
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    out = []
    for ax in fig.axes:
        drawn = ax.get_tightbbox(renderer)  # everything the axes draws, tick labels included
        if drawn.x0 < box.x0 - 0.5 or drawn.y0 < box.y0 - 0.5 or \
                drawn.x1 > box.x1 + 0.5 or drawn.y1 > box.y1 + 0.5:
            out.append(ax.get_ylabel())
    return out


def plot(run: str, out: str, title: str | None = None, force: bool = False) -> str:
    """Draw the curves into ``out`` and return its path; an existing file needs ``force``."""
    import matplotlib.pyplot as plt

    check_out(out, force)
    fig = figure(run, title)
    try:
        fig.canvas.draw()  # lay out before writing
        os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
        fig.savefig(out, dpi=110)
    finally:
        plt.close(fig)
    return out


def check_out(out: str, force: bool) -> None:
    """Refuse an unsupported format, and an existing file unless ``force``."""
    if os.path.splitext(out)[1].lower() not in FORMATS:
        raise CLIError(f"--out must end in one of {', '.join(FORMATS)}, got {out!r}")
    if os.path.isdir(out):
        raise CLIError(f"--out {out!r} is a directory; give a file name such as "
                       f"{os.path.join(out, 'learning_curve.png')}")
    if os.path.exists(out) and not force:
        raise CLIError(f"{out} exists; choose another --out or pass --force to overwrite it")


@cli_main(PROG)
def main(argv: list[str] | None = None) -> int:
    """CLI."""
    parser = ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("run", help="run directory of moonriver-train")
    parser.add_argument("--out", default="learning_curve.png",
                        help=f"image file, {'/'.join(FORMATS)} (default: %(default)s)")
    parser.add_argument("--force", action="store_true",
                        help="overwrite --out if it exists (default: refuse)")
    parser.add_argument("--title", default=None, help="figure title (default: from the run)")
    add_debug_flag(parser)
    args = parser.parse_args(argv)
    check_out(args.out, args.force)
    require("matplotlib", "tensorboard", what="plot_curve")
    print("wrote", plot(args.run, args.out, args.title, force=args.force))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
