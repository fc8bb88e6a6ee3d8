"""One play loop in training/fast/rollout.py: ``play`` (per-game Games, either backend) and
``play_batched`` (the core's BatchedGames) both drive ``_play_table``."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from moonriver_env.training.fast import rollout

from moonriver_env.moonriver.backend import Encoder
from moonriver_env.moonriver.rules import NUM_ACTIONS, GameConfig


def test_both_ways_to_play_drive_the_one_loop(monkeypatch) -> None:
    seen = []
    real = rollout._play_table

    def spy(games, *args, **kwargs):
        seen.append(type(games).__name__)
        return real(games, *args, **kwargs)

    monkeypatch.setattr(rollout, "_play_table", spy)
    rng = np.random.default_rng(0)
    rollout.play(rollout.new_games(2, 2, "base", rng, backend="python"),
                 [["greedy", "random"]] * 2, {}, rng, Encoder(), record=None, label_greedy=True)
    rollout.play_batched([1, 2], [["greedy", "random"]] * 2, {}, rng,
                         GameConfig(num_players=2), record=None, label_greedy=True)
    assert seen == ["_GameList", "BatchedGames"]


@pytest.mark.parametrize("backend", ["python", "core"])
def test_play_plays_random_seats_and_records_arrays_as_play_batched(backend) -> None:
    rng = np.random.default_rng(3)
    games = rollout.new_games(2, 2, "base", rng, backend=backend)
    batch = rollout.play(games, [["greedy", "random"], ["random", "greedy"]], {}, rng,
                         Encoder(), record=None, label_greedy=True)
    assert all(g.is_over for g in games)
    assert {seat for _, seat in batch.keys} == {0, 1}  # only Greedy's seats are labelled
    assert all(games[i].num_players == 2 and seat == (0 if i == 0 else 1)
               for i, seat in batch.keys)
    assert isinstance(batch.obs, np.ndarray) and batch.actions.shape == (len(batch), NUM_ACTIONS)
    batched, _ = rollout.play_batched([5, 6], [["greedy", "random"]] * 2, {}, rng,
                                      GameConfig(num_players=2), record=None,
                                      label_greedy=True)
    assert type(batch.obs) is type(batched.obs) and batch.obs.dtype == batched.obs.dtype


def test_a_role_naming_no_network_is_refused_in_both() -> None:
    rng = np.random.default_rng(1)
    with pytest.raises(ValueError, match=r"role 'snap' names no network \(networks: \[\]\)"):
        rollout.play(rollout.new_games(1, 2, "base", rng), [["snap", "greedy"]], {}, rng,
                     Encoder())
    with pytest.raises(ValueError, match=r"role 'snap' names no network \(networks: \[\]\)"):
        rollout.play_batched([1], [["snap", "greedy"]], {}, rng, GameConfig(num_players=2))
