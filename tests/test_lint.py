"""The code is ruff clean (pyproject.toml's rules), notebooks included, so the suite fails on a
lint error as it does on a type or format error."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    ruff = Path(sys.executable).with_name("ruff")
    command = [str(ruff)] if ruff.exists() else [shutil.which("ruff") or "ruff"]
    if not ruff.exists() and shutil.which("ruff") is None:
        pytest.fail("ruff is not installed (it is in the dev extra)")
    proc = subprocess.run([*command, "check", "--no-cache", "."], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
