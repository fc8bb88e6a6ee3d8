"""The ladder script's bookkeeping: pools, seeds, head-to-head counts, table sizes, saved
tables, and tiny ladders of the base game and of Legends."""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import pathlib
import signal
import subprocess
import sys
import types

import pytest
from moonriver_env.training.tournament import run_tournament

from moonriver_env.moonriver.rules import GameConfig
from tests.helpers import HANG_GUARD, ctrl_c_as_in_a_terminal

LADDER = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "ladder.py"


@pytest.fixture(scope="module")
def ladder():
    """The benchmarks/ladder.py module."""
    sys.path.insert(0, str(LADDER.parent))  # as when run as a script: for benchmarks/machine.py
    try:
        spec = importlib.util.spec_from_file_location("ladder", LADDER)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(LADDER.parent))
    return module


def test_head_to_head_counts_winner_then_score_and_ties_as_half(ladder) -> None:
    pool = ["a", "b", "c", "d"]
    outcomes = [
        # b wins the tie-break on equal top score; c beats d on score; a last.
        {"lineup": [0, 1, 2, 3], "scores": [10, 30, 30, 20], "winners": [1]},
        # a and b tie for the win; c and d equal.
        {"lineup": [0, 1, 2, 3], "scores": [40, 40, 5, 5], "winners": [0, 1]},
    ]
    h2h = ladder.head_to_head(pool, outcomes)
    assert h2h["b"]["c"] == [2.0, 2] and h2h["c"]["b"] == [0.0, 2]
    assert h2h["c"]["d"] == [1.5, 2] and h2h["d"]["c"] == [0.5, 2]
    assert h2h["a"]["b"] == [0.5, 2] and h2h["b"]["a"] == [1.5, 2]
    assert h2h["a"]["d"] == [1.0, 2]
    for r in pool:
        for c in pool:
            if r != c:
                assert h2h[r][c][0] + h2h[c][r][0] == h2h[r][c][1]


def test_head_to_head_follows_the_lineup_not_the_seat(ladder) -> None:
    pool = ["a", "b", "c", "d"]
    # Seat 0 holds agent c, seat 1 agent a, seat 2 agent d, seat 3 agent b; seat 2 wins.
    h2h = ladder.head_to_head(pool, [{"lineup": [2, 0, 3, 1], "scores": [5, 9, 12, 1],
                                      "winners": [2]}])
    assert h2h["d"] == {"a": [1.0, 1], "b": [1.0, 1], "c": [1.0, 1]}
    assert h2h["a"]["c"] == [1.0, 1] and h2h["c"]["a"] == [0.0, 1]
    assert h2h["b"] == {"a": [0.0, 1], "c": [0.0, 1], "d": [0.0, 1]}


def test_head_to_head_ignores_an_agent_against_itself(ladder) -> None:
    h2h = ladder.head_to_head(["a", "b"], [{"lineup": [0, 0, 1, 1], "scores": [3, 2, 1, 4],
                                            "winners": [3]}])
    assert h2h["a"]["b"] == [2.0, 4] and h2h["b"]["a"] == [2.0, 4]
    assert "a" not in h2h["a"]


def test_tables_give_every_agent_the_seat_games_asked(ladder) -> None:
    assert ladder.games_per_table(4, 6, 1000) == 100   # each agent sits at C(5,3)=10 tables
    assert ladder.games_per_table(2, 6, 1000) == 200   # each agent meets 5 others
    with pytest.raises(ValueError, match="at least 4 agents"):
        ladder.games_per_table(4, 3, 10)


def test_slow_tables_cost_more(ladder) -> None:
    assert ladder.table_cost(["random", "greedy", "pretrained"]) == 0
    assert ladder.table_cost(["mcts:100", "pretrained+puct:2p-base:30"]) == \
        100 + 30 * ladder.PUCT_COST
    # a PUCT simulation weighs more than an MCTS one (on the core, many more)
    assert ladder.table_cost(["pretrained+puct:30"]) > ladder.table_cost(["mcts:1000"])
    assert ladder.table_cost(["puct:0.1s", "mcts:20"]) > ladder.table_cost(["mcts:20"])
    # a time budget costs its time, whichever search spends it
    assert ladder.table_cost(["puct:0.01s"]) == ladder.table_cost(["mcts:0.01s"]) == 3000
    # the network's batched search: a network evaluation per simulation
    assert ladder.table_cost(["pretrained+search:16", "greedy"]) == 16 * ladder.AZ_SEARCH_COST
    assert ladder.table_cost(["pretrained+search:16"]) > ladder.table_cost(["mcts:100"])
    assert ladder.table_cost(["pretrained+search:0.01s"]) == 3000


