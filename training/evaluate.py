"""Tournaments between agents: win rates with confidence intervals, scores, openskill ratings.

    moonriver-eval --agents random greedy mcts:50 --players 4 --games 1000 --workers 2

Seats rotate: the lineup (the agents, repeated to fill every seat when there are fewer
agents than players) shifts by one seat each game, so over a multiple of ``players`` games
every agent sits in every seat equally often; who places the first ranchero is drawn by each
game's seed. Game g uses seed ``seed + g`` and agent seeds derived from it, so results do not
depend on the number of worker processes. A shared victory counts 1/k to each of the k
winners. Ratings: openskill's Plackett-Luce model, updated game by game in game order.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import multiprocessing
import os
from dataclasses import asdict, dataclass, field
from typing import Any

from moonriver_env.agents.registry import make_agent

from moonriver_env.engine import Game, GameConfig
from moonriver_env.observation import LazyObservation, ObservationEncoder

Z95 = 1.959964


@dataclass
class AgentSummary:
    """Aggregate results of one agent over a tournament."""

    name: str
    games: int = 0
    wins: float = 0.0
    win_rate: float = 0.0
    win_ci_low: float = 0.0
    win_ci_high: float = 0.0
    mean_score: float = 0.0
    mean_margin: float = 0.0
    rating_mu: float = 0.0
    rating_sigma: float = 0.0
    rating: float = 0.0  # ordinal: mu - 3 sigma


@dataclass
class TournamentResult:
    """Per-agent summaries and per-game outcomes."""

    config: dict[str, Any]
    agents: list[AgentSummary]
    games: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {"config": self.config, "agents": [asdict(a) for a in self.agents],
                "games": self.games}


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (95% by default)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def lineup_for(game_index: int, num_agents: int, players: int) -> list[int]:
    """Agent index in each seat (player id) for a game: the rotated, repeated lineup."""
    base = [i % num_agents for i in range(players)]
    shift = game_index % players
    return base[shift:] + base[:shift]


_WORKER: dict[str, Any] = {}


def _init_worker(specs: list[str]) -> None:
    _WORKER["agents"] = {}
    _WORKER["specs"] = specs
    _WORKER["encoder"] = ObservationEncoder()


def _agent(spec: str, seat: int) -> Any:
    key = (spec, seat)  # one instance per seat: an agent may fill two seats of one game
    agents = _WORKER["agents"]
    if key not in agents:
        agents[key] = make_agent(spec)
    return agents[key]


def play_game(task: tuple[int, list[int], dict[str, Any], int]) -> dict[str, Any]:
    """Play one tournament game (runs in a worker process)."""
    index, lineup, config, seed = task
    specs, encoder = _WORKER["specs"], _WORKER["encoder"]
    game = Game(GameConfig.from_dict(config), seed=seed)
    seats = [_agent(specs[a], p) for p, a in enumerate(lineup)]
    for p, agent in enumerate(seats):
        agent.reset(seed * 10 + p)
    while not game.is_over:
        p = game.current_player
        game.apply(seats[p].act(game, LazyObservation(encoder, game, p)))
    scores = [s.total for s in game.scores()]
    return {"game": index, "seed": seed, "lineup": lineup, "scores": scores,
            "winners": game.winners(), "first_player": game.setup_order[0]}


def run_tournament(agent_specs: list[str], num_players: int = 4, mode: str = "base",
                   games: int = 100, seed: int = 0, workers: int = 1,
                   progress: bool = True) -> TournamentResult:
    """Play ``games`` games between the agents and summarise them."""
    if not agent_specs:
        raise ValueError("at least one agent spec is required")
    for spec in set(agent_specs):
        make_agent(spec)  # fail fast on a bad spec, before starting workers
    config = GameConfig(num_players=num_players, mode=mode).to_dict()
    tasks = [(g, lineup_for(g, len(agent_specs), num_players), config, seed + g)
             for g in range(games)]
    outcomes = _run(tasks, agent_specs, workers, progress)
    outcomes.sort(key=lambda o: o["game"])
    return TournamentResult(
        config={"agents": agent_specs, "num_players": num_players, "mode": mode,
                "games": games, "seed": seed},
        agents=summarise(agent_specs, outcomes), games=outcomes)


def _run(tasks: list, specs: list[str], workers: int, progress: bool) -> list[dict[str, Any]]:
    from tqdm import tqdm

    bar = tqdm(total=len(tasks), desc="games", disable=not progress, unit="game")
    out = []
    if workers <= 1:
        _init_worker(specs)
        for task in tasks:
            out.append(play_game(task))
            bar.update()
    else:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(workers, initializer=_init_worker, initargs=(specs,)) as pool:
            for outcome in pool.imap_unordered(play_game, tasks, chunksize=4):
                out.append(outcome)
                bar.update()
    bar.close()
    return out


def summarise(specs: list[str], outcomes: list[dict[str, Any]]) -> list[AgentSummary]:
    """Win rates, intervals, scores, margins and openskill ratings per agent."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating(name=s) for s in specs]
    sums = [AgentSummary(name=s) for s in specs]
    for o in outcomes:
        scores, winners, lineup = o["scores"], o["winners"], o["lineup"]
        for p, a in enumerate(lineup):
            s = sums[a]
            s.games += 1
            if p in winners:
                s.wins += 1 / len(winners)
            s.mean_score += scores[p]
            s.mean_margin += scores[p] - max(scores[:p] + scores[p + 1:])
        # Rank by the tie-break order: winners first, then by score.
        ranks = [0 if p in winners else 1 + sorted(scores, reverse=True).index(scores[p])
                 for p in range(len(lineup))]
        teams = [[ratings[a]] for a in lineup]
        rated = model.rate(teams, ranks=ranks)
        for a in set(lineup):  # an agent in several seats takes the mean of its updates
            seats = [p for p, b in enumerate(lineup) if b == a]
            mu = sum(rated[p][0].mu for p in seats) / len(seats)
            sigma = sum(rated[p][0].sigma for p in seats) / len(seats)
            ratings[a] = model.rating(mu=mu, sigma=sigma, name=specs[a])
    for s, r in zip(sums, ratings, strict=True):
        if s.games:
            s.win_rate = s.wins / s.games
            s.win_ci_low, s.win_ci_high = wilson_interval(s.wins, s.games)
            s.mean_score /= s.games
            s.mean_margin /= s.games
        s.rating_mu, s.rating_sigma, s.rating = r.mu, r.sigma, r.ordinal()
    return sums


