"""Every binding of the core checks its ids and floats (issue 29, point 3): no id narrowed to
another (int64 in, range-checked), no NaN, infinity or out-of-range search parameter, no float
array where ids are expected, no setup or table id out of range."""

from __future__ import annotations

import importlib.util
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest

from moonriver_env.moonriver import core
from moonriver_env.moonriver.batch.games import BatchedGames
from moonriver_env.moonriver.core import game as core_game
from moonriver_env.moonriver.rules import GameConfig

_core = core_game._core


@pytest.fixture
def game() -> core.Game:
    g = core.Game(GameConfig(), seed=4)
    for _ in range(12):
        g.apply(int(g.legal_action_ids()[0]))
    return g


@pytest.mark.parametrize("method", ["greedy_values", "one_ply_margins"])
@pytest.mark.parametrize("shift", [2**32, -(2**32), 2**63 - 2710])
def test_ids_are_not_narrowed(game: core.Game, method: str, shift: int) -> None:
    """A legal id plus or minus 2**32 (the same int32) is refused, not valued as that id."""
    legal = int(game.legal_action_ids()[0])
    getattr(game, method)(np.array([legal]))  # the id itself is fine
    with pytest.raises(ValueError, match=rf"every id must be legal now \(got {legal + shift}\)"):
        getattr(game, method)(np.array([legal + shift], np.int64))


@pytest.mark.parametrize("method", ["greedy_values", "one_ply_margins"])
def test_float_ids_are_refused_not_cut_to_other_ids(game: core.Game, method: str) -> None:
    """A float array of ids (a legal id plus 0.5, which a cast cuts back to the legal id) is
    refused by the wrapper and by the extension; integer arrays of any width are taken."""
    legal = game.legal_action_ids()
    with pytest.raises(ValueError, match="action ids must be integers, got an array of float64"):
        getattr(game, method)(legal + 0.5)
    raw_args = (game._core.player,) if method == "one_ply_margins" else ()
    with pytest.raises(TypeError, match="incompatible function arguments"):
        getattr(game._core, method)(*raw_args, legal + 0.5)
    assert np.array_equal(getattr(game, method)(legal.astype(np.int32))[0],
                          getattr(game, method)(legal)[0])


@pytest.mark.parametrize("method", ["greedy_values", "one_ply_margins"])
def test_out_of_range_and_illegal_ids_are_refused(game: core.Game, method: str) -> None:
    for bad in (-1, 2710, 10**12):
        with pytest.raises(ValueError, match="every id must be legal now"):
            getattr(game, method)(np.array([bad], np.int64))


@pytest.mark.parametrize("params", [
    {"exploration": math.nan}, {"exploration": math.inf}, {"exploration": -1.0},
    {"value_scale": math.nan}, {"value_scale": 0.0}, {"value_scale": -20.0},
    {"value_scale": math.inf}])
def test_search_parameters_are_refused(game: core.Game, params: dict) -> None:
    """NaN, infinity and out-of-range exploration or value scale: refused before searching."""
    name = next(iter(params))
    with pytest.raises(ValueError, match=f"{name} must be finite"):
        game.mcts_search(simulations=4, seed=1, **params)


def test_raw_search_parameters_are_refused(game: core.Game) -> None:
    """The extension itself refuses what the wrapper lets through (seconds, counts)."""
    raw = game._core
    good = {"simulations": 4, "seconds": 0.0, "rollout_depth": 5, "exploration": 1.0,
            "value_scale": 20.0, "seed": 1}
    raw.mcts_search(**good)
    for name, value, message in (
            ("simulations", 0, r"simulations must be an int in \[1, 2147483647\], got 0"),
            ("seconds", math.nan, "seconds must be finite"),
            ("seconds", math.inf, "seconds must be finite"),
            ("seconds", -1.0, "seconds must be finite"),
            ("time_limit", -1.0, "time_limit must be finite"),
            ("rollout_depth", -1, r"rollout_depth must be an int in \[0, 2147483647\], got -1")):
        with pytest.raises(ValueError, match=message):
            raw.mcts_search(**{**good, name: value})
    for call in (lambda: raw.random_playouts(-1, 1), lambda: raw.random_rollout(-1, 1),
                 lambda: raw.determinized_clones(-1, 1), lambda: raw.random_play_counts(-1, 1)):
        with pytest.raises(ValueError, match=r"must be an int in \[0, 2147483647\], got -1"):
            call()


