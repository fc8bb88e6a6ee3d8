"""The Gymnasium vector env's rows as Gymnasium's own vector envs show them: an ended row's mask
under NEXT_STEP (every action, as pgx's terminal states), one meaning for an int seed and its
list, ``np_random_seed``, and ``call`` / ``get_attr`` / ``set_attr``."""

from __future__ import annotations

import pickle
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import moonriver_env  # noqa: F401  (registers MoonRiver-v0)
from moonriver_env.moonriver.batch import ROW_ATTRIBUTES, MoonRiverVectorEnv, make_sb3_vec_env
from moonriver_env.moonriver.core import Game
from moonriver_env.moonriver.rules.config import GameConfig

TWO = GameConfig(num_players=2)


def _first_legal(mask: np.ndarray) -> np.ndarray:
    """Each row's first legal action (an ended NEXT_STEP row's: 0, ignored)."""
    return np.argmax(mask != 0, axis=1).astype(np.int64)


def _step_to_an_ending(env: MoonRiverVectorEnv, seed: int) -> tuple[Any, Any, Any]:
    """Steps from ``reset(seed)`` until a game ends: the observation, ``terminated``, infos."""
    obs, infos = env.reset(seed=seed)
    for _ in range(500):
        obs, _, term, _, infos = env.step(_first_legal(infos["action_mask"]))
        if term.any():
            return obs, term, infos
    raise AssertionError("no game ended in 500 steps")


# ------------------------------------------------------------------ the ended row's mask
def test_next_step_shows_an_ended_row_with_every_action_accepted():
    """Under NEXT_STEP the ended row's mask is all ones in the infos, ``action_masks()`` and
    the Dict observation (it was all zero: a masked sampler had nothing to draw from), and any
    action there is ignored: the row's next game starts."""
    env = MoonRiverVectorEnv(3, TWO, dict_observation=True)
    obs, term, infos = _step_to_an_ending(env, seed=1)
    ended = np.flatnonzero(term)
    assert infos["action_mask"][ended].all() and env.action_masks()[ended].all()
    assert obs["action_mask"][ended].all() and infos["action_mask"].dtype == np.int8
    assert not infos["action_mask"][~term].all()  # the running games show their legal actions
    seeds = [env.games.episode_seed(g) for g in range(3)]
    actions = _first_legal(infos["action_mask"])
    actions[ended] = 2709  # any action: ignored
    obs, rew, term2, _, infos = env.step(actions)
    for g in ended.tolist():
        assert rew[g] == 0 and not term2[g] and env.games.episode_seed(g) == seeds[g] + 3
        legal = env.games.game(g).legal_mask()
        np.testing.assert_array_equal(infos["action_mask"][g], legal)
        np.testing.assert_array_equal(obs["action_mask"][g], legal)


def test_an_ended_row_under_disabled_or_same_step_keeps_its_mask():
    """DISABLED: the ended row takes no step (it raises until reset), so no action is shown;
    SAME_STEP: the row is already the next game, and ``final_info`` shows the ended one's."""
    env = MoonRiverVectorEnv(3, TWO, autoreset_mode=AutoresetMode.DISABLED)
    _, term, infos = _step_to_an_ending(env, seed=1)
    assert not infos["action_mask"][term].any() and not env.action_masks()[term].any()
    env = MoonRiverVectorEnv(3, TWO, autoreset_mode=AutoresetMode.SAME_STEP)
    _, term, infos = _step_to_an_ending(env, seed=1)
    assert infos["action_mask"][term].any(axis=1).all()
    assert not infos["final_info"]["action_mask"][term].any()


