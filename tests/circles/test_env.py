"""circles_far_west_v0 and the single-agent wrapper: checkers, spaces, rewards, views, images."""

from __future__ import annotations

import functools
import warnings

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import moonriver_env  # noqa: F401  (registers CirclesFarWest-v0)
from moonriver_env import circles_far_west_v0
from moonriver_env.circles import CirclesGame, IllegalActionError, Space
from moonriver_env.circles.gym_env import CirclesGymEnv
from tests.helpers import check_gym_env, random_aec_play


def play_to_end(env, rng: np.random.Generator) -> None:
    """Random masked play until the game is over (before the done agents step out)."""
    while not env.terminations[env.agent_selection]:
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(legal[rng.integers(legal.size)]))


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_pettingzoo_checkers(num_players: int, capsys) -> None:
    make = functools.partial(circles_far_west_v0.env, num_players=num_players)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dict observations draw advisory warnings
        api_test(make(), num_cycles=1000, verbose_progress=False)
        seed_test(make, num_cycles=500)
        render_test(make)
    capsys.readouterr()  # render_test prints the ansi frames


def test_one_action_and_observation_space_for_every_player_count() -> None:
    envs = [circles_far_west_v0.raw_env(num_players=n) for n in range(2, 6)]
    assert {e.action_space("player_0").n for e in envs} == {87}
    shapes = {e.observation_space("player_1")["observation"].shape for e in envs}
    assert shapes == {(envs[0].encoder.size,)}
    assert envs[3].possible_agents == [f"player_{p}" for p in range(5)]
    assert envs[0].metadata["name"] == "circles_far_west_v0"


