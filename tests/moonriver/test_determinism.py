"""Determinism, copies, hidden-information reshuffles and game records."""

from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonriver_env.moonriver.rules import Game, GameConfig, Phase
from moonriver_env.moonriver.rules.ranch import Ranch
from tests.helpers import HANG_GUARD

VARIANTS = [(n, mode) for n in (2, 3, 4) for mode in ("base", "legends")]
VARIANT_IDS = [f"{n}p-{mode}" for n, mode in VARIANTS]
ROOT = Path(__file__).resolve().parents[2]


def play(game: Game, rng: np.random.Generator, steps: int | None = None) -> list[int]:
    """Play random legal decisions (all, or ``steps`` of them); return the ids played."""
    played = []
    while not game.is_over and (steps is None or len(played) < steps):
        ids = game.legal_action_ids()
        aid = int(ids[rng.integers(ids.size)])
        game.apply(aid)
        played.append(aid)
    return played


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.tolist())
    if isinstance(value, np.random.Generator):
        return value.bit_generator.state
    if isinstance(value, Ranch):
        return {name: _plain(getattr(value, name, None)) for name in Ranch.__slots__}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def state(game: Game) -> dict[str, Any]:
    """The full state as plain comparable values (everything pickle keeps, caches excluded).

    Pickled bytes are not compared across objects: pickle's memo follows object identity
    (e.g. shared strings), which differs between a game and its copy without any difference
    in state.
    """
    return {name: _plain(value) for name, value in game.__getstate__().items()}


def json_round_trip(record: dict) -> dict:
    return json.loads(json.dumps(record))


def advance_to(game: Game, rng: np.random.Generator, phase: Phase, limit: int = 3000) -> bool:
    """Play random decisions until ``phase`` is to be decided; False if the game ends first."""
    for _ in range(limit):
        if game.phase == phase:
            return True
        if game.is_over:
            return False
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(ids.size)]))
    return False


# --------------------------------------------------------------------- same seed
@pytest.mark.parametrize(("num_players", "mode"), VARIANTS, ids=VARIANT_IDS)
def test_same_seed_same_decisions_same_record(num_players: int, mode: str) -> None:
    cfg = GameConfig(num_players=num_players, mode=mode)
    first = Game(cfg, seed=42)
    decisions = play(first, np.random.default_rng(1))
    second = Game(cfg, seed=42)
    for aid in decisions:
        second.apply(aid)
    assert second.is_over
    assert second.to_record() == first.to_record()
    assert state(second) == state(first)


@pytest.mark.parametrize(("num_players", "mode"), VARIANTS, ids=VARIANT_IDS)
def test_same_seed_same_setup(num_players: int, mode: str) -> None:
    cfg = GameConfig(num_players=num_players, mode=mode)
    assert Game(cfg, seed=9).to_record() == Game(cfg, seed=9).to_record()
    assert np.array_equal(Game(cfg, seed=9).legal_mask(), Game(cfg, seed=9).legal_mask())


@pytest.mark.parametrize(("num_players", "mode"), VARIANTS, ids=VARIANT_IDS)
def test_different_seeds_differ(num_players: int, mode: str) -> None:
    cfg = GameConfig(num_players=num_players, mode=mode)
    records = [Game(cfg, seed=s).to_record() for s in range(20)]
    assert records[0]["events"] != records[1]["events"]
    setups = {json.dumps(r["events"]) for r in records}
    assert len(setups) == 20, "distinct seeds should give distinct setups"
    boxes = {tuple(Game(cfg, seed=s).box) for s in range(20)}
    assert len(boxes) == 20