def test_a_masked_sampler_runs_over_next_step_without_special_cases():
    """Categorical sampling over ``infos["action_mask"]`` alone, as a masked policy does; with
    an all-zero row it had no distribution to draw from."""
    env = gymnasium.make_vec("MoonRiver-v0", num_envs=4, num_players=2)
    assert env.autoreset_mode == AutoresetMode.NEXT_STEP
    _, infos = env.reset(seed=3)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(300):
        p = infos["action_mask"].astype(np.float64)
        p /= p.sum(axis=1, keepdims=True)  # a row without legal actions: 0/0
        assert np.isfinite(p).all()
        actions = np.array([rng.choice(p.shape[1], p=row) for row in p])
        _, _, term, _, infos = env.step(actions)
        ended += int(term.sum())
    assert ended >= 4


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_torchrl_action_mask_over_gym_env_with_num_envs_runs_a_rollout():
    """TorchRL's ActionMask samples from the mask itself (a random rollout): an all-zero row is
    "invalid multinomial distribution"."""
    pytest.importorskip("torchrl")
    from torchrl.envs import GymEnv, TransformedEnv
    from torchrl.envs.transforms import ActionMask

    env = TransformedEnv(GymEnv("moonriver_env:MoonRiver-v0", num_envs=4, num_players=2,
                                categorical_action_encoding=True, illegal="penalty"),
                         ActionMask())
    try:
        env.set_seed(0)
        td = env.rollout(300, break_when_any_done=False)
    finally:
        env.close()
    assert int(td["next", "done"].sum()) >= 4 and not td["next", "illegal_action"].any()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_torchrl_action_mask_rollout_over_the_vector_env():
    """TorchRL takes a Gymnasium vector env in SAME_STEP or DISABLED mode (it refuses
    NEXT_STEP); ActionMask's own random draws run over the masks of every row."""
    pytest.importorskip("torchrl")
    from torchrl.envs import GymWrapper, TransformedEnv
    from torchrl.envs.transforms import ActionMask

    venv = gymnasium.make_vec("MoonRiver-v0", num_envs=4, num_players=2, illegal="penalty",
                              autoreset_mode=AutoresetMode.SAME_STEP)
    env = TransformedEnv(GymWrapper(venv, categorical_action_encoding=True), ActionMask())
    env.set_seed(0)
    td = env.rollout(300, break_when_any_done=False)
    assert int(td["next", "done"].sum()) >= 4 and not td["next", "illegal_action"].any()


def test_the_sb3_vec_env_shows_the_next_games_mask_at_an_ending():
    """SB3's VecEnv autoresets in the same step: a done row's mask is its next game's."""
    venv = make_sb3_vec_env(3, TWO, seed=2)
    venv.reset()
    for _ in range(500):
        _, _, done, infos = venv.step(_first_legal(venv.action_masks()))
        if done.any():
            break
    assert done.any()
    masks = venv.action_masks()
    for g in np.flatnonzero(done).tolist():
        np.testing.assert_array_equal(masks[g], venv.venv.games.game(g).legal_mask() != 0)
        assert not masks[g].all() and "terminal_observation" in infos[g]
    assert venv.env_method("action_masks")[0].shape == (2710,)


# ------------------------------------------------------------------------------ seeds
def _played(env: MoonRiverVectorEnv, seed: Any, steps: int = 120) -> list[Any]:
    """Every observation and reward of ``steps`` steps after ``reset(seed=seed)``."""
    obs, infos = env.reset(seed=seed)
    out = [obs]
    for _ in range(steps):
        obs, rew, *_, infos = env.step(_first_legal(infos["action_mask"]))
        out += [obs, rew]
    return out


@pytest.mark.parametrize("opponents", ["random", "greedy"])
def test_an_int_seed_and_its_list_play_the_same_draws(opponents: str):
    """``reset(seed=s)`` is ``reset(seed=[s, s+1, ...])`` in every draw: the games and the
    opponents' (the list used to seed the opponents' streams from a mix of its seeds)."""
    env = MoonRiverVectorEnv(3, TWO, opponents=opponents)
    by_int = _played(env, 40)
    by_list = _played(env, [40, 41, 42])
    for a, b in zip(by_int, by_list, strict=True):
        np.testing.assert_array_equal(a, b)
    other = _played(env, [40, 42, 41])  # another list: other games
    assert any(not np.array_equal(a, b) for a, b in zip(by_int, other, strict=True))


def test_np_random_seed_is_each_rows_seed_as_sync_vector_env_gives_it():
    env = MoonRiverVectorEnv(3, TWO)
    ref = gymnasium.vector.SyncVectorEnv(
        [lambda: gymnasium.make("MoonRiver-v0", num_players=2, seat=0)] * 3)
    for venv in (env, ref):
        venv.reset(seed=5)
        assert venv.np_random_seed == (5, 6, 7)
        venv.reset()  # no seed: the rows go on, their seeds stay
        assert venv.np_random_seed == (5, 6, 7)
        venv.reset(seed=[9, None, 11])
        assert venv.np_random_seed == (9, 6, 11)
        venv.reset(seed=20, options={"reset_mask": np.array([False, True, False])})
        assert venv.np_random_seed == (9, 21, 11)
    assert all(type(s) is int for s in env.np_random_seed)


def test_a_first_reset_without_a_seed_plays_np_random_seed():
    """As a Gymnasium env's: read before the first reset, the seed is drawn then, and that
    reset plays it; ``reset(seed=list(np_random_seed))`` replays the same draws."""
    env = MoonRiverVectorEnv(3, TWO)
    seeds = env.np_random_seed
    assert len(seeds) == 3 and all(type(s) is int and s >= 0 for s in seeds)
    first = _played(env, None)
    assert [env.games.episode_seed(g, 0) for g in range(3)] == list(seeds)
    assert env.np_random_seed == seeds
    again = _played(env, list(seeds))
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    fresh = MoonRiverVectorEnv(3, TWO)
    fresh.reset()
    assert fresh.np_random_seed == tuple(fresh.games.game(g).seed for g in range(3))


