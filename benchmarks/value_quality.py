"""How well networks' value heads predict who wins, on the same positions.

    python benchmarks/value_quality.py --networks pretrained runs/az_value/az.npz \
        --variants 4p-base 2p-base --games 200 --seed 7900000000

Positions: every decision with a choice of ``--games`` games of each variant (game g on seed
``seed + g``), played by ``--player``'s policy sampled (``az-sample``, its own seed), as the
value warm-up of ``moonriver-train-az`` plays its games. At each position every network
predicts the win share of each seat; printed per variant and network: the cross-entropy of the
predictions to the game's outcome (a tie's winners share it; lower is better) and the share of
positions whose most likely winner won, each the mean over games of a game's mean over its
positions (every game counts once), with 95% intervals over games (the positions of one game
are not independent); after the first network, the game-by-game difference to it. A network
whose policy is not the player's is scored on the player's games. One JSON line last.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np
from machine import machine  # this script's directory is on sys.path
from moonriver_env.agents.az import AZAgent, agent_weights
from moonriver_env.training.az.selfplay import seat_outcome
from moonriver_env.training.variants import variant_config
from progress import Progress, main_of
from search_agreement import SHIPPED, weights_path

from moonriver_env.common.stats import mean_interval
from moonriver_env.moonriver.core import Game


def positions(variant: str, player: str, games: int, seed: int) -> list[tuple[np.ndarray, ...]]:
    """Per game: (observations, masks, player counts, outcomes by seat relative to the mover)."""
    agent = AZAgent(weights_path(player), deterministic=False, seed=seed)
    out = []
    progress = Progress("value_quality.py", games, f"{variant} games played")
    for g in range(games):
        progress.update(g)
        game = Game(variant_config(variant), seed=seed + g)
        obs, masks, movers = [], [], []
        while not game.is_over:
            ids = game.legal_action_ids()
            mover = game.current_player
            observation = {"observation": game.observe(mover), "action_mask": game.legal_mask()}
            if ids.size > 1:
                obs.append(observation["observation"])
                masks.append(observation["action_mask"])
                movers.append(mover)
            game.apply(agent.act(game, observation) if ids.size > 1 else int(ids[0]))
        outcome = np.stack([seat_outcome(game, m)[0] for m in movers])
        out.append((np.stack(obs), np.stack(masks), np.full(len(obs), game.num_players,
                                                             np.int32), outcome))
    progress.update(games)
    return out


def quality(network: str, games: list[tuple[np.ndarray, ...]]) -> tuple[dict[str, Any],
                                                                         np.ndarray]:
    """Cross-entropy and top-1 accuracy of ``network``'s win shares, per game then pooled;
    and the per-game cross-entropies (to compare networks game by game)."""
    net, _ = agent_weights(weights_path(network))
    losses, hits = [], []
    for obs, masks, players, outcome in games:
        prior = np.zeros(masks.shape, np.float32) if net.uses_prior else None
        _, shares = net.evaluate(obs, masks, players, prior)
        losses.append(float(-(outcome * np.log(np.maximum(shares, 1e-7))).sum(1).mean()))
        hits.append(float((outcome[np.arange(len(shares)), shares.argmax(1)] > 0).mean()))
    ce, hit = mean_interval(np.array(losses), low=0.0), mean_interval(np.array(hits), 0.0, 1.0)
    return {"cross_entropy": ce[0], "cross_entropy_ci": ce[1:], "top_winner": hit[0],
            "top_winner_ci": hit[1:]}, np.array(losses)


@main_of("value_quality.py")
def main() -> None:
    p = argparse.ArgumentParser(prog="value_quality.py", description=__doc__.split("\n")[0])
    p.add_argument("--networks", nargs="+", default=[SHIPPED])
    p.add_argument("--player", default=SHIPPED, help="the network whose policy plays")
    p.add_argument("--variants", nargs="+", default=["4p-base"])
    p.add_argument("--games", type=int, default=200)
    p.add_argument("--seed", type=int, default=7900000000)
    args = p.parse_args()
    if args.games < 2:
        p.error("--games must be at least 2 (the intervals are over games)")
    start = time.perf_counter()
    results: dict[str, Any] = {}
    for variant in args.variants:
        games = positions(variant, args.player, args.games, args.seed)
        results[variant] = {"positions": int(sum(len(g[0]) for g in games))}
        first: np.ndarray | None = None
        for network in args.networks:
            r, losses = quality(network, games)
            line = (f"{variant} {network}: cross-entropy {r['cross_entropy']:.4f} "
                    f"({r['cross_entropy_ci'][0]:.4f}-{r['cross_entropy_ci'][1]:.4f}), most "
                    f"likely winner won {r['top_winner']:.3f} ({r['top_winner_ci'][0]:.3f}-"
                    f"{r['top_winner_ci'][1]:.3f})")
            if first is None:
                first = losses
            else:  # game by game against the first network: the same positions
                diff = mean_interval(losses - first)
                r["minus_first"], r["minus_first_ci"] = diff[0], diff[1:]
                line += f", minus the first's {diff[0]:+.4f} ({diff[1]:+.4f} to {diff[2]:+.4f})"
            results[variant][network] = r
            print(f"{line}; {results[variant]['positions']} positions", flush=True)
    print(json.dumps({"benchmark": "value_quality", "player": args.player,
                      "games": args.games, "seed": args.seed, "results": results,
                      "seconds": round(time.perf_counter() - start, 1), "machine": machine()}))


if __name__ == "__main__":
    raise SystemExit(main())
