"""Notebooks are committed without outputs and with a parameters cell (nbmake runs them)."""

from __future__ import annotations

import json
import pathlib
import re

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_the_notebooks_exist() -> None:
    assert [p.stem for p in NOTEBOOKS] == ["01_quickstart", "02_train_maskable_ppo",
                                           "03_benchmark_policies", "04_rules_explorer",
                                           "05_circles_far_west", "06_openspiel"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_outputs_stripped_and_parameters_first(path: pathlib.Path) -> None:
    cells = json.loads(path.read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert all(not c["outputs"] and c["execution_count"] is None for c in code)
    assert "parameters" in code[0]["metadata"].get("tags", [])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_write_no_run_folder_beside_themselves(path: pathlib.Path) -> None:
    # nbmake runs each notebook in notebooks/: a relative "runs/..." there would leave a run
    # behind after every test session. Paths in comments (suggestions to a reader) are fine.
    cells = json.loads(path.read_text())["cells"]
    code = "\n".join(line.split("#", 1)[0] for c in cells if c["cell_type"] == "code"
                     for line in "".join(c["source"]).splitlines())
    assert not re.search(r"""["']runs/""", code)


def test_notebook_cells_get_a_hang_guard_not_a_budget() -> None:
    # nbmake stops a cell after 300 s by default; a slow machine runs the notebooks' capped
    # work (timesteps, games, simulations) more slowly, so the guard is the suite's HANG_GUARD.
    import tomllib

    from tests.helpers import HANG_GUARD

    root = pathlib.Path(__file__).resolve().parents[1]
    pytest_ini = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["pytest"]
    found = re.search(r"--nbmake-timeout=(\d+)", pytest_ini["ini_options"]["addopts"])
    assert found and int(found.group(1)) >= HANG_GUARD


# Notebooks that plot results (win rates); at the suite's budgets these are smoke tests.
RESULT_PLOTS = {"02_train_maskable_ppo": "EVAL_GAMES", "03_benchmark_policies": "GAMES"}


@pytest.mark.parametrize("stem", sorted(RESULT_PLOTS))
def test_result_plots_at_small_budgets_say_so_and_show_intervals(stem: str) -> None:
    cells = json.loads((NOTEBOOKS[0].parent / f"{stem}.ipynb").read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    budget: dict = {}
    exec(code[0], budget)  # the parameters cell: the budgets nbmake and the docs build run
    assert budget[RESULT_PLOTS[stem]] < budget["RESULT_GAMES"]  # so the plot is a smoke test
    plotting = next(c for c in code if "savefig" in c or "subplots" in c)
    assert f"if {RESULT_PLOTS[stem]} < RESULT_GAMES:" in plotting
    assert "smoke-test budget: {" + RESULT_PLOTS[stem] + "}" in plotting
    assert "not a result" in plotting and "print(title)" in plotting
    assert "wilson_interval" in plotting or "win_ci_low" in plotting  # 95% Wilson intervals
    assert "sorted(" not in plotting  # no ranking drawn from a smoke test
