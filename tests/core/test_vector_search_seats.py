"""Search seats of batches (issue 32): ``pretrained+search:SIMS`` and
``az+search:PATH.npz:SIMS`` play ``AZSearchAgent``'s search inside the batch's rounds, the
games waiting on one searched together, seeded from the batch's reset seed."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from moonriver_env.agents.az import (
    AZAgent,
    cached_az,
    play_search_settings,
    shipped_path,
    table_search,
)
from moonriver_env.agents.pretrained import SHAPE_WEIGHT
from moonriver_env.agents.registry import batch_seat

import moonriver_env.moonriver.search
from moonriver_env.moonriver.batch import (
    SEARCH_STREAM,
    BatchedGames,
    MoonRiverVectorEnv,
    seat_kind,
)
from moonriver_env.moonriver.batch.async_env import AsyncBatchedGames
from moonriver_env.moonriver.batch.multiagent import MultiAgentGames
from moonriver_env.moonriver.core import Game as CoreGame
from moonriver_env.moonriver.core import _core
from moonriver_env.moonriver.rules import GameConfig
from moonriver_env.moonriver.search import BatchedSearch

TWO = GameConfig(num_players=2)
SEARCH = "pretrained+search:2"


def _built(names: tuple[str, ...]) -> tuple[object, ...]:
    """The seats of ``names``: the learner's name as it is, the others built from their specs."""
    return tuple(name if name == "learner" else batch_seat(name) for name in names)


def _run_out(batch: BatchedGames, seed: int) -> list[tuple[np.ndarray, ...]]:
    """Reset, drive the learners with the batch's random driver until every game (a fixed
    list) is over; every step's (player, obs, mask, rewards, done)."""
    batch.reset(seed)
    trace = []
    for _ in range(1000):  # a cap by steps: games end long before
        trace.append((batch.player.copy(), batch.obs.copy(), batch.mask.copy(),
                      batch.rewards.copy(), batch.done.copy()))
        if batch.over.all():
            return trace
        batch.step(batch.random_actions())
    raise AssertionError("the games did not end in 1000 learner steps")


def _network_decisions(batch: BatchedGames, g: int, seats: tuple[str, ...]) -> dict[str, int]:
    """Replay game g from its seed in a plain core Game (an illegal move would raise there);
    the decisions with a choice (the core plays forced ones) each network seat made, by seat
    name."""
    game = CoreGame(batch.config, batch.episode_seed(g))
    made = {s: 0 for s in seats if s != "learner"}
    for event in batch.game(g).history:
        if event["type"] != "decision" or event.get("auto"):
            continue
        assert game.current_player == event["player"]
        assert game.legal_mask()[event["action"]] == 1
        if seats[event["player"]] != "learner" and game.legal_action_ids().size > 1:
            made[seats[event["player"]]] += 1
        game.apply(event["action"])
    assert game.is_over
    return made


@pytest.mark.parametrize("config", [TWO, GameConfig(num_players=4),
                                    GameConfig(num_players=3, mode="legends")],
                         ids=["2p", "4p", "3p-legends"])
def test_search_seats_play_whole_games_with_legal_moves(config: GameConfig) -> None:
    seats = ("learner",) + (SEARCH,) * (config.num_players - 1)
    batch = BatchedGames(2, config, _built(seats), autoreset=False)
    trace = _run_out(batch, seed=3)
    for player, *_ in trace:  # learners are never asked to move for a search seat
        assert (player[player >= 0] == 0).all()
    made = sum(_network_decisions(batch, g, seats)[SEARCH] for g in range(2))
    assert made == batch.network_decisions > 2 * 10  # the counter counts search decisions
    assert batch.network_rounds < batch.network_decisions  # games searched side by side


def test_a_seed_replays_the_same_games_whatever_the_threads() -> None:
    config = GameConfig(num_players=3)
    seats = ("learner", SEARCH, "greedy")
    runs = [_run_out(BatchedGames(3, config, _built(seats), autoreset=False, threads=t), seed=11)
            for t in (1, 1, 2)]
    for other in runs[1:]:
        assert len(other) == len(runs[0])
        for x, y in zip(runs[0], other, strict=True):
            assert all(np.array_equal(u, v) for u, v in zip(x, y, strict=True))
    again = _run_out(BatchedGames(3, config, _built(seats), autoreset=False), seed=12)
    assert len(again) != len(runs[0]) or any(
        not np.array_equal(x[1], y[1]) for x, y in zip(again, runs[0], strict=True))


