"""MCTSAgent: information-set Monte-Carlo tree search over determinized clones.

On a game of the compiled core the whole search runs there (``Game.mcts_search``, same
algorithm). See docs/design.md.
"""

from __future__ import annotations

import math
import time

import numpy as np
from moonriver_env.agents.base import Observation, SeededAgent
from moonriver_env.agents.specs import parse_budget

from moonriver_env.common.validate import check_time_limit
from moonriver_env.moonriver.contract import MoonRiverGame, has_core_extras

VALUE_SCALE = 20.0  # a 20-point margin is worth tanh(1)


class _Node:
    __slots__ = ("available", "children", "player", "total", "visits")

    def __init__(self, player: int) -> None:
        self.player = player  # the root: who acts; a child: who moved to it (its values' player)
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.total = 0.0  # sum of values for the player who chose the action leading here
        self.available = 0


def margin_values(game: MoonRiverGame, scale: float = VALUE_SCALE) -> list[float]:
    """Value of the position for each player: margin over the best opponent, squashed."""
    board = game.scores() if game.is_over else game.running_scores()
    totals = [s.total for s in board]
    return [math.tanh((t - max(totals[:p] + totals[p + 1:])) / scale)
            for p, t in enumerate(totals)]


class MCTSAgent(SeededAgent):
    """IS-MCTS on a budget of ``simulations`` or ``seconds``, capped at ``time_limit`` s."""

    def __init__(self, simulations: int = 100, seconds: float | None = None,
                 rollout_depth: int = 20, exploration: float = 1.0, seed: int | None = None,
                 name: str | None = None, time_limit: float = 0.0) -> None:
        if seconds is None:
            if isinstance(simulations, bool) or not isinstance(simulations, (int, np.integer)) \
                    or simulations < 1:
                raise ValueError(f"simulations must be an integer >= 1, got {simulations!r}")
        elif isinstance(seconds, bool) or not isinstance(seconds, (int, float, np.floating)) \
                or not math.isfinite(seconds) or seconds <= 0:
            raise ValueError(f"seconds must be a finite number > 0, got {seconds!r}")
        self.simulations = simulations
        self.seconds = seconds
        self.rollout_depth = rollout_depth
        self.exploration = exploration
        self.time_limit = check_time_limit(time_limit)
        self.last_simulations = 0
        super().__init__(seed, name or (f"mcts-{seconds}s" if seconds else f"mcts-{simulations}"))

    def act(self, game: MoonRiverGame, observation: Observation) -> int:
        """Search from the current position and return the most visited action."""
        legal = game.legal_action_ids()
        if legal.size == 1:
            return int(legal[0])
        if has_core_extras(game):  # the compiled core runs the whole search, same algorithm
            seconds = None if self.seconds is None else float(self.seconds)
            actions, counts = game.mcts_search(int(self.simulations), seconds, self.rollout_depth,
                                               float(self.exploration), VALUE_SCALE,
                                               int(self.rng.integers(2**63)),
                                               time_limit=self.time_limit)
            self.last_simulations = int(counts.sum())  # each simulation visits one root child
            ties = actions[counts == counts.max()]
            return int(ties[int(self.rng.integers(len(ties)))])
        root = _Node(game.current_player)
        stop = min((t for t in (self.seconds, self.time_limit) if t), default=None)
        start, done = time.perf_counter(), 0
        while True:
            if done > 0 and stop is not None and time.perf_counter() - start >= stop:
                break
            if self.seconds is None and done >= self.simulations:
                break
            self._simulate(game, root)
            done += 1
        self.last_simulations = done
        visits = {a: child.visits for a, child in root.children.items()}
        best = max(visits.values())
        ties = [a for a, v in visits.items() if v == best]
        return int(ties[int(self.rng.integers(len(ties)))])

    def _simulate(self, root_game: MoonRiverGame, root: _Node) -> None:
        game = root_game.clone()
        game.determinize(self.rng)
        path = [root]
        node = root
        while not game.is_over:
            legal = game.legal_action_ids().tolist()
            for a in legal:  # UCB counts a child only where its action is legal
                child = node.children.get(a)
                if child is not None:
                    child.available += 1
            untried = [a for a in legal if a not in node.children]
            if untried:
                action = untried[int(self.rng.integers(len(untried)))]
                child = node.children[action] = _Node(game.current_player)
                child.available = 1
                game.apply(action)
                path.append(child)
                break
            action = self._ucb(node, legal)
            game.apply(action)
            node = node.children[action]
            path.append(node)
        self._rollout(game)
        values = margin_values(game)
        for i, n in enumerate(path):
            n.visits += 1
            if i > 0:
                n.total += values[n.player]

    def _ucb(self, node: _Node, legal: list[int]) -> int:
        best, best_value = legal[0], -math.inf
        for a in legal:
            child = node.children[a]
            value = (child.total / child.visits
                     + self.exploration * math.sqrt(math.log(child.available) / child.visits))
            if value > best_value:
                best, best_value = a, value
        return best

    def _rollout(self, game: MoonRiverGame) -> None:
        for _ in range(self.rollout_depth):
            if game.is_over:
                return
            legal = game.legal_mask().view(np.bool_).nonzero()[0]
            game.apply(int(legal[self.rng.integers(legal.size)]))


def mcts_from_spec(spec: str, seed: int | None = None) -> MCTSAgent:
    """``mcts`` (100 simulations), ``mcts:SIMS`` or ``mcts:SECONDSs``."""
    arg = spec.partition(":")[2]
    try:
        budget = parse_budget(arg or "100")
    except ValueError:
        raise ValueError(f"agent spec {spec!r}: the budget must be mcts:SIMS (an integer "
                         f">= 1) or mcts:SECONDSs (a number > 0)") from None
    try:
        return MCTSAgent(**budget, seed=seed, name=spec)
    except ValueError as exc:
        raise ValueError(f"agent spec {spec!r}: {exc}") from None
