"""Rule scenarios: a domino's symbols (RULES.md section 5) and the cow supply (section 1).

Cows first, then skulls (drought), then circles (recruitment), each resolved through ``apply``.
"""

from __future__ import annotations

from moonriver_env.moonriver.rules import (
    Build,
    CowboyMove,
    Drought,
    Face,
    Game,
    PartnerKind,
    Pass,
    Phase,
    Recruit,
)
from tests.helpers import (
    clear_ranch,
    cows_at,
    fresh,
    grid,
    new_game,
    put,
    ranch_grid,
    set_hand,
    start_expansion,
    stock_saloon,
)

GD, TR, FA = PartnerKind.GOLD_DIGGER, PartnerKind.TRAPPER, PartnerKind.FARMER

# ---------------------------------------------------------------- local helpers


def go(game: Game, p: int) -> None:
    """Start the expansion of ``p`` with the plots it holds."""
    start_expansion(game, p)


def total_cows(game: Game) -> int:
    """Cows in the supply plus cows on every ranch."""
    return game.supply + sum(int(r.cows.sum()) for r in game.ranches)


# --------------------------------------------------------------------------- cows


def test_cow_symbols_take_cows_from_the_supply():
    game = new_game(4)
    assert game.supply == 32
    p = fresh(game, ["9", "8"])  # meadow 2 cows, meadow 1 cow
    go(game, p)
    game.apply(Build(0, 1, 0, 0, True))
    assert ranch_grid(game, p, 2) == grid("""
        0 M2. . ### . =
        1 M1. . = . .
    """)
    assert game.supply == 29
    assert total_cows(game) == 32
    assert game.phase == Phase.SELECT


def test_cow_symbol_with_an_empty_supply_places_nothing():
    game = new_game(4)
    p = fresh(game, ["9", "8"])
    other = (p + 1) % 4
    clear_ranch(game, other)
    put(game, other, 4, 4, "1", cows=32)  # every cow of the game is out on a ranch
    assert game.supply == 0
    go(game, p)
    game.apply(Build(0, 1, 0, 0, True))
    assert cows_at(game, p) == {}
    assert game.supply == 0
    assert total_cows(game) == 32


def test_cow_symbols_stop_when_the_supply_runs_out():
    game = new_game(4)
    p = fresh(game, ["9", "8"])  # 3 cow symbols
    other = (p + 1) % 4
    clear_ranch(game, other)
    put(game, other, 4, 4, "1", cows=30)
    assert game.supply == 2
    go(game, p)
    game.apply(Build(0, 1, 0, 0, True))
    assert sum(cows_at(game, p).values()) == 2
    assert game.supply == 0
    assert total_cows(game) == 32


# ------------------------------------------------------------------------- skulls


def test_cows_come_before_skulls():
    """The skull removes the very cow its own domino just brought."""
    game = new_game(4)
    p = fresh(game, ["5", "7"])  # canyon nugget+skull, canyon 1 cow
    go(game, p)
    game.apply(Build(0, 1, 0, 0, True))
    assert game.phase == Phase.DROUGHT
    assert cows_at(game, p) == {(1, 0): 1}
    assert game.legal_actions() == [Drought(1, 0)]
    game.apply(Drought(1, 0))
    assert cows_at(game, p) == {}
    assert game.supply == 32
    assert game.phase == Phase.SELECT


def test_skull_in_a_territory_without_cows_does_nothing():
    game = new_game(4)
    p = fresh(game, ["3", "1"])  # desert skull, plain desert
    put(game, p, 1, 0, "8", cows=1)  # cows next door, in a meadow: another territory
    put(game, p, 1, 1, "8", cows=1)
    supply = game.supply
    go(game, p)
    game.apply(Build(0, 1, 0, 0, False))
    assert game.phase == Phase.SELECT  # no drought decision
    assert ranch_grid(game, p, 2) == grid("""
        0 D.. D.. ### . =
        1 M1. M1. = . .
    """)
    assert game.supply == supply


