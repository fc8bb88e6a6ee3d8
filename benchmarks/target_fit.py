"""How far a network's policy takes up its search's choices, learned from a fixed set of them.

    python benchmarks/target_fit.py --variants 4p-base --decisions 60000 --held-out 6000 \
        --table-search --steps 2000 --every 500 [--widen-hidden 256] [--seed 8744000000]
    python benchmarks/target_fit.py ... --target steady --target-searches 2 --out FILE

The network's batched search (``--expert``, default the shipped one; ``--simulations``, the
Gumbel recipe's constants and root noise; ``--table-search``: the agents' playouts and c_scale
at tables of 3 and 4; ``--target-searches K``: the mean of K searches; ``--target``: the
trainer's policy target, ``steady`` the action all K chose) plays games of
``--variants`` and records its policy target at every decision, as ``moonriver-train-az``'s
self-play with that network as expert: ``--decisions`` to learn from and ``--held-out`` from
other games. The same network (``--widen-hidden H``: its rest and trunk layers H wide, the same
function) then learns them for ``--steps`` minibatch steps with the trainer's losses; every
``--every`` steps it prints, on both sets, how often its most likely action is the target's and
its cross-entropy to the targets (rows with a target only); ``--out`` writes the network it
ends with as an ``az.npz``. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import numpy as np
import torch
from machine import machine  # this script's directory is on sys.path
from moonriver_env.agents.az import shipped_path
from moonriver_env.training.az import network, selfplay
from moonriver_env.training.az.train import (
    MAX_TARGET_SEARCHES,
    TARGETS,
    AZConfig,
    ReplayBuffer,
    batched_search,
    expert_evaluator,
    head_inputs,
    losses,
    parameter_groups,
    policy_cross_entropy,
)
from moonriver_env.training.variants import variant_list
from progress import main_of

from moonriver_env.moonriver.actions import SEGMENTS


def record(cfg: AZConfig, count: int, stream: int, uses_prior: bool) -> ReplayBuffer:
    """``count`` searched decisions of games drawn from the generator ``[seed, stream, k]``."""
    kept = ReplayBuffer(count)
    evaluate = expert_evaluator(cfg.expert, "core", torch.device("cpu"))
    make = batched_search(cfg)
    k = 0
    while kept.size < count:
        rng = np.random.default_rng([cfg.seed, stream, k])
        games = selfplay.new_games(variant_list(cfg.variants), cfg.games, rng)
        samples, _ = selfplay.play(games, evaluate, make, rng, prior=uses_prior,
                                   target=cfg.target, searches=cfg.target_searches)
        kept.add(samples)
        k += 1
    return kept


@torch.inference_mode()
def fit_of(net: network.AZNet, kept: ReplayBuffer) -> dict[str, Any]:
    """Over the decisions with a target: the share where the policy's most likely action is
    the target's (also by the target's kind of action), and the cross-entropy."""
    net.eval()
    entropy = 0.0
    hits, wanted = [], []
    for start in range(0, kept.size, 1024):
        part = {k: v[start:min(kept.size, start + 1024)] for k, v in kept.arrays.items()}
        logp = net.heads(*head_inputs(net, part, torch.device("cpu")))[0]
        target = torch.from_numpy(part["policy"]).float()
        has = target.sum(1) > 0
        hits.append((logp.argmax(1) == target.argmax(1))[has].numpy())
        wanted.append(target.argmax(1)[has].numpy())
        entropy += float(policy_cross_entropy(target, logp)[has].sum())
    net.train()
    hit, want = np.concatenate(hits), np.concatenate(wanted)
    rows = max(len(hit), 1)
    by_kind = {kind: {"rows": int(sel.sum()), "agree": round(float(hit[sel].mean()), 4)}
               for kind, (lo, hi) in SEGMENTS.items() if (sel := (want >= lo) & (want < hi)).any()}
    return {"rows": len(hit), "agree": round(float(hit.sum()) / rows, 4),
            "cross_entropy": round(entropy / rows, 4), "by_kind": by_kind}


@main_of("target_fit.py")
def main(argv: list[str] | None = None) -> int:
    """Record, learn, print the curve, then one JSON line."""
    p = argparse.ArgumentParser(prog="target_fit.py", description=__doc__.split("\n")[0])
    p.add_argument("--expert", default="pretrained", help="az.npz (pretrained: the shipped one)")
    p.add_argument("--variants", nargs="+", default=["4p-base"])
    p.add_argument("--decisions", type=int, default=60_000)
    p.add_argument("--held-out", type=int, default=6_000)
    p.add_argument("--simulations", type=int, default=128)
    p.add_argument("--table-search", action="store_true")
    p.add_argument("--target-searches", type=int, default=1)
    p.add_argument("--target", choices=TARGETS, default="improved")
    p.add_argument("--steps", type=int, default=2_000)
    p.add_argument("--every", type=int, default=500)
    p.add_argument("--learning-rate", type=float, default=3e-4)
    p.add_argument("--widen-hidden", type=int, default=0, help="0: the network as it is")
    p.add_argument("--threads", type=int, default=2, help="search and torch threads")
    p.add_argument("--seed", type=int, default=8_744_000_000)
    p.add_argument("--out", default="", help="write the fine-tuned network here (az.npz)")
    args = p.parse_args(argv)
    if min(args.decisions, args.held_out, args.every, args.threads, args.simulations) < 1:
        p.error("--decisions, --held-out, --every, --threads and --simulations must be >= 1")
    if args.steps < 0 or args.seed < 0 or not 0 < args.learning_rate < float("inf"):
        p.error("--steps and --seed must be >= 0, --learning-rate finite and > 0")
    if not 1 <= args.target_searches <= MAX_TARGET_SEARCHES:
        p.error(f"--target-searches must be 1 to {MAX_TARGET_SEARCHES}")
    if args.out and not os.path.isdir(os.path.dirname(os.path.abspath(args.out))):
        p.error(f"--out {args.out!r}: its folder does not exist")
    if args.target == "steady" and args.target_searches < 2:
        p.error("--target steady needs --target-searches >= 2 (the searches that must agree)")
    try:
        variant_list(args.variants)
    except ValueError as exc:
        p.error(str(exc))
    expert = shipped_path() if args.expert == "pretrained" else args.expert
    if not network.is_az_file(expert):
        p.error(f"--expert {args.expert!r}: not an az.npz of the search recipe")
    net = network.load_az_net(expert)
    if args.widen_hidden and args.widen_hidden < net.config.hidden:
        p.error(f"--widen-hidden must be 0 or >= the network's {net.config.hidden} units")
    start = time.perf_counter()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    cfg = AZConfig(seed=args.seed, variants=tuple(args.variants), games=64,
                   simulations=args.simulations, max_considered=16, c_visit=50.0,
                   table_search=args.table_search, target=args.target,
                   target_searches=args.target_searches,
                   search_threads=args.threads, leaves="core", expert=expert, iterations=1)
    learned = record(cfg, args.decisions, 0, net.uses_prior)
    held_out = record(cfg, args.held_out, 1, net.uses_prior)
    if args.widen_hidden:
        net = network.widen_hidden(net, args.widen_hidden)
    opt = torch.optim.AdamW(parameter_groups(net), lr=args.learning_rate, weight_decay=1e-4)
    rng = np.random.default_rng([args.seed, 2])
    curve = []
    for step in range(args.steps + 1):
        if step % args.every == 0 or step == args.steps:
            point = {"step": step, "learned": fit_of(net, learned),
                     "held_out": fit_of(net, held_out)}
            curve.append(point)
            print(f"step {step}: learned set agrees {point['learned']['agree']:.3f} "
                  f"(cross-entropy {point['learned']['cross_entropy']:.3f}), held out "
                  f"{point['held_out']['agree']:.3f} ({point['held_out']['cross_entropy']:.3f})",
                  flush=True)
        if step == args.steps:
            break
        loss, _ = losses(net, learned.batch(rng, 256), torch.device("cpu"), cfg)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    with_target = float((learned.arrays["policy"][:learned.size].sum(1) > 0).mean())
    if args.out:
        network.export_npz(net, args.out, {"made_by": "benchmarks/target_fit.py",
                                           "arguments": vars(args)})
    print(json.dumps({"benchmark": "target_fit", "expert": args.expert, "target": args.target,
                      "with_target": round(with_target, 4), "out": args.out,
                      "variants": args.variants, "decisions": args.decisions,
                      "held_out": args.held_out, "simulations": args.simulations,
                      "table_search": args.table_search, "target_searches": args.target_searches,
                      "steps": args.steps, "learning_rate": args.learning_rate,
                      "widen_hidden": args.widen_hidden, "seed": args.seed, "curve": curve,
                      "seconds": round(time.perf_counter() - start, 1), "machine": machine()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
