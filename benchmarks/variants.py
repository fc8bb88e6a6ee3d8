"""One agent against co-players of one kind in every variant: the per-variant results table.

    python benchmarks/variants.py --agent pretrained --games 1000 --seed 6000000000
                                  [--opponent greedy] [--variants 3p-base 4p-legends-2 ...]
                                  [--workers 2]

For each variant (default: all 15, 2-4 players x the base game and Legends scenarios 1-4) the
agent plays ``--games`` games against players - 1 copies of ``--opponent``, seats rotated
(``run_tournament``), game g on seed ``seed + g`` in every variant (``--duplicate``: each seed
dealt once per seat, game g on seed ``seed + g // players``, so an agent equal to the opponent
wins exactly 1 / players and the paired deals cancel the seats' luck). Per variant: the agent's
win share (shared wins split) with its 95% Wilson interval (``--duplicate``, from 30 seeds a
variant: the normal interval over the seeds' mean shares, of zero width when the agent played
every deal as the opponent did), mean score and margin, and its
gap to the base game at the same table size. A markdown table, then one JSON line; a progress
bar of each variant's games on stderr, and Ctrl-C stops it with one line.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from typing import Any

import numpy as np
from machine import machine  # this script's directory is on sys.path
from moonriver_env.training.tournament import run_tournament, seat_share
from moonriver_env.training.variants import ALL_VARIANTS, variant_config
from progress import main_of

from moonriver_env.common.stats import mean_interval


def measure(agent: str, opponent: str, variant: str, games: int, seed: int,
            workers: int, duplicate: bool = False) -> dict[str, Any]:
    """The agent's summary in one variant."""
    config = variant_config(variant)
    n = config.num_players
    result = run_tournament([agent] + [opponent] * (n - 1), num_players=n, games=games,
                            seed=seed, workers=workers, progress=True, config=config,
                            duplicate=duplicate)
    me = result.agents[0]
    paired = paired_interval(result.games) if duplicate else None
    ci = paired or [me.win_ci_low, me.win_ci_high]
    return {"variant": variant, "players": n, "games": me.games, "win": me.win_rate,
            "ci": ci, "score": me.mean_score, "margin": me.mean_margin}


PAIRED_SEEDS = 30  # fewer seeds than this: the Wilson interval (the normal one is too narrow)


def paired_interval(outcomes: list[dict[str, Any]]) -> list[float] | None:
    """Agent 0's 95% normal win-share interval over the seeds' means (None: too few seeds)."""
    by_seed: dict[int, list[float]] = {}
    for o in outcomes:
        by_seed.setdefault(o["seed"], []).append(seat_share(o, o["lineup"].index(0)))
    if len(by_seed) < PAIRED_SEEDS:
        return None
    _, low, high = mean_interval(np.array([np.mean(v) for v in by_seed.values()]), 0.0, 1.0)
    return [low, high]


def table(rows: list[dict[str, Any]]) -> str:
    """The markdown table, with each variant's gap to the base game at its table size."""
    base = {r["players"]: r["win"] for r in rows if r["variant"].endswith("-base")}
    lines = ["| variant | games | win share (95% CI) | vs base at this size | score | margin |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        gap = (r["win"] - base[r["players"]]
               if r["players"] in base and not r["variant"].endswith("-base") else None)
        lines.append(f"| {r['variant']} | {r['games']} | {r['win']:.3f} ({r['ci'][0]:.3f}-"
                     f"{r['ci'][1]:.3f}) | {'' if gap is None else f'{gap:+.3f}'} | "
                     f"{r['score']:.1f} | {r['margin']:+.1f} |")
    return "\n".join(lines)


@main_of("variants.py")
def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(prog="variants.py", description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="pretrained", help="the agent spec measured")
    parser.add_argument("--opponent", default="greedy", help="the co-players' spec")
    parser.add_argument("--variants", nargs="+", default=list(ALL_VARIANTS),
                        choices=ALL_VARIANTS, metavar="VARIANT",
                        help=f"variants (default all 15: {', '.join(ALL_VARIANTS)})")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=6_000_000_000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--duplicate", action="store_true",
                        help="deal each seed once per seat (game g on seed + g // players), so "
                             "an agent equal to the opponent wins exactly 1 / players")
    args = parser.parse_args(argv)
    if args.games < 1 or args.seed < 0 or args.workers < 1:
        parser.error("--games and --workers must be >= 1, --seed >= 0")
    seats = math.lcm(*(variant_config(v).num_players for v in args.variants))
    if args.duplicate and args.games % seats:
        parser.error(f"--duplicate needs --games a multiple of {seats} (every table's seats), "
                     f"got {args.games}")
    start = time.perf_counter()
    rows = []
    for variant in args.variants:
        rows.append(measure(args.agent, args.opponent, variant, args.games, args.seed,
                            args.workers, args.duplicate))
        r = rows[-1]
        print(f"{variant}: {r['win']:.3f} ({r['ci'][0]:.3f}-{r['ci'][1]:.3f})", flush=True)
    print(table(rows))
    print(json.dumps({"agent": args.agent, "opponent": args.opponent, "games": args.games,
                      "seed": args.seed, "duplicate": args.duplicate,
                      "seconds": round(time.perf_counter() - start, 1),
                      "variants": rows, "machine": machine()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