def test_drought_lets_the_player_choose_the_plot():
    game = new_game(4)
    p = fresh(game, ["5", "6"])  # canyon skull, canyon nugget
    put(game, p, 1, 0, "7", cows=1)
    put(game, p, 1, 1, "4", cows=2)
    put(game, p, 3, 3, "7", cows=1)  # a canyon apart: another territory
    go(game, p)
    game.apply(Build(0, 1, 0, 0, False))
    assert game.phase == Phase.DROUGHT
    assert set(game.legal_actions()) == {Drought(1, 0), Drought(1, 1)}
    game.apply(Drought(1, 1))
    assert ranch_grid(game, p, 4) == grid("""
        0 C.. C.. ### . =
        1 C1. C1. = . .
        2 . . . . .
        3 . . . C1. .
    """)
    assert game.phase == Phase.SELECT


def test_two_skulls_in_one_territory_remove_two_cows():
    game = new_game(4)
    p = fresh(game, ["5", "5"])  # two canyon skulls
    put(game, p, 1, 0, "7", cows=1)
    put(game, p, 1, 1, "7", cows=1)
    put(game, p, 2, 1, "7", cows=1)
    go(game, p)
    game.apply(Build(0, 1, 0, 0, False))
    assert game.phase == Phase.DROUGHT
    game.apply(Drought(1, 0))
    assert game.phase == Phase.DROUGHT
    assert set(game.legal_actions()) == {Drought(1, 1), Drought(2, 1)}
    game.apply(Drought(2, 1))
    assert cows_at(game, p) == {(1, 1): 1}
    assert game.phase == Phase.SELECT


def test_each_skull_strikes_its_own_territory():
    game = new_game(4)
    p = fresh(game, ["3", "5"])  # desert skull at (0,0), canyon skull at (1,0)
    put(game, p, 0, 1, "1", cows=1)  # the desert's cow
    put(game, p, 2, 0, "7", cows=1)  # the canyon's cow
    put(game, p, 3, 3, "8", cows=1)  # a meadow cow, out of reach
    go(game, p)
    game.apply(Build(0, 1, 0, 0, True))
    assert game.phase == Phase.DROUGHT
    assert game.legal_actions() == [Drought(0, 1)]
    game.apply(Drought(0, 1))
    assert game.phase == Phase.DROUGHT
    assert game.legal_actions() == [Drought(2, 0)]
    game.apply(Drought(2, 0))
    assert cows_at(game, p) == {(3, 3): 1}
    assert game.phase == Phase.SELECT


def test_a_skull_without_cows_does_not_stop_the_next_skull():
    game = new_game(4)
    p = fresh(game, ["3", "5"])  # desert skull at (0,0) first, canyon skull at (1,0)
    put(game, p, 2, 0, "7", cows=1)  # only the canyon has a cow
    go(game, p)
    game.apply(Build(0, 1, 0, 0, True))
    assert game.phase == Phase.DROUGHT
    assert game.legal_actions() == [Drought(2, 0)]
    game.apply(Drought(2, 0))
    assert cows_at(game, p) == {}


def test_a_skull_acts_only_once():
    """Cows arriving later in a skull's territory, even on the skull plot, are safe."""
    game = new_game(4)
    p = fresh(game, ["5", "6"])
    go(game, p)
    game.apply(Build(0, 1, 0, 0, True))  # skull at (0,0), no cows: nothing happens
    assert game.phase == Phase.SELECT
    set_hand(game, p, ["4", "7"])  # canyon 2 cows, canyon 1 cow
    go(game, p)
    game.apply(Build(0, 1, 0, 1, True))  # (0,1)-(1,1), same canyon territory as the skull
    assert game.phase == Phase.SELECT  # no drought
    assert cows_at(game, p) == {(0, 1): 2, (1, 1): 1}

    # a Cowboy may then walk a cow onto the skull plot itself
    set_hand(game, p, ["14", "17"])  # farm circle, plain farm
    stock_saloon(game, [TR, None, None, None, None])
    go(game, p)
    game.apply(Build(0, 1, 1, 2, False))  # (1,2) is a bridge
    game.apply(Recruit(0, Face.COWBOY, 0))
    assert game.phase == Phase.COWBOY
    game.apply(CowboyMove(0, 1, 3))
    game.apply(Pass())
    assert cows_at(game, p) == {(0, 0): 1, (0, 1): 1, (1, 1): 1}
    assert game.phase == Phase.SELECT


