"""Random masked play through the PettingZoo env, exactly like a training loop.

For each Moon River variant, and in the same run PettingZoo's own ``tictactoe_v3`` (the API's
overhead floor) and ``chess_v6`` (a peer with a 4672-action mask): agent-steps/s, games/s,
and the ratios of 4-player base to both. Last line: one JSON object.

    python benchmarks/env_throughput.py [--seconds 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

import numpy as np

from moonriver_env import moonriver_v0

VARIANTS = {
    "4p-base": {"num_players": 4, "mode": "base"},
    "3p-base": {"num_players": 3, "mode": "base"},
    "2p-base": {"num_players": 2, "mode": "base"},
    "4p-legends": {"num_players": 4, "mode": "legends"},
    "2p-legends": {"num_players": 2, "mode": "legends"},
}


def run(make: Callable[[], object], seconds: float, seed: int) -> tuple[int, int, float]:
    """Play whole games for about ``seconds``; return (agent-steps, games, elapsed)."""
    env = make()
    rng = np.random.default_rng(seed)
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed + games)
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"].view(np.bool_))  # int8 0/1 mask
                action = int(legal[rng.integers(legal.size)])
            env.step(action)
            steps += 1
        games += 1
    return steps, games, time.perf_counter() - start


def measure(make: Callable[[], object], seconds: float, repeats: int) -> dict[str, float]:
    """Median agent-steps/s and games/s over several runs."""
    runs = [run(make, seconds, seed=1000 * r) for r in range(repeats)]
    return {"agent_steps_per_s": round(statistics.median(s / t for s, _, t in runs)),
            "games_per_s": round(statistics.median(g / t for _, g, t in runs), 2)}


def main() -> None:
    """Benchmark every variant and the two PettingZoo references."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per env (median)")
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    for name, cfg in VARIANTS.items():
        results[name] = measure(lambda cfg=cfg: moonriver_v0.env(**cfg), args.seconds, args.repeats)
        print(f"moonriver {name:<11} {results[name]['agent_steps_per_s']:>9,} agent-steps/s "
              f"{results[name]['games_per_s']:>8.2f} games/s")
    from pettingzoo.classic import chess_v6, tictactoe_v3

    for name, module in (("tictactoe_v3", tictactoe_v3), ("chess_v6", chess_v6)):
        results[name] = measure(module.env, args.seconds, args.repeats)
        print(f"{name:<21} {results[name]['agent_steps_per_s']:>9,} agent-steps/s "
              f"{results[name]['games_per_s']:>8.2f} games/s")
    ours = results["4p-base"]["agent_steps_per_s"]
    ratios = {"4p_base_vs_tictactoe": round(ours / results["tictactoe_v3"]["agent_steps_per_s"], 3),
              "4p_base_vs_chess": round(ours / results["chess_v6"]["agent_steps_per_s"], 2)}
    print(f"4p-base / tictactoe_v3 = {ratios['4p_base_vs_tictactoe']:.3f}   "
          f"4p-base / chess_v6 = {ratios['4p_base_vs_chess']:.2f}")
    print(json.dumps({"benchmark": "env_throughput", "seconds": args.seconds,
                      "repeats": args.repeats, "results": results, "ratios": ratios}))


if __name__ == "__main__":
    main()
