"""Every benchmark's final JSON line says what machine it ran on (benchmarks/machine.py)."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import pathlib
import signal
import subprocess
import sys

import numpy as np
import pytest

from tests.helpers import HANG_GUARD, ctrl_c_as_in_a_terminal

BENCHMARKS = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"
HELPERS = ("machine", "progress")  # modules the scripts share, not benchmarks themselves
SCRIPTS = sorted(p for p in BENCHMARKS.glob("*.py") if p.stem not in HELPERS)


def _helper(name: str):
    """One of the shared modules of benchmarks/."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def machine():
    """The benchmarks/machine.py module."""
    return _helper("machine")


@pytest.fixture(scope="module")
def progress():
    """The benchmarks/progress.py module."""
    return _helper("progress")


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


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_every_benchmark_stops_on_ctrl_c_with_one_line(script: pathlib.Path) -> None:
    text = script.read_text()
    assert f'@main_of("{script.name}")\ndef main(' in text
    assert text.rstrip().endswith("raise SystemExit(main())")


def test_ctrl_c_is_one_line_and_status_130(progress, capsys) -> None:
    @progress.main_of("slow.py")
    def main(argv: list[str] | None = None) -> int:
        raise KeyboardInterrupt

    assert main([]) == 130
    captured = capsys.readouterr()
    assert captured.err == "slow.py: interrupted (Ctrl-C)\n" and captured.out == ""
    assert progress.main_of("quick.py")(lambda: None)() == 0


def test_progress_lines_say_the_minutes_so_far_and_what_remains(progress) -> None:
    clock = iter([0.0, 0.0, 5.0, 12.0, 13.0, 60.0, 60.5])
    stream = io.StringIO()
    bar = progress.Progress("ladder.py", 120, "games", every=10, stream=stream,
                            clock=lambda: next(clock))
    bar.update(0)  # at once: nothing done yet, no estimate
    bar.update(3)  # 5 s later: not due
    bar.update(6, "1/4 tables")  # 12 s: due; 6 of 120 in 12 s, 114 more at that pace
    bar.update(7)  # 13 s: not due
    bar.update(120)  # 60 s: the end
    bar.update(120)  # shown once
    assert stream.getvalue().splitlines() == [
        "ladder.py: 0/120 games, 0.0 min",
        "ladder.py: 6/120 games, 1/4 tables, 0.2 min, about 3.8 min left",
        "ladder.py: 120/120 games, 1.0 min, about 0.0 min left"]


def test_the_last_progress_line_is_the_whole_count_when_only_its_words_change(progress) -> None:
    """The ladder's last game counted before its table finished: the end still shows 4/4."""
    clock = iter([0.0, 0.0, 1.0, 2.0, 3.0])
    stream = io.StringIO()
    bar = progress.Progress("ladder.py", 4, "games", every=10, stream=stream,
                            clock=lambda: next(clock))
    bar.update(0, "0/4 tables")
    bar.update(4, "3/4 tables")  # every game recorded, one table still saving
    bar.update(4, "4/4 tables")  # the end: printed although the games did not change
    bar.update(4, "4/4 tables")  # shown once
    assert stream.getvalue().splitlines()[1:] == [
        "ladder.py: 4/4 games, 3/4 tables, 0.0 min, about 0.0 min left",
        "ladder.py: 4/4 games, 4/4 tables, 0.0 min, about 0.0 min left"]