def test_the_pool_has_an_agent_per_budget(ladder) -> None:
    pool, note = ladder.pool_for("2p-base", [20, 100, 1000], ["30", "12"], [16, 64])
    assert note == ""
    assert pool == ["random", "greedy", "mcts:20", "mcts:100", "mcts:1000", "pretrained:2p-base",
                    "pretrained+puct:2p-base:30", "pretrained+puct:2p-base:12", "pretrained",
                    "pretrained+search:16", "pretrained+search:64"]
    assert ladder.pool_for("4p-base", [5, 6], ["2"], [3])[0][-4:] == [
        "pretrained:4p-base", "pretrained+puct:4p-base:2", "pretrained", "pretrained+search:3"]


@pytest.mark.parametrize("variant", ["4p-legends-2", "2p-legends-1", "3p-base"])
def test_a_variant_without_ppo_weights_has_no_ppo_rungs(ladder, variant) -> None:
    pool, note = ladder.pool_for(variant, [20], ["30", "12"], [16])
    assert note == ""
    assert pool == ["random", "greedy", "mcts:20", "pretrained", "pretrained+search:16"]


def test_missing_weights_are_noted_and_stood_in_for(ladder, monkeypatch) -> None:
    def missing(spec: str):
        raise FileNotFoundError(2, "not found", f"/x/weights/{spec.split(':')[-1]}.npz")

    monkeypatch.setattr(ladder, "make_agent", missing)
    pool, note = ladder.pool_for("2p-base", [20], ["30"], [16])
    assert pool == ["random", "greedy", "mcts:20", "puct:30"]
    assert note == ("`pretrained:2p-base` and `pretrained+puct:2p-base` skipped (2p-base.npz not "
                    "found); `puct:30` (heuristic prior) play instead; `pretrained` and "
                    "`pretrained+search` skipped (pretrained.npz not found)")


def test_seeds_are_fixed_per_variant_and_never_overlap(ladder) -> None:
    assert ladder.VARIANTS[:2] == ("4p-base", "2p-base")  # as in earlier ladders
    assert set(ladder.DEFAULT_VARIANTS) <= set(ladder.VARIANTS)
    assert len(set(ladder.VARIANTS)) == len(ladder.VARIANTS) == 15
    seed = 4_000_000_000
    assert ladder.table_seed(seed, "4p-base", 0) == seed
    assert ladder.table_seed(seed, "2p-base", 3) == seed + ladder.VARIANT_STRIDE + \
        3 * ladder.TABLE_STRIDE
    # the largest ladder allowed: every table's games take seeds no other table takes
    spans = sorted((ladder.table_seed(seed, v, t), ladder.TABLE_STRIDE)
                   for v in ladder.VARIANTS for t in range(ladder.MAX_TABLES))
    for (first, games), (following, _) in itertools.pairwise(spans):
        assert first + games <= following
    assert ladder.seed_problem("4p-legends-2", 13, 1000) is None  # 715 tables
    assert "14 agents make 1001 tables of 4; at most 1000" in \
        ladder.seed_problem("4p-base", 14, 1)
    assert "1000001 games per table; at most 1000000" in \
        ladder.seed_problem("2p-base", 2, 1_000_001)


