"""The whole game of Circles: Far West: phases, legal actions, apply, chance, clone.

See docs/circles.md (Decisions)."""

from __future__ import annotations

import bisect
from enum import IntEnum
from itertools import accumulate
from typing import Any

import numpy as np

# One exception class for both games: code that catches Moon River's catches this one too.
from moonriver_env.common.errors import IllegalActionError
from moonriver_env.common.game_base import RecordedGame
from moonriver_env.common.validate import game_seed
from moonriver_env.common.view import choice_mask

from .actions import Action, ActionCodec, actions_for
from .config import (
    DIE_FACES,
    GOLD_COIN,
    ITEMS,
    RUBY,
    SHOVEL,
    SILVER,
    TICKET,
    WAGON,
    CirclesConfig,
    Space,
)
from .skill import OUT, sample_travel

BAG_TOKENS = ("silver", "gold", "ruby", "stone")
BAG_VALUES = (SILVER, GOLD_COIN, RUBY, 0)
STONE = 3
GOLD_GAIN = GOLD_COIN  # a GOLD space pays one gold
MONEY_BAG_GAIN = SILVER
# Thief die faces 1-4: what is stolen (coin value, or a shop item index).
THIEF_LOOT = {1: ("coin", SILVER), 2: ("coin", GOLD_COIN), 3: ("item", SHOVEL),
              4: ("item", TICKET)}
ROB_BANK, DONATIONS = 5, 6


class Phase(IntEnum):
    """What kind of decision the player to act faces."""

    FLICK = 0  # the turn's flick: THROW k
    TICKETS = 1  # after a valid flick: TICKETS j
    SHOP = 2  # buy items or pass
    DIG = 3  # dig with a shovel or pass
    BANK = 4  # one deposit or withdrawal, or pass
    BET = 5  # open a saloon bet or pass
    STAKE = 6  # an opponent stakes or folds
    CONTEST_THROW = 7  # a contestant throws from the saloon
    STEAL = 8  # the thief chooses a victim
    GAME_OVER = 9


class ContestStage(IntEnum):
    """Where a saloon bet stands."""

    NONE = 0
    STAKING = 1
    WINNER = 2  # contestants (or tied ones) throw for the lowest score
    PAYER = 3  # tied losers re-throw; the highest score pays


class Entry(IntEnum):
    """A player's part in the current saloon bet."""

    NONE = 0
    STAKED = 1  # a contestant (the bettor included)
    FOLDED = 2
    OUT = 3  # broke: sat out at no cost
    UNDECIDED = 4  # still to stake or fold


def highest_coin(money: int) -> int:
    """Value of the highest coin of a canonical purse (0 when broke)."""
    return RUBY if money >= RUBY else GOLD_COIN if money >= GOLD_COIN else min(money, SILVER)


def coins(money: int) -> tuple[int, int, int]:
    """Canonical (rubies, gold, silver) of an amount."""
    return money // RUBY, money % RUBY // GOLD_COIN, money % GOLD_COIN


