"""Random-play fuzzing of the rules engine with state invariants checked after every decision.

Every decision of every fuzzed game is followed by a full check of the table: conservation of
the 96 plots, the 32 cows and the 20 partner tokens, the shape of every ranch, the legal mask
against an independent oracle for domino placements, and a sample of illegal ids that must be
refused without changing the state. On a subset of games every legal action of every decision
is also applied to a clone. At the end, the scores are recomputed independently.

The default run stays small (well under a minute on a slow machine); ``-m slow`` runs a sweep
of thousands of games.
"""

from __future__ import annotations

import pickle
from collections import Counter
from itertools import product

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moonriver_env.moonriver.rules import (
    NUM_ACTIONS,
    Face,
    Game,
    GameConfig,
    IllegalActionError,
    PartnerKind,
    Phase,
    Terrain,
)
from moonriver_env.moonriver.rules import actions as A
from moonriver_env.moonriver.rules.ranch import Ranch
from moonriver_env.moonriver.rules.scoring import score_ranch, score_tracked

NUM_PLOTS = 96
NUM_COWS = 32
COLS = 5
HOMESTEAD = (0, 2)

VARIANTS = [(n, mode) for n in (2, 3, 4) for mode in ("base", "legends")]
VARIANT_IDS = [f"{n}p-{mode}" for n, mode in VARIANTS]


# ----------------------------------------------------------------------------- oracles
def _raw(value: object) -> object:
    return value.tobytes() if isinstance(value, np.ndarray) else value


def fingerprint(game: Game) -> bytes:
    """The whole state of one game object, to detect any change in it.

    Everything pickle keeps (caches excluded), with ranch arrays as raw bytes and the history
    (which only grows) as its length, to keep this cheap. Compare fingerprints of the same
    object only: pickle's memo follows object identity, so equal states of different objects
    may pickle differently.
    """
    state = game.__getstate__()
    state["_history"] = len(state["_history"])
    state["ranches"] = [[_raw(getattr(r, name, None)) for name in Ranch.__slots__]
                        for r in state["ranches"]]
    return pickle.dumps(state)


def _neighbours(cell: int, rows: int) -> list[int]:
    r, c = divmod(cell, COLS)
    out = []
    for dr, dc in ((-1, 0), (0, 1), (1, 0), (0, -1)):
        rr, cc = r + dr, c + dc
        if 0 <= rr < rows and 0 <= cc < COLS:
            out.append(rr * COLS + cc)
    return out


def _groups(labels: list[int], rows: int) -> list[list[int]]:
    """Connected groups of cells with equal non-negative labels (independent of the engine)."""
    seen: set[int] = set()
    out = []
    for start in range(rows * COLS):
        if labels[start] < 0 or start in seen:
            continue
        group, stack = [], [start]
        seen.add(start)
        while stack:
            cell = stack.pop()
            group.append(cell)
            for n in _neighbours(cell, rows):
                if n not in seen and labels[n] == labels[start]:
                    seen.add(n)
                    stack.append(n)
        out.append(group)
    return out


def cell_kinds(game: Game, player: int) -> list[int]:
    """Kind id per cell derived from the plot ids (bonus tiles: the engine's kind)."""
    ranch, data, size = game.ranches[player], game.data, game.config.rows * COLS
    plot = ranch.plot[:size].astype(np.int64)
    kinds = np.full(size, -1, dtype=np.int64)
    box = plot >= 0
    kinds[box] = data.plot_kind[plot[box]]
    bonus = plot < -1
    kinds[bonus] = ranch.kind[:size][bonus]
    return kinds.tolist()


