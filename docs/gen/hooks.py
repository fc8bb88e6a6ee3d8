"""MkDocs hooks of the docs site (mkdocs.yml): API sources and notebooks from outside docs/.

- The agents/ and training/ folders install as ``moonriver_env.agents`` and
  ``moonriver_env.training`` (pyproject's package mapping), which griffe cannot follow from
  the source tree: each build links the three folders into one temporary ``moonriver_env``
  tree and points mkdocstrings' Python handler at it.
- The notebooks live in notebooks/, outside docs/ and without outputs: each build copies them
  into a temporary working folder and adds them from there to the site's files (before
  mkdocs-jupyter picks its pages). mkdocs-jupyter runs each one there (``execute: true``, the
  budgets of its first cell, one OpenMP thread), so whatever a notebook writes lands in that
  folder, removed at exit, and nothing in the repository.
- mkdocs-jupyter caches a rendered notebook by the notebook's bytes only: the hooks put its
  cache in a subfolder named by a digest of the package sources (moonriver_env/, agents/,
  training/), so a changed source runs the notebooks again instead of showing old outputs.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
MAPPED = {"agents": ROOT / "agents", "training": ROOT / "training"}
SOURCES = (ROOT / "moonriver_env", ROOT / "agents", ROOT / "training")
_TREES: list[str] = []


def _api_tree() -> str:
    """A temporary folder whose moonriver_env package holds links to the sources."""
    tree = tempfile.mkdtemp(prefix="moonriver-api-")
    _TREES.append(tree)
    package = Path(tree, "moonriver_env")
    package.mkdir()
    for entry in (ROOT / "moonriver_env").iterdir():
        if entry.name not in MAPPED and entry.name != "__pycache__":
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


@event_priority(100)  # before mkdocs-jupyter turns .ipynb files into pages
def on_files(files: Files, config: Any) -> Files:
    """Add notebooks/*.ipynb as notebooks/<name>.ipynb of the site, from a temporary copy."""
    work = tempfile.mkdtemp(prefix="moonriver-notebooks-")
    _TREES.append(work)
    Path(work, "notebooks").mkdir()
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        shutil.copyfile(notebook, Path(work, "notebooks", notebook.name))
        files.append(File(f"notebooks/{notebook.name}", src_dir=work,
                          dest_dir=config["site_dir"],
                          use_directory_urls=config["use_directory_urls"]))
    return files


def on_shutdown() -> None:
    """Remove the linked source trees and the notebooks' working folders."""
    _remove_trees()
