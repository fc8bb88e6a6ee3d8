"""Rule scenarios: setup, a round's turns, expansion limits, the saloon and the last round
(RULES.md sections 3 and 4)."""

from __future__ import annotations

import numpy as np
import pytest

from moonriver_env.moonriver.rules import (
    Build,
    Discard,
    Face,
    Game,
    GameConfig,
    IllegalActionError,
    PartnerKind,
    Pass,
    Phase,
    Recruit,
    Select,
)
from tests.helpers import (
    clear_ranch,
    new_game,
    put,
    set_hand,
    start_expansion,
    stock_saloon,
    take_plot,
)

# ---------------------------------------------------------------- local helpers


def passive(game: Game) -> None:
    """Decline whatever may be declined; otherwise take the first legal action."""
    legal = game.legal_actions()
    game.apply(Pass() if Pass() in legal else legal[0])


def play_until(game: Game, done, limit: int = 5000) -> None:
    """Play passively until ``done(game)`` holds."""
    for _ in range(limit):
        if done(game):
            return
        passive(game)
    raise AssertionError("the condition was never reached")


def fill_bridges(game: Game, p: int) -> None:
    """Empty a Camp ranch and put plain deserts on its three bridges."""
    clear_ranch(game, p)
    for r, c in ((0, 0), (1, 2), (0, 4)):
        put(game, p, r, c, "1")


def accounted(game: Game) -> None:
    """Every plot, cow and partner token is in exactly one place."""
    plots = list(game.box) + list(game.removed) + list(game.discarded)
    plots += [p for p in game.active if p >= 0]
    plots += [p for p in (game.pending or []) if p >= 0]
    for ranch in game.ranches:
        plots += ranch.hand + [p for p in ranch.plot.tolist() if p >= 0]
    assert sorted(plots) == list(range(game.data.num_plots))
    assert game.supply + sum(int(r.cows.sum()) for r in game.ranches) == 32
    assert game.supply >= 0 and all((r.cows >= 0).all() for r in game.ranches)
    tokens = [t for t in game.saloon if t >= 0] + list(game.pile)
    for ranch in game.ranches:
        tokens += [t for t in ranch.partner.tolist() if t >= 0]
    assert sorted(tokens) == list(range(20))


# ------------------------------------------------------------------------- setup


def test_columns_are_sorted_by_plot_number():
    numbers = Game(seed=0).data.number
    kinds = Game(seed=0).data.plot_kind
    for seed in range(10):
        game = Game(GameConfig(num_players=4), seed=seed)
        for event in game.history:
            if event.get("event") == "column":
                got = [int(numbers[kinds[p]]) for p in event["plots"]]
                assert got == sorted(got)


def test_equal_numbers_keep_the_draw_order():
    game = new_game(4)
    # the next column drawn takes these four, in this order, off the end of the box
    drawn = [take_plot(game, label) for label in ("20", "25", "23", "1")]  # numbers 7, 18, 7, 1
    game.box.extend(reversed(drawn))
    play_until(game, lambda g: g.round == 2)
    assert game.pending == [drawn[3], drawn[0], drawn[2], drawn[1]]


def test_setup_then_first_turn_collects_the_plot():
    game = Game(GameConfig(num_players=4), seed=11)
    column = list(game.active)
    order = list(game.setup_order)
    for i, pos in enumerate((3, 1, 0, 2)):
        assert game.phase == Phase.SETUP
        assert game.current_player == order[i]
        game.apply(Select(pos))
    owner = {3: order[0], 1: order[1], 0: order[2], 2: order[3]}
    assert game.active_owner == [owner[pos] for pos in range(4)]
    assert game.removed == []  # 4 players: every plot of the first column is taken
    # position 0 plays first and takes its plot into the reserve
    assert game.round == 1
    assert game.current_player == owner[0]
    assert game.ranches[owner[0]].hand == [column[0]]
    assert game.active[0] == -1
    assert game.phase == Phase.SELECT  # one plot: no domino to build


def test_turn_order_follows_the_column_positions():
    game = new_game(4)
    picks = {}
    for pos in (3, 0, 2, 1):  # the players of round 1 pick these pending positions
        assert game.phase == Phase.SELECT
        picks[pos] = game.current_player
        game.apply(Select(pos))
    assert game.round == 2
    seen = []
    while game.round == 2:
        if not seen or seen[-1] != game.current_player:
            seen.append(game.current_player)
        passive(game)
    assert seen == [picks[0], picks[1], picks[2], picks[3]]


