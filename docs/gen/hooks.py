"""MkDocs hooks of the docs site (mkdocs.yml): API sources and notebooks from outside docs/.

- The agents/ and training/ folders install as ``moonriver_env.agents`` and
  ``moonriver_env.training`` (pyproject's package mapping), which griffe cannot follow from
  the source tree: each build links the three folders into one temporary ``moonriver_env``
  tree and points mkdocstrings' Python handler at it. Griffe reads namespace packages only at
  the top level, so a folder of modules without an ``__init__.py`` gets an empty one there.
- The notebooks live in notebooks/, outside docs/ and without outputs: each build copies them
  into a temporary working folder and adds them from there to the site's files (before
  mkdocs-jupyter picks its pages). mkdocs-jupyter runs each one there (``execute: true``, the
  budgets of its first cell, one OpenMP thread), so whatever a notebook writes lands in that
  folder, removed at exit, and nothing in the repository.
- mkdocs-jupyter caches a rendered notebook by the notebook's bytes only: the hooks put its
  cache in a subfolder named by a digest of the package sources (moonriver_env/, agents/,
  training/), so a changed source runs the notebooks again instead of showing old outputs.
- Every console script of pyproject's ``[project.scripts]`` gets a page of its options,
  ``cli/<command>.md``, written at build time from its module's ``build_parser()`` (the
  ``--help`` the command prints), and ``cli/index.md`` lists them: the reference cannot drift
  from the parsers.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import os
import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
MAPPED = {"agents": ROOT / "agents", "training": ROOT / "training"}
SOURCES = (ROOT / "moonriver_env", ROOT / "agents", ROOT / "training")
_TREES: list[str] = []
CLI = "cli"  # the commands' pages, cli/<command>.md
HELP_COLUMNS = "100"  # the width argparse wraps the generated --help to


def _has_namespace_folder(folder: Path) -> bool:
    """Whether ``folder`` or a folder below it holds modules without an ``__init__.py``."""
    return any(not (path.parent / "__init__.py").exists() for path in folder.rglob("*.py"))


def _link_tree(source: Path, target: Path) -> None:
    """Link ``source``'s entries into ``target``; a folder of modules that lacks an
    ``__init__.py`` (a namespace package, which griffe reads only at the top level) gets an
    empty one in the tree, so its modules are documented."""
    target.mkdir()
    for entry in source.iterdir():
        if entry.name == "__pycache__":
            continue
        if entry.is_dir() and _has_namespace_folder(entry):
            _link_tree(entry, target / entry.name)
        else:
            (target / entry.name).symlink_to(entry)
    if any(source.glob("*.py")) and not (source / "__init__.py").exists():
        (target / "__init__.py").write_text("")


def _api_tree() -> str:
    """A temporary folder whose moonriver_env package holds links to the sources."""
    tree = tempfile.mkdtemp(prefix="moonriver-api-")
    _TREES.append(tree)
    package = Path(tree, "moonriver_env")
    package.mkdir()
    for entry in (ROOT / "moonriver_env").iterdir():
        if entry.name in MAPPED or entry.name == "__pycache__":
            continue
        if entry.is_dir() and _has_namespace_folder(entry):
            _link_tree(entry, package / entry.name)
        else:
            (package / entry.name).symlink_to(entry)
    for name, source in MAPPED.items():
        (package / name).symlink_to(source)
    return tree


def _sources_digest() -> str:
    """A digest of the package's files (names and bytes): what the notebooks run besides."""
    digest = hashlib.sha256()
    for folder in SOURCES:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@atexit.register
def _remove_trees() -> None:
    while _TREES:
        shutil.rmtree(_TREES.pop(), ignore_errors=True)


@event_priority(100)  # before mkdocstrings makes its handlers
def on_config(config: Any) -> Any:
    """Point mkdocstrings at a linked source tree; key the notebook cache by the sources."""
    handlers = config.plugins["mkdocstrings"].config.handlers
    handlers.setdefault("python", {})["paths"] = [_api_tree()]
    jupyter = config.plugins["mkdocs-jupyter"].config
    cache = Path(jupyter["cache_dir"])
    cache = cache if cache.is_absolute() else ROOT / cache
    jupyter["cache_dir"] = str(cache / _sources_digest())
    # The kernels that run the notebooks inherit it (as under the test suite's conftest).
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return config


def console_scripts() -> dict[str, str]:
    """pyproject's ``[project.scripts]``: command name -> ``module:function``."""
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return dict(tomllib.load(fh)["project"]["scripts"])


def command_help(name: str, target: str) -> tuple[str, str]:
    """(first line of the description, full ``--help`` text) of console script ``name``."""
    module = importlib.import_module(target.partition(":")[0])
    build_parser = getattr(module, "build_parser", None)
    if build_parser is None:
        raise RuntimeError(f"{module.__name__} has no build_parser(): the docs of console "
                           f"script {name} are generated from it")
    parser = build_parser()
    parser.prog = name  # the name a user types, whatever the parser was given
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS  # argparse wraps to the terminal's width otherwise
    try:
        text = parser.format_help()
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    summary = ((parser.description or "").strip().splitlines() or [""])[0].replace("``", "`")
    summary = summary.removeprefix(f"`{name}`: ")  # the page's title names it already
    return summary[:1].upper() + summary[1:], text


def _cli_pages(work: str) -> list[str]:
    """Write cli/index.md and cli/<command>.md under ``work``; their paths in the site."""
    Path(work, CLI).mkdir()
    rows, pages = [], []
    for name, target in sorted(console_scripts().items()):
        summary, text = command_help(name, target)
        module = target.partition(":")[0]
        Path(work, CLI, f"{name}.md").write_text(
            f"# `{name}`\n\n{summary}\n\nGenerated from `{module}.build_parser()` when the "
            f"site is built: the text `{name} --help` prints.\n\n```text\n{text}```\n")
        rows.append(f"| [`{name}`]({name}.md) | {summary} |")
        pages.append(f"{CLI}/{name}.md")
    Path(work, CLI, "index.md").write_text(
        "# Commands\n\nThe console scripts the package installs (pyproject's "
        "`[project.scripts]`), each page generated from the command's own parser when the "
        "site is built.\n\n| command | what it does |\n|---|---|\n" + "\n".join(rows) + "\n")
    return [f"{CLI}/index.md", *pages]


def _notebooks(work: str) -> list[str]:
    """Copy notebooks/*.ipynb under ``work``; their paths in the site."""
    Path(work, "notebooks").mkdir()
    copied = []
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        shutil.copyfile(notebook, Path(work, "notebooks", notebook.name))
        copied.append(f"notebooks/{notebook.name}")
    return copied


@event_priority(100)  # before mkdocs-jupyter turns .ipynb files into pages
def on_files(files: Files, config: Any) -> Files:
    """Add notebooks/<name>.ipynb (from a temporary copy) and the commands' pages."""
    work = tempfile.mkdtemp(prefix="moonriver-docs-")
    _TREES.append(work)
    for src_uri in _notebooks(work) + _cli_pages(work):
        files.append(File(src_uri, src_dir=work, dest_dir=config["site_dir"],
                          use_directory_urls=config["use_directory_urls"]))
    return files


def on_shutdown() -> None:
    """Remove the linked source trees and the notebooks' working folders."""
    _remove_trees()
