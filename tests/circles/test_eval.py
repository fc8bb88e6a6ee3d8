"""Circles agents and tournaments: agent protocol, heuristic strength, rotation, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from moonriver_env.agents.base import Agent
from moonriver_env.agents.circles_heuristic import (
    CirclesHeuristicAgent,
    contest_expected_score,
)
from moonriver_env.agents.registry import make_agent
from moonriver_env.training import evaluate
from moonriver_env.training.circles_eval import main
from moonriver_env.training.tournament import record_name, run_tournament

from moonriver_env.circles import CirclesConfig, CirclesGame, Phase


def test_agents_follow_the_protocol_and_play_legal_moves() -> None:
    for spec in ("random", "heuristic"):
        agent = make_agent(spec, seed=1, game="circles")
        assert isinstance(agent, Agent) and agent.name == spec
        for n in (2, 5):
            game = CirclesGame(CirclesConfig(num_players=n), seed=n)
            agent.reset(3)
            while not game.is_over:
                mask = game.legal_mask()
                action = agent.act(game, {"action_mask": mask})
                assert mask[action] == 1
                game.apply(action)
    with pytest.raises(ValueError, match="allowed: random, heuristic"):
        make_agent("greedy", game="circles")


def test_heuristic_aims_at_the_best_expected_space() -> None:
    game = CirclesGame(CirclesConfig(num_players=2), seed=0)
    p = game.current_player
    game.items[p][1] = 0  # no tickets: the flick alone decides
    agent = CirclesHeuristicAgent(seed=0)
    values = {k: agent.flick_value(game, p, k) for k in range(2, 21)}
    chosen = agent.act(game, {"action_mask": game.legal_mask()})
    assert chosen - game.codec.THROW0 + 2 == max(values, key=values.get)
    # From the ranch, GOLD lies 1, 7 and 11 spaces away: aiming near 7 beats a wild 20.
    assert values[7] > values[20]
    # Contest throws aim at a full lap (score 0), short of the out-of-ring risk.
    best = min(range(2, 21), key=lambda k: contest_expected_score(game, k))
    assert 15 <= best <= 20


def test_heuristic_buys_the_ranch_when_it_can(monkeypatch) -> None:
    game = CirclesGame(CirclesConfig(num_players=2), seed=0)
    p = game.current_player
    game.money[p] = 18
    game.marble = 18  # the RANCH is 2 spaces ahead
    agent = CirclesHeuristicAgent(seed=0)
    action = agent.act(game, {"action_mask": game.legal_mask()})
    assert game.phase == Phase.FLICK and action - game.codec.THROW0 + 2 == 2


def test_tournament_rotates_seats_and_heuristic_beats_random() -> None:
    result = run_tournament(["heuristic", "random"], num_players=2, games=80, seed=0,
                            progress=False, game="circles")
    heuristic, random = result.agents
    assert heuristic.games == random.games == 80
    seats = [o["lineup"] for o in result.games]
    assert seats.count([0, 1]) == seats.count([1, 0]) == 40
    assert heuristic.win_ci_low > 0.8 and heuristic.win_rate + random.win_rate == 1.0
    assert heuristic.rating > random.rating
    assert all(o["end_reason"] in ("ranch", "turn_cap") for o in result.games)


def test_results_do_not_depend_on_workers_and_records_replay(tmp_path) -> None:
    one = run_tournament(["heuristic", "random", "random"], num_players=3, games=6,
                         seed=5, progress=False, records_dir=str(tmp_path), game="circles")
    two = run_tournament(["heuristic", "random", "random"], num_players=3, games=6,
                         seed=5, workers=2, progress=False, game="circles")
    assert one.games == two.games
    record = json.loads((tmp_path / record_name(3)).read_text())
    game = CirclesGame.from_record(record)
    assert [game.wealth(p) for p in range(3)] == one.games[3]["scores"]


def test_cli_writes_outputs_and_refuses_bad_input(tmp_path, capsys) -> None:
    out = tmp_path / "eval"
    assert main(["--agents", "heuristic", "random", "--players", "2", "--games", "4",
                 "--no-progress", "--out", str(out)]) == 0
    summary = json.loads((out / "results.json").read_text())
    assert summary["config"]["game"] == "circles" and len(summary["games"]) == 4
    assert (out / "summary.csv").read_text().startswith("name,games,wins")
    for argv, message in ((["--agents", "mcts:5"], "unknown Circles agent spec"),
                          (["--agents", "random", "--games", "0"], "games must be"),
                          (["--agents", "random", "--players", "6"], "invalid choice"),
                          (["--agents", "random", "random", "random"], "only 2 seats")):
        if message == "only 2 seats":
            argv = [*argv, "--players", "2"]
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1


def test_mean_wealth_is_the_score() -> None:
    result = run_tournament(["random"], num_players=4, games=4, seed=1, progress=False,
                            game="circles")
    wealth = np.mean([s for o in result.games for s in o["scores"]])
    assert result.agents[0].mean_score == pytest.approx(wealth)


def test_make_main_names_the_calling_program(capsys) -> None:
    from moonriver_env.training.circles_eval import make_main

    with pytest.raises(SystemExit) as exc:
        make_main("moonriver-eval --game circles")(["--agents", "greedy"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.startswith("moonriver-eval --game circles: error: unknown")


def test_moonriver_eval_hands_game_circles_over(tmp_path, capsys) -> None:
    """``moonriver-eval --game circles`` runs a Circles tournament; bad input is one line."""
    out = tmp_path / "res"
    assert evaluate.main(["--game", "circles", "--agents", "heuristic", "random", "--players",
                          "2", "--games", "6", "--no-progress", "--out", str(out)]) == 0
    rows = json.loads((out / "results.json").read_text())
    assert "circles" in capsys.readouterr().out and rows
    for argv in (["--game=circles", "--agents", "greedy"], ["--game", "chess", "--agents", "x"]):
        with pytest.raises(SystemExit) as exc:
            evaluate.main(argv)
        assert exc.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "error:" in err[0]