@pytest.mark.parametrize("games", [[0.5], np.array([0.0]), np.array([True]), [1.0, 0.0]])
def test_greedy_prior_refuses_float_and_bool_indices(games: object) -> None:
    """A float array is no list of game indices (it used to read game 0)."""
    batch = BatchedGames(2, GameConfig(num_players=2))
    batch.reset(3)
    batch.greedy_prior([0, 1])
    with pytest.raises(ValueError, match="games must be integer game indices"):
        batch.greedy_prior(games)
    with pytest.raises(ValueError, match="shape_weight must be finite"):
        batch.greedy_prior([0], shape_weight=math.nan)


def test_hidden_orders_take_only_the_tables_ids(game: core.Game) -> None:
    box, pile = game._core.hidden()
    for bad_box, bad_pile, what in (([*box[:-1], 10000], pile, "box"),
                                    ([*box[:-1], -1], pile, "box"),
                                    (box, [*pile[:-1], 999], "pile")):
        with pytest.raises(ValueError, match=f"set_hidden: the {what} holds"):
            game._core.set_hidden(bad_box, bad_pile)
    assert game._core.hidden() == (box, pile)


PLOTS, TOKENS = GameConfig().data.num_plots, GameConfig().data.num_partners


def _setup(**change: object) -> dict:
    base = {"num_players": 2, "scenario": 0, "auto_forced": False, "capacity": [3, 3],
            "bridges": [0, 0], "box": list(range(PLOTS)), "pile": list(range(TOKENS)),
            "setup_order": [0, 1, 1, 0], "board_ids": [0, 1]}
    return {**base, **change}


@pytest.mark.parametrize(("change", "message"), [
    ({"box": [*range(PLOTS - 1), 5000]}, "box holds plot ids"),
    ({"pile": [*range(TOKENS - 1), -3]}, "pile holds partner tokens"),
    # Every piece in exactly one place from the start (a byte state is held to it).
    ({"box": list(range(40))}, "box holds each plot id of the tables once"),
    ({"box": [*range(PLOTS - 1), 0]}, "box holds each plot id of the tables once"),
    ({"pile": list(range(TOKENS - 1))}, "pile holds each partner token of the tables once"),
    ({"capacity": [3, 9]}, "capacity must be 1..4"),
    ({"bridges": [1 << 2, 0]}, "bridges must be usable cells"),
    ({"board_ids": [0, 7]}, "board_ids must be -1..4"),
    ({"setup_order": [0, 2, 1, 0]}, "setup_order holds players"),
    ({"scenario": 7}, "scenario must be"),
    ({"num_players": 5}, "num_players must be 2..4"),
])
def test_setups_with_ids_out_of_range_are_refused(change: dict, message: str) -> None:
    tables = core_game._tables(GameConfig().data)
    _core.Game(tables, **_setup())
    with pytest.raises(ValueError, match=message):
        _core.Game(tables, **_setup(**change))


def test_a_set_up_whose_box_cannot_fill_two_columns_is_refused() -> None:
    """Tables of 7 plots: the set-up's column and the next cannot both be drawn (the set-up
    would end with no column to select from, a game with no decision)."""
    kinds = np.zeros((8, 8), np.int64)
    small = _core.make_tables(kinds.ravel(), 4, np.zeros(7, np.int64), np.ones(2, np.int64))
    with pytest.raises(ValueError, match="box must hold at least 8 plots"):
        _core.Game(small, **_setup(box=list(range(7)), pile=[0, 1]))


def test_hidden_orders_keep_their_items(game: core.Game) -> None:
    """set_hidden reorders the box and pile: a plot or token swapped for another (one lost,
    one doubled) is refused."""
    box, pile = game._core.hidden()
    game._core.set_hidden(box[::-1], pile[::-1])
    for bad_box, bad_pile in (([box[1], *box[1:]], pile), (box, [pile[1], *pile[1:]])):
        with pytest.raises(ValueError, match="set_hidden: the box and pile keep their items"):
            game._core.set_hidden(bad_box, bad_pile)
    assert game._core.hidden() == (box[::-1], pile[::-1])


