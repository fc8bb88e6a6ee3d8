"""Agent threads shared fairly among the clients of the play server. See docs/play.md (Limits)."""

from __future__ import annotations

import asyncio
import functools
import ipaddress
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from moonriver_env.play.session import PlayError

AGENT_THREADS = 8  # agents thinking at once (apart from the threads that answer requests)
MAX_WAITING = 64  # agent moves one client may have waiting for a thread
T = TypeVar("T")


def agent_threads_problem(threads: int, per_client: int) -> str | None:
    """What is wrong with these thread counts (as command-line options), or None."""
    if not 1 <= threads <= 256:
        return f"--agent-threads must be from 1 to 256, got {threads}"
    if not 1 <= per_client <= threads:
        return (f"--agent-threads-per-client must be from 1 to --agent-threads ({threads}), "
                f"got {per_client}")
    return None


def client_key(address: str | None) -> str:
    """Who a request comes from, for fairness: IPv4 address, IPv6 /64 network, or "unknown"."""
    if not address:
        return "unknown"
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class _Move:
    """One agent move waiting for a thread: what to run, who waits, its order of arrival."""

    def __init__(self, client: str, key: str, work: Callable[[], Any],
                 done: asyncio.Future[Any], order: int) -> None:
        self.client, self.key, self.work, self.done = client, key, work, done
        self.order = order


class FairAgentPool:
    """Runs agent moves on ``threads`` threads, at most ``per_client`` at once for one client."""
    # A free thread goes to the waiting client with the fewest running; with per_client below
    # threads one client can never delay another's move. Used from one event loop.

    def __init__(self, threads: int = AGENT_THREADS, per_client: int | None = None,
                 max_waiting: int = MAX_WAITING) -> None:
        per_client = max(1, threads // 2) if per_client is None else per_client
        problem = agent_threads_problem(threads, per_client)
        if problem:
            raise ValueError(problem.replace("--agent-threads-per-client", "per_client")
                             .replace("--agent-threads", "threads"))
        self.threads, self.per_client, self.max_waiting = threads, per_client, max_waiting
        self.executor = ThreadPoolExecutor(threads, thread_name_prefix="moonriver-agent")
        self.running: Counter[str] = Counter()  # agents thinking, by client
        self.waiting: dict[str, deque[_Move]] = {}  # moves waiting, by client
        self._keys: set[str] = set()  # games with a move waiting or thinking
        self._arrived = 0  # moves taken so far: the order of arrival

    @property
    def busy(self) -> int:
        """Threads thinking now."""
        return sum(self.running.values())

    async def run(self, client: str, key: str, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` on an agent thread in ``client``'s turn; one move per game ``key``."""
        if key in self._keys:
            raise PlayError("an agent of this game is already choosing its move (or waiting "
                            "for a thread to think on); ask for the state again", 409)
        queue = self.waiting.get(client)
        if queue is not None and len(queue) >= self.max_waiting:
            raise PlayError(f"{len(queue)} agent moves of yours are already waiting for a "
                            "thread; wait for them before asking for more", 429)
        done: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._arrived += 1
        move = _Move(client, key, lambda: work(*args), done, self._arrived)
        self._keys.add(key)
        self.waiting.setdefault(client, deque()).append(move)
        self._dispatch()
        try:
            return await done
        except asyncio.CancelledError:  # the request went away: a waiting move is dropped
            if move in self.waiting.get(client, ()):
                self._drop(move)
            raise

    def _drop(self, move: _Move) -> None:
        queue = self.waiting[move.client]
        queue.remove(move)
        self._keys.discard(move.key)
        if not queue:
            del self.waiting[move.client]

    def _next(self) -> _Move | None:
        """The next move: the client under its cap with the fewest thinking; oldest on a tie."""
        ready = [queue[0] for client, queue in self.waiting.items()
                 if self.running[client] < self.per_client]
        if not ready:
            return None
        move = min(ready, key=lambda m: (self.running[m.client], m.order))
        self._drop(move)
        self._keys.add(move.key)  # thinking now: still one move for the game
        return move

    def _dispatch(self) -> None:
        """Start waiting moves while threads are free."""
        while self.busy < self.threads:
            move = self._next()
            if move is None:
                return
            self.running[move.client] += 1
            future = asyncio.get_running_loop().run_in_executor(self.executor, move.work)
            future.add_done_callback(functools.partial(self._finished, move))

    def _finished(self, move: _Move, future: asyncio.Future[Any]) -> None:
        self.running[move.client] -= 1
        if not self.running[move.client]:
            del self.running[move.client]
        self._keys.discard(move.key)
        if future.cancelled():  # the pool was shut down before the move began
            move.done.cancel()
        elif not move.done.done():
            if future.exception() is not None:
                move.done.set_exception(future.exception())  # type: ignore[arg-type]
            else:
                move.done.set_result(future.result())
        self._dispatch()

    def shutdown(self) -> None:
        """Stop the threads once the moves thinking now are done."""
        self.executor.shutdown(wait=False, cancel_futures=True)
