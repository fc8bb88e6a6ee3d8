"""Random legal play through the engine: decisions/s and games/s per variant.

Each decision asks the engine for its legal mask, picks uniformly among the legal ids and
applies it, as a search or training loop would. Prints a table, then one JSON line. When
PettingZoo's classic games are installed, the same run also times ``tictactoe_v3`` as a
reference for how fast the machine is at that moment (shared hosts vary a lot).

    python benchmarks/engine_random_play.py [--games 40] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
from machine import machine  # this script's directory is on sys.path
from progress import main_of

from moonriver_env.moonriver.rules import Game, GameConfig

VARIANTS = {
    "4p-base": GameConfig(num_players=4, mode="base"),
    "3p-base": GameConfig(num_players=3, mode="base"),
    "2p-base": GameConfig(num_players=2, mode="base"),
    "4p-legends": GameConfig(num_players=4, mode="legends"),
    "3p-legends": GameConfig(num_players=3, mode="legends"),
    "2p-legends": GameConfig(num_players=2, mode="legends"),
}


def play(config: GameConfig, games: int, seed: int) -> tuple[int, float]:
    """Play ``games`` random games; return (decisions, seconds)."""
    rng = np.random.default_rng(seed)
    decisions = 0
    start = time.perf_counter()
    for g in range(games):
        game = Game(config, seed=seed * 100_000 + g)
        while not game.is_over:
            legal = game.legal_mask().view(np.bool_).nonzero()[0]
            game.apply(int(legal[int(rng.random() * legal.size)]))
            decisions += 1
    return decisions, time.perf_counter() - start


@main_of("engine_random_play.py")
def main() -> None:
    """Run every variant several times and report medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="games per run")
    parser.add_argument("--repeats", type=int, default=5, help="runs per variant (median)")
    parser.add_argument("--auto-forced", action="store_true",
                        help="play single-option decisions automatically")
    args = parser.parse_args()
    results = {}
    print(f"{'variant':<12} {'decisions/s':>12} {'games/s':>9} {'decisions/game':>15}")
    for name, config in VARIANTS.items():
        if args.auto_forced:
            config = GameConfig(**{**config.to_dict(), "auto_forced": True})
        runs = [play(config, args.games, seed=r + 1) for r in range(args.repeats)]
        dps = statistics.median(d / s for d, s in runs)
        gps = statistics.median(args.games / s for _, s in runs)
        per_game = sum(d for d, _ in runs) / (args.games * args.repeats)
        results[name] = {"decisions_per_s": round(dps), "games_per_s": round(gps, 2),
                         "decisions_per_game": round(per_game, 1)}
        print(f"{name:<12} {dps:>12,.0f} {gps:>9.2f} {per_game:>15.1f}")
    reference = tictactoe_reference()
    if reference:
        print(f"reference: pettingzoo tictactoe_v3 {reference:,} agent-steps/s (same run)")
    print(json.dumps({"benchmark": "engine_random_play", "auto_forced": args.auto_forced,
                      "games": args.games, "repeats": args.repeats, "variants": results,
                      "tictactoe_v3_agent_steps_per_s": reference, "machine": machine()}))


def tictactoe_reference() -> int | None:
    """Agent-steps/s of PettingZoo's tictactoe_v3 now (None if not installed)."""
    try:
        from env_throughput import measure
        from pettingzoo.classic import tictactoe_v3
    except ImportError:
        return None
    results, _ = measure({"tictactoe_v3": tictactoe_v3.env}, 6.0, 3)
    return int(results["tictactoe_v3"]["agent_steps_per_s"])


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # for env_throughput
    raise SystemExit(main())
