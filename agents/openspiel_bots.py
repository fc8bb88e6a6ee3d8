"""This package's agents in OpenSpiel: ``AgentBot`` and ``play_match`` (OpenSpiel's MCTS
against an agent). See docs/frameworks.md."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyspiel
from moonriver_env.agents.base import Agent
from moonriver_env.agents.registry import make_agent

from moonriver_env.common.stats import wilson_interval
from moonriver_env.moonriver.contract import MoonRiverGame
from moonriver_env.moonriver.observation import LazyObservation, ObservationEncoder
from moonriver_env.moonriver.openspiel import GAME_NAME, WIN, engine_game


class AgentBot(pyspiel.Bot):
    """An OpenSpiel bot that plays one of this package's agents (an Agent or a spec)."""

    def __init__(self, agent: Agent[MoonRiverGame] | str, seed: int | None = None) -> None:
        pyspiel.Bot.__init__(self)
        if isinstance(agent, str):
            agent = make_agent(agent, seed=seed)
        self.agent = agent
        self.seed = seed
        self._encoder = ObservationEncoder()

    def restart_at(self, state: pyspiel.State) -> None:
        """A new game: reset the agent (reseeded with the bot's seed)."""
        self.agent.reset(self.seed)

    def inform_action(self, state: pyspiel.State, player_id: int, action: int) -> None:
        """Nothing to track: the agent reads the engine game at its turn."""

    def step(self, state: pyspiel.State) -> int:
        """The agent's action for the player to act, from the engine game and its observation."""
        game = engine_game(state)
        return int(self.agent.act(game, LazyObservation(self._encoder, game, game.current_player)))


def make_mcts_bot(game: pyspiel.Game, simulations: int, seed: int | None = None,
                  uct_c: float = 2.0, rollouts: int = 1) -> pyspiel.Bot:
    """OpenSpiel's ``MCTSBot``, UCT with ``uct_c``, each leaf valued by ``rollouts`` games."""
    from open_spiel.python.algorithms import mcts

    if isinstance(simulations, bool) or not isinstance(simulations, int) or simulations < 2:
        raise ValueError(f"simulations must be an integer >= 2 (OpenSpiel's MCTSBot spends its "
                         f"first simulation on the root alone), got {simulations!r}")
    rng = np.random.RandomState(seed)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=rollouts, random_state=rng)
    return mcts.MCTSBot(game, uct_c=uct_c, max_simulations=simulations, evaluator=evaluator,
                        random_state=rng, solve=False)


@dataclass(frozen=True)
class MatchResult:
    """Win shares (split among winners) of OpenSpiel's MCTS and an agent, with 95% intervals."""

    game: str
    mcts: str
    agent: str
    games: int
    mcts_share: float
    mcts_interval: tuple[float, float]
    agent_share: float  # one seat's: the others' wins over their seats (1/n in an even match)
    agent_interval: tuple[float, float]
    returns: list[list[float]] = field(default_factory=list)  # per game, per player
    mcts_seats: list[int] = field(default_factory=list)  # the MCTS player of each game

    def __str__(self) -> str:
        lo, hi = self.mcts_interval
        alo, ahi = self.agent_interval
        return (f"{self.game}, {self.games} games: {self.mcts} {self.mcts_share:.3f} "
                f"[{lo:.3f}, {hi:.3f}], {self.agent} (per seat) {self.agent_share:.3f} "
                f"[{alo:.3f}, {ahi:.3f}]")


def play_match(simulations: int, agent: str | None = None, games: int = 10,
               players: int = 2, mode: str = "base", scenario: int = 0, seed: int = 0,
               uct_c: float = 2.0, rollouts: int = 1) -> MatchResult:
    """OpenSpiel's MCTS in one rotating seat against ``agent`` (default ``mcts:<simulations>``)."""
    from open_spiel.python.algorithms.evaluate_bots import evaluate_bots

    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be an integer >= 1, got {games!r}")
    agent = agent if agent is not None else f"mcts:{simulations}"
    params = {"players": players, "mode": mode, "scenario": scenario}
    game = pyspiel.load_game(GAME_NAME, params)
    seeds = np.random.SeedSequence(seed).generate_state(3 * games)
    rows, seats = [], []
    for g in range(games):
        mcts_seat = g % players
        bots = [make_mcts_bot(game, simulations, seed=int(seeds[3 * g]), uct_c=uct_c,
                              rollouts=rollouts) if p == mcts_seat else
                AgentBot(agent, seed=int(seeds[3 * g + 1]) + p) for p in range(players)]
        chance = np.random.RandomState(int(seeds[3 * g + 2]))
        rows.append([float(r) for r in evaluate_bots(game.new_initial_state(), bots, chance)])
        seats.append(mcts_seat)
    won = [[r == WIN for r in row] for row in rows]
    mcts_points = sum(w[s] / sum(w) for w, s in zip(won, seats, strict=True))
    agent_points = (games - mcts_points) / (players - 1)
    name = f"{GAME_NAME}({','.join(f'{k}={v}' for k, v in params.items())})"
    return MatchResult(name, f"openspiel-mcts:{simulations}", agent, games,
                       mcts_points / games, wilson_interval(mcts_points, games),
                       agent_points / games, wilson_interval(agent_points, games), rows, seats)
