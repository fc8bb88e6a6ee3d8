"""Scripted Circles: Far West rules: every space effect and rule of the specification.

Chance is scripted: ``script(game, travels=..., draws=...)`` replaces the flick outcome and the
generator's integer draws (bag, thief die) with given values, so each scenario is exact. The
scenarios set purses directly (engine fields) and then play through the public ``apply``.
"""

from __future__ import annotations

import pytest

from moonriver_env.circles import (
    Bet,
    Buy,
    CirclesConfig,
    CirclesGame,
    Deposit,
    Dig,
    Fold,
    IllegalActionError,
    Pass,
    Phase,
    Space,
    Stake,
    Steal,
    Throw,
    Tickets,
    Withdraw,
)
from moonriver_env.circles import game as game_module
from moonriver_env.circles.config import FAR_WEST_LAYOUT, SHOVEL, TICKET, WAGON

RING = len(FAR_WEST_LAYOUT)
GOLD_AT, SHOP_AT, BAG_AT, MINE_AT, DIG_AT, CUP_AT = 1, 2, 3, 4, 5, 6
BANK_AT, THIEF_AT, SALOON_AT = 8, 9, 10


class ScriptedRng:
    """Stands in for the game's generator: integer draws come from a list, checked in range."""

    def __init__(self, draws: list[int]) -> None:
        self.draws = list(draws)

    def integers(self, low: int, high: int | None = None) -> int:
        if high is None:
            low, high = 0, low
        value = self.draws.pop(0)
        assert low <= value < high, f"scripted draw {value} outside [{low}, {high})"
        return value


def script(monkeypatch: pytest.MonkeyPatch, game: CirclesGame, travels: list[int] = (),
           draws: list[int] = ()) -> list[int]:
    """Script flick travels (-1: out of the ring) and integer draws; returns the travel list."""
    pending = list(travels)
    monkeypatch.setattr(game_module, "sample_travel", lambda cfg, k, rng: pending.pop(0))
    game.rng = ScriptedRng(list(draws))
    return pending


def table(num_players: int = 3, owner: int = 0, marble: int = 0, money: int | list[int] = 2,
          tickets: int = 0, **config) -> CirclesGame:
    """A game whose turn belongs to ``owner`` (at its flick) with the marble and purses set."""
    game = CirclesGame(CirclesConfig(num_players=num_players, **config), seed=0)
    game.money = list(money) if isinstance(money, list) else [money] * num_players
    for p in range(num_players):
        game.shop[TICKET] += game.items[p][TICKET] - tickets
        game.items[p][TICKET] = tickets
    game.marble = marble
    game._start_turn(owner)
    return game


def legal(game: CirclesGame) -> list[str]:
    """Texts of the legal actions (structured actions of different types compare equal as
    tuples, e.g. Stake() == Fold(), so tests compare texts)."""
    return [a.text() for a in game.legal_actions()]


def land(monkeypatch, game: CirclesGame, space_index: int, draws: list[int] = ()) -> None:
    """The owner flicks and the marble stops on ``space_index`` (no tickets held)."""
    travel = (space_index - game.marble) % RING
    travel = travel if travel >= 2 else travel + RING
    script(monkeypatch, game, [travel], draws)
    game.apply(Throw(min(travel, RING)))


def test_far_west_layout_is_the_specified_ring() -> None:
    spaces = CirclesConfig().spaces
    assert len(spaces) == 20
    assert [s.name for s in spaces] == list(FAR_WEST_LAYOUT)
    assert spaces[GOLD_AT] == Space.GOLD and spaces[SALOON_AT] == Space.SALOON
    assert spaces.count(Space.RANCH) == spaces.count(Space.SALOON) == 1