@pytest.mark.parametrize("players", [2, 3])
def test_the_seat_plays_the_search_of_its_game_alone_from_the_batchs_seed(players) -> None:
    """A one-game batch: every search decision is a BatchedSearch of that game alone, its
    seed the next draw of default_rng([reset seed, SEARCH_STREAM]), with the agents' settings
    at a table of 3 (agents.az.table_search)."""
    config = GameConfig(num_players=players)
    seats = ("learner", "pretrained+search:3") + ("learner",) * (players - 2)
    batch = BatchedGames(1, config, _built(seats), autoreset=False)
    _run_out(batch, seed=5)
    net, _ = cached_az(shipped_path())
    rng = np.random.default_rng([5, SEARCH_STREAM])
    game, searched, unlike_plain = CoreGame(config, batch.episode_seed(0)), 0, 0
    for event in batch.game(0).history:
        if event["type"] != "decision" or event.get("auto"):
            continue
        if event["player"] == 1 and game.legal_action_ids().size > 1:  # forced: no search
            seed = int(rng.integers(2**62))
            actions = [int(BatchedSearch([game], simulations=3, seed=seed, algorithm="gumbel",
                                         greedy_prior=SHAPE_WEIGHT if net.uses_prior else None,
                                         **{**play_search_settings(), **added}
                                         ).run(net.core).action[0])
                       for added in (table_search(players), {})]
            assert actions[0] == event["action"], len(game.history)
            unlike_plain += actions[1] != actions[0]
            searched += 1
        game.apply(event["action"])
    assert searched == batch.network_decisions > 10
    assert (unlike_plain > 0) == (players == 3)  # the table's settings changed some choices


def test_the_batched_search_agrees_with_each_game_searched_alone(monkeypatch) -> None:
    """Every search the batch ran over several games: each game searched alone (its batch
    index, the same seed) chooses the batch's move."""
    calls: list[dict[str, Any]] = []

    class Recorded(BatchedSearch):
        def __init__(self, games: list[CoreGame], **kwargs: Any) -> None:
            super().__init__(games, **kwargs)
            calls.append({"games": list(games), "kwargs": kwargs})

        def result(self) -> Any:
            out = super().result()
            calls[-1]["actions"] = out.action.copy()
            return out

    monkeypatch.setattr(moonriver_env.moonriver.search, "BatchedSearch", Recorded)
    batch = BatchedGames(4, GameConfig(num_players=3), _built(("learner", SEARCH, SEARCH)),
                         autoreset=False)
    batch.reset(2)
    for _ in range(6):
        batch.step(batch.random_actions())
    monkeypatch.undo()
    net = batch._networks[0]
    several = [c for c in calls if len(c["games"]) > 1]
    assert several and all(c["kwargs"]["threads"] == 1 for c in calls)
    for call in several[:3]:
        kwargs = call["kwargs"]
        for i, (game, index) in enumerate(zip(call["games"], kwargs["indices"], strict=True)):
            alone = BatchedSearch([game], **{**kwargs, "indices": [index]})
            assert alone.run(net.core).action[0] == call["actions"][i]


@pytest.mark.parametrize(("name", "match"), [
    ("pretrained+search:0", r"SIMS, an integer 1\.\.100000"),
    ("pretrained+search:02", "without a leading zero"),
    ("pretrained+search:100001", r"1\.\.100000"),
    ("pretrained+search:abc", "budget must be SIMS"),
    ("pretrained+search:", "budget must be SIMS"),
    ("pretrained+search:1.5s", "batch seats take a simulation count"),
    ("az+search:x.npz:2s", "batch seats take a simulation count"),
    ("az+search:4", "'az\\+search:PATH.npz:SIMS'"),
])
def test_bad_search_seat_specs_say_why(name: str, match: str) -> None:
    with pytest.raises(ValueError, match=match) as err:
        batch_seat(name)
    assert "\n" not in str(err.value) and name in str(err.value)
    with pytest.raises(ValueError, match=match):
        gymnasium.make_vec("MoonRiver-v0", num_envs=1, num_players=2, opponents=name)


