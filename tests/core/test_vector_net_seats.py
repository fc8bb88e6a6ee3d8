"""Network seats of batches (issue 32): ``pretrained`` and ``az:PATH.npz`` play the network's
policy as ``AZAgent`` does, decided in rounds of one forward, never as learner steps. The batch
takes them built (``agents.registry.batch_seat``); it imports no agent."""

from __future__ import annotations

import shutil
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from moonriver_env.agents.az import AZAgent, shipped_path
from moonriver_env.agents.registry import batch_seat

from moonriver_env.moonriver.batch import BatchedGames, MoonRiverVectorEnv, seat_kind
from moonriver_env.moonriver.batch.async_env import AsyncBatchedGames
from moonriver_env.moonriver.batch.multiagent import MultiAgentGames
from moonriver_env.moonriver.core import Game as CoreGame
from moonriver_env.moonriver.core import _core
from moonriver_env.moonriver.rules import GameConfig

THREE = GameConfig(num_players=3)


def _built(names: tuple[str, ...]) -> tuple[object, ...]:
    """The seats of ``names``: the learner's name as it is, the others built from their specs."""
    return tuple(name if name == "learner" else batch_seat(name) for name in names)


def _run_out(batch: BatchedGames, seed: int, **reset: object) -> list[tuple[np.ndarray, ...]]:
    """Reset, drive the learner seats with the batch's random driver until every game of the
    fixed list is over; every step's (player, mask, rewards, done)."""
    batch.reset(seed, **reset)  # type: ignore[arg-type]
    trace = [(batch.player.copy(), batch.mask.copy(), batch.rewards.copy(), batch.done.copy())]
    while not batch.over.all():
        batch.step(batch.random_actions())
        trace.append((batch.player.copy(), batch.mask.copy(), batch.rewards.copy(),
                      batch.done.copy()))
    return trace


def _replay_checks(batch: BatchedGames, g: int, seats: tuple[str, ...], agent: AZAgent) -> int:
    """Replay game g's decisions in a plain core Game, asking ``agent`` at every network
    seat's decision that its move is the batch's; the network decisions with a choice."""
    game = CoreGame(batch.config, batch.episode_seed(g))
    chosen = 0
    for event in batch.game(g).history:
        if event["type"] != "decision" or event.get("auto"):
            continue
        player = event["player"]
        assert game.current_player == player
        if seats[player] in ("pretrained",) or seats[player].startswith("az:"):
            observation = {"observation": game.observe(player), "action_mask": game.legal_mask()}
            assert agent.act(game, observation) == event["action"], (g, len(game.history))
            chosen += game.legal_action_ids().size > 1
        game.apply(event["action"])
    assert game.is_over
    return chosen


@pytest.mark.parametrize("observation", ["float32", "compact"])
def test_pretrained_seats_play_the_moves_az_agent_plays(observation: str) -> None:
    seats = ("learner", "pretrained", "greedy")
    batch = BatchedGames(4, THREE, _built(seats), autoreset=False, threads=2,
                         observation=observation)
    assert batch.seats == seats
    trace = _run_out(batch, seed=7)
    for player, *_ in trace:  # learners are never asked to move for a network seat
        assert all(seats[p] == "learner" for p in player[player >= 0])
    agent = AZAgent(shipped_path())
    chosen = sum(_replay_checks(batch, g, seats, agent) for g in range(4))
    assert chosen == batch.network_decisions > 4 * 20
    assert batch.network_rounds < batch.network_decisions  # games decided side by side


