"""Tournaments between agents of either game: seat rotation, win rates, openskill ratings.

The library under ``moonriver-eval``; its protocol: docs/design.md ("Tournaments")."""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from moonriver_env.agents.registry import make_agent

from moonriver_env.common.cli import children_ignore_ctrl_c
from moonriver_env.common.stats import wilson_interval
from moonriver_env.common.view import LazyObservation
from moonriver_env.moonriver.backend import DEFAULT_BACKEND, check_backend

GAMES = ("moonriver", "circles")
T = TypeVar("T")  # one game's task


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


def lineup_for(game_index: int, num_agents: int, players: int) -> list[int]:
    """Agent index in each seat (player id) for a game: the rotated, repeated lineup."""
    base = [i % num_agents for i in range(players)]
    shift = game_index % players
    return base[shift:] + base[:shift]


@dataclass(frozen=True)
class GameKind:
    """What a tournament needs to know of one game: its config, games, encoder and results."""

    name: str
    config_from_dict: Callable[[dict[str, Any]], Any]
    new_game: Callable[[Any, int, str], Any]  # (config, seed, backend) -> a TableGame
    encoder: Callable[[Any], Any]  # config -> an observation encoder
    scores: Callable[[Any], list[float]]  # a finished game -> each seat's score
    extras: Callable[[Any], dict[str, Any]]  # a finished game -> more of its outcome
    chunksize: int  # games a worker takes at a time


def _moonriver() -> GameKind:
    from moonriver_env.moonriver.backend import Encoder, make_game
    from moonriver_env.moonriver.rules import GameConfig

    return GameKind("moonriver", GameConfig.from_dict, make_game, lambda config: Encoder(),
                    lambda game: [s.total for s in game.scores()],
                    lambda game: {"first_player": game.setup_order[0]}, chunksize=4)


def _circles() -> GameKind:
    from moonriver_env.circles import CirclesConfig, CirclesGame
    from moonriver_env.circles.observation import ObservationEncoder

    return GameKind("circles", CirclesConfig.from_dict,
                    lambda config, seed, backend: CirclesGame(config, seed=seed),
                    ObservationEncoder,
                    lambda game: [game.wealth(p) for p in range(game.num_players)],
                    lambda game: {"first_player": game.first_player,
                                  "end_reason": game.end_reason, "turns": game.turns},
                    chunksize=8)


def game_kind(game: str) -> GameKind:
    """The tournament's view of ``game`` ("moonriver" or "circles")."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; allowed: {', '.join(GAMES)}")
    return _moonriver() if game == "moonriver" else _circles()


_WORKER: dict[str, Any] = {}


def _init_worker(game: str, specs: list[str], config: dict[str, Any], backend: str) -> None:
    kind = game_kind(game)
    _WORKER.update(kind=kind, specs=specs, agents={}, backend=backend,
                   config=kind.config_from_dict(config))
    _WORKER["encoder"] = kind.encoder(_WORKER["config"])


def _agent(spec: str, seat: int) -> Any:
    key = (spec, seat)  # one instance per seat: an agent may fill two seats of one game
    agents = _WORKER["agents"]
    if key not in agents:
        agents[key] = make_agent(spec, game=_WORKER["kind"].name)
    return agents[key]


def record_name(index: int) -> str:
    """File name of game ``index``'s record in a ``--save-records`` directory."""
    return f"game_{index:05d}.json"


def play_game(task: tuple[int, list[int], int, str | None]) -> dict[str, Any]:
    """Play one tournament game (runs in a worker process); optionally save its record."""
    index, lineup, seed, records_dir = task
    kind, encoder = _WORKER["kind"], _WORKER["encoder"]
    game = kind.new_game(_WORKER["config"], seed, _WORKER["backend"])
    seats = [_agent(_WORKER["specs"][a], p) for p, a in enumerate(lineup)]
    for p, agent in enumerate(seats):
        agent.reset(seed * 10 + p)
    while not game.is_over:
        p = game.current_player
        game.apply(seats[p].act(game, LazyObservation(encoder, game, p)))
    if records_dir is not None:
        with open(os.path.join(records_dir, record_name(index)), "w", encoding="utf-8") as fh:
            json.dump(game.to_record(), fh)
    return {"game": index, "seed": seed, "lineup": lineup, "scores": kind.scores(game),
            "winners": game.winners(), **kind.extras(game)}


