"""Rule scenarios: partners and their effects (RULES.md section 6).

Cowboy moves, the Cattle Thief and its herd guards, the Desperado's reserve swap, and the
partner tokens themselves.
"""

from __future__ import annotations

from collections import Counter

from moonriver_env.moonriver.rules import (
    Build,
    CowboyMove,
    Desperado,
    Face,
    Game,
    PartnerKind,
    Pass,
    Phase,
    Recruit,
    Thief,
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
    variant_manifest,
)

DE, CT, GD, TR, FA = (PartnerKind.DESPERADO, PartnerKind.CATTLE_THIEF, PartnerKind.GOLD_DIGGER,
                      PartnerKind.TRAPPER, PartnerKind.FARMER)

# ---------------------------------------------------------------- local helpers


def place_partner(game: Game, player: int, row: int, col: int, kind: PartnerKind,
                  face: Face = Face.SPECIALIST) -> None:
    """Put a partner token (taken from the pile) on a placed plot of a ranch."""
    token = next(t for t in game.pile if game.data.partner_specialists[t] == kind)
    game.pile.remove(token)
    ranch = game.ranches[player]
    ranch.set_partner(row * 5 + col, token, face)


def build_circle_and_recruit(game: Game, p: int, kind: PartnerKind,
                             face: Face = Face.SPECIALIST) -> None:
    """Build the farm circle domino held in slots 0-1 on the bridge (1,2) and recruit ``kind``."""
    stock_saloon(game, [kind, None, None, None, None])
    start_expansion(game, p)
    game.apply(Build(0, 1, 1, 2, False))  # circle plot at (1,2), plain farm at (1,3)
    assert game.phase == Phase.RECRUIT
    game.apply(Recruit(0, face, 0))


# ------------------------------------------------------------------------ Cowboy


def cowboy_ranch() -> tuple[Game, int]:
    """A cow on a desert at (0,1), between a cornfield (0,0) and the homestead (0,2)."""
    game = new_game(4)
    p = fresh(game, ["14", "17"])  # farm circle, plain farm
    put(game, p, 0, 0, "23")
    put(game, p, 0, 1, "1", cows=1)
    stock_saloon(game, [TR, None, None, None, None])
    start_expansion(game, p)
    game.apply(Build(0, 1, 1, 1, False))  # circle (1,1), farm on the bridge (1,2)
    game.apply(Recruit(0, Face.COWBOY, 0))
    assert game.phase == Phase.COWBOY
    assert ranch_grid(game, p, 3) == grid("""
        0 Z.. D1. ### . =
        1 . R.w R.. . .
        2 . . . . .
    """)
    return game, p


def test_cowboy_moves_are_blocked_by_cornfields_empty_cells_and_homestead():
    game, _ = cowboy_ranch()
    # left: a cornfield; right: the homestead; up: off the ranch; down: the farm
    assert set(game.legal_actions()) == {CowboyMove(0, 1, 2), Pass()}
    game.apply(CowboyMove(0, 1, 2))
    # from (1,1): up and right are plots; left and down are empty cells
    assert set(game.legal_actions()) == {CowboyMove(1, 1, 0), CowboyMove(1, 1, 1), Pass()}
    game.apply(CowboyMove(1, 1, 1))
    # from the bridge plot (1,2): the homestead above and empty cells around block all but left
    assert set(game.legal_actions()) == {CowboyMove(1, 2, 3), Pass()}


def test_cowboy_makes_at_most_three_moves_with_the_same_cow():
    game, p = cowboy_ranch()
    game.apply(CowboyMove(0, 1, 2))
    game.apply(CowboyMove(1, 1, 1))
    game.apply(CowboyMove(1, 2, 3))
    # a fourth move (back up to (0,1)) would be possible on the board, but the Cowboy is done
    assert game.phase == Phase.SELECT
    assert cows_at(game, p) == {(1, 1): 1}


