"""The core's twin of numpy's default generator (core/src/numpy_random.h) against numpy itself:
for thousands of seeds, the same state, integers, permutations and shuffles, draw for draw,
and a numpy Generator handed to the core and back ends where numpy's own draws leave it."""

from __future__ import annotations

import numpy as np
import pytest

from moonriver_env.core import rng as core_rng
from moonriver_env.engine.scenarios import SCENARIOS

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


def test_buffered_half_word_is_carried_both_ways():
    # an odd number of 32-bit draws leaves half a 64-bit word buffered (has_uint32)
    theirs = np.random.default_rng(5)
    theirs.permutation(3)
    theirs.integers(0, 5)
    bits = core_rng.take_pcg64(theirs)
    assert bits is not None and _core_state(bits) == _numpy_state(theirs)
    expected = np.random.default_rng(5)
    expected.permutation(3)
    expected.integers(0, 5)
    items = list(range(96))
    expected.shuffle(items)
    assert bits.shuffle(list(range(96))) == items
    core_rng.give_back_pcg64(theirs, bits)
    assert _numpy_state(theirs) == _numpy_state(expected)
    assert theirs.integers(0, 1000, 20).tolist() == expected.integers(0, 1000, 20).tolist()


def test_other_bit_generators_are_not_taken():
    assert core_rng.take_pcg64(np.random.Generator(np.random.PCG64DXSM(1))) is None
    assert core_rng.take_pcg64(np.random.Generator(np.random.MT19937(1))) is None


def test_integers_refuse_a_range_the_twin_does_not_draw():
    with pytest.raises(ValueError, match="high must exceed low"):
        core_rng.default_rng(0).integers(5, 5)
