"""Records of running games hide the seed (it rebuilds the hidden draws); finished games' and
opted-in records keep it and replay byte for byte. Moon River and Circles alike."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from moonriver_env import circles_far_west_v0, moonriver_v0
from moonriver_env.circles import CirclesConfig, CirclesGame
from moonriver_env.moonriver.rules import Game, GameConfig

SEED = 8_675_309_123_457  # distinctive: these digits appear nowhere else in a record


def moonriver(seed: int = SEED) -> Game:
    """A fresh 3-player legends game."""
    return Game(GameConfig(num_players=3, mode="legends"), seed=seed)


def circles(seed: int = SEED) -> CirclesGame:
    """A fresh 3-player Circles game."""
    return CirclesGame(CirclesConfig(num_players=3), seed=seed)


GAMES: dict[str, Callable[[], Any]] = {"moonriver": moonriver, "circles": circles}


def play(game: Any, rng: np.random.Generator, steps: int | None = None) -> Any:
    """Random legal decisions: ``steps`` of them, or to the end when None."""
    done = 0
    while not game.is_over and (steps is None or done < steps):
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(len(ids))]))
        done += 1
    return game


def running(name: str, steps: int = 30) -> Any:
    game = play(GAMES[name](), np.random.default_rng(0), steps)
    assert not game.is_over
    return game


def json_round_trip(record: dict) -> dict:
    return json.loads(json.dumps(record))


# ------------------------------------------------------------------- running games
@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("steps", [0, 30], ids=["at-setup", "mid-game"])
def test_running_game_record_leaves_the_seed_out(name: str, steps: int) -> None:
    record = running(name, steps).to_record()
    assert record["seed"] is None and record["over"] is False
    assert str(SEED) not in json.dumps(record)


def test_moonriver_running_record_tells_nothing_of_the_hidden_order() -> None:
    game = running("moonriver")
    # Reorder what is hidden: a record that depended on it would change.
    world = game.clone()
    world.determinize(np.random.default_rng(1))
    assert (world.box, world.pile) != (game.box, game.pile)
    assert world.to_record() == game.to_record()
    # Why the seed must stay out: with it, the hidden order is rebuilt exactly.
    rebuilt = Game.from_record(json_round_trip(game.to_record(include_seed=True)))
    assert (rebuilt.box, rebuilt.pile) == (game.box, game.pile)


def test_circles_running_record_tells_nothing_of_the_chance_to_come() -> None:
    game = running("circles")
    other = game.clone(seed=1)  # the same table, another generator
    assert other.to_record() == game.to_record()
    # With the seed, the generator (so every coming flick and draw) is rebuilt exactly.
    rebuilt = CirclesGame.from_record(json_round_trip(game.to_record(include_seed=True)))
    assert rebuilt.rng.bit_generator.state == game.rng.bit_generator.state


@pytest.mark.parametrize("name", GAMES)
def test_record_without_a_seed_is_refused_with_the_reason(name: str) -> None:
    record = json_round_trip(running(name).to_record())
    with pytest.raises(ValueError, match=r"record has no seed.*include_seed=True"):
        type(running(name)).from_record(record)
    del record["seed"]
    with pytest.raises(ValueError, match="record has no seed"):
        type(running(name)).from_record(record)


# ------------------------------------------------------------------ finished games
@pytest.mark.parametrize("name", GAMES)
def test_seed_appears_once_the_game_is_over_and_replays_byte_for_byte(name: str) -> None:
    game = GAMES[name]()
    rng = np.random.default_rng(4)
    while not game.is_over:
        before = game.to_record()
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(len(ids))]))
    assert before["seed"] is None  # one decision before the end
    text = json.dumps(game.to_record())
    record = json.loads(text)
    assert record["over"] is True and record["seed"] == SEED
    assert record == game.to_record(include_seed=True)
    assert json.dumps(type(game).from_record(record).to_record()) == text


# ----------------------------------------------------------------------- opt-in
@pytest.mark.parametrize("name", GAMES)
def test_include_seed_keeps_it_so_the_owner_can_resume(name: str) -> None:
    game = running(name)
    saved = json_round_trip(game.to_record(include_seed=True))
    assert saved["seed"] == SEED and saved["over"] is False
    resumed = type(game).from_record(saved)
    assert resumed.to_record(include_seed=True) == saved
    # The resumed game goes on exactly as the original.
    play(game, np.random.default_rng(9))
    play(resumed, np.random.default_rng(9))
    assert json.dumps(resumed.to_record()) == json.dumps(game.to_record())


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("flag", ["yes", 1, None])
def test_include_seed_takes_only_a_bool(name: str, flag: Any) -> None:
    with pytest.raises(TypeError, match="include_seed must be True or False"):
        running(name, 0).to_record(include_seed=flag)


# ---------------------------------------------------------------- environments
@pytest.mark.parametrize("module", [moonriver_v0, circles_far_west_v0],
                         ids=["moonriver_v0", "circles_far_west_v0"])
def test_env_game_record_hides_the_seed_until_the_end(module: Any, tmp_path: Path) -> None:
    env = module.raw_env(num_players=2)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(10):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)
                                                ["action_mask"]))))
    seed = env.game.seed
    assert env.game_record()["seed"] is None
    assert env.game_record(include_seed=True)["seed"] == seed
    if module is moonriver_v0:
        path = tmp_path / "running.json"
        env.save_record(str(path))
        assert json.loads(path.read_text())["seed"] is None
        env.save_record(str(path), include_seed=True)
        assert json.loads(path.read_text())["seed"] == seed
    play(env.game, rng)
    assert env.game_record()["seed"] == seed


def test_play_server_record_download_hides_the_seed() -> None:
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    with warnings.catch_warnings():  # Starlette 1.x prefers httpx2; httpx still works
        warnings.filterwarnings("ignore", message=".*httpx.*deprecated")
        from starlette.testclient import TestClient
    from moonriver_env.play import GameOptions, create_app

    client = TestClient(create_app(GameOptions(players=2, humans=(0,), opponents=("greedy",))))
    r = client.post("/api/games", json={"players": 2})
    assert r.status_code == 201, r.text
    record = client.get(f"/api/games/{r.json()['id']}/record").json()
    assert record["format"] == "moonriver-record" and record["over"] is False
    assert record["seed"] is None
