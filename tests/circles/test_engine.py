"""Circles engine contract: config validation, action codec, the skill model's statistics,
illegal actions, determinism, clone/pickle/deepcopy, records, text view, layering."""

from __future__ import annotations

import ast
import copy
import json
import math
import pathlib
import pickle
import subprocess
import sys

import numpy as np
import pytest

from moonriver_env.circles import (
    Buy,
    CirclesConfig,
    CirclesGame,
    IllegalActionError,
    Pass,
    Phase,
    Throw,
    actions_for,
    flick_outcomes,
    out_probability,
)
from moonriver_env.circles.observation import ObservationEncoder
from moonriver_env.circles.skill import OUT, sample_travel, spread

ROOT = pathlib.Path(__file__).resolve().parents[2]


def random_game(num_players: int, seed: int, steps: int | None = None) -> CirclesGame:
    """A game after random legal decisions (all of them when ``steps`` is None)."""
    game = CirclesGame(CirclesConfig(num_players=num_players), seed=seed)
    rng = np.random.default_rng(seed)
    done = 0
    while not game.is_over and (steps is None or done < steps):
        ids = game.legal_action_ids()
        game.apply(ids[rng.integers(len(ids))])
        done += 1
    return game


# ---------------------------------------------------------------- config
@pytest.mark.parametrize(("kwargs", "message"), [
    ({"num_players": 1}, "num_players must be 2..5"),
    ({"num_players": 6}, "num_players must be 2..5"),
    ({"num_players": 3.0}, "num_players must be 2..5"),
    ({"layout": ("RANCH", "SALOON")}, "must hold every kind of space"),
    ({"layout": ("RANCH", "CASINO")}, "tuple of space names"),
    ({"layout": (*CirclesConfig().layout, "RANCH")}, "exactly one RANCH"),
    ({"out_slope": 1.5}, "out_slope must be a number in"),
    ({"spread_step": 0}, "spread_step must be an integer >= 1"),
    ({"money_cap": 17}, "ranch could never be bought"),
    ({"num_players": 5, "start_wagons": 2}, "exceed the stock"),
    ({"bag": (1, 2, 3)}, "bag must be a tuple of 4"),
    ({"prices": (0, 3, 3)}, "prices must be a tuple of 3 integers >= 1"),
    ({"auto_forced": 1}, "auto_forced must be True or False"),
])
def test_bad_config_is_a_clear_error(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        CirclesConfig(**kwargs)


def test_config_round_trips_through_json() -> None:
    cfg = CirclesConfig(num_players=5, out_slope=0.02, mine=[1, 2, 3])
    assert cfg.mine == (1, 2, 3)
    again = CirclesConfig.from_dict(json.loads(json.dumps(cfg.to_dict())))
    assert again == cfg and hash(again) == hash(cfg)
    with pytest.raises(ValueError, match="unknown fields"):
        CirclesConfig.from_dict({"players": 3})


def test_bad_seed_is_a_clear_error() -> None:
    for seed in (-1, 1.5, True, "7"):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            CirclesGame(seed=seed)


# ---------------------------------------------------------------- actions
def test_action_enumeration_is_discrete_87_in_segments() -> None:
    codec = actions_for(20, 18)
    assert codec.num_actions == 87
    sizes = {name: hi - lo for name, (lo, hi) in codec.segments.items()}
    assert sizes == {"throw": 19, "tickets": 20, "buy": 3, "dig": 1, "deposit": 18,
                     "withdraw": 18, "bet": 1, "stake": 2, "steal": 4, "pass": 1}
    texts = [codec.to_text(i) for i in range(87)]
    assert len(set(texts)) == 87
    for i, text in enumerate(texts):
        assert codec.from_text(text) == i
        assert codec.encode(codec.decode(i)) == i
    assert codec.encode(Throw(2)) == 0 and codec.encode(Pass()) == 86
    assert codec.segment_of(codec.encode(Buy("wagon"))) == "buy"
    with pytest.raises(ValueError, match="unknown action text"):
        codec.from_text("throw 21")
    with pytest.raises(ValueError, match="action ids run from 0 to 86"):
        codec.decode(87)


# ---------------------------------------------------------------- skill model
def test_skill_model_probabilities_follow_the_specification() -> None:
    cfg = CirclesConfig()
    for k in (2, 3, 4):
        assert flick_outcomes(cfg, k) == pytest.approx({k - 1: 0.25, k: 0.5, k + 1: 0.25})
    assert out_probability(cfg, 8) == 0.0 and out_probability(cfg, 9) == pytest.approx(0.015)
    assert out_probability(cfg, 20) == pytest.approx(0.18) and spread(cfg, 20) == 5
    for k in range(2, 21):
        assert sum(flick_outcomes(cfg, k).values()) == pytest.approx(1.0)
    hard = CirclesConfig(out_free=0, out_slope=1.0)
    assert flick_outcomes(hard, 2) == {OUT: 1.0, 1: 0.0, 2: 0.0, 3: 0.0}


@pytest.mark.parametrize("k", [2, 5, 9, 14, 20])
def test_skill_model_empirical_distribution_matches(k: int) -> None:
    """20000 seeded flicks: each outcome within 4.5 standard errors, and chi-square small."""
    cfg = CirclesConfig()
    rng = np.random.default_rng(1234 + k)
    n = 20_000
    draws = [sample_travel(cfg, k, rng) for _ in range(n)]
    expected = flick_outcomes(cfg, k)
    assert set(draws) <= set(expected)
    chi2 = 0.0
    for travel, p in expected.items():
        count = draws.count(travel)
        assert abs(count / n - p) <= 4.5 * math.sqrt(p * (1 - p) / n) + 1e-12, (travel, p)
        chi2 += (count - n * p) ** 2 / (n * p)
    dof = len(expected) - 1
    assert chi2 < dof + 6 * math.sqrt(2 * dof)  # far in the tail for a right model


def test_engine_flicks_draw_from_the_skill_model() -> None:
    """Turn flicks aimed at 12 through the game: the out rate and mean travel fit the model."""
    cfg = CirclesConfig(num_players=2, max_turns_per_player=2000)
    game = CirclesGame(cfg, seed=5)
    travels = []
    while len(travels) < 3000:
        if game.is_over:  # someone bought the ranch: go on with a fresh game
            game = CirclesGame(cfg, seed=game.seed + 1)
        elif game.phase == Phase.FLICK:
            game.apply(Throw(12))
            event = next(e for e in reversed(game.history) if e.get("event") == "flick")
            travels.append(OUT if event["travel"] is None else event["travel"])
        else:
            game.apply(game.legal_action_ids()[-1])  # pass / last option: keep it moving
    model = flick_outcomes(cfg, 12)
    out_rate = travels.count(OUT) / len(travels)
    assert abs(out_rate - model[OUT]) < 4.5 * math.sqrt(model[OUT] * (1 - model[OUT]) / 3000)
    inside = [t for t in travels if t != OUT]
    mean = sum(t * p for t, p in model.items() if t != OUT) / (1 - model[OUT])
    assert abs(np.mean(inside) - mean) < 0.15 and min(inside) >= 12 - spread(cfg, 12)


# ---------------------------------------------------------------- illegal actions
def snapshot(game: CirclesGame) -> str:
    """Everything that defines the state, as text."""
    return json.dumps([game.to_record(), game.rng.bit_generator.state, int(game.phase),
                       game.current_player], default=str)


@pytest.mark.parametrize("num_players", [2, 5])
def test_every_illegal_id_is_refused_with_the_state_unchanged(num_players: int) -> None:
    rng = np.random.default_rng(num_players)
    game = CirclesGame(CirclesConfig(num_players=num_players), seed=11)
    phases = set()
    while not game.is_over:
        before = snapshot(game)
        mask = game.legal_mask()
        for aid in np.flatnonzero(mask == 0).tolist():
            with pytest.raises(IllegalActionError, match="Legal now"):
                game.apply(aid)
        assert snapshot(game) == before
        phases.add(game.phase)
        ids = game.legal_action_ids()
        game.apply(ids[rng.integers(len(ids))])
    assert {Phase.FLICK, Phase.TICKETS}.issubset(phases)
    for aid in range(game.num_actions):
        with pytest.raises(IllegalActionError, match="the game is over"):
            game.apply(aid)


@pytest.mark.parametrize("bad", [-1, 87, True, 3.0, "throw 5", None, Throw(1), Throw(21),
                                 (1, 2)])
def test_bad_action_values_are_refused(bad) -> None:
    game = CirclesGame(seed=0)
    before = snapshot(game)
    with pytest.raises(IllegalActionError):
        game.apply(bad)
    assert snapshot(game) == before


def test_structured_and_numpy_actions_are_accepted() -> None:
    a, b = CirclesGame(seed=4), CirclesGame(seed=4)
    a.apply(Throw(7))
    b.apply(np.int64(a.codec.encode(Throw(7))))
    assert a.to_record() == b.to_record()


# ---------------------------------------------------------------- determinism and copies
def test_same_seed_same_game_and_different_seeds_differ() -> None:
    a, b, c = random_game(4, 8), random_game(4, 8), random_game(4, 9)
    assert a.to_record() == b.to_record()
    assert a.to_record()["events"] != c.to_record()["events"]


def play_on(game: CirclesGame, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    while not game.is_over:
        ids = game.legal_action_ids()
        game.apply(ids[rng.integers(len(ids))])
    return game.to_record()


@pytest.mark.parametrize("copier", ["clone", "pickle", "deepcopy"])
def test_copies_are_independent_and_continue_identically(copier: str) -> None:
    game = random_game(3, 21, steps=40)
    before = game.to_record()
    copied = {"clone": lambda g: g.clone(), "pickle": lambda g: pickle.loads(pickle.dumps(g)),
              "deepcopy": copy.deepcopy}[copier](game)
    assert copied.to_record() == before
    np.testing.assert_array_equal(copied.legal_mask(), game.legal_mask())
    finished = play_on(copied, 3)
    assert game.to_record() == before  # the original did not move
    assert play_on(game, 3) == finished  # same decisions, same chance


def test_clone_with_seed_draws_its_own_chance() -> None:
    game = random_game(2, 2, steps=10)
    outcomes = set()
    for s in range(8):
        child = game.clone(seed=s)
        while child.phase != Phase.FLICK:
            child.apply(child.legal_action_ids()[0])
        child.apply(Throw(20))
        outcomes.add(json.dumps(child.history[len(game.history):]))
    assert len(outcomes) > 1
    assert game.to_record() == random_game(2, 2, steps=10).to_record()


# ---------------------------------------------------------------- records
@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_records_replay_verified(num_players: int) -> None:
    game = random_game(num_players, 100 + num_players)
    record = json.loads(json.dumps(game.to_record()))
    again = CirclesGame.from_record(record)
    assert again.to_record() == record and again.is_over
    assert record["winners"] == game.winners() and record["end_reason"] in ("ranch", "turn_cap")
    partial = random_game(num_players, 7, steps=25).to_record(include_seed=True)
    assert CirclesGame.from_record(partial).to_record(include_seed=True) == partial


def test_auto_forced_records_replay() -> None:
    game = CirclesGame(CirclesConfig(num_players=3, auto_forced=True), seed=1)
    record = play_on(game, 1)
    assert any(e.get("auto") for e in record["events"])
    assert CirclesGame.from_record(record).to_record() == record


def test_tampered_records_are_refused() -> None:
    record = random_game(3, 5).to_record()
    decisions = [i for i, e in enumerate(record["events"]) if e["type"] == "decision"]
    bad = copy.deepcopy(record)
    bad["final"]["players"][0]["money"] += 1
    with pytest.raises(ValueError, match="differ from the replay"):
        CirclesGame.from_record(bad)
    bad = copy.deepcopy(record)
    bad["events"][decisions[0]]["action"] = 86  # pass at the first flick
    with pytest.raises(ValueError, match="does not replay"):
        CirclesGame.from_record(bad)
    bad = copy.deepcopy(record)
    bad["events"][decisions[0]]["player"] = (bad["events"][decisions[0]]["player"] + 1) % 3
    with pytest.raises(ValueError, match="decides, but the replay expects"):
        CirclesGame.from_record(bad)
    with pytest.raises(ValueError, match="not a Circles record"):
        CirclesGame.from_record({"format": "moonriver-record"})
    with pytest.raises(ValueError, match="config or seed is invalid"):
        CirclesGame.from_record({**record, "config": {"num_players": 9}})


def test_text_view_shows_the_table() -> None:
    game = random_game(4, 3, steps=30)
    text = game.table_text()
    assert "(o)" in text and f"marble at {game.marble}" in text
    for p in range(4):
        assert f"P{p}  money {game.money[p]:>2}" in text


# ---------------------------------------------------------------- layering and docs
ENGINE_MODULES = ("__init__", "config", "actions", "skill", "game", "record", "text",
                  "observation")


ENGINE_COMMON = ("errors", "validate", "records", "contract", "view",
                 "game_base")  # numpy-only modules


def test_engine_imports_only_numpy_and_the_standard_library() -> None:
    banned = {"gymnasium", "pettingzoo", "torch", "PIL", "matplotlib", "stable_baselines3"}
    folder = ROOT / "moonriver_env" / "circles"
    assert {p.stem for p in folder.glob("*.py")} == {*ENGINE_MODULES, "image", "gym_env", "aec_env"}
    for name in ENGINE_MODULES:
        tree = ast.parse((folder / f"{name}.py").read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for module in names:
                top = module.split(".")[0]
                # of the package, only the game-neutral pure modules of moonriver_env.common
                assert top not in banned, f"{name} imports {module}"
                assert top != "moonriver_env" or (
                    module.startswith("moonriver_env.common.")
                    and module.split(".")[2] in ENGINE_COMMON), f"{name} imports {module}"
    code = ("import sys, moonriver_env.circles as c; c.CirclesGame(seed=1).table_text(); "
            "print(sorted(m for m in ('gymnasium', 'pettingzoo', 'PIL') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    # gymnasium may come from moonriver_env/__init__ (registration); never pettingzoo or PIL.
    assert "pettingzoo" not in out and "PIL" not in out


def test_generated_observation_docs_are_current() -> None:
    assert ((ROOT / "docs" / "circles_observation.md").read_text()
            == ObservationEncoder().markdown())


def test_action_table_in_the_docs_matches_the_codec() -> None:
    text = (ROOT / "docs" / "circles.md").read_text()
    codec = actions_for(20, 18)
    for name, (lo, hi) in codec.segments.items():
        ids = f"{lo}-{hi - 1}" if hi - lo > 1 else f"{lo}"
        assert f"| {name} | {ids} |" in text, name
