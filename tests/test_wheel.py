"""The release files: scripts/build_wheels.sh makes an sdist and a manylinux wheel; the wheel,
installed with the eval extra into a fresh virtual environment outside the repository, passes
the smoke test (tests/wheel_smoke.py) without torch or a compiler."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import parse_wheel_filename

ROOT = Path(__file__).resolve().parent.parent
HANG_GUARD = 1800  # seconds: a hang guard for the build and the installs, not a budget


def _wheel_files(out: Path) -> tuple[Path, Path]:
    (sdist,) = out.glob("moonriver_env-*.tar.gz")
    (wheel,) = out.glob("moonriver_env-*.whl")
    return sdist, wheel


def _check_wheel(wheel: Path) -> None:
    """A manylinux wheel holding the compiled core (no C++ source) and requiring the env's
    packages unconditionally."""
    _, version, _, tags = parse_wheel_filename(wheel.name)
    assert tags and all(t.platform.startswith("manylinux_") for t in tags), wheel.name
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        (meta,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(zf.read(meta).decode())
    assert any(n.startswith("moonriver_env/moonriver/core/_core.") and n.endswith(".so")
               for n in names)
    assert "moonriver_env/moonriver/core/_core.pyi" in names
    assert not [n for n in names if n.endswith((".cc", ".h"))]
    requires = [Requirement(r) for r in metadata.get_all("Requires-Dist") or []]
    plain = {r.name for r in requires if r.marker is None or "extra" not in str(r.marker)}
    assert {"numpy", "gymnasium", "pettingzoo"} <= plain
    assert metadata["Version"] == str(version)


@pytest.mark.slow
def test_built_wheel_installs_and_plays_in_a_fresh_environment(tmp_path: Path) -> None:
    """build_wheels.sh -> a fresh venv outside the repository -> the smoke test passes."""
    out = tmp_path / "dist"
    subprocess.run(["bash", str(ROOT / "scripts" / "build_wheels.sh"), str(out)], cwd=ROOT,
                   check=True, timeout=HANG_GUARD, env={**os.environ, "PYTHON": sys.executable})
    _, wheel = _wheel_files(out)
    _check_wheel(wheel)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=HANG_GUARD)
    python = venv / "bin" / "python"
    # Binary wheels only: installing needs no compiler, so the core must be in the wheel.
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--only-binary", ":all:",
                    f"{wheel}[eval]"], cwd=tmp_path, check=True, timeout=HANG_GUARD)
    probe = ("import importlib.util as u; "
             "print([m for m in ('torch', 'PIL', 'starlette') if u.find_spec(m)])")
    extra_modules = subprocess.run([str(python), "-c", probe], cwd=tmp_path, check=True,
                                   capture_output=True, text=True).stdout.strip()
    assert extra_modules == "[]"  # the smoke test runs on the plain install and eval alone

    smoke = tmp_path / "wheel_smoke.py"  # run from outside the repository
    smoke.write_bytes((ROOT / "tests" / "wheel_smoke.py").read_bytes())
    proc = subprocess.run([str(python), str(smoke)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "wheel smoke test: passed" in proc.stdout