def test_cowboy_pass_ends_the_moves_early():
    game, p = cowboy_ranch()
    game.apply(CowboyMove(0, 1, 2))
    game.apply(Pass())
    assert game.phase == Phase.SELECT
    assert cows_at(game, p) == {(1, 1): 1}
    assert game.context().cowboy_moves_left == 0


def test_cowboy_without_any_cow_offers_no_moves():
    game = new_game(4)
    p = fresh(game, ["14", "17"])
    build_circle_and_recruit(game, p, TR, Face.COWBOY)
    assert game.phase == Phase.SELECT
    assert game.ranches[p].face[1 * 5 + 2] == Face.COWBOY


# ------------------------------------------------------------------ Cattle Thief


def thief_table() -> tuple[Game, int]:
    """Player p holds a farm circle domino; the next players have guarded and free cows."""
    game = new_game(4)
    p = fresh(game, ["14", "17"])
    v1, v2, v3 = ((p + o) % 4 for o in (1, 2, 3))
    for q in (v1, v2, v3):
        clear_ranch(game, q)
    # next player: a guarded meadow of two plots, an unguarded meadow and forest
    put(game, v1, 1, 0, "8", cows=1)
    put(game, v1, 1, 1, "8", cows=1)
    place_partner(game, v1, 1, 0, TR)  # an end-game partner guards all the same
    put(game, v1, 3, 0, "8", cows=1)
    put(game, v1, 3, 3, "21", cows=1)
    # the player after: a farm guarded by a partner on its Cowboy face
    put(game, v2, 0, 0, "13", cows=1)
    put(game, v2, 1, 0, "13", cows=1)
    place_partner(game, v2, 0, 0, GD, Face.COWBOY)
    assert ranch_grid(game, v1, 4) == grid("""
        0 = . ### . =
        1 M1p M1. = . .
        2 . . . . .
        3 M1. . . F1. .
    """)
    return game, p


def test_thief_steals_only_unguarded_cows():
    game, p = thief_table()
    v1 = (p + 1) % 4
    build_circle_and_recruit(game, p, CT)
    assert game.phase == Phase.THIEF
    assert set(game.legal_actions()) == {Thief(1, 3, 0), Thief(1, 3, 3), Pass()}
    supply = game.supply
    game.apply(Thief(1, 3, 3))
    assert cows_at(game, v1) == {(1, 0): 1, (1, 1): 1, (3, 0): 1}
    assert cows_at(game, p) == {(1, 2): 1}
    assert ranch_grid(game, p, 2) == grid("""
        0 = . ### . =
        1 . . R1t R.. .
    """)
    assert game.supply == supply  # a theft moves a cow, it does not take one from the supply
    assert game.phase == Phase.SELECT


def test_thief_may_decline():
    game, p = thief_table()
    before = {q: cows_at(game, q) for q in range(4)}
    build_circle_and_recruit(game, p, CT)
    game.apply(Pass())
    assert {q: cows_at(game, q) for q in range(4)} == before
    assert game.phase == Phase.SELECT


def test_thief_with_every_cow_guarded_has_nothing_to_do():
    game, p = thief_table()
    v1 = (p + 1) % 4
    place_partner(game, v1, 3, 0, FA)
    place_partner(game, v1, 3, 3, DE, Face.COWBOY)
    build_circle_and_recruit(game, p, CT)
    assert game.phase == Phase.SELECT


def test_thief_on_a_cornfield_cannot_steal(tmp_path):
    # The shipped manifest has no cornfield circle; a manifest with one tests the decision.
    path = variant_manifest(tmp_path, "23", circle="1")

    game = new_game(4, plots_file=str(path))
    p = fresh(game, ["23", "24"])  # cornfield with a circle, cornfield
    victim = (p + 1) % 4
    clear_ranch(game, victim)
    put(game, victim, 0, 0, "8", cows=1)  # an unguarded cow
    stock_saloon(game, [CT, CT, None, None, None])
    start_expansion(game, p)
    game.apply(Build(0, 1, 0, 0, False))
    game.apply(Recruit(0, Face.SPECIALIST, 0))
    assert ranch_grid(game, p, 1) == grid("0 Z.t Z.. ### . =")
    assert game.phase == Phase.SELECT  # no THIEF decision
    assert cows_at(game, victim) == {(0, 0): 1}

    # control: in the same game a Thief on a farm does get to steal
    set_hand(game, p, ["14", "17"])
    start_expansion(game, p)
    game.apply(Build(0, 1, 1, 2, False))
    game.apply(Recruit(1, Face.SPECIALIST, 0))
    assert game.phase == Phase.THIEF
    assert Thief(1, 0, 0) in game.legal_actions()


