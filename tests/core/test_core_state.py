"""The core's byte state (pickles of core games): a checksum refuses damaged bytes, and every
field is checked against the tables and the variant, so crafted bytes with a valid checksum are
refused too, naming the field (issue 29, point 2)."""

from __future__ import annotations

import pickle
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from moonriver_env.moonriver import core
from moonriver_env.moonriver.core import game as core_game
from moonriver_env.moonriver.rules import GameConfig, Phase

from .crafted_state_fuzz import stuck_setup
from .state_fuzz import REFUSED, fnv1a, joined, mid_game, parts, resealed, variants
from .test_core_differential import POLICIES, _custom_data
from .test_core_differential import variants as all_variants

ROOT = Path(__file__).resolve().parents[2]
_core = core_game._core
LAYOUT = _core.state_layout()


def test_every_state_of_every_variant_reads_back(tmp_path: Path) -> None:
    """Bytes written at every decision of games of every variant (custom data included) read
    back to the same bytes: the checks refuse no state the rules reach."""
    states = 0
    for k, config in enumerate(all_variants(_custom_data(tmp_path))):
        policy = list(POLICIES.values())[k % len(POLICIES)]
        game, rng = core.Game(config, k), np.random.default_rng(k)
        while True:
            state = game._core.serialize()
            thawed = pickle.loads(pickle.dumps(game))
            assert thawed._core.serialize() == state
            states += 1
            if game.is_over:
                break
            game.apply(policy(game.legal_action_ids(), rng))
    assert states > 3000


def test_checksum_is_the_documented_fnv1a() -> None:
    """Header: magic, format 2, then the FNV-1a 64 of everything after the 16-byte header."""
    state = mid_game(GameConfig(), 3)._core.serialize()
    magic, version, checksum = struct.unpack_from("<IIQ", state)
    assert (magic, version) == (0x4D524331, _core.STATE_FORMAT) == (0x4D524331, 2)
    assert checksum == fnv1a(state[16:])
    assert resealed(state) == state


