"""The PettingZoo AEC environment: the ecosystem's checkers, determinism, rewards, errors."""

from __future__ import annotations

import copy
import functools
import itertools
import json
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from moonriver_env import moonriver_v0
from moonriver_env.moonriver.rules import NUM_ACTIONS, IllegalActionError
from tests.helpers import random_aec_play

VARIANTS = [(n, mode) for n in (2, 3, 4) for mode in ("base", "legends")]


@pytest.mark.parametrize(("num_players", "mode"), VARIANTS)
def test_pettingzoo_checkers(num_players: int, mode: str) -> None:
    make = functools.partial(moonriver_v0.env, num_players=num_players, mode=mode)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dict observations draw advisory warnings
        api_test(make(), num_cycles=1000, verbose_progress=False)
        seed_test(make, num_cycles=500)
        render_test(make)


def test_metadata_agents_and_spaces() -> None:
    env = moonriver_v0.env(num_players=3)
    env.reset(seed=0)
    assert env.metadata["name"] == "moonriver_v0"
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    sizes = {moonriver_v0.raw_env(num_players=n, mode=m).observation_space("player_0")
             ["observation"].shape for n, m in VARIANTS}
    assert len(sizes) == 1  # D is the same for every variant
    assert env.action_space("player_1").n == NUM_ACTIONS


def test_first_player_is_drawn_from_the_seed() -> None:
    firsts = set()
    for seed in range(20):
        env = moonriver_v0.raw_env(num_players=4)
        env.reset(seed=seed)
        firsts.add(env.agent_selection)
    assert len(firsts) > 1


def test_mask_is_zero_for_agents_not_to_act_and_at_the_end() -> None:
    env = moonriver_v0.raw_env(num_players=4)
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(60):
        actor = env.agent_selection
        for agent in env.agents:
            mask = env.observe(agent)["action_mask"]
            assert mask.any() == (agent == actor)
        legal = np.flatnonzero(env.observe(actor)["action_mask"])
        env.step(int(legal[rng.integers(legal.size)]))
    random_aec_play(env, rng)
    assert not env.agents  # everyone stepped out after termination


def test_same_seed_replays_identically_and_different_seeds_differ() -> None:
    records = []
    for seed in (5, 5, 6):
        env = moonriver_v0.env(num_players=4)
        env.reset(seed=seed)
        random_aec_play(env, np.random.default_rng(0))
        records.append(env.unwrapped.game_record())
    assert records[0] == records[1]
    assert records[0]["events"] != records[2]["events"]


@pytest.mark.parametrize("copier", [copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))],
                         ids=["deepcopy", "pickle"])
def test_copies_of_a_running_env_continue_identically(copier) -> None:
    env = moonriver_v0.raw_env(num_players=3, mode="legends")
    env.reset(seed=11)
    rng = np.random.default_rng(3)
    for _ in range(70):
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(legal[rng.integers(legal.size)]))
    twin = copier(env)
    np.testing.assert_array_equal(env.observe("player_1")["observation"],
                                  twin.observe("player_1")["observation"])
    random_aec_play(env, np.random.default_rng(9))
    random_aec_play(twin, np.random.default_rng(9))
    assert env.game_record() == twin.game_record()


def test_hidden_order_never_reaches_observations() -> None:
    env = moonriver_v0.raw_env(num_players=4)
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    for _ in range(40):
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(legal[rng.integers(legal.size)]))
    before = {a: env.observe(a)["observation"] for a in env.agents}
    env.game.determinize(np.random.default_rng(123))  # reshuffle box and pile only
    for agent in env.agents:
        np.testing.assert_array_equal(before[agent], env.observe(agent)["observation"])
    np.testing.assert_array_equal(env.state(), env.state())


def test_views_tile_the_observation() -> None:
    env = moonriver_v0.raw_env(num_players=2)
    env.reset(seed=0)
    views = env.observation_views
    stops = sorted((start, stop) for start, stop, _ in views.values())
    assert stops[0][0] == 0 and stops[-1][1] == env.observation_space("player_0")[
        "observation"].shape[0]
    assert all(a[1] == b[0] for a, b in itertools.pairwise(stops))
    start, stop, shape = views["ranches"]
    obs = env.observe("player_0")["observation"]
    planes = obs[start:stop].reshape(shape)
    assert planes.shape == (4, shape[1], 10, 5)
    assert planes[2:].sum() == 0  # 2 players: the two absent seats are zeros
    assert env.state().shape == obs.shape