class CirclesGame(RecordedGame):
    """A game of Circles: Far West; see docs/circles.md."""

    RECORD_MODULE = "moonriver_env.circles.record"  # docs/circles.md
    TEXT_MODULE = "moonriver_env.circles.text"

    def __init__(self, config: CirclesConfig | None = None, seed: int | None = None) -> None:
        self.config = config if config is not None else CirclesConfig()
        if not isinstance(self.config, CirclesConfig):
            raise TypeError(f"config must be a CirclesConfig, got {self.config!r}")
        self.seed = game_seed(seed)
        self.rng = np.random.default_rng(self.seed)
        self.codec: ActionCodec = actions_for(self.config.ring_size, self.config.money_cap)
        self.spaces = self.config.spaces
        self._history: list[dict[str, Any]] = []
        self._setup()

    # ------------------------------------------------------------------ setup
    def _setup(self) -> None:
        cfg = self.config
        n = cfg.num_players
        self.money = [cfg.start_silver] * n
        self.deposit = [0] * n
        self.items = [list(cfg.start_items) for _ in range(n)]  # per ITEMS
        self.shop = [total - held * n for total, held in zip(cfg.stock, cfg.start_items,
                                                             strict=True)]
        self.mine_next = 0  # cells taken from the entrance so far
        self.cup_filled = 0
        self.bag = list(cfg.bag)
        self.marble = self.spaces.index(Space.RANCH)
        self.saloon = self.spaces.index(Space.SALOON)
        self.reserve_out = 0  # net value the (unlimited) reserve has paid out
        self.turns = 0
        self.die = 0  # pending thief die face (0: none)
        self.winners_: list[int] = []
        self.end_reason = ""
        self._clear_contest()
        self.first_player = int(self.rng.integers(n))
        self._chance("first_player", player=self.first_player)
        self._mask: np.ndarray | None = None
        self._start_turn(self.first_player)
        self._settle()

    def _clear_contest(self) -> None:
        n = self.config.num_players
        self.stage = ContestStage.NONE
        self.bettor = -1
        self.entry = [Entry.NONE] * n
        self.stake = [0] * n
        self.score = [-1] * n  # latest contest score d (-1: none yet)
        self.group: list[int] = []  # who throws in this round of the contest (ties re-throw)
        self.queue: list[int] = []  # still to decide in this round
        self.contest_winner = -1

    def _effect(self, text: str) -> None:
        self._history.append({"type": "effect", "player": self.owner, "text": text})

    # ------------------------------------------------------------- public API
    @property
    def num_players(self) -> int:
        """Number of players."""
        return self.config.num_players

    @property
    def num_actions(self) -> int:
        """Size of the action enumeration."""
        return self.codec.num_actions

    @property
    def current_player(self) -> int:
        """The player to decide now (-1 once the game is over)."""
        return -1 if self.phase == Phase.GAME_OVER else self.actor

    @property
    def is_over(self) -> bool:
        """True once the ranch is bought or the turn cap is reached."""
        return self.phase == Phase.GAME_OVER

    @property
    def space(self) -> Space:
        """The kind of space the marble lies on."""
        return self.spaces[self.marble]

    @property
    def turns_left(self) -> int:
        """Turns before the turn cap ends the game."""
        return self.config.max_turns - self.turns

    @property
    def cup_value(self) -> int:
        """Value of the donations in the cup."""
        return sum(self.config.cup_costs[:self.cup_filled])

    @property
    def mine_cells(self) -> list[int]:
        """Values of the mine's cells from the entrance (0: taken)."""
        return [0 if i < self.mine_next else v for i, v in enumerate(self.config.mine)]

    def wealth(self, player: int) -> int:
        """Money plus deposit: what the turn cap ranks."""
        return self.money[player] + self.deposit[player]

    def winners(self) -> list[int]:
        """Winning players: the ranch buyer, or the richest at the turn cap (ties share)."""
        if self.is_over:
            return list(self.winners_)
        best = max(self.wealth(p) for p in range(self.num_players))
        return [p for p in range(self.num_players) if self.wealth(p) == best]

    def scores(self) -> list[int]:
        """Final wealth (money plus deposit) per player; the game must be over."""
        if not self.is_over:
            raise RuntimeError("the game is not over; use wealth(player) for wealth so far")
        return [self.wealth(p) for p in range(self.num_players)]

    def returns(self) -> list[float]:
        """Final rewards: +1 a sole winner, 0 to shared winners, -1 the others; 0 before the end."""
        if not self.is_over:
            return [0.0] * self.num_players
        won = 1.0 if len(self.winners_) == 1 else 0.0
        return [won if p in self.winners_ else -1.0 for p in range(self.num_players)]

    def legal_mask(self) -> np.ndarray:
        """Read-only int8 mask over the action enumeration (zeros when over; may be shared)."""
        if self._mask is None:
            self._mask = choice_mask(self.codec.num_actions, tuple(self._choices))
        return self._mask

    def legal_action_ids(self) -> np.ndarray:
        """Ids of the legal actions, ascending (an int array, as every engine gives them)."""
        return np.flatnonzero(self.legal_mask())

    def legal_actions(self) -> list[Action]:
        """Structured legal actions for the player to act."""
        return [self.codec.actions[i] for i in self._choices]

    def apply(self, action: Action | int) -> None:
        """Play one decision; raises IllegalActionError (state unchanged) if it is not legal."""
        aid = self._action_id(action)
        self._play(aid)
        self._settle()

    def _play(self, aid: int, auto: bool = False) -> None:
        """Record the decision, then play it (its chance events and effects follow it)."""
        if aid not in self._choices:
            raise IllegalActionError(self.codec.to_text(aid), self._why_illegal(aid),
                                     [a.text() for a in self.legal_actions()])
        event: dict[str, Any] = {"type": "decision", "player": self.actor, "action": aid}
        if auto:
            event["auto"] = True
        self._history.append(event)
        self._mask = None
        self._dispatch(aid)

    def _settle(self) -> None:
        """With auto_forced, play every decision that has a single legal action."""
        while self.config.auto_forced and len(self._choices) == 1:
            self._play(self._choices[0], auto=True)

    def _action_id(self, action: Action | int) -> int:
        codec = self.codec
        if isinstance(action, tuple):
            try:
                return codec.encode(action)
            except ValueError as exc:  # says which field is wrong and what it allows
                raise IllegalActionError(f"{action!r:.60}", str(exc)) from None
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            if 0 <= action < codec.num_actions:
                return int(action)
            raise IllegalActionError(action, f"action ids run from 0 to {codec.num_actions - 1}")
        raise IllegalActionError(repr(action), "an action is an int id or a structured action "
                                 "such as Throw(5) or Pass()")

    def _why_illegal(self, aid: int) -> str:
        if self.phase == Phase.GAME_OVER:
            return "the game is over"
        segment = self.codec.segment_of(aid)
        return (f"the {self.phase.name} decision of player {self.actor} does not allow it "
                f"({segment} action)")

    # ------------------------------------------------------------- money
    def _gain(self, player: int, amount: int) -> None:
        """Add value to a purse; what exceeds the cap goes to the reserve."""
        total = self.money[player] + amount
        cap = self.config.money_cap
        if total > cap:
            self.reserve_out -= total - cap
            total = cap
        self.money[player] = total

    def _from_reserve(self, player: int, amount: int) -> None:
        self.reserve_out += amount
        self._gain(player, amount)

    def _pay(self, player: int, amount: int) -> None:
        """Pay the reserve (it gives change)."""
        self.money[player] -= amount
        self.reserve_out -= amount

    # ------------------------------------------------------------- flow
    def _enter(self, phase: Phase, actor: int, choices: list[int]) -> None:
        self.phase = phase
        self.actor = actor
        self._choices = choices
        self._mask = None

    def _start_turn(self, player: int) -> None:
        self.owner = player
        codec = self.codec
        self._enter(Phase.FLICK, player, list(range(codec.THROW0,
                                                    codec.THROW0 + self.config.ring_size - 1)))

    def _end_turn(self) -> None:
        self.turns += 1
        if self.turns >= self.config.max_turns:
            self._finish(self.winners(), "turn_cap")
            return
        self._start_turn((self.owner + 1) % self.num_players)

    def _finish(self, winners: list[int], reason: str) -> None:
        self.winners_ = winners
        self.end_reason = reason
        self.die = 0
        self._enter(Phase.GAME_OVER, -1, [])

    def _dispatch(self, aid: int) -> None:
        codec, ph = self.codec, self.phase
        if ph == Phase.FLICK:
            self._flick(aid - codec.THROW0 + 2)
        elif ph == Phase.TICKETS:
            j = aid - codec.TICKETS0
            self.marble = (self.marble + j) % self.config.ring_size
            self.items[self.owner][TICKET] -= j
            self.shop[TICKET] += j
            if j:
                self._effect(f"spends {j} ticket(s): marble to {self.marble} ({self.space.name})")
            self._space_effect()
        elif ph == Phase.SHOP:
            if aid == codec.PASS:
                self._end_turn()
                return
            item = aid - codec.BUY0
            self._pay(self.owner, self.config.prices[item])
            self.shop[item] -= 1
            self.items[self.owner][item] += 1
            self._effect(f"buys a {ITEMS[item]}")
            self._offer_shop()
        elif ph == Phase.DIG:
            if aid == codec.DIG:
                self._dig()
            self._end_turn()
        elif ph == Phase.BANK:
            p = self.owner
            if codec.DEPOSIT0 <= aid < codec.WITHDRAW0:
                a = aid - codec.DEPOSIT0 + 1
                self.money[p] -= a
                self.deposit[p] += a
                self._effect(f"deposits {a}")
            elif codec.WITHDRAW0 <= aid < codec.BET:
                a = aid - codec.WITHDRAW0 + 1
                self.deposit[p] -= a
                self.reserve_out += a  # the interest
                self._gain(p, 2 * a)
                self._effect(f"withdraws {a} with {a} interest")
            self._end_turn()
        elif ph == Phase.BET:
            if aid == codec.PASS:
                self._end_turn()
            else:
                self._open_bet()
        elif ph == Phase.STAKE:
            p = self.queue.pop(0)
            if aid == codec.STAKE:
                self.entry[p] = Entry.STAKED
                self.stake[p] = highest_coin(self.money[p])
            else:
                self.entry[p] = Entry.FOLDED
                self._pay(p, self.config.fold_price)
            self._next_stake()
        elif ph == Phase.CONTEST_THROW:
            self._contest_throw(aid - codec.THROW0 + 2)
        elif ph == Phase.STEAL:
            self._steal((self.owner + aid - codec.STEAL0 + 1) % self.num_players)

    def _flick(self, k: int) -> None:
        cfg, start = self.config, self.marble
        travel = sample_travel(cfg, k, self.rng)
        if travel == OUT:
            self._chance("flick", player=self.owner, aim=k, travel=None, stop=start)
            self._effect("the marble left the ring: invalid flick")
            self._end_turn()
            return
        self.marble = (start + travel) % cfg.ring_size
        self._chance("flick", player=self.owner, aim=k, travel=travel, stop=self.marble)
        if travel < cfg.min_travel:
            self._effect(f"the marble travelled {travel} (< {cfg.min_travel}): invalid flick")
            self._end_turn()
            return
        held = self.items[self.owner][TICKET]
        if held:
            j_max = min(held, cfg.ring_size - 1)
            t0 = self.codec.TICKETS0
            self._enter(Phase.TICKETS, self.owner, list(range(t0, t0 + j_max + 1)))
            return
        self._space_effect()

    def _space_effect(self) -> None:
        """Apply the marble's space for the turn's owner."""
        p, cfg, codec = self.owner, self.config, self.codec
        space = self.space
        if space == Space.GOLD:
            self._from_reserve(p, GOLD_GAIN)
            self._effect(f"GOLD: gains {GOLD_GAIN}")
        elif space == Space.SHOP:
            self._offer_shop()
            return
        elif space == Space.CUP:
            self._cup(p)
        elif space == Space.MONEY_BAG:
            for q in range(self.num_players):
                self._from_reserve(q, MONEY_BAG_GAIN)
            self._effect(f"MONEY_BAG: everyone gains {MONEY_BAG_GAIN}")
        elif space == Space.MINE:
            if self.items[p][WAGON] and self.mine_next < len(cfg.mine):
                value = cfg.mine[self.mine_next]
                self.mine_next += 1
                self._gain(p, value)
                self._effect(f"MINE: gains {value}")
        elif space == Space.DIG:
            if self.items[p][SHOVEL] and sum(self.bag):  # a bag without stones may run dry
                self._enter(Phase.DIG, p, [codec.DIG, codec.PASS])
                return
        elif space == Space.BANK:
            choices = self._bank_choices(p)
            if choices:
                self._enter(Phase.BANK, p, [*choices, codec.PASS])
                return
        elif space == Space.SALOON:
            if self.money[p] >= 1:
                self._enter(Phase.BET, p, [codec.BET, codec.PASS])
                return
        elif space == Space.THIEF:
            self.die = int(self.rng.integers(1, DIE_FACES + 1))
            self._chance("thief_die", player=p, face=self.die)
            if self._thief():
                return
        elif space == Space.RANCH and self.money[p] // RUBY >= cfg.ranch_rubies:
            self._effect("RANCH: buys the ranch and wins")
            self.turns += 1
            self._finish([p], "ranch")
            return
        self._end_turn()

    def _offer_shop(self) -> None:
        p, cfg = self.owner, self.config
        buys = [self.codec.BUY0 + i for i in range(len(ITEMS))
                if self.shop[i] >= 1 and self.money[p] >= cfg.prices[i]]
        if buys:
            self._enter(Phase.SHOP, p, [*buys, self.codec.PASS])
        else:
            self._end_turn()

    def _bank_choices(self, p: int) -> list[int]:
        codec = self.codec
        deposits = range(codec.DEPOSIT0, codec.DEPOSIT0 + self.money[p])
        withdrawable = min(self.deposit[p], self.config.money_cap)
        return [*deposits, *range(codec.WITHDRAW0, codec.WITHDRAW0 + withdrawable)]

    def _cup(self, p: int) -> None:
        costs = self.config.cup_costs
        f = self.cup_filled
        if f < len(costs) and self.money[p] >= costs[f]:
            self.money[p] -= costs[f]
            self.cup_filled += 1
            self._effect(f"CUP: donates {costs[f]}")
        else:
            value = self.cup_value
            self.cup_filled = 0
            self._gain(p, value)
            self._effect(f"CUP: takes the donations ({value})")

    def _dig(self) -> None:
        p = self.owner
        draw = int(self.rng.integers(sum(self.bag)))
        token = bisect.bisect_right(list(accumulate(self.bag)), draw)  # the token drawn's index
        self._chance("dig", player=p, token=BAG_TOKENS[token])
        if token == STONE:  # back into the bag; a shovel goes to the shop
            self.items[p][SHOVEL] -= 1
            self.shop[SHOVEL] += 1
            self._effect("DIG: a stone, loses a shovel")
        else:
            self.bag[token] -= 1
            self._gain(p, BAG_VALUES[token])
            self._effect(f"DIG: a {BAG_TOKENS[token]} ({BAG_VALUES[token]})")

    # ------------------------------------------------------------- thief
    def _thief(self) -> bool:
        """Resolve the die face; True when the owner must choose a victim."""
        p, face = self.owner, self.die
        if face in THIEF_LOOT:
            kind, what = THIEF_LOOT[face]
            victims = [o for o in range(1, self.num_players)
                       if self._has(((p + o) % self.num_players), kind, what)]
            if victims:
                s0 = self.codec.STEAL0
                self._enter(Phase.STEAL, p, [s0 + o - 1 for o in victims])
                return True
            if kind == "coin":
                self._from_reserve(p, what)
                self._effect(f"THIEF {face}: nobody has it, {what} from the reserve")
            elif self.shop[what]:
                self.shop[what] -= 1
                self.items[p][what] += 1
                self._effect(f"THIEF {face}: nobody has it, a {ITEMS[what]} from the shop")
            else:
                self._effect(f"THIEF {face}: nobody has it and the shop is empty")
        elif face == ROB_BANK:
            loot = 0
            for q in range(self.num_players):
                if q != p:
                    loot += self.deposit[q]
                    self.deposit[q] = 0
            self._gain(p, loot)
            self._effect(f"THIEF {face}: robs the bank of {loot}")
        else:
            self._effect(f"THIEF {face}: donations are sacred")
            self._cup(p)
        self.die = 0
        return False

    def _has(self, player: int, kind: str, what: int) -> bool:
        if kind == "coin":
            return self.money[player] >= what
        return self.items[player][what] >= 1

    def _steal(self, victim: int) -> None:
        p = self.owner
        kind, what = THIEF_LOOT[self.die]
        if kind == "coin":
            self.money[victim] -= what
            self._gain(p, what)
            self._effect(f"THIEF {self.die}: takes {what} from player {victim}")
        else:
            self.items[victim][what] -= 1
            self.items[p][what] += 1
            self._effect(f"THIEF {self.die}: takes a {ITEMS[what]} from player {victim}")
        self.die = 0
        self._end_turn()

    # ------------------------------------------------------------- saloon
    def _clockwise_from_left(self, player: int) -> list[int]:
        n = self.num_players
        return [(player + i) % n for i in range(1, n)]

    def _open_bet(self) -> None:
        p = self.owner
        self.stage = ContestStage.STAKING
        self.bettor = p
        self.entry[p] = Entry.STAKED
        self.stake[p] = highest_coin(self.money[p])
        self.queue = []
        for q in self._clockwise_from_left(p):
            if self.money[q] == 0:
                self.entry[q] = Entry.OUT
            else:
                self.entry[q] = Entry.UNDECIDED
                self.queue.append(q)
        self._effect(f"SALOON: bets (stake {self.stake[p]})")
        self._next_stake()

    def _next_stake(self) -> None:
        if self.queue:
            q = self.queue[0]
            codec = self.codec
            fold = [codec.FOLD] if self.money[q] >= self.config.fold_price else []
            self._enter(Phase.STAKE, q, [codec.STAKE, *fold])
            return
        order = [*self._clockwise_from_left(self.bettor), self.bettor]
        contestants = [q for q in order if self.entry[q] == Entry.STAKED]
        if len(contestants) < 2:
            self._effect("SALOON: nobody takes the bet")
            self._close_bet()
            return
        self.stage = ContestStage.WINNER
        self._throw_round(contestants)

    def _throw_round(self, group: list[int]) -> None:
        self.group = list(group)
        self.queue = list(group)
        self._next_throw()

    def _next_throw(self) -> None:
        if self.queue:
            codec = self.codec
            self._enter(Phase.CONTEST_THROW, self.queue[0],
                        list(range(codec.THROW0, codec.THROW0 + self.config.ring_size - 1)))
            return
        if self.stage == ContestStage.WINNER:
            best = min(self.score[q] for q in self.group)
            tied = [q for q in self.group if self.score[q] == best]
            if len(tied) > 1:
                self._throw_round(tied)
                return
            self.contest_winner = tied[0]
            self.stage = ContestStage.PAYER
            order = [*self._clockwise_from_left(self.bettor), self.bettor]
            group = [q for q in order if self.entry[q] == Entry.STAKED and q != self.contest_winner]
        else:
            group = self.group
        worst = max(self.score[q] for q in group)
        tied = [q for q in group if self.score[q] == worst]
        if len(tied) > 1:
            self._throw_round(tied)
            return
        payer, winner = tied[0], self.contest_winner
        amount = self.stake[payer]
        self.money[payer] -= amount
        self._gain(winner, amount)
        self._effect(f"SALOON: player {payer} pays {amount} to player {winner}")
        self._close_bet()

    def _contest_throw(self, k: int) -> None:
        q = self.queue.pop(0)
        ring = self.config.ring_size
        travel = sample_travel(self.config, k, self.rng)
        d = ring if travel in (OUT, 0) else (-travel) % ring
        self.score[q] = d
        self._chance("contest_throw", player=q, aim=k,
                     travel=None if travel == OUT else travel, score=d)
        self._next_throw()

    def _close_bet(self) -> None:
        self.marble = self.saloon
        self._clear_contest()
        self._end_turn()

    # --------------------------------------------------------- search support
    def clone(self, seed: int | None = None) -> CirclesGame:
        """An independent copy; it copies the generator unless ``seed`` gives it a new one."""
        g = CirclesGame.__new__(CirclesGame)
        d = self.__dict__
        g.__dict__.update(d)
        for name in ("money", "deposit", "shop", "bag", "entry", "stake", "score", "group",
                     "queue", "winners_", "_choices", "_history"):
            setattr(g, name, list(d[name]))
        g.items = [list(i) for i in self.items]
        if seed is None:
            g.rng = np.random.Generator(type(self.rng.bit_generator)())
            g.rng.bit_generator.state = self.rng.bit_generator.state
        else:
            g.rng = np.random.default_rng(seed)
        return g

    def determinize(self, rng: np.random.Generator) -> None:
        """Redraw what is hidden in place: only future chance is, so the generator is reseeded."""
        self.rng = np.random.default_rng(int(rng.integers(2**63)))

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for name in ("codec", "spaces", "_mask"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.codec = actions_for(self.config.ring_size, self.config.money_cap)
        self.spaces = self.config.spaces
        self._mask = None

    @property
    def history(self) -> list[dict[str, Any]]:
        """Decisions, chance events and effects so far, in order (a copy)."""
        return list(self._history)
