"""Type-check the installed package with mypy: ``moonriver_env`` with ``moonriver_env.agents`` and
``moonriver_env.training`` (the agents/ and training/ folders, mapped into the package at
install) and the compiled core's stubs (``_core.pyi``, written by nanobind at build next to the
extension).

mypy does not follow an editable install's import hook, so this lays the package out as it is
installed, under ``build/typecheck/`` (links to the sources, nothing copied), and runs mypy there
with the ``[tool.mypy]`` settings of pyproject.toml; the stubs are what mypy reads for the
extension, so a call that does not match them is an error. Exit status: mypy's (0 when clean).

    python scripts/typecheck.py                    # the package
    python scripts/typecheck.py --files mine.py    # files that import it
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
CORE = ("moonriver", "core")  # the compiled core's package, inside PACKAGE
CORE_STUB = "_core.pyi"  # the extension's stubs (and those of any other module built beside it)


def _stubs() -> list[Path]:
    """The stubs nanobind wrote beside the built extension (``_core.pyi`` among them)."""
    spec = importlib.util.find_spec(".".join((PACKAGE, *CORE, "_core")))
    if spec is None or spec.origin is None:
        raise SystemExit("typecheck: moonriver_env.moonriver.core._core is not built; run "
                         "`pip install --no-build-isolation -e .` first")
    folder = Path(spec.origin).parent
    if not (folder / CORE_STUB).is_file():
        raise SystemExit(f"typecheck: the extension's stub {CORE_STUB} is missing from {folder} "
                         "(nanobind_add_stub writes it at build); rebuild the package")
    return sorted(folder.glob("*.pyi"))


def _link(target: Path, link: Path) -> None:
    """A symbolic link ``link`` -> ``target``."""
    link.symlink_to(target, target_is_directory=target.is_dir())


def build_tree(tree: Path = TREE) -> Path:
    """Lay the installed package out under ``tree`` (links); return the package's folder."""
    stubs = _stubs()
    if tree.exists():
        shutil.rmtree(tree)
    package = tree / PACKAGE
    package.mkdir(parents=True)
    for name, folder in MAPPED.items():
        _link(folder, package / name)
    source, laid = ROOT / PACKAGE, package
    for step in CORE:  # folders on the way to the core: their other entries linked whole
        for entry in sorted(source.iterdir()):
            if entry.name not in (step, "__pycache__"):
                _link(entry, laid / entry.name)
        source, laid = source / step, laid / step
        laid.mkdir()
    for entry in sorted(source.iterdir()):
        if entry.suffix == ".py" and entry.name != "_build_backend.py":  # not installed
            _link(entry, laid / entry.name)
    for stub in stubs:
        _link(stub, laid / stub.name)
    return package


def main(argv: list[str] | None = None) -> int:
    """Run mypy over the laid-out package (or over ``--files``, which import it)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", nargs="+", type=Path, default=None,
                        help="check these files (importing the package) instead of the package")
    args = parser.parse_args(argv)
    from mypy import api

    build_tree()
    targets = ["-p", PACKAGE] if args.files is None else [str(f.resolve()) for f in args.files]
    cwd = os.getcwd()
    os.chdir(TREE)  # mypy finds the laid-out package from here
    try:
        out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"),
                                    "--cache-dir", str(ROOT / "build" / "mypy_cache"),
                                    *targets])
    finally:
        os.chdir(cwd)
    sys.stdout.write(out)
    sys.stderr.write(err)
    return status


if __name__ == "__main__":
    sys.exit(main())
