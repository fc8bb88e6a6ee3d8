"""The README's tour: its snippets run as written, quickly, and it states no figures that
depend on the machine running the suite (test counts, suite durations)."""

from __future__ import annotations

import pathlib
import re

import pytest

from moonriver_env.engine import PartnerKind, Terrain
from moonriver_env.engine.components import PARTNER_LETTERS, TERRAIN_LETTERS

README = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def _snippet(after: str) -> str:
    """The first ```python block after the line holding ``after``."""
    rest = README[README.index(after):]
    return re.search(r"```python\n(.*?)```", rest, re.S).group(1)


def test_engine_tour_runs() -> None:
    exec(compile(_snippet("**Play a random game through the engine.**"), "README", "exec"), {})


def test_maskable_ppo_snippet_is_short_shows_progress_and_runs(tmp_path, monkeypatch) -> None:
    pytest.importorskip("sb3_contrib")
    torch = pytest.importorskip("torch")
    code = _snippet("**The Gymnasium wrapper with MaskablePPO.**")
    steps = int(re.search(r"\.learn\(([\d_]+)", code).group(1).replace("_", ""))
    assert steps <= 4096 and "progress_bar=True" in code and "set_num_threads(1)" in code
    monkeypatch.chdir(tmp_path)
    threads = torch.get_num_threads()
    scope: dict = {}
    try:
        exec(compile(code, "README", "exec"), scope)
    finally:
        torch.set_num_threads(threads)
    assert scope["model"].num_timesteps == steps


def test_readme_states_no_test_count_or_suite_duration() -> None:
    assert not re.search(r"\b\d[\d,]* tests\b", README)
    assert not re.search(r"tests? (run )?in (about )?[\d.]+ (minutes|seconds)", README)


def test_readme_explains_the_text_boards_letters() -> None:
    for terrain in Terrain:
        assert f"{TERRAIN_LETTERS[terrain]} {terrain.name.lower()}" in README
    for kind in PartnerKind:
        assert f"{PARTNER_LETTERS[kind]} {kind.name.lower().replace('_', ' ')}" in README


def test_engine_tour_uses_the_default_backend_and_names_the_reference_engine() -> None:
    code = _snippet("**Play a random game through the engine.**")
    assert "make_game(" in code and "Game(" not in code.replace("make_game(", "")
    tour = README[README.index("**Play a random game through the engine.**"):
                  README.index("**The PettingZoo environment.**")]
    assert 'backend="python"' in tour and "(docs/core.md)" in tour