def print_table(result: TournamentResult) -> None:
    """The results table in the terminal."""
    from rich.console import Console
    from rich.table import Table

    cfg = result.config
    table = Table(title=f"{cfg['games']} games, {cfg['num_players']} players, {cfg['mode']}")
    for col in ("agent", "games", "win rate", "95% CI", "mean score", "mean margin", "rating"):
        table.add_column(col, justify="left" if col == "agent" else "right")
    for a in sorted(result.agents, key=lambda a: -a.rating):
        table.add_row(a.name, str(a.games), f"{a.win_rate:.3f}",
                      f"{a.win_ci_low:.3f}-{a.win_ci_high:.3f}", f"{a.mean_score:.1f}",
                      f"{a.mean_margin:+.1f}", f"{a.rating:.2f} ({a.rating_mu:.1f}±"
                      f"{a.rating_sigma:.1f})")
    Console().print(table)


def write_outputs(result: TournamentResult, out_dir: str) -> tuple[str, str]:
    """Write ``summary.csv`` and ``results.json`` into a directory; return their paths."""
    os.makedirs(out_dir, exist_ok=True)
    csv_path = os.path.join(out_dir, "summary.csv")
    json_path = os.path.join(out_dir, "results.json")
    with open(csv_path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(asdict(result.agents[0])))
        writer.writeheader()
        for a in result.agents:
            writer.writerow(asdict(a))
    with open(json_path, "w", encoding="utf-8") as fh:
        json.dump(result.to_json(), fh, indent=1)
    return csv_path, json_path


def main(argv: list[str] | None = None) -> int:
    """CLI entry point (``moonriver-eval``)."""
    parser = argparse.ArgumentParser(prog="moonriver-eval", description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="+", required=True,
                        help="agent specs: random, greedy, mcts:SIMS, mcts:SECONDSs, "
                             "policy:PATH.zip")
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    parser.add_argument("--mode", default="base", choices=("base", "legends"))
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    parser.add_argument("--out", default=None, help="directory for summary.csv and results.json")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    result = run_tournament(args.agents, args.players, args.mode, args.games, args.seed,
                            args.workers, progress=not args.no_progress)
    print_table(result)
    if args.out:
        paths = write_outputs(result, args.out)
        print("wrote", *paths)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
