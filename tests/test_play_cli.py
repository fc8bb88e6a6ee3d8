"""moonriver-play's command line: option errors, the terminal game, the server it starts."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

import pytest

from moonriver_env.engine import Game
from moonriver_env.play import GameOptions, PlaySession
from moonriver_env.play.cli import main
from moonriver_env.play.terminal import ask_move, play_terminal


@pytest.mark.parametrize("argv, words", [
    (["--players", "5"], "invalid choice: 5"),
    (["--players", "2", "--human", "2"], "human seat 2 does not exist"),
    (["--opponents", "grandmaster"], "unknown agent spec 'grandmaster'"),
    (["--players", "4", "--opponents", "greedy", "random"], "one opponent spec for every"),
    (["--mode", "base", "--scenario", "2"], "scenario applies only to mode='legends'"),
    (["--seed", "-1"], "--seed must be a non-negative integer"),
    (["--port", "70000"], "--port must be between 0 and 65535"),
])
def test_bad_options_exit_2_with_one_line(argv, words, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--terminal"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err  # no usage block either


def test_ask_move_reprompts_until_a_legal_number() -> None:
    answers = iter(["", "abc", "0", "4", "-1", "2"])
    said: list[str] = []
    assert ask_move(["pass", "select position 0", "x"], lambda _: next(answers),
                    said.append) == 1
    assert len(said) == 5
    assert all("is not a move: type a number from 1 to 3" in s for s in said)
    assert ask_move(["pass", "select position 0"], lambda _: "select position 0",
                    said.append) == 1


def test_terminal_game_to_the_end() -> None:
    session = PlaySession(GameOptions(players=2, humans=(0,), opponents=("random",), seed=4))
    out: list[str] = []
    answers = iter(["nonsense", "1"] + ["1"] * 10_000)
    assert play_terminal(session, lambda _: next(answers), out.append) == 0
    assert session.game.is_over
    assert any("'nonsense' is not a move" in line for line in out)
    assert any(line.startswith("winners: ") for line in out)
    replay = Game.from_record(session.game.to_record())
    assert f"P0 (you): {replay.scores()[0].total} = territories" in "\n".join(out)


def test_terminal_from_the_command_line_stops_cleanly_at_end_of_input() -> None:
    run = subprocess.run([sys.executable, "-m", "moonriver_env.play.cli", "--terminal",
                          "--seed", "3", "--opponents", "random"], input="zzz\n",
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 130, run.stderr
    assert "'zzz' is not a move: type a number from 1 to" in run.stdout
    assert "select position" in run.stdout and "Traceback" not in run.stderr


def test_server_starts_on_localhost_with_the_first_game() -> None:
    pytest.importorskip("uvicorn")
    proc = subprocess.Popen([sys.executable, "-m", "moonriver_env.play.cli", "--no-browser",
                             "--port", "0", "--players", "3", "--seed", "9"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("Moon River: http://127.0.0.1:"), (line, proc.stderr.read())
        url = line.split()[2]
        with urllib.request.urlopen(url, timeout=30) as page:
            assert page.status == 200 and b'id="board"' in page.read()
        game_id = url.rsplit("/", 1)[1]
        api = url.replace(f"/game/{game_id}", f"/api/games/{game_id}")
        with urllib.request.urlopen(api, timeout=30) as response:
            state = json.load(response)
        assert state["options"]["players"] == 3 and len(state["scores"]) == 3
    finally:
        proc.terminate()
        proc.wait(10)


def test_busy_port_is_one_line_exit_2(capsys) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(SystemExit) as exit_info:
            main(["--no-browser", "--port", str(port)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err and "Traceback" not in err
