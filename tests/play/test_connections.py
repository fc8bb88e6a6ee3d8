"""The play server bounds its connections: held half-sent requests neither wedge it nor
outlive the header and body timeouts, and the cap stays below the descriptor limit.

The servers run in subprocesses started the way a user starts them (``moonriver-play``),
on 127.0.0.1 only, with the descriptor limit lowered as on a desktop."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from moonriver_env.play.cli import main
from moonriver_env.play.connections import (
    ConnectionGuard,
    ServerLimits,
    default_max_connections,
    listen_backlog,
    most_connections,
    raise_descriptor_limit,
    uvicorn_config,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX descriptor limits")
resource = pytest.importorskip("resource")
pytest.importorskip("uvicorn")

DESCRIPTORS = 256  # the server's `ulimit -n`, soft and hard
HALF_HEAD = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"  # and never the blank line


def _limit_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTORS, DESCRIPTORS))


@pytest.fixture()
def server(request) -> Iterator[tuple[str, subprocess.Popen]]:
    """A moonriver-play server under ``ulimit -n 256`` with the test's extra options; its
    base URL."""
    extra = getattr(request, "param", [])
    proc = subprocess.Popen([sys.executable, "-m", "moonriver_env.play.cli", "--no-browser",
                             "--port", "0", "--opponents", "random", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_limit_descriptors)
    try:
        line = proc.stdout.readline()
        assert line.startswith("Moon River: http://127.0.0.1:"), (line, proc.stderr.read())
        yield line.split()[2].split("/game/")[0], proc
    finally:
        proc.terminate()
        proc.wait(20)


def _get(url: str, timeout: float) -> int:
    with urllib.request.urlopen(f"{url}/api/defaults", timeout=timeout) as response:
        return response.status


def _answers(url: str, timeout: float) -> bool:
    try:
        return _get(url, timeout) == 200
    except (OSError, urllib.error.URLError):
        return False


def _answers_soon(url: str, pause: float) -> bool:
    """Whether the server answers within 40 tries of up to 5 s each, ``pause`` s apart (a
    server that recovers answers at once; the tries leave room for a busy machine)."""
    for _ in range(40):
        if _answers(url, timeout=5):
            return True
        time.sleep(pause)
    return False


def _hold(port: int, count: int, first: bytes) -> list[socket.socket]:
    """``count`` connections that each send ``first`` and nothing more."""
    held = []
    for _ in range(count):
        conn = socket.create_connection(("127.0.0.1", port), timeout=10)
        conn.sendall(first)
        held.append(conn)
    return held


def _read_until_closed(conn: socket.socket, timeout: float) -> bytes:
    """What the server sends until it closes the connection (TimeoutError if it does not
    within ``timeout`` seconds)."""
    conn.settimeout(timeout)
    data = b""
    try:
        while chunk := conn.recv(4096):
            data += chunk
    except ConnectionResetError:
        pass
    return data


def test_the_default_cap_and_backlog_follow_the_descriptor_limit() -> None:
    assert default_max_connections(256) == 128 and default_max_connections(10**6) == 4096
    assert most_connections(256) == 192 and default_max_connections(1) == 1
    assert listen_backlog(256) == 16 and listen_backlog(10**6) == 2048
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert raise_descriptor_limit() >= soft


def test_the_soft_descriptor_limit_is_raised_to_the_hard_one() -> None:
    run = subprocess.run([sys.executable, "-c", "from moonriver_env.play.connections import "
                          "raise_descriptor_limit as r; import resource; "
                          "print(r(), *resource.getrlimit(resource.RLIMIT_NOFILE))"],
                         capture_output=True, text=True, timeout=60,
                         preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE,
                                                               (256, 512)))
    assert run.stdout.split() == ["512", "512", "512"], run.stderr


@pytest.mark.parametrize("server", [["--header-timeout", "3600"]], indirect=True)
def test_held_half_sent_requests_do_not_wedge_the_server(server) -> None:
    """Twice the cap of connections that send half a request head: a normal GET answers
    while they are held and right after they close (the old server, with no cap, ran out
    of descriptors and answered nothing). The head timeout is an hour: no timeout frees them."""
    url, proc = server
    port = int(url.rsplit(":", 1)[1])
    cap = default_max_connections(DESCRIPTORS)
    held = _hold(port, 2 * cap, HALF_HEAD)
    try:
        assert _get(url, timeout=10) == 200  # during the attack
        assert _get(url, timeout=10) == 200
    finally:
        for conn in held:
            conn.close()
    assert _answers_soon(url, pause=0.25), "the server did not recover"
    assert proc.poll() is None


@pytest.mark.parametrize("server", [["--header-timeout", "1", "--body-timeout", "1"]],
                         indirect=True)
def test_unfinished_requests_are_closed_after_the_timeouts(server) -> None:
    """A half-sent head, a connection that sends nothing and a body that stops half way are
    closed by the server (the old server kept each one open for good)."""
    url, proc = server
    port = int(url.rsplit(":", 1)[1])
    half_body = (b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: "
                 b"application/json\r\ncontent-length: 100\r\n\r\n{\"players\":")
    head, silent, body = (_hold(port, 1, first)[0] for first in (HALF_HEAD, b"", half_body))
    try:
        start = time.monotonic()
        assert _read_until_closed(head, 30).startswith(b"HTTP/1.1 408 Request Timeout")
        assert _read_until_closed(silent, 30).startswith(b"HTTP/1.1 408 Request Timeout")
        assert not _read_until_closed(body, 30).startswith(b"HTTP/1.1 2")
        assert time.monotonic() - start < 25  # 1 s timeouts; the bound is generous
    finally:
        for conn in (head, silent, body):
            conn.close()
    assert _get(url, timeout=10) == 200 and proc.poll() is None


@pytest.mark.parametrize("argv, words", [
    (["--header-timeout", "0"], "--header-timeout must be a number of seconds over 0"),
    (["--body-timeout", "nan"], "--body-timeout must be a number of seconds over 0"),
    (["--keep-alive", "-1"], "--keep-alive must be a number of seconds over 0"),
    (["--max-connections", "0"], "--max-connections must be from 1 to"),
    (["--max-connections", str(10**9)], "three quarters of the limit"),
    (["--agent-threads", "0"], "--agent-threads must be from 1 to 256"),
    (["--agent-threads", "4", "--agent-threads-per-client", "5"],
     "--agent-threads-per-client must be from 1 to --agent-threads (4)"),
])
def test_bad_server_bounds_exit_2_with_one_line(argv, words, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--no-browser", "--port", "0", *argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


def test_the_bounds_and_their_defaults_are_in_the_help(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    for words in ("--max-connections", "half the limit on open files", "--header-timeout",
                  "(default: 10)", "--body-timeout", "(default: 30)", "--keep-alive",
                  "(default: 5)", "--agent-threads-per-client", "half of --agent-threads"):
        assert words in out, words


class _Conn:
    """A stand-in connection: the guard's view of one (phase and closing)."""

    def __init__(self, guard: ConnectionGuard, loop: asyncio.AbstractEventLoop) -> None:
        self.guard, self.loop, self.closed = guard, loop, ""

    def wait(self) -> None:
        """Wait for a request head, like a new connection."""
        self.guard.waiting[self] = None

    def guard_phase(self) -> tuple[str, float]:
        return ("head" if self in self.guard.waiting else "busy"), self.loop.time()

    def guard_close(self, status: str, text: str) -> None:
        self.closed = status
        self.guard.forget(self)


