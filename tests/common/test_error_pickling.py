"""The package's errors cross process boundaries: pickled and unpickled to the same type,
message and attributes, and re-raised by Gymnasium's AsyncVectorEnv and a process pool as
themselves (issue 30, point 2)."""

from __future__ import annotations

import functools
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor

import gymnasium
import numpy as np
import pytest

from moonriver_env.circles import CirclesGame
from moonriver_env.common.cli import CLIError, MissingExtraError
from moonriver_env.common.errors import IllegalActionError
from moonriver_env.moonriver.batch.games import BatchedGames, BatchIllegalActionError
from moonriver_env.moonriver.rules import Game, GameConfig
from moonriver_env.moonriver.rules.data import DataFileError
from moonriver_env.play.session import PlayError


def _illegal_id(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask == 0)[0])


def _raised(play: object) -> BaseException:
    try:
        play()  # type: ignore[operator]
    except Exception as exc:  # the error under test
        return exc
    raise AssertionError("nothing was raised")


def _moonriver_illegal() -> BaseException:
    game = Game(GameConfig(num_players=2), seed=3)
    return _raised(lambda: game.apply(_illegal_id(game.legal_mask())))


def _circles_illegal() -> BaseException:
    game = CirclesGame(seed=3)
    return _raised(lambda: game.apply(_illegal_id(game.legal_mask())))


def _batch_illegal() -> BaseException:
    batch = BatchedGames(3, GameConfig(num_players=2))
    batch.reset(seed=0)
    actions = batch.mask.argmax(axis=1)
    actions[1] = _illegal_id(batch.mask[1])
    return _raised(lambda: batch.step(actions))


ERRORS = {
    "moonriver": _moonriver_illegal,
    "circles": _circles_illegal,
    "batch": _batch_illegal,
    "not an id": lambda: _raised(lambda: Game(GameConfig(num_players=2), 1).apply(99999)),
    "play": lambda: PlayError("no such game", status=404),
    "missing extra": lambda: MissingExtraError("torch", "train", "training"),
    "cli": lambda: CLIError("bad flag"),
    "data file": lambda: DataFileError("boards.csv: line 3: bad terrain"),
}


def _same(a: BaseException, b: BaseException) -> None:
    assert type(a) is type(b)
    assert str(a) == str(b) and a.args == b.args
    assert vars(a) == vars(b)


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_an_error_pickles_to_the_same_type_message_and_attributes(name):
    exc = ERRORS[name]()
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        _same(pickle.loads(pickle.dumps(exc, protocol)), exc)


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_calling_the_type_on_an_error_copies_it(name):
    """Gymnasium's AsyncVectorEnv re-raises a worker's error as ``type(exc)(exc)``."""
    exc = ERRORS[name]()
    copy = type(exc)(exc)
    if isinstance(exc, (IllegalActionError, PlayError, MissingExtraError)):  # custom __init__
        _same(copy, exc)
    else:
        assert type(copy) is type(exc) and str(copy) == str(exc)


def test_the_illegal_action_errors_keep_their_attributes():
    exc = pickle.loads(pickle.dumps(_batch_illegal()))
    assert isinstance(exc, BatchIllegalActionError) and isinstance(exc, IllegalActionError)
    assert exc.game_index == 1 and exc.reason and exc.legal
    assert "in game 1 of the batch" in str(exc) and "Legal now" in str(exc)
    assert pickle.loads(pickle.dumps(PlayError("gone", status=410))).status == 410
    assert pickle.loads(pickle.dumps(MissingExtraError("torch", "train"))).extra == "train"


def _apply_illegal_in_worker(seed: int) -> None:
    game = Game(GameConfig(num_players=2), seed)
    game.apply(_illegal_id(game.legal_mask()))


def test_a_process_pool_raises_the_workers_illegal_action_error():
    context = multiprocessing.get_context("spawn")
    with (ProcessPoolExecutor(1, mp_context=context) as pool,
          pytest.raises(IllegalActionError, match=r"illegal action .*Legal now") as info):
        pool.submit(_apply_illegal_in_worker, 5).result()
    assert info.value.reason and info.value.legal


@pytest.mark.filterwarnings("ignore:.*(Received the following error|Raising the last exception)")
@pytest.mark.filterwarnings("ignore:.*Traceback")
def test_async_vector_env_raises_the_workers_illegal_action_error():
    make = functools.partial(gymnasium.make, "moonriver_env:MoonRiver-v0", num_players=2,
                             seat=0)
    envs = gymnasium.vector.AsyncVectorEnv([make], context="spawn")
    try:
        _, infos = envs.reset(seed=1)
        with pytest.raises(IllegalActionError, match=r"illegal action .*Legal now") as info:
            envs.step(np.array([_illegal_id(infos["action_mask"][0])]))
        assert type(info.value) is IllegalActionError and info.value.legal
    finally:
        envs.close(terminate=True)