def test_setup_marble_capital_mine_bag_shop() -> None:
    game = CirclesGame(CirclesConfig(num_players=4), seed=3)
    assert game.space == Space.RANCH
    assert game.money == [2] * 4 and game.deposit == [0] * 4
    assert game.items == [[0, 2, 1]] * 4  # shovels, tickets, wagons
    assert game.shop == [10, 20 - 8, 5 - 4]
    assert game.mine_cells == [1, 2, 3, 4, 5, 6, 9]
    assert game.bag == [16, 8, 1, 2] and game.cup_filled == 0
    assert game.phase == Phase.FLICK and game.current_player == game.owner == game.first_player


def test_first_player_is_drawn_from_the_seed() -> None:
    firsts = {CirclesGame(CirclesConfig(num_players=5), seed=s).first_player for s in range(40)}
    assert firsts == set(range(5))


def test_gold_gains_three_and_turn_passes_clockwise(monkeypatch) -> None:
    game = table(owner=2)
    land(monkeypatch, game, GOLD_AT)
    assert game.money == [2, 2, 5]
    assert game.owner == 0 and game.phase == Phase.FLICK and game.turns == 1


def test_money_bag_pays_everyone(monkeypatch) -> None:
    game = table(num_players=4, money=[0, 5, 18, 2])
    land(monkeypatch, game, BAG_AT)
    assert game.money == [1, 6, 18, 3]  # 18 is the cap


def test_wealth_cap_sends_the_excess_to_the_reserve(monkeypatch) -> None:
    game = table(money=[17, 2, 2])
    reserve = game.reserve_out
    land(monkeypatch, game, GOLD_AT)
    assert game.money[0] == 18
    assert game.reserve_out == reserve + 3 - 2  # paid 3, took back 2 over the cap


def test_cup_fills_cheapest_slot_then_pays_out(monkeypatch) -> None:
    game = table(money=[10, 2, 2])
    paid = []
    for _ in range(3):
        game._start_turn(0)
        game.marble = 0
        land(monkeypatch, game, CUP_AT)
        paid.append(game.money[0])
    assert paid == [9, 7, 4] and game.cup_filled == 3 and game.cup_value == 6
    game._start_turn(0)
    game.marble = 0
    land(monkeypatch, game, CUP_AT)  # full: take the donations
    assert game.money[0] == 10 and game.cup_filled == 0


def test_cup_too_poor_takes_the_donations(monkeypatch) -> None:
    game = table(money=[1, 2, 2])
    game.cup_filled = 1  # next slot costs 2
    land(monkeypatch, game, CUP_AT)
    assert game.money[0] == 2 and game.cup_filled == 0


def test_mine_pays_cells_from_the_entrance_with_a_wagon(monkeypatch) -> None:
    game = table(money=[0, 0, 0])
    gains = []
    for _ in range(8):
        game._start_turn(0)
        game.marble = 0
        before = game.money[0]
        game.money[0] = 0
        land(monkeypatch, game, MINE_AT)
        gains.append(game.money[0])
        game.money[0] = before
    assert gains == [1, 2, 3, 4, 5, 6, 9, 0]  # then empty: nothing
    assert game.items[0][WAGON] == 1  # the wagon is kept


def test_mine_without_wagon_gives_nothing(monkeypatch) -> None:
    game = table()
    game.shop[WAGON] += 1
    game.items[0][WAGON] = 0
    land(monkeypatch, game, MINE_AT)
    assert game.money[0] == 2 and game.mine_cells[0] == 1


def test_dig_needs_a_shovel_and_draws_from_the_bag(monkeypatch) -> None:
    game = table()
    land(monkeypatch, game, DIG_AT)  # no shovel: nothing, next turn
    assert game.owner == 1 and game.phase == Phase.FLICK
    game = table(money=[2, 2, 2])
    game.items[0][SHOVEL], game.shop[SHOVEL] = 1, game.shop[SHOVEL] - 1
    land(monkeypatch, game, DIG_AT, draws=[16 + 8])  # index 24: the ruby
    assert game.phase == Phase.DIG and legal(game) == ["dig", "pass"]
    game.apply(Dig())
    assert game.money[0] == 11 and game.bag == [16, 8, 0, 2]
    assert game.history[-2] == {"type": "chance", "event": "dig", "player": 0, "token": "ruby"}


