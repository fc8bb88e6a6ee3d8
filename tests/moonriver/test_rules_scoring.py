"""Rule scenarios: scoring, the Legends scenarios and tie-breaks (RULES.md sections 7 and 8).

Ranches are laid out plot by plot with ``put``; scores come from ``running_scores`` (which
applies overpopulation), from ``score_ranch`` directly, and from ``winners``.
"""

from __future__ import annotations

import textwrap

import numpy as np

from moonriver_env.moonriver.rules import Face, Game, PartnerKind, ScoreBreakdown
from moonriver_env.moonriver.rules.scoring import score_ranch
from tests.helpers import clear_ranch, grid, kind_id, new_game, put, ranch_grid, variant_manifest

DE, CT, GD, TR, FA = (PartnerKind.DESPERADO, PartnerKind.CATTLE_THIEF, PartnerKind.GOLD_DIGGER,
                      PartnerKind.TRAPPER, PartnerKind.FARMER)

# ---------------------------------------------------------------- local helpers


def table(num_players: int = 4, **kw) -> Game:
    """A game with every ranch empty and every plot back in the box, to lay out by hand."""
    game = new_game(num_players, **kw)
    for column in (game.active, game.pending):
        for pos, plot in enumerate(column):
            if plot >= 0:
                game.box.append(plot)
                column[pos] = -1
    for p in range(num_players):
        clear_ranch(game, p)
        game.box.extend(game.ranches[p].hand)
        game.ranches[p].hand = []
    return game


def lay(game: Game, player: int, layout: str, cows: dict | None = None) -> None:
    """Put plots by kind label: ``layout`` rows of labels separated by blanks ('.' empty).

    When the box has no plot of a kind left (several ranches laid out in one test), a plot id
    of that kind is borrowed: scoring reads only kinds, never plot ids.
    """
    cows = cows or {}
    for r, line in enumerate(textwrap.dedent(layout).strip().splitlines()):
        for c, label in enumerate(line.split()):
            if label in (".", "#"):
                continue
            try:
                put(game, player, r, c, label, cows.get((r, c), 0))
            except LookupError:
                kid = kind_id(game, label)
                plot = int(np.flatnonzero(game.data.plot_kind == kid)[0])
                ranch = game.ranches[player]
                ranch.place(r * 5 + c, plot, kid, int(game.data.terrain[kid]))
                ranch.add_cows(r * 5 + c, cows.get((r, c), 0))  # a fresh plot: no cows yet


def partner(game: Game, player: int, row: int, col: int, kind: PartnerKind,
            face: Face = Face.SPECIALIST) -> None:
    """Put a partner token of a specialist kind on a plot (taken from the pile when one is
    left there, else borrowed: scoring reads only kinds and faces)."""
    kinds = game.data.partner_specialists
    token = next((t for t in game.pile if kinds[t] == kind), None)
    if token is None:
        token = kinds.index(kind)
    else:
        game.pile.remove(token)
    game.ranches[player].set_partner(row * 5 + col, token, face)


def score(game: Game, player: int = 0) -> ScoreBreakdown:
    """Running score of a player."""
    return game.running_scores()[player]


# --------------------------------------------------------- the rulebook example

CHARLIE = """
    2  2  #  6  6
    1  1  1  7  7
    8  8  8  7  7
    13 13 13 13 7
    20 25 25 25 25
    25 24 23 .  .
"""
CHARLIE_COWS = {(0, 0): 1, (0, 3): 1, (1, 4): 1, (3, 4): 1, (2, 0): 1, (2, 2): 1,
                (3, 0): 1, (3, 1): 1, (3, 2): 1, (3, 3): 1}


def charlie(crowded: bool = False) -> Game:
    """Charlie's ranch from the rulebook's scoring example, on a 10-row (2-player) ranch."""
    game = table(2)
    cows = dict(CHARLIE_COWS)
    if crowded:  # before overpopulation: extra cows the end of the game will send back
        cows.update({(3, 0): 2, (3, 3): 2, (0, 3): 2})
    lay(game, 0, CHARLIE, cows)
    partner(game, 0, 3, 0, FA)
    return game


def test_rulebook_scoring_example_is_worth_89():
    game = charlie()
    assert ranch_grid(game, 0, 6) == grid("""
        0 D1. D.. ### C1. C..
        1 D.. D.. D.. C.. C1.
        2 M1. M.. M1. C.. C..
        3 R1f R1. R1. R1. C1.
        4 F.. Z.. Z.. Z.. Z..
        5 Z.. Z.. Z.. . .
    """)
    s = score(game)
    # territories: desert 5x1 + canyon 7x3 + meadow 3x2 + farm 4x4 + forest 0
    assert s.territories == 5 + 21 + 6 + 16
    assert s.resources == 4 + 1 + 18  # nuggets, beaver, corn
    assert s.partners == 18  # the Farmer: one point per corn
    assert s.scenario == 0
    assert s.total == 89
    assert (s.largest_territory, s.cows) == (7, 10)


