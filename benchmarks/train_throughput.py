"""Learner throughput of the shipped fast recipe (training/configs/fast_4p_base.toml).

    python benchmarks/train_throughput.py [--seconds 60] [--config FILE] [--set KEY=VALUE ...]
        [--sb3-seconds 0]

Runs the recipe's PPO phase (rollouts against Greedy / itself / snapshots, then the PPO
update) for ``--seconds`` after one warm-up iteration, and the imitation phase for a quarter
of that; prints the learner steps per wall-clock second and per CPU second (this process plus
the CPU its play workers spent playing; the fairer figure on a shared machine). The
recipe's ``workers`` setting (processes that play the games) is reported with the figures.
``--set KEY=VALUE`` (any FastConfig setting, TOML value syntax) measures a variant, e.g.
``--set use_prior=false --set p_greedy=0 --set p_self=1`` for the network alone in pure
self-play, ``--set workers=1`` for all the play in one process, ``--set split_updates=false``
for PPO updates in the main process alone (on ``update_threads``), ``--config
training/configs/fast_all.toml --set 'init=""' --set 'play_split="variants"'`` for whole
variants per play process, ``--set backend=python`` for
the per-game play on the reference engine. ``--sb3-seconds N`` also times the SB3 MaskablePPO
recipe (training/configs/ppo_4p_base.toml) for N seconds in the same run, for comparison. The
last line is one JSON object; ``learner_steps_per_s`` is the PPO phase's wall-clock rate.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import tomllib

# The recipe's module sets OMP_WAIT_POLICY=PASSIVE before torch loads its OpenMP runtime
# (which reads it once): import it before torch, so the benchmark measures what a run does.
from moonriver_env.training.fast.train import FastConfig, Runner  # isort: skip
import torch  # isort: skip
from machine import machine  # this script's directory is on sys.path  # isort: skip
from progress import main_of

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "training", "configs", "fast_4p_base.toml")


def _cpu(runner: Runner) -> float:
    """CPU seconds of this process plus those its play workers reported."""
    return time.process_time() + (runner.pool.worker_cpu_s if runner.pool else 0.0)


def timed(run, seconds: float) -> tuple[int, float, float]:
    """Samples, wall seconds and CPU seconds of ``run(seconds)`` (a Runner phase)."""
    runner, phase = run
    before = runner.steps
    wall, cpu = time.perf_counter(), _cpu(runner)
    getattr(runner, phase)(seconds)
    return runner.steps - before, time.perf_counter() - wall, _cpu(runner) - cpu


def sb3_rate(seconds: float, out: str) -> float:
    """Learner steps per second of the SB3 MaskablePPO recipe over ``seconds``."""
    from moonriver_env.training.sb3.train import TrainConfig, train

    cfg = TrainConfig.load(os.path.join(ROOT, "training", "configs", "ppo_4p_base.toml"),
                           {"out": out, "max_minutes": seconds / 60, "progress": False,
                            "eval_opponents": (), "checkpoint_every": 10**9})
    start = time.perf_counter()
    model = train(cfg)
    return model.num_timesteps / (time.perf_counter() - start)


@main_of("train_throughput.py")
def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; the last printed line is JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--config", default=CONFIG)
    parser.add_argument("--sb3-seconds", type=float, default=0.0)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one FastConfig setting (TOML value syntax)")
    args = parser.parse_args(argv)
    overrides = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--set expects KEY=VALUE, got {item!r}")
        overrides[key] = tomllib.loads(f"v = {value}")["v"]
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = FastConfig.load(args.config, {**overrides, "out": os.path.join(tmp, "fast"),
                                            "eval_games": 0})
        with Runner(cfg) as runner:
            timed((runner, "ppo"), 1e-3)  # one warm-up iteration
            bc_steps, bc_wall, bc_cpu = timed((runner, "imitation"), args.seconds / 4)
            steps, wall, cpu = timed((runner, "ppo"), args.seconds)
        result = {
            "config": os.path.relpath(args.config, ROOT), "overrides": overrides,
            "workers": cfg.workers, "update_threads": cfg.update_threads,
            "split_updates": cfg.split_updates, "play_split": cfg.play_split,
            "learner_steps_per_s": round(steps / wall, 1),
            "learner_steps_per_cpu_s": round(steps / cpu, 1),
            "ppo_steps": steps, "ppo_wall_s": round(wall, 1), "ppo_cpu_s": round(cpu, 1),
            "imitation_samples_per_s": round(bc_steps / bc_wall, 1),
            "imitation_samples_per_cpu_s": round(bc_steps / bc_cpu, 1),
        }
        if args.sb3_seconds:
            cpu0 = time.process_time()
            result["sb3_maskable_ppo_steps_per_s"] = round(
                sb3_rate(args.sb3_seconds, os.path.join(tmp, "sb3")), 1)
            result["sb3_cpu_s"] = round(time.process_time() - cpu0, 1)
    print(f"fast recipe PPO ({cfg.workers} workers): {result['learner_steps_per_s']} "
          f"learner steps/s "
          f"({result['learner_steps_per_cpu_s']} per CPU second), imitation "
          f"{result['imitation_samples_per_s']} samples/s")
    print(json.dumps({**result, "machine": machine()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