def oracle_score(game: Game, player: int, overpopulated: bool = False) -> dict[str, int]:
    """Independent recomputation of one player's score (cows as they stand now, or at most
    one per plot with ``overpopulated``)."""
    data, ranch, rows = game.data, game.ranches[player], game.config.rows
    kinds = cell_kinds(game, player)
    terrain = [int(data.terrain[k]) if k >= 0 else -1 for k in kinds]
    cows = [int(ranch.cows[c]) for c in range(rows * COLS)]
    if overpopulated:
        cows = [min(c, 1) for c in cows]
    nuggets = sum(int(data.nugget[k]) for k in kinds if k >= 0)
    beavers = sum(int(data.beaver[k]) for k in kinds if k >= 0)
    corn = sum(int(data.corn[k]) for k in kinds if k >= 0)
    territories = 0
    terr_groups = _groups(terrain, rows)
    for g in terr_groups:
        if terrain[g[0]] != Terrain.CORNFIELD:
            territories += len(g) * sum(cows[c] for c in g)
    partners = 0
    shown = [-1] * (rows * COLS)
    for cell in range(rows * COLS):
        token = int(ranch.partner[cell])
        if token < 0:
            continue
        if int(ranch.face[cell]) == Face.COWBOY:
            shown[cell] = PartnerKind.COWBOY
            continue
        kind = data.partner_specialists[token]
        shown[cell] = kind
        partners += {PartnerKind.GOLD_DIGGER: nuggets, PartnerKind.TRAPPER: beavers,
                     PartnerKind.FARMER: corn}.get(kind, 0)

    def value(units: int) -> int:
        return 10 + 10 * (units - 3)

    scenario = 0
    if game.scenario in (1, 4):
        wanted = Terrain.FOREST if game.scenario == 1 else Terrain.FARM
        for g in terr_groups:
            if terrain[g[0]] == wanted and len(g) >= 3 and (
                    game.scenario == 4 or any(c < COLS for c in g)):
                scenario += value(len(g))
    elif game.scenario == 2:
        label = [0 if k >= 0 and data.nugget[k] > 0 else -1 for k in kinds]
        for g in _groups(label, rows):
            if len(g) >= 3:
                scenario += value(sum(int(data.nugget[kinds[c]]) for c in g))
    elif game.scenario == 3:
        label = [0 if s >= 0 else -1 for s in shown]
        outlaws = (PartnerKind.DESPERADO, PartnerKind.CATTLE_THIEF)
        for g in _groups(label, rows):
            if len(g) >= 3 and any(shown[c] in outlaws for c in g):
                scenario += value(len(g))
    return {"territories": territories, "resources": nuggets + beavers + corn,
            "partners": partners, "scenario": scenario,
            "largest_territory": max((len(g) for g in terr_groups), default=0),
            "cows": sum(cows)}


def oracle_build_ids(game: Game) -> set[int]:
    """Legal Build ids computed from the connection rules alone (RULES.md 4.2)."""
    player = game.current_player
    ranch, data, rows = game.ranches[player], game.data, game.config.rows
    bridges = {r * COLS + c for r, c in data.boards[game.board_names[player]].bridges}
    placed_terrain = {}
    for cell in range(rows * COLS):
        if int(ranch.plot[cell]) != -1:
            placed_terrain[cell] = int(ranch.terrain[cell])

    def usable_empty(cell: int) -> bool:
        return cell < rows * COLS and cell != 2 and cell not in placed_terrain

    def touches(cell: int, terr: int) -> bool:
        return any(placed_terrain.get(n) == terr for n in _neighbours(cell, rows))

    plot_terrain = [int(data.terrain[data.plot_kind[p]]) for p in ranch.hand]
    out = set()
    for q, (a, b) in enumerate(A.PAIRS):
        if max(a, b) >= len(ranch.hand):
            continue
        for cell in range(rows * COLS):
            r, c = divmod(cell, COLS)
            for vertical in (False, True):
                if (r + 1 >= rows) if vertical else (c + 1 >= COLS):
                    continue
                second = cell + (COLS if vertical else 1)
                if not (usable_empty(cell) and usable_empty(second)):
                    continue
                if (cell in bridges or second in bridges or touches(cell, plot_terrain[a])
                        or touches(second, plot_terrain[b])):
                    out.add(A.BUILD0 + q * 100 + cell * 2 + int(vertical))
    return out