def test_a_taken_pending_position_cannot_be_selected():
    game = new_game(4)
    assert Pass() not in game.legal_actions()  # selecting is mandatory
    game.apply(Select(2))
    assert Select(2) not in game.legal_actions()
    with pytest.raises(IllegalActionError, match="taken"):
        game.apply(Select(2))
    assert {a.position for a in game.legal_actions()} == {0, 1, 3}


def test_three_players_remove_the_unchosen_plots():
    game = Game(GameConfig(num_players=3), seed=4)
    first = list(game.active)
    for pos in (0, 2, 3):
        game.apply(Select(pos))
    assert game.removed == [first[1]]
    assert game.active[1] == -1
    play_until(game, lambda g: g.round == 2)
    # the column now active was chosen by three players: one plot has no ranchero
    leftover = [game.active[pos] for pos in range(4) if game.active_owner[pos] < 0]
    assert len(leftover) == 1
    play_until(game, lambda g: g.round == 3)
    assert game.removed == [first[1], leftover[0]]


def test_four_players_remove_nothing():
    game = new_game(4)
    play_until(game, lambda g: g.round == 3)
    assert game.removed == []


# ------------------------------------------------------------ forced expansion


def test_full_reserve_forces_expansion_when_collecting():
    game = new_game(4)
    nxt = game.active_owner[game.order[1]]
    set_hand(game, nxt, ["1", "1", "1"])  # a full Camp reserve
    game.apply(Select(0))
    assert game.current_player == nxt
    assert len(game.ranches[nxt].hand) == 4
    assert game.context().forced
    assert game.phase == Phase.BUILD
    assert Pass() not in game.legal_actions()
    hand = list(game.ranches[nxt].hand)
    with pytest.raises(IllegalActionError, match="over-full"):
        game.apply(Pass())
    assert game.ranches[nxt].hand == hand
    game.apply(Build(0, 3, 0, 0, True))
    # one domino satisfies the obligation; the second is optional
    assert game.phase == Phase.BUILD
    assert Pass() in game.legal_actions()
    game.apply(Pass())
    assert game.ranches[nxt].hand == [hand[1], hand[2]]
    assert game.phase == Phase.SELECT


def test_forced_expansion_without_a_legal_placement_discards_two_chosen_plots():
    game = new_game(4)
    p = game.player
    fill_bridges(game, p)
    set_hand(game, p, ["19", "20", "21", "22"])  # four forests: nothing to connect to
    hand = list(game.ranches[p].hand)
    start_expansion(game, p)
    assert game.phase == Phase.DISCARD
    assert set(game.legal_actions()) == {Discard(a, b) for a in range(4) for b in range(a + 1, 4)}
    with pytest.raises(IllegalActionError):
        game.apply(Pass())
    game.apply(Discard(0, 2))
    assert game.discarded == [hand[0], hand[2]]
    assert game.ranches[p].hand == [hand[1], hand[3]]
    assert not set(game.discarded) & set(game.box)
    assert game.phase == Phase.SELECT


def test_optional_expansion_without_a_legal_placement_is_skipped():
    game = new_game(4)
    p = game.player
    fill_bridges(game, p)
    set_hand(game, p, ["19", "20", "21"])  # not over-full: nothing forced
    start_expansion(game, p)
    assert game.phase == Phase.SELECT
    assert len(game.ranches[p].hand) == 3
    assert game.discarded == []


# --------------------------------------------------------- how many dominoes


def test_four_plots_unforced_on_a_four_slot_reserve():
    probe = new_game(4, seed=5)  # board choice draws nothing: the same seed, the same seats
    nxt = probe.active_owner[probe.order[1]]
    boards = ["wesley", "calamity", "big_jo"]
    boards.insert(nxt, "mary")  # the next player to act gets Mary's 4-slot reserve
    game = new_game(4, seed=5, mode="legends", boards=tuple(boards), scenario=4)
    assert game.active_owner[game.order[1]] == nxt
    clear_ranch(game, nxt)
    set_hand(game, nxt, ["1", "1", "1"])
    game.apply(Select(0))  # collects a fourth plot into the fourth slot
    assert game.current_player == nxt
    ctx = game.context()
    assert not ctx.forced and ctx.builds_allowed == 2
    assert Pass() in game.legal_actions()
    game.apply(Build(0, 1, 1, 2, True))
    assert game.phase == Phase.BUILD
    game.apply(Build(0, 1, 1, 1, True))
    assert game.phase == Phase.SELECT


def test_never_three_dominoes_in_a_turn():
    game = new_game(4)
    nxt = game.active_owner[game.order[1]]
    clear_ranch(game, nxt)
    set_hand(game, nxt, ["1"] * 5)  # more than any reserve holds, to probe the cap
    game.apply(Select(0))  # the next turn starts: the collected plot makes 6
    assert game.current_player == nxt
    assert game.context().builds_allowed == 2
    game.apply(Build(0, 1, 0, 0, True))
    game.apply(Build(0, 1, 0, 1, True))
    assert game.phase == Phase.SELECT  # two plots and room are left, but no third domino
    assert len(game.ranches[nxt].hand) == 2


