"""PUCTAgent: information-set PUCT search guided by a policy prior and a value estimate.

See docs/design.md (PUCT search).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
from moonriver_env.agents.base import Observation, SeededAgent
from moonriver_env.agents.greedy import action_values
from moonriver_env.agents.mcts import margin_values
from moonriver_env.agents.specs import Budget, parse_budget

from moonriver_env.common.validate import check_time_limit
from moonriver_env.moonriver.contract import MoonRiverGame, has_core_extras

ROLLOUTS = ("random", "greedy")
SHAPE_WEIGHT = 0.1  # points per unit of Greedy's tie-break in the heuristic prior

PolicyValueFn = Callable[[MoonRiverGame, Observation], tuple[np.ndarray, float | None]]


class Evaluator(Protocol):
    """Prior over the legal actions and, optionally, a value per player for a position."""

    def __call__(self, game: MoonRiverGame, legal: list[int],
                 rng: np.random.Generator) -> tuple[list[float], list[float] | None]:
        """``(priors aligned with legal, values per player or None)``."""


def heuristic_scores(game: MoonRiverGame, legal: list[int]) -> list[float]:
    """One-ply worth of each legal action in points: Greedy's value plus 0.1 a tie-break unit."""
    return [value + SHAPE_WEIGHT * shape for value, shape in action_values(game, legal)]


class HeuristicEvaluator:
    """Prior: softmax of :func:`heuristic_scores` at ``temperature`` points; no value."""

    def __init__(self, temperature: float = 2.0) -> None:
        if not temperature > 0:
            raise ValueError(f"the prior temperature must be > 0, got {temperature!r}")
        self.temperature = temperature

    def __call__(self, game: MoonRiverGame, legal: list[int],
                 rng: np.random.Generator) -> tuple[list[float], list[float] | None]:
        """Softmaxed one-ply scores, and no value (the search rolls out)."""
        scores = heuristic_scores(game, legal)
        top = max(scores)
        weights = [math.exp((s - top) / self.temperature) for s in scores]
        total = sum(weights)
        return [w / total for w in weights], None


class PolicyEvaluator:
    """Prior and value from ``policy(game, observation) -> (logits, value in [-1, 1] | None)``."""

    def __init__(self, policy: PolicyValueFn) -> None:
        from moonriver_env.moonriver.backend import Encoder  # games of either implementation

        if not callable(policy):
            raise TypeError(f"policy must be callable (game, observation) -> (logits, value), "
                            f"got {policy!r}")
        self.policy = policy
        self.encoder = Encoder()

    def __call__(self, game: MoonRiverGame, legal: list[int],
                 rng: np.random.Generator) -> tuple[list[float], list[float] | None]:
        """Softmax of the policy's logits over the legal actions, and its value if any."""
        me = game.current_player
        observation = {"observation": self.encoder.encode(game, me),
                       "action_mask": game.legal_mask()}
        logits, value = self.policy(game, observation)
        chosen = np.asarray(logits, dtype=np.float64)[legal]
        if not np.all(np.isfinite(chosen)):
            raise ValueError("the policy gave a non-finite logit for a legal action")
        priors = np.exp(chosen - chosen.max())
        priors /= priors.sum()
        if value is None:
            return priors.tolist(), None
        v = float(value)
        if not -1.0 <= v <= 1.0:
            raise ValueError(f"the policy's value must lie in [-1, 1], got {value!r}")
        others = -v / (game.num_players - 1)  # exact for two players, zero-sum spread for more
        return priors.tolist(), [v if p == me else others for p in range(game.num_players)]


class _Node:
    __slots__ = ("children", "priors", "total", "visits")

    def __init__(self) -> None:
        self.children: dict[int, _Node] = {}
        self.priors: dict[int, float] | None = None  # set when the node is expanded
        self.visits = 0
        self.total = 0.0  # sum of values for the player who chose the action leading here


