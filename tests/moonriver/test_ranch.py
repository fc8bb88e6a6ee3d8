"""Ranch contents change only through its methods, and each change drops what was derived."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from moonriver_env.moonriver.rules import Face, Game, GameConfig


def fresh_ranch():
    """Player 0's empty ranch of a new 4-player base game."""
    return Game(GameConfig(num_players=4), seed=0).ranches[0]


def test_public_views_are_read_only() -> None:
    ranch = fresh_ranch()
    for name in ("kind", "cows", "partner", "face"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(ranch, name)[0] = 1


def test_every_change_starts_a_new_derived_dict() -> None:
    ranch = fresh_ranch()
    changes = [lambda: ranch.place(0, 0, 3, 1), lambda: ranch.add_cows(0, 2),
               lambda: ranch.set_partner(0, 4, int(Face.SPECIALIST)), ranch.cap_cows]
    for change in changes:
        before = ranch.derived
        before["value"] = 1
        change()
        assert ranch.derived is not before and ranch.derived == {}


def test_tracked_sets_follow_the_changes() -> None:
    ranch = fresh_ranch()
    ranch.place(0, 0, 3, 1)
    ranch.place(1, 1, 3, 1)  # same terrain, next to cell 0: one territory of 2
    ranch.place(6, 2, 4, 1)  # below cell 1: joins it
    assert ranch.sizes == {0: 3} and ranch.kind_counts == {3: 2, 4: 1}
    ranch.add_cows(1, 2)
    ranch.add_cows(6, 1)
    assert ranch.cow_cells == (1 << 1) | (1 << 6)
    ranch.add_cows(6, -1)
    assert ranch.cow_cells == 1 << 1
    assert ranch.cap_cows() == 1 and int(ranch.cows[1]) == 1
    ranch.set_partner(0, 4, int(Face.COWBOY))
    assert ranch.partner_cells == [0]


def test_clone_shares_derived_until_a_change_and_pickle_drops_it() -> None:
    ranch = fresh_ranch()
    ranch.place(0, 0, 3, 1)
    ranch.derived["value"] = 1
    twin = ranch.clone()
    assert twin.derived is ranch.derived
    twin.add_cows(0, 1)
    assert twin.derived == {} and ranch.derived == {"value": 1}
    assert int(ranch.cows[0]) == 0 and twin.sizes == ranch.sizes and twin.sizes is not ranch.sizes
    copy = pickle.loads(pickle.dumps(ranch))
    assert copy.derived == {} and copy.sizes == {0: 1} and copy.kind_counts == {3: 1}
    np.testing.assert_array_equal(copy.cells, ranch.cells)


def test_bad_changes_are_refused() -> None:
    ranch = fresh_ranch()
    ranch.place(0, 0, 3, 1)
    with pytest.raises(ValueError, match="already holds a plot"):
        ranch.place(0, 1, 3, 1)
    with pytest.raises(ValueError, match="token id"):
        ranch.set_partner(0, -1, int(Face.SPECIALIST))
    assert ranch.kind_counts == {3: 1} and ranch.partner_cells == []
