"""What a researcher meets at the main job's start and end, and moonriver-eval's Legends
scenario (issue 30, point 8): a short opening summary, the agent file written by the run, the
one command that measures it, and ``moonriver-eval --scenario``."""

from __future__ import annotations

import json
import shlex
from dataclasses import asdict
from pathlib import Path

import pytest

pytest.importorskip("torch")

from moonriver_env.agents.registry import make_agent
from moonriver_env.training import evaluate
from moonriver_env.training.fast import train as fast
from moonriver_env.training.fast.config import FastConfig
from moonriver_env.training.fast.train import eval_command, summary

from moonriver_env.play.cli import build_parser as play_parser
from tests.training.test_cli import exit_status, one_error_line
from tests.training.test_fast_training import _flags, _tiny


def test_the_main_job_opens_with_a_short_summary_and_ends_with_the_measuring_command(
        tmp_path, capsys) -> None:
    run = tmp_path / "run"
    assert fast.main([*_flags(run), "--quiet"]) == 0
    out = capsys.readouterr().out.splitlines()
    opening = summary(_tiny(run)).splitlines()
    assert out[:len(opening)] == opening and 3 <= len(opening) <= 6
    assert opening[0] == "moonriver-train-fast: 2-player base game, seed 0"
    assert all(len(line) <= 100 for line in opening[:-1])  # not a dump of every setting
    assert not any(line.startswith("training with") or "{" in line for line in out)
    assert any(line.startswith("  device:   CPU, 1 play process") for line in opening)
    assert opening[-1] == f"  output:   {run} (every setting: {run / 'config.json'})"
    # every setting, as JSON spells it (a tuple of variants is a list there)
    settings = json.loads(json.dumps(asdict(_tiny(run))))
    assert json.loads((run / "config.json").read_text()) == settings
    # the end: the agent file, written by the run, and the one command that measures it
    assert out[-2] == f"saved the network {run / 'final.pt'} and the agent {run / 'agent.npz'}"
    assert out[-1] == f"measure it: {eval_command(_tiny(run))}"
    agent = make_agent(f"pretrained:{run / 'agent.npz'}")
    assert agent.meta["num_players"] == 2 and agent.meta["samples"] > 0
    argv = shlex.split(out[-1].removeprefix("measure it: "))
    assert argv[0] == "moonriver-eval"
    argv[argv.index("--games") + 1], argv[argv.index("--workers") + 1] = "2", "1"  # tiny
    assert evaluate.main([*argv[1:], "--no-progress", "--out", str(tmp_path / "eval")]) == 0
    results = json.loads((tmp_path / "eval" / "results.json").read_text())
    assert results["agents"][0]["name"] == f"pretrained:{run / 'agent.npz'}"


def test_the_measuring_command_names_the_variant() -> None:
    cfg = FastConfig(num_players=3, mode="legends", out="runs/my run")
    assert eval_command(cfg) == ("moonriver-eval --agents 'pretrained:runs/my run/agent.npz' "
                                 "greedy greedy --players 3 --mode legends --games 1000 "
                                 "--seed 1000000000 --workers 2")
    assert eval_command(FastConfig(out="r")).startswith(
        "moonriver-eval --agents pretrained:r/agent.npz greedy greedy greedy --players 4 --games")


def test_the_summary_states_budget_and_device_in_words() -> None:
    lines = summary(FastConfig.load("training/configs/fast_4p_base.toml",
                                    {"out": "runs/fast_4p"})).splitlines()
    assert lines == [
        "moonriver-train-fast: 4-player base game, seed 0",
        "  budget:   imitation up to 659 iterations, then PPO up to 1,911 iterations; "
        "evaluation 200 games vs Greedy at the end",
        "  device:   CPU, 2 play processes x 1 torch thread, core backend, split PPO updates",
        "  settings: 32 games/iteration, lr 0.001, net 32/16 channels x 128 hidden, Greedy "
        "prior on",
        "  output:   runs/fast_4p (every setting: runs/fast_4p/config.json)"]
    capped = summary(_tiny("r", bc_iterations=0, eval_games=5)).splitlines()[1]
    assert capped == "  budget:   no imitation, PPO up to 3 iterations; evaluation 5 games vs " \
                     "Greedy at the end"
    # the progress lines show an evaluation only when one runs during training
    timed = summary(_tiny("r", minutes=30, bc_minutes=5, eval_games=5, eval_every=2))
    assert timed.splitlines()[1] == (
        "  budget:   imitation up to 2 iterations or 5 min, then PPO up to 3 iterations or "
        "30 min in all; evaluation 5 games vs Greedy every 2 PPO iterations and at the end")


