"""The README is a landing page: what the project is in its first sentence, the set-up
commands CI runs, three short examples that run as written, the main job with what it
reaches, one results table and links that resolve; no paragraph longer than a few lines, and
no figures that depend on the machine running the suite (test counts, suite durations)."""

from __future__ import annotations

import pathlib
import re

import pytest

from moonriver_env.moonriver.rules import PartnerKind, Terrain
from moonriver_env.moonriver.rules.components import PARTNER_LETTERS, TERRAIN_LETTERS

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SETUP = "bash scripts/setup.sh\n.venv/bin/python -m pytest -q\n"
MAIN_JOB = "moonriver-train-fast --config training/configs/fast_4p_base.toml --out runs/fast_4p"
SECTIONS = ["Install", "Three examples", "Train an agent", "What is inside", "Results",
            "Documentation"]
MAX_LINES, MAX_PARAGRAPH_LINES, MAX_PARAGRAPH_WORDS = 150, 5, 90


def _snippet(after: str) -> str:
    """The first ```python block after the line holding ``after``."""
    block = re.search(r"```python\n(.*?)```", README[README.index(after):], re.S)
    assert block is not None, f"no python block after {after}"
    return block.group(1)


def _section(title: str) -> str:
    """The text of the README's ``## title`` section."""
    rest = README[README.index(f"\n## {title}\n"):]
    end = rest.find("\n## ", 1)
    return rest if end < 0 else rest[:end]


def _paragraphs(text: str) -> list[list[str]]:
    """Prose paragraphs (a list item starts its own) outside code, tables and headings."""
    paragraphs: list[list[str]] = []
    current: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        prose = not (fenced or line.startswith(("```", "|", "#", "<!--")) or not line.strip())
        if not prose or line.startswith("- "):
            if current:
                paragraphs.append(current)
            current = []
        if prose:
            current.append(line)
    return paragraphs + ([current] if current else [])


def test_the_first_sentence_says_what_the_project_is() -> None:
    title, _, rest = README.partition("\n\n")
    assert title == "# moonriver-env"
    assert rest.startswith("moonriver-env is a research environment for the board game "
                           "*Moon River*")


def test_the_set_up_commands_come_first_and_are_what_ci_runs() -> None:
    first_block = re.search(r"```bash\n(.*?)```", README, re.S)
    assert first_block is not None and first_block.group(1) == SETUP
    assert README.index(SETUP) < README.index("\n## ")  # before any section
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert "\n".join(ci[-2:]) + "\n" == SETUP


def test_the_readme_is_a_landing_page() -> None:
    assert len(README.splitlines()) <= MAX_LINES
    assert re.findall(r"^## (.+)$", README, re.M) == SECTIONS
    for paragraph in _paragraphs(README):
        text = " ".join(paragraph)
        assert len(paragraph) <= MAX_PARAGRAPH_LINES, f"a long paragraph: {text[:80]}"
        assert len(text.split()) <= MAX_PARAGRAPH_WORDS, f"a long paragraph: {text[:80]}"


def test_three_short_examples() -> None:
    examples = _section("Three examples")
    assert re.findall(r"^\*\*(.+)\*\*$", examples, re.M) == [
        "A game in PettingZoo.", "The Gymnasium wrapper with MaskablePPO.",
        "A batch of games in the core."]
    assert examples.count("```python") == 3
    for code in re.findall(r"```python\n(.*?)```", examples, re.S):
        assert len(code.splitlines()) <= 12


@pytest.mark.parametrize("heading", ["**A game in PettingZoo.**",
                                     "**A batch of games in the core.**"])
def test_the_examples_run(heading: str) -> None:
    exec(compile(_snippet(heading), "README", "exec"), {})


def test_maskable_ppo_snippet_is_short_shows_progress_and_runs(tmp_path, monkeypatch) -> None:
    pytest.importorskip("sb3_contrib")
    torch = pytest.importorskip("torch")
    code = _snippet("**The Gymnasium wrapper with MaskablePPO.**")
    learn = re.search(r"\.learn\(([\d_]+)", code)
    assert learn is not None
    steps = int(learn.group(1).replace("_", ""))
    assert steps <= 4096 and "progress_bar=True" in code and "set_num_threads(1)" in code
    monkeypatch.chdir(tmp_path)
    threads = torch.get_num_threads()
    scope: dict = {}
    try:
        exec(compile(code, "README", "exec"), scope)
    finally:
        torch.set_num_threads(threads)
    assert scope["model"].num_timesteps == steps


def test_the_main_job_is_named_with_figures_from_the_training_page() -> None:
    train = _section("Train an agent")
    assert MAIN_JOB in train and "(docs/training.md)" in train
    guide = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    assert MAIN_JOB.split(" --out")[0] in guide
    figures = re.findall(r"\b0\.\d\d\b", train)
    assert figures, "the main job is named without what it reaches"
    for figure in figures:  # each as the training page states it (to 2 or 3 places)
        assert re.search(rf"\b{re.escape(figure)}\d?\b", guide), figure


def test_one_results_table_kept_by_the_ladder() -> None:
    results = _section("Results")
    # benchmarks/ladder.py --write replaces the text between these markers.
    start, end = "<!-- ladder-summary:start -->", "<!-- ladder-summary:end -->"
    assert README.count(start) == 1 and README.count(end) == 1
    assert results.index(start) < results.index(end)
    assert "python benchmarks/ladder.py" in results and "docs/results.md" in results
    assert len(re.findall(r"^\|---", README, re.M)) == 2  # what-is-inside and the results


def test_every_relative_link_resolves() -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert local
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, missing


def test_readme_states_no_test_count_or_suite_duration() -> None:
    assert not re.search(r"\b\d[\d,]* tests\b", README)
    assert not re.search(r"tests? (run )?in (about )?[\d.]+ (minutes|seconds)", README)


def test_readme_explains_the_text_boards_letters() -> None:
    assert "render_mode=\"ansi\"" in _snippet("**A game in PettingZoo.**")  # prints the table
    for terrain in Terrain:
        assert f"{TERRAIN_LETTERS[terrain]} {terrain.name.lower()}" in README
    for kind in PartnerKind:
        assert f"{PARTNER_LETTERS[kind]} {kind.name.lower().replace('_', ' ')}" in README


def test_readme_names_the_reference_engine() -> None:
    examples = _section("Three examples")
    assert 'backend="python"' in examples and "(docs/core.md)" in examples