def check_tournament(agent_specs: list[str], num_players: int, games: int, seed: int,
                     workers: int, duplicate: bool = False) -> None:
    """Refuse settings that would not give a meaningful tournament (ValueError says why)."""
    if not agent_specs:
        raise ValueError("at least one agent spec is required")
    if len(agent_specs) > num_players:
        raise ValueError(f"{len(agent_specs)} agents but only {num_players} seats: give at most "
                         f"{num_players} agents (or more --players)")
    for name, value, low in (("games", games, 1), ("seed", seed, 0), ("workers", workers, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if duplicate and games % num_players:
        raise ValueError(f"duplicate deals play each seed once per seat: games must be a "
                         f"multiple of {num_players} (the players), got {games}")


def run_tournament(agent_specs: list[str], num_players: int = 4, mode: str = "base",
                   games: int = 100, seed: int = 0, workers: int = 1,
                   progress: bool = True, records_dir: str | None = None,
                   backend: str = DEFAULT_BACKEND, game: str = "moonriver",
                   config: Any = None, duplicate: bool = False) -> TournamentResult:
    """Play ``games`` games of ``game`` between the agents and summarise them."""
    # game g is on seed seed + g; duplicate deals each seed once per seat (game g on seed
    # seed + g // players), so copies of one deterministic agent split its wins exactly and
    # only what differs between the agents moves the result
    kind = game_kind(game)
    check_tournament(agent_specs, num_players, games, seed, workers, duplicate)
    check_backend(backend)
    if config is None:
        config = kind.config_from_dict({"num_players": num_players} | (
            {"mode": mode} if game == "moonriver" else {}))
    elif config.num_players != num_players:
        raise ValueError(f"config.num_players ({config.num_players}) differs from num_players "
                         f"({num_players})")
    for spec in set(agent_specs):
        make_agent(spec, game=game, config=config)  # fail fast on a bad spec or variant
    rules = config.to_dict()
    tasks = [(g, lineup_for(g, len(agent_specs), num_players),
              seed + (g // num_players if duplicate else g), records_dir) for g in range(games)]
    outcomes = run_games(tasks, play_game, _init_worker, (game, agent_specs, rules, backend),
                         workers, progress, chunksize=kind.chunksize)
    outcomes.sort(key=lambda o: o["game"])
    if game == "moonriver":
        about = {"agents": agent_specs, "num_players": num_players, "mode": config.mode,
                 "games": games, "seed": seed, "backend": backend}
        if config.scenario is not None:  # else each game's seed draws it
            about["scenario"] = config.scenario
    else:
        about = {"game": game, "agents": agent_specs, "num_players": num_players, "mode": game,
                 "games": games, "seed": seed, "rules": rules}
    if duplicate:
        about["duplicate"] = True
    return TournamentResult(config=about, agents=summarise(agent_specs, outcomes),
                            games=outcomes)


def run_games(tasks: Sequence[T], play: Callable[[T], dict[str, Any]],
              init: Callable[..., None], initargs: tuple[object, ...], workers: int, progress: bool,
              chunksize: int) -> list[dict[str, Any]]:
    """Outcomes of ``play(task)`` for every task, here or in a spawned pool, in finishing order."""
    from tqdm import tqdm

    bar = tqdm(total=len(tasks), desc="games", disable=not progress, unit="game")
    out: list[dict[str, Any]] = []
    try:  # the bar is closed before an error's (or Ctrl-C's) one line is printed
        if workers <= 1:
            init(*initargs)
            for task in tasks:
                out.append(play(task))
                bar.update()
        else:
            ctx = multiprocessing.get_context("spawn")
            with children_ignore_ctrl_c():  # Ctrl-C reaches this process alone: no worker traces
                pool = ctx.Pool(workers, initializer=init, initargs=initargs)
            with pool:
                for outcome in pool.imap_unordered(play, tasks, chunksize=chunksize):
                    out.append(outcome)
                    bar.update()
    finally:
        bar.close()
    return out


def seat_share(outcome: dict[str, Any], seat: int) -> float:
    """The win share of ``seat`` in a game's outcome (a shared win split among its winners)."""
    winners = outcome["winners"]
    return 1 / len(winners) if seat in winners else 0.0


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
            s.wins += seat_share(o, p)
            s.mean_score += scores[p]
            s.mean_margin += scores[p] - max(scores[:p] + scores[p + 1:])
        # Rank by the tie-break order: winners first, then by score.
        ranks: list[float] = [0 if p in winners
                              else 1 + sorted(scores, reverse=True).index(scores[p])
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