def test_a_missing_network_file_is_refused_with_the_seat(tmp_path: Path) -> None:
    missing = tmp_path / "missing.npz"
    with pytest.raises(ValueError, match=r"seat 'az\+search:.*missing\.npz:4': no network file "
                                         r".*az\+search:PATH\.npz:SIMS names a file"):
        batch_seat(f"az+search:{missing}:4")


def test_the_batch_seat_lists_name_the_search_seats() -> None:
    listed = r".*'pretrained\+search:SIMS', 'az:PATH\.npz', 'az\+search:PATH\.npz:SIMS'"
    with pytest.raises(ValueError, match="unknown batch seat 'network'; batch seats: random"):
        batch_seat("network")
    with pytest.raises(TypeError, match="built-in seats played in the core or network seats"
                                        + listed):
        gymnasium.make_vec("MoonRiver-v0", num_envs=1, num_players=2, opponents=[3])
    assert seat_kind(batch_seat(SEARCH)) == _core.SEAT_NETWORK


def test_policy_and_search_seats_share_one_network_and_both_play() -> None:
    config = GameConfig(num_players=3)
    seats = ("learner", "pretrained", SEARCH)
    batch = BatchedGames(2, config, _built(seats), autoreset=False)
    assert len(batch._networks) == 1 and batch._networks[0] is cached_az(shipped_path())[0]
    assert [p.simulations for p in batch._players] == [0, 2]
    assert all(p.network is batch._networks[0] for p in batch._players)
    _run_out(batch, seed=8)
    agent, made = AZAgent(shipped_path()), {"pretrained": 0, SEARCH: 0}
    for g in range(2):
        for name, count in _network_decisions(batch, g, seats).items():
            made[name] += count
        game = CoreGame(config, batch.episode_seed(g))  # the policy seat plays AZAgent's moves
        for event in batch.game(g).history:
            if event["type"] != "decision" or event.get("auto"):
                continue
            if event["player"] == 1:
                obs = {"observation": game.observe(1), "action_mask": game.legal_mask()}
                assert agent.act(game, obs) == event["action"]
            game.apply(event["action"])
    assert made["pretrained"] > 5 and made[SEARCH] > 5
    assert made["pretrained"] + made[SEARCH] == batch.network_decisions


def test_az_search_seats_play_as_pretrained_search(tmp_path: Path) -> None:
    copy = tmp_path / "net.npz"
    shutil.copy(shipped_path(), copy)
    runs = [_run_out(BatchedGames(2, TWO, _built(("learner", seat)), autoreset=False), seed=4)
            for seat in (SEARCH, f"az+search:{copy}:2")]
    assert len(runs[0]) == len(runs[1])
    assert all(np.array_equal(x[1], y[1]) for x, y in zip(*runs, strict=True))


def test_pool_parts_and_other_views_take_search_seats_reproducibly() -> None:
    seats = _built(("learner", SEARCH))

    def play(pool: AsyncBatchedGames) -> list[np.ndarray]:
        state, seen = pool.reset(seed=5), []
        for _ in range(12):
            seen.append(state.observation.copy())
            state = pool.step(np.array([int(np.flatnonzero(m)[-1])
                                        for m in state.legal_action_mask]))
            assert (state.current_player == 0).all()
        pool.close()
        return seen

    first = play(AsyncBatchedGames(4, batch_size=2, config=TWO, seats=seats, workers=2))
    second = play(AsyncBatchedGames(4, batch_size=2, config=TWO, seats=seats, workers=1))
    assert all(np.array_equal(a, b) for a, b in zip(first, second, strict=True))
    part = BatchedGames(2, TWO, seats)  # part 1: games 2..3 of the pool, reset from seed 7
    part._stride = 4
    part.reset(7)
    assert np.array_equal(first[0][2:], part.obs)
    env = gymnasium.make_vec("MoonRiver-v0", num_envs=2, num_players=2, opponents=SEARCH)
    assert isinstance(env, MoonRiverVectorEnv)
    env.reset(seed=1)
    for _ in range(5):
        env.step(env.games.random_actions())
        assert (env.games.player[env.games.player >= 0] == 0).all()
    assert env.games.network_decisions > 0
    selfplay = MultiAgentGames(2, TWO)
    state = selfplay.reset(1, seats=[_built(("learner", SEARCH)), _built((SEARCH, "learner"))])
    assert state.current_player.tolist() == [0, 1] and selfplay.games.network_decisions > 0
