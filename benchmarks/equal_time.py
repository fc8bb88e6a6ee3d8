"""A search agent against ``mcts:1000`` at equal time per decision, in each variant asked.

    python benchmarks/equal_time.py [--agent pretrained+search] [--reference mcts:1000]
                                    [--budgets 32,48,64,80,96,112,128,160] [--games 1000]
                                    [--seed 6200000000] [--positions 40] [--workers 1]
                                    [--variants 2p-base 4p-base | all]

For each variant (``--variants``, the names of ``benchmarks/variants.py``; default 2p-base and
4p-base) first the time: on the same positions (from seeded games of Greedy agents in that
variant), the reference and the agent at each simulation budget decide every position,
interleaved position by position (``decision_time.py``'s loop); the agent's budget is the
largest whose mean wall time per decision is at most the reference's (the smallest when none
is; the printed ratios say so). Then the games: the agent, the reference and ``greedy`` in the
other seats; ``--games`` games each, seats rotated, game g on seed ``seed + g``. Reported: the
agent's win share (95% Wilson interval) and the share of games in which it finished ahead of
the reference (a winner ahead of a non-winner, else the higher score; a tie counts half).
Last line: one JSON object, its results keyed by variant. A progress bar of the games on
stderr; Ctrl-C stops it with one line.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from ladder import head_to_head  # this script's directory is on sys.path
from machine import machine
from moonriver_env.agents.registry import make_agent
from moonriver_env.training.tournament import run_tournament
from moonriver_env.training.variants import ALL_VARIANTS, variant_config, variant_list
from progress import main_of
from search_speed import positions

from moonriver_env.common.stats import wilson_interval
from moonriver_env.moonriver.backend import Encoder
from moonriver_env.moonriver.observation import LazyObservation


def seconds_per_decision(specs: list[str], config: Any, count: int, seed: int) -> list[float]:
    """Mean wall seconds per decision of each spec over the same positions, interleaved."""
    agents = [make_agent(spec) for spec in specs]
    encoder = Encoder()
    games = positions(config, count, seed, make_agent("greedy"), "core")
    for agent in agents:  # one untimed decision each (imports, caches)
        agent.act(games[0], LazyObservation(encoder, games[0], games[0].current_player))
    wall = [0.0] * len(agents)
    for i, game in enumerate(games):
        k = i % len(agents)  # rotate who goes first
        for a in [*range(k, len(agents)), *range(k)]:
            agents[a].reset(i)
            obs = LazyObservation(encoder, game, game.current_player)
            start = time.perf_counter()
            agents[a].act(game, obs)
            wall[a] += time.perf_counter() - start
    return [w / len(games) for w in wall]


def match(agent: str, reference: str, config: Any, games: int, seed: int,
          workers: int) -> dict[str, Any]:
    """The agent's win share and its share of games ahead of the reference."""
    players = config.num_players
    specs = [agent, reference] + ["greedy"] * (players - 2)
    result = run_tournament(specs, num_players=players, games=games, seed=seed,
                            workers=workers, progress=True, config=config)
    me = result.agents[0]
    ahead, together = head_to_head(specs, result.games)[agent][reference]
    low, high = wilson_interval(ahead, together)
    return {"table": specs, "games": games, "win": me.win_rate,
            "win_ci": [me.win_ci_low, me.win_ci_high], "ahead": ahead / together,
            "ahead_ci": [low, high]}


@main_of("equal_time.py")
def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(prog="equal_time.py", description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="pretrained+search",
                        help="a search spec taking :SIMS (default pretrained+search)")
    parser.add_argument("--reference", default="mcts:1000")
    parser.add_argument("--budgets", default="32,48,64,80,96,112,128,160",
                        help="comma-separated simulation budgets to time")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=6_200_000_000)
    parser.add_argument("--positions", type=int, default=40)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--variants", nargs="+", default=["2p-base", "4p-base"], metavar="NAME",
                        help=f"variants to play ('all': the 15), of {', '.join(ALL_VARIANTS)} "
                             "(default: 2p-base 4p-base)")
    args = parser.parse_args(argv)
    try:
        variants = list(dict.fromkeys(variant_list(args.variants)))
    except ValueError as exc:
        parser.error(f"--variants: {exc}")
    try:
        budgets = sorted({int(b) for b in args.budgets.split(",")})
    except ValueError:
        parser.error("--budgets: a comma-separated list of integers, e.g. 8,16,32")
    if not budgets or budgets[0] < 1 or args.games < 1 or args.positions < 1 \
            or args.workers < 1 or args.seed < 0:
        parser.error("--budgets, --games, --positions and --workers must be >= 1, --seed >= 0")
    report: dict[str, Any] = {}
    for variant in variants:
        config = variant_config(variant)
        specs = [args.reference] + [f"{args.agent}:{b}" for b in budgets]
        times = seconds_per_decision(specs, config, args.positions, args.seed)
        fits = [b for b, t in zip(budgets, times[1:], strict=True) if t <= times[0]]
        budget = fits[-1] if fits else budgets[0]
        for spec, t in zip(specs, times, strict=True):
            print(f"{variant} {spec}: {1000 * t:.2f} ms per decision "
                  f"(x{t / times[0]:.2f} of {args.reference})", flush=True)
        played = match(f"{args.agent}:{budget}", args.reference, config, args.games,
                       args.seed, args.workers)
        print(f"{variant} {played['table']}: win {played['win']:.3f} "
              f"({played['win_ci'][0]:.3f}-{played['win_ci'][1]:.3f}), ahead of "
              f"{args.reference} in {played['ahead']:.3f} ({played['ahead_ci'][0]:.3f}-"
              f"{played['ahead_ci'][1]:.3f})", flush=True)
        report[variant] = {"ms_per_decision": {s: round(1000 * t, 3) for s, t in
                                                     zip(specs, times, strict=True)},
                                 "budget": budget} | played
    print(json.dumps({"agent": args.agent, "reference": args.reference, "seed": args.seed,
                      "results": report, "machine": machine()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
