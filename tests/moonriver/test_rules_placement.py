"""Rule scenarios: where a domino may go (RULES.md section 4.2, connection rules).

Each scenario builds a ranch with the test helpers, then asks the engine through ``apply`` and
``legal_actions``. A small reference implementation of the connection rules, written straight
from RULES.md, checks the engine's legal placements in random positions too.
"""

from __future__ import annotations

import numpy as np
import pytest

from moonriver_env.moonriver.rules import Build, Game, GameConfig, IllegalActionError, Pass, Phase
from tests.helpers import (
    clear_ranch,
    grid,
    new_game,
    put,
    ranch_grid,
    set_hand,
    start_expansion,
    view,
)

# ---------------------------------------------------------------- local helpers


def ready(game: Game, labels: list[str], player: int | None = None) -> int:
    """Empty the ranch of ``player`` (default: the player to act), give it plots, start building."""
    p = game.player if player is None else player
    clear_ranch(game, p)
    set_hand(game, p, labels)
    start_expansion(game, p)
    return p


def legal_builds(game: Game) -> set[Build]:
    """The Build actions the engine offers now."""
    return {a for a in game.legal_actions() if isinstance(a, Build)}


def reference_builds(game: Game) -> set[Build]:
    """Legal placements computed directly from RULES.md section 4.2 (independent of the engine)."""
    ranch = game.ranches[game.player]
    data = game.data
    held = [int(data.terrain[data.plot_kind[p]]) for p in ranch.hand][:5]
    rows = ranch.rows
    bridges = set(ranch.board.bridges)

    def inside(r: int, c: int) -> bool:
        return 0 <= r < rows and 0 <= c < 5

    def free(r: int, c: int) -> bool:
        return inside(r, c) and (r, c) != (0, 2) and ranch.terrain[r * 5 + c] < 0

    out = set()
    for a in range(len(held)):
        for b in range(len(held)):
            if a == b:
                continue
            for r in range(rows):
                for c in range(5):
                    for vertical in (False, True):
                        r2, c2 = (r + 1, c) if vertical else (r, c + 1)
                        if not (free(r, c) and free(r2, c2)):
                            continue
                        ok = (r, c) in bridges or (r2, c2) in bridges
                        for (x, y), t in (((r, c), held[a]), ((r2, c2), held[b])):
                            for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                                nx, ny = x + dx, y + dy
                                if inside(nx, ny) and ranch.terrain[nx * 5 + ny] == t:
                                    ok = True
                        if ok:
                            out.add(Build(a, b, r, c, vertical))
    return out


def snapshot(game: Game) -> tuple:
    """Everything an illegal action must leave untouched."""
    return (game.phase, game.player, game.supply, [list(r.hand) for r in game.ranches],
            [view(game, p) for p in range(game.num_players)], game.legal_action_ids().tolist(),
            list(game.saloon), list(game.discarded), len(game.history))


def assert_refused(game: Game, action, reason_part: str) -> None:
    """The action raises IllegalActionError naming ``reason_part`` and changes nothing."""
    before = snapshot(game)
    with pytest.raises(IllegalActionError) as err:
        game.apply(action)
    assert reason_part in str(err.value)
    assert snapshot(game) == before


# ------------------------------------------------------------------------ bridges


def test_bridge_accepts_any_terrain_on_an_empty_ranch():
    game = new_game(4)
    p = ready(game, ["1", "19"])  # plain desert, plain forest
    builds = legal_builds(game)
    assert builds == reference_builds(game)
    bridges = {(0, 0), (1, 2), (0, 4)}
    assert builds, "an empty ranch always offers the bridges"
    assert all(set(b.cells) & bridges for b in builds)
    # every placement covering a bridge is offered, in both slot orders
    assert Build(0, 1, 1, 2, True) in builds and Build(1, 0, 1, 2, True) in builds
    assert Build(0, 1, 0, 3, False) in builds  # (0,3)-(0,4): the second plot on the bridge
    assert Build(0, 1, 1, 0, True) not in builds  # (1,0)-(2,0): touches nothing

    game.apply(Build(0, 1, 0, 0, True))  # desert on the bridge (0,0), forest below it
    assert ranch_grid(game, p, 3) == grid("""
        0 D.. . ### . =
        1 F.. . = . .
        2 . . . . .
    """)
    assert game.ranches[p].hand == []


def test_legend_boards_use_their_own_bridges():
    game = new_game(4, mode="legends", boards=("calamity", "mary", "wesley", "big_jo"), scenario=1)
    p = ready(game, ["1", "19"], player=0)  # calamity: bridges (0,1) and (0,3)
    builds = legal_builds(game)
    assert builds == reference_builds(game)
    assert all(set(b.cells) & {(0, 1), (0, 3)} for b in builds)
    assert_refused(game, Build(0, 1, 0, 0, True), "does not connect")  # a Camp bridge only
    game.apply(Build(0, 1, 0, 1, True))
    assert ranch_grid(game, p, 2) == grid("""
        0 . D.. ### = .
        1 . F.. . . .
    """)


# ------------------------------------------------------------- terrain matching