def test_same_seed_across_processes() -> None:
    """Records do not depend on the interpreter's hash seed."""
    script = ("import json, numpy as np\n"
              "from moonriver_env.moonriver.rules import Game, GameConfig\n"
              "g = Game(GameConfig(num_players=3, mode='legends'), seed=123)\n"
              "rng = np.random.default_rng(5)\n"
              "while not g.is_over:\n"
              "    ids = g.legal_action_ids()\n"
              "    g.apply(int(ids[rng.integers(ids.size)]))\n"
              "print(json.dumps(g.to_record(), sort_keys=True))\n")
    outs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              env=env, cwd=ROOT, check=True, timeout=HANG_GUARD)
        outs.append(proc.stdout)
    assert outs[0] == outs[1]
    here = Game(GameConfig(num_players=3, mode="legends"), seed=123)
    play(here, np.random.default_rng(5))
    assert json.loads(outs[0]) == json_round_trip(here.to_record())


def test_seed_validation() -> None:
    for bad in (-1, True, 1.5, "3"):
        with pytest.raises(ValueError, match="seed"):
            Game(GameConfig(), seed=bad)
    game = Game(GameConfig(num_players=2), seed=None)
    assert isinstance(game.seed, int) and game.seed >= 0
    play(game, np.random.default_rng(0))
    again = Game.from_record(json_round_trip(game.to_record()))
    assert again.to_record() == game.to_record()
    numpy_seed = Game(GameConfig(), seed=np.int64(7))
    assert (numpy_seed.to_record(include_seed=True)
            == Game(GameConfig(), seed=7).to_record(include_seed=True))


# ------------------------------------------------------------------------- copies
COPIERS = {
    "clone": lambda g: g.clone(),
    "pickle": lambda g: pickle.loads(pickle.dumps(g)),
    "pickle-proto2": lambda g: pickle.loads(pickle.dumps(g, protocol=2)),
    "deepcopy": copy.deepcopy,
}


@pytest.mark.parametrize("copier", list(COPIERS), ids=list(COPIERS))
@pytest.mark.parametrize(("num_players", "mode"), VARIANTS, ids=VARIANT_IDS)
def test_copies_continue_identically(copier: str, num_players: int, mode: str) -> None:
    cfg = GameConfig(num_players=num_players, mode=mode)
    game = Game(cfg, seed=314)
    rng = np.random.default_rng(2)
    for steps in (0, 1, 37, 60):  # setup, then deeper and deeper into the game
        play(game, rng, steps)
        twin = COPIERS[copier](game)
        assert twin.to_record() == game.to_record()
        assert np.array_equal(twin.legal_mask(), game.legal_mask())
        assert twin.context() == game.context()
        seed = int(rng.integers(2**32))
        a, b = game.clone(), twin
        assert play(a, np.random.default_rng(seed)) == play(b, np.random.default_rng(seed))
        assert a.to_record() == b.to_record()
        assert state(a) == state(b)


@pytest.mark.parametrize("copier", list(COPIERS), ids=list(COPIERS))
@pytest.mark.parametrize("phase", [Phase.COWBOY, Phase.RECRUIT, Phase.DISCARD, Phase.BONUS])
def test_copies_in_the_middle_of_a_turn(copier: str, phase: Phase) -> None:
    """Copies taken inside a sub-decision (effects, discards, bonus) continue identically."""
    found = 0
    for seed in range(40):
        game = Game(GameConfig(num_players=2, mode="legends"), seed=seed)
        if not advance_to(game, np.random.default_rng(seed), phase):
            continue
        found += 1
        twin = COPIERS[copier](game)
        assert twin.context() == game.context()
        a, b = game.clone(), twin
        play(a, np.random.default_rng(seed + 1))
        play(b, np.random.default_rng(seed + 1))
        assert a.to_record() == b.to_record()
        if found == 3:
            break
    assert found, f"no game reached {phase.name}"


def test_finished_game_copies() -> None:
    game = Game(GameConfig(num_players=4, mode="legends"), seed=8)
    play(game, np.random.default_rng(8))
    for copier in COPIERS.values():
        twin = copier(game)
        assert twin.is_over and twin.scores() == game.scores()
        assert twin.winners() == game.winners()
        assert twin.to_record() == game.to_record()
        assert not twin.legal_mask().any()


