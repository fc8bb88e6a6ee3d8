"""The search recipe (moonriver-train-az) at tiny size: variants, self-play targets, one
network call per search step, the replay buffer, reproducible runs, resume to the same
weights as an uninterrupted run, Ctrl-C saves, warm start, and one-line CLI errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tomllib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from moonriver_env.agents.az import NumpyAZNet  # noqa: E402
from moonriver_env.agents.pretrained import read_npz, variant_layers  # noqa: E402
from moonriver_env.training.az import train as az_train  # noqa: E402
from moonriver_env.training.az.network import (  # noqa: E402
    AZNet,
    export_npz,
    value_hidden_size,
    warm_start,
    widen_hidden,
)
from moonriver_env.training.az.selfplay import PHASES, Samples, new_games, play  # noqa: E402
from moonriver_env.training.az.train import (  # noqa: E402
    AZConfig,
    CLIError,
    ReplayBuffer,
    Run,
    batched_search,
    deferred_interrupt,
    losses,
    network_evaluator,
    policy_cross_entropy,
)
from moonriver_env.training.policy_net import NetConfig  # noqa: E402
from moonriver_env.training.variants import (  # noqa: E402
    ALL_VARIANTS,
    variant_config,
    variant_list,
)

from tests.helpers import HANG_GUARD, ctrl_c_as_in_a_terminal  # noqa: E402

SHIPPED = Path(__file__).resolve().parents[2] / "agents" / "weights" / "4p-base.npz"
TINY = {"games": 2, "simulations": 4, "max_considered": 4, "buffer": 512, "batch_size": 16,
        "updates": 2, "channels": 4, "opponent_channels": 2, "hidden": 8,
        "variants": ("2p-base", "3p-legends-2", "4p-base")}


def tiny(out: Path, **changes) -> AZConfig:
    return AZConfig(**(TINY | {"out": str(out), "iterations": 2} | changes))


def tiny_net() -> AZNet:
    """A network of ``TINY``'s sizes (its weights drawn from torch's generator)."""
    return AZNet(NetConfig(channels=4, opponent_channels=2, hidden=8))


def quiet(line: str) -> None:
    """A progress sink for tests."""


def test_variants_are_the_fifteen_and_others_are_refused() -> None:
    assert len(ALL_VARIANTS) == 15 and variant_list(["all"]) == ALL_VARIANTS
    config = variant_config("3p-legends-4")
    assert (config.num_players, config.mode, config.scenario) == (3, "legends", 4)
    assert variant_config("2p-base").mode == "base"
    for bad in (["5p-base"], ["2p-legends-5"], ["4p-legends"], [], ["all", "2p-base"]):
        with pytest.raises(ValueError, match="variant"):
            variant_list(bad)


def test_self_play_targets_and_one_network_call_per_search_step() -> None:
    torch.manual_seed(0)
    net = tiny_net().eval()
    rng = np.random.default_rng(0)
    from moonriver_env.moonriver.core import Game

    games = [Game(variant_config(v), seed=i)
             for i, v in enumerate(("2p-base", "3p-legends-1", "4p-legends-3"))]
    calls: list[int] = []
    evaluate = network_evaluator(net, torch.device("cpu"))

    def counting(leaves):
        calls.append(len(leaves))
        assert len(set(leaves.game.tolist())) == len(leaves)  # one leaf per game per step
        return evaluate(leaves)

    samples, stats = play(games, counting, batched_search(tiny(Path("x"))), rng)
    assert all(g.is_over for g in games)
    assert stats.steps == len(calls) and stats.leaves == sum(calls) and calls[0] == 3
    assert max(calls) == 3 and stats.decisions == len(samples) > 100
    legal = samples.mask.astype(bool)
    assert (samples.policy[~legal] == 0).all()
    np.testing.assert_allclose(samples.policy.sum(1), 1.0, atol=1e-4)
    np.testing.assert_allclose(samples.outcome.sum(1), 1.0, atol=1e-6)
    np.testing.assert_allclose(samples.margin.sum(1), 0.0, atol=1e-3)
    assert set(samples.num_players.tolist()) == {2, 3, 4}
    for n in (2, 3):
        assert (samples.outcome[samples.num_players == n][:, n:] == 0).all()


def test_core_leaves_play_the_games_of_the_core_networks_leaf_loop() -> None:
    """``leaves = "core"``: each search runs inside the core with a C++ copy of the network;
    the same samples as the Python leaf loop with that copy answering."""
    from moonriver_env.agents.az import absolute_shares
    from moonriver_env.training.az.network import core_network
    from moonriver_env.training.az.selfplay import CoreLeaves

    torch.manual_seed(0)
    net = tiny_net().eval()
    core = core_network(net)

    def loop(leaves):
        logits, shares = core.evaluate(leaves.observation, leaves.mask, leaves.num_players,
                                       leaves.prior)
        return logits, absolute_shares(shares, leaves.seat, leaves.num_players)

    def games():
        return new_games(("2p-base", "3p-legends-1", "4p-legends-3"), 3,
                         np.random.default_rng(4))

    make = batched_search(tiny(Path("x")))
    inside, in_stats = play(games(), CoreLeaves(core), make, np.random.default_rng(0), True)
    outside, out_stats = play(games(), loop, make, np.random.default_rng(0), True)
    for name in ("obs", "mask", "policy", "outcome", "margin", "num_players", "prior"):
        np.testing.assert_array_equal(getattr(inside, name), getattr(outside, name), name)
    assert in_stats.leaves == out_stats.leaves > in_stats.decisions > 100
    # one call a round of searches (every live game's), against one per simulation step
    assert in_stats.steps < in_stats.decisions and out_stats.steps > 3 * in_stats.steps
    # where the time went: every phase timed, the search's own inside the core
    for stats in (in_stats, out_stats):
        assert set(stats.seconds) == set(PHASES) and min(stats.seconds.values()) >= 0
        for phase in ("select", "determinize", "apply", "observe", "prior", "network",
                      "backup", "setup", "record"):
            assert stats.seconds[phase] > 0, phase


def test_a_search_times_its_phases_only_when_asked() -> None:
    """``BatchedSearch(timers=True)`` sums each phase's seconds over its games; without it, or
    for the network of leaves the caller values, they stay zero; playouts only when mixed in."""
    from moonriver_env.training.az.network import core_network

    from moonriver_env.moonriver.search import BatchedSearch

    core = core_network(tiny_net().eval())
    for timers, weight in ((False, 0.5), (True, 0.0), (True, 0.5)):
        games = new_games(("4p-base",), 3, np.random.default_rng(1))
        search = BatchedSearch(games, simulations=8, timers=timers, rollout_weight=weight)
        search.run(core)
        seconds = search.phase_seconds()
        assert list(seconds) == list(PHASES[:8])
        assert (seconds.pop("rollout") > 0) == (timers and weight > 0)
        assert (min(seconds.values()) > 0) if timers else (max(seconds.values()) == 0)
        outside = BatchedSearch(games, simulations=8, timers=timers)
        while (leaves := outside.leaves()) is not None:
            outside.evaluate(np.zeros((len(leaves), 2710), np.float32),
                             np.full((len(leaves), 4), 0.5, np.float32))
        assert outside.phase_seconds()["network"] == 0.0
        assert (outside.phase_seconds()["select"] > 0) == timers


def test_action_target_is_the_searchs_chosen_action_one_hot() -> None:
    """``target = "action"``: the same games, each recorded policy one-hot at the action the
    search chose (and the game played); ``"improved"`` keeps the search's policy."""
    from moonriver_env.training.az.network import core_network
    from moonriver_env.training.az.selfplay import CoreLeaves

    torch.manual_seed(0)
    core = CoreLeaves(core_network(tiny_net().eval()))
    make = batched_search(tiny(Path("x")))

    def games():
        return new_games(("2p-base", "4p-legends-3"), 2, np.random.default_rng(5))

    played, improved = games(), games()
    chosen, _ = play(played, core, make, np.random.default_rng(0), target="action")
    searched, _ = play(improved, core, make, np.random.default_rng(0))
    np.testing.assert_array_equal(chosen.obs, searched.obs)  # the same games
    assert (chosen.policy.sum(1) == 1).all() and (chosen.policy.max(1) == 1).all()
    picks = chosen.policy.argmax(1)
    assert chosen.mask[np.arange(len(picks)), picks].all()
    assert (searched.policy.max(1) < 1).any()  # the improved policy is not one-hot
    # each pick is the action the game then played: the picks replay the recorded games
    replay, row = games(), 0
    for game in replay:
        while not game.is_over and len(game.legal_action_ids()) == 1:
            game.apply(int(game.legal_action_ids()[0]))
    while live := [g for g in replay if not g.is_over]:
        for game in live:
            np.testing.assert_array_equal(game.observe(game.current_player), chosen.obs[row])
            game.apply(int(picks[row]))
            row += 1
        for game in live:
            while not game.is_over and len(game.legal_action_ids()) == 1:
                game.apply(int(game.legal_action_ids()[0]))
    assert row == len(picks) > 50
    with pytest.raises(CLIError, match="target must be one of improved, action, steady"):
        tiny(Path("x"), target="best").validate()


