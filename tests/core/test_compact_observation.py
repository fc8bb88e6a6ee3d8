"""The compact observation: uint8 rows written by the core that expand to the float32 one."""
import itertools
import pathlib
import pickle

import numpy as np
import pytest

from moonriver_env.moonriver.batch import (
    COMPACT_SIZE,
    BatchedGames,
    MoonRiverVectorEnv,
    expand_observation,
)
from moonriver_env.moonriver.observation import OBSERVATION_SIZE, RANCH_CHANNELS, VIEWS
from moonriver_env.moonriver.rules.config import GameConfig

VARIANTS = [GameConfig(num_players=n, mode=mode)
            for n, mode in itertools.product((2, 3, 4), ("base", "legends"))]
ROOT = pathlib.Path(__file__).resolve().parents[2]
STEPS = 400  # decisions per game slot: several whole games each


def _pair(config: GameConfig, threads: int = 1) -> tuple[BatchedGames, BatchedGames]:
    """A float32 and a compact batch of the same games (greedy and random opponents)."""
    seats = ("learner", "greedy", "random", "learner")[:config.num_players]
    batches = tuple(BatchedGames(8, config, seats, threads=threads, observation=kind)
                    for kind in ("float32", "compact"))
    for b in batches:
        b.reset(11)
    return batches


@pytest.mark.parametrize("config", VARIANTS, ids=lambda c: f"{c.num_players}p-{c.mode}")
def test_compact_expands_to_the_float_observation_exactly(config: GameConfig) -> None:
    dense, compact = _pair(config)
    assert compact.obs.dtype == np.uint8 and compact.obs.shape == (8, COMPACT_SIZE)
    ended = 0
    for _ in range(STEPS):
        np.testing.assert_array_equal(expand_observation(compact.obs), dense.obs)
        np.testing.assert_array_equal(compact.mask, dense.mask)
        actions = dense.random_actions()
        dense.step(actions)
        compact.step(actions)
        done = dense.done
        np.testing.assert_array_equal(compact.done, done)
        np.testing.assert_array_equal(compact.rewards, dense.rewards)
        np.testing.assert_array_equal(expand_observation(compact.final_obs[done]),
                                      dense.final_obs[done])
        ended += int(done.sum())
    assert ended >= 8  # whole games, their ends included


def test_compact_rows_do_not_depend_on_threads() -> None:
    """97 learner-only games (enough for 3 threads to share them unevenly)."""
    batches = [BatchedGames(97, observation="compact", threads=t) for t in (1, 2, 3)]
    for b in batches:
        b.reset(5)
    for _ in range(60):
        actions = batches[0].random_actions()
        for b in batches:
            b.step(actions)
        for b in batches[1:]:
            np.testing.assert_array_equal(b.obs, batches[0].obs)
            np.testing.assert_array_equal(b.final_obs[b.done], batches[0].final_obs[b.done])


def test_expand_reads_high_score_bytes_denominators_and_the_off_ranch_mark() -> None:
    row = np.zeros(COMPACT_SIZE, np.uint8)
    scores, game = VIEWS["scores"].start, VIEWS["game"].start
    row[scores], row[OBSERVATION_SIZE] = 300 % 256, 300 // 256  # a score of 300
    row[game + 1], row[OBSERVATION_SIZE + 4] = 48, 96  # half the box left
    row[game + 2], row[OBSERVATION_SIZE + 5] = 5, 25
    *_, rows, cols = VIEWS["ranches"].shape
    free = VIEWS["ranches"].start + RANCH_CHANNELS.index("free") * rows * cols
    row[free] = 255  # a built cell off the ranch: -1
    obs = expand_observation(row)
    assert obs.dtype == np.float32 and obs.shape == (OBSERVATION_SIZE,)
    assert obs[scores] == np.float32(3.0) and obs[free] == -1.0
    assert obs[game + 1] == np.float32(0.5) and obs[game + 2] == np.float32(0.2)
    assert np.count_nonzero(obs) == 4  # the rest stays zero


@pytest.mark.parametrize("bad", [np.zeros(COMPACT_SIZE, np.float32),
                                 np.zeros(OBSERVATION_SIZE, np.uint8)])
def test_expand_refuses_what_is_not_a_compact_observation(bad: np.ndarray) -> None:
    with pytest.raises(ValueError, match="uint8 rows of 4940") as err:
        expand_observation(bad)
    pickle.loads(pickle.dumps(err.value))


def test_an_unknown_observation_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="observation must be one of"):
        BatchedGames(2, observation="float16")
    with pytest.raises(ValueError, match="observation must be one of"):
        MoonRiverVectorEnv(2, observation="dense")


def test_vector_env_with_compact_observations() -> None:
    env = MoonRiverVectorEnv(4, GameConfig(num_players=2), observation="compact")
    space = env.single_observation_space
    assert space.dtype == np.uint8 and space.shape == (COMPACT_SIZE,)
    obs, _ = env.reset(seed=3)
    assert obs.dtype == np.uint8 and env.observation_space.contains(obs)
    dense = MoonRiverVectorEnv(4, GameConfig(num_players=2))
    ref, _ = dense.reset(seed=3)
    np.testing.assert_array_equal(expand_observation(obs), ref)
    actions = env.games.random_actions()
    obs, *_ = env.step(actions)
    ref, *_ = dense.step(actions)
    np.testing.assert_array_equal(expand_observation(obs), ref)


def test_the_core_refuses_observation_arrays_of_the_other_kind() -> None:
    b = BatchedGames(2, observation="compact")
    b.reset(0)
    b.obs = np.zeros((2, OBSERVATION_SIZE), np.float32)
    with pytest.raises(ValueError, match=r"obs \(N, 4940\) uint8"):
        b.step(b.random_actions())


def test_compact_is_refused_for_data_files_beyond_a_byte(tmp_path) -> None:
    plots = tmp_path / "plots.csv"
    data = ROOT / "moonriver_env" / "moonriver" / "rules" / "data"
    rows = (data / "plots.csv").read_text().splitlines()
    first = rows[1].split(",")
    rows[1] = ",".join([*first[:-1], "300"])  # the first kind's number: 300
    plots.write_text("\n".join(rows) + "\n")
    config = GameConfig(num_players=2, plots_file=str(plots))
    BatchedGames(2, config)  # float32 holds it
    with pytest.raises(ValueError, match="plot number 300: use observation='float32'") as err:
        BatchedGames(2, config, observation="compact")
    pickle.loads(pickle.dumps(err.value))


def test_make_vec_passes_the_observation_kind() -> None:
    import gymnasium

    import moonriver_env  # noqa: F401  registers MoonRiver-v0

    envs = gymnasium.make_vec("MoonRiver-v0", num_envs=2, num_players=2, observation="compact")
    obs, _ = envs.reset(seed=0)
    assert obs.dtype == np.uint8 and obs.shape == (2, COMPACT_SIZE)
