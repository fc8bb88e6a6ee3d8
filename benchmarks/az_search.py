"""Search self-play on the batched core (moonriver_env.moonriver.search) with a network in the loop,
beside the same search played one game at a time.

Every seat of ``--games`` games decides by a search of ``--simulations`` simulations whose
leaves a small numpy network values (an MLP: observation -> ``--hidden`` ReLU units -> 2710
policy logits and 4 sigmoid seat values; the network's cost per row, not its strength, is what
matters here). "batched": one search over every game per decision, the leaves of all games
evaluated in one network call per simulation step. "one at a time": the same search and
network, one game per search (one network row per call). Finished games are replaced by new
ones. The network runs on one BLAS thread (OPENBLAS/OMP/MKL_NUM_THREADS default to 1: on a
busy 2-core host, two BLAS threads wait on each other and make the batched figure swing
tenfold), the search on ``--threads``. The two are interleaved, each round giving each a
slice of ``--seconds / --rounds``; rates are totals over the rounds, the speed-up the median
of the rounds' ratios. Last line: JSON.

    python benchmarks/az_search.py [--games 64] [--simulations 16] [--seconds 20]
        [--rounds 4] [--players 4] [--hidden 256] [--algorithm gumbel] [--threads 1]
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # before numpy loads its BLAS

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from machine import machine  # noqa: E402 (this script's directory is on sys.path)
from progress import main_of  # noqa: E402

from moonriver_env.moonriver.core import Game  # noqa: E402
from moonriver_env.moonriver.rules import GameConfig  # noqa: E402
from moonriver_env.moonriver.search import BatchedSearch  # noqa: E402

OBS, ACTIONS, SEATS = 4934, 2710, 4


class Network:
    """A small policy-value MLP in numpy (float32, seeded weights)."""

    def __init__(self, hidden: int, seed: int = 0) -> None:
        """Random weights scaled for unit-size activations."""
        rng = np.random.default_rng(seed)
        self.w1 = (rng.standard_normal((OBS, hidden)) / np.sqrt(OBS)).astype(np.float32)
        self.w2 = (rng.standard_normal((hidden, ACTIONS + SEATS)) / np.sqrt(hidden)).astype(
            np.float32)

    def __call__(self, observation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(policy logits (M, 2710), seat values (M, 4) in [0, 1]) of a batch of rows."""
        out = np.maximum(observation @ self.w1, 0.0) @ self.w2
        return out[:, :ACTIONS], 1.0 / (1.0 + np.exp(-out[:, ACTIONS:]))


class SelfPlay:
    """Games kept going: each finished game is replaced by a new seeded one."""

    def __init__(self, count: int, config: GameConfig, seed: int) -> None:
        """``count`` fresh games."""
        self.config, self.next_seed = config, seed
        self.games = [self._new() for _ in range(count)]
        self.finished = 0

    def _new(self) -> Game:
        self.next_seed += 1
        return Game(self.config, seed=self.next_seed)

    def play(self, index: int, action: int) -> None:
        """Play ``action`` in game ``index``; a finished game is replaced."""
        self.games[index].apply(action)
        if self.games[index].is_over:
            self.finished += 1
            self.games[index] = self._new()


def decide(games: list[Game], net: Network, args: argparse.Namespace,
           seed: int) -> tuple[np.ndarray, int]:
    """One search over ``games``; (their actions, network rows evaluated)."""
    search = BatchedSearch(games, simulations=args.simulations, seed=seed,
                           algorithm=args.algorithm, max_considered=args.max_considered,
                           threads=args.threads)
    rows = 0
    while (leaves := search.leaves()) is not None:
        search.evaluate(*net(leaves.observation))
        rows += len(leaves)
    return search.result().action, rows


def run_slice(play: SelfPlay, net: Network, args: argparse.Namespace, batched: bool,
              seconds: float) -> tuple[int, int, float]:
    """Decide for about ``seconds``; (decisions, leaf evaluations, elapsed)."""
    decisions = rows = 0
    start = time.perf_counter()
    while not decisions or time.perf_counter() - start < seconds:  # one decision at least
        groups = [list(range(len(play.games)))] if batched else \
            [[g] for g in range(len(play.games))]
        for group in groups:
            actions, evaluated = decide([play.games[g] for g in group], net, args,
                                        seed=decisions)
            for g, action in zip(group, actions, strict=True):
                play.play(g, int(action))
            decisions += len(group)
            rows += evaluated
            if time.perf_counter() - start >= seconds:
                break
    return decisions, rows, time.perf_counter() - start


@main_of("az_search.py")
def main() -> None:
    """Time batched and one-at-a-time search self-play, interleaved; print a table and JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=64)
    parser.add_argument("--simulations", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds per mode in all")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved rounds")
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--algorithm", default="gumbel", choices=("gumbel", "puct"))
    parser.add_argument("--max-considered", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1, help="search threads (batched)")
    args = parser.parse_args()
    if min(args.games, args.simulations, args.rounds, args.hidden, args.threads) < 1 or \
            args.seconds <= 0:
        parser.error("--games, --simulations, --rounds, --hidden and --threads must be >= 1 "
                     "and --seconds > 0")

    print(f"CPU: {machine()['cpu_model']}")
    config = GameConfig(num_players=args.players, auto_forced=True)
    net = Network(args.hidden)
    modes = {"batched": SelfPlay(args.games, config, 0),
             "one_at_a_time": SelfPlay(args.games, config, 10**6)}
    totals = {name: [0, 0, 0.0] for name in modes}
    ratios = []
    slice_s = args.seconds / args.rounds
    for _ in range(args.rounds):
        rates = {}
        for name, play in modes.items():
            decisions, rows, elapsed = run_slice(play, net, args, name == "batched", slice_s)
            t = totals[name]
            t[0], t[1], t[2] = t[0] + decisions, t[1] + rows, t[2] + elapsed
            rates[name] = decisions / elapsed
        ratios.append(rates["batched"] / rates["one_at_a_time"])
    results = {}
    print(f"{'mode':<14} {'decisions/s':>12} {'leaf evals/s':>13} {'games ended':>12}")
    for name, (decisions, rows, elapsed) in totals.items():
        results[name] = {"decisions_per_s": round(decisions / elapsed, 1),
                         "leaf_evaluations_per_s": round(rows / elapsed),
                         "games_ended": modes[name].finished}
        print(f"{name:<14} {results[name]['decisions_per_s']:>12,.1f} "
              f"{results[name]['leaf_evaluations_per_s']:>13,} {modes[name].finished:>12}")
    speedup = statistics.median(ratios)
    print(f"batched / one at a time (median of {args.rounds} rounds): {speedup:.1f}x")
    print(json.dumps({"benchmark": "az_search", "games": args.games,
                      "simulations": args.simulations, "players": args.players,
                      "algorithm": args.algorithm, "hidden": args.hidden,
                      "threads": args.threads, "seconds": args.seconds, "rounds": args.rounds,
                      "results": results, "speedup_median": round(speedup, 2),
                      "machine": machine()}))


if __name__ == "__main__":
    raise SystemExit(main())
