"""Tournament runner and training script: seats, statistics, outputs, config, resume."""

from __future__ import annotations

import json
import re

import pytest
from moonriver_env.training.evaluate import main
from moonriver_env.training.sb3.train import TrainConfig, train
from moonriver_env.training.tournament import lineup_for, run_tournament, wilson_interval


def test_lineups_rotate_every_agent_through_every_seat() -> None:
    for agents, players in ((4, 4), (2, 4), (3, 3), (3, 4)):
        seats = [[0] * players for _ in range(agents)]
        for g in range(players * 3):
            for p, a in enumerate(lineup_for(g, agents, players)):
                seats[a][p] += 1
        for counts in seats:
            assert len(set(counts)) == 1  # every seat equally often


def test_wilson_interval() -> None:
    low, high = wilson_interval(60, 100)
    assert low == pytest.approx(0.502, abs=1e-3) and high == pytest.approx(0.691, abs=1e-3)
    assert wilson_interval(0, 10)[0] == 0.0


def test_tournament_is_reproducible_and_independent_of_workers(tmp_path) -> None:
    one = run_tournament(["random", "greedy"], num_players=3, games=6, seed=4, workers=1,
                         progress=False)
    two = run_tournament(["random", "greedy"], num_players=3, games=6, seed=4, workers=2,
                         progress=False)
    assert one.games == two.games
    assert [a.rating for a in one.agents] == [a.rating for a in two.agents]
    assert sum(a.wins for a in one.agents) == pytest.approx(6)
    main(["--agents", "random", "greedy", "--players", "2", "--games", "4", "--out",
          str(tmp_path), "--no-progress"])
    saved = json.loads((tmp_path / "results.json").read_text())
    assert len(saved["games"]) == 4
    assert (tmp_path / "summary.csv").read_text().startswith("name,games,wins")


def test_duplicate_deals_each_seed_once_per_seat_so_equal_agents_tie_exactly() -> None:
    for duplicate, seeds in ((True, [4, 4, 4, 5, 5, 5]), (False, [4, 5, 6, 7, 8, 9])):
        result = run_tournament(["random", "random", "random"], num_players=3, games=6, seed=4,
                                progress=False, duplicate=duplicate)
        assert [o["seed"] for o in result.games] == seeds
        shares = [a.win_rate for a in result.agents]
        if duplicate:  # each seat's agent reset with the seat's seed: the same game each time
            assert [o["lineup"] for o in result.games[:3]] == [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
            assert shares == pytest.approx([1 / 3] * 3)
            assert result.games[0]["scores"] == result.games[1]["scores"]
            assert result.config["duplicate"] is True
        else:
            assert shares != pytest.approx([1 / 3] * 3)  # measured: 0.667, 0.333, 0
    with pytest.raises(ValueError, match=r"games must be a multiple of 3 .*got 4"):
        run_tournament(["random"], num_players=3, games=4, progress=False, duplicate=True)
    two = run_tournament(["random", "greedy"], num_players=3, games=6, seed=4, progress=False,
                         duplicate=True)  # fewer agents than seats: each still in every seat
    assert [o["lineup"] for o in two.games[:3]] == [[0, 1, 0], [1, 0, 0], [0, 0, 1]]
    assert sum(a.wins for a in two.agents) == pytest.approx(6)


def test_eval_cli_duplicate_deals_and_refuses_a_count_off_the_seats(tmp_path, capsys) -> None:
    main(["--agents", "random", "random", "--players", "2", "--games", "4", "--duplicate",
          "--out", str(tmp_path), "--no-progress"])
    saved = json.loads((tmp_path / "results.json").read_text())
    assert [g["seed"] for g in saved["games"]] == [0, 0, 1, 1]
    assert saved["config"]["duplicate"] is True
    with pytest.raises(SystemExit):
        main(["--agents", "random", "--players", "4", "--games", "6", "--duplicate"])
    assert "multiple of 4 (the players), got 6" in capsys.readouterr().err


def test_train_config_sources(tmp_path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('timesteps = 123\nnet_arch = [32]\nopponents = ["greedy"]\n')
    cfg = TrainConfig.load(str(path), {"seed": 5, "n_envs": None})
    assert (cfg.timesteps, cfg.net_arch, cfg.opponents, cfg.seed) == (123, (32,), ("greedy",), 5)
    with pytest.raises(ValueError, match="unknown training settings"):
        TrainConfig.load(None, {"learning_rat": 1.0})
    with pytest.raises(ValueError, match="policy must be"):
        TrainConfig.load(None, {"policy": "transformer"})


def test_tiny_training_with_self_play_cnn_and_resume(tmp_path) -> None:
    cfg = TrainConfig(num_players=3, timesteps=256, n_envs=2, n_steps=64, batch_size=64,
                      n_epochs=1, net_arch=(16,), policy="cnn", self_play=True,
                      snapshot_every=128, snapshot_games=2, snapshot_threshold=0.0,
                      eval_every=128, eval_games=2, eval_opponents=("random",),
                      checkpoint_every=128, out=str(tmp_path), progress=False)
    model = train(cfg)
    assert model.num_timesteps >= 256
    assert (tmp_path / "final_model.zip").exists()
    snapshots = [p.name for p in (tmp_path / "snapshots").iterdir()]
    assert snapshots and all(re.fullmatch(r"snapshot_\d+\.zip", name) for name in snapshots)
    checkpoint = sorted((tmp_path / "checkpoints").iterdir())[-1]
    again = train(TrainConfig(**{**cfg.__dict__, "timesteps": 128}), resume=str(checkpoint))
    assert again.num_timesteps > model.num_timesteps - 1


def test_the_sb3_callbacks_stand_alone() -> None:
    """The recipe's callbacks are module-level classes a test can build on their own."""
    import math

    from moonriver_env.training.sb3.callbacks import Progress, SelfPlay, TimeLimit
    from moonriver_env.training.sb3.train import TrainConfig

    assert TimeLimit(deadline=0.0)._on_step() is False  # the deadline has passed
    assert TimeLimit(deadline=math.inf)._on_step() is True
    cfg = TrainConfig(snapshot_every=500)
    selfplay = SelfPlay(cfg, vec_env=None)
    assert (selfplay.next_check, selfplay.paths) == (500, [])
    selfplay.num_timesteps = 499  # before the first check nothing is played or saved
    assert selfplay._on_step() is True and selfplay.next_check == 500
    assert Progress(max_minutes=2.0, started=0.0).max_minutes == 2.0