def test_collecting_the_fourth_plot_allows_two_dominoes():
    game = new_game(4)
    nxt = game.active_owner[game.order[1]]
    clear_ranch(game, nxt)
    set_hand(game, nxt, ["1", "1", "1"])
    game.apply(Select(0))
    assert game.context().builds_allowed == 2
    game.apply(Build(0, 1, 0, 0, True))
    game.apply(Build(0, 1, 0, 1, True))
    assert game.phase == Phase.SELECT
    assert game.ranches[nxt].hand == []


def test_collecting_the_third_plot_allows_one_domino():
    game = new_game(4)
    nxt = game.active_owner[game.order[1]]
    clear_ranch(game, nxt)
    set_hand(game, nxt, ["1", "1"])
    game.apply(Select(0))
    assert game.current_player == nxt
    ctx = game.context()
    assert (ctx.forced, ctx.builds_allowed) == (False, 1)
    assert Pass() in game.legal_actions()


# ------------------------------------------------------------------- the saloon


def recruit_first_turn(game: Game) -> list[int]:
    """The first player builds a farm circle domino and recruits the Trapper of slot 0."""
    p = game.player
    clear_ranch(game, p)
    set_hand(game, p, ["14", "17"])
    saloon = stock_saloon(game, [PartnerKind.TRAPPER, PartnerKind.GOLD_DIGGER,
                                 PartnerKind.FARMER, PartnerKind.TRAPPER,
                                 PartnerKind.GOLD_DIGGER])
    start_expansion(game, p)
    game.apply(Build(0, 1, 0, 0, True))
    game.apply(Recruit(0, Face.SPECIALIST, 0))
    assert game.saloon[0] == -1
    return saloon


def test_saloon_is_refilled_only_at_the_end_of_the_round():
    game = new_game(4)
    saloon = recruit_first_turn(game)
    pile = list(game.pile)
    while game.round == 1:
        assert game.saloon == [-1, *saloon[1:]]
        assert game.pile == pile
        passive(game)
    assert game.saloon == [pile[-1], *saloon[1:]]
    assert game.pile == pile[:-1]


def test_saloon_slots_stay_empty_when_the_pile_is_empty():
    game = new_game(4)
    saloon = recruit_first_turn(game)
    game.pile = []
    play_until(game, lambda g: g.round == 2)
    assert game.saloon == [-1, *saloon[1:]]


# -------------------------------------------------------------- the last round


def test_last_round_has_no_select_and_ends_the_game():
    game = new_game(4)
    saloon = recruit_first_turn(game)
    pile = list(game.pile)
    game.box = []  # no column can follow the pending one
    play_until(game, lambda g: g.round == 2)
    assert game.last_round and game.context().last_round
    assert game.pending is None
    assert game.saloon == [pile[-1], *saloon[1:]]  # refilled before the last round
    phases = []
    while not game.emptying:
        phases.append(game.phase)
        assert Select(0) not in game.legal_actions()
        passive(game)
    assert Phase.SELECT not in phases
    assert Phase.BUILD in phases  # everyone held 2 plots and could build (they declined)
    play_until(game, lambda g: g.is_over)
    assert game.round == 2


def test_the_game_lasts_until_the_box_runs_out():
    game = new_game(4, seed=2)
    rounds_seen = set()
    while not game.is_over:
        rounds_seen.add((game.round, game.last_round))
        passive(game)
    # 96 plots make 24 columns: the first is drafted at setup, one round per column
    assert max(r for r, _ in rounds_seen) == 24
    assert {r for r, last in rounds_seen if last} == {24}
    assert game.box == []


@pytest.mark.parametrize(("players", "mode"), [(2, "base"), (3, "base"), (4, "base"),
                                               (3, "legends"), (4, "legends")])
def test_every_plot_cow_and_partner_is_accounted_for(players, mode):
    for seed in range(3):
        game = Game(GameConfig(num_players=players, mode=mode), seed=seed)
        rng = np.random.default_rng(100 + seed)
        steps = 0
        while not game.is_over:
            if steps % 7 == 0:
                accounted(game)
            assert players == 2 or game.phase != Phase.BONUS  # single plots: 2 players only
            ids = game.legal_action_ids()
            game.apply(int(ids[rng.integers(ids.size)]))
            steps += 1
        accounted(game)
        assert all(r.hand == [] for r in game.ranches)
        assert all(int(r.cows.max()) <= 1 for r in game.ranches)
