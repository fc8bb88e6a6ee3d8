"""Every benchmark's final JSON line says what machine it ran on (benchmarks/machine.py)."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

from tests.helpers import HANG_GUARD

BENCHMARKS = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p for p in BENCHMARKS.glob("*.py") if p.stem != "machine")


@pytest.fixture(scope="module")
def machine():
    """The benchmarks/machine.py module."""
    spec = importlib.util.spec_from_file_location("machine", BENCHMARKS / "machine.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_machine_names_the_cpu_and_torchs_settings(machine) -> None:
    summary = machine.machine()
    assert isinstance(summary["cpu_model"], str) and summary["cpu_model"]
    assert summary["cpus"] >= 1 and summary["load_average_1min"] >= 0
    torch = pytest.importorskip("torch")
    settings = summary["torch"]
    assert settings["version"] == torch.__version__
    assert settings["num_threads"] == torch.get_num_threads()
    assert settings["blas"] and settings["parallel_backend"] and settings["cpu_capability"]
    json.dumps(summary)  # it goes into a JSON line


def test_machine_reports_the_threads_a_benchmark_set(machine) -> None:
    torch = pytest.importorskip("torch")
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        assert machine.machine()["torch"]["num_threads"] == 1
    finally:
        torch.set_num_threads(previous)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_every_benchmark_puts_the_machine_in_its_json_line(script: pathlib.Path) -> None:
    text = script.read_text()
    assert "from machine import machine" in text and '"machine": ' in text


def test_a_benchmark_run_ends_with_the_machine(tmp_path) -> None:
    proc = subprocess.run([sys.executable, str(BENCHMARKS / "search_speed.py"), "--seconds",
                           "0.01", "--positions", "1"], capture_output=True, text=True,
                          timeout=HANG_GUARD, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    last = json.loads(proc.stdout.strip().splitlines()[-1])
    assert last["machine"]["cpu_model"] and "torch" in last["machine"]