# ---------------------------------------------------------------- call, get_attr, set_attr
def test_call_and_get_attr_return_one_value_per_row_as_sync_vector_env():
    env = MoonRiverVectorEnv(3, TWO, opponents="greedy")
    ref = gymnasium.vector.SyncVectorEnv(
        [lambda: gymnasium.make("MoonRiver-v0", num_players=2, seat=0)] * 3)
    for venv in (env, ref):
        venv.reset(seed=4)
        for name in ("np_random_seed", "render_mode", "observation_space", "action_space"):
            values = venv.get_attr(name)
            assert isinstance(values, tuple) and len(values) == 3
            assert values == venv.call(name)
        assert venv.get_attr("np_random_seed") == venv.np_random_seed
        assert venv.get_attr("observation_space") == (venv.single_observation_space,) * 3
        masks = venv.call("action_masks")
        assert isinstance(masks, tuple) and len(masks) == 3 and masks[0].shape == (2710,)
    np.testing.assert_array_equal(np.stack(env.call("action_masks")), env.action_masks())
    games = env.get_attr("game")
    assert all(isinstance(g, Game) for g in games)
    assert [g.seed for g in games] == [4, 5, 6]
    assert env.get_attr("episode_seed") == (4, 5, 6)
    assert env.get_attr("opponents") == ("greedy",) * 3
    assert env.get_attr("seat") == (0, 0, 0)
    assert set(ROW_ATTRIBUTES) >= {"game", "action_masks", "np_random_seed", "illegal_penalty"}


def test_a_name_no_row_has_is_an_attribute_error_listing_them():
    env = MoonRiverVectorEnv(2, TWO)
    env.reset(seed=0)
    for name in ("step", "games", "nothing"):  # the batch's own methods are no row's
        with pytest.raises(AttributeError, match=r"a row of MoonRiverVectorEnv has no "
                                                 r"attribute .*; rows have: .*action_masks"):
            env.call(name)
    with pytest.raises(AttributeError) as caught:
        env.get_attr("step")
    assert str(pickle.loads(pickle.dumps(caught.value))) == str(caught.value)


def test_set_attr_sets_what_rows_may_change_for_every_row():
    env = MoonRiverVectorEnv(3, TWO, illegal="penalty")
    _, infos = env.reset(seed=2)
    env.set_attr("illegal_penalty", -4.0)
    assert env.get_attr("illegal_penalty") == (-4.0,) * 3
    env.set_attr("illegal_penalty", [-3.0, -3.0, -3.0])
    bad = _first_legal(infos["action_mask"])
    bad[0] = int(np.flatnonzero(infos["action_mask"][0] == 0)[0])
    assert env.step(bad)[1][0] == -3.0
    env.set_attr("illegal", ("raise",) * 3)
    assert env.illegal == "raise"
    with pytest.raises(ValueError, match=r"length equal to the number of environments"):
        env.set_attr("illegal_penalty", [-1.0, -2.0])
    with pytest.raises(ValueError, match=r"the rows share one batch: illegal_penalty takes one "
                                         r"value for every row, got \[-1.0, -2.0, -1.0\]"):
        env.set_attr("illegal_penalty", [-1.0, -2.0, -1.0])
    with pytest.raises(ValueError, match=r"illegal_penalty must be a finite number"):
        env.set_attr("illegal_penalty", float("nan"))
    with pytest.raises(ValueError, match=r"illegal must be"):
        env.set_attr("illegal", "ignore")
    with pytest.raises(AttributeError, match=r"set_attr sets only .*illegal_penalty.*; "
                                             r"'seat' is"):
        env.set_attr("seat", 1)
    assert env.illegal == "raise" and env.illegal_penalty == -3.0 and env.seat == 0


def test_the_sb3_vec_env_reads_rows_through_the_vector_env():
    venv = make_sb3_vec_env(3, TWO, seed=7)
    venv.reset()
    assert venv.get_attr("np_random_seed") == [7, 8, 9]
    assert venv.get_attr("episode_seed", indices=[2]) == [9]
    assert venv.get_attr("render_mode") == [None, None, None]
    venv.set_attr("illegal_penalty", -2.0)
    assert venv.venv.illegal_penalty == -2.0
    with pytest.raises(ValueError, match="one value for every row"):
        venv.set_attr("illegal_penalty", -2.5, indices=[0])
    with pytest.raises(AttributeError, match="has no attribute"):
        venv.env_method("reset")