def test_tables_with_ids_out_of_range_are_refused() -> None:
    kinds = np.zeros((8, 8), np.int64)
    ok = (kinds.ravel(), 4, np.zeros(3, np.int64), np.ones(2, np.int64))
    _core.make_tables(*ok)
    bad_terrain = kinds.copy()
    bad_terrain[0, 0] = 6
    for args, message in (((kinds.ravel(), 5, *ok[2:]), "4 bonus-tile faces"),
                          ((bad_terrain.ravel(), *ok[1:]), "terrain 0..5"),
                          ((*ok[:2], np.array([4], np.int64), ok[3]), "each a box kind"),
                          ((*ok[:3], np.array([0], np.int64)), "specialist kind 1..5")):
        with pytest.raises(ValueError, match=message):
            _core.make_tables(*args)


def test_no_writable_view_of_the_hidden_order(game: core.Game) -> None:
    """determinize goes through set_hidden (ids checked); no binding hands out the state's box
    and pile for writing (a bad id written there was read out of bounds at the next draw)."""
    assert not hasattr(game._core, "hidden_views")
    before = game._core.hidden()
    game.determinize(np.random.default_rng(1))
    after = game._core.hidden()
    assert after != before and [sorted(x) for x in after] == [sorted(x) for x in before]


def test_a_process_that_used_the_core_exits_without_leak_warnings():
    """Core objects cached by the package are dropped before teardown: nanobind prints no
    'leaked' report on stderr at exit (it did for every process that made a game)."""
    import subprocess
    import sys

    code = ("from moonriver_env.moonriver.core import Game\n"
            "from moonriver_env.moonriver.rules.config import GameConfig\n"
            "from moonriver_env.moonriver.batch.games import BatchedGames\n"
            "g = Game(GameConfig(), 1); g.observe(0)\n"
            "b = BatchedGames(2); b.reset(0); b.step(b.random_actions())\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "leaked" not in proc.stderr, proc.stderr


def _started_batch() -> tuple[object, dict]:
    """A core batch of two 2-player games, started, and the output arrays it wrote."""
    config = GameConfig(num_players=2)
    plan = core_game.setup_plan_of(config, config.data)[1]
    batch = _core.Batch(2, [_core.SEAT_LEARNER, _core.SEAT_RANDOM], 0, 1, True, plan, False)
    for g in range(2):
        batch.begin(g, [g], 0, 2)
    outs = {"player": np.zeros(2, np.int32), "obs": np.zeros((2, 4934), np.float32),
            "mask": np.zeros((2, 2710), np.int8), "rewards": np.zeros((2, 2), np.float32),
            "done": np.zeros(2, np.uint8), "final_obs": None, "threads": 1}
    batch.start(**outs)
    return batch, outs


@pytest.mark.parametrize("bad", [np.zeros((2, 4934), np.uint8), np.zeros((2, 4940), np.uint8),
                                 np.zeros((2, 2 * 4934), np.float32)[:, ::2],
                                 [[0.0] * 4934] * 2],
                         ids=["uint8", "compact", "strided", "list"])
def test_the_batch_names_the_observation_arrays_it_writes_into(bad: object) -> None:
    """An observation array of the wrong kind, layout or type is a ValueError saying which
    arrays the batch writes (nanobind's TypeError named none for a strided array or a list)."""
    batch, outs = _started_batch()
    assert outs["obs"].any() and outs["mask"].any()
    for name in ("obs", "final_obs"):
        with pytest.raises(ValueError, match=r"output arrays: .*obs \(N, 4934\) float32"):
            batch.start(**{**outs, name: bad})


def test_the_stub_names_the_types_inside_its_generics() -> None:
    """_core.pyi (nanobind's stub, written at build) has no bare dict, list, tuple or NDArray:
    mypy's disallow_any_generics reads it as the package's other modules."""
    if os.environ.get("MOONRIVER_SANITIZED"):
        pytest.skip("the sanitizer build writes no stub (test_sanitizers.py)")
    origin = importlib.util.find_spec("moonriver_env.moonriver.core._core").origin
    stub = Path(origin).with_name("_core.pyi").read_text()
    bare = re.findall(r"(?:->|:|\[|\|) *(?:dict|list|tuple|NDArray)\b(?!\[)", stub)
    assert "def state_layout() -> dict[str, int]:" in stub
    assert bare == []
    assert re.findall(r"(?:->|:|\[|\|) *(?:dict|list|tuple|NDArray)\b(?!\[)",
                      "def f(a: list, b: Annotated[NDArray, dict(shape=(None,))]) -> tuple:") \
        == [": list", "[NDArray", "-> tuple"]  # what the check finds
