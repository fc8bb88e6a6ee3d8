"""MkDocs hooks of the docs site (mkdocs.yml): API sources and notebooks from outside docs/.

- The agents/ and training/ folders install as ``moonriver_env.agents`` and
  ``moonriver_env.training`` (pyproject's package mapping), which griffe cannot follow from
  the source tree: each build links the three folders into one temporary ``moonriver_env``
  tree and points mkdocstrings' Python handler at it.
- The notebooks live in notebooks/, outside docs/: each build adds them to the site's files
  (before mkdocs-jupyter picks its pages), so they render with their stored outputs.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
MAPPED = {"agents": ROOT / "agents", "training": ROOT / "training"}
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


@atexit.register
def _remove_trees() -> None:
    while _TREES:
        shutil.rmtree(_TREES.pop(), ignore_errors=True)


@event_priority(100)  # before mkdocstrings makes its handlers
def on_config(config: Any) -> Any:
    """Point mkdocstrings' Python handler at a fresh linked source tree."""
    handlers = config.plugins["mkdocstrings"].config.handlers
    handlers.setdefault("python", {})["paths"] = [_api_tree()]
    return config


@event_priority(100)  # before mkdocs-jupyter turns .ipynb files into pages
def on_files(files: Files, config: Any) -> Files:
    """Add notebooks/*.ipynb as notebooks/<name>.ipynb of the site."""
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        files.append(File(f"notebooks/{notebook.name}", src_dir=str(ROOT),
                          dest_dir=config["site_dir"],
                          use_directory_urls=config["use_directory_urls"]))
    return files


def on_shutdown() -> None:
    """Remove the linked source trees."""
    _remove_trees()