@pytest.mark.parametrize(("value_hidden", "film", "rank"),
                         [(0, False, 0), (6, False, 0), (0, True, 0), (6, True, 2)])
def test_widen_hidden_keeps_the_function_and_refuses_a_narrower_width(value_hidden, film,
                                                                      rank) -> None:
    from moonriver_env.moonriver.core import Game

    torch.manual_seed(0)
    net = AZNet(NetConfig(channels=4, opponent_channels=2, hidden=8, use_prior=False,
                          variant_film=film, variant_rank=rank),
                value_hidden=value_hidden).eval()
    with torch.no_grad():  # a film and adapters per variant that the wide network keeps
        for name, w in net.named_parameters():
            if name.startswith("variant_"):
                w.normal_(0.0, 0.5)
    wide = widen_hidden(net, 20).eval()
    assert wide.trunk[0].out_features == wide.rest[0].out_features == 20
    games = [Game(variant_config(v), seed=i) for i, v in enumerate(("2p-base", "4p-legends-2"))]
    obs = torch.from_numpy(np.stack([g.observe(g.current_player) for g in games]))
    mask = torch.from_numpy(np.stack([g.legal_mask() for g in games])).bool()
    players = torch.tensor([g.num_players for g in games])
    with torch.no_grad():
        for a, b in zip(net.heads(obs, mask, players), wide.heads(obs, mask, players),
                        strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)
    kept = wide.state_dict()
    assert torch.equal(kept["rest.0.weight"][:8], net.state_dict()["rest.0.weight"])
    assert kept["dense_head.weight"][:, 8:].abs().sum() == 0  # the new units are read with 0
    with pytest.raises(ValueError, match="narrower than the network's 8"):
        widen_hidden(net, 4)


@pytest.mark.parametrize("target", ["action", "steady"])
def test_target_searches_average_several_searches_of_each_root(target) -> None:
    """``target_searches = 2``: each decision is searched twice with two seeds; its target is
    the mean of their chosen actions (one-hot), or with ``steady`` the action both chose and
    zeros where they differ; the first search's action is played."""
    torch.manual_seed(0)
    evaluate = network_evaluator(tiny_net().eval(), torch.device("cpu"))
    from moonriver_env.moonriver.core import Game

    games = [Game(variant_config(v), seed=20 + i) for i, v in enumerate(("2p-base", "4p-base"))]
    made: list = []
    inner = batched_search(tiny(Path("x"), simulations=4))

    def make(batch, seed):
        made.append((seed, inner(batch, seed)))
        return made[-1][1]

    samples, stats = play(games, evaluate, make, np.random.default_rng(3), target=target,
                          searches=2)
    assert len(made) == 2 * len({id(s) for _, s in made[::2]}) and stats.decisions > 50
    row, parted = 0, False
    for (seed_a, a), (seed_b, b) in zip(made[::2], made[1::2], strict=True):
        first, second = a.result().action, b.result().action
        assert seed_a != seed_b
        for j in range(len(first)):
            expected = np.zeros(samples.policy.shape[1], np.float32)
            if target == "action":
                expected[first[j]] += 0.5
                expected[second[j]] += 0.5
            elif first[j] == second[j]:
                expected[first[j]] = 1.0
            np.testing.assert_array_equal(samples.policy[row], expected)
            parted |= bool(first[j] != second[j])
            row += 1
    assert row == len(samples) and parted  # the two searches chose apart somewhere
    if target == "steady":  # agreed somewhere too; the policy loss is over the rows with one
        has = samples.policy.sum(1) > 0
        assert has.any()
        net = tiny_net()
        batch = vars(samples) | {"policy": samples.policy.astype(np.float16)}
        with torch.no_grad():
            logp = net.heads(*az_train.head_inputs(net, batch, torch.device("cpu")))[0]
            expected = policy_cross_entropy(torch.from_numpy(samples.policy), logp)[has].mean()
        got = losses(net, batch, torch.device("cpu"), tiny(Path("x"), target="steady",
                                                           target_searches=2))[1]["policy"]
        assert got == pytest.approx(float(expected), rel=1e-5)
        with pytest.raises(ValueError, match="needs searches >= 2"):
            play(games, evaluate, make, np.random.default_rng(3), target=target)
    # the games played the first search's actions: replayed with them, the same observations
    replay, row = [Game(variant_config(v), seed=20 + i)
                   for i, v in enumerate(("2p-base", "4p-base"))], 0
    for _, a in made[::2]:
        for game in replay:
            while not game.is_over and len(game.legal_action_ids()) == 1:
                game.apply(int(game.legal_action_ids()[0]))
        for game, action in zip([g for g in replay if not g.is_over], a.result().action,
                                strict=True):
            np.testing.assert_array_equal(game.observe(game.current_player), samples.obs[row])
            game.apply(int(action))
            row += 1
    with pytest.raises(CLIError, match="target_searches must be 1 to 16"):
        tiny(Path("x"), target_searches=0).validate()
    with pytest.raises(CLIError, match="needs target_searches >= 2"):
        tiny(Path("x"), target="steady").validate()
    with pytest.raises(CLIError, match="and value_warmup = 0"):
        tiny(Path("x"), target="steady", target_searches=2, value_warmup=1).validate()


def test_table_search_gives_each_table_the_search_agents_settings() -> None:
    """``table_search = true``: the games of each player count are searched apart, those at
    3 and 4 with ``agents.az.table_search``'s settings added, each game seeded by its place in
    the batch, so its rows are those of a search of its table's games alone; the torch leaf
    loop answers as the core's."""
    from moonriver_env.agents.az import absolute_shares, table_search
    from moonriver_env.training.az.network import core_network

    from moonriver_env.moonriver.search import BatchedSearch

    torch.manual_seed(0)
    core = core_network(tiny_net().eval())
    cfg = tiny(Path("x"), table_search=True, simulations=8)
    games = new_games(("2p-base", "3p-legends-2", "4p-base"), 9, np.random.default_rng(7))
    counts = np.array([g.num_players for g in games])
    assert set(counts.tolist()) == {2, 3, 4}
    grouped = batched_search(cfg)(games, 11).run(core)
    whole = batched_search(replace(cfg, table_search=False))(games, 11).run(core)
    for n in (2, 3, 4):
        rows = np.flatnonzero(counts == n)
        alone = BatchedSearch([games[i] for i in rows], seed=11, indices=rows.tolist(),
                              **{**az_train.search_settings(cfg), **table_search(n)})
        expect = alone.run(core)
        for name in ("action", "policy", "root_value", "visits", "searched"):
            np.testing.assert_array_equal(getattr(grouped, name)[rows], getattr(expect, name),
                                          f"{name}, {n} players")
    two = counts == 2
    np.testing.assert_array_equal(grouped.policy[two], whole.policy[two])  # 2 players: as set
    assert not np.array_equal(grouped.policy[~two], whole.policy[~two])  # 3 and 4: the table's
    # the leaf loop outside the core: the same answers, one table's leaves at a time
    outside = batched_search(cfg)(games, 11)
    tables = []
    while (leaves := outside.leaves()) is not None:
        tables.append(set(leaves.num_players.tolist()))
        assert (counts[leaves.game] == leaves.num_players).all()  # rows named in the batch
        logits, shares = core.evaluate(leaves.observation, leaves.mask, leaves.num_players,
                                       leaves.prior)
        outside.evaluate(logits, absolute_shares(shares, leaves.seat, leaves.num_players))
    assert all(len(t) == 1 for t in tables) and len(tables) > 3
    for name in ("action", "policy", "visits"):
        np.testing.assert_array_equal(getattr(outside.result(), name), getattr(grouped, name))
    obs, mask, prior = outside.roots(1.0)
    assert prior is not None and prior.shape == mask.shape
    for i, game in enumerate(games):
        np.testing.assert_array_equal(obs[i], game.observe(game.current_player))
        assert (mask[i] != 0).sum() == len(game.legal_action_ids())