def test_every_damaged_byte_is_refused_in_a_subprocess() -> None:
    """Every byte flipped and 2,000 random 8-byte patches per state, in mid-game states of
    2-4 players, base and Legends scenarios 1-4: a ValueError each time (in a child process:
    a crash fails the test)."""
    run = subprocess.run([sys.executable, "-m", "tests.core.state_fuzz", "2000"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    refused = int(run.stdout.split()[1])
    assert refused > 15 * 5000  # 15 states of several thousand bytes each, and the patches


def test_a_damaged_pickle_raises_value_error() -> None:
    """The public door: pickle.loads of a core game with one changed byte."""
    game = mid_game(GameConfig(num_players=3), 5)
    state = game._core.serialize()
    data = pickle.dumps(game)
    at = data.index(state) + LAYOUT["phase"]
    with pytest.raises(ValueError, match="checksum"):
        pickle.loads(data[:at] + bytes([data[at] ^ 1]) + data[at + 1:])


def _put(state: bytes, at: int, fmt: str, value: int, *more: tuple[int, str, int]) -> bytes:
    """``state`` with ``value`` packed at ``at`` (and any more such writes), resealed."""
    out = bytearray(state)
    for where, form, v in ((at, fmt, value), *more):
        struct.pack_into(form, out, where, v)
    return resealed(out)


def _supply(state: bytes) -> int:
    return struct.unpack_from("<i", state, LAYOUT["supply"])[0]


def _off_turn(game: core.Game) -> core.Game:
    """The game moved on to its next decision outside a Build phase (choices stored)."""
    while game.phase == Phase.BUILD:
        game.apply(int(game.legal_action_ids()[-1]))
    return game


def _ranch(field: str, p: int = 0) -> int:
    return LAYOUT["ranches"] + p * LAYOUT["ranch_size"] + LAYOUT[f"ranch.{field}"]


def _box_at(state: bytes) -> int:
    return LAYOUT["fixed"] + LAYOUT["fixed_size"]


Craft = Callable[[bytes, core.Game], bytes]
CRAFTED: dict[str, tuple[Craft, str]] = {
    "player count": (lambda s, g: _put(s, LAYOUT["n"], "<i", 7), "field n "),
    "rows": (lambda s, g: _put(s, LAYOUT["rows"], "<i", 10), "field rows "),
    "scenario": (lambda s, g: _put(s, LAYOUT["scenario"], "<i", 9), "field scenario "),
    "phase": (lambda s, g: _put(s, LAYOUT["phase"], "<i", 99), "field phase "),
    "player": (lambda s, g: _put(s, LAYOUT["player"], "<i", -1), "field player "),
    "bool byte": (lambda s, g: _put(s, LAYOUT["auto_forced"], "<B", 2), "field auto_forced "),
    "choices length": (lambda s, g: _put(s, LAYOUT["choices_len"], "<i", 300),
                       "field choices_len "),
    "choice id": (lambda s, g: _put(s, LAYOUT["choices"], "<h", 2710), "field choices[0] "),
    "choices not the phase's": (lambda s, g: _put(s, LAYOUT["choices"], "<h", 1000),
                                "field choices "),
    "hand size": (lambda s, g: _put(s, _ranch("hand_size"), "<i", 9),
                  "field ranches[0].hand_size "),
    "hand plot": (lambda s, g: _put(s, _ranch("hand"), "<h", 32000,
                                    (_ranch("hand_size"), "<i", 1)),
                  "field ranches[0].hand[0] "),
    "capacity": (lambda s, g: _put(s, _ranch("capacity", 1), "<i", 0),
                 "field ranches[1].capacity "),
    "plot id": (lambda s, g: _put(s, _ranch("plot") + 2 * 7, "<h", 30000),
                "field ranches[0].plot[7] "),
    "cows on an empty cell": (lambda s, g: _put(s, _ranch("cows", 1) + 2 * 49, "<h", 1),
                              "field ranches[1].cows[49] "),
    "territory label": (lambda s, g: _put(s, _ranch("label") + 49, "<b", 3),
                        "field ranches[0].label "),
    "cow supply": (lambda s, g: _put(s, LAYOUT["supply"], "<i", _supply(s) - 1),
                   "field supply "),
    "saloon token": (lambda s, g: _put(s, LAYOUT["saloon"], "<h", 500), "field saloon[0] "),
    "column owner": (lambda s, g: _put(s, LAYOUT["active_owner"], "<b", 6),
                     "field active_owner[0] "),
    "turn order": (lambda s, g: _put(s, LAYOUT["order"] + 1, "<b", 9), "field order[1] "),
    "skulls": (lambda s, g: _put(s, LAYOUT["skulls_len"], "<i", 4), "field skulls_len "),
    "box length": (lambda s, g: _put(s, _box_at(s), "<I", 2**31), "field box "),
    "box plot": (lambda s, g: _put(s, _box_at(s) + 4, "<h", -5), "field box[0] "),
    "trailing bytes": (lambda s, g: resealed(s + b"\0"), "trailing bytes"),
    "another build": (lambda s, g: _put(s, LAYOUT["fixed"] - 4, "<I", 12), "sizeof(Fixed)"),
}


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_crafted_bytes_with_a_valid_checksum_are_refused_by_field(name: str) -> None:
    """A field out of range for the tables or the variant, under a recomputed checksum."""
    game = _off_turn(mid_game(GameConfig(num_players=3), 11, share=0.3))
    craft, field = CRAFTED[name]
    bad = craft(game._core.serialize(), game)
    with pytest.raises(ValueError, match=REFUSED) as info:
        _core.Game.deserialize(core_game._tables(game.data), bad)
    assert field in str(info.value)


def test_old_format_is_refused_with_a_clear_message() -> None:
    """A state of format 1 (magic, sizeof(Fixed), no checksum) names the format and what to
    do instead."""
    state = mid_game(GameConfig(), 2)._core.serialize()
    old = struct.pack("<II", 0x4D524331, LAYOUT["fixed_size"]) + state[LAYOUT["fixed"]:]
    with pytest.raises(ValueError, match=r"older core \(format 1.*format 2"):
        _core.Game.deserialize(core_game._tables(core.Game().data), old)
    with pytest.raises(ValueError, match="newer core"):
        _core.Game.deserialize(core_game._tables(core.Game().data),
                               _put(state, 4, "<I", 3)[:8] + state[8:])


def test_a_state_of_other_tables_is_refused() -> None:
    """Ids of one data set read against smaller tables: refused, not read out of bounds."""
    game = mid_game(GameConfig(), 4)
    data = game.data
    kinds = np.zeros((data.num_box_kinds + 4, 8), np.int64)
    small = _core.make_tables(kinds.ravel(), data.num_box_kinds, np.zeros(3, np.int64),
                              np.ones(2, np.int64))
    with pytest.raises(ValueError, match=REFUSED):
        _core.Game.deserialize(small, game._core.serialize())


def test_a_pickle_keeps_its_configs_player_count() -> None:
    """A pickled game whose state's player count differs from its config's is refused."""
    two, four = core.Game(GameConfig(num_players=2), 1), core.Game(GameConfig(), 1)
    state = two.__getstate__()
    state["state"] = four._core.serialize()
    with pytest.raises(ValueError, match="holds 4 players, its config 2"):
        core.Game.__new__(core.Game).__setstate__(state)
    assert len(variants()) == 15  # the fuzz's variants: 2-4 players, base and scenarios 1-4


def test_a_turn_order_naming_a_position_twice_is_refused() -> None:
    """A 2-player state whose turn order names a column position twice (valid checksum): the
    same plot would be taken twice, the second time as -1, which the build check then read as
    a plot id (ASan: heap-buffer-overflow in Tables::of_plot from Game::can_build)."""
    game = mid_game(variants()[0], seed=200)
    state = bytearray(game._core.serialize())
    order = LAYOUT["order"]
    assert len(set(state[order:order + 4])) == 4  # each position once
    state[order + 1] = state[order + 2]
    with pytest.raises(ValueError, match=REFUSED) as info:
        _core.Game.deserialize(core_game._tables(game.data), resealed(bytes(state)))
    assert "field order[2] must be a position not taken earlier in the round" in str(info.value)


@pytest.mark.parametrize("config, scenario", [(GameConfig(num_players=2), 2),
                                              (GameConfig(mode="legends", scenario=1), 3),
                                              (GameConfig(mode="legends", scenario=4), 0)])
def test_a_pickle_keeps_its_configs_scenario(config: GameConfig, scenario: int) -> None:
    """A pickled game whose core state holds another scenario than its config (valid
    checksum) is refused: a base game crafted to scenario 2 scored Gold Rush points."""
    game = mid_game(config, 3)
    state = game.__getstate__()
    state["state"] = _put(state["state"], LAYOUT["scenario"], "<i", scenario)
    with pytest.raises(ValueError, match=f"holds scenario {scenario}, its config"):
        core.Game.__new__(core.Game).__setstate__(state)
    assert pickle.loads(pickle.dumps(game)).scenario == game.scenario


def test_crafted_states_are_refused_or_play_soundly_in_a_subprocess() -> None:
    """Every byte + 1 under a recomputed checksum, in mid-game states of 2 players (base),
    3 players (scenario 1) and 4 players (scenario 4): refused with a ValueError, or played
    on with every state after it reading back (before, a turn order naming a position twice
    was accepted and played into a state with a plot id of -1 in a hand)."""
    run = subprocess.run([sys.executable, "-m", "tests.core.crafted_state_fuzz"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    bytes_line, pieces_line = run.stdout.splitlines()
    refused, accepted, played = map(int, bytes_line.split()[3::2])
    assert refused > 10_000 and accepted and played > 100
    # Pieces removed, duplicated or swapped, circles on one cell, an emptied box: the first
    # three refused (before, 371 of 371 states missing a piece were accepted).
    refused, played = map(int, pieces_line.split()[3::2])
    assert refused > 300 and played >= 3


def test_a_circle_on_an_empty_cell_is_refused() -> None:
    """A circle (a cell a partner may be recruited to) naming an empty cell, under a valid
    checksum: refused (before, it was accepted and a recruit put a partner on the empty
    cell, a state the checks themselves refuse)."""
    game = mid_game(variants()[5], seed=305, share=0.3)
    state = game._core.serialize()
    assert state[LAYOUT["circles"]:LAYOUT["circles"] + 2] == b"\xff\xff"  # none now
    plots = game._core.snapshot()["ranches"][game._core.player]["cells"][4]  # row 4: plot
    empty = int(np.flatnonzero(plots == -1)[0])
    with pytest.raises(ValueError, match=REFUSED) as info:
        _core.Game.deserialize(core_game._tables(game.data),
                               _put(state, LAYOUT["circles"], "<b", empty))
    assert "field circles[0] must be -1 or a built cell without a partner" in str(info.value)


def _refusal(state: bytes, data: object) -> str:
    """The message of the ValueError that refuses ``state``."""
    with pytest.raises(ValueError, match=REFUSED) as info:
        _core.Game.deserialize(core_game._tables(data), state)
    return str(info.value)


@pytest.mark.parametrize("where", ["box", "pile", "removed", "hand", "saloon"])
def test_a_state_missing_a_plot_or_token_is_refused(where: str) -> None:
    """Counts and checksum made to fit after a piece is taken out of its place: every plot and
    token must be in exactly one place (before, each was checked for at most one)."""
    game = mid_game(variants()[4], seed=41)
    state = game._core.serialize()
    head, lists = parts(state)
    snap = game._core.snapshot()
    if where in ("box", "pile", "removed"):
        gone = lists[where][-1]
        crafted = joined(head, {**lists, where: lists[where][:-1]})
    elif where == "hand":
        player = next(p for p, r in enumerate(snap["ranches"]) if r["hand"])
        gone = snap["ranches"][player]["hand"][-1]
        crafted = _put(state, _ranch("hand_size", player), "<i",
                       len(snap["ranches"][player]["hand"]) - 1)
    else:
        slot = next(s for s, t in enumerate(snap["saloon"]) if t >= 0)
        gone = snap["saloon"][slot]
        crafted = _put(state, LAYOUT["saloon"] + 2 * slot, "<h", -1)
    piece = "token" if where in ("pile", "saloon") else "plot"
    assert f"field {piece} {gone} must be in exactly one place" in _refusal(crafted, game.data)


def _drought_with_a_circle() -> tuple[core.Game, int, int]:
    """A game at a Drought decision with one circle set (a partner may be recruited there
    next; the Drought's choices do not read it): (game, the circle set, its cell)."""
    game, rng = core.Game(GameConfig(num_players=3), 0), np.random.default_rng(0)
    while not game.is_over:
        circles = game._core.snapshot()["circles"]
        if game.phase == Phase.DROUGHT and max(circles) >= 0:
            index = int(np.argmax(circles))
            return game, index, circles[index]
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(len(ids))]))
    raise AssertionError("no Drought decision with a circle")


def test_two_circles_on_one_cell_are_refused() -> None:
    """Both circles (cells a partner may be recruited to) naming one cell, under a valid
    checksum: refused (before, accepted; a recruit then put two partners on one cell)."""
    game, index, cell = _drought_with_a_circle()
    state = game._core.serialize()
    _core.Game.deserialize(core_game._tables(game.data), state)
    both = _put(state, LAYOUT["circles"] + 1 - index, "<b", cell)
    assert "field circles[1] must be another cell than circles[0]" in _refusal(both, game.data)


def test_a_circle_on_a_plot_without_the_symbol_is_refused() -> None:
    """A circle names a cell whose plot has the circle symbol (the only cells the rules set)."""
    game, index, _ = _drought_with_a_circle()
    cells = game._core.snapshot()["ranches"][game._core.player]["cells"]
    plain = np.flatnonzero((cells[4] >= 0) & (cells[2] == -1) &
                           ~np.asarray(game.data.circle, bool)[cells[0]])
    crafted = _put(game._core.serialize(), LAYOUT["circles"] + 1 - index, "<b", int(plain[0]))
    assert f"field circles[{1 - index}] must be -1 or a built cell" in _refusal(crafted,
                                                                                 game.data)


def test_a_set_up_with_no_decision_is_refused_and_search_never_divides_by_zero() -> None:
    """A new game whose box and column were moved to the removed plots (every piece in one
    place, counts and checksum made to fit): not over, yet no decision. Refused (before, it
    was accepted and random_playouts, mcts_search and random_rollout died of SIGFPE)."""
    config = GameConfig(num_players=3)
    message = _refusal(stuck_setup(config, 5), config.data)
    assert "field phase must be game over (10) when no decision is legal" in message
    # In a child process: a crash fails the test instead of killing pytest.
    code = ("import sys\n"
            "from moonriver_env.moonriver.core import game as cg\n"
            "from moonriver_env.moonriver.rules import GameConfig\n"
            "from tests.core.crafted_state_fuzz import stuck_setup\n"
            "config = GameConfig(num_players=3)\n"
            "try:\n"
            "    g = cg._core.Game.deserialize(cg._tables(config.data), stuck_setup(config, 5))\n"
            "except ValueError:\n"
            "    sys.exit(0)\n"
            "g.random_playouts(1, 1)\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])


SERIALIZE_CHILD = """
import hashlib, sys
from moonriver_env.moonriver import core
from moonriver_env.moonriver.rules import GameConfig
fill = int(sys.argv[1])
junk = [bytes([fill]) * size for size in (5056, 5200, 6000, 7000) for _ in range(200)]
del junk  # freed memory full of ``fill``: a game allocated there shows any byte left unset
for n in (2, 3, 4):
    game = core.Game(GameConfig(num_players=n), 11)
    for step in range(40):
        game.apply(int(game.legal_action_ids()[step % len(game.legal_action_ids())]))
    print(n, hashlib.sha256(game._core.serialize()).hexdigest(),
          hashlib.sha256(game._core.copy().serialize()).hexdigest())
"""


def test_the_same_game_serializes_to_the_same_bytes_in_any_process() -> None:
    """The same seeded game, serialized in two processes whose freed memory holds different
    bytes: the same bytes (before, padding and the unused seats' ranches were copied from
    uninitialized memory: 58 bytes differed)."""
    out = []
    for fill in (0x00, 0xA5):
        run = subprocess.run([sys.executable, "-c", SERIALIZE_CHILD, str(fill)], cwd=ROOT,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        out.append(run.stdout)
    assert out[0] == out[1]
    for line in out[0].splitlines():
        _, state, copy = line.split()
        assert state == copy
