"""Type-check the installed package with mypy: ``moonriver_env`` with ``moonriver_env.agents`` and
``moonriver_env.training`` (the agents/ and training/ folders, mapped into the package at
install) and the compiled core's stubs (``_core.pyi``, ``_vector.pyi``, written by nanobind at
build next to the extension).

mypy does not follow an editable install's import hook, so this lays the package out as it is
installed, under ``build/typecheck/`` (links to the sources, nothing copied), and runs mypy there
with the ``[tool.mypy]`` settings of pyproject.toml. Exit status: mypy's (0 when clean).

    python scripts/typecheck.py               # the package
    python scripts/typecheck.py --stubtest    # and the stubs against the built extension
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "typecheck"
PACKAGE = "moonriver_env"
MAPPED = {"agents": ROOT / "agents", "training": ROOT / "training"}
STUBS = ("_core.pyi", "_vector.pyi")


def _stub_dir() -> Path:
    """The folder of the built extension, where nanobind wrote its stubs."""
    spec = importlib.util.find_spec(f"{PACKAGE}.core._core")
    if spec is None or spec.origin is None:
        raise SystemExit("typecheck: moonriver_env.core._core is not built; run "
                         "`pip install --no-build-isolation -e .` first")
    folder = Path(spec.origin).parent
    missing = [name for name in STUBS if not (folder / name).is_file()]
    if missing:
        raise SystemExit(f"typecheck: the extension's stubs {missing} are missing from {folder} "
                         "(nanobind_add_stub writes them at build); rebuild the package")
    return folder


def _link(target: Path, link: Path) -> None:
    """A symbolic link ``link`` -> ``target``."""
    link.symlink_to(target, target_is_directory=target.is_dir())


def build_tree(tree: Path = TREE) -> Path:
    """Lay the installed package out under ``tree`` (links); return the package's folder."""
    stubs = _stub_dir()
    if tree.exists():
        shutil.rmtree(tree)
    package = tree / PACKAGE
    package.mkdir(parents=True)
    for entry in sorted((ROOT / PACKAGE).iterdir()):
        if entry.name not in ("core", "__pycache__"):
            _link(entry, package / entry.name)
    for name, folder in MAPPED.items():
        _link(folder, package / name)
    core = package / "core"
    core.mkdir()
    for entry in sorted((ROOT / PACKAGE / "core").iterdir()):
        if entry.suffix == ".py" and entry.name != "_build_backend.py":  # not installed
            _link(entry, core / entry.name)
    for name in STUBS:
        _link(stubs / name, core / name)
    return package


def main(argv: list[str] | None = None) -> int:
    """Run mypy (and stubtest with ``--stubtest``) over the laid-out package."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stubtest", action="store_true",
                        help="also check the extension's stubs against the built modules")
    parser.add_argument("mypy_args", nargs="*", help="extra arguments for mypy")
    args = parser.parse_args(argv)
    from mypy import api

    build_tree()
    os.chdir(TREE)
    config = str(ROOT / "pyproject.toml")
    out, err, status = api.run(["--config-file", config, "--cache-dir",
                                str(ROOT / "build" / "mypy_cache"), "-p", PACKAGE,
                                *args.mypy_args])
    sys.stdout.write(out)
    sys.stderr.write(err)
    if args.stubtest and status == 0:
        from mypy.stubtest import parse_options, test_stubs

        modules = [f"{PACKAGE}.core.{name.removesuffix('.pyi')}" for name in STUBS]
        status = test_stubs(parse_options(["--mypy-config-file", config, *modules]))
    return status


if __name__ == "__main__":
    sys.exit(main())
