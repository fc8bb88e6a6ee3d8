"""How often a network's search and a policy choose the same action, on the same positions.

    python benchmarks/search_agreement.py --teacher pretrained --simulations 128 \
        --policies pretrained runs/az_expert/az.npz --players 4 --games 40 --seed 7600000000

Positions: every decision with a choice of ``--games`` games of the base game at ``--players``
(game g on seed ``seed + g``), each kept with probability ``--keep``; the games are played by
Greedy (ties drawn), one decision in ten uniformly at random so that they vary. On them the
teacher's batched Gumbel search (``--simulations``, the search agents' constants:
``agents.az.play_search_settings``; ``--table-search``: with the playouts and c_scale the agents
add at tables of 3 and 4, ``agents.az.table_search``; ``--gumbel-scale 1``: the root noise of
self-play) chooses twice with two search seeds, and each policy (an
``az.npz`` or ``pretrained``) plays its most likely action. Printed: how often the two searches
agree, how often each policy agrees with each search, and how often both searches chose the
same action and the policy another (what a policy could learn from the search), with 95%
Wilson intervals. One JSON line last.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np
from machine import machine  # this script's directory is on sys.path
from moonriver_env.agents.az import (
    AZAgent,
    agent_weights,
    play_search_settings,
    shipped_path,
    table_search,
)
from moonriver_env.agents.pretrained import SHAPE_WEIGHT
from moonriver_env.training.variants import variant_config
from progress import main_of

from moonriver_env.common.stats import wilson_interval
from moonriver_env.moonriver.core import Game
from moonriver_env.moonriver.search import BatchedSearch

SHIPPED = "pretrained"  # the shipped network (agents.az.shipped_path)


def weights_path(name: str) -> str:
    """An az.npz path; ``pretrained``: the shipped network."""
    return shipped_path() if name == SHIPPED else name


def positions(players: int, games: int, seed: int, keep: float) -> list[Game]:
    """Decisions with a choice from Greedy-played games (one decision in ten at random)."""
    rng = np.random.default_rng(seed)
    kept = []
    for g in range(games):
        game = Game(variant_config(f"{players}p-base"), seed=seed + g)
        while not game.is_over:
            ids = game.legal_action_ids()
            if ids.size > 1 and rng.random() < keep:
                kept.append(game.clone())
            if rng.random() < 0.1:
                game.apply(int(ids[rng.integers(ids.size)]))
            else:
                ties = game.greedy_ties()[1]
                game.apply(int(ties[rng.integers(len(ties))]))
    return kept


def searched(teacher: str, games: list[Game], simulations: int, seed: int,
             settings: dict[str, Any]) -> np.ndarray:
    """The teacher search's chosen action at each position (``settings``: its constants)."""
    net, _ = agent_weights(teacher)
    search = BatchedSearch(games, simulations=simulations, seed=seed, algorithm="gumbel",
                           greedy_prior=SHAPE_WEIGHT if net.uses_prior else None, **settings)
    return search.run(net.core).action.copy()


def argmax_actions(policy: str, games: list[Game]) -> np.ndarray:
    """The policy's most likely action at each position."""
    agent = AZAgent(policy, deterministic=True, seed=0)
    return np.array([agent.act(g, {"observation": g.observe(g.current_player),
                                   "action_mask": g.legal_mask()}) for g in games])


def share(agree: np.ndarray) -> dict[str, Any]:
    """Agreement share, its 95% interval and the count."""
    n, k = int(agree.size), int(agree.sum())
    low, high = wilson_interval(k, n)
    return {"agree": k / n, "ci": [low, high], "positions": n}


@main_of("search_agreement.py")
def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(prog="search_agreement.py",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--teacher", default=SHIPPED, help="az.npz whose search chooses")
    parser.add_argument("--policies", nargs="+", default=[SHIPPED], metavar="NPZ",
                        help="az.npz files (or pretrained) whose policy's argmax is compared")
    parser.add_argument("--simulations", type=int, default=128)
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--keep", type=float, default=0.25, help="share of decisions kept")
    parser.add_argument("--seed", type=int, default=7_600_000_000)
    parser.add_argument("--table-search", action="store_true",
                        help="add the agents' settings at tables of 3 and 4 (playouts, c_scale)")
    parser.add_argument("--gumbel-scale", type=float, default=0.0,
                        help="root Gumbel noise (0: the agents' search; 1: self-play's)")
    args = parser.parse_args(argv)
    if args.games < 1 or args.simulations < 1 or args.seed < 0 or not 0 < args.keep <= 1:
        parser.error("--games and --simulations must be >= 1, --seed >= 0, --keep in (0, 1]")
    if not 0 <= args.gumbel_scale < float("inf"):
        parser.error(f"--gumbel-scale must be finite and >= 0, got {args.gumbel_scale}")
    settings = play_search_settings(gumbel_scale=args.gumbel_scale)
    if args.table_search:
        settings |= table_search(args.players)
    start = time.perf_counter()
    teacher = weights_path(args.teacher)
    games = positions(args.players, args.games, args.seed, args.keep)
    if not games:
        parser.error("no position kept: raise --games or --keep")
    first, second = (searched(teacher, games, args.simulations, s, settings) for s in (1, 2))
    result: dict[str, Any] = {"search_vs_search": share(first == second), "policies": {}}
    print(f"{len(games)} positions; the search against itself (two seeds): "
          f"{result['search_vs_search']['agree']:.3f}")
    for policy in args.policies:
        picks = argmax_actions(weights_path(policy), games)
        # both searches agree on another action: what a policy could learn from the search
        steady = (first == second) & (picks != first)
        result["policies"][policy] = {"vs_search_1": share(picks == first),
                                      "vs_search_2": share(picks == second),
                                      "both_searches_elsewhere": share(steady)}
        print(f"{policy}: agrees with the search {np.mean(picks == first):.3f} / "
              f"{np.mean(picks == second):.3f}; both searches chose another action "
              f"{np.mean(steady):.3f}")
    print(json.dumps({"benchmark": "search_agreement", "teacher": args.teacher,
                      "simulations": args.simulations, "players": args.players,
                      "table_search": args.table_search, "gumbel_scale": args.gumbel_scale,
                      "games": args.games, "seed": args.seed, **result,
                      "seconds": round(time.perf_counter() - start, 1), "machine": machine()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
