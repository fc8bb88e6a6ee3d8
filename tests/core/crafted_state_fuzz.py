"""Crafted byte states with a valid checksum (run in a subprocess by tests/core/
test_core_state.py: a crash fails the test instead of killing pytest).

``python -m tests.core.crafted_state_fuzz [variant ...]`` changes each byte of a mid-game state
of each variant (indices into ``state_fuzz.variants()``; default 0, 4 and 14) by +1 and
recomputes the checksum. A changed state is either refused with a ValueError or plays on
soundly: a few states of each field are played up to 60 random decisions, every seat
observed, and after each decision the state must read back through the same checks (an
accepted state never plays into one the checks refuse, such as a plot id of -1 in a hand).
Prints one line: the refused, accepted and played counts.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

import numpy as np

from moonriver_env.core import game as core_game

from .state_fuzz import HEADER, REFUSED, mid_game, resealed, variants

_core = core_game._core
PLAYS_PER_FIELD = 4  # accepted states played, per field of the layout
DECISIONS = 60


def field_of(offset: int, layout: dict[str, int]) -> str:
    """The layout entry at or before ``offset`` (a ranch's by its index): plays are spread
    over the fields."""
    ranches, size = layout["ranches"], layout["ranch_size"]
    if ranches <= offset < ranches + 4 * size:
        return f"ranches[{(offset - ranches) // size}]"
    tops = [(at, name) for name, at in layout.items() if "." not in name and name not in (
        "fixed", "fixed_size", "ranch_size") and at <= offset]
    return max(tops)[1] if tops else "header"


def play_soundly(game: Any, tables: Any, rng: np.random.Generator) -> None:
    """Play ``game`` (a raw core Game) on; every state on the way reads back."""
    out = np.zeros(core_game.OBSERVATION_SIZE, np.float32)
    for _ in range(DECISIONS):
        if game.is_over:
            break
        for viewer in range(game.num_players):
            game.observe(viewer, out)
        ids = game.legal_ids()
        assert len(ids), "a state that is not over has no legal decision"
        assert game.apply(int(ids[rng.integers(len(ids))]))
        _core.Game.deserialize(tables, game.serialize())  # ValueError: played into bad state
    game.winners()


def fuzz(index: int) -> tuple[int, int, int]:
    """(refused, accepted, played) over the +1 changes of one variant's state."""
    config = variants()[index]
    game = mid_game(config, seed=200 + index)
    state, tables = game._core.serialize(), core_game._tables(game.data)
    layout = _core.state_layout()
    rng = np.random.default_rng(index)
    refused = accepted = 0
    played: Counter[str] = Counter()
    for offset in range(HEADER, len(state)):
        work = bytearray(state)
        work[offset] = (work[offset] + 1) & 0xFF
        try:
            crafted = _core.Game.deserialize(tables, resealed(work))
        except ValueError as exc:
            assert str(exc).startswith(REFUSED), str(exc)
            refused += 1
            continue
        accepted += 1
        field = field_of(offset, layout)
        if played[field] < PLAYS_PER_FIELD:
            played[field] += 1
            try:
                play_soundly(crafted, tables, rng)
            except (AssertionError, ValueError) as exc:
                raise AssertionError(f"variant {index}: byte {offset} ({field}) + 1 was "
                                     f"accepted, then: {exc}") from None
    return refused, accepted, sum(played.values())


def main(indices: list[int]) -> None:
    """Fuzz each variant; print the totals."""
    totals = [sum(t) for t in zip(*(fuzz(i) for i in indices), strict=True)]
    print("crafted states refused {} accepted {} played {}".format(*totals))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [0, 4, 14])
