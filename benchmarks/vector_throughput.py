"""Batched self-play on the core (moonriver_env.moonriver.batch.games) beside PettingZoo's
tictactoe_v3.

Every seat is a learner, so every decision of every game is an agent-step that Python sees:
each step writes N observations (4934 float32, or with ``--observation compact`` 4940 uint8)
and N masks (2710 int8), and autoresets ended games. Actions are uniform random legal ids,
drawn for the whole batch at once from the masks (``random_legal``). Two rates per
configuration: the whole loop (draw + step, what a trainer's rollout pays besides its network)
and the step call alone. tictactoe_v3 is played by benchmarks/env_throughput.py's loop
(masked random play through the AEC API).

Configurations (threads x batch size) and tictactoe_v3 are interleaved: each round gives each
a short slice, and the ratio to tictactoe_v3 is taken within the round (same moment, same
machine state). Rates are totals over rounds; ratios medians over rounds. With both
observation kinds (``--observation float32,compact``) each compact configuration's rate over
its float32 twin's is reported too (median over rounds). Last line: JSON.

    python benchmarks/vector_throughput.py [--seconds 2] [--rounds 5] [--sizes 64,256,1024,4096]
                                           [--threads 1,2] [--players 4] [--draw core]
                                           [--observation float32[,compact]]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
from env_throughput import run as pettingzoo_run  # this script's directory is on sys.path
from machine import machine
from progress import main_of

from moonriver_env.moonriver.batch.games import BatchedGames
from moonriver_env.moonriver.rules.config import GameConfig


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniform random legal id per row of an (N, 2710) mask, vectorised."""
    rows, cols = np.nonzero(mask)
    counts = np.bincount(rows, minlength=len(mask))
    starts = np.cumsum(counts) - counts
    return cols[starts + (rng.random(len(mask)) * counts).astype(np.int64)]


def run_batch(batch: BatchedGames, seconds: float, rng: np.random.Generator,
              draw: str) -> tuple[int, int, float, float]:
    """Step for about ``seconds``; (agent-steps, games ended, elapsed, seconds in step)."""
    steps = games = 0
    in_step = 0.0
    start = time.perf_counter()
    while True:  # one step at least, however late the first check comes
        actions = batch.random_actions() if draw == "core" else random_legal(batch.mask, rng)
        t0 = time.perf_counter()
        batch.step(actions)
        in_step += time.perf_counter() - t0
        steps += batch.num_games
        games += int(batch.done.sum())
        if time.perf_counter() - start >= seconds:
            break
    return steps, games, time.perf_counter() - start, in_step


def _observations(text: str) -> list[str]:
    kinds = text.split(",")
    if not kinds or any(k not in ("float32", "compact") for k in kinds):
        raise argparse.ArgumentTypeError(
            f"a comma-separated list of float32 and compact, got {text!r}")
    return kinds


def _positive_ints(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"a comma-separated list of positive ints, got {text!r}")
    return values


def _name(threads: int, size: int, observation: str) -> str:
    return f"t{threads}-b{size}" + ("-compact" if observation == "compact" else "")


def measure(sizes: list[int], threads: list[int], observations: list[str], players: int = 4,
            seconds: float = 2.0, rounds: int = 5, draw: str = "core",
            show: bool = True) -> dict[str, dict[str, float]]:
    """Rates of every (threads, size, observation) beside tictactoe_v3, interleaved by round;
    printed as a table when ``show``."""
    from pettingzoo.classic import tictactoe_v3

    config = GameConfig(num_players=players)
    batches = {}
    for kind in observations:
        for t in threads:
            for size in sizes:
                batch = BatchedGames(size, config, threads=t, observation=kind)
                batch.reset(seed=size)
                batches[_name(t, size, kind)] = batch
    slice_s = seconds / rounds
    totals = {name: [0, 0, 0.0, 0.0] for name in ["tictactoe_v3", *batches]}
    per_round = []
    rng = np.random.default_rng(0)
    for r in range(rounds):
        rates = {}
        steps, games, elapsed = pettingzoo_run(tictactoe_v3.env, slice_s, seed=1000 * r)
        totals["tictactoe_v3"][:3] = [totals["tictactoe_v3"][0] + steps,
                                      totals["tictactoe_v3"][1] + games,
                                      totals["tictactoe_v3"][2] + elapsed]
        rates["tictactoe_v3"] = steps / elapsed
        for name, batch in batches.items():
            steps, games, elapsed, in_step = run_batch(batch, slice_s, rng, draw)
            t = totals[name]
            t[0] += steps
            t[1] += games
            t[2] += elapsed
            t[3] += in_step
            rates[name] = steps / elapsed
        per_round.append(rates)
    ttt = totals["tictactoe_v3"]
    results: dict[str, dict[str, float]] = {
        "tictactoe_v3": {"agent_steps_per_s": round(ttt[0] / ttt[2]),
                         "games_per_s": round(ttt[1] / ttt[2], 1)}}
    for name in batches:
        steps, games, elapsed, in_step = totals[name]
        results[name] = {"agent_steps_per_s": round(steps / elapsed),
                         "step_only_agent_steps_per_s": round(steps / in_step),
                         "games_per_s": round(games / elapsed, 1),
                         "vs_tictactoe_median": round(statistics.median(
                             rr[name] / rr["tictactoe_v3"] for rr in per_round), 2)}
        twin = name.removesuffix("-compact")
        if name != twin and twin in batches:
            results[name]["vs_float32_median"] = round(statistics.median(
                rr[name] / rr[twin] for rr in per_round), 2)
    if show:
        _print_table(results)
    return results


def _print_table(results: dict[str, dict[str, float]]) -> None:
    print(f"{'tictactoe_v3':<18} {results['tictactoe_v3']['agent_steps_per_s']:>11,} "
          "agent-steps/s (PettingZoo AEC, random masked play)")
    print(f"{'config':<18} {'loop':>11} {'step only':>11} {'games/s':>9} {'vs ttt':>7} "
          f"{'vs f32':>7}")
    for name, r in results.items():
        if name == "tictactoe_v3":
            continue
        vs = f"{r['vs_float32_median']:>6.2f}x" if "vs_float32_median" in r else ""
        print(f"{name:<18} {r['agent_steps_per_s']:>11,} {r['step_only_agent_steps_per_s']:>11,} "
              f"{r['games_per_s']:>9,.1f} {r['vs_tictactoe_median']:>6.1f}x {vs:>7}")


@main_of("vector_throughput.py")
def main() -> None:
    """Time every configuration beside tictactoe_v3, interleaved; print a table and JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="seconds per configuration in all")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--sizes", type=_positive_ints, default=[64, 256, 1024, 4096])
    parser.add_argument("--threads", type=_positive_ints, default=[1, 2])
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    parser.add_argument("--draw", default="core", choices=("core", "numpy"),
                        help="where the random legal actions are drawn")
    parser.add_argument("--observation", type=_observations, default=["float32"],
                        help="observation kinds: float32, compact or float32,compact")
    args = parser.parse_args()
    print(f"CPU: {machine()['cpu_model']}")
    results = measure(args.sizes, args.threads, args.observation, args.players, args.seconds,
                      args.rounds, args.draw)
    print(json.dumps({"benchmark": "vector_throughput", "players": args.players,
                      "draw": args.draw, "observation": args.observation,
                      "seconds": args.seconds, "rounds": args.rounds, "results": results,
                      "machine": machine()}))


if __name__ == "__main__":
    raise SystemExit(main())