def summed_rewards(env, seed: int) -> dict[str, float]:
    """Play a reset raw env to its end; every agent's rewards summed over all steps."""
    rng = np.random.default_rng(seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    while not all(env.terminations.values()):
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(legal[rng.integers(legal.size)]))
        for agent, reward in env.rewards.items():
            totals[agent] += reward
    return totals


@pytest.mark.parametrize("mode", moonriver_v0.REWARD_MODES)
def test_final_rewards_by_mode(mode: str) -> None:
    env = moonriver_v0.raw_env(num_players=4, reward=mode)
    env.reset(seed=4)
    totals = summed_rewards(env, 4)
    scores = [s.total for s in env.game.scores()]
    winners = env.game.winners()
    got = [totals[a] for a in env.possible_agents]
    if mode == "win":
        assert got == [1.0 if p in winners else -1.0 for p in range(4)]
    elif mode == "score":
        assert got == pytest.approx([s / 100 for s in scores])
    elif mode == "margin":
        assert got == pytest.approx([(s - max(scores[:p] + scores[p + 1:])) / 100
                                     for p, s in enumerate(scores)])
    else:
        assert sum(got) == pytest.approx(0.0)
        assert max(got) == pytest.approx(got[winners[0]])
        assert all(-1.0 <= r <= 1.0 for r in got)


def test_dense_shaping_telescopes_to_the_final_score() -> None:
    env = moonriver_v0.raw_env(num_players=3, reward="score", shaping=0.5)
    env.reset(seed=8)
    totals = summed_rewards(env, 8)
    for p, s in enumerate(env.game.scores()):
        assert totals[f"player_{p}"] == pytest.approx(1.5 * s.total / 100)


def test_raw_env_raises_on_illegal_actions_and_keeps_the_state() -> None:
    env = moonriver_v0.raw_env(num_players=4)
    env.reset(seed=0)
    before = env.game_record()
    illegal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="illegal action"):
        env.step(illegal)
    assert env.game_record() == before


def test_wrapped_env_ends_the_game_on_an_illegal_action() -> None:
    env = moonriver_v0.env(num_players=4)
    env.reset(seed=0)
    offender = env.agent_selection
    mask = env.observe(offender)["action_mask"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(int(np.flatnonzero(mask == 0)[0]))
    assert all(env.terminations.values())
    assert env._cumulative_rewards[offender] == -1.0


def test_bad_options_fail_with_clear_messages() -> None:
    with pytest.raises(ValueError, match="reward must be one of"):
        moonriver_v0.raw_env(reward="points")
    with pytest.raises(ValueError, match="num_players must be 2, 3 or 4"):
        moonriver_v0.raw_env(num_players=5)
    with pytest.raises(ValueError, match="render_mode"):
        moonriver_v0.raw_env(render_mode="svg")


def test_rgb_and_ansi_rendering() -> None:
    for mode, n in (("rgb_array", 2), ("ansi", 4)):
        env = moonriver_v0.raw_env(num_players=n, render_mode=mode)
        env.reset(seed=3)
        random_aec_play(env, np.random.default_rng(0), max_steps=200)
        out = env.render()
        if mode == "rgb_array":
            assert out.dtype == np.uint8 and out.ndim == 3 and out.shape[2] == 3
            assert len(np.unique(out.reshape(-1, 3), axis=0)) > 8  # more than a blank canvas
        else:
            assert "Player 3" in out and "saloon" in out


def test_record_and_replay_cli(tmp_path) -> None:
    env = moonriver_v0.env(num_players=2)
    env.reset(seed=1)
    random_aec_play(env, np.random.default_rng(1))
    path = tmp_path / "game.json"
    env.unwrapped.save_record(str(path))
    assert json.loads(path.read_text())["over"] is True
    out = subprocess.run([sys.executable, "-m", "moonriver_env", "replay", str(path),
                          "--no-step"], capture_output=True, text=True, check=True).stdout
    assert "final scores" in out and out.count("=== decision") > 100
