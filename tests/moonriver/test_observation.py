"""Observation views carry what they claim; generated docs are current; layers stay apart."""

from __future__ import annotations

import ast
import pathlib

import numpy as np

from moonriver_env.moonriver.actions import actions_markdown
from moonriver_env.moonriver.backend import Encoder, make_game
from moonriver_env.moonriver.observation import RANCH_CHANNELS, SCORE_SCALE, ObservationEncoder
from moonriver_env.moonriver.rules import Game, GameConfig, Terrain
from tests.helpers import random_playout

ROOT = pathlib.Path(__file__).resolve().parents[2]
CH = {name: i for i, name in enumerate(RANCH_CHANNELS)}


def midgame(num_players: int = 4, mode: str = "base", steps: int = 90) -> Game:
    """A game after some random decisions."""
    game = Game(GameConfig(num_players=num_players, mode=mode), seed=21)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(ids.size)]))
    return game


def test_ranch_planes_match_the_ranch_relative_to_the_viewer() -> None:
    game = midgame()
    enc = ObservationEncoder()
    for viewer in range(4):
        obs = enc.encode(game, viewer)
        planes = enc.view(obs, "ranches").reshape(4, len(RANCH_CHANNELS), -1)
        for rel in range(4):
            ranch = game.ranches[(viewer + rel) % 4]
            for t in Terrain:
                expected = (ranch.terrain == t).astype(np.float32)
                np.testing.assert_array_equal(planes[rel, CH[f"terrain_{t.name.lower()}"]],
                                              expected)
            np.testing.assert_array_equal(planes[rel, CH["cows"]], ranch.cows)
            np.testing.assert_array_equal(planes[rel, CH["free"]], ranch.empty)
            partners = sum(planes[rel, CH[c]] for c in RANCH_CHANNELS if c.startswith("partner"))
            np.testing.assert_array_equal(partners, ranch.partner >= 0)


def test_reserves_scores_phase_and_counts() -> None:
    game = midgame(3, "legends")
    enc = ObservationEncoder()
    viewer = game.current_player
    obs = enc.encode(game, viewer)
    reserves = enc.view(obs, "reserves")
    for rel in range(3):
        hand = game.ranches[(viewer + rel) % 3].hand
        assert reserves[rel, :, 0].sum() == len(hand)  # 'present' feature per slot
    scores = enc.view(obs, "scores")
    for rel in range(3):
        p = (viewer + rel) % 3
        assert scores[rel] == np.float32(game.running_scores()[p].total / SCORE_SCALE)
    assert enc.view(obs, "phase")[int(game.phase)] == 1.0
    assert enc.view(obs, "acting")[0] == 1.0  # the viewer is the player to act
    game_view = enc.view(obs, "game")
    assert game_view[1] == np.float32(len(game.box) / 96)
    assert game_view[8 + game.scenario - 1] == 1.0


def test_observation_bounds_and_final_state() -> None:
    game = Game(GameConfig(num_players=2), seed=5)
    random_playout(game, np.random.default_rng(5))
    enc = ObservationEncoder()
    obs = enc.encode(game, 1)
    assert obs.dtype == np.float32 and obs.shape == (enc.size,)
    assert obs.min() >= 0.0 and obs.max() <= 64.0
    assert enc.view(obs, "acting").sum() == 0.0  # nobody acts once the game is over


def test_generated_docs_are_current() -> None:
    assert (ROOT / "docs" / "actions.md").read_text() == actions_markdown()
    assert (ROOT / "docs" / "observation.md").read_text() == ObservationEncoder().markdown()


def test_engine_imports_only_numpy_and_the_standard_library() -> None:
    banned = {"gymnasium", "pettingzoo", "torch", "PIL", "matplotlib", "stable_baselines3"}
    for path in (ROOT / "moonriver_env" / "moonriver" / "rules").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in banned, f"{path.name} imports {name}"


def _boards_file(tmp_path, rename: dict[str, str], extra: int = 0) -> str:
    import json
    from pathlib import Path

    import moonriver_env.moonriver.rules as engine

    doc = json.loads((Path(engine.__file__).parent / "data" / "boards.json").read_text())
    for board in doc["boards"]:
        board["name"] = rename.get(board["name"], board["name"])
    for i in range(extra):
        doc["boards"].append({**doc["boards"][1], "name": f"extra_{i}"})
    path = tmp_path / "boards.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_a_custom_board_is_encoded_by_its_place_in_the_boards_file(tmp_path) -> None:
    """A renamed board keeps its file position in the one-hot (never silently 'camp')."""
    from moonriver_env.moonriver.observation import VIEWS

    path = _boards_file(tmp_path, {"wesley": "sundance"})
    config = GameConfig(num_players=2, mode="legends", scenario=1,
                        boards=("sundance", "mary"), boards_file=path)
    view = VIEWS["boards"]
    for backend in ("python", "core"):
        game = make_game(config, 3, backend)
        obs = Encoder().encode(game, 0)
        onehot = obs[view.start:view.stop].reshape(view.shape)
        assert onehot[0].tolist() == [0, 0, 1, 0, 0], backend  # sundance: third in the file
        assert onehot[1].tolist() == [0, 1, 0, 0, 0], backend


def test_a_board_after_the_files_fifth_has_no_place_in_the_one_hot(tmp_path) -> None:
    """The one-hot has 5 places: a sixth board of a custom file shows as zeros, on both
    backends alike (never as another board)."""
    from moonriver_env.moonriver.observation import VIEWS

    config = GameConfig(num_players=2, mode="legends", scenario=1, boards=("extra_0", "mary"),
                        boards_file=_boards_file(tmp_path, {}, extra=1))
    view = VIEWS["boards"]
    for backend in ("python", "core"):
        obs = Encoder().encode(make_game(config, 3, backend), 0)
        onehot = obs[view.start:view.stop].reshape(view.shape)
        assert onehot[0].tolist() == [0, 0, 0, 0, 0], backend
        assert onehot[1].tolist() == [0, 1, 0, 0, 0], backend