@pytest.mark.parametrize("copier", list(COPIERS), ids=list(COPIERS))
def test_copy_independence(copier: str) -> None:
    """Acting on a copy leaves the original unchanged, and the other way round."""
    game = Game(GameConfig(num_players=3, mode="legends"), seed=21)
    rng = np.random.default_rng(21)
    play(game, rng, 40)
    for _ in range(5):
        before, record = state(game), game.to_record()
        twin = COPIERS[copier](game)
        play(twin, np.random.default_rng(int(rng.integers(1000))))
        assert twin.is_over
        assert state(game) == before
        assert game.to_record() == record
        # ... and playing the original does not reach into the copy.
        twin = COPIERS[copier](game)
        twin_before = state(twin)
        play(game, rng, 15)
        assert state(twin) == twin_before
        if game.is_over:
            break


def test_clone_shares_no_mutable_state() -> None:
    game = Game(GameConfig(num_players=2, mode="legends"), seed=4)
    play(game, np.random.default_rng(4), 80)
    twin = game.clone()
    state_names = set(game.__getstate__())  # caches (dropped by pickle) may be shared
    for name, value in vars(game).items():
        if name in state_names and name != "setup_order" and isinstance(value, (list, dict)):
            assert vars(twin)[name] is not value, f"clone shares the list {name!r}"
    assert game.ranches is not twin.ranches
    # Ranches are copied on write: shared until either game changes one, then never again.
    assert all(m is t for m, t in zip(game.ranches, twin.ranches, strict=True))
    rng = np.random.default_rng(5)
    while not twin.is_over:
        twin.apply(int(rng.choice(twin.legal_action_ids())))
    for mine, theirs in zip(game.ranches, twin.ranches, strict=True):
        assert mine is not theirs
        for name in ("kind", "plot", "terrain", "cows", "partner", "face", "empty", "hand",
                     "first_adj", "second_adj", "adj_cells"):
            assert getattr(mine, name) is not getattr(theirs, name), name


def test_ranch_written_by_either_side_is_copied_first() -> None:
    """After a clone, a change by the original or by the clone never reaches the other."""
    rng = np.random.default_rng(9)
    for variant in ((2, "base"), (4, "legends")):
        game = Game(GameConfig(num_players=variant[0], mode=variant[1]), seed=9)
        while not game.is_over:
            twin = game.clone()
            twin_before, game_before = fingerprint_ranches(twin), fingerprint_ranches(game)
            aid = int(rng.choice(game.legal_action_ids()))
            game.apply(aid)  # the original writes first: the twin must not see it
            assert fingerprint_ranches(twin) == twin_before
            other = twin.clone()
            twin.apply(aid)
            assert fingerprint_ranches(twin) == fingerprint_ranches(game)
            assert fingerprint_ranches(other) == game_before


def fingerprint_ranches(game: Game) -> list:
    """Every ranch's contents, reserve and bonus flag as plain values."""
    return [(r.cells.tobytes(), r.plot.tobytes(), r.label.tobytes(), list(r.hand),
             r.bonus_taken, r.cow_cells, list(r.partner_cells), dict(r.sizes))
            for r in game.ranches]


# --------------------------------------------------------------------- determinize
def public_view(game: Game) -> dict:
    record = game.to_record()
    return {"final": record["final"], "scores": record["scores"], "config": record["config"],
            "scenario": record["scenario"], "boards": record["boards"]}


@pytest.mark.parametrize(("num_players", "mode"), VARIANTS, ids=VARIANT_IDS)
def test_determinize_changes_only_hidden_order(num_players: int, mode: str) -> None:
    game = Game(GameConfig(num_players=num_players, mode=mode), seed=55)
    rng = np.random.default_rng(55)
    changed_box = changed_pile = 0
    for step in range(8):
        play(game, rng, 0 if step == 0 else 17)
        if game.is_over:
            break
        copy_ = game.clone()
        before_box, before_pile = list(copy_.box), list(copy_.pile)
        public, mask = public_view(copy_), copy_.legal_mask().copy()
        copy_.determinize(np.random.default_rng(step))
        assert sorted(copy_.box) == sorted(before_box)
        assert sorted(copy_.pile) == sorted(before_pile)
        changed_box += copy_.box != before_box
        changed_pile += copy_.pile != before_pile
        assert public_view(copy_) == public
        assert np.array_equal(copy_.legal_mask(), mask)
        assert copy_.context() == game.context()
        # Everything else is identical: restore the order and compare the full state.
        copy_.box, copy_.pile = list(game.box), list(game.pile)
        assert state(copy_) == state(game)
    assert changed_box and changed_pile, "determinize never reordered anything"


