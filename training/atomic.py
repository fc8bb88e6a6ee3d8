"""Files and folders written whole or not at all, for every checkpoint, snapshot and weights file.

A file is written to a temporary file in its own folder (``.NAME.XXXXXXXX.partial``), flushed
to the disk (``os.fsync``) and renamed over its final name (``os.replace``, atomic on POSIX and
Windows); the folder is then synced so that the rename itself survives a power loss. A crash,
``kill -9`` or Ctrl-C during a write leaves the previous file (or none) under the final name
and at worst a hidden ``.partial`` file beside it, which no reader takes for a checkpoint.
A folder (RLlib's checkpoints) is written the same way: a temporary sibling folder, every file
in it synced, then one rename; an earlier folder of that name is first renamed aside whole and
removed only after, so a kill never leaves a half-removed folder under the final name.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import BinaryIO

PARTIAL = ".partial"  # the suffix of every temporary file or folder


def partial_name(path: str) -> str:
    """A fresh temporary name in the folder of ``path``: ``.NAME.XXXXXXXX.partial``."""
    folder, name = os.path.split(path)
    return os.path.join(folder, f".{name}.{secrets.token_hex(4)}{PARTIAL}")


def sync_folder(folder: str) -> None:
    """Make the entries of ``folder`` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder or ".", os.O_RDONLY)
    except OSError:  # Windows opens no folders; its renames need no folder sync
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse fsync on a folder
        pass
    finally:
        os.close(fd)


@contextmanager
def _renamed_over(tmp: str, path: str) -> Iterator[None]:
    """Rename the finished ``tmp`` over ``path`` when the block succeeds (then sync the
    folder); remove ``tmp`` when it fails."""
    try:
        yield
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    sync_folder(os.path.dirname(path))


@contextmanager
def atomic_write(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary file to write ``path`` through: at the end of the block its bytes reach the
    disk and replace ``path`` in one rename; on an error ``path`` is left as it was and the
    temporary file is removed."""
    path = os.fspath(path)
    while True:
        tmp = partial_name(path)
        try:  # mode 0o666 less the umask, as open() gives a new file
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                         0o666)
            break
        except FileExistsError:
            continue
    with _renamed_over(tmp, path), os.fdopen(fd, "wb") as fh:
        yield fh
        fh.flush()
        os.fsync(fh.fileno())


def atomic_save(path: str | os.PathLike[str], write: Callable[[BinaryIO], object]) -> str:
    """``write(file)`` into ``path`` atomically (``atomic_write``); returns the path."""
    with atomic_write(path) as fh:
        write(fh)
    return os.fspath(path)


def atomic_text(path: str | os.PathLike[str], text: str) -> str:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns the path."""
    return atomic_save(path, lambda fh: fh.write(text.encode("utf-8")))


def keep_copy(src: str, dst: str) -> None:
    """Make ``dst`` an exact copy of the finished file ``src``, atomically (a hard link where
    the file system has them, else a copy)."""
    tmp = partial_name(dst)
    with _renamed_over(tmp, dst):
        try:
            os.link(src, tmp)
        except OSError:
            shutil.copyfile(src, tmp)


def sync_tree(folder: str) -> None:
    """fsync every file and folder under ``folder`` (the folder included)."""
    for root, _, files in os.walk(folder):
        for name in files:
            with open(os.path.join(root, name), "rb") as fh:
                os.fsync(fh.fileno())
        sync_folder(root)


@contextmanager
def atomic_folder(path: str) -> Iterator[str]:
    """A temporary sibling folder to fill: at the end of the block its files reach the disk
    and it becomes ``path`` (replacing an earlier folder of that name); on an error it is
    removed and ``path`` is left as it was."""
    tmp, old = partial_name(path), None
    os.makedirs(tmp)
    try:
        yield tmp
        sync_tree(tmp)
        if os.path.isdir(path):  # moved aside whole (one rename), not removed in place
            old = partial_name(path)
            os.replace(path, old)
        os.replace(tmp, path)
    except BaseException:
        if old is not None and not os.path.exists(path):
            os.replace(old, path)  # the earlier folder back under its name
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    sync_folder(os.path.dirname(path))
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def first_line(error: BaseException, limit: int = 160) -> str:
    """An error's message as one short line (for the line that names a skipped file)."""
    text = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return text if len(text) <= limit else text[:limit - 3] + "..."
