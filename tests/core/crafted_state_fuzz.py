"""Crafted byte states with a valid checksum (run in a subprocess by tests/core/
test_core_state.py: a crash fails the test instead of killing pytest).

``python -m tests.core.crafted_state_fuzz [variant ...]`` changes each byte of a mid-game state
of each variant (indices into ``state_fuzz.variants()``; default 0, 4 and 14) by +1 and
recomputes the checksum. A changed state is either refused with a ValueError or plays on
soundly: a few states of each field are played to their end by random decisions, every seat
observed, and after each decision the state must read back through the same checks (an
accepted state never plays into one the checks refuse, such as a plot id of -1 in a hand).
Prints one line: the refused, accepted and played counts.

Then pieces (``piece_states``): states whose counts and checksum are made to fit after a plot
or token is removed from its place, duplicated, or swapped for another, two circles name one
cell, or the box is emptied (into the removed plots) with the game not over; and set-ups
whose column (and box, or not) was emptied, left with no decision. A state that loses or
doubles a piece, names one cell twice or has no decision must be refused naming a field; the
rest are refused or played to the end. Prints a second line: the refused and played counts.
"""

from __future__ import annotations

import struct
import sys
from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np

from moonriver_env.moonriver import core
from moonriver_env.moonriver.core import game as core_game

from .state_fuzz import HEADER, REFUSED, joined, mid_game, parts, resealed, variants

_core = core_game._core
LAYOUT = _core.state_layout()
PLAYS_PER_FIELD = 4  # accepted states played, per field of the layout
DECISIONS = 10_000  # more than any game lasts: each accepted state is played to its end


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
    """Play ``game`` (a raw core Game) to its end; every state on the way reads back."""
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
    assert game.is_over, "the game did not end"
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


def _set(head: bytearray, at: int, form: str, value: int) -> bytearray:
    out = bytearray(head)
    struct.pack_into(form, out, at, value)
    return out


def _without(items: list[int], i: int) -> list[int]:
    return items[:i] + items[i + 1:]


def piece_states(game: core.Game) -> Iterator[tuple[str, bool, bytes]]:
    """(what, must be refused, bytes) of crafted states of ``game`` with counts and checksum
    made to fit: each piece removed, pieces duplicated or swapped, two circles on one cell, the
    box emptied."""
    head, lists = parts(game._core.serialize())
    snap = game._core.snapshot()
    for name in ("box", "removed", "discarded", "pile"):
        for i in range(len(lists[name])):
            yield f"{name}[{i}] removed", True, joined(head, {**lists, name: _without(
                lists[name], i)})
        if lists[name]:
            yield f"{name}[0] duplicated", True, joined(head, {**lists, name: [
                *lists[name], lists[name][0]]})
        if len(lists[name]) > 1:
            swapped = [lists[name][1], *lists[name][1:]]
            yield f"{name}[0] swapped for {name}[1]", True, joined(head, {**lists, name: swapped})
    for s, token in enumerate(snap["saloon"]):
        if token >= 0:
            yield f"saloon[{s}] removed", True, joined(
                _set(head, LAYOUT["saloon"] + 2 * s, "<h", -1), lists)
    for column in ("active", "pending"):
        plots = snap[column] or []
        for i, plot in enumerate(plots):
            if plot >= 0:
                yield f"{column}[{i}] removed", True, joined(
                    _set(head, LAYOUT[column] + 2 * i, "<h", -1), lists)
    size = LAYOUT["ranch_size"]
    for p, ranch in enumerate(snap["ranches"]):
        hand, at = ranch["hand"], LAYOUT["ranches"] + p * size
        for i in range(len(hand)):
            rest = [*_without(hand, i), 0]
            out = _set(head, at + LAYOUT["ranch.hand_size"], "<i", len(hand) - 1)
            for k, plot in enumerate(rest):
                struct.pack_into("<h", out, at + LAYOUT["ranch.hand"] + 2 * k, plot)
            yield f"ranches[{p}].hand[{i}] removed", True, joined(out, lists)
    if not game.is_over:
        yield from _circle_states(game, head, lists)
    yield "box emptied into removed", False, joined(head, {
        **lists, "box": [], "removed": lists["removed"] + lists["box"]})


def _circle_states(game: core.Game, head: bytearray,
                   lists: dict[str, list[int]]) -> Iterator[tuple[str, bool, bytes]]:
    """Both circles on one built cell without a partner of the player's ranch (a circle
    plot's, where there is one)."""
    cells = game._core.snapshot()["ranches"][game._core.player]["cells"]
    circle = np.asarray(game.data.circle)
    built = np.flatnonzero((cells[4] >= 0) & (cells[2] == -1))
    for cell in sorted(built, key=lambda c: -int(circle[cells[0][c]]))[:3]:
        out = _set(_set(head, LAYOUT["circles"], "<b", int(cell)), LAYOUT["circles"] + 1, "<b",
                   int(cell))
        yield f"circles on cell {cell}", True, joined(out, lists)


def stuck_setup(config: Any, seed: int, empty_box: bool = False) -> bytes:
    """A new game's state with its column (and with ``empty_box`` its box) moved to the
    removed plots, counts and checksum made to fit: a set-up not over with no decision."""
    game = core.Game(config, seed)
    head, lists = parts(game._core.serialize())
    active = game._core.snapshot()["active"]
    for i in range(4):
        struct.pack_into("<h", head, LAYOUT["active"] + 2 * i, -1)
    struct.pack_into("<i", head, LAYOUT["choices_len"], 0)
    box = [] if empty_box else lists["box"]
    removed = [*lists["removed"], *active, *(lists["box"] if empty_box else [])]
    return joined(head, {**lists, "box": box, "removed": removed})


def fuzz_pieces(index: int) -> tuple[int, int]:
    """(refused, played) over the piece states of one variant (mid-game, and a new game)."""
    config = variants()[index]
    tables = core_game._tables(config.data)
    rng = np.random.default_rng(index)
    refused = played = 0
    states = [*piece_states(mid_game(config, seed=300 + index)),
              *piece_states(core.Game(config, 300 + index)),
              ("set-up with no decision", True, stuck_setup(config, 300 + index)),
              ("set-up with no decision, box emptied", True,
               stuck_setup(config, 300 + index, empty_box=True))]
    for what, must_refuse, state in states:
        try:
            crafted = _core.Game.deserialize(tables, state)
        except ValueError as exc:
            assert str(exc).startswith(REFUSED + ": field "), str(exc)
            refused += 1
            continue
        if must_refuse:
            raise AssertionError(f"variant {index}: {what} was accepted")
        try:
            play_soundly(crafted, tables, rng)
        except (AssertionError, ValueError) as exc:
            raise AssertionError(f"variant {index}: {what} was accepted, then: {exc}") from None
        played += 1
    return refused, played


def main(indices: list[int]) -> None:
    """Fuzz each variant; print the totals."""
    totals = [sum(t) for t in zip(*(fuzz(i) for i in indices), strict=True)]
    print("crafted states refused {} accepted {} played {}".format(*totals))
    pieces = [sum(t) for t in zip(*(fuzz_pieces(i) for i in indices), strict=True)]
    print("piece states refused {} played {}".format(*pieces))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [0, 4, 14])
