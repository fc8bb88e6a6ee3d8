"""GreedyAgent: one-step lookahead on the running score, with draft-aware selection."""

from __future__ import annotations

import numpy as np
from moonriver_env.agents.base import Observation, SeededAgent

from moonriver_env.moonriver.contract import MoonRiverGame, has_core_extras
from moonriver_env.moonriver.rules import Phase
from moonriver_env.moonriver.rules import actions as A
from moonriver_env.moonriver.rules.grid import COLS, NEIGHBORS


def margin(game: MoonRiverGame, player: int) -> int:
    """Running score of ``player`` minus the best opponent's."""
    totals = [s.total for s in game.running_scores()]
    return totals[player] - max(totals[:player] + totals[player + 1:])


def plot_value(game: MoonRiverGame, plot: int) -> float:
    """A static worth of a plot: symbols, cows and its number (the game's own ranking)."""
    kind = game.data.kinds[int(game.data.plot_kind[plot])]
    return (kind.nugget + kind.beaver + kind.corn + 1.5 * kind.cows + 1.0 * kind.circle
            - 0.5 * kind.skull + kind.number / 25.0)


class GreedyAgent(SeededAgent):
    """Picks the decision that most improves its score margin now (ties at random)."""

    def __init__(self, seed: int | None = None, name: str = "greedy") -> None:
        super().__init__(seed, name)

    def act(self, game: MoonRiverGame, observation: Observation) -> int:
        """The greedy choice among the legal actions."""
        if has_core_extras(game):  # the compiled core ranks every action in one call
            count, ties = game.greedy_ties()
        else:
            ties = game.legal_action_ids().tolist()
            count = len(ties)
            if count != 1:
                values = action_values(game, ties)
                best = max(values)
                ties = [a for a, v in zip(ties, values, strict=True) if v == best]
        return ties[0] if count == 1 else ties[int(self.rng.integers(len(ties)))]

    @staticmethod
    def _shape_bonus(game: MoonRiverGame, aid: int, held: list[int]) -> int:
        """Build tie-break: same-terrain neighbours (``held``: terrain by slot); a pass is -1."""
        action = A.ACTIONS[aid]
        if isinstance(action, A.Pass):
            return -1
        if not isinstance(action, A.Build):
            return 0
        ranch = game.ranches[game.current_player]
        touching = 0
        for (r, c), slot in zip(action.cells, (action.slot_a, action.slot_b), strict=True):
            touching += sum(1 for n in NEIGHBORS[r * COLS + c] if ranch.terrain[n] == held[slot])
        return touching

    @staticmethod
    def _select_value(game: MoonRiverGame, aid: int) -> float:
        """Worth of the plot taken minus half the best plot left for the next chooser."""
        action = A.ACTIONS[aid]
        assert isinstance(action, A.Select)  # a draft phase's actions
        pos = action.position
        column = game.active if game.phase == Phase.SETUP else game.pending
        owner = game.active_owner if game.phase == Phase.SETUP else game.pending_owner
        assert column is not None
        left = [plot_value(game, column[p]) for p in range(4)
                if p != pos and owner[p] < 0 and column[p] >= 0]
        return plot_value(game, column[pos]) - 0.5 * max(left, default=0.0)

    @staticmethod
    def _swap_value(game: MoonRiverGame, aid: int) -> float:
        action = A.ACTIONS[aid]
        if isinstance(action, A.Pass):
            return 0.0
        assert isinstance(action, A.Desperado)  # the Desperado phase's actions
        me = game.current_player
        theirs = game.ranches[(me + action.opponent) % game.num_players].hand[action.their_slot]
        mine = game.ranches[me].hand[action.my_slot]
        return plot_value(game, theirs) - plot_value(game, mine)


def action_values(game: MoonRiverGame, legal: list[int]) -> list[tuple[float, int]]:
    """Greedy's ``(value, tie-break)`` of each legal action, compared in that order."""
    if has_core_extras(game):  # the compiled core: the same numbers, in one call
        ranked, shape = game.greedy_values(np.asarray(legal, dtype=np.int64))
        return list(zip(ranked.tolist(), shape.tolist(), strict=True))
    phase = game.phase
    if phase in (Phase.SETUP, Phase.SELECT):
        return [(GreedyAgent._select_value(game, a), 0) for a in legal]
    player = game.current_player
    hand = game.ranches[player].hand
    if phase == Phase.DISCARD:
        discards = [A.ACTIONS[a] for a in legal]
        assert all(isinstance(d, A.Discard) for d in discards)
        return [(-(plot_value(game, hand[d.slot_a]) + plot_value(game, hand[d.slot_b])), 0)
                for d in discards if isinstance(d, A.Discard)]
    if phase == Phase.DESPERADO:
        return [(GreedyAgent._swap_value(game, a), 0) for a in legal]
    held = [int(game.data.terrain[game.data.plot_kind[p]]) for p in hand]
    base = margin(game, player)
    values: list[tuple[float, int]] = []
    for a in legal:
        child = game.clone()
        child.apply(a)
        values.append((margin(child, player) - base, GreedyAgent._shape_bonus(game, a, held)))
    return values


def greedy_from_spec(spec: str, seed: int | None = None) -> GreedyAgent:
    """``greedy``."""
    return GreedyAgent(seed=seed, name=spec)
