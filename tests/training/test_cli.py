"""The command lines as a new user meets them: one-line errors (exit 2), --debug tracebacks,
refused budgets and counts, output directories, tables, records, help texts, missing extras."""

from __future__ import annotations

import io
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from moonriver_env.agents.mcts import MCTSAgent
from moonriver_env.agents.registry import make_agent
from moonriver_env.training import evaluate, tournament
from moonriver_env.training.evaluate import agent_label, print_table
from moonriver_env.training.sb3 import train as train_ppo
from moonriver_env.training.sb3.train import TrainConfig
from moonriver_env.training.tournament import AgentSummary, TournamentResult

from moonriver_env.common.cli import describe
from moonriver_env.moonriver.rules import Game
from tests.helpers import HANG_GUARD


def one_error_line(capsys, prog: str) -> str:
    """The single line a failed CLI printed on stderr (and nothing on stdout)."""
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"{prog}: error: "), lines[0]
    assert "Traceback" not in captured.err
    return lines[0]


def exit_status(main, argv: list[str]) -> int:
    """A CLI's exit status, whether it returned it or raised SystemExit (argparse)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code)


# ----------------------------------------------------------------- MCTS budgets (defect 6)
@pytest.mark.parametrize("spec", ["mcts:nans", "mcts:infs", "mcts:-infs", "mcts:0s",
                                  "mcts:-1s", "mcts:0", "mcts:-5", "mcts:s", "mcts:1.5",
                                  "mcts:abc"])
def test_mcts_spec_refuses_bad_budgets(spec: str) -> None:
    allowed = r"(the budget must be mcts:SIMS|seconds must be a finite|simulations must be an)"
    with pytest.raises(ValueError, match=re.escape(f"agent spec {spec!r}: ") + allowed):
        make_agent(spec)


def test_mcts_spec_accepts_good_budgets() -> None:
    assert make_agent("mcts:0.25s").seconds == 0.25
    assert make_agent("mcts:7").simulations == 7
    assert make_agent("mcts").simulations == 100


@pytest.mark.parametrize("kwargs", [{"seconds": math.nan}, {"seconds": math.inf},
                                    {"seconds": 0.0}, {"seconds": -1.0}, {"seconds": True},
                                    {"seconds": "1"}, {"simulations": 0},
                                    {"simulations": -1}, {"simulations": 2.5},
                                    {"simulations": True}])
def test_mcts_constructor_refuses_bad_budgets(kwargs: dict) -> None:
    with pytest.raises(ValueError, match="must be"):
        MCTSAgent(**kwargs)


def test_eval_with_nan_budget_fails_fast_in_a_subprocess() -> None:
    proc = subprocess.run([sys.executable, "-m", "moonriver_env.training.evaluate", "--agents",
                           "mcts:nans", "random", "--games", "1", "--no-progress"],
                          capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("moonriver-eval: error: agent spec 'mcts:nans': seconds "
                                   "must be a finite number > 0, got nan")


# ----------------------------------------------------------------------- moonriver-eval
@pytest.mark.parametrize("argv, message", [
    (["--games", "0"], "--games: expected an integer >= 1, got 0"),
    (["--games", "-3"], "--games: expected an integer >= 1, got -3"),
    (["--seed", "-1"], "--seed: expected an integer >= 0, got -1"),
    (["--workers", "0"], "--workers: expected an integer >= 1, got 0"),
    (["--players", "5"], "--players: invalid choice"),
])
def test_eval_refuses_bad_counts(capsys, argv: list[str], message: str) -> None:
    assert exit_status(evaluate.main, ["--agents", "random", *argv]) == 2
    assert message in one_error_line(capsys, "moonriver-eval")


def test_eval_refuses_more_agents_than_seats(capsys) -> None:
    argv = ["--agents", "random", "greedy", "random", "--players", "2", "--games", "2"]
    assert exit_status(evaluate.main, argv) == 2
    assert "3 agents but only 2 seats" in one_error_line(capsys, "moonriver-eval")
    with pytest.raises(ValueError, match="3 agents but only 2 seats"):
        tournament.run_tournament(["random"] * 3, num_players=2, games=2, progress=False)


def test_eval_unknown_spec_and_missing_checkpoint_are_one_line(capsys, tmp_path) -> None:
    assert evaluate.main(["--agents", "rando", "--games", "1", "--no-progress"]) == 2
    line = one_error_line(capsys, "moonriver-eval")
    assert "unknown agent spec 'rando'; allowed: random, greedy" in line
    missing = str(tmp_path / "nope.zip")
    assert evaluate.main(["--agents", f"policy:{missing}", "--games", "1"]) == 2
    line = one_error_line(capsys, "moonriver-eval")
    assert line.endswith(f"policy checkpoint not found: {missing}")
    assert ".zip.zip" not in line


def test_eval_help_names_every_agent_spec(capsys) -> None:
    from moonriver_env.agents.registry import SPECS

    assert exit_status(evaluate.main, ["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for spec in SPECS:
        assert spec in text.replace("- ", "-"), spec


def test_debug_flag_shows_the_traceback(capsys, tmp_path) -> None:
    from moonriver_env.training import plot_curve

    with pytest.raises(ValueError, match="unknown agent spec"):
        evaluate.main(["--agents", "rando", "--games", "1", "--debug"])
    with pytest.raises(ValueError, match="setting gamma must be"):
        train_ppo.main(["--gamma", "2", "--out", str(tmp_path / "run"), "--debug"])
    with pytest.raises(FileNotFoundError):
        train_ppo.main(["--config", str(tmp_path / "none.toml"), "--debug"])
    with pytest.raises(Exception, match="run directory not found"):
        plot_curve.main([str(tmp_path / "none"), "--out", str(tmp_path / "c.png"), "--debug"])


def test_records_from_parallel_workers(tmp_path) -> None:
    records = tmp_path / "records"
    assert evaluate.main(["--agents", "random", "greedy", "--players", "2", "--games", "4",
                          "--workers", "2", "--no-progress", "--save-records",
                          str(records)]) == 0
    assert len(os.listdir(records)) == 4
    for name in os.listdir(records):
        assert Game.from_record(json.loads((records / name).read_text())).is_over


def test_failed_eval_leaves_no_output_directories(capsys, tmp_path, monkeypatch) -> None:
    real = tournament.play_game

    def crash_on_second(task):
        if task[0] == 1:
            raise RuntimeError("agent crashed")
        return real(task)

    monkeypatch.setattr(tournament, "play_game", crash_on_second)
    out, records = tmp_path / "out", tmp_path / "records"
    status = evaluate.main(["--agents", "random", "--players", "2", "--games", "3",
                            "--no-progress", "--out", str(out), "--save-records", str(records)])
    assert status == 1
    assert "internal error: RuntimeError: agent crashed" in one_error_line(capsys,
                                                                           "moonriver-eval")
    assert not out.exists() and not records.exists()
    assert os.listdir(tmp_path) == []


def test_eval_refuses_an_output_path_that_is_a_file(capsys, tmp_path) -> None:
    target = tmp_path / "taken"
    target.write_text("keep me")
    assert evaluate.main(["--agents", "random", "--games", "1", "--no-progress", "--out",
                          str(target)]) == 2
    assert "exists and is not a directory" in one_error_line(capsys, "moonriver-eval")
    assert target.read_text() == "keep me"


def test_saved_records_replay(capsys, tmp_path) -> None:
    records = tmp_path / "records"
    assert evaluate.main(["--agents", "random", "greedy", "--players", "2", "--games", "3",
                          "--seed", "5", "--no-progress", "--save-records", str(records)]) == 0
    names = sorted(os.listdir(records))
    assert names == ["game_00000.json", "game_00001.json", "game_00002.json"]
    for g, name in enumerate(names):
        record = json.loads((records / name).read_text())
        assert record["seed"] == 5 + g and record["over"]
        assert Game.from_record(record).is_over
    from moonriver_env.__main__ import main as cli

    capsys.readouterr()
    assert cli(["replay", str(records / names[0]), "--no-step"]) == 0
    assert "final scores:" in capsys.readouterr().out


def _result(name: str) -> TournamentResult:
    return TournamentResult(
        config={"games": 1000, "num_players": 4, "mode": "base"},
        agents=[AgentSummary(name=name, games=1000, wins=512.5, win_rate=0.5125,
                             win_ci_low=0.4815, win_ci_high=0.5434, mean_score=101.5,
                             mean_margin=-12.3, rating=-13.21, rating_mu=25.2,
                             rating_sigma=12.8),
                AgentSummary(name="greedy", games=1000, rating=1.5)])


def _table(result: TournamentResult, width: int = 80) -> list[str]:
    from rich.console import Console

    out = io.StringIO()
    print_table(result, Console(file=out, width=width))
    return out.getvalue().splitlines()


def test_results_table_fits_80_columns_one_line_per_agent() -> None:
    name = "rllib:/tmp/pytest-of-root/pytest-11/test_train_interrupt_resume_a0/run"
    lines = _table(_result(name))
    assert max(len(line) for line in lines) <= 80
    assert len(lines) == 6  # title, header, rule, two agents, caption
    row = next(line for line in lines if line.startswith("rllib:"))
    assert row.split()[0] == "rllib:.../run"  # the path's last part; results.json: all of it
    for cell in ("1000", "0.512", "0.48-0.54", "101.5", "-12.3", "-13.21"):
        assert cell in row.split("  ") or f" {cell}" in row, (cell, row)
    short = next(line for line in _table(_result("mcts:20")) if line.startswith("mcts:20"))
    assert "25.2 ± 12.8" in short  # a short name leaves room for every column


def test_results_table_leaves_out_mu_sigma_for_a_long_name_without_a_path() -> None:
    lines = _table(_result("pretrained+puct:2p-base:30"))
    row = next(line for line in lines if line.startswith("pretrained+puct"))
    assert row.split()[0] == "pretrained+puct:2p-base:30" and "±" not in row
    assert max(len(line) for line in lines) <= 80


def test_results_table_keeps_every_column_when_the_console_is_wide() -> None:
    name = "policy:runs/ppo_4p_base/checkpoints/ppo_2400000_steps.zip"
    row = next(line for line in _table(_result(name), 160) if line.startswith("policy:"))
    assert row.split()[0] == name and "25.2 ± 12.8" in row


def test_agent_labels_keep_the_last_parts_of_a_path() -> None:
    assert agent_label("greedy", 5) == "greedy"  # no path: as it is
    assert agent_label("policy:runs/a/b/final_model.zip", 40) == \
        "policy:runs/a/b/final_model.zip"
    assert agent_label("policy:runs/a/b/final_model.zip", 28) == "policy:.../b/final_model.zip"
    assert agent_label("policy:runs/a/b/final_model.zip", 26) == "policy:.../final_model.zip"
    assert agent_label("rllib:/tmp/x/run", 12) == "rllib:.../run"


def test_results_table_when_piped() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.run([sys.executable, "-m", "moonriver_env.training.evaluate", "--agents",
                           "random", "greedy", "--players", "2", "--games", "2",
                           "--no-progress"], capture_output=True, text=True, timeout=HANG_GUARD,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "\x1b[" not in proc.stdout  # no colour codes in a pipe
    assert any(line.startswith("greedy ") for line in lines)


@pytest.fixture(scope="module")
def policy_4p(tmp_path_factory) -> str:
    """An untrained MaskablePPO model saved the way moonriver-train saves, tagged 4 players."""
    import torch
    from sb3_contrib import MaskablePPO

    from moonriver_env.moonriver.gym_env import MoonRiverGymEnv

    torch.set_num_threads(1)
    model = MaskablePPO("MlpPolicy", MoonRiverGymEnv(num_players=4), n_steps=16, batch_size=16,
                        policy_kwargs={"net_arch": [8]}, device="cpu", seed=0)
    model.moonriver = {"env": "MoonRiver-v0", "num_players": 4, "mode": "base"}
    path = str(tmp_path_factory.mktemp("policy") / "p4.zip")
    model.save(path)
    return path


def test_eval_warns_for_a_policy_trained_for_another_player_count(capsys, policy_4p) -> None:
    assert evaluate.trained_for(policy_4p)["num_players"] == 4
    assert evaluate.main(["--agents", f"policy:{policy_4p}", "random", "--players", "2",
                          "--games", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert (f"moonriver-eval: warning: policy:{policy_4p} was trained with num_players=4, "
            f"this tournament has num_players=2") in err
    assert evaluate.variant_warnings([f"policy:{policy_4p}"], 4, "base") == []


@pytest.mark.parametrize(("spec", "argv", "variant"), [
    ("pretrained:4p-base", ["--players", "2"], "2-player base"),
    ("pretrained+puct:5", ["--players", "3"], "3-player base"),
    ("pretrained:2p-base", ["--players", "2", "--mode", "legends", "--scenario", "2"],
     "2-player Legends scenario 2"),
])
def test_eval_refuses_pretrained_weights_of_another_variant(capsys, spec, argv,
                                                              variant) -> None:
    assert evaluate.main(["--agents", spec, "greedy", *argv, "--games", "2",
                          "--no-progress"]) == 2
    line = one_error_line(capsys, "moonriver-eval")
    assert f"agent spec {spec!r} cannot play {variant}: its weights were trained for" in line
    assert "base only" in line and "az:PATH.npz" in line
    assert evaluate.variant_warnings([spec], 2, "base") == []  # refused, not warned


def test_player_count_also_read_from_the_run_config(tmp_path) -> None:
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"num_players": 3, "mode": "base"}))
    checkpoint = run / "checkpoints" / "ppo_10_steps.zip"
    checkpoint.write_bytes(b"not a zip")
    assert evaluate.trained_for(str(checkpoint)) == {"num_players": 3, "mode": "base"}
    assert len(evaluate.variant_warnings([f"policy:{checkpoint}"], 2, "base")) == 1
    assert evaluate.trained_for(str(tmp_path / "elsewhere.zip")) is None


def test_corrupt_checkpoint_is_one_line(capsys, tmp_path, policy_4p) -> None:
    import zipfile

    not_zip = tmp_path / "garbage.zip"
    not_zip.write_text("garbage")
    no_model = tmp_path / "empty.zip"
    with zipfile.ZipFile(no_model, "w") as archive:
        archive.writestr("readme.txt", "no model here")
    truncated = tmp_path / "truncated.zip"
    truncated.write_bytes(Path(policy_4p).read_bytes()[:300])
    for path in (not_zip, no_model, truncated):
        assert evaluate.main(["--agents", f"policy:{path}", "--games", "1"]) == 2
        line = one_error_line(capsys, "moonriver-eval")
        assert f"agent spec 'policy:{path}': cannot load the checkpoint" in line
    message, status = describe(zipfile.BadZipFile("File is not a zip file"))
    assert status == 2 and message.startswith("not a valid checkpoint .zip")


# ---------------------------------------------------------------------- moonriver-train
def test_every_train_flag_has_help_with_default_and_allowed_values() -> None:
    parser = train_ppo.build_parser()
    options = {a.dest: a for a in parser._actions if a.option_strings}
    allowed = re.compile(r"one of |>=|>0|in \[|true or false|list|finite|path")
    for f in train_ppo.fields(TrainConfig):
        text = options[f.name].help
        assert "(default: " in text, f.name
        assert allowed.search(text), (f.name, text)
    assert "(default: 4)" in options["num_players"].help
    assert "one of mlp, cnn" in options["policy"].help


@pytest.mark.parametrize("name, text, message", [
    ("broken.toml", "timesteps = \n", "is not valid TOML"),
    ("c.yaml", "timesteps: 5\n", "must be .toml or .json, got .yaml"),
    ("typo.toml", "timestep = 5\n", "unknown training settings ['timestep']"),
    ("bad.json", "{\"seed\": 1,}", "is not valid JSON"),
    ("list.json", "[1, 2]", "must hold a table of settings"),
    ("type.toml", "timesteps = \"many\"\n", "setting timesteps must be an integer >=1"),
    ("gamma.toml", "gamma = 1.5\n", "setting gamma must be a number in [0, 1]"),
    ("mode.toml", "mode = \"advanced\"\n", "setting mode must be one of base, legends"),
    ("spec.toml", "opponents = [\"mcts:nans\"]\n", "agent spec 'mcts:nans'"),
    ("arch.toml", "net_arch = []\n", "setting net_arch must be a non-empty list"),
])
def test_bad_config_files_are_one_line(capsys, tmp_path, name, text, message) -> None:
    path = tmp_path / name
    path.write_text(text)
    out = tmp_path / "run"
    assert train_ppo.main(["--config", str(path), "--out", str(out)]) == 2
    assert message in one_error_line(capsys, "moonriver-train")
    assert not out.exists()


def test_train_refuses_bad_flags_and_missing_files(capsys, tmp_path) -> None:
    out = str(tmp_path / "run")
    assert exit_status(train_ppo.main, ["--gamma", "nan", "--out", out]) == 2
    assert "setting gamma must be a number in [0, 1], got nan" in one_error_line(
        capsys, "moonriver-train")
    assert exit_status(train_ppo.main, ["--timesteps", "ten"]) == 2
    assert "argument --timesteps: invalid int value" in one_error_line(capsys,
                                                                      "moonriver-train")
    assert exit_status(train_ppo.main, ["--config", str(tmp_path / "none.toml")]) == 2
    assert "No such file or directory" in one_error_line(capsys, "moonriver-train")
    assert exit_status(train_ppo.main, ["--resume", "nope.zip", "--out", out]) == 2
    line = one_error_line(capsys, "moonriver-train")
    assert line.endswith("checkpoint to resume from not found: nope.zip")
    assert not os.path.exists(out)


def test_projected_timesteps_respect_the_time_limit() -> None:
    from moonriver_env.training.sb3.callbacks import projected_timesteps

    assert projected_timesteps(1_000_000, 0, 0.0, 60.0) == 1_000_000
    assert projected_timesteps(1_000_000, 1000, 10.0, 0.0) == 1_000_000  # no limit
    assert projected_timesteps(1_000_000, 1000, 10.0, 60.0) == 6000  # 100/s for 60 s
    assert projected_timesteps(1_000, 500, 10.0, 60.0) == 1_000  # target reached first
    assert projected_timesteps(1_000_000, 1000, 70.0, 60.0) == 1000  # past the limit


def _total(text: str) -> float:
    scale = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}
    number, suffix = re.fullmatch(r"([\d.]+)([kMG]?)", text).groups()
    return float(number) * scale[suffix]


class _TickingClock:
    """A ``time`` stand-in whose clock moves ``tick`` seconds per reading: the run's length
    is then a count of callback calls, the same on a fast and a slow machine."""

    def __init__(self, tick: float) -> None:
        self.now, self.tick = 0.0, tick

    def perf_counter(self) -> float:
        self.now += self.tick
        return self.now


def test_short_run_has_a_curve_and_a_bar_that_respects_max_minutes(tmp_path, capsys,
                                                                   monkeypatch) -> None:
    # Two clock readings per step (time limit, progress bar): 3 s at 10 ms a reading is
    # about 150 steps, whatever the machine's speed.
    from moonriver_env.training.sb3 import callbacks as sb3_callbacks

    clock = _TickingClock(0.01)  # one clock for the run's start and the callbacks
    monkeypatch.setattr(train_ppo, "time", clock)
    monkeypatch.setattr(sb3_callbacks, "time", clock)
    cfg = TrainConfig(num_players=2, timesteps=10**9, n_envs=1, n_steps=32, batch_size=32,
                      n_epochs=1, net_arch=(8,), eval_every=10**8, eval_games=1,
                      eval_opponents=("random",), checkpoint_every=10**8, max_minutes=0.05,
                      out=str(tmp_path), progress=True)
    model = train_ppo.train(cfg)
    assert 100 <= model.num_timesteps <= 200
    steps = np.load(tmp_path / "eval_random" / "evaluations.npz")["timesteps"]
    assert steps[0] == 1 and steps[-1] == model.num_timesteps and len(steps) >= 2
    err = capsys.readouterr().err
    totals = [_total(t) for t in re.findall(r"\| *[\d.]+[kMG]?/([\d.]+[kMG]?) \[", err)]
    assert totals and totals[0] == 1e9  # before the first step: the target
    assert min(totals[1:]) < 1e6  # then: what the rate reaches within 3 s
    assert evaluate.trained_for(str(tmp_path / "final_model.zip"))["num_players"] == 2


# --------------------------------------------------------------------- missing extras
BLOCK = "import sys; sys.modules[{mod!r}] = None; "


@pytest.mark.parametrize("module, extra, code", [
    ("torch", "train", "from moonriver_env.training.sb3.train import main; "
                       "sys.exit(main(['--timesteps', '10', '--out', {out!r}]))"),
    ("rich", "eval", "from moonriver_env.training.evaluate import main; "
                     "sys.exit(main(['--agents', 'random', '--games', '1', '--out', {out!r}]))"),
    ("torch", "train", "from moonriver_env.training.evaluate import main; "
                       "sys.exit(main(['--agents', 'policy:{policy}', '--games', '1']))"),
    ("matplotlib", "train", "from moonriver_env.training.plot_curve import main; "
                            "sys.exit(main([{run!r}, '--out', {out!r} + '.png']))"),
])
def test_missing_extra_names_the_extra(tmp_path, module, extra, code, policy_4p) -> None:
    out = str(tmp_path / "out")
    program = BLOCK.format(mod=module) + code.format(out=out, policy=policy_4p,
                                                     run=str(_eval_run(tmp_path)))
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=HANG_GUARD)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1
    assert f'pip install "moonriver-env[{extra}]"' in proc.stderr
    assert f"optional dependency {module!r}" in proc.stderr
    assert "No module named" not in proc.stderr and "Traceback" not in proc.stderr
    assert not os.path.exists(out)



# --------------------------------------------------------------- replay (defect 7)
def _unfinished_record(decisions: int = 40) -> dict:
    from moonriver_env.moonriver.rules import GameConfig

    game = Game(GameConfig(num_players=3), seed=2)
    rng = np.random.default_rng(0)
    for _ in range(decisions):
        legal = game.legal_action_ids()
        game.apply(int(legal[rng.integers(legal.size)]))
    assert not game.is_over
    return game.to_record(include_seed=True)  # saved by its owner, to resume it


def test_replay_of_an_unfinished_record_says_so(capsys, tmp_path) -> None:
    from moonriver_env.__main__ import main as cli

    path = tmp_path / "unfinished.json"
    path.write_text(json.dumps(_unfinished_record(40)))
    assert cli(["replay", str(path), "--no-step"]) == 0
    out = capsys.readouterr().out
    assert "=== decision 40/40" in out
    assert "the game is unfinished: the record ends after 40 decisions; running scores:" in out
    assert "final scores" not in out


@pytest.mark.parametrize("content, message", [
    (None, "No such file or directory: "),
    ("truncated", "is not a JSON game record (truncated or not JSON"),
    ("[1, 2]", "is not a game record: expected a JSON object"),
    ('{"format": "chess"}', "not a Moon River record"),
    (b"\xff\xfe{", "is not a JSON game record"),
])
def test_replay_of_a_bad_record_is_one_line(capsys, tmp_path, content, message) -> None:
    from moonriver_env.__main__ import main as cli

    path = tmp_path / "record.json"
    if content == "truncated":
        text = json.dumps(_unfinished_record(10))
        path.write_text(text[: len(text) // 2])
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    assert cli(["replay", str(path), "--no-step"]) == 2
    line = one_error_line(capsys, "python -m moonriver_env")
    assert message in line and str(path) in line


def test_replay_of_a_tampered_record_is_one_line(capsys, tmp_path) -> None:
    from moonriver_env.__main__ import main as cli

    record = _unfinished_record(12)
    decisions = [e for e in record["events"] if e["type"] == "decision" and not e.get("auto")]
    decisions[3]["action"] = 99_999
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(record))
    assert cli(["replay", str(path), "--no-step"]) == 2
    assert "does not replay" in one_error_line(capsys, "python -m moonriver_env")
    with pytest.raises(ValueError, match="does not replay"):
        cli(["replay", str(path), "--no-step", "--debug"])


# ---------------------------------------------------------------------- plot_curve
def _eval_run(tmp_path) -> str:
    """A run directory with two evaluation logs, as moonriver-train writes them."""
    run = tmp_path / "run"
    for name, rate in (("random", 0.2), ("greedy", -0.6)):
        (run / f"eval_{name}").mkdir(parents=True, exist_ok=True)
        results = np.full((3, 4), rate) + np.linspace(0, 0.6, 3)[:, None]
        np.savez(run / f"eval_{name}" / "evaluations.npz", timesteps=np.array([8, 1000, 2000]),
                 results=results, ep_lengths=np.full((3, 4), 90))
    return str(run)


def test_plot_curve_never_overwrites_without_force(capsys, tmp_path) -> None:
    from moonriver_env.training import plot_curve

    run = _eval_run(tmp_path)
    out = tmp_path / "curve.png"
    out.write_bytes(b"a tracked image")
    assert plot_curve.main([run, "--out", str(out)]) == 2
    assert "exists; choose another --out or pass --force" in one_error_line(capsys, plot_curve.PROG)
    assert out.read_bytes() == b"a tracked image"
    assert plot_curve.main([run, "--out", str(out), "--force"]) == 0
    assert out.read_bytes().startswith(b"\x89PNG")


def test_plot_curve_default_out_is_refused_when_present(capsys, tmp_path, monkeypatch) -> None:
    from moonriver_env.training import plot_curve

    run = _eval_run(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert plot_curve.main([run]) == 0
    first = (tmp_path / "learning_curve.png").read_bytes()
    assert plot_curve.main([run, "--title", "another"]) == 2
    assert (tmp_path / "learning_curve.png").read_bytes() == first


@pytest.mark.parametrize("argv, message", [
    (["{missing}"], "run directory not found"),
    (["{empty}"], "has no evaluations"),
    (["{run}", "--out", "curve.jpgx"], "--out must end in one of .png, .svg, .pdf"),
])
def test_plot_curve_bad_input_is_one_line(capsys, tmp_path, argv, message) -> None:
    from moonriver_env.training import plot_curve

    paths = {"missing": str(tmp_path / "missing"), "empty": str(tmp_path),
             "run": _eval_run(tmp_path)}
    argv = [a.format(**paths) for a in argv]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "c.png")]
    assert plot_curve.main(argv) == 2
    assert message in one_error_line(capsys, plot_curve.PROG)


def test_plot_curve_labels_are_not_clipped(tmp_path) -> None:
    import matplotlib.pyplot as plt
    from moonriver_env.training import plot_curve

    run = _eval_run(tmp_path)
    for title in (None, "A long custom title " * 8):
        fig = plot_curve.figure(run, title)
        fig.canvas.draw()
        assert plot_curve.clipped_axes(fig) == []
        labels = {t.get_text() for t in fig.findobj(plt.Text)}
        assert {"win rate (evaluation)", "timesteps", "vs random", "vs greedy"} <= labels
        plt.close(fig)


def test_eval_results_are_the_same_on_both_backends(tmp_path) -> None:
    results = {}
    for backend in ("core", "python"):
        out = tmp_path / backend
        assert evaluate.main(["--agents", "random", "greedy", "--players", "3", "--games", "4",
                              "--seed", "7", "--no-progress", "--backend", backend,
                              "--out", str(out)]) == 0
        results[backend] = json.loads((out / "results.json").read_text())
    assert results["core"]["config"].pop("backend") == "core"
    assert results["python"]["config"].pop("backend") == "python"
    assert results["core"] == results["python"]
    assert len(results["core"]["games"]) == 4


def test_eval_refuses_an_unknown_backend(capsys) -> None:
    assert exit_status(evaluate.main, ["--agents", "random", "--backend", "cpp"]) == 2
    assert "invalid choice: 'cpp'" in capsys.readouterr().err


def test_eval_help_describes_the_backend_flag(capsys) -> None:
    assert exit_status(evaluate.main, ["--help"]) == 0
    assert "--backend {core,python}" in capsys.readouterr().out


def test_replay_prints_the_same_on_both_backends(capsys, tmp_path) -> None:
    from moonriver_env.__main__ import main as cli

    path = tmp_path / "unfinished.json"
    path.write_text(json.dumps(_unfinished_record(25)))
    outs = {}
    for backend in ("core", "python"):
        assert cli(["replay", str(path), "--no-step", "--backend", backend]) == 0
        outs[backend] = capsys.readouterr().out
    assert "=== decision 25/25" in outs["core"]
    assert outs["core"] == outs["python"]


@pytest.mark.parametrize("backend", ["core", "python"])
def test_replay_of_a_tampered_record_is_one_line_on_either_backend(capsys, tmp_path,
                                                                  backend) -> None:
    from moonriver_env.__main__ import main as cli

    record = _unfinished_record(12)
    decisions = [e for e in record["events"] if e["type"] == "decision" and not e.get("auto")]
    decisions[3]["action"] = 99_999
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(record))
    assert cli(["replay", str(path), "--no-step", "--backend", backend]) == 2
    assert "does not replay" in one_error_line(capsys, "python -m moonriver_env")


def test_ctrl_c_stops_a_tournament_with_workers_in_one_line(tmp_path) -> None:
    """moonriver-eval --workers 2 under Ctrl-C (SIGINT to the process group, as a terminal
    sends it): one line, status 130, no worker traceback (the workers leave Ctrl-C to it)."""
    import signal
    import time

    from tests.helpers import HANG_GUARD, ctrl_c_as_in_a_terminal

    proc = subprocess.Popen(
        [sys.executable, "-m", "moonriver_env.training.evaluate", "--agents", "greedy", "greedy",
         "--players", "2", "--games", "100000", "--workers", "2"], cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=ctrl_c_as_in_a_terminal)
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    try:
        for _ in range(HANG_GUARD * 10):  # polls, not a time budget: a hang guard
            if proc.poll() is not None or len(children.read_text().split()) >= 2:
                break
            time.sleep(0.1)
        time.sleep(1.0)  # the workers are importing or playing: either way they ignore it
        assert proc.poll() is None, proc.communicate()
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "Traceback" not in err and "Error" not in err, err
    assert err.rstrip().endswith("moonriver-eval: interrupted")  # after the progress bar
    assert err.count("moonriver-eval") == 1
