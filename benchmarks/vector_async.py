"""Async stepping (moonriver_env.moonriver.batch.async_env) against synchronous stepping, a network
in the loop.

Both loops play the same games (every seat a learner, or ``--opponents`` built-in seats
beside one learner) with the same policy: a torch
MLP (4934 -> hidden -> 2710, one torch thread) over each game's observation, its masked argmax
the action. The synchronous loop runs the network on all N games, then steps all N
(``BatchedGames.step``). The async loop splits the N games into ``--parts`` parts
(``AsyncBatchedGames(N, N / parts)``): it receives a part, runs the network on it and sends its
actions, so that the core steps that part on a worker thread (GIL released) while the network
works on the next part. Both loops make the same number of agent-steps per round (counted, not
timed); the rounds alternate which loop goes first, and the ratio is taken within each round.
"forward" and "step" split the synchronous loop's time, for the ceiling of the overlap
((forward + step) / max(forward, step)). Last line: JSON.

    python benchmarks/vector_async.py [--games 256] [--parts 2] [--steps 40] [--rounds 6]
                                      [--hidden 64] [--players 4] [--opponents learner]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
import torch
from machine import machine
from progress import main_of

from moonriver_env.moonriver.batch.async_env import AsyncBatchedGames
from moonriver_env.moonriver.batch.games import NUM_ACTIONS, BatchedGames
from moonriver_env.moonriver.batch.multiagent import BatchState
from moonriver_env.moonriver.observation import OBSERVATION_SIZE
from moonriver_env.moonriver.rules.config import GameConfig


def policy_net(hidden: int) -> torch.nn.Module:
    """The benchmark's network: a two-layer MLP from an observation to action logits."""
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(OBSERVATION_SIZE, hidden), torch.nn.ReLU(),
                               torch.nn.Linear(hidden, NUM_ACTIONS))


@torch.inference_mode()
def act(net: torch.nn.Module, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The masked argmax of the network's logits, one action per row."""
    logits = net(torch.from_numpy(obs))
    legal = torch.from_numpy(mask.view(np.bool_))
    return logits.masked_fill(~legal, float("-inf")).argmax(dim=1).numpy()


def run_sync(net: torch.nn.Module, games: BatchedGames, steps: int) -> tuple[float, float]:
    """``steps`` synchronous steps of every game: (seconds, of which in the network)."""
    in_net = 0.0
    start = time.perf_counter()
    for _ in range(steps):
        t0 = time.perf_counter()
        actions = act(net, games.obs, games.mask)
        in_net += time.perf_counter() - t0
        games.step(actions)
    return time.perf_counter() - start, in_net


def run_async(net: torch.nn.Module, pool: AsyncBatchedGames, ready: list[BatchState],
              steps: int) -> tuple[float, list[BatchState]]:
    """``steps`` steps of every game through send/recv, starting from every part's received
    state and ending with every part received again: (seconds, the parts' states)."""
    start = time.perf_counter()
    for state in ready:  # each part steps while the network works on the next
        pool.send(act(net, state.observation, state.legal_action_mask), state.env_id)
    for _ in range((steps - 1) * len(pool.parts)):
        state = pool.recv()
        pool.send(act(net, state.observation, state.legal_action_mask), state.env_id)
    ready = [pool.recv() for _ in pool.parts]
    return time.perf_counter() - start, ready


@main_of("vector_async.py")
def main() -> None:
    """Time both loops in interleaved rounds; print a summary and a JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=256, help="games in each loop")
    parser.add_argument("--parts", type=int, default=2, help="parts of the async loop")
    parser.add_argument("--steps", type=int, default=40, help="steps of every game per round")
    parser.add_argument("--rounds", type=int, default=6, help="interleaved rounds")
    parser.add_argument("--hidden", type=int, default=64, help="the MLP's hidden width")
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    parser.add_argument("--opponents", default="learner", choices=("learner", "random", "greedy"),
                        help="seats 1.. of every game: learners (self-play) or built-in seats "
                             "played in the core's step")
    args = parser.parse_args()
    if min(args.games, args.parts, args.steps, args.rounds, args.hidden) < 1 \
            or args.games % args.parts:
        parser.error("--games, --parts, --steps, --rounds and --hidden must be positive, and "
                     "--parts must divide --games")
    torch.set_num_threads(1)
    print(f"CPU: {machine()['cpu_model']}")
    config = GameConfig(num_players=args.players)
    net = policy_net(args.hidden).eval()
    seats = ("learner",) + (args.opponents,) * (args.players - 1)
    games = BatchedGames(args.games, config, seats)
    games.reset(seed=0)
    pool = AsyncBatchedGames(args.games, args.games // args.parts, config, seats,
                             copy=False)
    pool.async_reset(seed=0)
    ready = [pool.recv() for _ in pool.parts]  # between rounds every part is received
    rounds = []
    for r in range(args.rounds):
        timings = {}
        for name in (("sync", "async") if r % 2 == 0 else ("async", "sync")):
            if name == "sync":
                timings["sync"], timings["forward"] = run_sync(net, games, args.steps)
            else:
                timings["async"], ready = run_async(net, pool, ready, args.steps)
        rounds.append(timings)
    pool.close()
    agent_steps = args.games * args.steps
    sync_rate = [agent_steps / t["sync"] for t in rounds]
    async_rate = [agent_steps / t["async"] for t in rounds]
    ratios = [t["sync"] / t["async"] for t in rounds]
    forward = sum(t["forward"] for t in rounds)
    step = sum(t["sync"] for t in rounds) - forward
    ceiling = (forward + step) / max(forward, step)
    result = {"sync_agent_steps_per_s": round(statistics.median(sync_rate)),
              "async_agent_steps_per_s": round(statistics.median(async_rate)),
              "async_over_sync_median": round(statistics.median(ratios), 3),
              "async_over_sync_rounds": [round(x, 3) for x in ratios],
              "forward_share_of_sync": round(forward / (forward + step), 3),
              "overlap_ceiling": round(ceiling, 3)}
    print(f"sync  {result['sync_agent_steps_per_s']:>9,} agent-steps/s (median of rounds; "
          f"network {100 * result['forward_share_of_sync']:.0f}% of the time)")
    print(f"async {result['async_agent_steps_per_s']:>9,} agent-steps/s, "
          f"{result['async_over_sync_median']:.2f}x sync (median of the rounds' ratios; "
          f"ceiling {ceiling:.2f}x)")
    print(json.dumps({"benchmark": "vector_async", "games": args.games, "parts": args.parts,
                      "players": args.players,
                      "opponents": args.opponents, "steps": args.steps, "rounds": args.rounds,
                      "hidden": args.hidden, **result, "machine": machine()}))


if __name__ == "__main__":
    raise SystemExit(main())
