"""A kill while a checkpoint folder replaces an earlier one of the same name (RLlib's
``iter_NNNNNN`` after a resume from an older iteration): the name holds one whole folder,
never a half-removed one. The kill is a KeyboardInterrupt raised part way through removing
files, where a ``kill -9`` would stop the process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from moonriver_env.training import atomic

FILES = ("a.pkl", "b.pkl", "c.pkl", "manifest.json")


def _fill(folder: str | Path, text: bytes) -> None:
    for name in FILES:
        Path(folder, name).write_bytes(text)


def test_a_kill_while_the_earlier_folder_is_removed_leaves_a_whole_one(tmp_path,
                                                                       monkeypatch) -> None:
    path = tmp_path / "iter_000006"
    with atomic.atomic_folder(str(path)) as partial:
        _fill(partial, b"old")
    real_remove = os.remove
    removed = []

    def killed_after_one(name: str, *args, **kwargs) -> None:
        if removed:
            raise KeyboardInterrupt  # the process dies here
        removed.append(name)
        real_remove(name, *args, **kwargs)

    monkeypatch.setattr(os, "remove", killed_after_one)
    monkeypatch.setattr(os, "unlink", killed_after_one)
    try:
        with atomic.atomic_folder(str(path)) as partial:
            _fill(partial, b"new")
    except KeyboardInterrupt:
        pass
    monkeypatch.undo()
    contents = {name: (path / name).read_bytes() for name in os.listdir(path)}
    assert sorted(contents) == sorted(FILES), "a half-removed folder under the final name"
    assert set(contents.values()) in ({b"old"}, {b"new"})


def test_a_replaced_folder_leaves_nothing_beside_it(tmp_path) -> None:
    path = tmp_path / "iter_000006"
    for text in (b"old", b"new"):
        with atomic.atomic_folder(str(path)) as partial:
            _fill(partial, text)
    assert os.listdir(tmp_path) == [path.name]
    assert {(path / name).read_bytes() for name in FILES} == {b"new"}


def test_a_failed_write_keeps_the_earlier_folder(tmp_path) -> None:
    path = tmp_path / "iter_000006"
    with atomic.atomic_folder(str(path)) as partial:
        _fill(partial, b"old")
    with pytest.raises(RuntimeError), atomic.atomic_folder(str(path)) as partial:
        _fill(partial, b"half")
        raise RuntimeError("the save failed")
    assert {(path / name).read_bytes() for name in FILES} == {b"old"}
    assert os.listdir(tmp_path) == [path.name]
