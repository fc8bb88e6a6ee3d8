"""Regenerate the saved reference games: ``python -m tests.moonriver.make_playthroughs``.

Run it only when a rules change is intended; the diff of the JSON files then shows what the
change does to these games.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np

from moonriver_env.moonriver.rules import Game, GameConfig
from tests.helpers import random_playout

HERE = pathlib.Path(__file__).resolve().parent / "playthroughs"
GAMES = {
    "4p_base_seed1": (GameConfig(num_players=4, mode="base"), 1),
    "3p_legends_seed2": (GameConfig(num_players=3, mode="legends"), 2),
    "2p_legends_seed3": (GameConfig(num_players=2, mode="legends"), 3),
}


def record_of(config: GameConfig, seed: int) -> dict:
    """The record of a game played with seeded random legal decisions."""
    game = Game(config, seed=seed)
    random_playout(game, np.random.default_rng(seed))
    return game.to_record()


if __name__ == "__main__":
    HERE.mkdir(exist_ok=True)
    for name, (config, seed) in GAMES.items():
        path = HERE / f"{name}.json"
        path.write_text(json.dumps(record_of(config, seed), indent=0, sort_keys=True) + "\n")
        print("wrote", path)