def test_rulebook_example_scored_by_score_ranch():
    game = charlie()
    ranch = game.ranches[0]
    kinds = np.where(ranch.face == Face.SPECIALIST,
                     np.array((*game.data.partner_specialists, PartnerKind.COWBOY))[ranch.partner],
                     PartnerKind.COWBOY)
    s = score_ranch(ranch.terrain, ranch.kind, ranch.cows, kinds, ranch.face, game.data, None)
    assert s.to_dict() == {"territories": 48, "resources": 23, "partners": 18, "scenario": 0,
                           "largest_territory": 7, "cows": 10, "total": 89}


def test_rulebook_example_after_overpopulation():
    game = charlie(crowded=True)
    assert int(game.ranches[0].cows.sum()) == 13
    assert score(game).total == 89  # overpopulation first: one cow per plot


# ------------------------------------------------------------------- categories


def test_each_territory_scores_plots_times_cows():
    game = table()
    lay(game, 0, """
        8 8 # . .
        . . . . .
        8 8 8 . .
    """, cows={(0, 0): 1, (2, 2): 1})
    # two meadows apart: 2x1 + 3x1, not one meadow of 5 with 2 cows
    assert score(game).territories == 5


def test_cornfields_score_nothing_and_territories_without_cows_neither():
    game = table()
    lay(game, 0, """
        23 23 # 19 19
    """, cows={(0, 0): 1})  # a cow where no cow could stand, to probe the rule
    s = score(game)
    assert s.territories == 0
    assert s.resources == 2


def test_specialists_count_only_on_their_specialist_face():
    game = table()
    lay(game, 0, """
        25 14 # 2 20
        .  14 . . .
    """)
    partner(game, 0, 0, 1, FA)  # 3 corn
    partner(game, 0, 1, 1, GD, Face.COWBOY)  # a Cowboy: no end-game points
    assert score(game).partners == 3
    partner(game, 0, 0, 3, GD)  # 1 nugget
    partner(game, 0, 0, 4, TR)  # 1 beaver
    partner(game, 0, 0, 0, FA)  # a second Farmer counts the corn again
    assert score(game).partners == 3 + 1 + 1 + 3
    assert score(game).resources == 5


def test_base_game_has_no_scenario_points():
    game = table()
    lay(game, 0, """
        21 21 # . .
        21 21 . . .
        21 21 . . .
    """)
    assert score(game).scenario == 0


# ---------------------------------------------------------------- Legends scenarios


def legends(scenario: int) -> Game:
    """An empty Legends table for one scenario."""
    return table(4, mode="legends", scenario=scenario,
                 boards=("mary", "wesley", "calamity", "big_jo"))


def test_timber_rafting():
    game = legends(1)
    lay(game, 0, """
        19 20 # . .
        21 21 . . .
        22 19 . . .
    """)  # six forests touching the river
    assert score(game).scenario == 40
    lay(game, 1, """
        .  .  # . .
        19 20 . . .
        21 21 . . .
        22 19 . . .
    """)  # the same six forests, one row away from the river
    assert score(game, 1).scenario == 0
    lay(game, 2, """
        21 . # . 21
        21 . . . 20
        21 . . . 20
    """)  # two groups of three at the river
    assert score(game, 2).scenario == 20
    lay(game, 3, """
        21 21 # . .
        .  .  . . .
        22 22 22 . .
    """)  # two at the river (too few) and three away from it
    assert score(game, 3).scenario == 0


def test_gold_rush():
    game = legends(2)
    lay(game, 0, """
        2  6  # . .
        12 2  . . .
        6  10 . . .
    """)  # six nugget plots of several terrains
    assert score(game).scenario == 40
    lay(game, 1, """
        2 6 # 6 2
        1 1 . . 12
        . . . . 2
    """)  # a group of 2 (too few) on the left, a group of 4 on the right
    assert score(game, 1).scenario == 20
    lay(game, 2, """
        2 . # . 6
        2 . . . 6
        5 . . . 12
    """)  # two groups of three
    assert score(game, 2).scenario == 20


def test_gold_rush_counts_nugget_symbols(tmp_path):
    # The shipped plots bear at most one nugget; a manifest with two per plot tells units apart.
    path = variant_manifest(tmp_path, "2", nugget="2")
    game = table(4, mode="legends", scenario=2, boards=("mary", "wesley", "calamity", "big_jo"),
                 plots_file=str(path))
    lay(game, 0, """
        2 2 # . .
        2 . . . .
    """)  # three plots, six nuggets
    assert score(game).scenario == 40
    assert score(game).resources == 6


