"""moonriver-train-pipeline: a tiny pipeline end to end, its skips and resumes, its refusals."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from moonriver_env.training.pipeline import HEAP_SETTINGS, load_pipeline, main, step_environment

from tests.helpers import HANG_GUARD, ctrl_c_as_in_a_terminal

REPO = Path(__file__).resolve().parents[2]
FAST = """num_players = 2
minutes = 0
bc_minutes = 0
bc_iterations = 2
ppo_iterations = 2
bc_games = 2
games = 2
minibatch = 64
channels = 8
opponent_channels = 4
hidden = 16
eval_games = 0
snapshot_every = 2
checkpoint_minutes = 100
workers = 1
"""
AZ_SIZES = """variants = ["2p-base", "3p-base"]
games = 2
simulations = 4
max_considered = 4
buffer = 512
batch_size = 16
updates = 2
minutes = 0
"""
AZ = AZ_SIZES + "iterations = 2\nvalue_warmup = 2\nfreeze_policy = true\n"
AZ_TAUGHT = AZ_SIZES + ('iterations = 1\ntarget = "action"\nrollout_weight = 0.5\n'
                        'rollout_depth = 8\n')

PIPELINE = """agent = "folded"
ship = "shipped/all.npz"

[[step]]
name = "first"
run = "fast"
config = "fast.toml"

[[step]]
name = "second"
run = "fast"
config = "fast.toml"
init = "first"
set = { bc_iterations = 0, seed = 1 }

[[step]]
name = "partner"
run = "export"
from = "first"

[[step]]
name = "mean"
run = "soup"
from = ["first", "second"]

[[step]]
name = "value"
run = "az"
config = "az.toml"
warm_start = "mean"

[[step]]
name = "taught"
run = "az"
config = "az_taught.toml"
warm_start = "value"
expert = "value"

[[step]]
name = "specialist"
run = "az"
config = "az_taught.toml"
warm_start = "taught"
expert = "taught"
set = { variants = "3p-base" }

[[step]]
name = "folded"
run = "fold"
base = "taught"
from = ["specialist"]
set = { rank = 2 }
"""


def _write(folder: Path, pipeline: str = PIPELINE) -> Path:
    """The tiny pipeline and its two configs in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fast.toml").write_text(FAST)
    (folder / "az.toml").write_text(AZ)
    (folder / "az_taught.toml").write_text(AZ_TAUGHT)
    path = folder / "tiny.toml"
    path.write_text(pipeline)
    return path


def _arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def test_a_tiny_pipeline_runs_every_step_then_skips_them(tmp_path, capsys) -> None:
    path = _write(tmp_path / "p")
    out = tmp_path / "run"
    assert main([str(path), "--out", str(out), "--ship", "--quiet"]) == 0
    printed = capsys.readouterr().out
    for step in ("first", "second", "partner", "mean", "value", "taught", "specialist",
                 "folded"):
        assert (out / step / "step.json").is_file()
    # an az step taught by an earlier step's network: --expert names that step's product
    assert f"--expert {out / 'value' / 'az.npz'}" in printed
    assert "--variants 3p-base" in printed
    # the fold: the base's layers, and the specialist's change as 3p-base's rank-2 adapter
    taught, folded = _arrays(out / "taught" / "az.npz"), _arrays(out / "folded" / "az.npz")
    assert all(np.array_equal(taught[k], folded[k]) for k in taught if k != "__meta__")
    assert folded["variant_rest.down"].shape[1] == 2
    assert np.abs(folded["variant_rest.up"]).sum() > 0
    assert "measure it: moonriver-eval --agents az:" in printed
    assert f"--agent az:{out / 'agent.npz'} --variants 3p-base" in printed
    agent = _arrays(out / "agent.npz")
    shipped = _arrays(tmp_path / "p" / "shipped" / "all.npz")
    assert agent.keys() == shipped.keys() and all(
        np.array_equal(agent[k], shipped[k]) for k in agent)
    # a rerun skips every finished step and writes the same agent
    assert main([str(path), "--out", str(out), "--quiet"]) == 0
    assert capsys.readouterr().out.count("finished before, skipped") == 8
    again = _arrays(out / "agent.npz")
    assert all(np.array_equal(agent[k], again[k]) for k in agent)


