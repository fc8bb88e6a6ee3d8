"""The docs site: `mkdocs build --strict` succeeds and the API pages name every public name."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import HANG_GUARD

for _module in ("mkdocs", "material", "mkdocstrings_handlers.python", "mkdocs_jupyter"):
    pytest.importorskip(_module, reason="the docs site needs the dev extra")

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api"
# The installed package maps these folders to moonriver_env.agents / moonriver_env.training.
MAPPED = {"moonriver_env.agents": ROOT / "agents", "moonriver_env.training": ROOT / "training"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built with --strict (a warning, such as a broken link or anchor, fails it)."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                             "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
                            cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=HANG_GUARD)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out


def _source(module: str) -> Path:
    """The source file of a module of the package."""
    for prefix, folder in MAPPED.items():
        if module == prefix or module.startswith(prefix + "."):
            rest = module[len(prefix) + 1:]
            base = folder.joinpath(*rest.split(".")) if rest else folder
            break
    else:
        base = ROOT.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def public_names(module: str) -> list[str]:
    """``__all__`` when the module has one, else its public top-level functions and classes."""
    tree = ast.parse(_source(module).read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__"
                                                for t in node.targets):
            return list(ast.literal_eval(node.value))
    return [node.name for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_")]


def documented_modules() -> list[tuple[str, str]]:
    """(page stem, module) for each ``::: module`` of the API pages."""
    return [(page.stem, module) for page in sorted(API.glob("*.md"))
            for module in re.findall(r"^::: *([\w.]+)", page.read_text(), re.MULTILINE)]


def test_the_api_pages_cover_the_public_modules() -> None:
    modules = {m for _, m in documented_modules()}
    assert {"moonriver_env.engine", "moonriver_env.moonriver_v0", "moonriver_env.gym_env",
            "moonriver_env.agents", "moonriver_env.training.fast_ppo",
            "moonriver_env.training.evaluate", "moonriver_env.openspiel"} <= modules


@pytest.mark.parametrize(("page", "module"), documented_modules(),
                         ids=[m for _, m in documented_modules()])
def test_every_public_name_is_in_the_api_pages(site: Path, page: str, module: str) -> None:
    html = (site / "api" / page / "index.html").read_text()
    names = public_names(module)
    assert names, f"{module} has no public names"
    missing = [n for n in names if f'id="{module}.{n}"' not in html]
    assert not missing, f"api/{page}.md does not document {module}: {missing}"


def test_home_page_and_notebooks(site: Path) -> None:
    home = (site / "index.html").read_text()
    text = re.sub(r"<[^>]+>", "", home)  # code is highlighted token by token
    assert 'src="render.png"' in home
    assert "pip install" in text and "moonriver_v0.env(num_players=4)" in text
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        page = site / "notebooks" / notebook.stem / "index.html"
        assert page.is_file(), f"notebook {notebook.name} is not rendered"
        assert "jp-Notebook" in page.read_text() or "jupyter" in page.read_text().lower()
    nav = (ROOT / "mkdocs.yml").read_text()
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert f"notebooks/{notebook.name}" in nav, f"{notebook.name} is not in the nav"


def test_every_user_guide_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert re.search(rf":\s*{re.escape(page.name)}\s*$", nav, re.MULTILINE), \
            f"docs/{page.name} is not in the mkdocs.yml nav"
