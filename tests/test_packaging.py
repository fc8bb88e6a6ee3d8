"""Package hygiene: the distribution installs only the project's own import names."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_generic_names_are_not_installed(tmp_path: Path) -> None:
    """Outside the repository, `agents` and `training` are not importable from this project."""
    code = ("import importlib.util as u; import moonriver_env.agents as a, "
            "moonriver_env.training.evaluate as e; "
            "print(u.find_spec('agents') is None, u.find_spec('training') is None, "
            "a.PolicyAgent.__name__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["True", "True", "PolicyAgent"]


def test_wheel_holds_only_moonriver_env(tmp_path: Path) -> None:
    """A built wheel has one top-level package, with agents and training inside it."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path), str(ROOT)], check=True)
    (wheel,) = tmp_path.glob("moonriver_env-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"moonriver_env"}
    assert "moonriver_env/agents/greedy.py" in names
    assert "moonriver_env/training/configs/ppo_4p_base.toml" in names
    assert any(n.endswith("licenses/LICENSE") for n in names)


def test_requires_python_covers_the_standard_library_it_uses() -> None:
    """tomllib (3.11+) is imported without a fallback: requires-python and ruff say 3.11."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    sources = [p for folder in ("moonriver_env", "agents", "training", "benchmarks")
               for p in (ROOT / folder).rglob("*.py")]
    assert any("import tomllib" in p.read_text(encoding="utf-8") for p in sources)
    assert project["project"]["requires-python"] == ">=3.11"
    assert project["tool"]["ruff"]["target-version"] == "py311"
