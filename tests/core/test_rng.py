"""The core's twin of numpy's default generator (core/src/numpy_random.h) against numpy itself:
for thousands of seeds, the same state, integers, permutations and shuffles, draw for draw;
and the core's ``determinize(rng)`` (numpy's shuffles in C++ over the generator's own bits)
against the engine's: the same orders, the generator left where numpy leaves it."""

from __future__ import annotations

import datetime
import random

import numpy as np
import pytest

from moonriver_env.moonriver import core
from moonriver_env.moonriver.backend import make_game
from moonriver_env.moonriver.core import game as core_game
from moonriver_env.moonriver.core import rng as core_rng
from moonriver_env.moonriver.rules import Game, GameConfig
from moonriver_env.moonriver.rules.game import setup_draws
from moonriver_env.moonriver.rules.scenarios import SCENARIOS

# Seeds the engine accepts (any non-negative int): small, 32/64-bit edges and past 2**64.
EDGES = [0, 1, 2**32 - 1, 2**32, 2**63 - 1, 2**64 - 1, 2**64, 2**64 + 12345, 2**96 + 7,
         2**200 + 3]
SEEDS = list(range(2000)) + EDGES + [int(s) for s in
                                    np.random.default_rng(7).integers(0, 2**63 - 1, 1000)]
SIZES = (2, 3, 4, 20, 96)  # seats, legend boards, partner pile, plot box


def _numpy_state(rng: np.random.Generator) -> tuple[int, int, bool, int]:
    state = rng.bit_generator.state
    return (state["state"]["state"], state["state"]["inc"], bool(state["has_uint32"]),
            state["uinteger"])


def _core_state(bits) -> tuple[int, int, bool, int]:
    s_hi, s_lo, i_hi, i_lo, has, uint = bits.state
    return (s_hi << 64 | s_lo, i_hi << 64 | i_lo, has, uint)


def test_seed_words_are_numpys():
    assert core_rng.seed_words(0) == [0]
    assert core_rng.seed_words(2**32) == [0, 1]
    assert core_rng.seed_words(2**64 + 5) == [5, 0, 1]


@pytest.mark.parametrize("chunk", range(4))
def test_draws_equal_numpys_for_thousands_of_seeds(chunk):
    lo, hi = min(SCENARIOS), max(SCENARIOS) + 1
    for seed in SEEDS[chunk::4]:
        ours, theirs = core_rng.default_rng(seed), np.random.default_rng(seed)
        assert _core_state(ours) == _numpy_state(theirs), seed
        assert ours.integers(lo, hi) == theirs.integers(lo, hi), seed
        for n in SIZES:
            assert ours.permutation(n) == theirs.permutation(n).tolist(), (seed, n)
        for n in (1, 5, 20, 96):
            items = list(range(100, 100 + n))
            theirs.shuffle(items)
            assert ours.shuffle(list(range(100, 100 + n))) == items, (seed, n)
        assert _core_state(ours) == _numpy_state(theirs), seed


def test_integers_and_raw_draws_over_many_ranges():
    ours, theirs = core_rng.default_rng(99), np.random.default_rng(99)
    draws = np.random.default_rng(1)
    for _ in range(3000):
        low = int(draws.integers(-2**40, 2**40))
        span = int(draws.choice([1, 2, 3, 7, 100, 2**31, 2**32 - 1]))
        assert ours.integers(low, low + span) == theirs.integers(low, low + span), (low, span)
    assert [ours.next_uint64() for _ in range(50)] == theirs.bit_generator.random_raw(50).tolist()
    assert _core_state(ours) == _numpy_state(theirs)


def _mid_game(backend: str, seed: int, steps: int = 60):
    game = make_game(GameConfig(num_players=4), seed, backend)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(len(ids))]))
    return game


def _plain(state):
    """A bit generator's state with its arrays as lists (comparable with ==)."""
    if isinstance(state, dict):
        return {k: _plain(v) for k, v in state.items()}
    return state.tolist() if isinstance(state, np.ndarray) else state


BIT_GENERATORS = [np.random.PCG64, np.random.PCG64DXSM, np.random.MT19937, np.random.Philox,
                  np.random.SFC64]


@pytest.mark.parametrize("bit_generator", BIT_GENERATORS, ids=lambda b: b.__name__)
@pytest.mark.parametrize("steps", [0, 60])
def test_core_determinize_is_the_engines_and_leaves_the_generator_where_numpy_does(
        bit_generator, steps):
    ref, fast = _mid_game("python", 3, steps), _mid_game("core", 3, steps)
    for seed in range(5):
        ours, theirs = (np.random.Generator(bit_generator(seed)) for _ in range(2))
        for rng in (ours, theirs):
            rng.integers(0, 5)  # an odd count of 32-bit draws: half a word is buffered
        ref.determinize(theirs)
        fast.determinize(ours)
        assert (fast.box, fast.pile) == (ref.box, ref.pile), seed
        assert _plain(ours.bit_generator.state) == _plain(theirs.bit_generator.state)
        assert ours.integers(0, 2**40, 8).tolist() == theirs.integers(0, 2**40, 8).tolist()