def test_gumbel_scale_zero_picks_the_top_logit_as_the_agents_search_does() -> None:
    """``gumbel_scale = 0``: with one simulation and one root action considered the search
    plays the network's most likely action; the default noise (1) plays others too."""
    from moonriver_env.training.az.network import core_network
    from moonriver_env.training.az.selfplay import CoreLeaves

    torch.manual_seed(0)
    net = core_network(tiny_net().eval())

    def agreement(gumbel_scale: float) -> float:
        cfg = tiny(Path("x"), simulations=1, max_considered=1, gumbel_scale=gumbel_scale)
        games = new_games(("2p-base", "4p-legends-3"), 2, np.random.default_rng(7))
        chosen, _ = play(games, CoreLeaves(net), batched_search(cfg), np.random.default_rng(0),
                         target="action")
        logits, _ = net.evaluate(chosen.obs, chosen.mask, chosen.num_players, chosen.prior)
        assert len(chosen.obs) > 50
        return float(np.mean(chosen.policy.argmax(1) == logits.argmax(1)))

    assert agreement(0.0) == 1.0
    assert agreement(1.0) < 0.9
    for bad in (-1.0, float("nan")):
        with pytest.raises(CLIError, match="gumbel_scale must be finite and >= 0"):
            tiny(Path("x"), gumbel_scale=bad).validate()
    for setting in ({"rollout_weight": 1.5}, {"rollout_depth": -1}, {"rollout_depth": 2**31},
                    {"rollout_temperature": 0.0}, {"rollout_temperature": float("inf")}):
        with pytest.raises(CLIError, match="rollout_weight must be within"):
            tiny(Path("x"), **setting).validate()


@pytest.mark.parametrize("leaves", ["torch", "core"])
def test_an_expert_file_values_the_leaves_whatever_the_trained_network(tmp_path,
                                                                       leaves) -> None:
    """``expert = PATH``: that fixed network's search plays and sets the targets, so two
    different trained networks record the same games; without it each plays its own."""
    from moonriver_env.training.az.network import export_npz

    torch.manual_seed(0)
    expert = export_npz(tiny_net(), str(tmp_path / "expert.npz"))
    nets = [tiny_net().eval() for _ in range(2)]
    cfg = tiny(tmp_path, leaves=leaves, expert=expert)
    cfg.validate()
    make = batched_search(cfg)

    def record(config, net):
        games = new_games(("2p-base", "4p-legends-3"), 2, np.random.default_rng(6))
        evaluate = az_train.leaf_evaluator(config, net, torch.device("cpu"))
        return play(games, evaluate, make, np.random.default_rng(0))[0].policy

    np.testing.assert_array_equal(record(cfg, nets[0]), record(cfg, nets[1]))
    plain = replace(cfg, expert="")
    first, second = record(plain, nets[0]), record(plain, nets[1])
    assert first.shape != second.shape or not np.array_equal(first, second)
    ppo = Path(__file__).resolve().parents[2] / "agents" / "weights" / "4p-base.npz"
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"PK\x03\x04 not a zip")
    for bad in ("nowhere.npz", str(ppo), str(garbage), str(tmp_path)):
        with pytest.raises(CLIError, match=r"not an az\.npz of this recipe"):
            tiny(tmp_path, expert=bad).validate()


def test_outcome_is_by_seat_relative_to_the_mover() -> None:
    from moonriver_env.training.az.selfplay import seat_outcome

    game = new_games(("3p-base",), 1, np.random.default_rng(1))[0]
    rng = np.random.default_rng(0)
    while not game.is_over:
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(ids.size)]))
    winners, totals = game.winners(), [s.total for s in game.scores()]
    for mover in range(3):
        share, margin = seat_outcome(game, mover)
        for k in range(3):
            player = (mover + k) % 3
            assert share[k] == (1 / len(winners) if player in winners else 0.0)
            assert margin[k] == pytest.approx(totals[player] - np.mean(totals))
        assert share[3] == margin[3] == 0.0


def test_replay_buffer_keeps_the_newest_and_round_trips() -> None:
    buffer = ReplayBuffer(5)
    empty = Samples.empty()

    def rows(start: int, n: int) -> Samples:
        return Samples(**{k: np.repeat(np.full((1, *v.shape[1:]), 0, v.dtype), n, axis=0)
                          if k != "num_players" else np.arange(start, start + n, dtype=np.int32)
                          for k, v in vars(empty).items()})

    buffer.add(rows(0, 3))
    buffer.add(rows(3, 4))
    assert buffer.size == 5 and sorted(buffer.arrays["num_players"].tolist()) == [2, 3, 4, 5, 6]
    buffer.add(rows(10, 12))  # more than the capacity: the newest five
    assert sorted(buffer.arrays["num_players"].tolist()) == [17, 18, 19, 20, 21]
    again = ReplayBuffer(5)
    again.restore(buffer.state())
    assert (again.arrays["num_players"] == buffer.arrays["num_players"]).all()
    assert again.next == buffer.next


def _weights(run: Run) -> dict[str, np.ndarray]:
    return {k: v.detach().clone().numpy() for k, v in run.net.state_dict().items()}


def assert_resumes_to(whole: Run, out: Path, settings: dict) -> None:
    """A run of ``settings`` stopped after one iteration and resumed to two ends at the
    weights of ``whole`` (two iterations uninterrupted)."""
    Run(tiny(out, iterations=1, **settings), report=quiet).train()
    state = az_train.load_resume(str(out))
    resumed = Run(tiny(out, iterations=2, **settings), state=state, report=quiet)
    resumed.train()
    reference = _weights(whole)
    for key, value in _weights(resumed).items():
        np.testing.assert_array_equal(value, reference[key], err_msg=key)


@pytest.mark.parametrize("leaves", ["torch", "core"])
def test_a_run_is_reproducible_and_resumes_to_the_same_weights(tmp_path, leaves) -> None:
    whole = Run(tiny(tmp_path / "whole", iterations=3, leaves=leaves), report=quiet)
    assert whole.train() == 0
    again = Run(tiny(tmp_path / "again", iterations=3, leaves=leaves), report=quiet)
    again.train()
    first = Run(tiny(tmp_path / "split", iterations=1, leaves=leaves), report=quiet)
    first.train()
    state = az_train.load_resume(str(tmp_path / "split"))
    assert state["iteration"] == 1
    log = tmp_path / "split" / "log.jsonl"
    with log.open("a") as fh:  # an iteration played after the checkpoint, then lost
        fh.write(json.dumps({"iteration": 2, "lost": True}) + "\n")
    resumed = Run(tiny(tmp_path / "split", iterations=3, leaves=leaves), state=state,
                  report=quiet)
    resumed.train()
    reference = _weights(whole)
    for other in (again, resumed):
        assert other.iteration == 3 and other.samples == whole.samples
        for key, value in _weights(other).items():
            np.testing.assert_array_equal(value, reference[key], err_msg=key)
    assert (resumed.buffer.arrays["obs"] == whole.buffer.arrays["obs"]).all()
    assert os.path.isfile(tmp_path / "split" / "az.npz")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["iteration"] for line in lines] == [1, 2, 3]
    assert not any("lost" in line for line in lines)
    assert os.path.isfile(tmp_path / "split" / "resume.prev.pt")


def test_auto_leaves_are_the_cores_on_the_cpu_and_torchs_on_a_gpu(tmp_path) -> None:
    assert az_train.leaf_kind("auto", torch.device("cpu")) == "core"
    assert az_train.leaf_kind("auto", torch.device("cuda")) == "torch"
    assert az_train.leaf_kind("torch", torch.device("cpu")) == "torch"
    runs = {}
    for leaves in ("auto", "core", "torch"):
        runs[leaves] = Run(tiny(tmp_path / leaves, iterations=1, leaves=leaves), report=quiet)
        runs[leaves].train()
    auto, core = _weights(runs["auto"]), _weights(runs["core"])
    for key, value in auto.items():
        np.testing.assert_array_equal(value, core[key], err_msg=key)
    assert runs["auto"].samples == runs["core"].samples > 0