def test_a_legends_table_plays_its_scenario(ladder, tmp_path) -> None:
    specs = ("random", "greedy", "mcts:2", "random")
    task = ladder.Task("4p-legends-2", 0, specs, 2, 4_000_000_000, str(tmp_path), "f1", "core")
    table = ladder.play_table(task)
    legends = run_tournament(list(specs), 4, "legends", 2, 4_000_000_000, 1, progress=False,
                             config=GameConfig(num_players=4, mode="legends", scenario=2))
    base = run_tournament(list(specs), 4, "base", 2, 4_000_000_000, 1, progress=False)
    assert table["outcomes"] == legends.games
    assert table["outcomes"] != base.games
    assert ladder.variant_title("4p-legends-2") == \
        "4-player Legends of the West, scenario 2 (Gold Rush)"
    assert ladder.variant_title("2p-base") == "2-player base game"


def test_saved_table_is_reused_only_for_the_same_task(ladder, tmp_path) -> None:
    d = str(tmp_path)
    task = ladder.Task("2p-base", 3, ("greedy", "random"), 2, 4_000_000_000, d, "f1", "core")
    assert ladder.saved_table(task) is None
    table = {"agents": ["greedy", "random"], "games": 2, "seed": 4_000_000_000,
             "fingerprint": "f1", "backend": "core", "outcomes": [{}, {}]}
    pathlib.Path(ladder.table_path(d, "2p-base", 3)).write_text(json.dumps(table))
    assert ladder.saved_table(task) == table
    for other in (task._replace(games=3), task._replace(specs=("random", "greedy")),
                  task._replace(seed=4_000_000_001), task._replace(fingerprint="f2"),
                  task._replace(backend="python")):
        assert ladder.saved_table(other) is None, other
    table["outcomes"] = [{}]  # a table cut short is played again
    pathlib.Path(ladder.table_path(d, "2p-base", 3)).write_text(json.dumps(table))
    assert ladder.saved_table(task) is None


def test_fingerprint_changes_with_the_weights_and_the_code(ladder, tmp_path,
                                                         monkeypatch) -> None:
    assert ladder.code_fingerprint() == ladder.code_fingerprint()
    (tmp_path / "weights").mkdir()
    (tmp_path / "__init__.py").write_text("x = 1\n")
    (tmp_path / "weights" / "4p-base.npz").write_bytes(b"one")
    monkeypatch.setattr(ladder, "agents_package", types.SimpleNamespace(
        __file__=str(tmp_path / "__init__.py")))
    first = ladder.code_fingerprint()
    (tmp_path / "weights" / "4p-base.npz").write_bytes(b"two")
    second = ladder.code_fingerprint()
    (tmp_path / "__init__.py").write_text("x = 2\n")
    assert len({first, second, ladder.code_fingerprint()}) == 3


