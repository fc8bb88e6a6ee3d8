"""The compiled core beside the Python engine, interleaved in one run (4 players, base game).

Each measure names what it times:

- ``random_play``: games driven from Python, one decision at a time (legal mask, ``nonzero``,
  one draw, ``apply``), as a training or search loop written in Python would drive them;
- ``clone_determinize``: ``clone()`` then ``determinize(rng)`` of a mid-game state, the
  contract's call pair (numpy's shuffles, the same orders: in Python on the engine, in C++
  over the generator's own bit generator on the core);
- ``clone_determinize_floor``: the same copy and reshuffle by the core's own calls with the
  least Python around them (the C++ copy, the generator's lock and capsule, the shuffles; no
  ``Game`` wrapper): about the least the contract's pair could take on the core;
- ``new_game``: ``make_game(config, seed)`` for fresh seeds: the set-up's draws (numpy's on
  the engine, their C++ twin on the core) and the opening table (saloon, first column);
- ``search_determinized_clone``: search's copy-and-reshuffle of a mid-game state: the engine's
  ``clone()`` + ``determinize(rng)`` against the core's, made inside the core as each of its
  MCTS simulations makes it (``determinized_clones``, the core's own generator); the core's
  Python-level ``determinized_clone(seed)`` call is reported beside it;
- ``observe``: the acting player's observation after each decision of random games, into a
  caller's buffer, by each implementation's own call: the core's ``Game.observe(p, out)``,
  the engine's ``ObservationEncoder.encode`` with its per-ranch caches;
- ``one_ply``: Greedy's one-ply values (clone, apply, margin change per legal action) at the
  build decisions of random games: its Python loop on the engine, one call on the core;
- ``greedy_decision``: a whole Greedy decision (``GreedyAgent.act``) in games of four Greedy
  agents: its Python ranking on the engine, ``greedy_values()`` on the core (same games);
- ``mcts100``: one ``mcts:100`` decision (``MCTSAgent(simulations=100).act``) at the same
  mid-game positions: the Python search on the engine, ``mcts_search()`` in the core;
- ``core_playout``: random games played entirely inside the core (``random_playouts``), the
  loop a search's rollouts use; no Python per decision.

Rounds alternate python, core, python, core, ... so a shared machine's load falls on both.
Prints a table, the speed-ups, then one JSON line.

    python benchmarks/core_speed.py [--games 30] [--rounds 5] [--positions 4]
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import time
from collections.abc import Callable

import numpy as np
from machine import machine  # this script's directory is on sys.path
from moonriver_env.agents.greedy import GreedyAgent, margin
from moonriver_env.agents.mcts import MCTSAgent
from progress import main_of

from moonriver_env.moonriver.backend import Encoder, make_game
from moonriver_env.moonriver.core import random_play_counts
from moonriver_env.moonriver.rules import GameConfig, Phase

CONFIG = GameConfig(num_players=4, mode="base")


def random_play(backend: str, games: int, seed: int) -> tuple[int, float]:
    """Random games driven from Python; (decisions, seconds)."""
    rng = np.random.default_rng(seed)
    decisions = 0
    start = time.perf_counter()
    for g in range(games):
        game = make_game(CONFIG, seed * 100_000 + g, backend)
        while not game.is_over:
            legal = game.legal_mask().view(np.bool_).nonzero()[0]
            game.apply(int(legal[int(rng.random() * legal.size)]))
            decisions += 1
    return decisions, time.perf_counter() - start


def mid_game(backend: str, seed: int, steps: int = 80):
    """A game ``steps`` random decisions in."""
    game = make_game(CONFIG, seed, backend)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(len(ids))]))
    return game


def per_call(fn: Callable[[], object], calls: int) -> float:
    """Seconds per call of ``fn`` over ``calls`` calls."""
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def clone_determinize(backend: str, calls: int) -> float:
    game = mid_game(backend, 7)
    rng = np.random.default_rng(0)

    def step() -> None:
        game.clone().determinize(rng)
    return per_call(step, calls)


def clone_determinize_floor(calls: int) -> float:
    """Seconds per clone and numpy reshuffle made by the core's own calls with the least Python
    around them (the C++ copy, numpy's generator lock and capsule, the two shuffles; no
    ``Game`` wrapper): about the least ``clone()`` + ``determinize(rng)`` could take."""
    game = mid_game("core", 7).native
    bits = np.random.default_rng(0).bit_generator

    def step() -> None:
        copy = game.copy()
        with bits.lock:
            copy.determinize_numpy(bits.capsule)
    return per_call(step, calls)


def new_game(backend: str, calls: int, seed: int) -> float:
    """Seconds per new game set up from its seed."""
    seeds = iter(range(seed * 1_000_000, seed * 1_000_000 + calls))
    return per_call(lambda: make_game(CONFIG, next(seeds), backend), calls)


def search_determinized_clone(backend: str, calls: int) -> float:
    """Seconds per copy-and-reshuffle as search makes it: the engine's clone + determinize,
    the core's inside the core (its MCTS simulations' first step)."""
    game = mid_game(backend, 7)
    if backend == "core":
        start = time.perf_counter()
        game.native.determinized_clones(calls, 1)
        return (time.perf_counter() - start) / calls
    return clone_determinize(backend, calls)


def determinized_clone_call(calls: int) -> float:
    """Seconds per ``determinized_clone(seed)`` call from Python on the core."""
    game = mid_game("core", 7)
    return per_call(lambda: game.determinized_clone(5), calls)


def greedy_decision(backend: str, games: int, seed: int) -> float:
    """Seconds per Greedy decision with more than one legal action (four Greedy agents)."""
    spent, decisions = 0.0, 0
    for g in range(games):
        game = make_game(CONFIG, seed * 100_000 + g, backend)
        agents = [GreedyAgent(seed=seed + p) for p in range(4)]
        while not game.is_over:
            ids = game.legal_action_ids()
            if ids.size == 1:
                game.apply(int(ids[0]))
                continue
            start = time.perf_counter()
            action = agents[game.current_player].act(game, None)
            spent += time.perf_counter() - start
            decisions += 1
            game.apply(action)
    return spent / decisions


def mcts_decision(backend: str, positions: int, seed: int) -> float:
    """Seconds per ``mcts:100`` decision at mid-game positions (more than one legal action)."""
    spent, done = 0.0, 0
    for i in range(positions):
        game = mid_game(backend, seed * 1000 + i, steps=20 + 15 * i)
        while len(game.legal_action_ids()) < 2:
            game.apply(int(game.legal_action_ids()[0]))
        agent = MCTSAgent(simulations=100, seed=seed)
        start = time.perf_counter()
        agent.act(game, None)
        spent += time.perf_counter() - start
        done += 1
    return spent / done


def observe(backend: str, games: int, seed: int) -> float:
    """Seconds per observation of the player to act, after each decision of random games (as
    an env observes: each decision changes the state, so no cache holds the answer)."""
    encoder = Encoder()
    out = np.empty(encoder.size, dtype=np.float32)
    rng = np.random.default_rng(seed)
    spent, calls = 0.0, 0
    for g in range(games):
        game = make_game(CONFIG, seed * 100_000 + g, backend)
        write = game.observe if backend == "core" else functools.partial(encoder.encode, game)
        while not game.is_over:
            start = time.perf_counter()
            write(game.current_player, out)
            spent += time.perf_counter() - start
            calls += 1
            ids = game.legal_action_ids()
            game.apply(int(ids[rng.integers(len(ids))]))
    return spent / calls


def one_ply(backend: str, games: int, seed: int) -> float:
    """Seconds per legal action of Greedy's one-ply values (clone, apply, margin change) over
    the build decisions of random games: agents.greedy's Python loop on the engine, one
    ``one_ply_margins()`` call on the core."""
    rng = np.random.default_rng(seed)
    spent, valued = 0.0, 0
    for g in range(games):
        game = make_game(CONFIG, seed * 100_000 + g, backend)
        while not game.is_over:
            ids = game.legal_action_ids()
            if game.phase == Phase.BUILD and len(ids) > 1:
                start = time.perf_counter()
                if backend == "core":
                    game.one_ply_margins(ids)
                else:
                    player, base = game.current_player, margin(game, game.current_player)
                    for a in ids.tolist():
                        child = game.clone()
                        child.apply(a)
                        margin(child, player) - base
                spent += time.perf_counter() - start
                valued += len(ids)
            game.apply(int(ids[rng.integers(len(ids))]))
    return spent / valued


def core_playout(games: int, seed: int) -> tuple[int, float]:
    """Random games inside the core from a fresh game; (decisions, seconds)."""
    start_state = make_game(CONFIG, seed, "core")
    start = time.perf_counter()
    _, decisions = random_play_counts(start_state, games, seed)
    return decisions, time.perf_counter() - start


@main_of("core_speed.py")
def main() -> None:
    """Interleave both backends over several rounds and report medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=30, help="Python-driven games per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (medians are reported)")
    parser.add_argument("--calls", type=int, default=2000, help="clone+determinize calls a round")
    parser.add_argument("--playouts", type=int, default=2000, help="in-core games per round")
    parser.add_argument("--positions", type=int, default=4, help="mcts:100 positions a round")
    args = parser.parse_args()
    runs: dict[str, list[float]] = {}
    for r in range(args.rounds):
        for backend in ("python", "core"):
            d, s = random_play(backend, args.games, seed=r + 1)
            runs.setdefault(f"random_play_{backend}_decisions_per_s", []).append(d / s)
            runs.setdefault(f"clone_determinize_{backend}_us", []).append(
                1e6 * clone_determinize(backend, args.calls))
            runs.setdefault(f"new_game_{backend}_us", []).append(
                1e6 * new_game(backend, max(1, args.calls // 10), seed=r + 1))
            runs.setdefault(f"observe_{backend}_us", []).append(
                1e6 * observe(backend, max(1, args.games // 3), seed=r + 1))
            runs.setdefault(f"one_ply_{backend}_us_per_action", []).append(
                1e6 * one_ply(backend, max(1, args.games // 10), seed=r + 1))
            runs.setdefault(f"search_determinized_clone_{backend}_us", []).append(
                1e6 * search_determinized_clone(backend, args.calls))
            # A core decision takes a few µs: enough of them that one time slice lost to
            # another process on a busy machine does not swing the mean.
            runs.setdefault(f"greedy_decision_{backend}_us", []).append(
                1e6 * greedy_decision(backend, max(1, args.games // 3), seed=r + 1))
            runs.setdefault(f"mcts100_{backend}_ms_per_decision", []).append(
                1e3 * mcts_decision(backend, args.positions, seed=r + 1))
        runs.setdefault("determinized_clone_call_core_us", []).append(
            1e6 * determinized_clone_call(args.calls))
        runs.setdefault("clone_determinize_floor_core_us", []).append(
            1e6 * clone_determinize_floor(args.calls))
        d, s = core_playout(args.playouts, seed=r + 1)
        runs.setdefault("core_playout_decisions_per_s", []).append(d / s)
    med = {k: statistics.median(v) for k, v in runs.items()}
    ratios = {
        "random_play": med["random_play_core_decisions_per_s"]
        / med["random_play_python_decisions_per_s"],
        "clone_determinize": med["clone_determinize_python_us"]
        / med["clone_determinize_core_us"],
        "new_game": med["new_game_python_us"] / med["new_game_core_us"],
        "observe": med["observe_python_us"] / med["observe_core_us"],
        "one_ply": med["one_ply_python_us_per_action"] / med["one_ply_core_us_per_action"],
        "search_determinized_clone": med["search_determinized_clone_python_us"]
        / med["search_determinized_clone_core_us"],
        "clone_determinize_floor": med["clone_determinize_python_us"]
        / med["clone_determinize_floor_core_us"],
        "determinized_clone_call_vs_python_clone_determinize":
        med["clone_determinize_python_us"] / med["determinized_clone_call_core_us"],
        "greedy_decision": med["greedy_decision_python_us"] / med["greedy_decision_core_us"],
        "mcts100_decision": med["mcts100_python_ms_per_decision"]
        / med["mcts100_core_ms_per_decision"],
        "core_playout_vs_python_random_play": med["core_playout_decisions_per_s"]
        / med["random_play_python_decisions_per_s"],
    }
    info = machine()
    print(f"CPU: {info.get('cpu_model')}")
    print(f"{'measure':<44} {'median':>14}")
    for k, v in med.items():
        print(f"{k:<44} {v:>14,.2f}")
    print("speed-ups (core over python):")
    for k, v in ratios.items():
        print(f"  {k:<40} {v:>8.1f}x")
    print(json.dumps({"benchmark": "core_speed", "variant": "4p-base", "rounds": args.rounds,
                      "games": args.games, "calls": args.calls, "playouts": args.playouts,
                      "positions": args.positions,
                      "medians": med, "speedups": ratios, "machine": info}))


if __name__ == "__main__":
    raise SystemExit(main())
