"""Circles: Far West tournaments: seat rotation, win rates with Wilson intervals, openskill.

    python -m moonriver_env.training.circles_eval --agents heuristic random --players 3 \\
        --games 300 --workers 2 --out runs/circles_eval

The same protocol as ``moonriver-eval`` (its helpers are reused): the lineup shifts by one
seat each game; game g uses seed ``seed + g`` (the first player is drawn from it), so results
do not depend on the number of workers; a shared victory counts 1/k to each of its k winners;
ratings are openskill's Plackett-Luce, updated game by game. "score" is a player's wealth at
the end (money plus deposit), "margin" its lead over the richest opponent. Agents: ``random``,
``heuristic``.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from typing import Any

from moonriver_env.agents.circles_registry import CIRCLES_SPECS, make_circles_agent
from moonriver_env.training.cli_errors import ArgumentParser, add_debug_flag, cli_main, require
from moonriver_env.training.evaluate import (
    TournamentResult,
    check_tournament,
    lineup_for,
    record_name,
    run_and_report,
    run_games,
    summarise,
)

from moonriver_env.circles import CirclesConfig, CirclesGame
from moonriver_env.circles.observation import ObservationEncoder
from moonriver_env.common.view import LazyObservation

GAME = "circles"
_WORKER: dict[str, Any] = {}


def _init_worker(specs: list[str], config: dict[str, Any]) -> None:
    _WORKER["specs"] = specs
    _WORKER["agents"] = {}
    _WORKER["observer"] = ObservationEncoder(CirclesConfig.from_dict(config))


def _agent(spec: str, seat: int) -> Any:
    key = (spec, seat)  # one instance per seat: an agent may fill two seats of one game
    agents = _WORKER["agents"]
    if key not in agents:
        agents[key] = make_circles_agent(spec)
    return agents[key]


def play_circles_game(task: tuple[int, list[int], dict[str, Any], int, str | None]
                      ) -> dict[str, Any]:
    """Play one tournament game (runs in a worker process); optionally save its record."""
    index, lineup, config, seed, records_dir = task
    observer = _WORKER["observer"]
    game = CirclesGame(CirclesConfig.from_dict(config), seed=seed)
    seats = [_agent(_WORKER["specs"][a], p) for p, a in enumerate(lineup)]
    for p, agent in enumerate(seats):
        agent.reset(seed * 10 + p)
    while not game.is_over:
        p = game.current_player
        game.apply(seats[p].act(game, LazyObservation(observer, game, p)))
    if records_dir is not None:
        with open(os.path.join(records_dir, record_name(index)), "w", encoding="utf-8") as fh:
            json.dump(game.to_record(), fh)
    return {"game": index, "seed": seed, "lineup": lineup,
            "scores": [game.wealth(p) for p in range(game.num_players)],
            "winners": game.winners(), "first_player": game.first_player,
            "end_reason": game.end_reason, "turns": game.turns}


def run_circles_tournament(agent_specs: list[str], num_players: int = 4, games: int = 100,
                           seed: int = 0, workers: int = 1, progress: bool = True,
                           records_dir: str | None = None,
                           config: CirclesConfig | None = None) -> TournamentResult:
    """Play ``games`` Circles games between the agents and summarise them.

    ``config`` overrides the rules (its ``num_players`` must equal ``num_players``); with
    ``records_dir`` (an existing directory), each game's record is saved there.
    """
    check_tournament(agent_specs, num_players, games, seed, workers)
    if config is None:
        config = CirclesConfig(num_players=num_players)
    elif config.num_players != num_players:
        raise ValueError(f"config.num_players ({config.num_players}) differs from num_players "
                         f"({num_players})")
    for spec in set(agent_specs):
        make_circles_agent(spec)  # fail fast on a bad spec, before starting workers
    cfg = config.to_dict()
    tasks = [(g, lineup_for(g, len(agent_specs), num_players), cfg, seed + g, records_dir)
             for g in range(games)]
    outcomes = run_games(tasks, play_circles_game, _init_worker, (agent_specs, cfg), workers,
                         progress, chunksize=8)
    outcomes.sort(key=lambda o: o["game"])
    return TournamentResult(
        config={"game": GAME, "agents": agent_specs, "num_players": num_players, "mode": GAME,
                "games": games, "seed": seed, "rules": cfg},
        agents=summarise(agent_specs, outcomes), games=outcomes)


def build_parser(prog: str = "circles-eval") -> ArgumentParser:
    """The Circles tournament's argument parser."""
    parser = ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                        help=f"agent specs, at most one per seat: {', '.join(CIRCLES_SPECS)}")
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4, 5),
                        help="players per game (default: %(default)s)")
    parser.add_argument("--games", type=int, default=100,
                        help="games to play, >= 1 (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of game 0, >= 0; game g uses seed + g (default: %(default)s)")
    parser.add_argument("--workers", type=int, default=1,
                        help="worker processes, >= 1 (default: %(default)s)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="directory for summary.csv and results.json (default: none)")
    parser.add_argument("--save-records", default=None, metavar="DIR",
                        help="directory for each game's JSON record (default: none)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_debug_flag(parser)
    return parser


def _main(argv: list[str] | None, prog: str) -> int:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    try:
        check_tournament(args.agents, args.players, args.games, args.seed, args.workers)
        for spec in set(args.agents):
            make_circles_agent(spec)
    except ValueError as exc:
        parser.error(str(exc))
    require("tqdm", "rich", "openskill", what=prog)
    run_and_report(args, lambda records_dir: run_circles_tournament(
        args.agents, args.players, args.games, args.seed, args.workers,
        progress=not args.no_progress, records_dir=records_dir))
    return 0


def make_main(prog: str) -> Callable[[list[str] | None], int]:
    """A CLI entry point whose usage and one-line errors carry ``prog`` (e.g.
    ``"moonriver-eval --game circles"`` when ``moonriver-eval`` hands its arguments over)."""
    return cli_main(prog)(functools.partial(_main, prog=prog))


def main(argv: list[str] | None = None) -> int:
    """CLI entry point (``python -m moonriver_env.training.circles_eval``)."""
    return make_main("circles-eval")(argv)


if __name__ == "__main__":
    raise SystemExit(main())
