"""The search recipe's iterations on the CPU and on a CUDA GPU, in one run.

Builds ``moonriver-train-az``'s run (training/configs/az_all.toml, past its value warm-up:
``value_warmup = 0``, so every iteration is a searched one) once per device, then times
``--iterations`` iterations of each, interleaved (cpu, cuda, cpu, cuda, ...; the first of each
is a warm-up and is not counted): self-play decisions/s and network leaf evaluations/s, and
the updates' samples/s. ``--games`` (one or more, comma-separated) sets the games played
together: the leaves of all of them go to the network in one batch per simulation step. The
figures are the same command's on each device (``--device cpu`` and ``--device cuda``); with
no GPU only the CPU is timed. Prints the machine and ends with one JSON line.

    python benchmarks/az_device.py [--games 64,256] [--iterations 2] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from machine import machine  # this script's directory is on sys.path
from moonriver_env.training.az.train import AZConfig, Run
from progress import main_of

CONFIG = Path(__file__).resolve().parents[1] / "training" / "configs" / "az_all.toml"


class TimedRun(Run):
    """A run that also reports how long its updates took, apart from its self-play."""

    update_seconds = 0.0

    def _train(self, teacher: Any) -> dict[str, float]:
        t0 = time.perf_counter()
        try:
            return super()._train(teacher)
        finally:
            if self.device.type == "cuda":
                torch.cuda.synchronize()
            self.update_seconds = time.perf_counter() - t0


def make_run(games: int, device: str, threads: int, out: str) -> TimedRun:
    """The recipe's run on ``device`` with ``games`` games together and no value warm-up."""
    cfg = AZConfig.load(str(CONFIG), {"games": games, "device": device, "value_warmup": 0,
                                      "search_threads": threads, "torch_threads": threads,
                                      "iterations": 10**6, "out": out})
    cfg = replace(cfg, warm_start=str(CONFIG.parents[2] / cfg.warm_start))
    return TimedRun(cfg, report=lambda _line: None)


def measure(games: int, devices: list[str], iterations: int, threads: int,
            out: str) -> dict[str, dict[str, float]]:
    """Per device: decisions/s, leaf evaluations/s and update samples/s (timed iterations)."""
    runs = {d: make_run(games, d, threads, f"{out}/{d}-{games}") for d in devices}
    totals = {d: {"decisions": 0.0, "leaves": 0.0, "play_s": 0.0, "update_s": 0.0}
              for d in devices}
    for i in range(iterations + 1):
        for d, run in runs.items():
            t0 = time.perf_counter()
            line = run.step()
            seconds = time.perf_counter() - t0
            decisions = float(line.split(" decisions")[0].rsplit(" ", 1)[1])
            leaves = float(line.split(" leaves")[0].rsplit(" ", 1)[1])
            print(f"  games {games} {d:4s} iteration {i}{' (warm-up)' if i == 0 else ''}: "
                  f"{seconds:.1f}s, {line}", flush=True)
            if i == 0:
                continue
            t = totals[d]
            t["decisions"] += decisions
            t["leaves"] += leaves
            t["update_s"] += run.update_seconds
            t["play_s"] += seconds - run.update_seconds
    result = {}
    for d, t in totals.items():
        cfg = runs[d].cfg
        result[d] = {"decisions_per_s": round(t["decisions"] / t["play_s"], 1),
                     "leaf_evaluations_per_s": round(t["leaves"] / t["play_s"], 1),
                     "update_samples_per_s": round(iterations * cfg.updates * cfg.batch_size
                                                   / max(t["update_s"], 1e-9), 1),
                     "seconds_per_iteration": round((t["play_s"] + t["update_s"])
                                                    / iterations, 2)}
    return result


@main_of("az_device.py")
def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--games", default="64", help="comma-separated games played together")
    p.add_argument("--iterations", type=int, default=2, help="timed iterations per device")
    p.add_argument("--threads", type=int, default=1, help="search and torch threads")
    args = p.parse_args()
    try:
        sizes = [int(x) for x in args.games.split(",")]
        if min(sizes) < 1 or args.iterations < 1 or args.threads < 1:
            raise ValueError
    except ValueError:
        print("az_device: --games takes positive integers (e.g. 64,256); --iterations and "
              "--threads must be >= 1", file=sys.stderr)
        return 2
    devices = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
    info = machine()
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
    print(json.dumps(info))
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as out:
        for games in sizes:
            results[str(games)] = r = measure(games, devices, args.iterations, args.threads, out)
            for d, row in r.items():
                print(f"games {games:5d} {d:4s}: {row['decisions_per_s']:8.0f} decisions/s, "
                      f"{row['leaf_evaluations_per_s']:9.0f} leaves/s, "
                      f"{row['update_samples_per_s']:9.0f} update samples/s, "
                      f"{row['seconds_per_iteration']:6.1f} s/iteration", flush=True)
            if "cuda" in r:
                r["cuda_over_cpu"] = {k: round(r["cuda"][k] / r["cpu"][k], 2)
                                      for k in ("decisions_per_s", "update_samples_per_s")}
    print(json.dumps({"benchmark": "az_device", "iterations": args.iterations,
                      "threads": args.threads, "results": results, "machine": info}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