def test_a_stopped_step_resumes_where_it_stopped(tmp_path, capsys) -> None:
    path = _write(tmp_path / "p", PIPELINE.split("[[step]]")[0].replace('"folded"', '"first"')
                  + '[[step]]\nname = "first"\nrun = "fast"\nconfig = "fast.toml"\n'
                  + "set = { ppo_iterations = 40 }\n")
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "moonriver_env.training.pipeline", str(path),
                             "--out", str(out), "--quiet"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=ctrl_c_as_in_a_terminal)
    log = out / "first" / "log.jsonl"
    try:
        for _ in range(HANG_GUARD * 10):  # polls, not a time budget: a hang guard
            if proc.poll() is not None or (log.exists() and len(log.read_text().splitlines()) > 4):
                break
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a terminal: the trainer gets it too
        _, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "continue with the same command" in err
    assert not (out / "first" / "step.json").exists()
    # a fresh start would be refused (the folder holds a run): the rerun resumes it
    assert main([str(path), "--out", str(out), "--quiet"]) == 0
    assert f"--resume {out / 'first'}" in capsys.readouterr().out
    assert (out / "first" / "step.json").is_file() and (out / "agent.npz").is_file()


FOLD_AB = ('[[step]]\nname = "a"\nrun = "az"\nconfig = "az.toml"\n[[step]]\nname = "b"\n'
           'run = "az"\nconfig = "az.toml"\n[[step]]\nname = "c"\nrun = "fold"\n')


