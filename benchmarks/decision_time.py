"""Wall seconds per decision of agent specs on the same positions: the equal-time check.

    python benchmarks/decision_time.py --players 4 --specs mcts:100 pretrained+puct:30
        [--positions 60] [--seed 11] [--rounds 2]

Positions with at least two legal actions are sampled from seeded games of four (or two)
GreedyAgents, so they look like the positions a ladder game reaches. After one untimed
decision each, every spec decides every position ``--rounds`` times, the specs interleaved
position by position (the first to move rotating) so that all of them see the same moments of
a shared host. Reported per spec: mean wall seconds and CPU seconds
per decision, and both as a ratio to the first spec (1.0 is equal time). ``--backend`` names
the implementation of the games (core by default, or as ``MOONRIVER_BACKEND`` says). Last
line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time

from machine import machine  # this script's directory is on sys.path
from moonriver_env.agents.registry import make_agent
from progress import main_of
from search_speed import positions

from moonriver_env.moonriver.backend import BACKENDS, DEFAULT_BACKEND, Encoder
from moonriver_env.moonriver.observation import LazyObservation


@main_of("decision_time.py")
def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(prog="decision_time.py",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--specs", nargs="+", required=True, help="agent specs to time")
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    parser.add_argument("--positions", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--backend", choices=BACKENDS, default=DEFAULT_BACKEND,
                        help="implementation of the games: core (compiled) or python (the "
                             "reference engine) (default: %(default)s, or $MOONRIVER_BACKEND)")
    args = parser.parse_args(argv)
    if args.positions < 1 or args.rounds < 1:
        parser.error("--positions and --rounds must be >= 1")
    try:
        agents = [make_agent(spec) for spec in args.specs]
    except ValueError as exc:
        parser.error(f"--specs: {exc}")
    encoder = Encoder()
    wall, cpu = [0.0] * len(agents), [0.0] * len(agents)
    games = positions(args.players, args.positions, args.seed, make_agent("greedy"),
                      args.backend)
    for agent in agents:  # one untimed decision each (imports, caches)
        agent.act(games[0], LazyObservation(encoder, games[0], games[0].current_player))
    for r in range(args.rounds):
        for i, game in enumerate(games):
            k = (r * len(games) + i) % len(agents)  # rotate who goes first
            for a in [*range(k, len(agents)), *range(k)]:
                agent = agents[a]
                agent.reset(r * len(games) + i)
                obs = LazyObservation(encoder, game, game.current_player)
                start, start_cpu = time.perf_counter(), time.process_time()
                agent.act(game, obs)
                wall[a] += time.perf_counter() - start
                cpu[a] += time.process_time() - start_cpu
    decisions = args.positions * args.rounds
    report = {}
    for a, spec in enumerate(args.specs):
        report[spec] = {"wall_s_per_decision": round(wall[a] / decisions, 5),
                        "cpu_s_per_decision": round(cpu[a] / decisions, 5),
                        "wall_ratio": round(wall[a] / wall[0], 3),
                        "cpu_ratio": round(cpu[a] / cpu[0], 3)}
        print(f"{spec}: {report[spec]['wall_s_per_decision']:.4f} s per decision "
              f"(x{report[spec]['wall_ratio']:.2f} wall, x{report[spec]['cpu_ratio']:.2f} CPU "
              f"of {args.specs[0]})")
    print(json.dumps({"players": args.players, "positions": args.positions,
                      "rounds": args.rounds, "seed": args.seed, "backend": args.backend,
                      "specs": report, "machine": machine()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