class PUCTAgent(SeededAgent):
    """IS-PUCT on a budget of ``simulations`` or ``seconds``, capped at ``time_limit`` s."""

    def __init__(self, simulations: int = 200, seconds: float | None = None,
                 evaluator: Evaluator | None = None, exploration: float = 1.0,
                 rollout_depth: int = 20, rollout: str = "random", seed: int | None = None,
                 name: str | None = None, time_limit: float = 0.0) -> None:
        if seconds is None:
            if isinstance(simulations, bool) or not isinstance(simulations, int) \
                    or simulations < 1:
                raise ValueError(f"PUCTAgent needs simulations >= 1 (an int), "
                                 f"got {simulations!r}")
        elif isinstance(seconds, bool) or not isinstance(seconds, (int, float)) \
                or not math.isfinite(seconds) or seconds <= 0:
            raise ValueError(f"PUCTAgent needs a time budget in seconds > 0, got {seconds!r}")
        if not (isinstance(exploration, (int, float)) and exploration >= 0):
            raise ValueError(f"exploration must be a number >= 0, got {exploration!r}")
        if isinstance(rollout_depth, bool) or not isinstance(rollout_depth, int) \
                or rollout_depth < 0:
            raise ValueError(f"rollout_depth must be an int >= 0, got {rollout_depth!r}")
        if rollout not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {', '.join(ROLLOUTS)}, got {rollout!r}")
        self.rollout = rollout
        self.simulations = simulations
        self.seconds = None if seconds is None else float(seconds)
        self.evaluator: Evaluator = evaluator or HeuristicEvaluator()
        self.exploration = float(exploration)
        self.rollout_depth = rollout_depth
        self.meta: dict[str, Any] | None = None  # what a learned prior was trained on (None: none)
        self.time_limit = check_time_limit(time_limit)
        self.last_simulations = 0
        super().__init__(seed, name or (f"puct:{seconds}s" if seconds else f"puct:{simulations}"))

    def act(self, game: MoonRiverGame, observation: Observation) -> int:
        """Search from the current position and return the most visited action."""
        legal: list[int] = game.legal_action_ids().tolist()
        if len(legal) == 1:
            return legal[0]
        root = _Node()
        stop = min((t for t in (self.seconds, self.time_limit) if t), default=None)
        start, done = time.perf_counter(), 0
        while done == 0 or ((self.seconds is not None or done < self.simulations)
                            and (stop is None or time.perf_counter() - start < stop)):
            self._simulate(game, root)
            done += 1
        self.last_simulations = done
        return self._choose(root, legal)

    def _choose(self, root: _Node, legal: list[int]) -> int:
        """Most visited root action; ties go to the better mean value, then the prior."""
        priors = root.priors or {}

        def key(a: int) -> tuple[int, float, float]:
            child = root.children.get(a)
            if child is None or child.visits == 0:
                return 0, -math.inf, priors.get(a, 0.0)
            return child.visits, child.total / child.visits, priors.get(a, 0.0)

        return max(legal, key=key)

    def _simulate(self, root_game: MoonRiverGame, root: _Node) -> None:
        if has_core_extras(root_game):  # the core copies and reshuffles in one call
            game = root_game.determinized_clone(int(self.rng.integers(2**63)))
        else:
            game = root_game.clone()
            game.determinize(self.rng)
        node = root
        path: list[tuple[_Node, int]] = []  # (child, the player who chose it)
        values: list[float] | None = None
        while not game.is_over:
            legal = game.legal_action_ids().tolist()
            if node.priors is None:
                if len(legal) == 1:
                    node.priors = {legal[0]: 1.0}
                else:
                    priors, values = self.evaluator(game, legal, self.rng)
                    node.priors = dict(zip(legal, priors, strict=True))
                    break
            action = legal[0] if len(legal) == 1 else self._select(game, node, legal)
            mover = game.current_player
            game.apply(action)
            child = node.children.get(action)
            if child is None:
                child = node.children[action] = _Node()
            path.append((child, mover))
            node = child
        if values is None:
            values = self._rollout(game)
        root.visits += 1
        for child, mover in path:
            child.visits += 1
            child.total += values[mover]

    def _select(self, game: MoonRiverGame, node: _Node, legal: list[int]) -> int:
        priors = node.priors
        assert priors is not None
        missing = [a for a in legal if a not in priors]
        if missing:  # legal only in some determinizations: prior from this one
            fresh, _ = self.evaluator(game, legal, self.rng)
            for a, p in zip(legal, fresh, strict=True):
                priors.setdefault(a, p)
        children = node.children
        visited_sum, visited_n, seen = 0.0, 0, 0
        for a in legal:
            child = children.get(a)
            if child is not None and child.visits:
                visited_sum += child.total / child.visits
                visited_n += 1
                seen += child.visits
        fpu = visited_sum / visited_n if visited_n else 0.0  # unvisited: the siblings' mean
        c = self.exploration * math.sqrt(seen + 1)
        best, best_score = legal[0], -math.inf
        for a in legal:
            child = children.get(a)
            if child is not None and child.visits:
                score = child.total / child.visits + c * priors[a] / (1 + child.visits)
            else:
                score = fpu + c * priors[a]
            if score > best_score:
                best, best_score = a, score
        return best

    def _rollout(self, game: MoonRiverGame) -> list[float]:
        """Play ``rollout_depth`` random or greedy decisions; the margin values where it ends."""
        for _ in range(self.rollout_depth):
            if game.is_over:
                break
            if self.rollout == "random":
                if has_core_extras(game):  # the compiled core plays the whole rollout
                    game.random_rollout(self.rollout_depth, int(self.rng.integers(2**63)))
                    break
                legal_ids = game.legal_action_ids()
                game.apply(int(legal_ids[self.rng.integers(legal_ids.size)]))
                continue
            legal = game.legal_action_ids().tolist()
            if len(legal) > 1:  # the best heuristic scores
                scores = heuristic_scores(game, legal)
                top = max(scores)
                legal = [a for a, s in zip(legal, scores, strict=True) if s == top]
            game.apply(legal[int(self.rng.integers(len(legal)))] if len(legal) > 1 else legal[0])
        return margin_values(game)