def test_value_warmup_plays_the_policy_with_one_simulation(tmp_path) -> None:
    import re

    def per_decision(line: str) -> float:
        decisions, leaves = re.search(r"(\d+) decisions .*?(\d+) leaves", line).groups()
        return int(leaves) / int(decisions)

    run = Run(tiny(tmp_path, iterations=2, value_warmup=1), report=quiet)
    first, second = run.step(), run.step()
    assert per_decision(first) <= 2.0  # the root and one simulation
    assert per_decision(second) > 2.0  # then the search proper: TINY's 4 simulations
    plain = Run(tiny(tmp_path / "plain", iterations=1), report=quiet)
    assert per_decision(plain.step()) > 2.0


def test_value_warmup_holds_the_policy_to_the_starting_networks(tmp_path) -> None:
    run = Run(tiny(tmp_path, iterations=2, value_warmup=1, updates=32, learning_rate=0.03),
              report=quiet)
    assert run.teacher is not None
    start = {k: v.clone() for k, v in run.net.state_dict().items()}
    assert "teacher" in run.state()  # a run resumed within the warm-up keeps its teacher

    def policy_gap(net: AZNet) -> float:
        logp, _, _ = net.heads(*inputs)
        return float((logp.exp() - teacher_p).abs().sum(1).mean())

    run.step()  # warm-up: the policy's target is the frozen starting network's
    batch = run.buffer.batch(np.random.default_rng(0), 64)
    inputs = (torch.from_numpy(batch["obs"]), torch.from_numpy(batch["mask"]).bool(),
              torch.from_numpy(batch["num_players"]), torch.from_numpy(batch["prior"]))
    with torch.no_grad():
        teacher_p = run.teacher.heads(*inputs)[0].exp()
        for key, value in run.teacher.state_dict().items():
            assert torch.equal(value, start[key]), key  # the teacher never moves
        warm_gap = policy_gap(run.net)
        assert not torch.equal(run.net.state_dict()["trunk.0.weight"], start["trunk.0.weight"])
    assert "teacher" not in run.state()  # kept only within the warm-up
    plain = Run(tiny(tmp_path / "plain", iterations=1, updates=32, learning_rate=0.03),
                report=quiet)  # the same starting network, trained on the search's targets
    plain.step()
    with torch.no_grad():
        assert warm_gap < 0.75 * policy_gap(plain.net)  # measured: 0.081 against 0.128


def test_hold_policy_keeps_the_starting_policy_as_target_while_the_search_plays(tmp_path) -> None:
    """``hold_policy``: past any warm-up the search plays (more than one simulation) and the
    values learn, while the policy's target stays the frozen starting network's; the frozen
    copy is saved, so a resumed run trains to the same weights."""
    settings = {"updates": 8, "learning_rate": 0.03, "hold_policy": True}
    whole = Run(tiny(tmp_path / "whole", iterations=2, **settings), report=quiet)
    assert whole.teacher is not None and whole.holds_policy() and not whole.in_warmup()
    start = {k: v.clone() for k, v in whole.net.state_dict().items()}
    assert whole.train() == 0
    assert "teacher" in whole.state()
    for key, value in whole.teacher.state_dict().items():
        assert torch.equal(value, start[key]), key  # the target never moves
    assert_resumes_to(whole, tmp_path / "split", settings)
    batch = whole.buffer.batch(np.random.default_rng(0), 64)
    inputs = (torch.from_numpy(batch["obs"]), torch.from_numpy(batch["mask"]).bool(),
              torch.from_numpy(batch["num_players"]), torch.from_numpy(batch["prior"]))
    plain = Run(tiny(tmp_path / "plain", iterations=2, updates=8, learning_rate=0.03),
                report=quiet)  # the same start, the policy on the search's targets
    plain.train()
    with torch.no_grad():
        target = whole.teacher.heads(*inputs)[0].exp()
        gaps = [float((net.heads(*inputs)[0].exp() - target).abs().sum(1).mean())
                for net in (whole.net, plain.net)]
    assert gaps[0] < 0.75 * gaps[1], gaps  # measured: 0.029 against 0.049


def test_anchor_pulls_the_policy_toward_the_starting_networks_and_resumes(tmp_path) -> None:
    """``anchor``: the policy learns, nearer the frozen starting one; a resume restores it."""
    settings = {"updates": 8, "learning_rate": 0.03, "anchor": 4.0}
    lines: list[str] = []
    whole = Run(tiny(tmp_path / "whole", iterations=2, **settings), report=lines.append)
    assert whole.teacher is not None and not whole.holds_policy() and whole.keeps_teacher()
    start = {k: v.clone() for k, v in whole.net.state_dict().items()}
    assert whole.train() == 0
    assert "teacher" in whole.state()
    for key, value in whole.teacher.state_dict().items():
        assert torch.equal(value, start[key]), key  # the anchor never moves
    logged = [json.loads(line) for line in (tmp_path / "whole" / "log.jsonl").read_text()
              .splitlines()]
    assert set(logged[-1]["loss"]) == {"policy", "value", "margin", "anchor"}
    assert " anchor " in lines[-2]  # the progress line names it too
    assert logged[-1]["loss"]["anchor"] > 0
    assert_resumes_to(whole, tmp_path / "split", settings)
    state = whole.state()  # the saved copy, not a fresh one, is what a resumed run holds
    state["teacher"] = {k: v + 1.0 for k, v in state["teacher"].items()}
    resumed = Run(tiny(tmp_path / "whole", iterations=3, **settings), state=state, report=quiet)
    for key, value in resumed.teacher.state_dict().items():
        assert torch.equal(value, state["teacher"][key]), key
    batch = whole.buffer.batch(np.random.default_rng(0), 64)
    inputs = (torch.from_numpy(batch["obs"]), torch.from_numpy(batch["mask"]).bool(),
              torch.from_numpy(batch["num_players"]), torch.from_numpy(batch["prior"]))
    plain = Run(tiny(tmp_path / "plain", iterations=2, updates=8, learning_rate=0.03),
                report=quiet)  # the same start, the policy on the search's targets alone
    plain.train()
    with torch.no_grad():
        target = whole.teacher.heads(*inputs)[0].exp()
        gaps = [float((net.heads(*inputs)[0].exp() - target).abs().sum(1).mean())
                for net in (whole.net, plain.net)]
    assert 0 < gaps[0] < 0.75 * gaps[1], gaps  # measured: 0.033 against 0.060
    assert Run(tiny(tmp_path / "none"), report=quiet).teacher is None  # anchor 0: no copy


def test_greedy_seats_play_unsearched_and_unrecorded(monkeypatch) -> None:
    """Greedy plays the seats drawn for it, every seat of a game but one at chance 1: the
    search never sees them to move, and only the searched seats' decisions are recorded."""
    from moonriver_env.agents.greedy import GreedyAgent
    from moonriver_env.training.az import selfplay

    from moonriver_env.moonriver.core import Game

    variants = ("2p-base", "3p-legends-1", "4p-legends-3", "4p-base")

    def fresh() -> list[Game]:
        return [Game(variant_config(v), seed=i) for i, v in enumerate(variants)]

    games = fresh()
    seats = selfplay.greedy_seats(games, 1.0, np.random.default_rng(5))
    assert [len(s) for s in seats] == [1, 2, 3, 3]  # all but one searched seat
    assert all(s < set(range(g.num_players)) for s, g in zip(seats, games, strict=True))
    rng = np.random.default_rng(5)
    before = rng.bit_generator.state
    assert selfplay.greedy_seats(games, 0.0, rng) == [frozenset()] * 4
    assert rng.bit_generator.state == before  # chance 0 draws nothing: older runs replay
    sizes = {len(selfplay.greedy_seats(games, 0.5, np.random.default_rng(k))[3])
             for k in range(40)}
    assert sizes == {0, 1, 2, 3}  # 4 players: each of three seats Greedy at 0.5
    index = {id(g): i for i, g in enumerate(games)}
    greedy_moves: list[tuple[int, int]] = []
    searched_movers: list[tuple[int, int]] = []

    class Watched(GreedyAgent):
        def act(self, game, observation):
            greedy_moves.append((index[id(game)], game.current_player))
            return super().act(game, observation)

    monkeypatch.setattr(selfplay, "GreedyAgent", Watched)
    torch.manual_seed(0)
    search = batched_search(tiny(Path("x")))

    def watched_search(live, seed):
        searched_movers.extend((index[id(g)], g.current_player) for g in live if id(g) in index)
        return search(live, seed)

    evaluate = network_evaluator(tiny_net().eval(), torch.device("cpu"))
    samples, stats = play(games, evaluate, watched_search, np.random.default_rng(1),
                          greedy=seats)
    assert all(g.is_over for g in games) and stats.decisions == len(samples) > 20
    assert greedy_moves and all(p in seats[g] for g, p in greedy_moves)
    assert searched_movers and all(p not in seats[g] for g, p in searched_movers)
    assert {g for g, _ in greedy_moves} == {0, 1, 2, 3}
    every, _ = play(fresh(), evaluate, search, np.random.default_rng(1))
    assert len(every) > 2 * len(samples)  # every seat's decisions recorded without Greedy
    none, _ = play(fresh(), evaluate, search, np.random.default_rng(1), greedy=[frozenset()] * 4)
    np.testing.assert_array_equal(none.policy, every.policy)  # no Greedy seat: the same games
    with pytest.raises(ValueError, match="4 games but 3 sets of Greedy seats"):
        play(fresh(), evaluate, search, np.random.default_rng(1), greedy=seats[:3])