@pytest.mark.parametrize(("argv", "message"), [
    (["--mcts", "50", "20", "50"], "--mcts: the budgets must differ, got 50 twice"),
    (["--search", "30", "30"], "--search: the budgets must differ, got 30 twice"),
    (["--search", "30", "fast"], "--search: agent spec 'puct:fast': the budget must be"),
    (["--az-search", "16", "16"], "--az-search: the budgets must differ, got 16 twice"),
    (["--az-search", "0"], "argument --az-search: expected an integer >= 1, got 0"),
    (["--az-search", "100001"], "--az-search: expected simulations from 1 to 100000, got 100001"),
    (["--variants", "5p-base"], "argument --variants: unknown variant '5p-base'; allowed: NP-base "
                                "or NP-legends-S with N 2-4 and S 1-4 (4p-base, 2p-base,"),
    (["--variants", "2p-base", "2p-base"], "--variants: the variants must differ, got 2p-base"),
    (["--variants", "4p-legends-3", "--mcts", *map(str, range(1, 11))],
     "4p-legends-3: 14 agents make 1001 tables of 4; at most 1000 keep every table's seeds"),
    (["--variants", "2p-base", "--mcts", "1", "--search", "1", "--az-search", "1", "--games",
      "7000000"],  # 7 agents: each meets 6 others
     "2p-base: 1166667 games per table; at most 1000000 keep every table's seeds apart"),
])
def test_equal_or_bad_budgets_are_refused(ladder, capsys, tmp_path, argv, message) -> None:
    with pytest.raises(SystemExit) as exc:
        ladder.main(["--games", "1", *argv, "--out", str(tmp_path / "ladder.json")])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_a_tiny_ladder_plays_resumes_and_reports(ladder, tmp_path, capsys) -> None:
    out = tmp_path / "ladder.json"
    argv = ["--games", "3", "--mcts", "1", "2", "--search", "2", "--az-search", "2",
            "--variants", "2p-base", "--out", str(out)]
    assert ladder.main(argv) == 0
    captured = capsys.readouterr()
    printed = captured.out
    first = printed.strip().splitlines()[-1]
    # stderr: what it plays, at once; progress lines from the start; one line per table
    said = captured.err.splitlines()
    assert said[0] == ("ladder.py: 28 games in 28 tables of 2p-base on 1 worker(s), a progress "
                       "line every 10 s; Ctrl-C stops, the finished tables stay saved "
                       "(--resume reuses them)")
    assert said[1] == "ladder.py: 0/28 games, 0/28 tables, 0.0 min"  # before any table ends
    assert said[-1].startswith("ladder.py: 28/28 games, 28/28 tables, ")
    assert said[-1].endswith(" min, about 0.0 min left")
    assert sum(" table " in line for line in said) == 28
    assert not (tmp_path / "tables" / "playing").exists()  # the games counted meanwhile
    assert "CPU-minutes on 1 worker(s)" in printed and "load average" in printed
    assert "games played by the `core` backend" in printed
    saved = json.loads(next((tmp_path / "tables").glob("*.json")).read_text())
    assert saved["backend"] == "core" and saved["cpu_seconds"] >= 0
    assert len(list((tmp_path / "tables").glob("2p-base_table*.json"))) == 28
    assert ladder.main([*argv, "--resume"]) == 0
    captured = capsys.readouterr()
    assert "reusing 28 saved tables of 28" in captured.err
    again = json.loads(captured.out.strip().splitlines()[-1])
    assert again["ladder"] == json.loads(first)["ladder"]  # the machine's load may differ
    result = json.loads(first)["ladder"]["2p-base"]
    assert set(result) == {"random", "greedy", "mcts:1", "mcts:2", "pretrained:2p-base",
                           "pretrained+puct:2p-base:2", "pretrained", "pretrained+search:2"}
    assert all(a["games"] == 7 for a in result.values())


def test_a_legends_ladder_plays_and_its_tables_are_reused_beside_another_variant(
        ladder, tmp_path, capsys) -> None:
    out = tmp_path / "ladder.json"
    argv = ["--games", "1", "--mcts", "1", "--search", "1", "--az-search", "1", "--out", str(out)]
    assert ladder.main([*argv, "--variants", "4p-legends-2"]) == 0
    printed = capsys.readouterr().out
    assert "### 4p-legends-2: 4-player Legends of the West, scenario 2 (Gold Rush) (5 tables)" \
        in printed
    run = json.loads(out.read_text())["runs"][0]
    assert (run["variant"], run["players"], run["mode"], run["scenario"]) == \
        ("4p-legends-2", 4, "legends", 2)
    assert run["agents"] == ["random", "greedy", "mcts:1", "pretrained", "pretrained+search:1"]
    assert [t["seed"] for t in run["tables"]] == [
        4_000_000_000 + ladder.VARIANTS.index("4p-legends-2") * ladder.VARIANT_STRIDE
        + t * ladder.TABLE_STRIDE for t in range(5)]
    first = json.loads(printed.strip().splitlines()[-1])["ladder"]
    # the variant's seeds do not depend on the other variants a run names
    assert ladder.main([*argv, "--variants", "2p-legends-1", "4p-legends-2", "--resume"]) == 0
    captured = capsys.readouterr()
    assert "reusing 5 saved tables of 15" in captured.err
    both = json.loads(captured.out.strip().splitlines()[-1])["ladder"]
    assert both["4p-legends-2"] == first["4p-legends-2"]
    assert set(both["2p-legends-1"]) == set(run["agents"])