def test_determinized_game_plays_on() -> None:
    game = Game(GameConfig(num_players=4, mode="legends"), seed=3)
    play(game, np.random.default_rng(3), 30)
    before = state(game)
    for i in range(5):
        world = game.clone()
        world.determinize(np.random.default_rng(i))
        play(world, np.random.default_rng(100 + i))
        assert world.is_over
        assert sum(s.total for s in world.scores()) >= 0
    assert state(game) == before, "determinizing a clone touched the original"


# ------------------------------------------------------------------------- records
@pytest.mark.parametrize("auto_forced", [False, True], ids=["manual", "auto"])
@pytest.mark.parametrize(("num_players", "mode"), VARIANTS, ids=VARIANT_IDS)
def test_record_replays_exactly(num_players: int, mode: str, auto_forced: bool) -> None:
    cfg = GameConfig(num_players=num_players, mode=mode, auto_forced=auto_forced)
    game = Game(cfg, seed=600 + num_players)
    rng = np.random.default_rng(num_players)
    for steps in (0, 25, None):  # at setup, mid-game (saved with its seed) and finished
        play(game, rng, steps)
        record = json_round_trip(game.to_record(include_seed=True))
        replay = Game.from_record(record)
        assert replay.to_record(include_seed=True) == game.to_record(include_seed=True)
        assert state(replay) == state(game)
    assert game.is_over and replay.scores() == game.scores()
    if auto_forced and num_players != 3:  # 3 players rarely meet a single-option decision
        assert any(e.get("auto") for e in record["events"] if e["type"] == "decision")


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**40), num_players=st.sampled_from([2, 3, 4]),
       mode=st.sampled_from(["base", "legends"]), auto_forced=st.booleans(),
       steps=st.integers(0, 400))
def test_record_round_trip_property(seed: int, num_players: int, mode: str,
                                    auto_forced: bool, steps: int) -> None:
    game = Game(GameConfig(num_players=num_players, mode=mode, auto_forced=auto_forced),
                seed=seed)
    play(game, np.random.default_rng(seed % 1000), steps)
    record = json_round_trip(game.to_record(include_seed=True))
    replay = Game.from_record(record)
    assert replay.to_record(include_seed=True) == game.to_record(include_seed=True)
    # The replay continues exactly as the original would.
    tail = np.random.default_rng(1)
    a, b = game.clone(), replay
    assert play(a, tail) == play(b, np.random.default_rng(1))
    assert a.to_record() == b.to_record()


def test_auto_forced_record_skips_auto_decisions() -> None:
    cfg = GameConfig(num_players=4, mode="base", auto_forced=True)
    game = Game(cfg, seed=17)
    play(game, np.random.default_rng(17))
    record = json_round_trip(game.to_record())
    decisions = [e for e in record["events"] if e["type"] == "decision"]
    autos = [e for e in decisions if e.get("auto")]
    assert autos
    # The recorded auto decisions really had a single option: a manual game that plays the
    # record's decisions in order reaches the same table.
    manual = Game(GameConfig(num_players=4, mode="base"), seed=17)
    for e in decisions:
        if e.get("auto"):
            assert manual.legal_action_ids().tolist() == [e["action"]]
        manual.apply(e["action"])
    assert manual.to_record()["final"] == record["final"]
    assert manual.to_record()["scores"] == record["scores"]