def _territory(terrain: list[int], cell: int, rows: int) -> list[int]:
    return next(g for g in _groups(terrain, rows) if cell in g)


def oracle_choices(game: Game) -> set[int] | None:
    """Legal ids of a non-build decision, from the rules (RULES.md 3-8); None for BUILD."""
    ctx, data, rows, n = game.context(), game.data, game.config.rows, game.num_players
    player = ctx.player
    ranch = game.ranches[player]
    terrain = [int(t) for t in ranch.terrain[:rows * COLS]]
    phase = ctx.phase
    if phase in (Phase.SETUP, Phase.SELECT):
        column = game.active if phase == Phase.SETUP else game.pending
        owner = game.active_owner if phase == Phase.SETUP else game.pending_owner
        assert column is not None and not ctx.last_round
        return {A.SELECT0 + pos for pos in range(4) if column[pos] >= 0 and owner[pos] < 0}
    if phase == Phase.DISCARD:
        assert ctx.forced and ctx.builds_done == 0 and not oracle_build_ids(game)
        return {A.DISCARD0 + A.UNORDERED_PAIRS.index((a, b)) for a in range(len(ranch.hand))
                for b in range(a + 1, len(ranch.hand))}
    if phase == Phase.DROUGHT:
        herd = _territory(terrain, ctx.skull_cell, rows)
        assert data.skull[ranch.kind[ctx.skull_cell]]
        return {A.DROUGHT0 + c for c in herd if ranch.cows[c] > 0}
    if phase == Phase.RECRUIT:
        circles = [c for c in range(2) if ctx.circles[c] >= 0]
        for c in circles:
            cell = ctx.circles[c]
            assert data.circle[ranch.kind[cell]] and ranch.partner[cell] < 0
        return {A.RECRUIT0 + (s * 2 + f) * 2 + c for s in range(5) if game.saloon[s] >= 0
                for f in range(2) for c in circles}
    if phase == Phase.COWBOY:
        assert 1 <= ctx.cowboy_moves_left <= 3
        assert int(ranch.face[ctx.effect_cell]) == Face.COWBOY
        moves = {A.PASS_ID}
        for cell in range(rows * COLS):
            if ranch.cows[cell] > 0:
                for d, nb in enumerate((cell - COLS, cell + 1, cell + COLS, cell - 1)):
                    if (d in (1, 3) and nb // COLS != cell // COLS) or not 0 <= nb < rows * COLS:
                        continue
                    if terrain[nb] >= 0 and terrain[nb] != Terrain.CORNFIELD:
                        moves.add(A.COWBOY0 + cell * 4 + d)
        return moves
    if phase == Phase.DESPERADO:
        assert data.partner_specialists[ranch.partner[ctx.effect_cell]] == PartnerKind.DESPERADO
        out = {A.PASS_ID}
        for o in range(1, n):
            theirs = game.ranches[(player + o) % n].hand
            out |= {A.DESPERADO0 + (i * 3 + o - 1) * 5 + j for i in range(len(ranch.hand))
                    for j in range(len(theirs))}
        return out
    if phase == Phase.THIEF:
        assert (data.partner_specialists[ranch.partner[ctx.effect_cell]]
                == PartnerKind.CATTLE_THIEF)
        assert terrain[ctx.effect_cell] != Terrain.CORNFIELD
        out = {A.PASS_ID}
        for o in range(1, n):
            victim = game.ranches[(player + o) % n]
            vterr = [int(t) for t in victim.terrain[:rows * COLS]]
            for cell in range(rows * COLS):
                if victim.cows[cell] > 0 and not any(
                        victim.partner[c] >= 0 for c in _territory(vterr, cell, rows)):
                    out.add(A.THIEF0 + (o - 1) * 50 + cell)
        return out
    if phase == Phase.BONUS:
        assert n == 2 and ranch.reach >= 9 and not ranch.bonus_taken
        bridges = {r * COLS + c for r, c in data.boards[game.board_names[player]].bridges}
        out = set()
        for t in range(2):
            if not game.bonus_tiles[t]:
                continue
            for f in range(2):
                face_terrain = int(data.terrain[data.bonus_kind(t, f)])
                for cell in range(rows * COLS):
                    if cell == 2 or terrain[cell] >= 0:
                        continue
                    if cell in bridges or any(terrain[nb] == face_terrain
                                              for nb in _neighbours(cell, rows)):
                        out.add(A.BONUS0 + (t * 2 + f) * 50 + cell)
        return out
    assert phase == Phase.BUILD
    return None


# ------------------------------------------------------------------------- invariants
def check_conservation(game: Game) -> None:
    """Plots, cows and partner tokens are each accounted for exactly once."""
    plots = list(game.box)
    plots += [p for p in game.active if p >= 0]
    if game.pending is not None:
        plots += [p for p in game.pending if p >= 0]
    for ranch in game.ranches:
        plots += ranch.hand
        plots += ranch.plot[ranch.plot >= 0].tolist()
    plots += game.removed + game.discarded
    if sorted(plots) != list(range(game.data.num_plots)):
        dupes = sorted(p for p, n in Counter(plots).items() if n > 1)
        lost = sorted(set(range(game.data.num_plots)) - set(plots))
        raise AssertionError(f"plots held twice: {dupes}; plots lost: {lost}; "
                             f"{len(plots)} held of {game.data.num_plots}")

    on_ranches = 0
    for p, ranch in enumerate(game.ranches):
        assert (ranch.cows >= 0).all(), f"negative cows on ranch {p}"
        on_ranches += int(ranch.cows.sum())
    assert game.supply >= 0, "negative cow supply"
    assert on_ranches + game.supply == NUM_COWS, "cows lost or invented"

    tokens = list(game.pile) + [t for t in game.saloon if t >= 0]
    for ranch in game.ranches:
        tokens += ranch.partner[ranch.partner >= 0].tolist()
    assert sorted(tokens) == list(range(game.data.num_partners)), "partner tokens lost or doubled"


def check_ranches(game: Game) -> None:
    """Shape of every ranch: homestead empty, cows only on plots, partners on circles."""
    data, size = game.data, game.config.rows * COLS
    # With the package data no cornfield bears a cow symbol, and no effect puts a cow there.
    cornfield_cows = bool(((data.terrain == Terrain.CORNFIELD) & (data.cows > 0)).any())
    for p, ranch in enumerate(game.ranches):
        assert ranch.plot[2] == -1 and ranch.kind[2] == -1, "homestead built on"
        for name in ("plot", "kind", "partner"):
            assert (getattr(ranch, name)[size:] == -1).all(), f"{name} beyond the ranch's rows"
        assert not ranch.cows[size:].any(), "cows beyond the ranch's rows"
        kinds = np.array(cell_kinds(game, p))
        assert np.array_equal(kinds, ranch.kind[:size]), "kind does not match plot"
        plot = ranch.plot[:size]
        assert int((plot >= 0).sum()) % 2 == 0, "box plots are placed two by two"
        bonus = plot[plot < -1].tolist()
        assert len(bonus) == len(set(bonus)) and set(bonus) <= {-2, -3}
        assert game.num_players == 2 or not bonus, "bonus tile outside the 2-player game"
        cows = ranch.cows[:size]
        assert not cows[kinds < 0].any(), f"cow on an empty cell of ranch {p}"
        if not cornfield_cows:
            placed = kinds >= 0
            on_corn = data.terrain[kinds[placed]] == Terrain.CORNFIELD
            assert not cows[placed][on_corn].any(), "cow on a cornfield"
        held = ranch.partner[:size] >= 0
        assert (kinds[held] >= 0).all() and data.circle[kinds[held]].all(), "partner off a circle"
        face = ranch.face[:size]
        assert ((face[held] == Face.SPECIALIST) | (face[held] == Face.COWBOY)).all()
        assert (face[~held] == -1).all()
        limit = ranch.capacity + (1 if p == game.current_player else 0)
        assert len(ranch.hand) <= limit, f"player {p} holds {len(ranch.hand)} plots"


def check_mask(game: Game) -> None:
    """The mask is well formed and agrees with the independent placement oracle."""
    mask = game.legal_mask()
    assert mask.shape == (NUM_ACTIONS,) and mask.dtype == np.int8
    assert set(np.unique(mask).tolist()) <= {0, 1}
    ids = game.legal_action_ids()
    assert [A.ACTIONS[i] for i in ids.tolist()] == game.legal_actions()
    if game.is_over:
        assert ids.size == 0 and game.current_player == -1
        return
    assert 0 <= game.current_player < game.num_players
    non_pass = [i for i in ids.tolist() if i != A.PASS_ID]
    assert non_pass, f"phase {game.phase.name} offers nothing but pass"
    segments = {A.ActionCodec.segment_of(i) for i in non_pass}
    expected = {Phase.SETUP: "select", Phase.SELECT: "select", Phase.BUILD: "build",
                Phase.DISCARD: "discard", Phase.DROUGHT: "drought",
                Phase.RECRUIT: "recruit", Phase.COWBOY: "cowboy",
                Phase.DESPERADO: "desperado", Phase.THIEF: "thief",
                Phase.BONUS: "bonus"}[game.phase]
    assert segments == {expected}, (game.phase, segments)
    ctx = game.context()
    if game.phase == Phase.BUILD:
        assert set(non_pass) == oracle_build_ids(game), "build mask differs from the rules"
        may_pass = not ctx.emptying and not (ctx.forced and ctx.builds_done == 0)
        assert (A.PASS_ID in ids) == may_pass, "pass offered when it must not be, or not offered"
        if not ctx.emptying:
            assert ctx.builds_done < ctx.builds_allowed <= 2
    else:
        assert set(ids.tolist()) == oracle_choices(game), f"{game.phase.name} choices differ"
    if ctx.emptying:
        assert game.phase not in (Phase.SELECT, Phase.SETUP, Phase.DISCARD)


def check_flow(game: Game) -> None:
    """Round structure: turn order by column position, forced turns, last round."""
    if game.is_over or game.phase == Phase.SETUP:
        return
    ctx, n = game.context(), game.num_players
    rancheros = 2 if n == 2 else 1
    owners = [o for o in game.active_owner if o >= 0]
    assert sorted(owners) == sorted(list(range(n)) * rancheros), "each ranchero on the column"
    assert (game.pending is None) == ctx.last_round, "pending column exists iff not last round"
    if game.pending is not None:
        chosen = [o for o in game.pending_owner if o >= 0]
        assert all(chosen.count(p) <= rancheros for p in range(n))
    if ctx.emptying:
        assert ctx.last_round
        return
    # Turns follow the column positions: the plots taken so far are the first owned positions,
    # and the player to decide owns the last of them.
    owned = [pos for pos in range(4) if game.active_owner[pos] >= 0]
    taken = [pos for pos in owned if game.active[pos] < 0]
    assert taken and taken == owned[:len(taken)], "turns out of column order"
    assert game.active_owner[taken[-1]] == ctx.player, "the wrong player is deciding"
    if game.phase == Phase.BUILD and ctx.builds_done == 0:
        ranch = game.ranches[ctx.player]
        assert ctx.forced == (len(ranch.hand) > ranch.capacity)
        assert ctx.builds_allowed == (2 if len(ranch.hand) >= 4 else 1)


def check_illegal_refused(game: Game, rng: np.random.Generator, samples: int) -> None:
    """A sample of illegal ids raises IllegalActionError and leaves the state untouched."""
    if samples <= 0:
        return
    mask = game.legal_mask()
    illegal = np.flatnonzero(mask == 0)
    if illegal.size == 0:
        return
    before = fingerprint(game)
    mask_before = mask.copy()
    for aid in rng.choice(illegal, size=min(samples, illegal.size), replace=False).tolist():
        with pytest.raises(IllegalActionError):
            game.apply(aid)
    assert fingerprint(game) == before, "a refused action changed the state"
    assert (game.legal_mask() == mask_before).all()


def check_every_legal_action(game: Game) -> None:
    """Every legal action applies to a clone (and the clone stays consistent)."""
    before = fingerprint(game)
    for aid in game.legal_action_ids().tolist():
        child = game.clone()
        child.apply(aid)
        check_conservation(child)
        check_ranches(child)
    assert fingerprint(game) == before, "applying on a clone changed the original"


def check_final(game: Game) -> None:
    """End of game: overpopulation applied, scores add up and match an independent oracle."""
    assert game.is_over
    scores = game.scores()
    assert game.running_scores() == scores
    for p, ranch in enumerate(game.ranches):
        assert int(ranch.cows.max()) <= 1, f"player {p} has a plot with more than one cow"
        assert ranch.hand == [], "reserve not emptied at game end"
        s = scores[p]
        assert s.total == s.territories + s.resources + s.partners + s.scenario
        want = oracle_score(game, p)
        got = {k: v for k, v in s.to_dict().items() if k != "total"}
        assert got == want, f"player {p}: engine {got} != oracle {want}"
        if game.config.mode == "base":
            assert s.scenario == 0
    assert all(p < 0 for p in game.active) and game.pending is None
    assert len(game.box) == game.data.num_plots % 4
    keys = [(s.total, s.largest_territory, s.cows) for s in scores]
    assert game.winners() == [p for p, k in enumerate(keys) if k == max(keys)]
    record = game.to_record()
    assert record["over"] and record["winners"] == game.winners()
    assert [r["total"] for r in record["scores"]] == [s.total for s in scores]


def check_running(game: Game) -> None:
    """Mid-game running scores equal the oracle with at most one cow per plot."""
    for p, s in enumerate(game.running_scores()):
        want = oracle_score(game, p, overpopulated=True)
        assert {k: v for k, v in s.to_dict().items() if k != "total"} == want


def fuzz_game(config: GameConfig, seed: int, *, every_legal: bool = False,
              illegal_samples: int = 3, oracle: bool = True) -> Game:
    """Play one random game, checking the invariants after every decision."""
    game = Game(config, seed=seed)
    rng = np.random.default_rng([seed, 7])
    decisions = 0
    while True:
        check_conservation(game)
        check_ranches(game)
        if oracle:
            check_mask(game)
            check_flow(game)
        check_illegal_refused(game, rng, illegal_samples)
        if game.is_over:
            break
        if every_legal:
            check_every_legal_action(game)
        if oracle and decisions % 25 == 0:
            check_running(game)
        ids = game.legal_action_ids()
        aid = int(ids[rng.integers(ids.size)])
        # Half the time play the structured form: it must mean the same decision.
        game.apply(A.ACTIONS[aid] if rng.random() < 0.5 else aid)
        decisions += 1
        assert decisions < 2000, "game does not end"
    check_final(game)
    return game


# ------------------------------------------------------------------------------ tests
@pytest.mark.parametrize(("num_players", "mode"), VARIANTS, ids=VARIANT_IDS)
@pytest.mark.parametrize("seed", range(3))
def test_random_games_keep_invariants(num_players: int, mode: str, seed: int) -> None:
    fuzz_game(GameConfig(num_players=num_players, mode=mode), seed=1000 + seed)


@pytest.mark.parametrize(("num_players", "mode"), [(2, "legends"), (3, "base"), (4, "legends")],
                         ids=["2p-legends", "3p-base", "4p-legends"])
def test_every_legal_action_applies(num_players: int, mode: str) -> None:
    fuzz_game(GameConfig(num_players=num_players, mode=mode), seed=77, every_legal=True,
              illegal_samples=10)


@pytest.mark.parametrize(("scenario", "num_players"), [(1, 2), (2, 3), (3, 4), (4, 3)])
def test_every_scenario(num_players: int, scenario: int) -> None:
    game = fuzz_game(GameConfig(num_players=num_players, mode="legends", scenario=scenario),
                     seed=31 * scenario + num_players)
    assert game.scenario == scenario


@pytest.mark.parametrize(("scenario", "num_players"),
                         [(None, 4), (None, 2), (1, 3), (2, 2), (3, 4), (4, 2)])
def test_tracked_scores_match_the_oracle_after_every_decision(scenario: int | None,
                                                             num_players: int) -> None:
    """The engine scores from what each ranch keeps up to date (territory sizes, cow and
    partner cells): after every single decision it must equal the oracle and the array-level
    ``score_ranch``, with cows capped and as they stand."""
    mode = "base" if scenario is None else "legends"
    game = Game(GameConfig(num_players=num_players, mode=mode, scenario=scenario), seed=11)
    rng = np.random.default_rng(11)
    token_kind = np.array([*map(int, game.data.partner_specialists), PartnerKind.COWBOY])
    while not game.is_over:
        for p, ranch in enumerate(game.ranches):
            for capped in (True, False):
                tracked = score_tracked(ranch, game.data, game.scenario,
                                        token_kind.tolist(), cap_cows=capped)
                cows = np.minimum(ranch.cows, 1) if capped else ranch.cows
                arrays = score_ranch(ranch.terrain, ranch.kind, cows, token_kind[ranch.partner],
                                     ranch.face, game.data, game.scenario)
                assert tracked == arrays
                want = oracle_score(game, p, overpopulated=capped)
                assert {k: v for k, v in tracked.to_dict().items() if k != "total"} == want
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(ids.size)]))
    check_final(game)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_auto_forced_games_keep_invariants(num_players: int) -> None:
    game = fuzz_game(GameConfig(num_players=num_players, mode="legends", auto_forced=True),
                     seed=5)
    autos = [e for e in game.history if e["type"] == "decision" and e.get("auto")]
    assert autos, "auto_forced played no decision itself"
    assert all(e["player"] >= 0 for e in autos)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), num_players=st.sampled_from([2, 3, 4]),
       mode=st.sampled_from(["base", "legends"]), auto_forced=st.booleans())