def test_a_table_plays_the_same_games_on_both_backends(ladder, tmp_path) -> None:
    tables = {}
    for backend in ("core", "python"):
        d = tmp_path / backend
        d.mkdir()
        task = ladder.Task("2p-base", 0, ("greedy", "random"), 4, 4_000_000_000, str(d), "f1",
                           backend)
        tables[backend] = ladder.play_table(task)
        assert tables[backend]["backend"] == backend
    assert tables["core"]["outcomes"] == tables["python"]["outcomes"]
    assert tables["core"]["summary"] == tables["python"]["summary"]


def test_backend_flag_is_checked_and_named_in_the_command(ladder, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        ladder.main(["--backend", "cpp", "--games", "1"])
    assert exc.value.code == 2 and "invalid choice: 'cpp'" in capsys.readouterr().err
    args = argparse.Namespace(games=1, seed=0, mcts=[1, 2, 3], search=["2", "0.1s"],
                              az_search=[16, 4], workers=1, variants=ladder.DEFAULT_VARIANTS,
                              write=False, backend="python")
    assert ladder.command(args).endswith(
        "--variants 4p-base 2p-base 4p-legends-2 --mcts 1 2 3 --search 2 0.1s --az-search 16 4 "
        "--workers 1 --backend python")


def test_write_replaces_only_the_ladder_sections(ladder, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "results.md").write_text(
        "# Results\n<!-- ladder:start -->\nold ladder\n<!-- ladder:end -->\nafter\n")
    (tmp_path / "README.md").write_text(
        "intro\n<!-- ladder-summary:start -->\nold\n<!-- ladder-summary:end -->\nend\n")
    assert ladder.main(["--games", "1", "--mcts", "1", "--az-search", "1", "--variants",
                        "2p-legends-1", "4p-legends-2", "--out", "ladder.json", "--write"]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert list(last["ladder"]) == ["2p-legends-1", "4p-legends-2"]
    results = (tmp_path / "docs" / "results.md").read_text()
    assert results.startswith("# Results\n<!-- ladder:start -->\nGenerated by `python benchmarks/"
                              "ladder.py --games 1 --seed 4000000000 --variants 2p-legends-1 "
                              "4p-legends-2 --mcts 1 --search 30 12 --az-search 1 --workers 1 "
                              "--write`")
    assert results.endswith("<!-- ladder:end -->\nafter\n") and "old ladder" not in results
    assert "### 2p-legends-1: 2-player Legends of the West, scenario 1 (Timber Rafting) " \
        "(10 tables)" in results
    assert "### 4p-legends-2: 4-player Legends of the West, scenario 2 (Gold Rush) (5 tables)" \
        in results
    readme = (tmp_path / "README.md").read_text()
    assert readme.startswith("intro\n<!-- ladder-summary:start -->\nLadder (`python benchmarks/")
    assert "| agent | 2p-legends-1 | 4p-legends-2 |\n|---|---|---|\n" in readme
    assert "| mcts:1 | " in readme and "| pretrained+search:1 | " in readme
    assert readme.endswith("<!-- ladder-summary:end -->\nend\n") and "\nold\n" not in readme


def test_ctrl_c_stops_the_workers_with_one_line_and_keeps_the_finished_tables(tmp_path) -> None:
    out = tmp_path / "ladder.json"
    proc = subprocess.Popen([sys.executable, str(LADDER), "--games", "100000", "--mcts", "1",
                             "--search", "1", "--az-search", "1", "--variants", "2p-base",
                             "--workers", "2", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=ctrl_c_as_in_a_terminal)
    try:
        said = []
        while not said or not said[-1].startswith("ladder.py: 0/"):  # the workers started
            said.append(proc.stderr.readline())
            assert said[-1], (said, proc.communicate(timeout=HANG_GUARD))
        os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C in a terminal: the workers get it too
        _, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert said[0].startswith("ladder.py: 350,007 games in 21 tables of 2p-base on 2 worker")
    assert "Traceback" not in err and proc.returncode == 130, err
    last = err.strip().splitlines()[-1]
    assert last == (f"ladder.py: interrupted (Ctrl-C); 0 of 21 tables saved in "
                     f"{tmp_path / 'tables'}, reused by the same command with --resume")
    assert all(line.startswith("ladder.py: ") for line in err.strip().splitlines())
    assert not (tmp_path / "tables" / "playing").exists() and not out.exists()