def _finished_record(num_players: int = 3, seed: int = 11) -> dict:
    game = Game(GameConfig(num_players=num_players, mode="legends"), seed=seed)
    play(game, np.random.default_rng(seed))
    return json_round_trip(game.to_record())


def _first_decision(record: dict, skip: int = 0) -> dict:
    return [e for e in record["events"] if e["type"] == "decision"][skip]


TAMPERS = {
    "format": lambda r: r.update(format="chess-record"),
    "version": lambda r: r.update(version=99),
    "not-a-dict": None,
    "config-unknown-key": lambda r: r["config"].update(colour="red"),
    "config-bad-value": lambda r: r["config"].update(num_players=7),
    "seed": lambda r: r.update(seed=r["seed"] + 1),
    "decision-player": lambda r: _first_decision(r, 5).update(
        player=(_first_decision(r, 5)["player"] + 1) % 3),
    "decision-illegal": lambda r: _first_decision(r, 0).update(action=2709),
    "decision-other-legal": lambda r: _first_decision(r, 0).update(
        action=3 - _first_decision(r, 0)["action"]),
    "dropped-decision": lambda r: r["events"].remove(
        [e for e in r["events"] if e["type"] == "decision"][-1]),
    "chance-column": lambda r: next(e for e in r["events"] if e.get("event") == "column")
    ["plots"].reverse(),
    "final-cows": lambda r: r["final"].update(cow_supply=r["final"]["cow_supply"] + 1),
    "final-cell": lambda r: r["final"]["players"][0]["cells"][0].update(cows=5),
    "score": lambda r: r["scores"][0].update(total=r["scores"][0]["total"] + 1),
}


@pytest.mark.parametrize("tamper", list(TAMPERS), ids=list(TAMPERS))
def test_tampered_record_is_refused(tamper: str) -> None:
    record = _finished_record()
    assert Game.from_record(copy.deepcopy(record)).to_record() == record
    if tamper == "not-a-dict":
        bad = [record]
    else:
        bad = copy.deepcopy(record)
        TAMPERS[tamper](bad)
        assert bad != record
    with pytest.raises(ValueError):
        Game.from_record(bad)


def test_tampered_final_is_accepted_without_verification() -> None:
    record = _finished_record()
    record["final"]["cow_supply"] += 1
    game = Game.from_record(record, verify=False)
    assert game.is_over
    with pytest.raises(ValueError, match="final"):
        Game.from_record(record)


# Structurally broken records are refused with ValueError (not a KeyError or TypeError).
BROKEN = {
    "missing-events": lambda r: r.pop("events"),
    "missing-config": lambda r: r.pop("config"),
    "missing-seed": lambda r: r.pop("seed"),
    "event-without-type": lambda r: r["events"][-1].pop("type"),
    "decision-without-action": lambda r: _first_decision(r, 0).pop("action"),
    "decision-without-player": lambda r: _first_decision(r, 0).pop("player"),
    "events-not-a-list": lambda r: r.update(events=5),
}


@pytest.mark.parametrize("tamper", list(BROKEN), ids=list(BROKEN))
def test_structurally_broken_record_is_refused(tamper: str) -> None:
    record = _finished_record()
    BROKEN[tamper](record)
    with pytest.raises(ValueError):
        Game.from_record(record)


# Top-level summary fields are checked by a verified replay too.
UNCHECKED = {
    "winners": lambda r: r.update(winners=[p for p in range(3) if p not in r["winners"]]),
    "over": lambda r: r.update(over=not r["over"]),
    "scenario": lambda r: r.update(scenario=r["scenario"] % 4 + 1),
    "boards": lambda r: r.update(boards=list(reversed(r["boards"]))),
}


@pytest.mark.parametrize("tamper", list(UNCHECKED), ids=list(UNCHECKED))
def test_tampered_summary_fields_are_refused(tamper: str) -> None:
    record = _finished_record()
    bad = copy.deepcopy(record)
    UNCHECKED[tamper](bad)
    assert bad != record
    with pytest.raises(ValueError):
        Game.from_record(bad)