def test_dig_stone_goes_back_and_a_shovel_goes_to_the_shop(monkeypatch) -> None:
    game = table()
    game.items[0][SHOVEL], game.shop[SHOVEL] = 2, game.shop[SHOVEL] - 2
    shop = game.shop[SHOVEL]
    land(monkeypatch, game, DIG_AT, draws=[26])  # last token: a stone
    game.apply(Dig())
    assert game.bag == [16, 8, 1, 2] and game.money[0] == 2
    assert game.items[0][SHOVEL] == 1 and game.shop[SHOVEL] == shop + 1


def test_an_empty_bag_offers_no_dig(monkeypatch) -> None:
    game = table(bag=(1, 0, 0, 0), start_shovels=1)
    land(monkeypatch, game, DIG_AT, draws=[0])
    game.apply(Dig())
    assert game.bag == [0, 0, 0, 0] and game.money[0] == 3
    game._start_turn(0)
    land(monkeypatch, game, DIG_AT)
    assert game.owner == 1 and game.phase == Phase.FLICK  # nothing left to draw


def test_dig_can_be_declined(monkeypatch) -> None:
    game = table()
    game.items[0][SHOVEL], game.shop[SHOVEL] = 1, game.shop[SHOVEL] - 1
    land(monkeypatch, game, DIG_AT)
    game.apply(Pass())
    assert game.bag == [16, 8, 1, 2] and game.owner == 1


def test_shop_buys_are_repeatable_and_need_money_and_stock(monkeypatch) -> None:
    game = table(money=[7, 2, 2])
    land(monkeypatch, game, SHOP_AT)
    assert legal(game) == ["buy shovel", "buy ticket", "buy wagon", "pass"]
    game.apply(Buy("wagon"))
    game.apply(Buy("ticket"))
    assert game.money[0] == 1 and game.items[0] == [0, 1, 2]
    assert legal(game) == ["buy shovel", "pass"]
    with pytest.raises(IllegalActionError, match="buy ticket"):
        game.apply(Buy("ticket"))
    game.apply(Buy("shovel"))  # money 0: nothing more to buy, the turn ends by itself
    assert game.money[0] == 0 and game.owner == 1


def test_shop_with_empty_stock_offers_nothing(monkeypatch) -> None:
    game = table(money=[1, 2, 2])
    game.shop[SHOVEL] = 0
    land(monkeypatch, game, SHOP_AT)  # 1 money: only a shovel would do, and none is left
    assert game.owner == 1 and game.phase == Phase.FLICK


def test_bank_deposit_then_withdraw_with_interest(monkeypatch) -> None:
    game = table(money=[7, 2, 2])
    land(monkeypatch, game, BANK_AT)
    assert legal(game) == [*(f"deposit {a}" for a in range(1, 8)), "pass"]
    game.apply(Deposit(4))
    assert game.money[0] == 3 and game.deposit[0] == 4 and game.owner == 1  # one operation
    game._start_turn(0)
    land(monkeypatch, game, BANK_AT)
    game.apply(Withdraw(3))
    assert game.deposit[0] == 1 and game.money[0] == 3 + 6


def test_withdrawals_are_limited_to_eighteen_and_capped(monkeypatch) -> None:
    game = table(money=[0, 2, 2])
    game.deposit[0] = 25
    land(monkeypatch, game, BANK_AT)
    assert legal(game) == [*(f"withdraw {a}" for a in range(1, 19)), "pass"]
    game.apply(Withdraw(12))
    assert game.money[0] == 18 and game.deposit[0] == 13  # 24 gained, 6 over the cap


def test_bank_with_nothing_to_move_is_skipped(monkeypatch) -> None:
    game = table(money=[0, 2, 2])
    land(monkeypatch, game, BANK_AT)
    assert game.owner == 1