def test_outlaws():
    game = legends(3)
    for p in range(3):
        lay(game, p, """
            1 1 # . .
            1 1 . . .
            1 1 . . .
        """)
    cells = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
    for r, c in cells:  # six connected partners, one a Desperado on its specialist face
        partner(game, 0, r, c, DE if (r, c) == (2, 1) else TR, Face.SPECIALIST)
    assert score(game).scenario == 40
    for r, c in cells:  # the same, but the Desperado shows its Cowboy face
        outlaw = (r, c) == (2, 1)
        partner(game, 1, r, c, DE if outlaw else TR, Face.COWBOY if outlaw else Face.SPECIALIST)
    assert score(game, 1).scenario == 0
    for r, c in [(0, 0), (1, 0), (2, 0)]:
        partner(game, 2, r, c, CT if r == 0 else GD)
    assert score(game, 2).scenario == 10


def test_outlaws_two_groups_of_three():
    game = legends(3)
    lay(game, 0, """
        1 . # . 1
        1 . . . 1
        1 . . . 1
    """)
    for r in range(3):
        partner(game, 0, r, 0, CT if r == 1 else FA)
        partner(game, 0, r, 4, DE if r == 2 else GD)
    assert score(game).scenario == 20


def test_moon_river_city():
    game = legends(4)
    lay(game, 0, """
        13 14 # . .
        15 16 . . .
        17 18 . . .
    """)
    assert score(game).scenario == 40
    lay(game, 1, """
        13 . # . 13
        14 . . . 14
        17 . . . 17
    """)
    assert score(game, 1).scenario == 20
    lay(game, 2, """
        13 13 # . .
    """)
    assert score(game, 2).scenario == 0


def test_scenario_points_join_the_total():
    game = legends(4)
    lay(game, 0, """
        13 14 # . .
        15 . . . .
    """, cows={(0, 0): 1})
    s = score(game)
    assert (s.territories, s.scenario, s.total) == (3, 10, 13)


# ---------------------------------------------------------------------- tie-breaks


def test_highest_total_wins_before_any_tie_break():
    game = table()
    lay(game, 0, "8 8 # . .", cows={(0, 0): 1})  # 2 points
    lay(game, 1, "19 19 # 19 19\n19 19 19 19 19", cows={})  # large but worthless
    lay(game, 1, ". . . . .\n. . . . .\n8 . . . .", cows={(2, 0): 1})  # 1 point
    assert [score(game, p).total for p in range(2)] == [2, 1]
    assert game.winners() == [0]


def test_tie_goes_to_the_largest_territory():
    game = table()
    lay(game, 0, """
        8 . # . .
        8 . . . .
        8 . . . .
    """, cows={(0, 0): 1})  # meadow 3 x 1 cow = 3, largest 3
    lay(game, 1, """
        1 . # . 24
    """, cows={(0, 0): 1})  # desert 1 x 1 + 2 corn = 3, largest 1
    s0, s1 = score(game, 0), score(game, 1)
    assert s0.total == s1.total == 3
    assert (s0.largest_territory, s1.largest_territory) == (3, 1)
    assert game.winners() == [0]


def test_then_to_the_most_cows():
    game = table()
    lay(game, 0, """
        8 8 # . .
    """, cows={(0, 0): 1})  # 2 points, largest 2, 1 cow
    lay(game, 1, """
        8 . # . 8
        1 . . . .
        1 . . . .
    """, cows={(0, 0): 1, (0, 4): 1})  # 1 + 1 points, largest 2, 2 cows
    s0, s1 = score(game, 0), score(game, 1)
    assert (s0.total, s0.largest_territory) == (s1.total, s1.largest_territory) == (2, 2)
    assert (s0.cows, s1.cows) == (1, 2)
    assert game.winners() == [1]


def test_otherwise_the_victory_is_shared():
    game = table()
    for p in (0, 2):
        lay(game, p, """
            8 8 # . .
        """, cows={(0, 1): 1})
    assert game.winners() == [0, 2]


def test_tie_break_order_with_given_scores(monkeypatch):
    game = new_game(4)

    def board(*rows):
        return [ScoreBreakdown(t, 0, 0, 0, big, cows) for t, big, cows in rows]

    cases = [
        (board((10, 1, 0), (9, 9, 9), (10, 1, 0), (0, 0, 0)), [0, 2]),
        (board((10, 2, 0), (10, 3, 0), (10, 1, 9), (0, 0, 0)), [1]),
        (board((10, 3, 1), (10, 3, 2), (10, 3, 2), (0, 0, 0)), [1, 2]),
        (board((5, 3, 2), (5, 3, 2), (5, 3, 2), (5, 3, 2)), [0, 1, 2, 3]),
    ]
    for scores, winners in cases:
        monkeypatch.setattr(game, "running_scores", lambda scores=scores: scores)
        assert game.winners() == winners
