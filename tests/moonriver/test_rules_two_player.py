"""Rule scenarios: the two-player game (RULES.md section 8, "Two players").

Setup order 1-2-2-1, two turns per column for each player, a 10-row ranch without removal,
and the bonus tiles for the first ranches to reach row 9.
"""

from __future__ import annotations

import numpy as np

from moonriver_env.moonriver.rules import (
    Bonus,
    Build,
    Face,
    Game,
    GameConfig,
    PartnerKind,
    Pass,
    Phase,
    Recruit,
    Select,
)
from tests.helpers import clear_ranch, grid, new_game, put, set_hand, start_expansion, view

# ---------------------------------------------------------------- local helpers


def ranch_rows(game: Game, player: int, first: int, last: int) -> str:
    """Rows ``first``..``last`` of a ranch view, blanks folded."""
    lines = view(game, player).splitlines()[2:]
    return grid("\n".join(lines[first:last + 1]))


def passive(game: Game) -> None:
    """Decline whatever may be declined; otherwise take the first legal action."""
    legal = game.legal_actions()
    game.apply(Pass() if Pass() in legal else legal[0])


def end_game_partners_only(game: Game) -> None:
    """A saloon of Trappers and Gold Diggers: recruits without immediate effects."""
    kinds = game.data.partner_specialists
    pool = [t for t in game.saloon if t >= 0] + list(game.pile)
    calm = ([t for t in pool if kinds[t] == PartnerKind.TRAPPER]
            + [t for t in pool if kinds[t] == PartnerKind.GOLD_DIGGER])[:5]  # Trappers first
    game.saloon = calm
    game.pile = [t for t in pool if t not in calm]


KINDS = {"forest": ("19", "20", "22", "21"), "farm": ("17", "13", "14", "15", "16", "18"),
         "desert": ("1", "2", "3")}


def put_any(game: Game, p: int, row: int, col: int, terrain: str) -> None:
    """Put a plot of a terrain, of whichever of its kinds the box still holds."""
    for label in KINDS[terrain]:
        try:
            put(game, p, row, col, label)
            return
        except LookupError:
            continue
    raise LookupError(f"no {terrain} plot left")


def hand_of(game: Game, p: int, terrain: str) -> None:
    """Give a player two plots of a terrain, of whichever kinds the box still holds."""
    kinds = game.data.plot_kind
    labels = [k.label for k in game.data.kinds]
    found = [labels[kinds[plot]] for plot in game.box if labels[kinds[plot]] in KINDS[terrain]
             and not game.data.kinds[kinds[plot]].circle]
    set_hand(game, p, found[:2])


def column_to_row_8(game: Game, p: int, terrain: str, extra: tuple = ()) -> None:
    """Empty a ranch, then run plots of one terrain down column 0 from row 0 to row 7."""
    clear_ranch(game, p)
    for r in range(8):
        put_any(game, p, r, 0, terrain)
    for r, c in extra:
        put_any(game, p, r, c, terrain)


def reference_bonus(game: Game) -> set[Bonus]:
    """Bonus placements from the rules: a free cell on a bridge or next to the face's terrain."""
    ranch = game.ranches[game.player]
    data = game.data
    out = set()
    for tile in range(2):
        if not game.bonus_tiles[tile]:
            continue
        for face in range(2):
            terrain = int(data.terrain[data.bonus_kind(tile, face)])
            for r in range(10):
                for c in range(5):
                    if (r, c) == (0, 2) or ranch.terrain[r * 5 + c] >= 0:
                        continue
                    near = [(r + dr, c + dc) for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))]
                    if (r, c) in ranch.board.bridges or any(
                            0 <= x < 10 and 0 <= y < 5 and ranch.terrain[x * 5 + y] == terrain
                            for x, y in near):
                        out.add(Bonus(tile, face, r, c))
    return out


# -------------------------------------------------------------------------- setup


def test_setup_order_is_one_two_two_one():
    for seed in range(6):
        game = Game(GameConfig(num_players=2), seed=seed)
        a, b, c, d = game.setup_order
        assert {a, b} == {0, 1} and (c, d) == (b, a)
        for i, player in enumerate(game.setup_order):
            assert game.phase == Phase.SETUP
            assert game.current_player == player
            assert len(game.legal_actions()) == 4 - i  # the last ranchero has one choice left
            game.apply(game.legal_actions()[-1])
        assert sorted(game.active_owner) == [0, 0, 1, 1]
        assert game.removed == []


def test_setup_positions_fix_the_first_round_order():
    game = Game(GameConfig(num_players=2), seed=1)
    a, b = game.setup_order[:2]
    for pos in (1, 0, 3, 2):  # a takes 1, b takes 0 and 3, a takes 2
        game.apply(Select(pos))
    assert game.active_owner == [b, a, a, b]
    # each column gives each player two turns, in column order
    turns = []
    while game.round == 1:
        if game.phase == Phase.SELECT:
            turns.append(game.current_player)
        passive(game)
    assert turns == [b, a, a, b]