def test_ranch_with_two_rubies_wins_at_once(monkeypatch) -> None:
    game = table(money=[2, 18, 17], owner=2, marble=18)
    land(monkeypatch, game, 0)
    assert not game.is_over  # 17 is one ruby
    game._start_turn(1)
    game.marble = 18
    land(monkeypatch, game, 0)
    assert game.is_over and game.winners() == [1] and game.end_reason == "ranch"
    assert game.returns() == [-1.0, 1.0, -1.0]
    assert not game.legal_mask().any() and game.current_player == -1


def test_turn_cap_richest_wins_and_ties_share(monkeypatch) -> None:
    game = table(num_players=2, money=[5, 3], max_turns_per_player=1)
    game.deposit[1] = 2
    land(monkeypatch, game, DIG_AT)  # no shovel: nothing
    assert not game.is_over and game.turns_left == 1
    script(monkeypatch, game, [-1])
    game.apply(Throw(20))  # an invalid flick still counts as a turn
    assert game.is_over and game.end_reason == "turn_cap"
    assert game.winners() == [0, 1] and game.returns() == [0.0, 0.0]
    game = table(num_players=3, money=[5, 9, 3], max_turns_per_player=1)
    for _ in range(3):
        script(monkeypatch, game, [-1])
        game.apply(Throw(20))
    assert game.winners() == [1] and game.returns() == [-1.0, 1.0, -1.0]


def test_flick_out_of_the_ring_returns_the_marble(monkeypatch) -> None:
    game = table(marble=7, tickets=2)
    script(monkeypatch, game, [-1])
    game.apply(Throw(19))
    assert game.marble == 7 and game.owner == 1 and game.items[0][TICKET] == 2
    assert game.history[-3]["type"] == "decision"
    assert game.history[-2]["event"] == "flick" and game.history[-2]["travel"] is None


def test_short_flick_is_invalid_and_the_marble_stays_where_it_stopped(monkeypatch) -> None:
    game = table(marble=0, tickets=2)
    script(monkeypatch, game, [1])
    game.apply(Throw(2))
    assert game.marble == 1 and game.money[0] == 2  # on GOLD, but no effect
    assert game.owner == 1 and game.items[0][TICKET] == 2
    script(monkeypatch, game, [0])
    game.apply(Throw(2))
    assert game.marble == 1 and game.owner == 2


def test_flick_travel_wraps_around_the_ring(monkeypatch) -> None:
    game = table(marble=15)
    script(monkeypatch, game, [RING + 6])
    game.apply(Throw(20))
    assert game.marble == 1 and game.money[0] == 5  # GOLD after a full lap


def test_train_tickets_move_the_marble_before_the_effect(monkeypatch) -> None:
    game = table(marble=0, tickets=3)
    shop = game.shop[TICKET]
    script(monkeypatch, game, [4])  # MINE
    game.apply(Throw(4))
    assert game.phase == Phase.TICKETS
    assert legal(game) == [Tickets(j).text() for j in range(4)]
    game.apply(Tickets(3))  # 4 + 3 = GOLD at 7
    assert game.marble == 7 and game.money[0] == 5
    assert game.items[0][TICKET] == 0 and game.shop[TICKET] == shop + 3
    assert game.mine_cells[0] == 1  # the mine was passed, not applied


def test_tickets_are_offered_up_to_ring_size_minus_one(monkeypatch) -> None:
    game = table(num_players=2, tickets=20, stock=(10, 40, 5))
    script(monkeypatch, game, [3])
    game.apply(Throw(3))
    assert legal(game)[-1] == f"tickets {RING - 1}"


def test_no_ticket_decision_without_tickets(monkeypatch) -> None:
    game = table(tickets=0)
    land(monkeypatch, game, GOLD_AT)
    assert game.money[0] == 5


