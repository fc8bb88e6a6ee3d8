"""``python -m moonriver_env replay`` on the records of every writer in the project (the OpenSpiel
game's are in test_openspiel.py): each replays to its record's last table and result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from moonriver_env.__main__ import main as cli
from moonriver_env.circles.config import CirclesConfig
from moonriver_env.circles.game import CirclesGame
from moonriver_env.moonriver.core import Game as CoreGame
from moonriver_env.moonriver.rules import Game, GameConfig


def one_error_line(capsys: Any) -> str:
    """The single line the failed command printed on stderr (and nothing on stdout)."""
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and not captured.out, captured
    assert lines[0].startswith("python -m moonriver_env: error: "), lines[0]
    return lines[0]


def _play(game: Any, seed: int, decisions: int | None = None) -> Any:
    """``game`` after random legal decisions (to the end by default)."""
    rng = np.random.default_rng(seed)
    made = 0
    while not game.is_over and (decisions is None or made < decisions):
        game.apply(int(rng.choice(game.legal_action_ids())))
        made += 1
    return game


def _replayed(capsys: Any, path: Path, *args: str) -> str:
    """The replay command's output for ``path`` (it must exit 0)."""
    capsys.readouterr()
    assert cli(["replay", str(path), "--no-step", *args]) == 0
    return capsys.readouterr().out


def _check_end(out: str, record: dict[str, Any], table: str) -> None:
    """The replay made every decision of ``record`` and ends on ``table``."""
    made = sum(e["type"] == "decision" and not e.get("auto") for e in record["events"])
    assert f"=== decision {made}/{made}:" in out
    shown, _, ending = out.rpartition("\n\n")
    assert shown.endswith(table)
    assert ending.startswith(("final scores:", "final wealth:") if record["over"]
                             else "the game is unfinished")


@pytest.mark.parametrize("backend", ["core", "python"])
@pytest.mark.parametrize("writer", [Game, CoreGame])
def test_engine_and_core_records_replay_on_either_backend(tmp_path, capsys, writer,
                                                          backend: str) -> None:
    finished = _play(writer(GameConfig(num_players=3), seed=8), seed=1)
    running = _play(writer(GameConfig(num_players=2, mode="legends"), seed=9), seed=2, decisions=30)
    for name, game, record in [("over", finished, finished.to_record()),
                               ("running", running, running.to_record(include_seed=True))]:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(record))
        _check_end(_replayed(capsys, path, "--backend", backend), record, game.table_text())


def test_the_pettingzoo_envs_saved_record_replays(tmp_path, capsys) -> None:
    from moonriver_env.moonriver.aec_env import raw_env

    env = raw_env(num_players=2)
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    while env.agents:
        agent = env.agent_selection
        _, _, term, trunc, _ = env.last()
        mask = env.observe(agent)["action_mask"]
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(mask))))
    path = tmp_path / "env.json"
    env.save_record(str(path))
    record = json.loads(path.read_text())
    assert record["over"]
    _check_end(_replayed(capsys, path), record, env.game.table_text())


def test_a_play_sessions_record_replays(tmp_path, capsys) -> None:
    from moonriver_env.play.session import GameOptions, PlaySession

    session = PlaySession(GameOptions(players=2, humans=(), opponents=("random", "random"),
                                      seed=12))
    while not session.game.is_over:
        session.advance()
    path = tmp_path / "session.json"
    path.write_text(json.dumps(session.record()))
    _check_end(_replayed(capsys, path), session.record(), session.game.table_text())


@pytest.mark.parametrize("game", ["moonriver", "circles"])
def test_the_evaluation_commands_saved_records_replay(tmp_path, capsys, game: str) -> None:
    from moonriver_env.training import evaluate

    records = tmp_path / "records"
    assert evaluate.main(["--game", game, "--agents", "random", "random", "--players", "2",
                          "--games", "2", "--seed", "3", "--no-progress",
                          "--save-records", str(records)]) == 0
    for path in sorted(records.iterdir()):
        record = json.loads(path.read_text())
        kind = Game if game == "moonriver" else CirclesGame
        _check_end(_replayed(capsys, path), record, kind.from_record(record).table_text())


def test_a_circles_record_replays_finished_or_running(tmp_path, capsys) -> None:
    """Circles records replay too (they used to be refused as no Moon River record)."""
    finished = _play(CirclesGame(CirclesConfig(num_players=3), seed=5), seed=3)
    running = _play(CirclesGame(CirclesConfig(num_players=2), seed=6), seed=4, decisions=25)
    for name, game, record in [("over", finished, finished.to_record()),
                               ("running", running, running.to_record(include_seed=True))]:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(record))
        out = _replayed(capsys, path)
        _check_end(out, record, game.table_text())
        assert "cornfield" not in out  # Moon River's cell key is not printed for Circles


def test_a_record_of_another_format_names_both_formats(tmp_path, capsys) -> None:
    path = tmp_path / "chess.json"
    path.write_text('{"format": "chess"}')
    assert cli(["replay", str(path), "--no-step"]) == 2
    line = one_error_line(capsys)
    assert "not a Moon River record nor a Circles record" in line
    assert "'moonriver-record' or 'circles-record', got 'chess'" in line and str(path) in line


def test_a_tampered_circles_record_is_one_line(tmp_path, capsys) -> None:
    record = _play(CirclesGame(CirclesConfig(num_players=2), seed=6), seed=4).to_record()
    next(e for e in record["events"] if e["type"] == "decision")["action"] = 10**6
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(record))
    assert cli(["replay", str(path), "--no-step"]) == 2
    assert "does not replay" in one_error_line(capsys)