@pytest.mark.parametrize(("text", "message"), [
    ('[[step]]\nname = "a"\nrun = "fast"\nconfig = "fast.toml"\nbogus = 1\n', "unknown keys"),
    ('[[step]]\nname = "a"\nrun = "train"\n', "run must be one of"),
    ('[[step]]\nname = "a"\nrun = "soup"\nfrom = ["b"]\n', "not earlier steps"),
    ('[[step]]\nname = "a"\nrun = "fast"\nconfig = "missing.toml"\n', "no config file"),
    ('agent = "z"\n[[step]]\nname = "a"\nrun = "fast"\nconfig = "fast.toml"\n', "not a step"),
    ("", "no [[step]] tables"),
    ('[[step]]\nname = "a"\nrun = "fast"\nconfig = "fast.toml"\n[[step]]\nname = "b"\n'
     'run = "az"\nconfig = "az.toml"\nexpert = ["a", "a"]\n', "expert names one step"),
    ('[[step]]\nname = "a"\nrun = "fast"\nconfig = "fast.toml"\n[[step]]\nname = "b"\n'
     'run = "fold"\nfrom = ["a"]\n', "needs base = step name"),
    ('[[step]]\nname = "a"\nrun = "fast"\nconfig = "fast.toml"\n[[step]]\nname = "b"\n'
     'run = "az"\nconfig = "az.toml"\n[[step]]\nname = "c"\nrun = "fold"\nbase = "a"\n'
     'from = ["b"]\n', "base and from name az or fold steps"),
    (FOLD_AB + 'base = "a"\nfrom = ["a", "b"]\n', "not the base"),
    (FOLD_AB + 'base = "a"\nfrom = ["b", "b"]\n', "each specialist once"),
    (FOLD_AB + 'base = "a"\nfrom = ["b"]\nset = { rnk = 4 }\n', "set takes rank"),
    (FOLD_AB + 'base = "a"\nfrom = ["b"]\nset = { rank = true }\n', "set takes rank"),
])
def test_a_bad_pipeline_is_refused_in_one_line(tmp_path, capsys, text, message) -> None:
    path = _write(tmp_path, text)
    assert main([str(path), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_the_shipped_pipeline_chains_the_shipped_configs() -> None:
    pipeline = load_pipeline(str(REPO / "training" / "pipelines" / "pretrained.toml"))
    steps = pipeline.steps_by_name
    assert steps["az_value"].inputs["warm_start"] == ("league_soup",)
    assert steps["az_taught"].inputs == {"warm_start": ("az_value",), "expert": ("az_value",)}
    # the agent: the Gold Rush specialists, each taught from az_taught, folded into it
    assert pipeline.agent == "gold_fold" and steps["gold_fold"].run == "fold"
    specialists = steps["gold_fold"].inputs["from"]
    assert steps["gold_fold"].inputs["base"] == ("az_taught",)
    assert [steps[name].settings["variants"] for name in specialists] == [
        "2p-legends-2", "3p-legends-2", "4p-legends-2"]
    for name in specialists:
        assert steps[name].inputs == {"warm_start": ("az_taught",), "expert": ("az_taught",)}
        assert steps[name].config.endswith("az_specialist.toml")
    assert steps["league_soup"].inputs["from"] == ("fast_league", "fast_legends_24")
    assert steps["fast_league"].inputs["league"] == ("sparring_2p",)
    assert pipeline.ship == str(REPO / "agents" / "weights" / "all.npz")
    fast = [step for step in pipeline.steps if step.run == "fast"]
    for earlier, later in itertools.pairwise(fast[1:]):
        assert later.inputs["init"] == (earlier.name,)


def test_the_2_hour_candidate_plays_in_the_core_and_folds_four_specialists_onto_step_8() -> None:
    from moonriver_env.training.fast.config import FastConfig

    pipeline = load_pipeline(str(REPO / "training" / "pipelines" / "pretrained_2h.toml"))
    assert pipeline.ship == ""  # --ship cannot replace agents/weights/all.npz
    fast = [step for step in pipeline.steps if step.run == "fast"]
    configs = [FastConfig.load(step.config, dict(step.settings)) for step in fast]
    assert all(cfg.play_forward == "core" for cfg in configs)  # every PPO step's play
    assert [step.name for step in fast[:2]] == ["sparring_2p_run", "fast_4p_greedy"]
    assert configs[1].epochs == 1 and configs[1].learning_rate == 0.002
    assert all(cfg.variants_per_iteration > 1 and cfg.play_split == "variants"
               for cfg in configs[2:])
    steps = pipeline.steps_by_name
    assert "az_taught" not in steps  # no search-taught step: the specialists start at step 8
    assert steps["fast_league"].inputs["league"] == ("sparring_2p",)
    assert steps["sparring_2p"].inputs["from"] == ("sparring_2p_run",)  # step 0's partner
    assert steps["gold_fold"].inputs["base"] == ("az_value",)
    for name in steps["gold_fold"].inputs["from"]:
        assert steps[name].inputs == {"warm_start": ("az_value",), "expert": ("az_value",)}
    specialists = steps["gold_fold"].inputs["from"]
    taught = sorted(dict(steps[name].settings)["variants"] for name in specialists)
    assert taught == ["2p-base", "2p-legends-2", "3p-legends-2", "4p-legends-2"]


def test_steps_run_with_the_heap_settings_unless_the_caller_sets_its_own(monkeypatch) -> None:
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.setenv("MALLOC_TOP_PAD_", "12345")
    env = step_environment()
    assert env["MALLOC_MMAP_THRESHOLD_"] == HEAP_SETTINGS["MALLOC_MMAP_THRESHOLD_"]
    assert env["MALLOC_TRIM_THRESHOLD_"] == os.environ.get(
        "MALLOC_TRIM_THRESHOLD_", HEAP_SETTINGS["MALLOC_TRIM_THRESHOLD_"])
    assert env["MALLOC_TOP_PAD_"] == "12345"  # the caller's value wins
    assert env["PATH"] == os.environ["PATH"]