def test_ten_row_ranch_and_no_removal():
    game = Game(GameConfig(num_players=2), seed=3)
    assert all(r.rows == 10 for r in game.ranches)
    rng = np.random.default_rng(3)
    while not game.is_over:
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(ids.size)]))
    assert game.removed == []  # all 96 plots are used
    placed = sum(int((r.plot >= 0).sum()) for r in game.ranches)
    assert placed + len(game.discarded) == 96
    assert max(r.reach for r in game.ranches) > 4  # ranches grow past the 5th row


def test_rows_eight_and_nine_are_buildable_and_row_ten_is_not():
    game = new_game(2)
    p = game.player
    set_hand(game, p, ["1", "1"])
    column_to_row_8(game, p, "desert")
    start_expansion(game, p)
    legal = set(game.legal_actions())
    assert Build(0, 1, 8, 0, True) in legal
    assert Build(0, 1, 9, 0, True) not in legal  # (9,0)-(10,0)


# -------------------------------------------------------------------- bonus tiles


def test_first_ranch_to_reach_row_nine_places_a_bonus_tile():
    game = new_game(2)
    p = game.player
    end_game_partners_only(game)
    set_hand(game, p, ["21", "21"])  # forests with one cow each
    column_to_row_8(game, p, "forest")
    start_expansion(game, p)
    assert game.bonus_tiles == [True, True]
    game.apply(Build(0, 1, 8, 0, True))  # reaches row 9
    assert game.phase == Phase.BONUS
    legal = set(game.legal_actions())
    assert Pass() not in legal
    assert legal == reference_bonus(game)
    assert Bonus(1, 0, 9, 1) in legal  # tile B forest face next to the forest at (9,0)
    assert Bonus(0, 0, 9, 1) not in legal  # tile A farm face: nothing to connect to there
    assert Bonus(0, 0, 1, 2) in legal  # ... except on a bridge
    game.apply(Bonus(1, 0, 9, 1))
    assert game.phase == Phase.RECRUIT  # the tile's circle
    game.apply(Recruit(0, Face.SPECIALIST, 0))
    assert game.phase == Phase.SELECT
    assert ranch_rows(game, p, 8, 9) == grid("""
        8 F1. . . . .
        9 F1. F.p . . .
    """)
    ranch = game.ranches[p]
    assert ranch.bonus_taken
    assert game.bonus_tiles == [True, False]
    assert ranch.kind[9 * 5 + 1] == game.data.bonus_kind(1, 0)
    assert ranch.plot[9 * 5 + 1] < 0  # a bonus tile, not a plot of the box

    # one tile per player: building in row 9 again earns nothing more
    hand_of(game, p, "forest")
    start_expansion(game, p)
    game.apply(Build(0, 1, 9, 2, False))
    assert game.phase == Phase.SELECT
    assert game.bonus_tiles == [True, False]


def test_second_ranch_to_reach_row_nine_gets_the_remaining_tile():
    game = new_game(2)
    p = game.player
    q = 1 - p
    game.bonus_tiles = [True, False]  # the first player already took tile B
    game.ranches[p].bonus_taken = True
    end_game_partners_only(game)
    set_hand(game, q, ["13", "13"])
    column_to_row_8(game, q, "farm")
    start_expansion(game, q)
    game.apply(Build(0, 1, 8, 0, True))
    assert game.phase == Phase.BONUS
    legal = set(game.legal_actions())
    assert legal == reference_bonus(game)
    assert {a.tile for a in legal} == {0}
    game.apply(Bonus(0, 0, 9, 1))  # the farm face
    game.apply(Recruit(0, Face.SPECIALIST, 0))
    assert game.bonus_tiles == [False, False]
    assert game.ranches[q].bonus_taken


def test_a_bonus_tile_that_cannot_be_placed_leaves_the_game():
    game = new_game(2)
    p = game.player
    game.bonus_tiles = [True, False]
    # deserts everywhere near the river: no bridge free, no farm or meadow to join
    set_hand(game, p, ["2", "2"])
    column_to_row_8(game, p, "desert", extra=((1, 2), (0, 4)))
    start_expansion(game, p)
    game.apply(Build(0, 1, 8, 0, True))
    assert game.phase == Phase.SELECT  # no BONUS decision
    assert game.bonus_tiles == [False, False]
    assert game.ranches[p].bonus_taken
    assert (game.ranches[p].kind >= game.data.num_box_kinds).sum() == 0
    assert any(e.get("event") == "bonus_lost" for e in game.history)


def test_no_bonus_tiles_with_more_players():
    game = new_game(4)
    p = game.player
    assert game.bonus_tiles == [False, False]
    clear_ranch(game, p)
    for r in range(3):
        put(game, p, r, 0, "1")
    set_hand(game, p, ["1", "1"])
    start_expansion(game, p)
    game.apply(Build(0, 1, 3, 0, True))  # reaches the last row of a 5-row ranch
    assert game.phase == Phase.SELECT
