"""Bounds on the play server's connections, which uvicorn leaves open (a half-sent head, an
endless body or an unread response holds a descriptor for good). See docs/play.md (Limits)."""

from __future__ import annotations

import asyncio
import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

HEADER_TIMEOUT = 10.0  # seconds for a request head (from connect or the previous response)
BODY_TIMEOUT = 30.0  # seconds for a request body, and for a response to be taken
KEEP_ALIVE = 5.0  # seconds an idle keep-alive connection stays open (uvicorn's)
GRACEFUL_SHUTDOWN = 5  # seconds Ctrl+C waits for requests under way
MAX_CONNECTIONS = 4096  # the default cap never exceeds this, whatever the descriptor limit
_NO_LIMIT = 2**20  # taken as the limit where the system reports none
# Phases: head (awaiting a request head), body (head in, body not), sending (the client owes a
# read, pipelined work behind an unread response included), busy (the app works: no timeout).
# Over the cap, the longest waiting non-busy connection (what an attacker holds) is closed.
_PHASE_TIMEOUTS = {"head": "header_timeout", "body": "body_timeout", "sending": "body_timeout"}


def raise_descriptor_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard one where allowed; returns the soft limit then."""
    try:
        import resource
    except ImportError:  # Windows: no such limit to raise
        return 512
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):  # macOS refuses more than OPEN_MAX: keep the soft one
            pass
    return _NO_LIMIT if soft == resource.RLIM_INFINITY else soft


def default_max_connections(descriptors: int) -> int:
    """The default connection cap: half the descriptor limit, at most MAX_CONNECTIONS."""
    return max(1, min(MAX_CONNECTIONS, descriptors // 2))


def most_connections(descriptors: int) -> int:
    """The largest cap allowed: three quarters of the descriptor limit."""
    # The other quarter serves the listening socket, connections being accepted and files.
    return max(1, descriptors * 3 // 4)


def listen_backlog(descriptors: int) -> int:
    """The listen backlog: a sixteenth of the descriptor limit, 8 to 2048."""
    # It is also how many connections asyncio accepts at a time before the cap can close any.
    return max(8, min(2048, descriptors // 16))


def limits_problem(max_connections: int, header_timeout: float, body_timeout: float,
                   keep_alive: float, descriptors: int) -> str | None:
    """What is wrong with these bounds (as command-line options), or None."""
    for name, value in (("--header-timeout", header_timeout),
                        ("--body-timeout", body_timeout), ("--keep-alive", keep_alive)):
        if not (math.isfinite(value) and value > 0):
            return f"{name} must be a number of seconds over 0, got {value:g}"
    most = most_connections(descriptors)
    if not 1 <= max_connections <= most:
        return (f"--max-connections must be from 1 to {most} (three quarters of the limit of "
                f"{descriptors} open descriptors, ulimit -n), got {max_connections}")
    return None


class ConnectionGuard:
    """The open connections of one server, their phases, the cap and the timeouts."""

    def __init__(self, max_connections: int, header_timeout: float = HEADER_TIMEOUT,
                 body_timeout: float = BODY_TIMEOUT) -> None:
        self.max_connections = max_connections
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self.open: set[Any] = set()
        self.waiting: OrderedDict[Any, None] = OrderedDict()  # not busy, longest waiting first
        self.counts = {"refused": 0, "evicted": 0, "timed out": 0}
        self._sweep: asyncio.TimerHandle | None = None

    def timeout(self, phase: str) -> float | None:
        """Seconds a connection may stay in ``phase`` (None: no limit)."""
        name = _PHASE_TIMEOUTS.get(phase)
        return None if name is None else getattr(self, name)

    def admit(self, conn: Any) -> bool:
        """Take a new connection, closing the longest waiting one at the cap; False if all busy."""
        if len(self.open) >= self.max_connections:
            if not self.waiting:
                self.counts["refused"] += 1
                return False
            oldest = next(iter(self.waiting))
            self.counts["evicted"] += 1
            oldest.guard_close("503 Service Unavailable",
                               "the server is at its connection limit; try again")
        self.open.add(conn)
        if self._sweep is None:
            self._schedule(conn.loop)
        return True

    def forget(self, conn: Any) -> None:
        """A connection closed (or is closing)."""
        self.open.discard(conn)
        self.waiting.pop(conn, None)

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        period = min(1.0, max(0.05, min(self.header_timeout, self.body_timeout) / 4))
        self._sweep = loop.call_later(period, self._run_sweep, loop)

    def _run_sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        """Close the connections past their phase's deadline; runs while any is open."""
        now = loop.time()
        for conn in list(self.open):
            phase, since = conn.guard_phase()
            limit = self.timeout(phase)
            if limit is not None and now - since > limit:
                self.counts["timed out"] += 1
                what = "request head" if phase == "head" else "request"
                conn.guard_close("408 Request Timeout",
                                 f"the {what} did not arrive within {limit:g} seconds")
        self._sweep = None
        if self.open:
            self._schedule(loop)