def test_the_main_job_is_pinned_to_iterations_about_30_minutes_on_the_2_core_machine() -> None:
    """Its budget in iterations: the same agent on any machine; the counts are those of a
    30-minute run of the recipe on the idle 2-core machine (docs/training.md)."""
    cfg = FastConfig.load("training/configs/fast_4p_base.toml", {})
    assert (cfg.minutes, cfg.bc_minutes) == (0, 0)
    assert (cfg.bc_iterations, cfg.ppo_iterations) == (659, 1911)
    guide = Path("docs/training.md").read_text(encoding="utf-8")
    assert "steps in 1,911 iterations" in guide  # the 30-minute run of the shipped settings
    greedy = FastConfig.load("training/configs/fast_4p_greedy.toml", {})
    # the same imitation as the chain's first step, whose 30-minute run did 659 iterations
    imitation = ("bc_iterations", "bc_games", "bc_epochs", "bc_lr", "minibatch", "seed")
    assert [getattr(cfg, k) for k in imitation] == [getattr(greedy, k) for k in imitation]
    two = FastConfig.load("training/configs/fast_2p_base.toml", {})
    assert (two.minutes, two.bc_minutes) == (0, 0) and two.bc_iterations and two.ppo_iterations


def test_a_resumed_finished_run_names_its_agent(tmp_path, capsys) -> None:
    assert fast.main([*_flags(tmp_path), "--quiet"]) == 0
    capsys.readouterr()
    assert fast.main(["--resume", str(tmp_path)]) == 2
    line = one_error_line(capsys, "moonriver-train-fast")
    assert f"has finished; its agent is {tmp_path / 'agent.npz'}" in line


# ------------------------------------------------------------------ moonriver-eval --scenario
def test_eval_plays_every_game_in_the_given_legends_scenario(tmp_path, capsys) -> None:
    records = tmp_path / "records"
    assert evaluate.main(["--agents", "greedy", "random", "--players", "2", "--mode", "legends",
                          "--scenario", "3", "--games", "4", "--no-progress",
                          "--save-records", str(records), "--out", str(tmp_path / "out")]) == 0
    assert "4 games, 2 players, legends, scenario 3" in capsys.readouterr().out
    played = [json.loads(p.read_text())["scenario"] for p in records.iterdir()]
    assert played == [3, 3, 3, 3]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["config"]["scenario"] == 3 and results["config"]["mode"] == "legends"


def test_eval_without_a_scenario_draws_one_per_game(tmp_path) -> None:
    records = tmp_path / "records"
    assert evaluate.main(["--agents", "random", "--players", "2", "--mode", "legends",
                          "--games", "12", "--no-progress", "--save-records", str(records)]) == 0
    played = {json.loads(p.read_text())["scenario"] for p in records.iterdir()}
    assert len(played) > 1


@pytest.mark.parametrize("argv", [["--scenario", "3"], ["--mode", "base", "--scenario", "1"]])
def test_eval_refuses_a_scenario_in_the_base_game_as_moonriver_play_does(argv, capsys) -> None:
    assert exit_status(evaluate.main, ["--agents", "greedy", "--games", "1", *argv]) == 2
    line = one_error_line(capsys, "moonriver-eval")
    assert line == ("moonriver-eval: error: GameConfig.scenario applies only to mode='legends'; "
                    "leave it None in the base game (see moonriver-eval --help)")
    play_scenario = next(a for a in play_parser()._actions if a.dest == "scenario")
    eval_scenario = next(a for a in evaluate.build_parser()._actions if a.dest == "scenario")
    assert (eval_scenario.help, eval_scenario.choices, eval_scenario.type) == (
        play_scenario.help, play_scenario.choices, play_scenario.type)


@pytest.mark.parametrize("value", ["0", "5", "three"])
def test_eval_refuses_an_unknown_scenario_in_one_line(value, capsys) -> None:
    assert exit_status(evaluate.main, ["--agents", "greedy", "--mode", "legends",
                                       "--scenario", value]) == 2
    line = one_error_line(capsys, "moonriver-eval")
    assert line.startswith("moonriver-eval: error: argument --scenario: invalid ")
