"""The docs site: `mkdocs build --strict` succeeds; it is laid out as tutorials, how-to guides,
reference and explanation; the API pages name every public name, every console script has a
page of its options generated from its parser, the agent specs page lists every spec, the
how-to examples run, the training guide stays a guide, and the notebook pages show the
outputs of a build-time run."""

from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]  # PyYAML ships no stubs; mkdocs brings it

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
    assert {"moonriver_env.moonriver.rules", "moonriver_env.moonriver.aec_env",
            "moonriver_env.moonriver.gym_env",
            "moonriver_env.agents", "moonriver_env.training.fast.train",
            "moonriver_env.training.evaluate", "moonriver_env.moonriver.openspiel",
            "moonriver_env.moonriver.batch.games", "moonriver_env.moonriver.backend",
            "moonriver_env.moonriver.core"} <= modules
    # The AZ agents and trainer, the pipeline, Circles' Gymnasium env, every batch module and
    # both contracts.
    assert {"moonriver_env.agents.az", "moonriver_env.training.az.train",
            "moonriver_env.training.az.network", "moonriver_env.training.pipeline",
            "moonriver_env.training.fast.config", "moonriver_env.training.variants",
            "moonriver_env.circles", "moonriver_env.circles.aec_env",
            "moonriver_env.circles.gym_env", "moonriver_env.moonriver.batch.multiagent",
            "moonriver_env.moonriver.batch.async_env", "moonriver_env.moonriver.search",
            "moonriver_env.common.contract", "moonriver_env.moonriver.contract"} <= modules
    assert len(modules) == len(documented_modules()), "a module is documented twice"


NAV: list[dict[str, Any]] = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]


def _nav_pages(entry: Any) -> list[str]:
    """Every page under a nav entry, its subsections' included."""
    if isinstance(entry, str):
        return [entry]
    items = entry.values() if isinstance(entry, dict) else entry
    return [page for item in items for page in _nav_pages(item)]


def _nav_section(title: str) -> list[str]:
    """The pages of the top-level nav section ``title``."""
    return next(_nav_pages(entry[title]) for entry in NAV if title in entry)


def test_the_nav_follows_diataxis() -> None:
    assert [next(iter(entry)) for entry in NAV] == [
        "Home", "Tutorials", "How-to guides", "Reference", "Explanation"]
    assert sorted(_nav_section("Tutorials")) == sorted(
        f"notebooks/{nb.name}" for nb in (ROOT / "notebooks").glob("*.ipynb"))
    for page in ("training.md", "guide.md", "play.md", "vector.md", "frameworks.md",
                 "rllib.md", "add-a-game.md"):
        assert page in _nav_section("How-to guides"), page
    for page in ("agents.md", "cli/index.md", "actions.md", "observation.md",
                 "game-record.md", "api/index.md"):
        assert page in _nav_section("Reference"), page
    for page in ("rules.md", "design.md", "core.md", "results.md", "research-log.md"):
        assert page in _nav_section("Explanation"), page


def console_scripts() -> dict[str, str]:
    """pyproject's [project.scripts]: command -> module:function."""
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["project"]["scripts"]


@pytest.mark.parametrize("name", sorted(console_scripts()))
def test_every_console_script_has_a_page_of_its_options(site: Path, name: str) -> None:
    assert f"cli/{name}.md" in _nav_section("Reference"), f"cli/{name}.md is not in the nav"
    module = importlib.import_module(console_scripts()[name].partition(":")[0])
    parser = module.build_parser()
    page = (site / "cli" / name / "index.html").read_text()
    options = set(re.findall(r"(?<![\w-])--[a-z][\w-]*", parser.format_help()))
    assert options, f"{name} has no options"
    missing = sorted(o for o in options if o not in page)
    assert not missing, f"cli/{name}: options missing from the page: {missing}"
    assert f"usage: {name} " in page
    assert f'href="{name}/"' in (site / "cli" / "index.html").read_text()