def test_hypothesis_random_games(seed: int, num_players: int, mode: str,
                                 auto_forced: bool) -> None:
    fuzz_game(GameConfig(num_players=num_players, mode=mode, auto_forced=auto_forced),
              seed=seed, illegal_samples=2)


def test_game_with_small_custom_box(tmp_path) -> None:
    """A manifest of 47 plots (not a multiple of 4): leftovers stay in the box, all accounted."""
    src = GameConfig().data
    lines = ["kind,terrain,nugget,beaver,corn,cows,skull,circle,count,number"]
    for kind, count in zip(src.kinds[:src.num_box_kinds], src.box_counts, strict=True):
        small = min(count, 2)
        lines.append(f"{kind.label},{kind.terrain.name.lower()},{kind.nugget},{kind.beaver},"
                     f"{kind.corn},{kind.cows},{int(kind.skull)},{int(kind.circle)},{small},"
                     f"{kind.number}")
    path = tmp_path / "plots.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for n in (2, 3, 4):
        cfg = GameConfig(num_players=n, plots_file=str(path))
        assert cfg.data.num_plots == 47
        game = fuzz_game(cfg, seed=n, illegal_samples=1)
        assert len(game.box) == 47 % 4


STRESS_PLOTS = """kind,terrain,nugget,beaver,corn,cows,skull,circle,count,number
1,farm,0,0,0,2,0,1,30,5
2,desert,1,0,0,0,1,0,14,2
3,canyon,1,0,0,2,1,1,20,9
4,forest,0,1,0,1,0,1,20,7
5,cornfield,0,0,2,1,0,1,6,3
6,meadow,1,0,0,2,1,0,6,11
"""
STRESS_PARTNERS = "specialist,count\ndesperado,2\ncattle_thief,3\nfarmer,1\n"