def _budget(text: str, spec: str) -> Budget:
    try:
        return parse_budget(text)
    except ValueError:
        raise ValueError(f"agent spec {spec!r}: the budget must be SIMS (an integer >= 1) or "
                         f"SECONDSs (a number > 0), e.g. puct:200 or puct:0.1s") from None


def puct_from_spec(spec: str, seed: int | None = None) -> PUCTAgent:
    """``puct:BUDGET`` (heuristic prior) or ``pretrained+puct[:VARIANT]:BUDGET`` (policy prior)."""
    kind, _, rest = spec.partition(":")
    parts = rest.split(":") if rest else []
    if kind == "puct" and len(parts) <= 1:
        budget = _budget(parts[0] if parts else "200", spec)
        evaluator: Evaluator | None = None
        meta = None
    elif kind == "pretrained+puct" and 1 <= len(parts) <= 2:
        from moonriver_env.agents.pretrained import DEFAULT_VARIANT, PretrainedAgent

        budget = _budget(parts[-1], spec)
        net = PretrainedAgent(parts[0] if len(parts) == 2 else DEFAULT_VARIANT)

        def policy(game: MoonRiverGame, observation: Observation) -> tuple[np.ndarray, None]:
            # the prior only: the value head is trained for one reward and player count
            return net.log_policy(observation=observation, game=game)[0], None

        evaluator, meta = PolicyEvaluator(policy), net.meta
    else:
        raise ValueError(f"agent spec {spec!r}: expected puct:SIMS, puct:SECONDSs or "
                         f"pretrained+puct[:VARIANT]:BUDGET")
    try:
        agent = PUCTAgent(**budget, evaluator=evaluator, seed=seed, name=spec)
    except ValueError as exc:
        raise ValueError(f"agent spec {spec!r}: {exc}") from None
    agent.meta = meta
    return agent
