"""Saved reference games replay exactly: a rules change shows up here as a readable diff."""

from __future__ import annotations

import json

import pytest

from moonriver_env.moonriver.rules import Game
from tests.moonriver.make_playthroughs import GAMES, HERE, record_of


@pytest.mark.parametrize("name", sorted(GAMES))
def test_saved_game_replays_exactly(name: str) -> None:
    saved = json.loads((HERE / f"{name}.json").read_text())
    assert saved["over"] is True
    Game.from_record(saved)  # raises if any event, the final state or the scores differ
    config, seed = GAMES[name]
    assert record_of(config, seed) == saved  # the same seed and decisions give the same game
