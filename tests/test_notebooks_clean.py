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