# --------------------------------------------------------------------- Desperado


def test_desperado_swaps_reserve_plots_with_an_opponent():
    game = new_game(4)
    p = fresh(game, ["14", "17", "1", "19"])  # 4 plots: forced, and two dominoes allowed
    o1, o2, o3 = ((p + o) % 4 for o in (1, 2, 3))
    set_hand(game, o1, ["25"])
    set_hand(game, o2, [])
    set_hand(game, o3, ["9", "8"])
    mine = list(game.ranches[p].hand)
    theirs = list(game.ranches[o3].hand)
    build_circle_and_recruit(game, p, DE)
    assert game.phase == Phase.DESPERADO
    assert set(game.legal_actions()) == {
        *(Desperado(i, 1, 0) for i in range(2)),
        *(Desperado(i, 3, j) for i in range(2) for j in range(2)),
        Pass(),
    }
    game.apply(Desperado(1, 3, 0))
    assert game.ranches[p].hand == [mine[2], theirs[0]]
    assert game.ranches[o3].hand == [mine[3], theirs[1]]
    assert len(game.ranches[o1].hand) == 1
    # the turn goes on: a second domino may still be built (or declined)
    assert game.phase == Phase.BUILD
    assert Pass() in game.legal_actions()


def test_desperado_with_an_empty_reserve_is_not_offered():
    game = new_game(4)
    p = fresh(game, ["14", "17"])
    for o in (1, 2, 3):
        set_hand(game, (p + o) % 4, ["1", "1"])
    build_circle_and_recruit(game, p, DE)  # both plots built: nothing left to swap
    assert game.phase == Phase.SELECT
    assert game.ranches[p].hand == []


def test_desperado_with_empty_opponent_reserves_is_not_offered():
    game = new_game(4)
    p = fresh(game, ["14", "17", "1"])
    for o in (1, 2, 3):
        set_hand(game, (p + o) % 4, [])
    build_circle_and_recruit(game, p, DE)
    assert game.phase == Phase.SELECT
    assert len(game.ranches[p].hand) == 1


def test_desperado_may_decline():
    game = new_game(4)
    p = fresh(game, ["14", "17", "1"])
    set_hand(game, (p + 1) % 4, ["25"])
    hands = [list(r.hand) for r in game.ranches]
    build_circle_and_recruit(game, p, DE)
    assert game.phase == Phase.DESPERADO
    game.apply(Pass())
    assert game.phase == Phase.SELECT
    hands[p] = hands[p][2:]
    assert [r.hand for r in game.ranches] == hands


# ----------------------------------------------------------------- the tokens


def test_twenty_partner_tokens_five_in_the_saloon():
    game = Game(seed=3)
    assert len(game.data.partner_specialists) == 20
    assert Counter(game.data.partner_specialists) == {DE: 5, CT: 5, GD: 3, TR: 5, FA: 2}
    assert all(t >= 0 for t in game.saloon)
    assert len(game.pile) == 15
    assert sorted(game.saloon + game.pile) == list(range(20))


def test_end_game_partners_have_no_immediate_effect():
    for kind in (GD, TR, FA):
        game = new_game(4)
        p = fresh(game, ["14", "17"])
        put(game, p, 0, 0, "8", cows=1)  # a cow the Cowboy face could move
        build_circle_and_recruit(game, p, kind)
        assert game.phase == Phase.SELECT
