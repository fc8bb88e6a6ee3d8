"""Progress lines and Ctrl-C for the long benchmarks, shared by the scripts in benchmarks/.

A long benchmark says where it is from its start (``Progress``: done of total, the minutes so
far and an estimate of what remains, at most one line every ``EVERY`` seconds, on stderr, so
that stdout keeps the results and the final JSON line), and Ctrl-C stops it with one line and
status 130 (``main_of``); worker processes started inside ``children_ignore_ctrl_c`` leave the
Ctrl-C to their parent, which stops them, instead of each printing a traceback.
"""

from __future__ import annotations

import functools
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

INTERRUPTED = 130  # a shell's status for a command stopped by Ctrl-C (128 + SIGINT)
EVERY = 10.0  # seconds between progress lines


def minutes_left(elapsed: float, done: int, total: int) -> str:
    """"about N min left" at the pace so far ("" before the first unit is done)."""
    if done <= 0:
        return ""
    return f"about {elapsed * (total - done) / done / 60:.1f} min left"


class Progress:
    """Lines like ``ladder.py: 120/2,520 games, 1.5 min, about 30.0 min left``, at most one
    per ``every`` seconds (the last one always)."""

    def __init__(self, prog: str, total: int, unit: str, every: float = EVERY,
                 stream: TextIO | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.prog, self.total, self.unit, self.every = prog, total, unit, every
        self.stream, self.clock = stream, clock
        self.start = clock()
        self.shown: tuple[float, int, str] = (-float("inf"), -1, "")  # when, done, extra

    def line(self, done: int, extra: str = "", now: float | None = None) -> str:
        """The progress line after ``done`` units (at ``now``, else the clock's time)."""
        elapsed = (self.clock() if now is None else now) - self.start
        parts = [f"{done:,}/{self.total:,} {self.unit}", *([extra] if extra else []),
                 f"{elapsed / 60:.1f} min", minutes_left(elapsed, done, self.total)]
        return f"{self.prog}: " + ", ".join(part for part in parts if part)

    def update(self, done: int, extra: str = "") -> None:
        """Print the line when due: ``every`` seconds after the last one, or at the end."""
        now, same = self.clock(), (done, extra) == self.shown[1:]
        if same and done != 0:
            return
        # at the end also when only the extra words changed (the last table finishing after
        # its last game was counted), so the last line is always the whole count
        if now - self.shown[0] >= self.every or (done >= self.total and not same):
            print(self.line(done, extra, now), file=self.stream or sys.stderr, flush=True)
            self.shown = (now, done, extra)


@contextmanager
def watching(progress: Progress, count: Callable[[], tuple[int, str]],
             poll: float = 1.0) -> Iterator[None]:
    """Update ``progress`` from ``count()`` (done, extra words) now, then every ``poll``
    seconds in a background thread while the block runs (work done in this thread or in
    other processes)."""
    progress.update(*count())
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(poll):
            progress.update(*count())

    thread = threading.Thread(target=loop, name="benchmark-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def main_of(prog: str) -> Callable[[Callable[..., int | None]], Callable[..., int]]:
    """Decorate a benchmark's ``main``: Ctrl-C prints ``PROG: interrupted (Ctrl-C)`` and
    returns 130 instead of a traceback; a ``main`` returning None returns 0."""

    def wrap(main: Callable[..., int | None]) -> Callable[..., int]:
        @functools.wraps(main)
        def wrapper(*args: object, **kwargs: object) -> int:
            try:
                return main(*args, **kwargs) or 0
            except KeyboardInterrupt:
                print(f"{prog}: interrupted (Ctrl-C)", file=sys.stderr, flush=True)
                return INTERRUPTED

        return wrapper

    return wrap
