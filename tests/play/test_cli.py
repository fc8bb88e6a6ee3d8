"""moonriver-play's command line: option errors, the terminal game, the server it starts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request

import pytest

from moonriver_env.moonriver.rules import Game
from moonriver_env.play import GameOptions, PlaySession
from moonriver_env.play.cli import main
from moonriver_env.play.terminal import ask_move, play_terminal
from tests.helpers import HANG_GUARD, ctrl_c_as_in_a_terminal


@pytest.mark.parametrize("argv, words", [
    (["--players", "5"], "invalid choice: 5"),
    (["--players", "2", "--human", "2"], "human seat 2 does not exist"),
    (["--opponents", "grandmaster"], "unknown agent spec 'grandmaster'"),
    (["--players", "4", "--opponents", "greedy", "random"], "one opponent spec for every"),
    (["--mode", "base", "--scenario", "2"], "scenario applies only to mode='legends'"),
    (["--seed", "-1"], "--seed must be a non-negative integer"),
    (["--port", "70000"], "--port must be between 0 and 65535"),
    (["--backend", "cpp"], "invalid choice: 'cpp'"),
    (["--agent-seconds", "-1"], "--agent-seconds must be a number of seconds >= 0"),
    (["--agent-seconds", "nan"], "--agent-seconds must be a number of seconds >= 0"),
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


def _ctrl_c(argv: list[str], ready: str) -> tuple[int, str, str]:
    """Start ``moonriver-play`` with ``argv``, press Ctrl-C (SIGINT to its process group, as a
    terminal does) once stdout has shown ``ready``; its exit status, stdout and stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "moonriver_env.play.cli", *argv],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=ctrl_c_as_in_a_terminal)
    try:
        seen = ""
        while ready not in seen:
            line = proc.stdout.readline()
            assert line, (seen, proc.communicate(timeout=HANG_GUARD))
            seen += line
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, seen + out, err


def test_ctrl_c_stops_the_server_with_one_line_and_status_130() -> None:
    pytest.importorskip("uvicorn")
    status, _, err = _ctrl_c(["--no-browser", "--port", "0", "--seed", "9"], "Moon River: ")
    assert "Traceback" not in err
    assert err.splitlines() == ["moonriver-play: stopped (Ctrl-C)"], err
    assert status == 130


def test_ctrl_c_in_the_terminal_game_is_one_line_and_status_130() -> None:
    status, out, err = _ctrl_c(["--terminal", "--seed", "3", "--opponents", "random"],
                               "select position")
    assert "Traceback" not in err and status == 130, err
    assert out.rstrip().endswith("stopped") and err == ""


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


