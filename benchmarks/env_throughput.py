"""Random masked play through the PettingZoo env, exactly like a training loop.

For each Moon River variant (``moonriver_v0.env()``, the flat class with the stock wrappers'
checks), 4-player base behind PettingZoo's stock wrapper objects themselves
(``wrapped_env_chain``, to compare), Circles: Far West with 4 players, and in the same run
PettingZoo's own ``tictactoe_v3`` (the API's overhead floor) and ``chess_v6`` (a peer with a
4672-action mask): agent-steps/s, games/s, and the ratios of 4-player base (and of Circles)
to them. Last line: one JSON object.

Shared hosts change speed by tens of percent from one second to the next, so the envs are
interleaved: each round gives every env a short slice of whole games, and a ratio is taken
within each round (same moment, same machine state). Rates are totals over all rounds;
ratios are medians over rounds.

    python benchmarks/env_throughput.py [--seconds 6] [--rounds 12]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

import numpy as np
from machine import machine  # this script's directory is on sys.path
from progress import main_of

from moonriver_env import circles_far_west_v0, moonriver_v0

VARIANTS = {
    "4p-base": {"num_players": 4, "mode": "base"},
    "3p-base": {"num_players": 3, "mode": "base"},
    "2p-base": {"num_players": 2, "mode": "base"},
    "4p-legends": {"num_players": 4, "mode": "legends"},
    "2p-legends": {"num_players": 2, "mode": "legends"},
}
CIRCLES = {"circles-4p": {"num_players": 4}}  # the second game, Circles: Far West


def run(make: Callable[[], object], seconds: float, seed: int) -> tuple[int, int, float]:
    """Play whole games for about ``seconds``; return (agent-steps, games, elapsed)."""
    env = make()
    rng = np.random.default_rng(seed)
    steps = games = 0
    start = time.perf_counter()
    while not games or time.perf_counter() - start < seconds:  # one whole game at least
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


def measure(makers: dict[str, Callable[[], object]], seconds: float,
            rounds: int) -> tuple[dict[str, dict[str, float]], list[dict[str, float]]]:
    """Interleaved runs: totals per env, and the agent-steps/s of every env in each round."""
    totals = {name: [0, 0, 0.0] for name in makers}
    per_round = []
    for r in range(rounds):
        rates = {}
        for name, make in makers.items():
            steps, games, elapsed = run(make, seconds / rounds, seed=1000 * r)
            totals[name][0] += steps
            totals[name][1] += games
            totals[name][2] += elapsed
            rates[name] = steps / elapsed
        per_round.append(rates)
    results = {name: {"agent_steps_per_s": round(s / t), "games_per_s": round(g / t, 2)}
               for name, (s, g, t) in totals.items()}
    return results, per_round


@main_of("env_throughput.py")
def main() -> None:
    """Benchmark every variant and the two PettingZoo references, interleaved."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="seconds per env in all")
    parser.add_argument("--rounds", type=int, default=12, help="interleaved rounds")
    args = parser.parse_args()
    from pettingzoo.classic import chess_v6, tictactoe_v3

    # 4p-base and the references run next to each other in every round.
    envs = {name: (lambda cfg=cfg: moonriver_v0.env(**cfg)) for name, cfg in VARIANTS.items()}
    makers: dict[str, Callable[[], object]] = {
        "4p-base": envs.pop("4p-base"), "tictactoe_v3": tictactoe_v3.env,
        "chess_v6": chess_v6.env,
        "4p-base-chain": lambda: moonriver_v0.wrapped_env_chain(num_players=4, mode="base"),
        **envs,
        **{name: (lambda cfg=cfg: circles_far_west_v0.env(**cfg)) for name, cfg in CIRCLES.items()}}
    results, per_round = measure(makers, args.seconds, args.rounds)
    for name in (*VARIANTS, "4p-base-chain", *CIRCLES, "tictactoe_v3", "chess_v6"):
        figures = results[name]
        label = f"moonriver {name}" if name in VARIANTS or name == "4p-base-chain" else name
        print(f"{label:<21} {figures['agent_steps_per_s']:>9,} agent-steps/s "
              f"{figures['games_per_s']:>8.2f} games/s")
    vs_ttt = [r["4p-base"] / r["tictactoe_v3"] for r in per_round]
    vs_chess = [r["4p-base"] / r["chess_v6"] for r in per_round]
    ratios = {"4p_base_vs_tictactoe": round(statistics.median(vs_ttt), 3),
              "4p_base_vs_chess": round(statistics.median(vs_chess), 2),
              "4p_base_vs_tictactoe_range": [round(min(vs_ttt), 3), round(max(vs_ttt), 3)],
              "4p_base_stock_chain_vs_tictactoe": round(statistics.median(
                  r["4p-base-chain"] / r["tictactoe_v3"] for r in per_round), 3),
              "circles_4p_vs_tictactoe": round(statistics.median(
                  r["circles-4p"] / r["tictactoe_v3"] for r in per_round), 3)}
    print(f"4p-base / tictactoe_v3 = {ratios['4p_base_vs_tictactoe']:.3f} (median of "
          f"{args.rounds} rounds, range {min(vs_ttt):.3f}-{max(vs_ttt):.3f})   "
          f"4p-base / chess_v6 = {ratios['4p_base_vs_chess']:.2f}   stock chain / "
          f"tictactoe_v3 = {ratios['4p_base_stock_chain_vs_tictactoe']:.3f}")
    print(json.dumps({"benchmark": "env_throughput", "seconds": args.seconds,
                      "rounds": args.rounds, "results": results, "ratios": ratios,
                      "machine": machine()}))


if __name__ == "__main__":
    raise SystemExit(main())