def guarded_protocol(base: type[asyncio.Protocol], guard: ConnectionGuard) -> type:
    """A subclass of uvicorn's HTTP protocol class ``base`` whose connections ``guard`` bounds."""

    class Guarded(base):  # type: ignore[valid-type, misc]
        """uvicorn's protocol with phases, deadlines and the connection cap."""

        _phase: tuple[str, int] = ("", 0)
        _since = 0.0
        _owed: float | None = None  # since when a response has been the client's to read

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            if not guard.admit(self):
                self._send_and_abort("503 Service Unavailable",
                                     "the server is at its connection limit; try again")
                return
            self.guard_phase()

        def connection_lost(self, exc: Exception | None) -> None:
            guard.forget(self)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self.guard_phase()

        def on_response_complete(self) -> None:
            done = self.cycle
            super().on_response_complete()
            if self.cycle is not done and self._owed is None:
                # uvicorn started at once a request that arrived before this response was
                # complete (pipelined): from here on the client owes a read
                self._owed = self.loop.time()
            self.guard_phase()

        def guard_phase(self) -> tuple[str, float]:
            """The connection's phase now and since when (the loop's clock)."""
            cycle = self.cycle
            if cycle is None or cycle.response_complete:
                phase = "head"
            elif cycle.more_body:
                phase = "body"
            elif cycle.response_started or self.flow.write_paused:
                # A response under way, or one held until the client reads the earlier ones
                # (pipelined requests): the client's to take.
                phase = "sending"
            else:
                phase = "busy"
            now = self.loop.time()
            if phase == "head":
                self._owed = None
            elif phase == "sending" or self._owed is not None:
                # a pipelined request's work, too, waits on a client that has not caught up:
                # the clock of the first unread response runs on
                self._owed = now if self._owed is None else self._owed
                phase = "sending"
            if (phase, id(cycle)) != self._phase:
                self._phase = (phase, id(cycle))
                self._since = self._owed if phase == "sending" and self._owed is not None else now
                guard.waiting.pop(self, None)
                if phase != "busy" and self in guard.open:
                    guard.waiting[self] = None
            return phase, self._since

        def guard_close(self, status: str, text: str) -> None:
            """Close the connection now; say why when no response is under way."""
            guard.forget(self)
            if self._phase[0] == "head":
                self._send_and_abort(status, text)
            else:
                self.transport.abort()

        def _send_and_abort(self, status: str, text: str) -> None:
            # abort, not close: close would wait for a client that does not read.
            if not self.transport.is_closing() and not self.transport.get_write_buffer_size():
                body = text.encode()
                head = (f"HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\n"
                        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n")
                self.transport.write(head.encode() + body)
            self.transport.abort()

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{base.__name__}"
    return Guarded


@dataclass(frozen=True)
class ServerLimits:
    """One server's bounds: connection cap, timeouts, the descriptor limit they were chosen for."""

    max_connections: int
    header_timeout: float = HEADER_TIMEOUT
    body_timeout: float = BODY_TIMEOUT
    keep_alive: float = KEEP_ALIVE
    descriptors: int = 1024


def uvicorn_config(app: Any, host: str, port: int, limits: ServerLimits) -> Any:
    """A uvicorn.Config serving ``app`` within ``limits``; its protocol class carries ``guard``."""
    import uvicorn
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    guard = ConnectionGuard(limits.max_connections, limits.header_timeout, limits.body_timeout)
    protocol: Any = guarded_protocol(AutoHTTPProtocol, guard)  # a class made at run time
    protocol.guard = guard
    return uvicorn.Config(app, host=host, port=port, log_level="warning", http=protocol,
                          ws="none", timeout_keep_alive=limits.keep_alive,  # type: ignore[arg-type]
                          # the client is the peer's address: an X-Forwarded-For header (which
                          # uvicorn trusts from 127.0.0.1) would let one client pose as many
                          # and escape its share of the agent threads
                          proxy_headers=False,
                          backlog=listen_backlog(limits.descriptors),
                          timeout_graceful_shutdown=GRACEFUL_SHUTDOWN)