def test_mask_is_zero_for_agents_not_to_act_and_at_the_end() -> None:
    env = circles_far_west_v0.raw_env(num_players=4)
    rng = np.random.default_rng(0)
    others_acted = 0
    for seed in range(10):
        env.reset(seed=seed)
        while not env.terminations[env.agent_selection]:
            actor = env.agent_selection
            others_acted += actor != env.possible_agents[env.game.owner]  # stakes, throws
            for agent in env.agents:
                assert env.observe(agent)["action_mask"].any() == (agent == actor)
            legal = np.flatnonzero(env.observe(actor)["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
        assert all(not env.observe(a)["action_mask"].any() for a in env.agents)
    assert others_acted > 0


def test_observation_views_are_seat_relative() -> None:
    env = circles_far_west_v0.raw_env(num_players=3)
    env.reset(seed=5)
    game = env.game
    game.money = [1, 7, 13]
    game.deposit = [0, 4, 0]
    views = env.observation_views
    start, stop, shape = views["players"]
    cap = game.config.money_cap
    for p, agent in enumerate(env.possible_agents):
        players = env.observe(agent)["observation"][start:stop].reshape(shape)
        for rel in range(3):
            q = (p + rel) % 3
            assert players[rel, 1] == pytest.approx(game.money[q] / cap)
            assert players[rel, 5] == pytest.approx(game.deposit[q] / cap)
        assert not players[3:].any()  # seats beyond the players are zero
    obs = env.observe("player_0")["observation"]
    layout = obs[slice(*views["layout"][:2])].reshape(views["layout"][2])
    assert layout[0, int(Space.RANCH)] == 1.0 and layout[10, int(Space.SALOON)] == 1.0
    assert obs[views["marble"][0] + game.marble] == 1.0
    np.testing.assert_array_equal(env.state(), env.observe("player_0")["observation"])


def test_rewards_sole_and_shared_winners() -> None:
    env = circles_far_west_v0.raw_env(num_players=3)
    env.reset(seed=1)
    play_to_end(env, np.random.default_rng(1))
    game = env.game
    assert [env.rewards[a] for a in env.possible_agents] == game.returns()
    assert sorted(game.returns()) == [-1.0, -1.0, 1.0]
    assert env.infos["player_0"]["end_reason"] == game.end_reason
    # A shared win at the turn cap: its winners get 0.
    env = circles_far_west_v0.raw_env(num_players=2, max_turns_per_player=1, start_silver=4)
    for seed in range(50):
        env.reset(seed=seed)
        play_to_end(env, np.random.default_rng(seed))
        if len(env.game.winners()) == 2:
            assert [env.rewards[a] for a in env.possible_agents] == [0.0, 0.0]
            break
    else:
        pytest.fail("no shared win in 50 two-turn games")


def test_illegal_action_raw_raises_and_wrapped_ends_the_game() -> None:
    raw = circles_far_west_v0.raw_env(num_players=2)
    raw.reset(seed=0)
    record = raw.game_record()
    with pytest.raises(IllegalActionError):
        raw.step(raw.codec.PASS)  # no pass at a flick
    assert raw.game_record() == record
    env = circles_far_west_v0.env(num_players=2)
    env.reset(seed=0)
    offender = env.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(raw.codec.PASS)
    assert all(env.terminations.values())
    assert env.rewards[offender] == -1.0


def test_reset_seed_is_reproducible() -> None:
    a, b = circles_far_west_v0.raw_env(num_players=4), circles_far_west_v0.raw_env(num_players=4)
    a.reset(seed=42)
    b.reset(seed=42)
    rng_a, rng_b = np.random.default_rng(0), np.random.default_rng(0)
    assert random_aec_play(a, rng_a) == random_aec_play(b, rng_b)
    assert a.game_record() == b.game_record()
    CirclesGame.from_record(a.game_record())


def test_rgb_array_and_ansi_rendering(tmp_path) -> None:
    from PIL import Image

    env = circles_far_west_v0.raw_env(num_players=5, render_mode="rgb_array")
    env.reset(seed=2)
    image = env.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    marble_blue = np.all(image == (30, 90, 200), axis=2).sum()
    assert marble_blue > 30  # the marble is drawn
    before = image.copy()
    random_aec_play(env, np.random.default_rng(2))
    assert not np.array_equal(env.render(), before)
    Image.fromarray(image).save(tmp_path / "circles.png")
    text = circles_far_west_v0.raw_env(num_players=2, render_mode="ansi")
    text.reset(seed=2)
    assert "ring" in text.render() and "(o)" in text.render()


def test_bad_options_are_clear_errors() -> None:
    with pytest.raises(ValueError, match=r"num_players must be 2\.\.5"):
        circles_far_west_v0.env(num_players=6)
    with pytest.raises(ValueError, match="render_mode must be None or one of"):
        circles_far_west_v0.env(render_mode="pygame")
    with pytest.raises(TypeError):
        circles_far_west_v0.env(colour="red")


# ---------------------------------------------------------------- single-agent wrapper
@pytest.mark.parametrize("num_players", [2, 5])
def test_gymnasium_and_sb3_checkers(num_players: int) -> None:
    env = gymnasium.make("CirclesFarWest-v0", num_players=num_players, illegal="penalty")
    check_gym_env(env.unwrapped)


def test_wrapper_episode_reward_and_masks() -> None:
    env = CirclesGymEnv(num_players=3, seat=1)
    rng = np.random.default_rng(0)
    for seed in range(6):
        obs, info = env.reset(seed=seed)
        assert info["seat"] == 1 and env.game.current_player == 1
        done, rewards = False, []
        while not done:
            legal = np.flatnonzero(env.action_masks())
            obs, reward, done, truncated, info = env.step(int(legal[rng.integers(legal.size)]))
            assert not truncated and env.observation_space.contains(obs)
            rewards.append(reward)
        assert rewards[-1] == env.game.returns()[1] and sum(rewards[:-1]) == 0.0
        assert env.action_masks().all() and info["winners"] == env.game.winners()
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(0)


def test_wrapper_illegal_policies_and_opponents() -> None:
    from moonriver_env.agents.circles_heuristic import CirclesHeuristicAgent

    env = CirclesGymEnv(num_players=2, opponents=CirclesHeuristicAgent(seed=0))
    env.reset(seed=0)
    record = env.game.to_record()
    with pytest.raises(IllegalActionError):
        env.step(env.game.codec.PASS if env.game.phase.name == "FLICK" else 0)
    assert env.game.to_record() == record
    env = CirclesGymEnv(num_players=3, illegal="penalty", opponents=[lambda o: int(
        np.flatnonzero(o["action_mask"])[0])] * 2)
    env.reset(seed=1)
    legal = set(np.flatnonzero(env.action_masks()).tolist())
    bad = next(a for a in range(87) if a not in legal)
    _, reward, done, _, info = env.step(bad)
    assert done and reward == -1.0 and info["illegal_action"]
    with pytest.raises(ValueError, match="expected one per opponent"):
        CirclesGymEnv(num_players=3, opponents=[lambda o: 0])


def test_maskable_ppo_learns_a_few_steps() -> None:
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    env = CirclesGymEnv(num_players=2)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0,
                        device="cpu")
    model.learn(128)
    obs, _ = env.reset(seed=3)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)] == 1


