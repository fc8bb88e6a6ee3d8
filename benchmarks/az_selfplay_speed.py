"""Self-play speed of the search recipe: the batched loop against the same search played one
game at a time (same games, same network, the network included), then the batch with its
leaves valued inside the core (``leaves = "core"``: a C++ copy of the network); the two batched
loops interleaved over ``--rounds`` rounds of the same games.

    python benchmarks/az_selfplay_speed.py --games 16 --simulations 32 [--threads 2] [--rounds 2]

The network is ``az_all.toml``'s (RanchNet sizes 32/16/128, Greedy's prior added: each leaf's
prior is computed in the core), untrained: its speed does not depend on its weights. Each loop
prints where its time went (``selfplay.PHASES``: the search's phases summed over its threads,
the set-up, the recorded decisions and the rest), also in the JSON line.
``--threads`` sets torch's threads and the search's core threads for both loops. Last line:
one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np
import torch
from machine import machine  # this script's directory is on sys.path
from moonriver_env.training.az.network import AZNet, core_network
from moonriver_env.training.az.selfplay import CoreLeaves, PlayStats, new_games, phase_line, play
from moonriver_env.training.az.train import AZConfig, batched_search, network_evaluator, pick_device
from moonriver_env.training.policy_net import NetConfig
from moonriver_env.training.variants import ALL_VARIANTS
from progress import main_of

from moonriver_env.common.cli import CLIError


def timed(groups: list[list[object]], cfg: AZConfig, net: AZNet, device: torch.device,
          core: bool = False) -> tuple[PlayStats, float]:
    """Play each group of games as one batch (``core``: the leaves valued inside the core);
    the summed stats and the seconds."""
    total = PlayStats()
    evaluate = CoreLeaves(core_network(net)) if core else network_evaluator(net, device)
    start = time.perf_counter()
    for games in groups:
        _, stats = play(games, evaluate, batched_search(cfg), np.random.default_rng(cfg.seed),
                        prior=cfg.prior)
        total.add(stats)
    return total, time.perf_counter() - start


def line(what: str, stats: PlayStats, seconds: float) -> str:
    """One result line: decisions/s, leaf evaluations/s and network calls."""
    return (f"{what}: {stats.games} games, {stats.decisions} decisions in {seconds:.1f}s = "
            f"{stats.decisions / seconds:.0f} decisions/s, {stats.leaves / seconds:.0f} leaf "
            f"evaluations/s, {stats.steps} network calls\n  time: {phase_line(stats.seconds)}")


def rates(stats: PlayStats, seconds: float) -> dict[str, Any]:
    """One loop's figures for the JSON line."""
    return {"games": stats.games, "decisions": stats.decisions, "seconds": round(seconds, 2),
            "decisions_per_s": round(stats.decisions / seconds, 1),
            "leaf_evaluations_per_s": round(stats.leaves / seconds), "network_calls": stats.steps,
            "phase_seconds": {k: round(v, 3) for k, v in stats.seconds.items()}}


@main_of("az_selfplay_speed.py")
def main(argv: list[str] | None = None) -> int:
    """Measure both loops and print their ratio, then one JSON line."""
    p = argparse.ArgumentParser(prog="az_selfplay_speed.py", description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=16)
    p.add_argument("--simulations", type=int, default=32)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch and search threads (>= 1)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu")
    p.add_argument("--rounds", type=int, default=2,
                   help="rounds of the two batched loops, interleaved (the same games each)")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error(f"--rounds must be >= 1, got {args.rounds}")
    cfg = AZConfig(games=args.games, simulations=args.simulations, seed=args.seed,
                   iterations=1, device=args.device, torch_threads=args.threads,
                   leaves="torch",
                   search_threads=args.threads)
    try:
        cfg.validate()
    except (CLIError, ValueError) as exc:  # CLIError: AZConfig's words for a bad setting
        p.error(str(exc))
    device = pick_device(cfg.device)
    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(cfg.seed)
    net = AZNet(NetConfig(channels=cfg.channels, opponent_channels=cfg.opponent_channels,
                          hidden=cfg.hidden, use_prior=cfg.prior)).to(device).eval()

    def games() -> list[object]:
        return new_games(ALL_VARIANTS, cfg.games, np.random.default_rng(cfg.seed))

    batched, inside = PlayStats(), PlayStats()
    t_batched = t_inside = 0.0
    for r in range(args.rounds):  # interleaved, the order alternating
        for core in ((False, True) if r % 2 == 0 else (True, False)):
            stats, seconds = timed([games()], cfg, net, device, core=core)
            (inside if core else batched).add(stats)
            if core:
                t_inside += seconds
            else:
                t_batched += seconds
    print(line("batched", batched, t_batched), flush=True)
    single, t_single = timed([[g] for g in games()], cfg, net, device)
    print(line("one game at a time", single, t_single))
    ratio = (batched.decisions / t_batched) / (single.decisions / t_single)
    print(f"batched / one at a time: x{ratio:.2f} decisions/s (device {device})", flush=True)
    print(line("batched, leaves valued inside the core", inside, t_inside))
    gain = (inside.decisions / t_inside) / (batched.decisions / t_batched)
    print(f"inside the core / batched: x{gain:.2f} decisions/s")
    print(json.dumps({"benchmark": "az_selfplay_speed", "games": cfg.games,
                      "simulations": cfg.simulations, "seed": cfg.seed, "threads": args.threads,
                      "device": str(device),
                      "results": {"batched": rates(batched, t_batched),
                                  "one_at_a_time": rates(single, t_single),
                                  "core_leaves": rates(inside, t_inside)},
                      "batched_vs_one_at_a_time": round(ratio, 2),
                      "core_vs_batched": round(gain, 2), "machine": machine()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
