"""Simulations per decision of the search agents at a time budget, and CPU cost per simulation.

    python benchmarks/search_speed.py [--seconds 0.1] [--positions 30] [--players 4]
        [--mcts-sims 100]

Positions with a real choice are sampled from seeded random games; each search agent decides
each of them with a budget of ``--seconds`` (wall clock, like ``mcts:0.1s`` and
``puct:0.1s``), the agents interleaved position by position so that both see the same moments
of a shared host. Reported: mean simulations per decision, and CPU milliseconds per simulation
(process time, which a busy host inflates less than wall time). Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
from machine import machine  # this script's directory is on sys.path
from moonriver_env.agents.base import Agent
from moonriver_env.agents.mcts import MCTSAgent
from moonriver_env.agents.puct import PUCTAgent
from progress import main_of

from moonriver_env.moonriver.observation import LazyObservation
from moonriver_env.moonriver.rules import Game, GameConfig


def positions(players: int | GameConfig, count: int, seed: int, mover: Agent | None = None,
              backend: str = "python") -> list[Game]:
    """``count`` positions with at least two legal actions, from seeded games (of the
    ``backend`` implementation, ``players`` players of the base game or the variant a config
    names) whose moves are uniformly random, or ``mover``'s for every seat."""
    from moonriver_env.moonriver.backend import Encoder, make_game

    rng = np.random.default_rng(seed)
    encoder, out = Encoder(), []
    config = players if isinstance(players, GameConfig) else GameConfig(num_players=players)
    while len(out) < count:
        game = make_game(config, int(rng.integers(2**31)), backend)
        while not game.is_over and len(out) < count:
            legal = game.legal_action_ids()
            if legal.size > 1 and rng.random() < 0.1:
                out.append(game.clone())
            if mover is None:
                game.apply(int(legal[rng.integers(legal.size)]))
            else:
                game.apply(mover.act(game, LazyObservation(encoder, game, game.current_player)))
    return out


def count_simulations(agent: MCTSAgent | PUCTAgent) -> list[int]:
    """Wrap the agent's simulation step with a counter (a list holding one int)."""
    counter = [0]
    step = agent._simulate

    def counted(*args: object) -> None:
        counter[0] += 1
        step(*args)

    agent._simulate = counted  # type: ignore[method-assign]
    return counter


@main_of("search_speed.py")
def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.1)
    parser.add_argument("--positions", type=int, default=30)
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--mcts-sims", type=int, default=0, metavar="N",
                        help="also time mcts:N (a fixed number of simulations): mean wall "
                             "seconds per decision on the same positions, the budget that gives "
                             "another agent equal time per decision")
    args = parser.parse_args(argv)
    if not args.seconds > 0 or args.positions < 1 or args.mcts_sims < 0:
        parser.error("--seconds must be > 0, --positions >= 1 and --mcts-sims >= 0")
    agents = {"mcts": MCTSAgent(seconds=args.seconds, seed=1),
              "puct": PUCTAgent(seconds=args.seconds, seed=1)}
    counters = {name: count_simulations(agent) for name, agent in agents.items()}
    sims: dict[str, list[int]] = {name: [] for name in agents}
    cpu = dict.fromkeys(agents, 0.0)
    games = positions(args.players, args.positions, args.seed)
    for game in games:
        for name, agent in agents.items():
            before, start = counters[name][0], time.process_time()
            agent.act(game, None)
            cpu[name] += time.process_time() - start
            sims[name].append(counters[name][0] - before)
    report: dict = {}
    if args.mcts_sims > 0:
        fixed = MCTSAgent(simulations=args.mcts_sims, seed=1)
        wall = []
        for game in games:
            start = time.perf_counter()
            fixed.act(game, None)
            wall.append(time.perf_counter() - start)
        report[f"mcts{args.mcts_sims}_s_per_decision"] = round(statistics.mean(wall), 4)
        print(f"mcts:{args.mcts_sims}: {report[f'mcts{args.mcts_sims}_s_per_decision']} s per "
              f"decision")
    for name in agents:
        total = sum(sims[name])
        report[name] = {"sims_per_decision": round(statistics.mean(sims[name]), 1),
                        "cpu_ms_per_sim": round(1000 * cpu[name] / total, 3)}
        print(f"{name}: {report[name]['sims_per_decision']} simulations per decision, "
              f"{report[name]['cpu_ms_per_sim']} CPU ms per simulation")
    print(json.dumps({"seconds": args.seconds, "players": args.players,
                      "positions": args.positions, **report, "machine": machine()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