class _NoListsBack:
    """A core state that refuses to hand its box and pile to Python."""

    def __init__(self, core):
        self._core = core

    def __getattr__(self, name):
        if name in ("hidden", "set_hidden"):
            raise AssertionError(f"{name}: determinize went through Python lists")
        return getattr(self._core, name)


def test_core_determinize_with_a_numpy_generator_stays_in_the_core():
    game = _mid_game("core", 5)
    before = game.box
    game._core = _NoListsBack(game._core)
    game.determinize(np.random.default_rng(2))
    assert game.box != before


def test_core_determinize_takes_any_shuffler_as_the_engine_does():
    ref, fast = _mid_game("python", 4), _mid_game("core", 4)
    ref.determinize(random.Random(8))
    fast.determinize(random.Random(8))
    assert (fast.box, fast.pile) == (ref.box, ref.pile)


def test_core_determinize_refuses_what_is_not_a_numpy_bit_generator():
    game = _mid_game("core", 4, 0)
    with pytest.raises(TypeError):
        game._core.determinize_numpy(np.random.default_rng(0).bit_generator.ctypes.state)
    with pytest.raises(ValueError):  # a capsule of another kind (datetime's C API)
        game._core.determinize_numpy(datetime.datetime_CAPI)


def test_integers_refuse_a_range_the_twin_does_not_draw():
    with pytest.raises(ValueError, match="high must exceed low"):
        core_rng.default_rng(0).integers(5, 5)


CONFIGS = [GameConfig(), GameConfig(num_players=2), GameConfig(num_players=3),
           GameConfig(mode="legends"), GameConfig(num_players=2, mode="legends"),
           GameConfig(num_players=3, mode="legends", scenario=3),
           GameConfig(num_players=2, mode="legends", boards=("mary", "wesley"))]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.num_players}-{c.mode}")
def test_core_setup_draws_are_the_engines_for_many_seeds(config):
    seeds = list(range(300)) + EDGES
    for seed in seeds:
        ours = core_game._setup_draws(config, config.data, seed, None)
        theirs = setup_draws(config, config.data, np.random.default_rng(seed))
        assert ours == theirs, seed


@pytest.mark.parametrize("config", CONFIGS[::2], ids=lambda c: f"{c.num_players}-{c.mode}")
def test_core_game_is_set_up_in_the_core_without_numpy(config, monkeypatch):
    expected = [Game(config, seed) for seed in (0, 5, 2**64 + 1)]

    def refuse(*args, **kwargs):
        raise AssertionError("the core's set-up drew from numpy")
    monkeypatch.setattr(np.random, "default_rng", refuse)
    for seed, ref in zip((0, 5, 2**64 + 1), expected, strict=True):
        game = core.Game(config, seed)
        assert (game.scenario, game.board_names, game.setup_order, game.box, game.pile,
                game.saloon, game.active) == (ref.scenario, ref.board_names, ref.setup_order,
                                              ref.box, ref.pile, ref.saloon, ref.active)


def test_chosen_first_draws_go_on_top_of_the_core_setup():
    config = GameConfig()
    ref = Game(config, 3, first_draws={"pile": [0, 1, 2, 3, 4]})
    game = core.Game(config, 3, first_draws={"pile": [0, 1, 2, 3, 4]})
    assert (game.saloon, game.pile, game.box, game.chosen_draws) == (
        ref.saloon, ref.pile, ref.box, True)


def test_setup_plan_refuses_what_it_cannot_draw():
    tables = core_game._tables(GameConfig().data)
    _, args = core_game.setup_plan(GameConfig(), GameConfig().data)
    with pytest.raises(ValueError, match=r"num_players must be 2\.\.4"):
        core_game._core.SetupPlan(tables, 5, *args[1:])
    with pytest.raises(ValueError, match="drawn scenario's range"):
        core_game._core.SetupPlan(tables, *args[:3], True, 0, 9, *args[6:])
    with pytest.raises(ValueError, match="one per seat"):
        core_game._core.SetupPlan(tables, *args[:6], [], [], [], False)
    plan = core_game._core.SetupPlan(tables, *args)
    with pytest.raises(ValueError, match="keeps the drawn one's size"):
        plan.game([1], [0, 1], None)