def _spec_rows(section: str) -> dict[str, list[str]]:
    """spec -> the other cells of its row, in a section of docs/agents.md."""
    text = (ROOT / "docs" / "agents.md").read_text()
    text = text[text.index(f"## {section}"):]
    text = text[:text.find("\n## ", 1)] if "\n## " in text[1:] else text
    return {row[0].strip().strip("`"): [c.strip() for c in row[1:]]
            for row in (line.strip("|").split("|") for line in text.splitlines()
                        if line.startswith("| `"))}


def test_the_agent_specs_page_lists_every_spec() -> None:
    from moonriver_env.agents.registry import CIRCLES_SPECS, REQUEST_SPECS, SPECS

    rows = _spec_rows("Moon River")
    assert sorted(rows) == sorted(SPECS)
    for spec, cells in rows.items():  # the last column: may a play-server request name it
        assert cells[-1] == ("yes" if spec in REQUEST_SPECS else "no"), spec
    assert sorted(_spec_rows("Circles: Far West")) == sorted(CIRCLES_SPECS)


HOW_TO_EXAMPLES = {"agents.md": (), "frameworks.md": ("sb3_contrib", "pyspiel")}


@pytest.mark.parametrize("page", sorted(HOW_TO_EXAMPLES))
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_how_to_examples_run(page: str, tmp_path: Path, monkeypatch) -> None:
    for module in HOW_TO_EXAMPLES[page]:
        pytest.importorskip(module)
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / page).read_text(), re.DOTALL)
    assert blocks
    try:
        for i, block in enumerate(blocks):
            exec(compile(block, f"docs/{page} example {i + 1}", "exec"), {})
    finally:
        torch.set_num_threads(threads)


def test_the_training_guide_is_a_guide_and_the_log_holds_the_history() -> None:
    training = (ROOT / "docs" / "training.md").read_text()
    assert len(training.splitlines()) <= 400
    assert len(re.findall(r"\b20\d\d-\d\d-\d\d\b", training)) <= 6  # dates of measurements
    assert "moonriver-train-pipeline training/pipelines/pretrained.toml" in training
    assert "moonriver-train-fast --config training/configs/fast_4p_base.toml" in training
    assert "research-log.md" in training
    results = (ROOT / "docs" / "results.md").read_text()
    assert len(results.splitlines()) <= 300
    assert results.count("<!-- ladder:start -->") == 1 == results.count("<!-- ladder:end -->")
    log = (ROOT / "docs" / "research-log.md").read_text()
    for section in ("A soup of two runs", "Taught by its own search", "Without the greedy prior"):
        assert f"### {section}" in log and f"### {section}" not in training


def test_every_api_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in sorted(API.glob("*.md")):
        assert f"api/{page.name}" in nav, f"docs/api/{page.name} is not in the mkdocs.yml nav"


EXAMPLES = sorted(page for page in API.glob("*.md") if "```python" in page.read_text())


def test_the_batched_backend_and_core_pages_have_examples() -> None:
    assert {"vector.md", "backend.md", "core.md"} <= {page.name for page in EXAMPLES}


@pytest.mark.parametrize("page", EXAMPLES, ids=[page.stem for page in EXAMPLES])
def test_the_api_pages_examples_run(page: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), re.DOTALL)
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/api/{page.name} example {i + 1}", "exec"), {})


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
    assert "pure-Python rules engine" not in text  # the rules run in the compiled core
    assert "compiled C++17 core" in text and "reference engine" in text
    for link in ("vector", "api/vector", "api/backend", "api/core", "training", "agents",
                 "cli", "frameworks", "research-log"):
        assert f'href="{link}/"' in home, f"the home page does not link {link}"
    # The batched search, network seats, the async and multi-agent batches, TorchRL and the
    # search recipe's trainer.
    for anchor in ("core/#batched-search-with-network-valued-leaves", "vector/#network-seats",
                   "vector/#async-stepping-envpool-style",
                   "vector/#self-play-the-multi-agent-batched-interface"):
        assert f'href="{anchor}"' in home, f"the home page does not link {anchor}"
    assert "TorchRL" in text and "moonriver-train-az" in text
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        page = site / "notebooks" / notebook.stem / "index.html"
        assert page.is_file(), f"notebook {notebook.name} is not rendered"
        assert "jp-Notebook" in page.read_text() or "jupyter" in page.read_text().lower()
    nav = (ROOT / "mkdocs.yml").read_text()
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert f"notebooks/{notebook.name}" in nav, f"{notebook.name} is not in the nav"