def test_endings_on_network_moves_give_the_learners_final_view_with_or_without_autoreset(
        ) -> None:
    """A game that ends on a network seat's move ends within the learner's step: its rewards,
    done and final_obs (the learner's view) are those of the same game in a fixed list."""
    seats, config = ("learner", "pretrained"), GameConfig(num_players=2)
    fixed = BatchedGames(8, config, _built(seats), autoreset=False)
    auto = BatchedGames(8, config, _built(seats))
    fixed.reset(1)
    auto.reset(1)
    seen: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    while not fixed.over.all():
        actions, live = auto.random_actions(), ~fixed.over
        assert np.array_equal(actions[live], fixed.random_actions()[live])
        fixed.step(actions)  # the rows of games over are ignored
        auto.step(actions)
        for g in np.flatnonzero(fixed.done).tolist():
            assert auto.done[g] and auto.episodes[g] == 1 and auto.player[g] == 0
            assert np.array_equal(auto.rewards[g], fixed.rewards[g])
            assert np.array_equal(auto.final_obs[g], fixed.final_obs[g])
            seen[g] = (fixed.rewards[g].copy(), fixed.final_obs[g].copy())
    by_network = 0
    for g, (rewards, final) in seen.items():
        game = fixed.game(g)
        assert np.array_equal(final, game.observe(0))
        assert rewards.tolist() == game.returns()
        last = [e for e in game.history if e["type"] == "decision"][-1]
        by_network += last["player"] == 1
    assert len(seen) == 8 and by_network >= 1


def test_each_round_is_one_forward_and_results_do_not_depend_on_threads(monkeypatch) -> None:
    seats = ("pretrained", "learner")
    config = GameConfig(num_players=2)
    first = BatchedGames(6, config, _built(seats), autoreset=False)
    net = first._networks[0]
    calls: list[int] = []
    evaluate = net.evaluate

    def counted(obs, mask, num_players, prior=None):  # type: ignore[no-untyped-def]
        calls.append(len(obs))
        return evaluate(obs, mask, num_players, prior)

    monkeypatch.setattr(net, "evaluate", counted)
    a = _run_out(first, seed=3, seeds=[10, 11, 12, 13, 14, 15])
    assert len(calls) == first.network_rounds and sum(calls) == first.network_decisions
    assert max(calls) > 1
    b = _run_out(BatchedGames(6, config, _built(seats), autoreset=False, threads=2), seed=3,
                 seeds=[10, 11, 12, 13, 14, 15])
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert all(np.array_equal(u, v) for u, v in zip(x, y, strict=True))


def test_a_mixed_batch_runs_through_many_resets_with_legal_moves() -> None:
    seats = ("pretrained", "learner", "greedy")
    batch = BatchedGames(6, THREE, _built(seats), threads=2)
    batch.reset(21)
    endings = 0
    for _ in range(2000):
        assert (batch.player == 1).all()  # only the learner seat reaches Python
        assert (batch.mask.sum(axis=1) > 0).all()
        batch.step(batch.random_actions())
        ended = np.flatnonzero(batch.done)
        for g in ended:
            assert batch.rewards[g].max() == 1.0 and batch.final_obs[g].any()
        assert not batch.rewards[batch.done == 0].any()
        endings += ended.size
        if endings >= 18:
            break
    assert endings >= 18 and batch.episodes.sum() == endings
    for g in range(6):  # the games now played replay legally from their seeds
        game, done = CoreGame(THREE, batch.episode_seed(g)), batch.game(g)
        for event in done.history:
            if event["type"] == "decision" and not event.get("auto"):
                game.apply(event["action"])
        assert game.current_player == done.current_player


def test_az_path_seats_play_as_pretrained(tmp_path: Path) -> None:
    copy = tmp_path / "net.npz"
    shutil.copy(shipped_path(), copy)
    runs = []
    for seat in ("pretrained", f"az:{copy}"):
        batch = BatchedGames(3, GameConfig(num_players=2), _built(("learner", seat)),
                             autoreset=False)
        runs.append(_run_out(batch, seed=4))
    assert len(runs[0]) == len(runs[1])
    assert all(np.array_equal(x[1], y[1]) for x, y in zip(*runs, strict=True))