@pytest.fixture
def stress_files(tmp_path) -> dict[str, str]:
    """Data that exhausts everything: 70 circles for 6 partners, 200 cows for 32, 60 skulls."""
    plots, partners = tmp_path / "stress_plots.csv", tmp_path / "stress_partners.csv"
    plots.write_text(STRESS_PLOTS, encoding="utf-8")
    partners.write_text(STRESS_PARTNERS, encoding="utf-8")
    return {"plots_file": str(plots), "partners_file": str(partners)}


@pytest.mark.parametrize(("num_players", "mode"), VARIANTS, ids=VARIANT_IDS)
def test_stress_data_keeps_invariants(stress_files: dict[str, str], num_players: int,
                                      mode: str) -> None:
    """Empty cow supply, empty partner pile and empty saloon are met and handled."""
    cfg = GameConfig(num_players=num_players, mode=mode, **stress_files)
    assert cfg.data.num_partners == 6
    game = fuzz_game(cfg, seed=num_players, every_legal=num_players == 3, illegal_samples=2)
    assert not game.pile


def test_checker_detects_a_lost_plot() -> None:
    """The conservation check itself is not vacuous."""
    game = Game(GameConfig(num_players=3), seed=0)
    check_conservation(game)
    game.box.pop()
    with pytest.raises(AssertionError):
        check_conservation(game)
    game = Game(GameConfig(num_players=3), seed=0)
    game.supply -= 1
    with pytest.raises(AssertionError):
        check_conservation(game)


