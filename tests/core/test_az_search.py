"""The batched search with network-valued leaves (moonriver_env.moonriver.search, trees in the
core)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from moonriver_env.moonriver.core import Game
from moonriver_env.moonriver.rules import GameConfig
from moonriver_env.moonriver.search import BatchedSearch, LeafBatch, SearchResult

NUM_ACTIONS, OBS = 2710, 4934
PROJECTION = np.random.default_rng(0).normal(0.0, 0.05, size=(OBS, 5))


def position(config: GameConfig, seed: int, moves: int) -> Game:
    """A game after ``moves`` seeded random decisions, at a decision with a real choice."""
    game, rng = Game(config, seed=seed), np.random.default_rng(seed)
    for _ in range(moves):
        game.apply(int(rng.choice(game.legal_action_ids())))
    while game.legal_action_ids().size < 2:
        game.apply(int(game.legal_action_ids()[0]))
    return game


def positions() -> list[Game]:
    """Mid-game positions of every table size, base and Legends."""
    return [position(GameConfig(num_players=2), 1, 30),
            position(GameConfig(num_players=3), 2, 45),
            position(GameConfig(num_players=4), 3, 12),
            position(GameConfig(num_players=4, mode="legends", scenario=2), 4, 60)]


def fixed_evaluator(leaves: LeafBatch) -> tuple[np.ndarray, np.ndarray]:
    """A deterministic function of each leaf's observation alone (row by row: no batch size
    can change a bit of it)."""
    rows = [row.astype(np.float64) @ PROJECTION for row in leaves.observation]
    h = np.array(rows).reshape(len(leaves), 5)
    ids = np.arange(NUM_ACTIONS)[None, :]
    logits = 3.0 * np.sin(0.013 * ids * (1.0 + h[:, :1]) + h[:, 1:2])
    values = 1.0 / (1.0 + np.exp(-4.0 * h[:, 1:5]))
    return logits.astype(np.float32), values.astype(np.float32)


def run(search: BatchedSearch, evaluator=fixed_evaluator) -> SearchResult:
    """Evaluate leaves until every search is finished."""
    while (leaves := search.leaves()) is not None:
        search.evaluate(*evaluator(leaves))
    return search.result()


def same(a: SearchResult, b: SearchResult) -> None:
    """Two results are identical."""
    for name in ("action", "policy", "visits", "root_value", "searched"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def replay(root: Game, leaf_core) -> tuple[Game, int]:
    """The root replayed along the leaf's history (its draws made explicit) on a clone, and
    the number of draws on the way."""
    view = root.clone()
    view._core = leaf_core
    view._fresh()
    events = view.history[len(root.history):]
    game = root.clone()
    for k, event in enumerate(events):
        if event["type"] != "decision" or event.get("auto"):
            continue
        box, pile = [], []
        for later in events[k + 1:]:
            if later["type"] == "decision" and not later.get("auto"):
                break
            if later.get("event") == "column":
                box += later["plots"]
            elif later.get("event") == "saloon":
                pile += [partner for _, partner in later["filled"]]
        if box:
            game.set_next_draws("box", box)
        if pile:
            game.set_next_draws("pile", pile)
        assert event["player"] == game.current_player
        game.apply(event["action"])
    return game, sum(e.get("event") in ("column", "saloon") for e in events)


@pytest.mark.parametrize("algorithm", ["gumbel", "puct"])
def test_leaves_are_the_states_reached_by_replaying_the_path(algorithm: str) -> None:
    games = positions()
    search = BatchedSearch(games, simulations=12, seed=5, algorithm=algorithm, max_considered=4)
    steps = draws = 0
    while (leaves := search.leaves()) is not None:
        steps += 1
        assert 0 < len(leaves) <= len(games)
        assert list(leaves.game) == sorted(set(leaves.game))
        for i, g in enumerate(leaves.game):
            state, drawn = replay(games[g], search.leaf_game(i))
            draws += drawn
            seat = state.current_player
            assert leaves.seat[i] == seat and leaves.num_players[i] == state.num_players
            np.testing.assert_array_equal(leaves.observation[i], state.observe(seat))
            np.testing.assert_array_equal(leaves.mask[i], state.legal_mask())
            assert leaves.mask[i].sum() >= 2  # forced decisions are played, never asked
        search.evaluate(*fixed_evaluator(leaves))
    assert steps == 13  # the roots, then one leaf per simulation (no terminal within reach)
    assert leaves is None and search.leaves() is None
    assert draws > 0  # paths through determinized draws were checked too


def test_leaves_carry_greedys_prior_of_their_states_when_asked() -> None:
    from moonriver_env.agents.pretrained import SHAPE_WEIGHT, greedy_prior

    games = positions()
    plain = BatchedSearch(games, simulations=6, seed=2, max_considered=4)
    search = BatchedSearch(games, simulations=6, seed=2, max_considered=4,
                           greedy_prior=SHAPE_WEIGHT)
    checked = 0
    while (leaves := search.leaves()) is not None:
        assert leaves.prior is not None and leaves.prior.shape == (len(leaves), NUM_ACTIONS)
        assert leaves.prior.dtype == np.float32
        for i, g in enumerate(leaves.game):
            state, _ = replay(games[g], search.leaf_game(i))
            np.testing.assert_array_equal(leaves.prior[i], greedy_prior(state))
            assert np.count_nonzero(leaves.prior[i][leaves.mask[i] == 0]) == 0
            checked += 1
        other = plain.leaves()
        assert other is not None and other.prior is None
        search.evaluate(*fixed_evaluator(leaves))
        plain.evaluate(*fixed_evaluator(other))
    same(search.result(), run(BatchedSearch(games, simulations=6, seed=2, max_considered=4)))
    assert checked == 7 * len(games)
    with pytest.raises(ValueError, match="greedy_prior must be finite"):
        BatchedSearch(games, greedy_prior=math.inf)


def test_roots_are_each_games_observation_mask_and_prior() -> None:
    from moonriver_env.agents.pretrained import SHAPE_WEIGHT, greedy_prior

    games = positions()
    search = BatchedSearch(games, simulations=4, seed=3, max_considered=4)
    obs, mask, prior = search.roots(SHAPE_WEIGHT)
    assert obs.shape == (len(games), OBS) and obs.dtype == np.float32
    assert mask.shape == (len(games), NUM_ACTIONS) and mask.dtype == np.int8
    assert prior is not None and prior.shape == (len(games), NUM_ACTIONS)
    for i, game in enumerate(games):
        np.testing.assert_array_equal(obs[i], game.observe(game.current_player))
        np.testing.assert_array_equal(mask[i], game.legal_mask())
        np.testing.assert_array_equal(prior[i], greedy_prior(game))
    assert np.count_nonzero(prior) > 0
    assert search.roots()[2] is None
    same(run(search), run(BatchedSearch(games, simulations=4, seed=3, max_considered=4)))
    with pytest.raises(ValueError, match="greedy_prior must be finite"):
        search.roots(math.nan)


@pytest.mark.parametrize("algorithm", ["gumbel", "puct"])
def test_batched_search_agrees_with_one_game_searched_alone(algorithm: str) -> None:
    games = positions()
    kwargs = dict(simulations=16, seed=11, algorithm=algorithm, max_considered=8)
    batch = run(BatchedSearch(games, **kwargs))
    same(batch, run(BatchedSearch(games, threads=2, **kwargs)))
    same(batch, run(BatchedSearch(games, **kwargs)))
    for g, game in enumerate(games):
        alone = run(BatchedSearch([game], indices=[g], **kwargs))
        for name in ("action", "policy", "visits", "root_value"):
            np.testing.assert_array_equal(getattr(alone, name)[0], getattr(batch, name)[g])
    other = run(BatchedSearch(games, **{**kwargs, "seed": 12}))
    assert not np.array_equal(other.visits, batch.visits)  # the seed drives determinizations


@pytest.mark.parametrize("algorithm", ["gumbel", "puct"])
def test_improved_policy_is_a_distribution_over_the_legal_ids(algorithm: str) -> None:
    games = positions()
    res = run(BatchedSearch(games, simulations=20, seed=3, algorithm=algorithm))
    assert res.action.dtype == np.int64 and res.policy.dtype == np.float32
    assert res.visits.dtype == np.int32 and res.root_value.dtype == np.float32
    for g, game in enumerate(games):
        legal = game.legal_mask().astype(bool)
        assert math.isclose(float(res.policy[g].sum()), 1.0, abs_tol=1e-5)
        assert not res.policy[g][~legal].any() and not res.visits[g][~legal].any()
        assert res.visits[g].sum() == 20 and legal[res.action[g]]
        n = game.num_players
        assert np.all((res.root_value[g, :n] >= 0) & (res.root_value[g, :n] <= 1))
        assert not res.root_value[g, n:].any()
        if algorithm == "puct":
            np.testing.assert_allclose(res.policy[g], res.visits[g] / 20.0, rtol=1e-6)
            assert res.visits[g, res.action[g]] == res.visits[g].max()


def test_gumbel_root_halves_the_considered_actions() -> None:
    games = positions()
    res = run(BatchedSearch(games, simulations=32, seed=1, max_considered=4))
    for g in range(len(games)):
        visited = np.flatnonzero(res.visits[g])
        assert 2 <= visited.size <= 4  # Gumbel-top-4, halved to 2
        assert res.visits[g, res.action[g]] == res.visits[g].max()


def last_decision() -> Game:
    """A position whose every legal decision ends the game."""
    for seed in range(200):
        game, rng = Game(GameConfig(num_players=2), seed=seed), np.random.default_rng(seed)
        while not game.is_over:
            ids = game.legal_action_ids()
            if ids.size > 1 and all(_ends(game, a) for a in ids):
                return game
            game.apply(int(rng.choice(ids)))
    raise AssertionError("no last decision found")


def _ends(game: Game, action: int) -> bool:
    child = game.clone()
    child.apply(int(action))
    return child.is_over


def test_terminal_states_are_valued_by_the_outcome_without_python() -> None:
    game = last_decision()
    search = BatchedSearch([game], simulations=8, seed=0, algorithm="puct")
    leaves = search.leaves()
    assert leaves is not None and len(leaves) == 1  # the root
    search.evaluate(np.zeros((1, NUM_ACTIONS)), np.full((1, 4), 0.5))
    assert search.leaves() is None  # every simulation ended the game
    res = search.result()
    expected = np.zeros(2) + 0.5
    for action in np.flatnonzero(res.visits[0]):
        child = game.clone()
        child.apply(int(action))
        winners = child.winners()
        share = [1.0 / len(winners) if p in winners else 0.0 for p in range(2)]
        expected += res.visits[0, action] * np.array(share)
    np.testing.assert_allclose(res.root_value[0, :2], expected / 9.0, rtol=1e-6)


def test_a_forced_root_is_not_searched() -> None:
    game = Game(GameConfig(num_players=2), seed=0)
    rng = np.random.default_rng(0)
    while game.legal_action_ids().size != 1:
        game.apply(int(rng.choice(game.legal_action_ids())))
    search = BatchedSearch([game, positions()[0]], simulations=4, seed=0)
    leaves = search.leaves()
    assert list(leaves.game) == [1]
    res = run(search)
    only = int(game.legal_action_ids()[0])
    assert res.action[0] == only and res.policy[0, only] == 1.0 and res.policy[0].sum() == 1.0
    assert not res.searched[0] and res.searched[1] and np.isnan(res.root_value[0]).all()
    assert res.visits[0].sum() == 0


def greedy_values(search: BatchedSearch, leaves: LeafBatch) -> tuple[np.ndarray, np.ndarray]:
    """Uniform logits; each leaf valued by Greedy playing every seat to the end (on a
    determinized copy)."""
    values = np.zeros((len(leaves), 4), np.float32)
    for i in range(len(leaves)):
        state = search.leaf_game(i).determinized_clone(i)
        while not state.is_over:
            state.apply(state.greedy_ties()[1][0])
        winners = state.winners()
        values[i, winners] = 1.0 / len(winners)
    return np.zeros((len(leaves), NUM_ACTIONS), np.float32), values


def test_search_with_greedy_rollout_values_beats_random() -> None:
    games = [Game(GameConfig(num_players=2), seed=100 + g) for g in range(12)]
    rng = np.random.default_rng(0)
    while any(not g.is_over for g in games):
        to_search = []
        for game in games:
            while not game.is_over and (game.current_player == 1 or
                                        game.legal_action_ids().size == 1):
                game.apply(int(rng.choice(game.legal_action_ids())))
            if not game.is_over:
                to_search.append(game)
        if not to_search:
            break
        search = BatchedSearch(to_search, simulations=16, seed=int(rng.integers(2**31)),
                               max_considered=16)
        res = run(search, lambda leaves, s=search: greedy_values(s, leaves))
        for game, action in zip(to_search, res.action, strict=True):
            game.apply(int(action))
    wins = sum(0 in g.winners() for g in games)
    assert wins >= 10, wins  # random play wins about half of them against itself


def test_playouts_mixed_into_the_leaves_replace_the_callers_values_at_weight_one() -> None:
    """``rollout_weight``: at 1 the caller's values no longer matter (the playouts value every
    leaf); at 0.5 they still do; the same seed gives the same search."""
    games = positions()

    def flat(value: float):
        def evaluate(leaves: LeafBatch) -> tuple[np.ndarray, np.ndarray]:
            logits = fixed_evaluator(leaves)[0]
            return logits, np.full((len(leaves), 4), value, np.float32)
        return evaluate

    def search(weight: float, value: float, depth: int = 12, threads: int = 1) -> SearchResult:
        return run(BatchedSearch(games, simulations=48, seed=5, rollout_weight=weight,
                                 rollout_depth=depth, threads=threads), flat(value))

    same(search(1.0, 0.0), search(1.0, 1.0))
    assert not np.array_equal(search(0.5, 0.0).root_value, search(0.5, 1.0).root_value)
    same(search(0.5, 0.0), search(0.5, 0.0, threads=2))  # the playouts' draws are each game's
    # depth 0 plays to the end of the game, as any depth longer than the game does
    same(search(1.0, 0.0, depth=0), search(1.0, 0.0, depth=1000))
    assert not np.array_equal(search(1.0, 0.0, depth=0).policy, search(1.0, 0.0, 12).policy)
    mixed = search(1.0, 0.0)
    # the playouts' softmax shares of each table sum to 1 and so does every root value
    for g, game in enumerate(games):
        assert math.isclose(float(mixed.root_value[g, :game.num_players].sum()), 1.0,
                            rel_tol=1e-4)
    assert not np.array_equal(mixed.policy, search(0.0, 0.0).policy)


def test_bad_arguments_are_refused_with_clear_errors() -> None:
    games = positions()[:2]
    cases = [
        (dict(simulations=0), "simulations must be an int >= 1"),
        (dict(simulations=2.5), "simulations must be an int >= 1"),
        (dict(c_visit=float("nan")), "c_visit must be finite"),
        (dict(c_scale=0.0), "c_scale must be finite and > 0"),
        (dict(c_puct=-1.0), "c_puct must be finite and >= 0"),
        (dict(max_considered=0), "max_considered must be an int >= 1"),
        (dict(algorithm="alphabeta"), "algorithm must be one of gumbel, puct"),
        (dict(threads=0), "threads must be an int >= 1"),
        (dict(indices=[0]), "indices must hold one int per game"),
        (dict(rollout_weight=1.5), r"rollout_weight must be within \[0, 1\]"),
        (dict(rollout_weight=float("nan")), "rollout_weight must be finite"),
        (dict(rollout_depth=-1), "rollout_depth must be an int >= 0"),
        (dict(rollout_temperature=0.0), "rollout_temperature must be finite and > 0"),
        (dict(rollout_temperature=1e-300), r"rollout_temperature must be finite and >= 0.001"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message) as info:
            BatchedSearch(games, **kwargs)
        assert pickle.loads(pickle.dumps(info.value)).args == info.value.args
    over = Game(GameConfig(num_players=2), seed=0)
    rng = np.random.default_rng(0)
    while not over.is_over:
        over.apply(int(rng.choice(over.legal_action_ids())))
    with pytest.raises(ValueError, match=r"games\[1\] is over"):
        BatchedSearch([games[0], over])
    with pytest.raises(ValueError, match="at least one game"):
        BatchedSearch([])
    with pytest.raises(ValueError, match=r"games\[0\] must be a moonriver_env.moonriver.core.Game"):
        BatchedSearch(["not a game"])


def test_evaluate_refuses_bad_rows_and_changes_nothing() -> None:
    search = BatchedSearch(positions()[:2], simulations=2, seed=0)
    with pytest.raises(ValueError, match="no leaves are pending"):
        search.evaluate(np.zeros((2, NUM_ACTIONS)), np.zeros((2, 4)))
    with pytest.raises(ValueError, match="not finished"):
        search.result()
    leaves = search.leaves()
    logits, values = fixed_evaluator(leaves)
    with pytest.raises(ValueError, match=r"policy_logits must have shape \(2, 2710\)"):
        search.evaluate(logits[:1], values)
    with pytest.raises(ValueError, match=r"values must have shape \(2, 4\)"):
        search.evaluate(logits, values[:, :2])
    legal = int(np.flatnonzero(leaves.mask[1])[0])
    bad = logits.copy()
    bad[1, legal] = np.nan
    with pytest.raises(ValueError, match=f"row 1 is not finite at legal id {legal}"):
        search.evaluate(bad, values)
    off = logits.copy()
    off[0, ~leaves.mask[0].astype(bool)] = np.nan  # illegal entries are ignored
    for v in (1.5, -0.1, np.nan):
        worse = values.copy()
        worse[0, 1] = v
        with pytest.raises(ValueError, match="values row 0 seat 1 must be within"):
            search.evaluate(off, worse)
    again = search.leaves()  # nothing changed: the same leaves
    np.testing.assert_array_equal(again.observation, leaves.observation)
    search.evaluate(off, values)
    assert search.leaves() is not None