# Text each notebook prints when it runs (with the budgets of its first cell).
PRINTED = {"01_quickstart": "decisions; final scores:", "02_train_maskable_ppo": "trained",
           "04_rules_explorer": "boards", "06_openspiel": "python_moonriver("}
# The title each result plot prints at the budgets of its notebook's first cell.
SMOKE = {"02_train_maskable_ppo": "smoke-test budget: 4 games per point, not a result",
         "03_benchmark_policies": "smoke-test budget: 6 games, not a result"}
IMAGE = re.compile(r'<img [^>]*src="data:image/png;base64,')


def _outputs(page: Path) -> tuple[int, str, int]:
    """(output areas, their text, embedded PNG images) of a rendered notebook page."""
    html = page.read_text()
    areas = re.findall(r'<div class="[^"]*\bjp-OutputArea-output\b[^"]*"', html)
    text = " ".join(re.sub(r"<[^>]+>", "", t) for t in
                    re.findall(r'<div class="jp-RenderedText jp-OutputArea-output".*?</pre>',
                               html, re.DOTALL))
    return len(areas), text, len(IMAGE.findall(html))


def test_notebook_pages_show_outputs_of_a_build_time_run(site: Path) -> None:
    # The notebooks are committed without outputs: outputs on their pages come from the build.
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        areas, text, _ = _outputs(site / "notebooks" / notebook.stem / "index.html")
        assert areas, f"{notebook.name} renders without outputs"
        if notebook.stem in PRINTED:
            assert PRINTED[notebook.stem] in text, f"{notebook.name} lacks its printed output"
        if notebook.stem in SMOKE:
            assert SMOKE[notebook.stem] in text, f"{notebook.name}: its plot reads as a result"
    for stem in ("01_quickstart", "04_rules_explorer"):  # they draw the table
        assert _outputs(site / "notebooks" / stem / "index.html")[2] >= 1, f"{stem}: no image"


def test_the_build_runs_the_notebooks_from_a_temporary_copy(tmp_path: Path) -> None:
    # mkdocs-jupyter runs a notebook in its source's folder: a copy outside the repository
    # keeps whatever a notebook writes (files, runs/) out of notebooks/.
    import importlib.util

    from mkdocs.structure.files import Files

    spec = importlib.util.spec_from_file_location("site_hooks", ROOT / "docs" / "gen" / "hooks.py")
    assert spec and spec.loader
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    files = hooks.on_files(Files([]), {"site_dir": str(tmp_path), "use_directory_urls": True})
    sources = {Path(f.src_uri).name: Path(f.abs_src_path) for f in files
               if f.src_uri.startswith("notebooks/")}
    pages = sorted(f.src_uri for f in files if f.src_uri.startswith("cli/"))
    assert pages == sorted(["cli/index.md"] + [f"cli/{name}.md" for name in console_scripts()])
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert sorted(sources) == [n.name for n in notebooks]
    for notebook in notebooks:
        copy = sources[notebook.name]
        assert ROOT not in copy.parents and copy.read_bytes() == notebook.read_bytes()
    hooks.on_shutdown()
    assert not any(copy.exists() for copy in sources.values())


def test_every_user_guide_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert re.search(rf":\s*{re.escape(page.name)}\s*$", nav, re.MULTILINE), \
            f"docs/{page.name} is not in the mkdocs.yml nav"
