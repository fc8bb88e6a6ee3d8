"""The compiled core's C++ sources are clang-format clean (.clang-format at the root)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "moonriver_env" / "moonriver" / "core" / "src").glob("*.[ch]*"))


def _clang_format() -> str:
    """The clang-format of the dev extra (beside this Python), else one on PATH."""
    beside = Path(sys.executable).with_name("clang-format")
    found = str(beside) if beside.exists() else shutil.which("clang-format")
    if found is None:
        pytest.skip("clang-format is not installed (pip install clang-format, in the dev extra)")
    return found


def test_there_are_sources_to_check() -> None:
    assert any(p.suffix == ".cc" for p in SOURCES) and any(p.suffix == ".h" for p in SOURCES)


def test_cpp_sources_are_formatted() -> None:
    result = subprocess.run([_clang_format(), "--dry-run", "--Werror", *map(str, SOURCES)],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