# ------------------------------------------------------------------------ circles


def test_circles_come_after_skulls():
    game = new_game(4)
    p = fresh(game, ["5", "11"])  # canyon skull; meadow 1 cow + circle
    put(game, p, 1, 0, "7", cows=1)
    stock_saloon(game, [GD, TR, FA, TR, GD])
    go(game, p)
    game.apply(Build(0, 1, 0, 0, False))
    # the cow of the domino is already there; the skull waits for a decision before the circle
    assert cows_at(game, p) == {(0, 1): 1, (1, 0): 1}
    assert game.phase == Phase.DROUGHT
    game.apply(Drought(1, 0))
    assert game.phase == Phase.RECRUIT
    game.apply(Recruit(1, Face.SPECIALIST, 1))
    assert ranch_grid(game, p, 2) == grid("""
        0 C.. M1p ### . =
        1 C.. . = . .
    """)
    assert game.phase == Phase.SELECT


def test_recruit_chooses_partner_face_and_circle():
    game = new_game(4)
    p = fresh(game, ["14", "15"])  # farm circle; farm 1 cow + circle
    saloon = stock_saloon(game, [GD, TR, FA, TR, None])
    go(game, p)
    game.apply(Build(0, 1, 0, 0, False))  # circle 0 at (0,0), circle 1 at (0,1)
    assert game.phase == Phase.RECRUIT
    assert set(game.legal_actions()) == {Recruit(s, f, c) for s in range(4) for f in range(2)
                                         for c in range(2)}
    game.apply(Recruit(2, Face.SPECIALIST, 1))  # the Farmer onto the second circle first
    assert game.phase == Phase.RECRUIT
    assert set(game.legal_actions()) == {Recruit(s, f, 0) for s in (0, 1, 3) for f in range(2)}
    game.apply(Recruit(0, Face.COWBOY, 0))  # the Gold Digger turned to its Cowboy face
    assert game.phase == Phase.COWBOY  # the Cowboy's immediate effect
    game.apply(Pass())
    assert ranch_grid(game, p, 1) == grid("0 R.w R1f ### . =")
    ranch = game.ranches[p]
    assert ranch.partner[0] == saloon[0] and ranch.face[0] == Face.COWBOY
    assert ranch.partner[1] == saloon[2] and ranch.face[1] == Face.SPECIALIST
    assert game.saloon == [-1, saloon[1], -1, saloon[3], -1]
    assert game.phase == Phase.SELECT


def test_empty_saloon_means_a_circle_does_nothing():
    game = new_game(4)
    p = fresh(game, ["14", "14"])
    stock_saloon(game, [None] * 5)
    go(game, p)
    game.apply(Build(0, 1, 0, 0, False))
    assert game.phase == Phase.SELECT
    assert (game.ranches[p].partner == -1).all()


def test_last_partner_goes_to_the_circle_chosen_first():
    game = new_game(4)
    p = fresh(game, ["14", "14"])
    saloon = stock_saloon(game, [None, None, FA, None, None])
    go(game, p)
    game.apply(Build(0, 1, 0, 0, False))
    assert set(game.legal_actions()) == {Recruit(2, f, c) for f in range(2) for c in range(2)}
    game.apply(Recruit(2, Face.SPECIALIST, 1))
    # the saloon is now empty: the other circle does nothing
    assert game.phase == Phase.SELECT
    assert game.ranches[p].partner[:2].tolist() == [-1, saloon[2]]
    assert ranch_grid(game, p, 1) == grid("0 R.. R.f ### . =")