def test_greedy_seats_config_is_a_chance_and_fixed_on_resume(tmp_path, capsys) -> None:
    """``greedy_seats`` outside [0, 1] is refused in one line; a run with it resumes to the
    weights of one that never stopped."""
    bad = tmp_path / "bad.toml"
    for value in ("1.5", "-0.1", "nan"):
        bad.write_text(f"iterations = 1\ngreedy_seats = {value}\n")
        assert az_train.main(["--config", str(bad), "--out", str(tmp_path / "b")]) == 2
        assert "greedy_seats is a chance: 0 to 1" in one_error(capsys)
    assert "greedy_seats" in az_train.FIXED
    settings = {"greedy_seats": 0.7}
    whole = Run(tiny(tmp_path / "whole", **settings), report=quiet)
    whole.train()
    plain = Run(tiny(tmp_path / "plain"), report=quiet)
    plain.train()
    assert whole.samples < plain.samples  # fewer seats searched and recorded
    assert_resumes_to(whole, tmp_path / "split", settings)


@pytest.mark.parametrize("value_hidden", [0, 6])
def test_freeze_policy_trains_the_value_heads_alone_and_resumes_to_the_same_weights(
        tmp_path, value_hidden) -> None:
    """``freeze_policy``: through a warm-up iteration and a searched one, every weight but
    the value layers (the value and margin heads, and ``value_hidden``'s layer when set)
    stays the starting network's, bit for bit (so its policy does); a stopped and resumed run
    ends at the uninterrupted run's weights."""
    settings = {"updates": 8, "learning_rate": 0.03, "freeze_policy": True, "value_warmup": 1,
                "value_hidden": value_hidden}
    whole = Run(tiny(tmp_path / "whole", iterations=2, **settings), report=quiet)
    assert whole.teacher is None
    start = {k: v.clone() for k, v in whole.net.state_dict().items()}
    assert whole.train() == 0
    moved = {k for k, v in whole.net.state_dict().items() if not torch.equal(v, start[k])}
    own = {"value_hidden.weight", "value_hidden.bias"} if value_hidden else set()
    assert moved == {"value_head.weight", "value_head.bias", "margin_head.weight",
                     "margin_head.bias"} | own
    if value_hidden:  # the agents' file holds the layer; the numpy agents read it
        arrays = read_npz(str(tmp_path / "whole" / "az.npz"))[0]
        assert arrays["value_hidden.weight"].shape[0] == value_hidden
        assert arrays["value_head.weight"].shape == (4, value_hidden)
    assert_resumes_to(whole, tmp_path / "split", settings)


def test_progress_lines_name_decisions_leaves_and_losses(tmp_path) -> None:
    lines: list[str] = []
    Run(tiny(tmp_path, iterations=1), report=lines.append).train()
    assert lines[0].startswith("iter 1 | 2 games, ") and "decisions (" in lines[0]
    assert "leaves (" in lines[0] and "loss policy" in lines[0]
    assert "| time: select " in lines[0] and lines[0].endswith("%")
    (logged,) = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert logged["iteration"] == 1 and logged["decisions"] > 0
    assert set(logged["seconds"]) == {*PHASES, "update"} and logged["seconds"]["update"] > 0
    assert set(logged["loss"]) == {"policy", "value", "margin"}
    assert lines[-1].startswith("done: 1 iterations")
    assert lines[-1].endswith(f"moonriver-eval --agents az:{tmp_path / 'az.npz'} greedy "
                              f"--players 2 --games 1000)")
    run = Run(tiny(tmp_path / "l", variants=("3p-legends-4",)), report=quiet)
    assert run.eval_command().endswith("greedy greedy --players 3 --mode legends --scenario 4 "
                                       "--games 1000")


def test_ctrl_c_saves_the_last_finished_iteration_and_resume_continues(tmp_path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text("\n".join(f"{k} = {list(v) if isinstance(v, tuple) else v!r}"
                                .replace("'", '"') for k, v in TINY.items()) + "\n")
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "moonriver_env.training.az.train", "--config", str(config),
           "--out", str(out), "--iterations", "100000", "--device", "cpu"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ctrl_c_as_in_a_terminal)
    try:
        lines = []
        while not any(line.startswith("iter 2 ") for line in lines):
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            lines.append(line)
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    saved = [line for line in rest.splitlines() if line.startswith("interrupted: saved")]
    assert len(saved) == 1 and f"--resume {out}" in saved[0]
    state = az_train.load_resume(str(out))
    done = state["iteration"]
    assert done >= 2 and f"iteration {done} " in saved[0]
    assert az_train.main(["--resume", str(out), "--iterations", str(done + 1)]) == 0
    assert az_train.load_resume(str(out))["iteration"] == done + 1


def test_deferred_interrupt_finishes_the_block_first() -> None:
    finished = []
    # Ctrl-C as in a terminal: a suite started as a background job runs with SIGINT ignored,
    # and the block then rightly re-raises an ignored signal
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt), deferred_interrupt():
            os.kill(os.getpid(), signal.SIGINT)
            finished.append(True)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert finished == [True]


def test_warm_start_copies_the_ppo_recipes_trunk_policy_and_prior(tmp_path) -> None:
    sizes = az_train.source_sizes(str(SHIPPED))
    assert sizes == {"channels": 32, "opponent_channels": 16, "hidden": 128, "prior": True}
    net = AZNet(NetConfig(channels=32, opponent_channels=16, hidden=128, use_prior=True))
    copied = warm_start(net, str(SHIPPED))
    with np.load(SHIPPED) as data:
        assert "trunk.0.weight" in copied and "prior_weight" in copied
        assert "value_head.weight" not in copied
        np.testing.assert_array_equal(net.state_dict()["dense_head.bias"].numpy(),
                                      data["dense_head.bias"])
    # the warm-started policy is the PPO policy, Greedy's prior included
    from moonriver_env.agents.pretrained import greedy_prior, load_weights

    from moonriver_env.moonriver.core import Game

    game = Game(variant_config("4p-base"), seed=3)
    for _ in range(12):
        game.apply(int(game.legal_action_ids()[-1]))
    obs, mask = game.observe(game.current_player)[None], game.legal_mask()[None].astype(bool)
    prior = greedy_prior(game)[None]
    assert np.count_nonzero(prior) > 1
    ppo_logits, _ = load_weights(str(SHIPPED))[0].forward(obs, mask, prior)
    with torch.no_grad():
        logp, _, _ = net.heads(torch.from_numpy(obs), torch.from_numpy(mask),
                               torch.tensor([4]), torch.from_numpy(prior))
    legal = mask[0]
    expected = ppo_logits[0][legal] - np.logaddexp.reduce(ppo_logits[0][legal])
    np.testing.assert_allclose(logp[0].numpy()[legal], expected, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="sizes differ"):
        warm_start(tiny_net(), str(SHIPPED))


def test_warm_start_from_an_az_file_copies_its_value_heads_too() -> None:
    every = SHIPPED.parent / "all.npz"  # the shipped network for every variant (az format)
    arrays = read_npz(str(every))[0]  # its variant layers (the Gold Rush adapters) too
    net = AZNet(NetConfig(channels=32, opponent_channels=16, hidden=128, use_prior=True,
                          **variant_layers(arrays)), value_hidden=value_hidden_size(arrays))
    copied = warm_start(net, str(every))
    with np.load(every) as data:
        assert sorted(copied) == sorted(k for k in data.files if k != "__meta__")
        assert "value_head.weight" in copied
        for name in copied:
            np.testing.assert_array_equal(net.state_dict()[name].numpy(), data[name])


