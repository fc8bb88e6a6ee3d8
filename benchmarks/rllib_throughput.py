"""RLlib throughput: sampled env steps/s and learner env steps/s per env backend and runner count.

    python benchmarks/rllib_throughput.py                 # 1 and 2 env runners of 64 batched games
    python benchmarks/rllib_throughput.py --env-backend pettingzoo batched --runners 1 \
        --envs-per-runner 1 4 64                          # the two env backends side by side
    python benchmarks/rllib_throughput.py --runners 1 4 16 64 --address HEAD_IP:6379

Each configuration (env backend x env runners x envs per runner) is a PPO algorithm of
``moonriver-train-rllib`` (self-play, masking module, 256x256 MLP) built in one Ray instance;
rounds run PPO's own two halves and time them apart: ``synchronous_parallel_sample`` of
``--batch`` env steps over all env runners (sampled env steps/s), then one learner update pass
over that batch (learner env steps/s: batch env steps per second of update, one epoch), then
the weight sync. Configurations are interleaved round by round, so their ratios compare the
same moment of a noisy host; the figures are medians over ``--rounds`` rounds after one
warm-up round; ``sampling_speedup`` divides by the first configuration's figure. The last line
printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from machine import machine  # this script's directory is on sys.path
from moonriver_env.training.rllib.train import RLlibTrainConfig, build_config, start_ray
from progress import main_of


def build(backend: str, runners: int, envs: int, args: argparse.Namespace) -> Any:
    """A PPO algorithm with ``runners`` env runners of ``envs`` envs each on ``backend``."""
    cfg = RLlibTrainConfig(num_players=args.players, mode=args.mode, num_env_runners=runners,
                           num_envs_per_env_runner=envs, env_backend=backend,
                           train_batch_size=args.batch, minibatch_size=min(500, args.batch),
                           num_epochs=1, eval_every=0, address=args.address or "",
                           seed=args.seed)
    return build_config(cfg).build_algo()


def one_round(algo: Any, batch: int) -> dict[str, float]:
    """Sample ``batch`` env steps, update once on them, sync weights; the timings."""
    from ray.rllib.execution.rollout_ops import synchronous_parallel_sample
    from ray.rllib.utils.metrics import (
        NUM_ENV_STEPS_SAMPLED_LIFETIME,
        NUM_MODULE_STEPS_TRAINED_LIFETIME,
    )

    start = time.perf_counter()
    episodes = synchronous_parallel_sample(worker_set=algo.env_runner_group,
                                           max_env_steps=batch, sample_timeout_s=600,
                                           _uses_new_env_runners=True)
    sampled = time.perf_counter()
    steps = sum(e.env_steps() for e in episodes)
    algo.learner_group.update(episodes=episodes,
                              timesteps={NUM_ENV_STEPS_SAMPLED_LIFETIME: steps,
                                         NUM_MODULE_STEPS_TRAINED_LIFETIME: steps},
                              num_epochs=1, minibatch_size=algo.config.minibatch_size,
                              shuffle_batch_per_epoch=True)
    learned = time.perf_counter()
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group,
                                       inference_only=True)
    return {"env_steps": steps, "sample_s": sampled - start, "learn_s": learned - sampled,
            "round_s": time.perf_counter() - start}


@main_of("rllib_throughput.py")
def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures, then one JSON line."""
    import ray
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2],
                        help="env-runner counts to compare (default: 1 2)")
    parser.add_argument("--envs-per-runner", type=int, nargs="+", default=[64],
                        help="envs (games) per env runner, stepped as one batch (default: 64)")
    parser.add_argument("--env-backend", nargs="+", default=["batched"],
                        choices=("batched", "pettingzoo"),
                        help="env backends to compare (default: batched)")
    parser.add_argument("--batch", type=int, default=2000, help="env steps per round")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds after a warm-up")
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    parser.add_argument("--mode", default="base", choices=("base", "legends"))
    parser.add_argument("--address", default=None, help="Ray cluster (default: embedded)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if min(args.runners + args.envs_per_runner) < 1 or args.batch < 1 or args.rounds < 1:
        parser.error("--runners, --envs-per-runner, --batch and --rounds must be >= 1")

    torch.set_num_threads(1)
    combos = [(b, n, k) for b in args.env_backend for n in args.runners
              for k in args.envs_per_runner]
    cfg = RLlibTrainConfig(num_env_runners=sum(n for _, n, _ in combos),
                           address=args.address or "")
    start_ray(cfg)
    try:
        algos = {c: build(*c, args) for c in combos}
        timings: dict[tuple[str, int, int], list[dict[str, float]]] = {c: [] for c in combos}
        for r in range(args.rounds + 1):
            for n, algo in algos.items():  # interleaved: every count sees the same moment
                t = one_round(algo, args.batch)
                if r:
                    timings[n].append(t)
        results = {}
        for (b, n, k), rows in timings.items():
            results[f"{b}:{n}x{k}"] = {
                "env_backend": b, "env_runners": n, "envs_per_runner": k,
                "sampled_env_steps_per_s": statistics.median(
                    t["env_steps"] / t["sample_s"] for t in rows),
                "learner_env_steps_per_s": statistics.median(
                    t["env_steps"] / t["learn_s"] for t in rows),
                "train_env_steps_per_s": statistics.median(
                    t["env_steps"] / t["round_s"] for t in rows),
                "env_steps_per_round": statistics.median(t["env_steps"] for t in rows)}
            row = results[f"{b}:{n}x{k}"]
            print(f"{b:>10} {n:>3} env runners x {k:>3} envs: sampled "
                  f"{row['sampled_env_steps_per_s']:8.0f} env steps/s   learner "
                  f"{row['learner_env_steps_per_s']:8.0f} env steps/s   "
                  f"sample+learn {row['train_env_steps_per_s']:8.0f} env steps/s")
        cluster = ray.cluster_resources()
        for algo in algos.values():
            algo.stop()
    finally:
        ray.shutdown()
    base = results["{}:{}x{}".format(*combos[0])]["sampled_env_steps_per_s"]
    summary = {
        "benchmark": "rllib_throughput", "players": args.players, "mode": args.mode,
        "batch_env_steps": args.batch, "rounds": args.rounds,
        "address": args.address or "embedded", "cluster_cpus": cluster.get("CPU"),
        "results": results,
        "sampling_speedup": {n: round(r["sampled_env_steps_per_s"] / base, 3)
                             for n, r in results.items()},
        "machine": machine(),
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
