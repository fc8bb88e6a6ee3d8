"""Package hygiene: the distribution installs only the project's own import names, a plain
install is the environment, each optional part names its extra, one version, a changelog."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from moonriver_env.common.cli import EXTRA_OF_MODULE, describe

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
    """A built wheel has one top-level package, with agents and training inside it (the Python
    files only: tests/test_wheel.py builds the compiled core too)."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-C", "wheel.cmake=false", "-w", str(tmp_path), str(ROOT)], check=True)
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


def _run(code: str, cwd: Path) -> list[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout.split()


def test_package_path_holds_only_the_package(tmp_path: Path) -> None:
    """An editable install's __path__ lists no repository root: its tests/ and a second copy of
    the package do not import as moonriver_env.tests or moonriver_env.moonriver_env, nor are
    its files package resources."""
    code = ("import importlib.util as u, importlib.resources as r, os, moonriver_env as m, "
            "moonriver_env.agents.greedy, moonriver_env.training.evaluate; "
            "names = {f.name for f in r.files('moonriver_env').iterdir()}; "
            "print(u.find_spec('moonriver_env.tests') is None, "
            "u.find_spec('moonriver_env.moonriver_env') is None, "
            "all(os.path.basename(p) == 'moonriver_env' for p in m.__path__), "
            "m.__path__ == m.__spec__.submodule_search_locations, "
            "{'moonriver', 'py.typed'} <= names, not {'tests', 'pyproject.toml'} & names)")
    assert _run(code, tmp_path) == ["True"] * 6


def test_version_comes_from_the_package_metadata(tmp_path: Path) -> None:
    """__version__ is the installed distribution's version (pyproject.toml's), not a copy."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    code = ("import importlib.metadata as md; real = md.version('moonriver-env'); "
            "md.version = lambda name: '9.8.7' if name == 'moonriver-env' else real; "
            "import moonriver_env; print(real, moonriver_env.__version__)")
    assert _run(code, tmp_path) == [project["version"], "9.8.7"]
    code = ("import importlib.metadata as md\n"
            "def missing(name): raise md.PackageNotFoundError(name)\n"
            "md.version = missing\n"
            "import moonriver_env; print(moonriver_env.__version__)")
    assert _run(code, tmp_path) == ["0+unknown"]  # a source tree on sys.path, not installed


def test_changelog_opens_with_this_version() -> None:
    """CHANGELOG.md (Keep a Changelog) has an entry for the package's version, first."""
    import moonriver_env

    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[([^\]]+)\]", text, flags=re.MULTILINE)
    assert releases and releases[0] == moonriver_env.__version__
    assert "keepachangelog.com" in text
    assert re.search(r"^### (Added|Changed|Fixed|Removed)$", text, flags=re.MULTILINE)


def _extras() -> dict[str, list[Requirement]]:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {name: [Requirement(r) for r in reqs]
            for name, reqs in project["optional-dependencies"].items()}


def _closure(extra: str, extras: dict[str, list[Requirement]]) -> set[str]:
    """The distributions that installing ``extra`` brings (self-references followed)."""
    names: set[str] = set()
    for req in extras[extra]:
        if canonicalize_name(req.name) == "moonriver-env":
            for inner in req.extras:
                names |= _closure(inner, extras)
        else:
            names.add(canonicalize_name(req.name))
    return names


def test_plain_install_is_the_environment() -> None:
    """numpy, gymnasium and pettingzoo are dependencies; no extra is needed for the envs."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    deps = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}
    assert {"numpy", "gymnasium", "pettingzoo"} <= deps
    assert not {"gymnasium", "pettingzoo", "numpy"} & set(EXTRA_OF_MODULE)
    assert "env" not in _extras()


def test_each_missing_module_names_an_extra_that_installs_it() -> None:
    """EXTRA_OF_MODULE names, for each optional module, an extra whose install brings it."""
    extras = _extras()
    owners = importlib.metadata.packages_distributions()
    assert {"PIL", "resvg_py", "starlette", "ray", "pyspiel", "torch"} <= set(EXTRA_OF_MODULE)
    for module, extra in EXTRA_OF_MODULE.items():
        assert extra in extras, (module, extra)
        dists = {canonicalize_name(d) for d in owners.get(module, [])}
        assert dists, f"{module} is not installed here (the dev extra installs every extra)"
        assert dists & _closure(extra, extras), (module, extra, dists)
    assert _closure("dev", extras) >= set().union(*(_closure(e, extras) for e in extras))


@pytest.mark.parametrize("module, extra", [("PIL", "images"), ("resvg_py", "images"),
                                           ("starlette", "play"), ("ray", "rllib"),
                                           ("pyspiel", "openspiel"), ("torch", "train")])
def test_a_missing_module_is_one_line_naming_its_extra(module: str, extra: str) -> None:
    """A CLI that meets a missing optional module says, in one line, which extra to install."""
    message, status = describe(ModuleNotFoundError(f"No module named {module!r}", name=module))
    assert status == 2 and "\n" not in message
    assert f'pip install "moonriver-env[{extra}]"' in message


def test_cibuildwheel_builds_cpython_311_to_313_everywhere() -> None:
    """[tool.cibuildwheel] selects CPython 3.11-3.13 for Linux (x86_64, aarch64), macOS and
    Windows, and its smoke test exists."""
    expected = {"linux": {"manylinux_x86_64", "manylinux_aarch64"},
                "macos": {"macosx_x86_64", "macosx_arm64"}, "windows": {"win_amd64"}}
    tool = Path(sys.executable).with_name("cibuildwheel")
    for platform, archs in expected.items():
        out = subprocess.run([str(tool), "--print-build-identifiers", "--platform", platform],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
        assert set(out) == {f"cp3{minor}-{arch}" for minor in (11, 12, 13) for arch in archs}
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    command = config["tool"]["cibuildwheel"]["test-command"]
    assert (ROOT / command.split("{project}/")[1]).is_file()