# -------------------------------------------------------------------------- big sweep
@pytest.mark.slow
@pytest.mark.parametrize(("num_players", "mode", "auto_forced"),
                         [(n, m, a) for (n, m), a in product(VARIANTS, (False, True))],
                         ids=[f"{i}-{'auto' if a else 'manual'}"
                              for i, a in product(VARIANT_IDS, (False, True))])
def test_slow_sweep(num_players: int, mode: str, auto_forced: bool) -> None:
    """About 3000 games in all; one game in twenty also applies every legal action."""
    cfg = GameConfig(num_players=num_players, mode=mode, auto_forced=auto_forced)
    for seed in range(250):
        fuzz_game(cfg, seed=100_000 + seed, every_legal=seed % 20 == 0, illegal_samples=4)


@pytest.mark.slow
@pytest.mark.parametrize(("num_players", "mode"), VARIANTS, ids=VARIANT_IDS)
def test_slow_stress_sweep(stress_files: dict[str, str], num_players: int, mode: str) -> None:
    cfg = GameConfig(num_players=num_players, mode=mode, **stress_files)
    for seed in range(60):
        fuzz_game(cfg, seed=seed, every_legal=seed % 15 == 0, illegal_samples=2)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**63 - 1), num_players=st.sampled_from([2, 3, 4]),
       mode=st.sampled_from(["base", "legends"]), auto_forced=st.booleans(),
       scenario=st.sampled_from([None, 1, 2, 3, 4]))
def test_slow_hypothesis_sweep(seed: int, num_players: int, mode: str, auto_forced: bool,
                               scenario: int | None) -> None:
    if mode == "base":
        scenario = None
    fuzz_game(GameConfig(num_players=num_players, mode=mode, auto_forced=auto_forced,
                         scenario=scenario), seed=seed, every_legal=seed % 10 == 0)