@pytest.mark.parametrize("width", [0, 16, 128])
def test_warm_start_copies_the_value_layers_whole_or_not_at_all(tmp_path, width) -> None:
    """Between value layers of other widths (0: the head reads the state) the policy is
    copied and no value weight is, even one whose shape happens to fit."""
    torch.manual_seed(0)
    source = AZNet(NetConfig(channels=4, opponent_channels=2, hidden=8), value_hidden=8)
    path = str(tmp_path / "source.npz")
    export_npz(source, path)
    net = AZNet(NetConfig(channels=4, opponent_channels=2, hidden=8), value_hidden=width)
    copied = warm_start(net, path)
    policy = sorted(k for k in read_npz(path)[0] if not k.startswith(("value_", "margin_")))
    assert sorted(copied) == policy
    same = AZNet(NetConfig(channels=4, opponent_channels=2, hidden=8), value_hidden=8)
    assert sorted(warm_start(same, path)) == sorted(read_npz(path)[0])
    # the same width over other inputs (a layer that read less): still none of it
    arrays, meta = read_npz(path)
    arrays["value_hidden.weight"] = arrays["value_hidden.weight"][:, :20].copy()
    np.savez(path, **arrays, __meta__=np.array(json.dumps(meta)))
    same = AZNet(NetConfig(channels=4, opponent_channels=2, hidden=8), value_hidden=8)
    assert sorted(warm_start(same, path)) == policy


def test_cli_warm_start_takes_the_sources_sizes(tmp_path, capsys) -> None:
    out = tmp_path / "warm"
    args = ["--out", str(out), "--iterations", "1", "--games", "1", "--simulations", "2",
            "--warm-start", str(SHIPPED), "--device", "cpu"]
    assert az_train.main(args) == 0
    text = capsys.readouterr().out
    assert "warm start: " in text and "done: 1 iterations" in text
    assert "(not its value layers" in text  # the PPO weights' one-value head never fits
    assert az_train.load_resume(str(out))["config"]["hidden"] == 128