def test_terrain_match_connects_either_plot_of_the_domino():
    game = new_game(4)
    p = ready(game, ["19", "1"])  # slot 0 forest, slot 1 desert
    put(game, p, 2, 2, "19")  # a lone forest away from every bridge
    start_expansion(game, p)
    assert ranch_grid(game, p, 3) == grid("""
        0 = . ### . =
        1 . . = . .
        2 . . F.. . .
    """)
    builds = legal_builds(game)
    assert builds == reference_builds(game)
    # the forest (second plot) touches the forest: legal
    assert Build(1, 0, 2, 0, False) in builds
    # the forest (first plot) touches the forest from below: legal
    assert Build(0, 1, 3, 2, True) in builds
    # swapped: only the desert touches the forest -> a mismatch, illegal
    assert Build(0, 1, 2, 0, False) not in builds
    assert Build(1, 0, 3, 2, True) not in builds

    game.apply(Build(1, 0, 2, 0, False))
    assert ranch_grid(game, p, 3) == grid("""
        0 = . ### . =
        1 . . = . .
        2 D.. F.. F.. . .
    """)


def test_mismatched_terrain_is_refused_and_state_unchanged():
    game = new_game(4)
    p = ready(game, ["19", "1"])
    put(game, p, 2, 2, "19")
    start_expansion(game, p)
    before = ranch_grid(game, p)
    # desert (slot 1) at (2,1) next to the forest, forest (slot 0) at (2,0) next to nothing
    assert_refused(game, Build(0, 1, 2, 0, False), "does not connect")
    # touching nothing at all
    assert_refused(game, Build(0, 1, 4, 0, False), "does not connect")
    assert ranch_grid(game, p) == before
    game.apply(Build(1, 0, 2, 0, False))  # the game goes on normally afterwards
    assert game.ranches[p].terrain[2 * 5 + 1] >= 0


# ------------------------------------------------------- off the grid, homestead


def test_off_grid_placements_are_refused_and_state_unchanged():
    game = new_game(4)
    p = ready(game, ["1", "1"])
    put(game, p, 3, 0, "1")  # a desert that the off-grid domino would touch
    put(game, p, 3, 4, "1")
    start_expansion(game, p)
    assert_refused(game, Build(0, 1, 4, 0, True), "off the 5x5 ranch")  # (4,0)-(5,0)
    assert_refused(game, Build(0, 1, 4, 4, False), "off the 5x5 ranch")  # (4,4)-(4,5)
    assert_refused(game, Build(0, 1, 0, 4, False), "off the 5x5 ranch")  # bridge, then col 5
    assert_refused(game, Build(0, 1, 7, 0, False), "off the 5x5 ranch")  # rows of a 2p ranch
    with pytest.raises(IllegalActionError):  # not even an action of the enumeration
        game.apply(Build(0, 1, 10, 0, False))
    assert game.phase == Phase.BUILD
    assert Build(0, 1, 4, 0, False) in legal_builds(game)


def test_homestead_is_never_built_on():
    game = new_game(4)
    p = ready(game, ["1", "1"])
    put(game, p, 0, 1, "1")
    put(game, p, 0, 3, "1")
    start_expansion(game, p)
    # each of these would connect (a bridge or a matching desert) but covers (0,2)
    assert_refused(game, Build(0, 1, 0, 2, True), "homestead")  # (0,2)-(1,2) bridge
    assert_refused(game, Build(0, 1, 0, 1, False), "already built")  # (0,1) is taken
    ranch = game.ranches[p]
    assert ranch.terrain[2] == -1
    for b in legal_builds(game):
        assert (0, 2) not in b.cells
    for a in game.legal_actions():
        assert not (isinstance(a, Build) and (0, 2) in a.cells)


def test_occupied_cells_are_refused():
    game = new_game(4)
    p = ready(game, ["1", "1"])
    put(game, p, 0, 0, "1")
    start_expansion(game, p)
    assert_refused(game, Build(0, 1, 0, 0, True), "already built")
    assert_refused(game, Build(0, 1, 0, 0, False), "already built")


def test_a_placed_domino_never_moves():
    game = new_game(4)
    p = ready(game, ["1", "19"])
    game.apply(Build(0, 1, 0, 0, True))  # desert (0,0), forest (1,0)
    set_hand(game, p, ["1", "19"])
    start_expansion(game, p)
    game.apply(Build(1, 0, 1, 1, False))  # forest (1,1) next to the forest, desert on (1,2)
    assert ranch_grid(game, p, 2) == grid("""
        0 D.. . ### . =
        1 F.. F.. D.. . .
    """)


# --------------------------------------------------- the rules vs the engine


@pytest.mark.parametrize(("players", "mode"), [(4, "base"), (3, "base"), (2, "base"),
                                               (4, "legends")])
def test_legal_builds_match_the_connection_rules_in_random_games(players, mode):
    checked = 0
    for seed in range(3):
        game = Game(GameConfig(num_players=players, mode=mode), seed=seed)
        rng = np.random.default_rng(seed)
        while not game.is_over:
            if game.phase == Phase.BUILD:
                assert legal_builds(game) == reference_builds(game)
                checked += 1
            ids = game.legal_action_ids()
            game.apply(int(ids[rng.integers(ids.size)]))
    assert checked > 20


def test_pass_is_a_build_phase_choice_only_when_not_forced():
    game = new_game(4)
    ready(game, ["1", "19"])
    assert Pass() in game.legal_actions()
    game.apply(Pass())
    assert game.phase == Phase.SELECT