def test_az_files_are_checked_when_the_seat_is_built(tmp_path: Path) -> None:
    two = GameConfig(num_players=2)
    missing = tmp_path / "none.npz"
    with pytest.raises(ValueError, match=r"seat 'az:.*none\.npz': no network file"):
        batch_seat(f"az:{missing}")
    other = tmp_path / "other.npz"
    np.savez(other, w=np.zeros(3))
    with pytest.raises(ValueError, match="is not a moonriver-train-az network"):
        batch_seat(f"az:{other}")
    text = tmp_path / "text.npz"
    text.write_text("not a network")
    with pytest.raises(ValueError, match="is not a moonriver-train-az network"):
        gymnasium.make_vec("MoonRiver-v0", num_envs=1, num_players=2, opponents=f"az:{text}")
    batch = BatchedGames(2, two)
    with pytest.raises(ValueError, match="network seats, built from an agent spec by "
                                         r"moonriver_env\.agents\.registry\.batch_seat"):
        batch.reset(0, seats=[("learner", "random"), (f"az:{missing}", "learner")])


@pytest.mark.parametrize("name", ["pretrained", "az:x.npz", "pretrained+search:2", "az:",
                                  "AZ:x.npz", "pretrained:2p-base", "Pretrained", "network"])
def test_other_names_than_the_built_in_seats_say_how_to_build_a_network_seat(name: str) -> None:
    """The batch and the env take the built-in seats' names only: any other name (a network
    spec included) says what they take and that network seats are built by the agents
    package."""
    assert seat_kind(name) is None
    build = r"network seats, built from an agent spec by moonriver_env\.agents\.registry"
    with pytest.raises(ValueError, match=r"seats must name one of 'learner', 'random', "
                                         r"'greedy', 'mcts:N' .*" + build) as err:
        BatchedGames(1, GameConfig(num_players=2), ("learner", name))
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match=r"opponents must be one of 'random', .*" + build):
        MoonRiverVectorEnv(1, GameConfig(num_players=2), opponents=name)


def test_the_core_applies_network_moves_only_where_a_network_seat_waits() -> None:
    batch = BatchedGames(2, GameConfig(num_players=2), ("learner", "greedy"))
    batch.reset(0)
    legal = int(np.flatnonzero(batch.mask[0])[0])
    with pytest.raises(ValueError, match="game 0: the game does not wait on a network seat"):
        batch._batch.step_network(np.array([0]), np.array([legal]), batch.player, batch.obs,
                                  batch.mask, batch.rewards, batch._done, batch.final_obs, 1)
    assert seat_kind(batch_seat("pretrained")) == _core.SEAT_NETWORK


@pytest.mark.parametrize("mode", ["SameStep", "NextStep"])
def test_vector_envs_take_network_opponents(mode: str) -> None:
    env = gymnasium.make_vec("MoonRiver-v0", num_envs=3, num_players=2, opponents="pretrained",
                             autoreset_mode=mode)
    assert isinstance(env, MoonRiverVectorEnv)
    env.reset(seed=2)
    ends = 0
    for _ in range(400):
        _, _, term, _, _ = env.step(env.games.random_actions())
        ends += int(term.sum())
        player = env.games.player
        assert (player[player >= 0] == 0).all()
    assert ends >= 3 and env.games.network_decisions > 3 * 30


def test_async_parts_and_self_play_views_take_network_seats() -> None:
    seats = _built(("learner", "pretrained"))
    pool = AsyncBatchedGames(4, batch_size=2, config=GameConfig(num_players=2), seats=seats)
    state = pool.reset(seed=5)
    sync = BatchedGames(2, GameConfig(num_players=2), seats)
    sync._stride = 4
    sync.reset(5)
    assert np.array_equal(state.observation[:2], sync.obs)  # part 0 is games 0..1 of seed 5
    for _ in range(60):
        state = pool.step(np.array([int(np.flatnonzero(m)[0])
                                    for m in state.legal_action_mask]))
        assert (state.current_player == 0).all()
    pool.close()
    selfplay = MultiAgentGames(2, GameConfig(num_players=2))
    state = selfplay.reset(1, seats=[_built(("learner", "pretrained")),
                                     _built(("pretrained", "learner"))])
    assert state.current_player.tolist() == [0, 1]
    assert selfplay.games.network_decisions > 0
