"""The multi-agent batched interface (moonriver_env.moonriver.batch.multiagent) against single core
games stepped one by one and against the PettingZoo env's rewards."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from moonriver_env import moonriver_v0
from moonriver_env.moonriver.aec_env import final_rewards
from moonriver_env.moonriver.batch.multiagent import BatchState, MultiAgentGames
from moonriver_env.moonriver.core import Game
from moonriver_env.moonriver.rules.config import GameConfig


def _policy(state: BatchState, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) for row in state.legal_action_mask],
                    np.int64)


@pytest.mark.parametrize(("num_players", "reward"), [(2, "win"), (3, "rank"), (4, "margin")])
def test_arrays_agree_with_single_core_games_through_autoresets(num_players, reward):
    config = GameConfig(num_players=num_players)
    n, seed = 3, 21
    games = MultiAgentGames(n, config, reward=reward)
    state = games.reset(seed)
    refs = [Game(config, seed + g) for g in range(n)]
    rng = np.random.default_rng(5)
    ended = 0
    for _ in range(300):
        assert state.env_id.tolist() == list(range(n))
        assert state.legal_action_mask.dtype == np.bool_ and state.num_players == num_players
        for g, ref in enumerate(refs):
            assert state.current_player[g] == ref.current_player
            np.testing.assert_array_equal(state.observation[g],
                                          ref.observe(ref.current_player))
            np.testing.assert_array_equal(state.legal_action_mask[g], ref.legal_mask() != 0)
        actions = _policy(state, rng)
        movers = state.current_player.copy()
        state = games.step(actions)
        assert not state.truncated.any()
        for g, ref in enumerate(refs):
            ref.apply(int(actions[g]))
            assert bool(state.terminated[g]) == ref.is_over
            if not ref.is_over:
                assert not state.rewards[g].any()
                continue
            ended += 1
            np.testing.assert_allclose(state.rewards[g], final_rewards(ref, reward), atol=1e-6)
            np.testing.assert_array_equal(state.final_observation[g], ref.observe(movers[g]))
            refs[g] = Game(config, games.episode_seed(g))
            assert games.episode_seed(g) == ref.seed + n
    assert ended >= 2


def test_state_is_typed_and_copied_unless_asked():
    games = MultiAgentGames(2, GameConfig(num_players=2))
    first = games.reset(0)
    assert dataclasses.is_dataclass(first)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.current_player = None  # type: ignore[misc]
    kept = first.observation.copy()
    games.step(_policy(first, np.random.default_rng(0)))
    np.testing.assert_array_equal(first.observation, kept)  # a copy: the step left it alone
    shared = MultiAgentGames(2, GameConfig(num_players=2), copy=False)
    view = shared.reset(0)
    assert np.shares_memory(view.observation, shared.games.obs)
    assert np.shares_memory(view.legal_action_mask, shared.games.mask)


def test_rewards_total_as_the_pettingzoo_envs_for_the_same_games():
    """Each seat's rewards summed over a game equal what the PettingZoo env hands that seat
    in the same game (the same seed and actions), for every reward mode."""
    n, players = 3, 3
    for reward in ("win", "rank", "score", "margin"):
        envs = [moonriver_v0.env(num_players=players, reward=reward) for _ in range(n)]
        for g, env in enumerate(envs):
            env.reset(seed=100 + g)
        seeds = [env.unwrapped.game.seed for env in envs]
        games = MultiAgentGames(n, GameConfig(num_players=players), reward=reward,
                                autoreset=False)
        state = games.reset(0, seeds=seeds)
        got = np.zeros((n, players))
        want = np.zeros((n, players))
        rng = np.random.default_rng(3)
        while (state.current_player >= 0).any():
            actions = np.zeros(n, np.int64)
            for g, env in enumerate(envs):
                if state.current_player[g] < 0:
                    continue
                assert env.agent_selection == f"player_{state.current_player[g]}"
                mask = env.observe(env.agent_selection)["action_mask"]
                np.testing.assert_array_equal(mask != 0, state.legal_action_mask[g])
                np.testing.assert_array_equal(env.observe(env.agent_selection)["observation"],
                                              state.observation[g])
                actions[g] = rng.choice(np.flatnonzero(mask))
                env.step(int(actions[g]))
                want[g] += [env.rewards[a] for a in env.possible_agents]
            state = games.step(actions)
            got += state.rewards
        np.testing.assert_allclose(got, want, atol=1e-6)
        assert all(not env.agents or all(env.terminations.values()) for env in envs)


def test_seats_can_hold_built_in_opponents():
    config = GameConfig(num_players=3)
    games = MultiAgentGames(2, config)
    state = games.reset(4, seats=[("learner", "greedy", "random"),
                                  ("random", "learner", "learner")])
    for _ in range(200):
        assert state.current_player[0] == 0 and state.current_player[1] in (1, 2)
        state = games.step(_policy(state, np.random.default_rng(0)))
    assert games.games.builtin_decisions > 0


def test_bad_input_is_refused():
    games = MultiAgentGames(2, GameConfig(num_players=2))
    with pytest.raises(RuntimeError, match="reset"):
        games.state()
    with pytest.raises(ValueError, match="num_games"):
        MultiAgentGames(0)
    state = games.reset(0)
    with pytest.raises(ValueError, match="2 integer action ids"):
        games.step(np.zeros(3, np.int64))
    bad = np.flatnonzero(~state.legal_action_mask[0])[0]
    with pytest.raises(ValueError, match="in game 0 of the batch"):
        games.step(np.array([bad, np.flatnonzero(state.legal_action_mask[1])[0]]))


def test_rllibs_batched_env_is_built_on_the_interface():
    """RLlib's batched env steps one MultiAgentGames (per-game seats for fixed opponents):
    slot g plays the core games base + g + N * k, the seats of its slot."""
    pytest.importorskip("ray.rllib")
    from moonriver_env.training.rllib.env import BatchedMoonRiverEnv

    env = BatchedMoonRiverEnv(5, {"num_players": 3, "opponents": ["greedy", "random"],
                                  "opponent_prob": 0.7, "seed": 2})
    assert isinstance(env.games, MultiAgentGames) and len(set(env.seats)) > 1
    env.reset(seed=4)
    seeds = [env.episode_seed(i) for i in range(5)]
    assert seeds == list(range(seeds[0], seeds[0] + 5))
    for i in range(5):
        assert env.games.game(i).seed == seeds[i]
        learners = [p for p, kind in enumerate(env.seats[i]) if kind == "learner"]
        assert env.games.state().current_player[i] in learners