# ---------------------------------------------------------------- thief
@pytest.mark.parametrize(("face", "victim_money", "expected_victims", "thief", "victim"), [
    (1, [2, 1, 0], [Steal(1)], 3, 0),  # a silver: only player 1 has money >= 1
    (2, [2, 1, 4], [Steal(2)], 5, 1),  # a gold: only player 2 has money >= 3
])
def test_thief_steals_a_coin_from_a_chosen_victim(monkeypatch, face, victim_money,
                                                  expected_victims, thief, victim) -> None:
    game = table(money=victim_money)
    land(monkeypatch, game, THIEF_AT, draws=[face])
    assert game.phase == Phase.STEAL and legal(game) == [a.text() for a in expected_victims]
    assert game.die == face
    target = expected_victims[0].opponent
    game.apply(expected_victims[0])
    assert game.money[0] == thief and game.money[target] == victim and game.die == 0


@pytest.mark.parametrize(("face", "item"), [(3, SHOVEL), (4, TICKET)])
def test_thief_steals_an_item(monkeypatch, face, item) -> None:
    game = table(num_players=4)
    for p in range(4):
        game.shop[item] += game.items[p][item]
        game.items[p][item] = 0
    game.items[1][item], game.items[3][item] = 1, 2
    game.shop[item] -= 3
    land(monkeypatch, game, THIEF_AT, draws=[face])
    assert legal(game) == ["steal from +1", "steal from +3"]  # mandatory: no pass
    with pytest.raises(IllegalActionError):
        game.apply(Pass())
    game.apply(Steal(3))
    assert game.items[0][item] == 1 and game.items[3][item] == 1


@pytest.mark.parametrize(("face", "gain"), [(1, 1), (2, 3)])
def test_thief_coin_nobody_has_comes_from_the_reserve(monkeypatch, face, gain) -> None:
    game = table(money=[4, 0, 0] if face == 1 else [4, 2, 1])
    land(monkeypatch, game, THIEF_AT, draws=[face])
    assert game.money[0] == 4 + gain and game.owner == 1


@pytest.mark.parametrize(("face", "item"), [(3, SHOVEL), (4, TICKET)])
def test_thief_item_nobody_has_comes_from_the_shop_or_nothing(monkeypatch, face, item) -> None:
    for stock_left in (2, 0):
        game = table()
        for p in range(3):
            game.items[p][item] = 0
        game.shop[item] = stock_left
        land(monkeypatch, game, THIEF_AT, draws=[face])
        assert game.items[0][item] == (1 if stock_left else 0)
        assert game.shop[item] == max(0, stock_left - 1) and game.owner == 1


def test_thief_robs_the_opponents_deposits(monkeypatch) -> None:
    game = table(money=[3, 2, 2])
    game.deposit = [4, 5, 6]
    land(monkeypatch, game, THIEF_AT, draws=[5])
    assert game.deposit == [4, 0, 0] and game.money[0] == 14


def test_thief_donations_are_sacred_resolves_the_cup(monkeypatch) -> None:
    game = table(money=[3, 2, 2])
    game.cup_filled = 1
    land(monkeypatch, game, THIEF_AT, draws=[6])
    assert game.cup_filled == 2 and game.money[0] == 1


def test_thief_die_faces_are_uniform_from_the_generator() -> None:
    game = CirclesGame(CirclesConfig(num_players=2), seed=0)
    faces = [int(game.rng.integers(1, 7)) for _ in range(6000)]
    assert set(faces) == set(range(1, 7))
    assert all(abs(faces.count(f) - 1000) < 150 for f in range(1, 7))


# ---------------------------------------------------------------- saloon
def test_bet_needs_money_and_can_be_declined(monkeypatch) -> None:
    game = table(money=[0, 2, 2])
    land(monkeypatch, game, SALOON_AT)
    assert game.owner == 1  # broke: no bet decision
    game = table(money=[1, 2, 2])
    land(monkeypatch, game, SALOON_AT)
    assert legal(game) == ["bet", "pass"]
    game.apply(Pass())
    assert game.owner == 1 and game.money == [1, 2, 2]