def test_over_the_cap_the_longest_waiting_goes_and_busy_ones_stay() -> None:
    async def scenario() -> None:
        guard = ConnectionGuard(max_connections=3)
        loop = asyncio.get_running_loop()
        conns = [_Conn(guard, loop) for _ in range(6)]
        for conn in conns[:3]:
            assert guard.admit(conn)
        conns[1].wait()
        conns[2].wait()
        assert guard.admit(conns[3]) and conns[1].closed.startswith("503")
        conns[3].wait()
        assert guard.admit(conns[4]) and conns[2].closed.startswith("503")
        assert guard.admit(conns[5]) and conns[3].closed.startswith("503")
        assert not guard.admit(_Conn(guard, loop))  # all three open ones are busy
        assert guard.open == {conns[0], conns[4], conns[5]} and not conns[0].closed
        assert guard.counts == {"refused": 1, "evicted": 3, "timed out": 0}

    asyncio.run(scenario())


def _pipeline_unread(port: int, count: int, requests: int) -> list[socket.socket]:
    """``count`` connections that each send ``requests`` pipelined GETs of the rules page
    (about 20 KB each) and never read a byte of the answers."""
    held = []
    for _ in range(count):
        conn = socket.socket()
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        conn.connect(("127.0.0.1", port))
        conn.sendall(b"GET /rules HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * requests)
        held.append(conn)
    return held


@pytest.mark.parametrize("server", [["--header-timeout", "1", "--body-timeout", "1",
                                     "--max-connections", "16"]], indirect=True)
def test_pipelined_requests_never_read_are_timed_out(server) -> None:
    """Twice the cap of connections that pipeline requests and never read: the responses
    waiting behind unread ones count as being sent, so the body timeout closes them and a
    normal GET answers within seconds (before, they counted as busy and were never timed
    out or evicted: every later connection got 503, and Ctrl+C did not stop the server)."""
    url, proc = server
    port = int(url.rsplit(":", 1)[1])
    held = _pipeline_unread(port, 32, 1000)
    time.sleep(2)  # the server takes the requests in and writes until the clients' buffers fill
    try:
        answered = _answers_soon(url, pause=0.5)
        assert answered, "pipelined requests that are never read held every connection"
    finally:
        for conn in held:
            conn.close()
    assert proc.poll() is None


def _serve_in_thread(app: object, limits: ServerLimits) -> Iterator[tuple[int, ConnectionGuard]]:
    """``app`` served by the guarded uvicorn protocol on 127.0.0.1 in a thread: its port and
    its guard."""
    import threading

    import uvicorn

    config = uvicorn_config(app, "127.0.0.1", 0, limits)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(600):  # a hang guard: a working server starts at once
        if server.started or not thread.is_alive():
            break
        time.sleep(0.05)
    assert server.started, "the server did not start"
    try:
        yield server.servers[0].sockets[0].getsockname()[1], config.http.guard
    finally:
        server.should_exit = True
        thread.join(10)


def test_work_for_a_pipelining_client_that_never_reads_stops_at_the_body_timeout() -> None:
    """A client pipelines 50 requests and reads nothing. Every response is small enough for
    the socket buffers, so each completes, and each takes the app 0.2 s: the connection is
    closed at the 1 s body timeout, after a few of them, and its slot freed. (Before, each
    pipelined request started the clock again: all 50 were answered, 10 s of work for a
    client that read none of it, while the connection held its slot.)"""
    served: list[int] = []

    async def slow_app(scope: dict, receive: object, send: object) -> None:
        if scope["type"] != "http":
            return
        await asyncio.sleep(0.2)  # the app's work for one request
        served.append(1)
        await send({"type": "http.response.start", "status": 200,  # type: ignore[operator]
                    "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})  # type: ignore[operator]

    limits = ServerLimits(max_connections=4, header_timeout=1.0, body_timeout=1.0)
    for port, guard in _serve_in_thread(slow_app, limits):
        conn = socket.create_connection(("127.0.0.1", port), timeout=10)
        conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 50)
        try:
            for _ in range(600):  # a hang guard (30 s): the timeout closes it after 1 s
                if guard.counts["timed out"] or len(served) == 50:
                    break
                time.sleep(0.05)
            assert guard.counts["timed out"] == 1, (guard.counts, len(served))
            assert len(served) < 50, "every pipelined request was answered"
            for _ in range(200):  # the slot is freed (the close is under way)
                if not guard.open:
                    break
                time.sleep(0.05)
            assert not guard.open
        finally:
            conn.close()
