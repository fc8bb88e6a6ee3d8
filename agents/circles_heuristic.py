"""CirclesHeuristicAgent: aims at the best expected space under the skill model.

See docs/circles.md.
"""

from __future__ import annotations

from moonriver_env.agents.base import Observation, SeededAgent

from moonriver_env.circles import CirclesGame, Phase, Space, flick_outcomes
from moonriver_env.circles.config import ITEMS, RUBY, SHOVEL, TICKET, WAGON
from moonriver_env.circles.game import BAG_VALUES, ContestStage, coins, highest_coin
from moonriver_env.circles.skill import OUT

TICKET_COST = 1.5  # worth of a train ticket kept for later
RANCH_VALUE = 100.0


class CirclesHeuristicAgent(SeededAgent):
    """Best expected space under the skill model; greedy money rules elsewhere."""

    def __init__(self, seed: int | None = None, name: str = "heuristic") -> None:
        super().__init__(seed, name)

    def act(self, game: CirclesGame, observation: Observation) -> int:
        """The heuristic choice among the legal actions."""
        legal: list[int] = game.legal_action_ids().tolist()
        if not legal:
            raise ValueError("CirclesHeuristicAgent.act: no legal action (the game is over)")
        if len(legal) == 1:
            return legal[0]
        codec, phase = game.codec, game.phase
        p = game.current_player
        if phase == Phase.FLICK:
            return self._best(legal, [self.flick_value(game, p, aid - codec.THROW0 + 2)
                                      for aid in legal])
        if phase == Phase.TICKETS:
            return self._best(legal, [self.space_value(game, p, game.marble + j) - TICKET_COST * j
                                      for j in (aid - codec.TICKETS0 for aid in legal)])
        if phase == Phase.CONTEST_THROW:
            return self._best(legal, [-contest_expected_score(game, aid - codec.THROW0 + 2)
                                      for aid in legal])
        if phase == Phase.STEAL:  # rob the richest
            n = game.num_players
            return self._best(legal, [game.wealth((p + aid - codec.STEAL0 + 1) % n)
                                      for aid in legal])
        choice = {Phase.SHOP: self._shop, Phase.DIG: self._dig, Phase.BANK: self._bank,
                  Phase.BET: self._bet, Phase.STAKE: self._stake}[phase](game, p)
        if choice in legal:
            return choice
        return codec.PASS if codec.PASS in legal else legal[0]

    def _best(self, legal: list[int], values: list[float]) -> int:
        best = max(values)
        ties = [a for a, v in zip(legal, values, strict=True) if v >= best - 1e-9]
        return ties[int(self.rng.integers(len(ties)))]

    # ------------------------------------------------------------ values
    def flick_value(self, game: CirclesGame, p: int, k: int) -> float:
        """Expected value of a turn flick aimed at ``k`` (invalid flicks are worth 0)."""
        ring, start = game.config.ring_size, game.marble
        tickets = min(game.items[p][TICKET], ring - 1)
        total = 0.0
        for travel, prob in flick_outcomes(game.config, k).items():
            if travel == OUT or travel < game.config.min_travel or prob == 0:
                continue
            stop = start + travel
            total += prob * max(self.space_value(game, p, stop + j) - TICKET_COST * j
                                for j in range(tickets + 1))
        return total

    def space_value(self, game: CirclesGame, p: int, index: int) -> float:
        """What landing on ring ``index`` is worth to player ``p`` now (in money)."""
        cfg = game.config
        space = game.spaces[index % cfg.ring_size]
        money, room = game.money[p], cfg.money_cap - game.money[p]
        if space == Space.RANCH:
            return RANCH_VALUE if money // RUBY >= cfg.ranch_rubies else 0.0
        if space == Space.GOLD:
            return min(3, room)
        if space == Space.MONEY_BAG:
            return min(1, room) - 0.5  # everyone else gains too
        if space == Space.MINE:
            cells = [v for v in game.mine_cells if v]
            return min(cells[0], room) if cells and game.items[p][WAGON] else 0.0
        if space == Space.DIG:
            return min(dig_value(game), room) if game.items[p][SHOVEL] else 0.0
        if space == Space.CUP:
            costs = cfg.cup_costs
            if game.cup_filled < len(costs) and money >= costs[game.cup_filled]:
                return -0.5 * costs[game.cup_filled]
            return min(game.cup_value, room)
        if space == Space.BANK:
            a = min(game.deposit[p], cfg.money_cap, (room + 1) // 2)
            return min(2 * a, room) - a if a else 0.2
        if space == Space.THIEF:
            others = sum(game.deposit[q] for q in range(game.num_players) if q != p)
            return (min(1, room) + min(3, room) + 0.7 + 1.0 + min(others, room)) / 6
        if space == Space.SHOP:
            needs = not game.items[p][WAGON] and any(game.mine_cells) and money >= cfg.prices[2]
            return 1.5 if needs else 0.2
        return 0.0  # SALOON: an even bet between equal throwers

    # ------------------------------------------------------------ money rules
    def _shop(self, game: CirclesGame, p: int) -> int:
        """A wagon while the mine pays, then one shovel; nothing else."""
        codec = game.codec
        if not game.items[p][WAGON] and any(game.mine_cells):
            return codec.BUY0 + ITEMS.index("wagon")
        if not game.items[p][SHOVEL] and game.money[p] < game.config.money_cap:
            return codec.BUY0 + ITEMS.index("shovel")
        return codec.PASS

    def _dig(self, game: CirclesGame, p: int) -> int:
        """Dig while a draw is worth more than the shovel it may cost."""
        return game.codec.DIG if dig_value(game) > 0 else game.codec.PASS

    def _bank(self, game: CirclesGame, p: int) -> int:
        """Withdraw what fits under the cap; otherwise bank half of a purse without rubies."""
        cfg, codec = game.config, game.codec
        room = cfg.money_cap - game.money[p]
        a = min(game.deposit[p], cfg.money_cap, (room + 1) // 2)
        if a:
            return codec.WITHDRAW0 + a - 1
        rubies = coins(game.money[p])[0]
        if not game.deposit[p] and rubies == 0 and game.money[p] >= 4:
            return codec.DEPOSIT0 + game.money[p] // 2 - 1
        return codec.PASS

    def _bet(self, game: CirclesGame, p: int) -> int:
        """Bet when the others' stakes are worth more than one's own."""
        own = highest_coin(game.money[p])
        others = [highest_coin(game.money[q]) for q in range(game.num_players)
                  if q != p and game.money[q] > 0]
        if others and sum(others) / len(others) > own:
            return game.codec.BET
        return game.codec.PASS

    def _stake(self, game: CirclesGame, p: int) -> int:
        """Stake unless the even contest is expected to cost more than folding."""
        own = game.stake[p] or highest_coin(game.money[p])
        others = [game.stake[q] or highest_coin(game.money[q]) for q in range(game.num_players)
                  if q != p and game.money[q] > 0]
        contestants = 1 + len(others)
        expected = (sum(others) / max(1, len(others)) - own) / contestants
        if game.stage == ContestStage.STAKING and expected < -game.config.fold_price:
            return game.codec.FOLD
        return game.codec.STAKE


def dig_value(game: CirclesGame) -> float:
    """Expected gain of one dig: the bag's mean coin value, minus a shovel (1) on a stone."""
    total = sum(game.bag)
    coins_value = sum(c * v for c, v in zip(game.bag, BAG_VALUES, strict=True))
    return (coins_value - game.bag[3] * game.config.prices[0]) / total


def contest_expected_score(game: CirclesGame, k: int) -> float:
    """Expected contest score d of a throw aimed at ``k`` from the saloon (lower is better)."""
    ring = game.config.ring_size
    return sum(prob * (ring if travel in (OUT, 0) else (-travel) % ring)
               for travel, prob in flick_outcomes(game.config, k).items())


def heuristic_from_spec(spec: str, seed: int | None = None) -> CirclesHeuristicAgent:
    """``heuristic`` (Circles)."""
    return CirclesHeuristicAgent(seed=seed, name=spec)