def test_saloon_bet_stakes_folds_rethrows_and_payment(monkeypatch) -> None:
    # Player 1 bets with 10 (stakes a ruby); 2 is broke and sits out; 3 folds (pays 3);
    # 4 can only stake (money 2: a silver); 0 stakes a gold.
    game = table(num_players=5, owner=1, marble=SALOON_AT - 2, money=[4, 10, 0, 5, 2])
    land(monkeypatch, game, SALOON_AT)
    game.apply(Bet())
    assert game.phase == Phase.STAKE and game.current_player == 3  # 2 sat out
    assert legal(game) == ["stake", "fold"]
    game.apply(Fold())
    assert game.money[3] == 2 and game.current_player == 4
    assert legal(game) == ["stake"]  # FOLD needs 3
    game.apply(Stake())
    assert game.current_player == 0
    game.apply(Stake())
    assert game.stake == [3, 9, 0, 0, 1]
    # Throw order: clockwise from the bettor's left, bettor last: 4, 0, 1.
    # Scores d = (-t) mod 20: t 19 -> 1, t 20 -> 0, out -> 20.
    script(monkeypatch, game, [19, 19, -1, -1, 20, 20, 18])
    order = []
    for _ in range(3):
        assert game.phase == Phase.CONTEST_THROW
        order.append(game.current_player)
        game.apply(Throw(20))
    assert order == [4, 0, 1] and game.score == [1, 20, -1, -1, 1]
    # 4 and 0 tie on the lowest score and re-throw (same order): 4 out (20), 0 lap (0).
    assert game.group == [4, 0]
    game.apply(Throw(20))
    game.apply(Throw(20))
    assert game.contest_winner == 0
    # Payer: highest latest score among the others: 4 (20) and 1 (20) tie and re-throw.
    assert game.group == [4, 1] and game.current_player == 4
    game.apply(Throw(20))  # 4: t 20 -> 0
    game.apply(Throw(20))  # 1: t 18 -> 2, so 1 pays its ruby stake
    assert game.money == [4 + 9, 10 - 9, 0, 2, 2]
    assert game.marble == SALOON_AT and game.owner == 2 and game.phase == Phase.FLICK


def test_bet_with_no_taker_ends_quietly(monkeypatch) -> None:
    game = table(money=[3, 0, 5])
    land(monkeypatch, game, SALOON_AT)
    game.apply(Bet())
    game.apply(Fold())  # player 2 folds, player 1 is broke: one contestant
    assert game.money == [3, 0, 2] and game.owner == 1 and game.phase == Phase.FLICK


def test_contest_score_out_and_zero_travel_are_worst(monkeypatch) -> None:
    game = table(num_players=2, money=[3, 3])
    land(monkeypatch, game, SALOON_AT)
    game.apply(Bet())
    game.apply(Stake())
    script(monkeypatch, game, [0, 1])
    game.apply(Throw(2))  # player 1 (left of the bettor): t 0 -> 20
    game.apply(Throw(2))  # player 0: t 1 -> one too far around: 19
    assert game.money == [6, 0]


# ---------------------------------------------------------------- options
def test_auto_forced_plays_single_choices(monkeypatch) -> None:
    game = table(money=[3, 0, 2], auto_forced=True)
    land(monkeypatch, game, SALOON_AT)
    game.apply(Bet())  # player 2 can only stake: played automatically
    assert game.phase == Phase.CONTEST_THROW and game.stake[2] == 1
    assert game.history[-1]["auto"] is True


def test_config_constants_override_the_rules(monkeypatch) -> None:
    layout = ("RANCH", "GOLD", "SHOP", "MONEY_BAG", "MINE", "DIG", "CUP", "BANK", "THIEF",
              "SALOON")
    game = CirclesGame(CirclesConfig(num_players=2, layout=layout, start_silver=0,
                                     start_wagons=0, money_cap=27, mine=(5,)), seed=1)
    assert game.num_actions == 9 + 10 + 3 + 1 + 27 + 27 + 1 + 2 + 4 + 1
    assert game.money == [0, 0] and game.items[0][WAGON] == 0
    assert legal(game)[-1] == "throw 10"
