"""The ladder script's bookkeeping: head-to-head counts, table sizes, saved tables."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest

LADDER = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "ladder.py"


@pytest.fixture(scope="module")
def ladder():
    """The benchmarks/ladder.py module."""
    spec = importlib.util.spec_from_file_location("ladder", LADDER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
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
    assert ladder.table_cost(["mcts:100", "pretrained+puct:2p-base:30"]) == 130
    assert ladder.table_cost(["puct:0.1s", "mcts:20"]) > ladder.table_cost(["mcts:20"])


def test_saved_table_is_reused_only_for_the_same_task(ladder, tmp_path) -> None:
    task = ("2p-base", 3, ["greedy", "random"], 4, 4_000_000_000, str(tmp_path))
    assert ladder.saved_table(task) is None
    table = {"agents": ["greedy", "random"], "games": 4, "seed": 4_000_000_000}
    pathlib.Path(ladder.table_path(str(tmp_path), "2p-base", 3)).write_text(json.dumps(table))
    assert ladder.saved_table(task) == table
    assert ladder.saved_table(("2p-base", 3, ["greedy", "random"], 5, 4_000_000_000,
                               str(tmp_path))) is None
    assert ladder.saved_table(("2p-base", 3, ["random", "greedy"], 4, 4_000_000_000,
                               str(tmp_path))) is None


def test_a_tiny_ladder_plays_resumes_and_reports(ladder, tmp_path, capsys) -> None:
    out = tmp_path / "ladder.json"
    argv = ["--games", "3", "--mcts", "1", "2", "--search", "2", "--variants", "2p-base",
            "--out", str(out)]
    assert ladder.main(argv) == 0
    first = capsys.readouterr().out.strip().splitlines()[-1]
    assert len(list((tmp_path / "tables").glob("2p-base_table*.json"))) == 15
    assert ladder.main([*argv, "--resume"]) == 0
    captured = capsys.readouterr()
    assert "reusing 15 saved tables of 15" in captured.err
    assert captured.out.strip().splitlines()[-1] == first
    result = json.loads(first)["ladder"]["2p-base"]
    assert set(result) == {"random", "greedy", "mcts:1", "mcts:2", "pretrained:2p-base",
                           "pretrained+puct:2p-base:2"}
    assert all(a["games"] == 5 for a in result.values())
