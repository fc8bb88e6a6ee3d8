"""Rule scenarios: the end of the game (RULES.md section 7, steps 1-2).

After the last round every reserve is emptied in the last round's turn order: build while a
domino fits (no passing), discard what cannot be built and any odd plot; then each plot keeps
at most one cow.
"""

from __future__ import annotations

import pytest

from moonriver_env.moonriver.rules import (
    Build,
    Face,
    Game,
    IllegalActionError,
    PartnerKind,
    Pass,
    Phase,
    Recruit,
)
from tests.helpers import (
    clear_ranch,
    cows_at,
    grid,
    new_game,
    put,
    ranch_grid,
    set_hand,
    start_expansion,
)

# ---------------------------------------------------------------- local helpers


def passive(game: Game) -> None:
    """Decline whatever may be declined; otherwise take the first legal action."""
    legal = game.legal_actions()
    game.apply(Pass() if Pass() in legal else legal[0])


def to_emptying(seed: int = 0) -> tuple[Game, list[int]]:
    """A 4-player game whose box is empty, played passively up to the end-game emptying.

    Round 1 is followed by the last round; everyone declines to build, so at the emptying each
    player holds 2 plots and the first of them is deciding a forced build.
    """
    game = new_game(4, seed=seed)
    game.removed.extend(game.box)  # out of the game, but still at hand for set_hand and put
    game.box = []
    last_order = None
    while not game.emptying:
        if game.last_round and last_order is None:
            last_order = [game.active_owner[pos] for pos in game.order]
        passive(game)
    assert last_order is not None
    return game, last_order


# -------------------------------------------------------------------- emptying


def test_emptying_follows_the_last_round_order_and_forbids_passing():
    game, last_order = to_emptying()
    assert game.phase == Phase.BUILD
    assert all(len(r.hand) == 2 for r in game.ranches)
    builders = []
    while not game.is_over:
        assert game.phase == Phase.BUILD
        assert Pass() not in game.legal_actions()
        with pytest.raises(IllegalActionError, match="emptied"):
            game.apply(Pass())
        builders.append(game.current_player)
        game.apply(game.legal_actions()[0])
        while not game.is_over and game.phase != Phase.BUILD:
            passive(game)  # symbols of the domino (recruits may be declined)
    assert builders == last_order
    assert all(r.hand == [] for r in game.ranches)
    assert game.discarded == []


def test_emptying_discards_an_odd_plot_and_unplaceable_plots():
    game, order = to_emptying()
    first, second, third, fourth = order
    for q in order:
        clear_ranch(game, q)
    set_hand(game, first, ["1", "1"])
    set_hand(game, second, ["1", "1", "1"])  # one plot too many for dominoes
    for r, c in ((0, 0), (1, 2), (0, 4)):
        put(game, third, r, c, "2")  # deserts with a nugget on the three bridges
    set_hand(game, third, ["19", "20"])  # forests: nothing to connect to
    set_hand(game, fourth, [])
    odd = game.ranches[second].hand[2]
    stuck = list(game.ranches[third].hand)
    start_expansion(game, first)
    assert game.current_player == first
    game.apply(Build(0, 1, 0, 0, True))
    # the second player must build one domino; the third plot is left alone
    assert game.current_player == second
    assert Pass() not in game.legal_actions()
    game.apply(Build(0, 1, 0, 0, True))
    # the rest runs without a decision: the odd plot and the unplaceable pair leave the game
    assert game.is_over
    assert game.discarded == [odd, *stuck]
    assert all(r.hand == [] for r in game.ranches)
    assert ranch_grid(game, third, 2) == grid("""
        0 D.. . ### . D..
        1 . . D.. . .
    """)


def test_emptying_keeps_building_while_a_domino_fits():
    game, order = to_emptying()
    first = order[0]
    clear_ranch(game, first)
    set_hand(game, first, ["1", "1", "1", "1"])
    start_expansion(game, first)
    game.apply(Build(0, 1, 0, 0, True))
    # more than two dominoes is fine here: the reserve must be emptied
    assert game.current_player == first and game.phase == Phase.BUILD
    assert Pass() not in game.legal_actions()
    game.apply(Build(0, 1, 0, 1, True))
    assert game.ranches[first].hand == []
    assert game.current_player == order[1]


def test_emptying_resolves_symbols_and_recruits():
    game, order = to_emptying()
    first = order[0]
    clear_ranch(game, first)
    set_hand(game, first, ["14", "16"])  # farm circle, farm 2 cows
    start_expansion(game, first)
    game.apply(Build(0, 1, 0, 0, True))
    assert cows_at(game, first) == {(1, 0): 2}
    assert game.phase == Phase.RECRUIT
    token = game.saloon[0]
    game.apply(Recruit(0, Face.SPECIALIST, 0))
    assert game.ranches[first].partner[0] == token
    if game.phase != Phase.BUILD:  # the specialist's own effect, if it has one
        game.apply(Pass())
    assert game.current_player == order[1]


# --------------------------------------------------------------- overpopulation


def test_overpopulation_leaves_one_cow_per_plot_and_returns_the_rest():
    game, order = to_emptying()
    first, second = order[0], order[1]
    clear_ranch(game, first)
    set_hand(game, first, ["16", "9"])  # farm 2 cows, meadow 2 cows
    put(game, second, 4, 4, "13", cows=2)  # an old crowded plot
    start_expansion(game, first)
    game.apply(Build(0, 1, 0, 0, True))
    assert cows_at(game, first) == {(0, 0): 2, (1, 0): 2}
    # running scores already count a single cow per plot
    running = game.running_scores()[first]
    assert running.cows == 2 and running.territories == 2
    while not game.is_over:
        passive(game)
    assert cows_at(game, first) == {(0, 0): 1, (1, 0): 1}
    assert cows_at(game, second)[(4, 4)] == 1
    assert all(int(r.cows.max()) <= 1 for r in game.ranches)
    on_ranches = sum(int(r.cows.sum()) for r in game.ranches)
    assert game.supply == 32 - on_ranches
    assert game.scores()[first].cows == 2
    assert ranch_grid(game, first, 2) == grid("""
        0 R1. . ### . =
        1 M1. . = . .
    """)


def test_game_over_accepts_no_more_decisions():
    game, _ = to_emptying()
    while not game.is_over:
        passive(game)
    assert game.phase == Phase.GAME_OVER
    assert game.current_player == -1
    assert game.legal_actions() == []
    with pytest.raises(IllegalActionError, match="over"):
        game.apply(Pass())
    assert len(game.scores()) == 4
    assert game.scores() == game.running_scores()


def test_scores_are_not_final_before_the_end():
    game = new_game(4)
    with pytest.raises(RuntimeError):
        game.scores()
    assert len(game.running_scores()) == 4


def test_partners_count_in_the_final_score():
    game, order = to_emptying()
    first = order[0]
    clear_ranch(game, first)
    set_hand(game, first, ["14", "25"])  # farm circle, cornfield 3 corn
    pool = [t for t in game.saloon if t >= 0] + game.pile
    farmer = next(t for t in pool if game.data.partner_specialists[t] == PartnerKind.FARMER)
    game.saloon = [farmer, -1, -1, -1, -1]
    game.pile = [t for t in pool if t != farmer]
    start_expansion(game, first)
    game.apply(Build(0, 1, 0, 0, True))
    game.apply(Recruit(0, Face.SPECIALIST, 0))
    while not game.is_over:
        passive(game)
    score = game.scores()[first]
    assert score.resources == 3 and score.partners == 3