def one_error(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("moonriver-train-az: error: "), captured.err
    return lines[0]


@pytest.mark.parametrize(("argv", "words"), [
    (["--iterations", "0"], "set iterations or minutes"),
    (["--iterations", "1", "--games", "0"], "games, simulations and max_considered"),
    (["--iterations", "1", "--warm-start", "nowhere.pt"], "warm_start 'nowhere.pt': no such"),
    (["--resume", "no-such-run"], "cannot resume 'no-such-run'"),
    (["--iterations", "1", "--leaves", "gpu"], "leaves must be one of auto, torch, core"),
])
def test_cli_errors_are_one_line(tmp_path, capsys, argv, words) -> None:
    assert az_train.main(["--out", str(tmp_path / "o"), *argv]) == 2
    assert words in one_error(capsys)


def test_a_bad_command_line_is_one_line(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        az_train.main(["--games", "x"])
    assert info.value.code == 2
    assert "argument --games: invalid int value: 'x'" in one_error(capsys)


def test_cli_refuses_bad_settings_and_changed_runs(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('variants = ["5p-base"]\niterations = 1\n')
    assert az_train.main(["--config", str(bad), "--out", str(tmp_path / "b")]) == 2
    assert "unknown variant '5p-base'" in one_error(capsys)
    bad.write_text("iterations = 1\nsimulation = 3\n")
    assert az_train.main(["--config", str(bad)]) == 2
    line = one_error(capsys)
    assert "unknown settings ['simulation']" in line
    assert "did you mean 'simulation' -> 'simulations'" in line
    bad.write_text('iterations = 1\ngames = "many"\n')
    assert az_train.main(["--config", str(bad)]) == 2
    assert "games must be an integer, got 'many'" in one_error(capsys)
    bad.write_text("iterations = 1\nanchor = -1\n")
    assert az_train.main(["--config", str(bad)]) == 2
    assert "anchor finite and >= 0" in one_error(capsys)
    bad.write_text("iterations = 1\nanchor = 1\nfreeze_policy = true\n")
    assert az_train.main(["--config", str(bad)]) == 2
    assert "set anchor = 0 with freeze_policy" in one_error(capsys)
    out = tmp_path / "run"
    Run(tiny(out, iterations=1), report=quiet).train()
    assert az_train.main(["--out", str(out), "--iterations", "2"]) == 2
    assert "already holds a run" in one_error(capsys)
    assert az_train.main(["--resume", str(out), "--simulations", "9"]) == 2
    assert "cannot change ['simulations']" in one_error(capsys)
    assert az_train.main(["--resume", str(out), "--variants", "2p-base"]) == 2
    assert "cannot change ['variants']" in one_error(capsys)
    assert az_train.main(["--resume", str(out), "--iterations", "1", "--variants",
                          *TINY["variants"]]) == 0  # the same variants: no change
    if not torch.cuda.is_available():
        assert az_train.main(["--out", str(tmp_path / "c"), "--iterations", "1",
                              "--device", "cuda"]) == 2
        assert "no CUDA GPU" in one_error(capsys)


def test_device_auto_is_cuda_when_present_else_cpu() -> None:
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert az_train.pick_device("auto").type == expected
    assert az_train.pick_device("cpu").type == "cpu"


def test_shipped_config_is_valid_and_covers_every_variant() -> None:
    path = Path(__file__).resolve().parents[2] / "training" / "configs" / "az_all.toml"
    cfg = AZConfig.load(str(path), {})
    assert variant_list(cfg.variants) == ALL_VARIANTS
    assert 16 <= cfg.simulations <= 64
    assert replace(cfg, iterations=1).iterations == 1


def test_value_config_only_trains_the_value_heads_of_the_ppo_policy() -> None:
    configs = Path(__file__).resolve().parents[2] / "training" / "configs"
    shipped = configs / ".." / ".." / "agents" / "weights" / "4p-base.npz"
    # its warm start is a run's final.pt: stand the PPO weights in for it
    cfg = AZConfig.load(str(configs / "az_value.toml"), {"warm_start": str(shipped)})
    assert cfg.value_warmup == cfg.iterations > 0  # every iteration is the value warm-up
    assert cfg.freeze_policy  # the policy is the last PPO step's exactly
    assert cfg.value_hidden == 64  # the value layers of the shipped file
    arrays = read_npz(str(configs / ".." / ".." / "agents" / "weights" / "all.npz"))[0]
    assert value_hidden_size(arrays) == cfg.value_hidden
    assert variant_list(cfg.variants) == ALL_VARIANTS
    with open(configs / "az_value.toml", "rb") as fh:
        assert tomllib.load(fh)["warm_start"] == "runs/league_soup/final.pt"


def _after_the_value_run(name: str) -> AZConfig:
    """A config whose expert and warm start are az_value.toml's output (``runs/az_value/az.npz``,
    checked), loaded with the shipped file standing in for it; every variant is played."""
    configs = Path(__file__).resolve().parents[2] / "training" / "configs"
    with open(configs / name, "rb") as fh:
        raw = tomllib.load(fh)
    assert raw["warm_start"] == raw["expert"] == "runs/az_value/az.npz"
    every = str(configs / ".." / ".." / "agents" / "weights" / "all.npz")
    cfg = AZConfig.load(str(configs / name), {"warm_start": every, "expert": every})
    assert set(variant_list(cfg.variants)) == set(ALL_VARIANTS)
    # its warm start keeps az_value.toml's value layers: the same width
    assert cfg.value_hidden == AZConfig.load(str(configs / "az_value.toml"), {
        "warm_start": every}).value_hidden
    return cfg


def test_expert_config_learns_the_value_runs_search_in_every_variant() -> None:
    cfg = _after_the_value_run("az_expert.toml")
    assert variant_list(cfg.variants).count("4p-base") == 5
    assert (cfg.target, cfg.leaves, cfg.value_warmup, cfg.hold_policy) == ("action", "core", 0,
                                                                           False)


def test_taught_config_learns_a_search_with_playouts_weighted_to_gold_rush() -> None:
    """az_rollout_expert.toml (the pipeline's last step): az_value's search with playouts
    mixed in teaches the action and the outcomes, 4-player Gold Rush drawn most."""
    configs = Path(__file__).resolve().parents[2] / "training" / "configs"
    every = str(configs / ".." / ".." / "agents" / "weights" / "all.npz")
    cfg = AZConfig.load(str(configs / "az_rollout_expert.toml"),
                        {"warm_start": every, "expert": every})
    assert set(variant_list(cfg.variants)) == set(ALL_VARIANTS)
    assert variant_list(cfg.variants).count("4p-legends-2") == 6
    assert (cfg.target, cfg.leaves, cfg.value_warmup, cfg.rollout_weight) == ("action", "core",
                                                                              0, 0.8)
    assert cfg.rollout_depth == 0 and cfg.iterations == 80


def test_table_expert_config_is_the_agents_search_at_tables_of_3_and_4() -> None:
    """az_table_expert.toml (research log): the shipped network's search as the agents play it
    at tables of 3 and 4 teaches its improved policy over the ten variants of those tables."""
    from moonriver_env.agents.az import table_search

    configs = Path(__file__).resolve().parents[2] / "training" / "configs"
    every = str(configs / ".." / ".." / "agents" / "weights" / "all.npz")
    cfg = AZConfig.load(str(configs / "az_table_expert.toml"),
                        {"warm_start": every, "expert": every})
    assert {variant_config(v).num_players for v in variant_list(cfg.variants)} == {3, 4}
    assert len(set(variant_list(cfg.variants))) == 10
    settings = az_train.search_settings(cfg)
    for n in (3, 4):
        assert {k: settings[k] for k in table_search(n)} == table_search(n)
    assert (cfg.target, cfg.leaves, cfg.simulations) == ("improved", "core", 128)


def _expert_settings(*names: str) -> list[dict]:
    """The settings of training/configs ``names``, each with the shipped file as warm start
    and expert."""
    from dataclasses import asdict

    configs = Path(__file__).resolve().parents[2] / "training" / "configs"
    every = str(configs / ".." / ".." / "agents" / "weights" / "all.npz")
    return [asdict(AZConfig.load(str(configs / name), {"warm_start": every, "expert": every}))
            for name in names]


def test_mean_expert_config_is_the_table_expert_step_with_four_searches_a_decision() -> None:
    """az_mean_expert.toml (research log): az_table_expert.toml's step on 4-player base, each
    decision's target the mean of four searches."""
    mean, table = _expert_settings("az_mean_expert.toml", "az_table_expert.toml")
    assert (mean["target_searches"], table["target_searches"]) == (4, 1)
    assert variant_list(mean["variants"]) == ("4p-base",)
    apart = {k for k in mean if mean[k] != table[k]}
    assert apart == {"target_searches", "variants", "seed", "iterations"}


def test_steady_expert_config_is_the_mean_expert_step_taught_where_two_searches_agree() -> None:
    """az_steady_expert.toml (research log): az_mean_expert.toml's step with two searches a
    decision and the action both chose as the target."""
    steady, mean = _expert_settings("az_steady_expert.toml", "az_mean_expert.toml")
    assert (steady["target"], steady["target_searches"]) == ("steady", 2)
    assert {k for k in steady if steady[k] != mean[k]} == {"target", "target_searches", "seed"}


def test_steady_all_config_is_the_steady_step_over_every_variant_at_the_agents_tables() -> None:
    """az_steady_all.toml: az_steady_expert.toml's step over all 15 variants, table_search."""
    every, four = _expert_settings("az_steady_all.toml", "az_steady_expert.toml")
    assert len(variant_list(every["variants"])) == 15 and every["table_search"]
    assert (every["c_scale"], every["rollout_weight"]) == (1.0, 0.0)
    assert {k for k in every if every[k] != four[k]} == {"variants", "table_search", "c_scale",
                                                       "rollout_weight", "seed"}


def test_steady_anchor_config_is_the_all_variant_steady_step_pulled_to_its_start() -> None:
    """az_steady_anchor.toml: az_steady_all.toml with anchor 4 and nothing else changed."""
    anchored, steady = _expert_settings("az_steady_anchor.toml", "az_steady_all.toml")
    assert anchored["anchor"] == 4.0 and steady["anchor"] == 0.0
    assert {k for k in anchored if anchored[k] != steady[k]} == {"anchor"}


def test_specialist_config_is_the_all_variant_steady_step_on_one_variant() -> None:
    """az_specialist.toml: az_steady_all.toml on one variant, 10 iterations, its own seed."""
    one, steady = _expert_settings("az_specialist.toml", "az_steady_all.toml")
    assert len(variant_list(one["variants"])) == 1 and one["iterations"] == 10
    assert {k for k in one if one[k] != steady[k]} == {"variants", "iterations", "seed"}


def test_search_values_config_holds_the_policy_while_its_search_plays() -> None:
    cfg = _after_the_value_run("az_search_values.toml")
    assert (cfg.hold_policy, cfg.leaves, cfg.value_warmup) == (True, "core", 0)
    assert cfg.simulations == 128 and cfg.iterations > 0


def test_variant_film_learns_at_its_own_rate_and_resumes(tmp_path) -> None:
    """``variant_film`` starts at zero and learns its played codes alone, at its own rate."""
    settings = {"variant_film": True, "variant_learning_rate": 0.05, "updates": 4, "games": 3}
    whole = Run(tiny(tmp_path / "whole", **settings), report=quiet)
    assert not whole.net.variant_film.weight.any()
    groups = whole.opt.param_groups
    assert [(g["lr"], g["weight_decay"]) for g in groups] == [(1e-3, 1e-4), (0.05, 0.0)]
    assert groups[1]["params"] == [whole.net.variant_film.weight]
    assert whole.train() == 0
    film = whole.net.variant_film.weight.detach().numpy()
    played = [0, 5 + 2, 10]  # players x mode codes: 2p base, 3p legends 2, 4p base
    assert (np.abs(film[:, played]).max(0) > 0.01).all()
    assert not np.delete(film, played, axis=1).any()
    assert_resumes_to(whole, tmp_path / "split", settings)
    with pytest.raises(CLIError, match=r"variant_learning_rate .* needs variant_film = true"):
        tiny(tmp_path, variant_learning_rate=0.01).validate()
    with pytest.raises(CLIError, match="variant_learning_rate must be finite and >= 0"):
        tiny(tmp_path, variant_film=True, variant_learning_rate=-1.0).validate()


def test_a_film_is_read_from_the_arrays_and_kept_by_every_loader(tmp_path) -> None:
    """Every loader reads a film from the arrays (not the metadata); a warm start keeps it."""
    from moonriver_env.agents.az import load_az
    from moonriver_env.training.az.network import load_az_net, source_sizes
    from moonriver_env.training.policy_net import load_npz

    from moonriver_env.moonriver.core import Game

    torch.manual_seed(0)
    net = AZNet(NetConfig(channels=4, opponent_channels=2, hidden=8, variant_film=True)).eval()
    with torch.no_grad():
        net.variant_film.weight.normal_(0.0, 0.5)
    path = str(tmp_path / "film.npz")
    export_npz(net, path, {"net": {"channels": 4, "opponent_channels": 2, "hidden": 8,
                                   "use_prior": False, "variant_film": False}})
    games = [Game(variant_config(v), seed=i) for i, v in enumerate(ALL_VARIANTS)]
    obs = np.stack([g.observe(g.current_player) for g in games])
    mask = np.stack([g.legal_mask() for g in games]).astype(bool)
    prior = np.zeros(mask.shape, np.float32)
    inputs = (torch.from_numpy(obs), torch.from_numpy(mask), torch.from_numpy(prior))
    with torch.no_grad():
        want = net(*inputs)[0].numpy()
        for loaded in (load_az_net(path).eval(), load_npz(path)[0]):
            assert loaded.config.variant_film
            np.testing.assert_allclose(loaded(*inputs)[0].numpy(), want, atol=1e-5)
    logits = load_az(path)[0].evaluate(obs, mask, [g.num_players for g in games], prior)[0]
    top = logits.max(1, keepdims=True)
    log_p = logits - top - np.log(np.exp(logits - top).sum(1, keepdims=True))
    np.testing.assert_allclose(log_p[mask], want[mask], atol=2e-5)
    assert source_sizes(path)["variant_film"] is True
    with pytest.raises(ValueError, match=r"it has variant layers \(variant_film.weight\)"):
        warm_start(AZNet(NetConfig(channels=4, opponent_channels=2, hidden=8)), path)
    plain = str(tmp_path / "plain.npz")
    export_npz(AZNet(NetConfig(channels=4, opponent_channels=2, hidden=8)), plain)
    assert "variant_film" not in source_sizes(plain)


def test_variant_adapters_start_as_the_base_and_fold_in_specialists(tmp_path) -> None:
    """Zero adapters give the base's function; folded specialists give theirs where taught."""
    from moonriver_env.agents.az import load_az
    from moonriver_env.training.az.network import (
        code_of_variant,
        load_az_net,
        specialist_adapters,
    )

    from moonriver_env.moonriver.core import Game
    from moonriver_env.moonriver.observation import MODE_ONEHOT, PLAYERS_ONEHOT

    sizes = {"channels": 4, "opponent_channels": 2, "hidden": 8}
    torch.manual_seed(0)
    base, taught, other = (AZNet(NetConfig(**sizes), value_hidden=6).eval() for _ in range(3))
    for net in (taught, other):  # specialists: the base with other rest and trunk layers
        net.load_state_dict({k: v for k, v in base.state_dict().items()
                             if not k.startswith(("rest.", "trunk."))}, strict=False)
    variants = ("2p-base", "3p-legends-2", "4p-legends-4")
    games = [Game(variant_config(v), seed=i) for i, v in enumerate(variants)]
    obs = torch.from_numpy(np.stack([g.observe(g.current_player) for g in games]))
    codes = obs[:, PLAYERS_ONEHOT, None] * obs[:, None, MODE_ONEHOT]  # players x mode
    assert [code_of_variant(v) for v in variants] == codes.reshape(3, -1).argmax(1).tolist()
    mask = torch.from_numpy(np.stack([g.legal_mask() for g in games])).bool()
    players = torch.tensor([g.num_players for g in games])
    full = specialist_adapters(base, {"4p-legends-4": taught, "2p-base": other}, rank=8)
    low = specialist_adapters(base, {"4p-legends-4": taught}, rank=2)
    with torch.no_grad():
        want = [net.heads(obs, mask, players)[0] for net in (base, taught, other)]
        got, coarse = full.heads(obs, mask, players)[0], low.heads(obs, mask, players)[0]
        fresh = AZNet(full.config, value_hidden=6).eval()
        fresh.load_state_dict(base.state_dict(), strict=False)
        np.testing.assert_allclose(fresh.heads(obs, mask, players)[0], want[0], atol=1e-6)
    legal = mask.numpy()
    for row, source in ((0, 2), (1, 0), (2, 1)):  # full rank: each row its source's policy
        np.testing.assert_allclose(got[row][legal[row]], want[source][row][legal[row]],
                                   atol=1e-4)
    assert torch.equal(coarse[:2], want[0][:2])  # untaught codes: the base exactly
    assert not torch.allclose(coarse[2][legal[2]], want[0][2][legal[2]], atol=1e-4)
    path = str(tmp_path / "adapted.npz")
    export_npz(full, path)
    assert load_az_net(path).config.variant_rank == 8
    logits = load_az(path)[0].evaluate(obs.numpy(), legal, players.numpy(),
                                       np.zeros(legal.shape, np.float32))[0]
    top = logits.max(1, keepdims=True)
    log_p = logits - top - np.log(np.exp(logits - top).sum(1, keepdims=True))
    np.testing.assert_allclose(log_p[legal], got.numpy()[legal], atol=2e-5)
    numpy_net = load_az(path)[0]  # the compiled core's copy: the same function
    core = numpy_net.core.evaluate(obs.numpy(), legal.astype(np.int8),
                                   players.numpy().astype(np.int32),
                                   np.zeros(legal.shape, np.float32))[0]
    np.testing.assert_allclose(core[legal], logits[legal], atol=1e-4)
    with pytest.raises(ValueError, match="set variant_film and variant_rank as in its recipe"):
        warm_start(AZNet(NetConfig(**sizes)), path)
    with pytest.raises(ValueError, match="has variant layers already"):
        specialist_adapters(full, {}, rank=2)
    broken = read_npz(path)[0]
    broken["variant_trunk.up"] = broken["variant_trunk.up"][:, :, :3]
    with pytest.raises(ValueError, match=r"variant_trunk.up has shape \(15, 8, 3\), expected"):
        NumpyAZNet(broken)
    good = read_npz(path)[0]
    for arrays, words in (
            ({k: v for k, v in good.items() if k != "variant_rest.down"},
             "variant adapters need variant_rest.down too"),
            ({k: v for k, v in good.items() if not k.startswith("variant_rest.")},
             "variant adapters need variant_rest.bias too"),
            (good | {"variant_rest.down": good["variant_rest.down"][:, :4]},
             r"down arrays have shapes \(15, 4, 534\) and \(15, 8, 28\)"),
            (good | {"variant_rest.scale": good["variant_rest.bias"]},
             "variant_rest.scale is not a variant layer")):
        with pytest.raises(ValueError, match=words):
            NumpyAZNet(arrays)
        with pytest.raises(ValueError, match=words):
            variant_layers(arrays)
    with pytest.raises(ValueError, match="rank 9; these layers allow 1 to 8"):
        specialist_adapters(base, {"2p-base": other}, rank=9)


@pytest.mark.parametrize("leaves", ["torch", "core"])
def test_variant_adapters_learn_their_played_codes_alone(tmp_path, leaves) -> None:
    """``variant_rank``: each played variant's adapter learns; the others stay zero."""
    with pytest.raises(CLIError, match="variant_rank must be 0 to 32"):
        tiny(tmp_path, variant_rank=33).validate()
    run = Run(tiny(tmp_path / "run", variant_rank=2, leaves=leaves, games=3,
                   variant_learning_rate=0.05), report=quiet)
    assert run.train() == 0
    up = run.net.variant_trunk.up.detach()
    assert (up[[0, 7, 10]].abs().flatten(1).amax(1) > 0.01).all()  # each played code learned
    assert not np.delete(up.numpy(), [0, 7, 10], 0).any()


def test_fold_writes_one_network_from_specialists_and_refuses_bad_sources(tmp_path,
                                                                         capsys) -> None:
    """``python -m ...az.fold``: the same file twice from the same sources; clear refusals."""
    from moonriver_env.training.az import fold

    sizes = {"channels": 4, "opponent_channels": 2, "hidden": 8}
    torch.manual_seed(0)
    paths = {}
    for name, variants in (("base", ["all"]), ("l4", ["4p-legends-4"]), ("l1", ["4p-legends-1"]),
                           ("l4b", ["4p-legends-4"]), ("two", ["2p-base", "3p-base"])):
        paths[name] = str(tmp_path / f"{name}.npz")
        export_npz(AZNet(NetConfig(**sizes)), paths[name], {"recipe": {"variants": variants}})
    wide = str(tmp_path / "wide.npz")
    export_npz(AZNet(NetConfig(channels=4, opponent_channels=2, hidden=12)), wide,
               {"recipe": {"variants": ["2p-base"]}})
    outs = [str(tmp_path / f"folded{i}.npz") for i in (1, 2)]
    for out in outs:
        assert fold.main([out, paths["base"], paths["l4"], paths["l1"], "--rank", "3"]) == 0
    assert Path(outs[0]).read_bytes() == Path(outs[1]).read_bytes()
    meta = read_npz(outs[0])[1]["folded"]
    assert meta["rank"] == 3 and set(meta["specialists"]) == {"4p-legends-4", "4p-legends-1"}
    for sources, words in (([paths["base"]], "a specialist is taught on exactly one"),
                           ([paths["two"]], "a specialist is taught on exactly one"),
                           ([paths["l4"], paths["l4b"]], "are both taught on 4p-legends-4"),
                           ([wide], "specialists are taught from the base network"),
                           ([str(tmp_path / "none.npz")], "not an az.npz")):
        with pytest.raises(SystemExit) as stop:
            fold.main([str(tmp_path / "x.npz"), paths["base"], *sources])
        assert stop.value.code == 2 and words in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:  # a base that is not a search-recipe network
        fold.main([str(tmp_path / "x.npz"), str(tmp_path / "none.npz"), paths["l4"]])
    assert stop.value.code == 2 and "the base network" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        fold.main([str(tmp_path / "x.npz"), paths["base"], paths["l4"], "--rank", "0"])
    assert "--rank must be 1 to 32" in capsys.readouterr().err
    assert not (tmp_path / "x.npz").exists()
