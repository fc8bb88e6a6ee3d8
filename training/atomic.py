"""Files and folders written whole or not at all (temporary name, fsync, rename), and checked
against the CRC-32s of their zip members. See docs/training.md ("Checkpoints survive a crash")."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import sys
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

PARTIAL = ".partial"  # the suffix of every temporary file or folder
_PARTIAL_NAME = re.compile(r"\..+\.[0-9a-f]{8}" + re.escape(PARTIAL))  # partial_name's form


class ChecksumError(ValueError):
    """A file whose bytes no longer match the checksum written with them."""


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
        with contextlib.suppress(OSError):  # some file systems refuse fsync on a folder
            os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def _renamed_over(tmp: str, path: str) -> Iterator[None]:
    """Rename the finished ``tmp`` over ``path`` when the block succeeds; remove it if not."""
    try:
        yield
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    # so that the rename itself survives a power loss
    sync_folder(os.path.dirname(path))


@contextmanager
def atomic_write(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary file that replaces ``path`` in one rename when the block ends without error."""
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
    """``write(file)`` into ``path`` atomically (``atomic_write``); returns the path. A write
    that failed on an OSError with no file named (a full disk) raises it naming ``path``."""
    try:
        with atomic_write(path) as fh:
            write(fh)
    except (OSError, RuntimeError) as exc:
        failed = _os_error(exc)
        if failed is None or failed.filename is not None:
            raise
        raise OSError(failed.errno, f"{failed.strerror}{_free_space(path)}",
                      os.fspath(path)) from exc
    return os.fspath(path)


def _os_error(exc: BaseException) -> OSError | None:
    """``exc`` if an OSError, else the OSError behind it (torch.save's writer raises a
    RuntimeError, ``unexpected pos``, over its file's OSError), else None."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, OSError):
            return link
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return None


def _free_space(path: str | os.PathLike[str]) -> str:
    """``; N MiB free on its disk`` for ``path``'s folder ('' if that cannot be read)."""
    try:
        free = shutil.disk_usage(os.path.dirname(os.path.abspath(path))).free
    except OSError:
        return ""
    return f"; {free / 2**20:.0f} MiB free on its disk"


def atomic_text(path: str | os.PathLike[str], text: str) -> str:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns the path."""
    return atomic_save(path, lambda fh: fh.write(text.encode("utf-8")))


def trim_log(path: str, iteration: int) -> None:
    """Drop the lines of a ``log.jsonl`` past ``iteration`` (a resumed run logs them again)."""
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as fh:
            kept = [line for line in fh if _logged(line) <= iteration]
        atomic_text(path, "".join(kept))


def _logged(line: str) -> int:
    """The iteration of a ``log.jsonl`` line (a blank or unreadable line: past every one)."""
    try:
        return int(json.loads(line)["iteration"])
    except (ValueError, KeyError, TypeError):
        return sys.maxsize


def sha256(path: str) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def keep_copy(src: str, dst: str) -> None:
    """Make ``dst`` an atomic copy of the finished file ``src`` (a hard link where possible)."""
    if os.path.exists(dst) and os.path.samefile(src, dst):
        # a kill after the last keep_copy left both names on one file; renaming a third link
        # onto it would do nothing (POSIX) and leave the temporary name behind for good
        return
    tmp = partial_name(dst)
    with _renamed_over(tmp, dst):
        try:
            os.link(src, tmp)
        except OSError:
            shutil.copyfile(src, tmp)


def remove_partials(folder: str) -> list[str]:
    """Remove (and return) the partial files a killed run left in ``folder`` (at a run's start)."""
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    removed = []
    for name in names:
        if _PARTIAL_NAME.fullmatch(name):
            path = os.path.join(folder, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path)
            removed.append(path)
    return removed


def check_archive(path: str | os.PathLike[str]) -> None:
    """Check every zip member's CRC-32 (ChecksumError; ValueError if ``path`` is no zip archive)."""
    name = os.fspath(path)
    try:
        archive = zipfile.ZipFile(name)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as exc:
        raise ValueError(f"{name}: not a zip archive ({first_line(exc)})") from None
    with archive:
        try:
            damaged = archive.testzip()  # reads each member whole; a bad CRC names it
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error,
                NotImplementedError, RuntimeError, ValueError) as exc:
            raise ChecksumError(f"{name}: fails its checksum check: a member cannot be read "
                                f"back ({first_line(exc)})") from None
    if damaged is not None:
        raise ChecksumError(f"{name}: its member {damaged} fails its CRC-32 checksum (the file "
                            f"changed after it was written)")


def load_checked(path: str | os.PathLike[str]) -> Any:
    """``torch.load`` (weights only, CPU) after ``check_archive``: torch ignores its CRC-32s."""
    check_archive(path)
    import torch  # here, not at the top: torch-free readers (agents, RLlib paths) import this

    return torch.load(path, map_location="cpu", weights_only=True)


def sync_tree(folder: str) -> None:
    """fsync every file and folder under ``folder`` (the folder included)."""
    for root, _, files in os.walk(folder):
        for name in files:
            with open(os.path.join(root, name), "rb") as fh:
                os.fsync(fh.fileno())
        sync_folder(root)


@contextmanager
def atomic_folder(path: str) -> Iterator[str]:
    """A temporary sibling folder that replaces ``path`` in one rename when the block succeeds."""
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