def test_q_in_the_terminal_game_exits_0() -> None:
    session = PlaySession(GameOptions(players=2, humans=(0,), opponents=("random",), seed=4))
    out: list[str] = []
    assert play_terminal(session, lambda _: "q", out.append) == 0
    assert out[-1].strip() == "stopped"
    run = subprocess.run([sys.executable, "-m", "moonriver_env.play.cli", "--terminal",
                          "--seed", "3", "--opponents", "random"], input="q\n",
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, (run.returncode, run.stderr)
    assert "stopped" in run.stdout and "Traceback" not in run.stderr


class _FakeSocket:
    def __init__(self, address: tuple) -> None:
        self.address = address

    def getsockname(self) -> tuple:
        return self.address


class _FakeServer:
    """Stands in for uvicorn.Server: records the app, 'starts' at once, binds nothing."""

    last: _FakeServer | None = None

    def __init__(self, config) -> None:
        self.config = config
        self.started, self.should_exit = True, False
        address = ("::1", 43210, 0, 0) if ":" in config.host else ("127.0.0.1", 43210)
        self.servers = [type("S", (), {"sockets": [_FakeSocket(address)]})()]
        _FakeServer.last = self

    def run(self) -> None:
        import threading

        for thread in threading.enumerate():  # let the announcement be printed
            if thread.name == "moonriver-announce":
                thread.join(30)


def _test_client(app, base_url: str):
    import warnings

    with warnings.catch_warnings():  # Starlette 1.x prefers httpx2; httpx still works
        warnings.filterwarnings("ignore", message=".*httpx.*deprecated")
        from starlette.testclient import TestClient

        return TestClient(app, base_url=base_url)


def _run_main(monkeypatch, argv: list[str], capsys) -> tuple[object, str, str]:
    uvicorn = pytest.importorskip("uvicorn")
    monkeypatch.setattr(uvicorn, "Server", _FakeServer)
    assert main(["--no-browser", "--port", "0", *argv]) == 0
    out, err = capsys.readouterr()
    return _FakeServer.last.config.app, out, err


@pytest.mark.parametrize("host, shown", [("::1", "http://[::1]:43210/"),
                                         ("127.0.0.1", "http://127.0.0.1:43210/"),
                                         ("0.0.0.0", "http://127.0.0.1:43210/"),
                                         ("::", "http://[::1]:43210/")])
def test_the_printed_url_works_for_the_bind_address(monkeypatch, capsys, host, shown) -> None:
    _, out, _ = _run_main(monkeypatch, ["--host", host], capsys)
    assert shown in out, out
    assert f"{shown}game/" in out


def test_a_server_bound_beyond_loopback_keeps_the_host_check(monkeypatch, capsys) -> None:
    app, _, err = _run_main(monkeypatch, ["--host", "0.0.0.0", "--allow-host", "play.example"],
                            capsys)
    assert "warning: --host 0.0.0.0 listens beyond this machine" in err
    client = _test_client(app, "http://127.0.0.1:8765")
    assert client.get("/api/defaults").status_code == 200
    for host in ("localhost:8765", "play.example", "PLAY.example.:8765", "[::1]:8765"):
        assert client.get("/api/defaults", headers={"host": host}).status_code == 200, host
    for host in ("rebound.example", "rebound.example:8765", "evil.localhost", "[::2]:8765"):
        r = client.get("/api/defaults", headers={"host": host})
        assert r.status_code == 400 and "--allow-host" in r.text, host


def test_a_loopback_server_prints_no_warning_and_checks_hosts(monkeypatch, capsys) -> None:
    app, _, err = _run_main(monkeypatch, ["--host", "127.0.0.1"], capsys)
    assert "warning" not in err
    client = _test_client(app, "http://127.0.0.1:8765")
    assert client.get("/api/defaults").status_code == 200
    assert client.get("/api/defaults", headers={"host": "rebound.example"}).status_code == 400


@pytest.mark.parametrize("name", ["http://play.example/", "play.example:port", "a b"])
def test_a_malformed_allow_host_is_one_line(monkeypatch, capsys, name) -> None:
    """A name the Host check could never match is refused, not silently ignored."""
    monkeypatch.setattr(pytest.importorskip("uvicorn"), "Server", _FakeServer)
    with pytest.raises(SystemExit) as exit_info:
        main(["--no-browser", "--port", "0", "--allow-host", name])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"--allow-host {name!r} is not a host name or address" in err
    assert len(err.strip().splitlines()) == 1, err


def test_data_file_must_exist(capsys, tmp_path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--no-browser", "--data-file", str(tmp_path / "none.csv")])
    assert exit_info.value.code == 2
    assert "--data-file" in capsys.readouterr().err


def test_ask_move_refuses_non_ascii_digits() -> None:
    """'²' is a digit to str.isdigit() but no number: it re-asks instead of crashing."""
    answers = iter(["²", "٣", "1"])
    said: list[str] = []
    assert ask_move(["pass", "x", "y"], lambda _: next(answers), said.append) == 0
    assert len(said) == 2


@pytest.mark.parametrize("backend", ["core", "python"])
def test_backend_flag_picks_the_implementation_of_games_and_replays(monkeypatch, capsys,
                                                                    backend) -> None:
    from moonriver_env.moonriver.backend import game_class

    app, _, _ = _run_main(monkeypatch, ["--backend", backend, "--seed", "2"], capsys)
    (first,) = app.state.store.games.values()
    assert type(first.game) is game_class(backend)
    client = _test_client(app, "http://127.0.0.1:8765")
    r = client.post("/api/games", json={"seed": 3})
    assert r.status_code == 201, r.text
    assert type(app.state.store.games[r.json()["id"]].game) is game_class(backend)
    record = Game(seed=4)
    while not record.is_over:
        record.apply(int(record.legal_action_ids()[0]))
    r = client.post("/api/replays", json=record.to_record())
    assert r.status_code == 201, r.text
    assert app.state.store.replays[r.json()["id"]].backend == backend


def test_backend_flag_is_described_in_the_help(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "--backend {core,python}" in capsys.readouterr().out


def test_agent_seconds_caps_the_agents_of_every_game(monkeypatch, capsys) -> None:
    """--agent-seconds reaches the first game's agents and every game a request starts."""
    app, _, _ = _run_main(monkeypatch, ["--agent-seconds", "2.5", "--opponents", "mcts:100000",
                                        "--human"], capsys)
    (first,) = app.state.store.games.values()
    assert [agent.time_limit for agent in first.seats] == [2.5, 2.5]
    client = _test_client(app, "http://127.0.0.1:8765")
    r = client.post("/api/games", json={"opponents": ["puct:10"]})
    assert r.status_code == 201, r.text
    assert app.state.store.games[r.json()["id"]].seats[1].time_limit == 2.5
    assert "--agent-seconds" in " ".join(_help(capsys).split())


def _help(capsys) -> str:
    with pytest.raises(SystemExit):
        main(["--help"])
    return capsys.readouterr().out


def test_the_play_server_needs_no_images_extra() -> None:
    """The page draws SVG: with pillow and resvg-py absent the app builds and plays a move."""
    code = ("import sys; sys.modules['PIL'] = None; sys.modules['resvg_py'] = None\n"
            "from starlette.testclient import TestClient\n"
            "from moonriver_env.play.server import GameOptions, create_app\n"
            "c = TestClient(create_app(GameOptions(humans=(), opponents=('random',))))\n"
            "r = c.post('/api/games', json={'players': 2, 'humans': [], 'opponents': ['random']})\n"
            "print(r.status_code, 'svg' in c.get(f\"/api/games/{r.json()['id']}\").json())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=HANG_GUARD)
    assert out.stdout.split() == ["201", "True"], out.stderr
