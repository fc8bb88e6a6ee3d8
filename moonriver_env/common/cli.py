"""Turns any CLI's failure into one ``PROG: error: MESSAGE`` line: status 2 for a user error, 1
for an internal one; ``--debug`` shows the traceback instead."""

from __future__ import annotations

import argparse
import functools
import importlib
import signal
import sys
import threading
import typing
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .errors import PicklableError

USAGE_STATUS = 2  # argparse's status for a bad command line
INTERNAL_STATUS = 1

# Top-level modules of each optional extra (pyproject's [project.optional-dependencies]); numpy,
# gymnasium and pettingzoo are the plain install's. moonriver-eval's tqdm, rich and openskill are
# the lighter 'eval' extra's (which 'train' includes), so a missing one names that extra.
EXTRA_OF_MODULE = {
    "PIL": "images", "resvg_py": "images",
    "torch": "train", "stable_baselines3": "train", "sb3_contrib": "train",
    "tensorboard": "train", "tqdm": "eval", "rich": "eval", "openskill": "eval",
    "matplotlib": "train",
    "starlette": "play", "uvicorn": "play", "markdown": "play",
    "ray": "rllib",
    "pyspiel": "openspiel", "open_spiel": "openspiel",
    "chess": "bench", "pygame": "bench",
}


class CLIError(Exception):
    """A user error whose message is shown as is (one line, exit status 2)."""


class MissingExtraError(PicklableError, CLIError):
    """An optional dependency is not installed; the message names the extra to install."""

    def __init__(self, module: str, extra: str, what: str = "this command") -> None:
        super().__init__(f"{what} needs the optional dependency {module!r}, which is not "
                         f"installed; install the '{extra}' extra: "
                         f'pip install "moonriver-env[{extra}]"')
        self.module, self.extra = module, extra


def require(*modules: str, what: str = "this command") -> None:
    """Import ``modules`` now; a missing one raises MissingExtraError naming its extra."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            raise _missing(exc, what) or exc from None


def _missing(exc: ModuleNotFoundError, what: str = "this command") -> MissingExtraError | None:
    top = (exc.name or "").split(".")[0]
    if top in EXTRA_OF_MODULE:
        return MissingExtraError(top, EXTRA_OF_MODULE[top], what)
    return None


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser, but a bad command line is one line on stderr (status 2), no usage."""

    def error(self, message: str) -> typing.NoReturn:
        """Print ``PROG: error: MESSAGE (see PROG --help)`` and exit with status 2."""
        self.exit(USAGE_STATUS, f"{self.prog}: error: {one_line(message)} "
                                f"(see {self.prog} --help)\n")


def add_debug_flag(parser: argparse.ArgumentParser) -> None:
    """The ``--debug`` flag every CLI accepts (show tracebacks instead of one line)."""
    parser.add_argument("--debug", action="store_true",
                        help="on an error, show the full traceback instead of one line")


def describe(exc: BaseException) -> tuple[str, int]:
    """The one-line message and exit status for an exception raised by a CLI."""
    if isinstance(exc, ModuleNotFoundError):
        missing = _missing(exc)
        if missing is not None:
            return str(missing), USAGE_STATUS
    if isinstance(exc, CLIError):
        return str(exc), USAGE_STATUS
    if isinstance(exc, OSError):  # missing file, a directory given for a file, permissions
        if exc.filename is not None:
            return f"{exc.strerror or type(exc).__name__}: {exc.filename}", USAGE_STATUS
        return str(exc), USAGE_STATUS
    if isinstance(exc, zipfile.BadZipFile):
        return f"not a valid checkpoint .zip: {exc}", USAGE_STATUS
    if isinstance(exc, ValueError):  # includes DataFileError, JSON and TOML decode errors
        return str(exc), USAGE_STATUS
    return (f"internal error: {type(exc).__name__}: {exc} (run again with --debug for the "
            f"traceback)", INTERNAL_STATUS)


def one_line(text: str) -> str:
    """Collapse a message onto one line."""
    return " ".join(text.split())


def cli_main(prog: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Decorate a CLI ``main(argv)``: errors become ``PROG: error: ...`` lines and a status."""

    def wrap(main: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(main)
        def wrapper(argv: list[str] | None = None) -> int:
            args = sys.argv[1:] if argv is None else list(argv)
            try:
                return main(argv)
            except KeyboardInterrupt:
                print(f"{prog}: interrupted", file=sys.stderr)
                return 130
            except Exception as exc:
                if "--debug" in args:
                    raise
                message, status = describe(exc)
                print(f"{prog}: error: {one_line(message)}", file=sys.stderr)
                return status

        return wrapper

    return wrap


@contextmanager
def children_ignore_ctrl_c() -> Iterator[None]:
    """Processes started in this block ignore Ctrl-C: the parent alone gets it and stops them."""
    # An ignored signal stays ignored across exec and Python then installs no KeyboardInterrupt
    # handler, so no worker prints a traceback.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def sigint_deferred() -> Iterator[None]:
    """A Ctrl-C during the block takes effect at its end (a file being written stays whole)."""
    caught: list[int] = []
    main = threading.current_thread() is threading.main_thread()
    previous = (signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
                if main else None)
    # blocked too: a process started inside inherits it, and a worker that ignores SIGINT before
    # it unblocks it (training.fast.parallel_play) never gets a Ctrl-C during its start-up
    mask = (signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            if hasattr(signal, "pthread_sigmask") else None)
    try:
        yield
    finally:
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if main and previous is not None:
            signal.signal(signal.SIGINT, previous)
    if caught:
        signal.raise_signal(signal.SIGINT)