def test_a_long_benchmark_shows_progress_from_the_start_and_stops_on_ctrl_c(tmp_path) -> None:
    proc = subprocess.Popen([sys.executable, str(BENCHMARKS / "value_quality.py"), "--variants",
                             "2p-base", "--games", "100000"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            start_new_session=True, preexec_fn=ctrl_c_as_in_a_terminal)
    try:
        first = proc.stderr.readline()
        assert first == "value_quality.py: 0/100,000 2p-base games played, 0.0 min\n", (
            first, proc.communicate(timeout=HANG_GUARD))
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and out == ""
    assert err.splitlines()[-1] == "value_quality.py: interrupted (Ctrl-C)", err
    assert "Traceback" not in err


def test_a_benchmark_run_ends_with_the_machine(tmp_path) -> None:
    proc = subprocess.run([sys.executable, str(BENCHMARKS / "search_speed.py"), "--seconds",
                           "0.01", "--positions", "1"], capture_output=True, text=True,
                          timeout=HANG_GUARD, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    last = json.loads(proc.stdout.strip().splitlines()[-1])
    assert last["machine"]["cpu_model"] and "torch" in last["machine"]


def _last_json(script: str, *args: str, cwd: pathlib.Path) -> dict:
    """Run a benchmark at tiny size; its last line, parsed."""
    proc = subprocess.run([sys.executable, str(BENCHMARKS / script), *args],
                          capture_output=True, text=True, timeout=HANG_GUARD, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_vector_throughput_compares_compact_with_float32(tmp_path) -> None:
    last = _last_json("vector_throughput.py", "--seconds", "0.02", "--rounds", "1", "--sizes",
                      "4", "--threads", "1,2", "--observation", "float32,compact", cwd=tmp_path)
    results = last["results"]
    assert {"tictactoe_v3", "t1-b4", "t2-b4", "t1-b4-compact", "t2-b4-compact"} <= set(results)
    assert results["t2-b4-compact"]["vs_float32_median"] > 0


def test_many_core_writes_the_scaling_table_with_tictactoe(tmp_path) -> None:
    last = _last_json("many_core.py", "--seconds", "0.02", "--rounds", "1", "--sizes", "4,8",
                      "--max-threads", "3", cwd=tmp_path)
    assert last["benchmark"] == "many_core" and last["threads"] == [1, 2, 3]
    assert last["build"].startswith("current")  # the test's Python has the core: no build
    for kind in ("float32", "compact"):
        table = last["scaling"][kind]
        assert set(table) == {f"t{t}-b{s}" for t in (1, 2, 3) for s in (4, 8)}
        assert table["t1-b8"]["vs_one_thread"] == 1.0
    assert last["results"]["tictactoe_v3"]["agent_steps_per_s"] > 0
    assert last["machine"]["cpus"] >= 1


def test_many_core_refuses_bad_sizes(tmp_path) -> None:
    proc = subprocess.run([sys.executable, str(BENCHMARKS / "many_core.py"), "--sizes", "0"],
                          capture_output=True, text=True, timeout=HANG_GUARD, cwd=tmp_path)
    assert proc.returncode == 2 and "--sizes: a comma-separated list" in proc.stderr


def test_variants_measures_the_agent_in_each_named_variant(tmp_path) -> None:
    last = _last_json("variants.py", "--agent", "greedy", "--opponent", "random", "--games",
                      "6", "--variants", "2p-base", "3p-legends-2", "4p-legends-4", cwd=tmp_path)
    rows = {r["variant"]: r for r in last["variants"]}
    assert list(rows) == ["2p-base", "3p-legends-2", "4p-legends-4"]
    assert [r["players"] for r in rows.values()] == [2, 3, 4]
    assert all(r["games"] == 6 and 0 <= r["ci"][0] <= r["win"] <= r["ci"][1] <= 1
               for r in rows.values())
    assert rows["2p-base"]["win"] > 0.5  # greedy beats random


def test_variants_duplicate_gives_an_agent_equal_to_the_opponent_exactly_chance(tmp_path) -> None:
    last = _last_json("variants.py", "--agent", "greedy", "--opponent", "greedy", "--games",
                      "4", "--variants", "2p-base", "4p-legends-4", "--duplicate", cwd=tmp_path)
    assert last["duplicate"] is True
    assert [r["win"] for r in last["variants"]] == pytest.approx([0.5, 0.25])
    assert all(r["ci"][0] <= r["win"] <= r["ci"][1] for r in last["variants"])
    bad = subprocess.run([sys.executable, str(BENCHMARKS / "variants.py"), "--games", "6",
                          "--variants", "2p-base", "4p-base", "--duplicate"],
                         capture_output=True, text=True, timeout=HANG_GUARD, cwd=tmp_path)
    assert bad.returncode == 2 and "--games a multiple of 4" in bad.stderr


def test_paired_interval_is_over_the_seeds_mean_shares_with_ties_split() -> None:
    sys.path.insert(0, str(BENCHMARKS))  # as when the script runs: its helpers beside it
    try:
        variants = _helper("variants")
    finally:
        sys.path.remove(str(BENCHMARKS))
    # 40 seeds of a 2-player table: agent 0 wins seat 0's game, shares seat 1's (two winners)
    games = [{"seed": s, "lineup": lineup, "winners": winners}
             for s in range(40) for lineup, winners in (([0, 1], [0] if s % 2 else [1]),
                                                        ([1, 0], [0, 1]))]
    means = np.array([(1.0 if s % 2 else 0.0) + 0.5 for s in range(40)]) / 2
    low, high = variants.paired_interval(games)
    half = 1.96 * means.std(ddof=1) / np.sqrt(40)
    assert (low, high) == pytest.approx((means.mean() - half, means.mean() + half))
    assert variants.paired_interval(games[:58]) is None  # 29 seeds: too few


def test_equal_time_matches_the_budget_to_the_reference_and_plays_both_tables(tmp_path) -> None:
    last = _last_json("equal_time.py", "--reference", "mcts:20", "--budgets", "1,2",
                      "--games", "3", "--positions", "2", cwd=tmp_path)
    assert list(last["results"]) == ["2p-base", "4p-base"]
    for players, table in (("2p-base", 2), ("4p-base", 4)):
        run = last["results"][players]
        assert run["budget"] in (1, 2) and len(run["table"]) == table
        assert run["table"][:2] == [f"pretrained+search:{run['budget']}", "mcts:20"]
        assert set(run["ms_per_decision"]) == {"mcts:20", "pretrained+search:1",
                                               "pretrained+search:2"}
        assert 0 <= run["ahead_ci"][0] <= run["ahead"] <= run["ahead_ci"][1] <= 1


def test_equal_time_plays_the_variants_named_and_refuses_others(tmp_path) -> None:
    last = _last_json("equal_time.py", "--reference", "mcts:10", "--budgets", "1",
                      "--games", "2", "--positions", "1", "--variants", "3p-legends-2",
                      cwd=tmp_path)
    (run,) = last["results"].values()
    assert list(last["results"]) == ["3p-legends-2"]
    assert run["table"] == ["pretrained+search:1", "mcts:10", "greedy"] and run["games"] == 2
    bad = subprocess.run([sys.executable, str(BENCHMARKS / "equal_time.py"), "--variants",
                          "5p-base"], capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 2 and "unknown variant '5p-base'" in bad.stderr


def test_search_agreement_one_simulation_is_the_teachers_own_top_logit(tmp_path) -> None:
    """With one simulation the search plays the teacher's most likely action: its policy agrees
    everywhere and the two searches agree; a policy that leans less on Greedy does not."""
    from moonriver_env.agents.az import shipped_path
    from moonriver_env.agents.pretrained import read_npz

    arrays, meta = read_npz(shipped_path())
    arrays["prior_weight"] = arrays["prior_weight"] * 0.25
    other = tmp_path / "other.npz"
    np.savez(other, **arrays, __meta__=np.array(json.dumps(meta)))
    last = _last_json("search_agreement.py", "--games", "2", "--simulations", "1",
                      "--policies", "pretrained", str(other), cwd=tmp_path)
    assert last["search_vs_search"]["agree"] == 1.0
    own, changed = last["policies"]["pretrained"], last["policies"][str(other)]
    assert own["vs_search_1"]["agree"] == own["vs_search_2"]["agree"] == 1.0
    assert own["vs_search_1"]["positions"] == last["search_vs_search"]["positions"] > 10
    assert changed["vs_search_1"]["agree"] < 1.0
    assert own["both_searches_elsewhere"]["agree"] == 0.0  # the searches agree everywhere
    assert changed["both_searches_elsewhere"]["agree"] == pytest.approx(
        1.0 - changed["vs_search_1"]["agree"])


def test_search_agreement_root_noise_parts_the_two_searches(tmp_path) -> None:
    """With one simulation and self-play's root noise the two searches draw their actions
    (they part somewhere); the settings are in the JSON line; a negative noise is refused."""
    last = _last_json("search_agreement.py", "--games", "2", "--simulations", "1",
                      "--gumbel-scale", "1", "--table-search", cwd=tmp_path)
    assert last["gumbel_scale"] == 1.0 and last["table_search"] is True
    assert 0.0 < last["search_vs_search"]["agree"] < 1.0
    bad = subprocess.run([sys.executable, str(BENCHMARKS / "search_agreement.py"),
                          "--gumbel-scale", "-1"], capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 2 and "--gumbel-scale must be finite and >= 0" in bad.stderr


def test_target_fit_learns_its_set_and_a_wider_trunk_starts_where_the_network_is(
        tmp_path) -> None:
    """The learned set's cross-entropy falls as the network learns it; widened, the network
    starts at the same fit (the same function); a narrower width is refused."""
    tiny = ("--decisions", "200", "--held-out", "60", "--simulations", "2", "--threads", "1")
    learned = _last_json("target_fit.py", *tiny, "--steps", "20", "--every", "10",
                         "--learning-rate", "0.001", cwd=tmp_path)
    wide = _last_json("target_fit.py", *tiny, "--steps", "0", "--widen-hidden", "160",
                      cwd=tmp_path)
    assert [p["step"] for p in learned["curve"]] == [0, 10, 20]
    first, last = learned["curve"][0], learned["curve"][-1]
    assert last["learned"]["cross_entropy"] < first["learned"]["cross_entropy"]
    for part in ("learned", "held_out"):
        for key in ("agree", "cross_entropy"):
            assert wide["curve"][0][part][key] == pytest.approx(first[part][key], abs=1e-3)
    bad = subprocess.run([sys.executable, str(BENCHMARKS / "target_fit.py"), "--widen-hidden",
                          "64"], capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 2 and "--widen-hidden must be 0 or >= the network's 128" in bad.stderr


def test_target_fit_steady_targets_keep_the_agreed_decisions_and_write_the_network(
        tmp_path) -> None:
    """``--target steady``: only decisions where both searches chose alike carry a target, each
    one action; ``--out`` writes a network the agents load; one search is refused."""
    from moonriver_env.training.az.network import is_az_file, load_az_net

    out = tmp_path / "fit.npz"
    steady = _last_json("target_fit.py", "--decisions", "200", "--held-out", "60",
                        "--simulations", "2", "--threads", "1", "--steps", "2", "--every", "2",
                        "--target", "steady", "--target-searches", "2", "--out", str(out),
                        cwd=tmp_path)
    assert 0 < steady["with_target"] < 1 and steady["target"] == "steady"
    held = steady["curve"][0]["held_out"]
    kinds = held["by_kind"].values()
    assert 0 < held["rows"] == sum(k["rows"] for k in kinds) < 60  # rows with a target only
    assert sum(k["rows"] * k["agree"] for k in kinds) / sum(k["rows"] for k in kinds) == (
        pytest.approx(held["agree"], abs=1e-3))
    assert is_az_file(str(out)) and load_az_net(str(out)).config.hidden == 128
    bad = subprocess.run([sys.executable, str(BENCHMARKS / "target_fit.py"), "--target",
                          "steady"], capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 2 and "--target steady needs --target-searches >= 2" in bad.stderr


def test_value_quality_scores_a_uniform_value_at_log_n_and_a_network_against_itself(
        tmp_path) -> None:
    """A value head of zeros predicts even shares: its cross-entropy is ln 2 in every 2-player
    position whatever the outcome; the same network twice differs by exactly 0."""
    import math

    from moonriver_env.agents.az import shipped_path
    from moonriver_env.agents.pretrained import read_npz

    arrays, meta = read_npz(shipped_path())
    arrays["value_head.weight"] = np.zeros_like(arrays["value_head.weight"])
    arrays["value_head.bias"] = np.zeros_like(arrays["value_head.bias"])
    even = tmp_path / "even.npz"
    np.savez(even, **arrays, __meta__=np.array(json.dumps(meta)))
    last = _last_json("value_quality.py", "--networks", "pretrained", str(even), "pretrained",
                      "--variants", "2p-base", "--games", "3", cwd=tmp_path)
    result = last["results"]["2p-base"]
    assert result["positions"] > 30
    assert result[str(even)]["cross_entropy"] == pytest.approx(math.log(2), abs=1e-6)
    own = result["pretrained"]
    assert own["minus_first"] == 0.0 and own["minus_first_ci"] == [0.0, 0.0]
    assert 0.0 <= own["top_winner_ci"][0] <= own["top_winner"] <= own["top_winner_ci"][1] <= 1


def test_az_selfplay_speed_compares_the_three_loops_on_the_same_games(tmp_path) -> None:
    pytest.importorskip("torch")
    proc = subprocess.run([sys.executable, str(BENCHMARKS / "az_selfplay_speed.py"), "--games",
                           "2", "--simulations", "2", "--rounds", "2"], capture_output=True,
                          text=True, timeout=HANG_GUARD, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    times = [line for line in lines if line.startswith("  time: select ")]
    out = [line for line in lines if not line.startswith("  time: ")]
    assert len(times) == 3 and all("network" in line and "record" in line for line in times)
    # the two batched loops interleaved over 2 rounds of the same 2 games
    assert out[0].startswith("batched: 4 games, ") and "leaf evaluations/s" in out[0]
    assert out[1].startswith("one game at a time: 2 games, ")
    assert out[2].startswith("batched / one at a time: x")
    assert out[3].startswith("batched, leaves valued inside the core: 4 games, ")
    assert out[4].startswith("inside the core / batched: x")
    last = json.loads(out[-1])
    results = last["results"]
    assert set(results) == {"batched", "one_at_a_time", "core_leaves"}
    assert results["batched"]["decisions"] == results["core_leaves"]["decisions"] > 0
    assert results["one_at_a_time"]["games"] == 2 and results["batched"]["games"] == 4
    per_round = results["batched"]["network_calls"] / 2
    assert results["one_at_a_time"]["network_calls"] > per_round
    assert results["core_leaves"]["phase_seconds"]["network"] > 0
    assert last["batched_vs_one_at_a_time"] > 0 and last["machine"]["cpu_model"]


def test_az_selfplay_speed_refuses_bad_sizes_in_one_line(tmp_path) -> None:
    pytest.importorskip("torch")
    proc = subprocess.run([sys.executable, str(BENCHMARKS / "az_selfplay_speed.py"), "--games",
                           "0"], capture_output=True, text=True, timeout=HANG_GUARD, cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "games, simulations and max_considered must be >= 1" in proc.stderr
