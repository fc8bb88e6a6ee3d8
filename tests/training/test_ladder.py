"""The ladder script's bookkeeping: head-to-head counts, table sizes, saved tables."""

from __future__ import annotations

import argparse
import importlib.util
import json
import pathlib
import sys
import types

import pytest

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


def test_the_pool_has_an_agent_per_budget(ladder) -> None:
    pool, note = ladder.pool_for("2p-base", [20, 100, 1000], ["30", "12"])
    assert note == ""
    assert pool == ["random", "greedy", "mcts:20", "mcts:100", "mcts:1000", "pretrained:2p-base",
                    "pretrained+puct:2p-base:30", "pretrained+puct:2p-base:12"]
    assert ladder.pool_for("4p-base", [5, 6], ["2"])[0][-2:] == ["pretrained",
                                                                "pretrained+puct:2"]


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
])
def test_equal_or_bad_budgets_are_refused(ladder, capsys, argv, message) -> None:
    with pytest.raises(SystemExit) as exc:
        ladder.main([*argv, "--games", "1"])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_a_tiny_ladder_plays_resumes_and_reports(ladder, tmp_path, capsys) -> None:
    out = tmp_path / "ladder.json"
    argv = ["--games", "3", "--mcts", "1", "2", "--search", "2", "--variants", "2p-base",
            "--out", str(out)]
    assert ladder.main(argv) == 0
    printed = capsys.readouterr().out
    first = printed.strip().splitlines()[-1]
    assert "CPU-minutes on 1 worker(s)" in printed and "load average" in printed
    assert "games played by the `core` backend" in printed
    saved = json.loads(next((tmp_path / "tables").glob("*.json")).read_text())
    assert saved["backend"] == "core" and saved["cpu_seconds"] >= 0
    assert len(list((tmp_path / "tables").glob("2p-base_table*.json"))) == 15
    assert ladder.main([*argv, "--resume"]) == 0
    captured = capsys.readouterr()
    assert "reusing 15 saved tables of 15" in captured.err
    again = json.loads(captured.out.strip().splitlines()[-1])
    assert again["ladder"] == json.loads(first)["ladder"]  # the machine's load may differ
    result = json.loads(first)["ladder"]["2p-base"]
    assert set(result) == {"random", "greedy", "mcts:1", "mcts:2", "pretrained:2p-base",
                           "pretrained+puct:2p-base:2"}
    assert all(a["games"] == 5 for a in result.values())


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
    args = argparse.Namespace(games=1, seed=0, mcts=[1, 2, 3], search=["2", "0.1s"], workers=1,
                              variants=list(ladder.VARIANTS), write=False, backend="python")
    assert ladder.command(args).endswith(
        "--mcts 1 2 3 --search 2 0.1s --workers 1 --backend python")