def test_contest_state_views_follow_the_bet() -> None:
    env = circles_far_west_v0.raw_env(num_players=4)
    rng = np.random.default_rng(4)
    start, stop, shape = env.observation_views["players"]
    from moonriver_env.circles.observation import PLAYER_FEATURES

    f = {name: i for i, name in enumerate(PLAYER_FEATURES)}
    seen = 0
    for seed in range(40):
        env.reset(seed=seed)
        while not env.terminations[env.agent_selection]:
            game = env.game
            if game.phase.name == "CONTEST_THROW":
                seen += 1
                viewer = game.current_player
                players = env.observe(env.agent_selection)["observation"][start:stop]
                players = players.reshape(shape)
                for rel in range(4):
                    q = (viewer + rel) % 4
                    assert players[rel, f["throwing"]] == (q in game.group)
                    assert players[rel, f["to_throw"]] == (q in game.queue)
                    assert players[rel, f["stake"]] == pytest.approx(game.stake[q] / 9)
                assert players[0, f["to_throw"]] == 1.0  # the actor still throws
            legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
    assert seen > 0


def test_without_pettingzoo_the_env_names_the_extra_and_the_engine_still_works() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'pettingzoo':\n"
        "            raise ModuleNotFoundError('no pettingzoo', name='pettingzoo')\n"
        "sys.meta_path.insert(0, Block())\n"
        "try:\n"
        "    from moonriver_env import circles_far_west_v0\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc.name, '|', exc)\n"
        "import moonriver_env.circles as c\n"
        "print(c.CirclesGame(seed=1).num_actions)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0].startswith("pettingzoo |")  # a plain install has it; the engine needs none
    assert out[1] == "87"


@pytest.mark.parametrize("bad", [1.9, -0.5, True, "2", np.float32(0.0)])
def test_non_integer_actions_are_refused_never_coerced(bad: object) -> None:
    """A float, bool or str is refused by raw_env, env() and the Gymnasium wrapper alike."""
    for make in (circles_far_west_v0.raw_env, circles_far_west_v0.env):
        aec = make(num_players=2)
        aec.reset(seed=3)
        before = aec.unwrapped.game.to_record()
        with pytest.raises(IllegalActionError, match="integer id"):
            aec.step(bad)
        assert aec.unwrapped.game.to_record() == before
    single = gymnasium.make("CirclesFarWest-v0", illegal="penalty")
    single.reset(seed=3)
    _, reward, terminated, _, info = single.step(bad)
    assert terminated and info.get("illegal_action") and reward < 0


@pytest.mark.parametrize("seed", [True, -1, 1.5, "3"])
def test_bad_reset_seeds_are_refused(seed: object) -> None:
    """Seeds are None or non-negative integers in both Circles envs, as in Moon River's."""
    with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
        circles_far_west_v0.raw_env(num_players=2).reset(seed=seed)
    with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
        gymnasium.make("CirclesFarWest-v0").reset(seed=seed)
