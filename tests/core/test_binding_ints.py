"""Every integer argument of every binding of the core takes any Python int: one outside the
range its C++ type (or the binding) allows is a ValueError naming the argument and that range,
never nanobind's TypeError ("incompatible function arguments", which names neither)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from moonriver_env.moonriver.core import Game
from moonriver_env.moonriver.core import game as core_game
from moonriver_env.moonriver.core.rng import seed_words
from moonriver_env.moonriver.rules import GameConfig

_core = core_game._core
TOO_BIG = (2**64, -(2**63) - 1, 10**40, -(2**200))  # each beyond every 64-bit range
INT_PARAM = re.compile(r"(\w+): (int|collections\.abc\.Sequence\[int\]|tuple\[int, int, int, "
                       r"int, bool, int\]|collections\.abc\.Sequence\[int\] \| None)[,)= ]")


def int_params() -> set[str]:
    """Every ``Class.method:argument`` of the module typed int (or holding ints), read from
    the signatures nanobind writes at the top of each docstring."""
    found = set()
    for top in dir(_core):
        obj = getattr(_core, top)
        if isinstance(obj, type):
            members = {f"{top}.{name}": getattr(obj, name) for name in dir(obj)
                       if not name.startswith("__") or name == "__init__"}
        else:
            members = {top: obj} if callable(obj) else {}
        for name, member in members.items():
            fn = member.fset if isinstance(member, property) else member
            doc = (getattr(fn, "__doc__", None) or "").split("\n\n")[0]
            for arg, _ in INT_PARAM.findall(doc.replace("\n", " ")):
                if arg != "self":
                    found.add(f"{name}:{arg}")
    return found


class World:
    """One of each object the bindings take, made with good arguments."""

    def __init__(self) -> None:
        config = GameConfig(num_players=2)
        self.data = config.data
        self.tables = core_game._tables(self.data)
        self.plan_args = core_game.setup_plan(config, self.data)[1]
        self.plan = _core.SetupPlan(self.tables, *self.plan_args)
        self.game = Game(config, 3)
        self.core = self.game._core
        self.words = seed_words(3)
        self.rng = _core.Pcg64(self.words)
        self.search = _core.AzSearch([self.core], [0], 4, 1, True, 4, 50.0, 1.0, 1.5, 1.0, 1)
        self.batch = _core.Batch(2, [_core.SEAT_LEARNER, _core.SEAT_RANDOM], 0, 1, True,
                                 self.plan, False)
        n = 2
        self.out = {"player": np.zeros(n, np.int32), "obs": np.zeros((n, 4934), np.float32),
                    "mask": np.zeros((n, 2710), np.int8), "rewards": np.zeros((n, 2), np.float32),
                    "done": np.zeros(n, np.uint8), "final_obs": None}

    def game_args(self) -> dict[str, Any]:
        box = self.core.hidden()[0]
        box = box + sorted(set(range(self.data.num_plots)) - set(box))
        return {"tables": self.tables, "num_players": 2, "scenario": 0, "auto_forced": False,
                "capacity": [3, 3], "bridges": [0, 0], "box": box,
                "pile": list(range(self.data.num_partners)), "setup_order": [0, 1, 1, 0],
                "board_ids": [0, 0]}


Call = Callable[[World, dict[str, Any]], Any]
# Each binding with int arguments: a call with good keyword arguments, given the ones to change.
CALLS: dict[str, tuple[Call, dict[str, Any]]] = {
    "make_tables": (lambda w, a: _core.make_tables(**a), {}),
    "Game.__init__": (lambda w, a: _core.Game(**{**w.game_args(), **a}), {}),
    "Game.apply": (lambda w, a: w.core.copy().apply(**a), {"action": 0}),
    "Game.is_legal": (lambda w, a: w.core.is_legal(**a), {"action": 0}),
    "Game.observe": (lambda w, a: w.core.observe(**a, out=np.zeros(4934, np.float32)),
                     {"viewer": 0}),
    "Game.set_hidden": (lambda w, a: w.core.copy().set_hidden(**{
        "box": w.core.hidden()[0], "pile": w.core.hidden()[1], **a}), {}),
    "Game.random_playouts": (lambda w, a: w.core.random_playouts(**a), {"count": 1, "seed": 1}),
    "Game.random_play_counts": (lambda w, a: w.core.random_play_counts(**a),
                                {"count": 1, "seed": 1}),
    "Game.random_rollout": (lambda w, a: w.core.copy().random_rollout(**a),
                            {"depth": 1, "seed": 1}),
    "Game.one_ply_margins": (lambda w, a: w.core.one_ply_margins(**a, ids=w.core.legal_ids()),
                             {"player": 0}),
    "Game.determinized_clone": (lambda w, a: w.core.determinized_clone(**a), {"seed": 1}),
    "Game.determinized_clones": (lambda w, a: w.core.determinized_clones(**a),
                                 {"count": 1, "seed": 1}),
    "Game.mcts_search": (lambda w, a: w.core.mcts_search(seconds=0.0, exploration=1.0,
                                                         value_scale=20.0, **a),
                         {"simulations": 2, "rollout_depth": 2, "seed": 1}),
    "Pcg64.__init__": (lambda w, a: _core.Pcg64(**a), {}),
    "Pcg64.integers": (lambda w, a: w.rng.integers(**a), {"low": 0, "high": 5}),
    "Pcg64.permutation": (lambda w, a: w.rng.permutation(**a), {"n": 3}),
    "Pcg64.shuffle": (lambda w, a: w.rng.shuffle(**a), {}),
    "Pcg64.state": (lambda w, a: setattr(w.rng, "state", a["arg"]), {}),
    "SetupPlan.__init__": (lambda w, a: _core.SetupPlan(w.tables, **{**dict(zip(
        ("num_players", "auto_forced", "scenario", "draw_scenario", "scenario_low",
         "scenario_high", "capacity", "bridges", "board_ids", "draw_boards"), w.plan_args,
        strict=True)), **a}), {}),
    "SetupPlan.draw": (lambda w, a: w.plan.draw(**a), {}),
    "SetupPlan.game": (lambda w, a: w.plan.game(**{"seed_words": w.words, **a}), {}),
    "AzSearch.__init__": (lambda w, a: _core.AzSearch(**{
        "games": [w.core], "indices": [0], "simulations": 4, "seed": 1, "gumbel": True,
        "max_considered": 4, "c_visit": 50.0, "c_scale": 1.0, "c_puct": 1.5,
        "gumbel_scale": 1.0, "threads": 1, **a}), {}),
    "AzSearch.leaf_state": (lambda w, a: w.search.leaf_state(**a), {}),
    "Batch.__init__": (lambda w, a: _core.Batch(**{
        "num_games": 2, "seats": [0, 1], "reward_mode": 0, "agent_seed": 1, "autoreset": True,
        "plan": w.plan, **a}), {}),
    "Batch.begin": (lambda w, a: w.batch.begin(**{"g": 0, "base_words": w.words, "k": 0,
                                                  "stride": 1, **a}), {}),
    "Batch.episode": (lambda w, a: w.batch.episode(**a), {}),
    "Batch.game": (lambda w, a: w.batch.game(**a), {}),
    "Batch.set_seats": (lambda w, a: w.batch.set_seats(**{"g": 0, "kinds": [0, 1], **a}), {}),
    "Batch.greedy_prior": (lambda w, a: w.batch.greedy_prior(
        np.array([0], np.int64), 0.0, np.zeros((1, 2710), np.float32), **a), {}),
    "Batch.start": (lambda w, a: w.batch.start(**w.out, **a), {}),
    "Batch.step": (lambda w, a: w.batch.step(np.zeros(2, np.int64), **w.out, **a), {}),
    "Batch.step_network": (lambda w, a: w.batch.step_network(
        np.zeros(0, np.int64), np.zeros(0, np.int64), **w.out, **a), {}),
    "Batch.random_actions": (lambda w, a: w.batch.random_actions(np.zeros(2, np.int64), **a),
                             {}),
}
# Where an argument is a list (or the state tuple), the bad int is put at this entry.
SEQUENCES = {"seed_words": 0, "base_words": 0, "items": 1, "capacity": 1, "bridges": 0,
             "box": 2, "pile": 1, "setup_order": 3, "board_ids": 1, "indices": 0, "seats": 1,
             "kinds": 0, "arg": 5}
NAMES = {"Pcg64.state:arg": "state"}  # the setter's argument, as the message names it


@pytest.fixture(scope="module")
def world() -> World:
    return World()


def test_every_int_argument_of_every_binding_is_covered() -> None:
    """The table below names every int argument the module's signatures show (a binding
    added later without a case fails here)."""
    covered = set()
    for name, (_, _) in CALLS.items():
        covered |= {p for p in int_params() if p.startswith(name + ":")}
    assert int_params() - covered == set()
    assert len(int_params()) > 50


def _good_value(world: World, name: str, arg: str) -> Any:
    """A good value of ``arg`` of binding ``name`` (where the call's defaults do not give it)."""
    good = {"make_tables:num_box_kinds": world.data.num_box_kinds,
            "Pcg64.__init__:seed_words": world.words, "SetupPlan.draw:seed_words": world.words,
            "SetupPlan.game:seed_words": world.words, "Pcg64.shuffle:items": [1, 2, 3],
            "Pcg64.state:arg": world.rng.state, "AzSearch.leaf_state:index": 0}
    key = f"{name}:{arg}"
    if key in good:
        return good[key]
    if name == "Game.set_hidden":
        return world.core.hidden()[0 if arg == "box" else 1]
    if name == "SetupPlan.game":
        return list(world.plan.draw(world.words)[2 if arg == "box" else 3])
    if name in ("Game.__init__",):
        return world.game_args()[arg]
    if name == "SetupPlan.__init__":
        return dict(zip(("num_players", "auto_forced", "scenario", "draw_scenario",
                         "scenario_low", "scenario_high", "capacity", "bridges", "board_ids",
                         "draw_boards"), world.plan_args, strict=True))[arg]
    if name == "Batch.__init__":
        return {"seats": [0, 1], "num_games": 2, "reward_mode": 0, "agent_seed": 1}[arg]
    return {"g": 0, "threads": 1, "k": 0, "stride": 1, "base_words": world.words,
            "kinds": [0, 1], "indices": [0], "simulations": 4, "seed": 1, "max_considered": 4,
            "num_box_kinds": world.data.num_box_kinds}.get(arg, 1)


def _bad_args(world: World, name: str, arg: str, bad: int) -> tuple[dict[str, Any], str]:
    """The changed arguments with ``bad`` in ``arg`` (at an entry of a list), and the name the
    error must give."""
    value = _good_value(world, name, arg)
    if arg in SEQUENCES and isinstance(value, (list, tuple)):
        at = min(SEQUENCES[arg], len(value) - 1)
        changed = list(value)
        changed[at] = bad
        shown = NAMES.get(f"{name}:{arg}", arg)
        return {arg: tuple(changed) if isinstance(value, tuple) else changed}, f"{shown}[{at}]"
    return {arg: bad}, arg


def _cases() -> list[tuple[str, str]]:
    return sorted(tuple(p.split(":")) for p in int_params())  # type: ignore[misc]


@pytest.mark.parametrize("name,arg", _cases())
def test_an_int_too_large_for_cpp_is_a_value_error_naming_it(world: World, name: str,
                                                              arg: str) -> None:
    call, defaults = CALLS[name]
    if name == "make_tables":
        base = {"kinds": np.zeros(8 * (world.data.num_box_kinds + 4), np.int64),
                "num_box_kinds": world.data.num_box_kinds,
                "plot_kind": np.zeros(3, np.int64), "specialist": np.ones(2, np.int64)}
        defaults = base
    if name == "AzSearch.leaf_state":
        world.search.leaves()
    for bad in TOO_BIG:
        changed, shown = _bad_args(world, name, arg, bad)
        with pytest.raises(ValueError) as info:
            call(world, {**defaults, **changed})
        message = str(info.value)
        assert re.search(rf"\b{re.escape(shown)} must be an int in \[-?\d+, \d+\], got ",
                         message), (name, arg, bad, message)
        bits = bad.bit_length()
        assert (str(bad) if bits <= 128 else f"an int of {bits} bits") in message


@pytest.mark.parametrize("value", [2**63 - 1, 2**31])
def test_the_reviews_search_budget_is_a_value_error(world: World, value: int) -> None:
    """mcts_search(simulations=2**63-1) raised nanobind's TypeError; 2**31 overflows int32."""
    with pytest.raises(ValueError, match=r"simulations must be an int in \[1, 2147483647\], "
                                         rf"got {value}"):
        world.core.mcts_search(value, 0.0, 2, 1.0, 20.0, 1)


def test_numpy_ints_and_bools_are_still_taken_as_before(world: World) -> None:
    """What nanobind's casters took (numpy ints through __index__, bool as an int) is taken;
    a float is still refused as a type."""
    core = world.core.copy()
    assert core.is_legal(np.int64(int(core.legal_ids()[0])))
    assert core.random_rollout(np.int32(2), np.uint64(5)) == 2
    assert core.random_playouts(True, 1)  # bool is an int (one playout)
    with pytest.raises(TypeError):
        core.is_legal(1.0)
