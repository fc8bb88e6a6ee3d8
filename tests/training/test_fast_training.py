"""The fast recipe's pieces: RanchNet's action layout, its numpy twin, batched play, PPO maths."""

from __future__ import annotations

import io
import itertools
import json
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import asdict, fields, replace
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from moonriver_env.agents.pretrained import (  # noqa: E402
    MASKED,
    SHAPE_WEIGHT,
    NumpyRanchNet,
    action_index,
    weights_path,
)
from moonriver_env.agents.registry import make_agent  # noqa: E402
from moonriver_env.training.export_weights import export  # noqa: E402
from moonriver_env.training.fast import rollout  # noqa: E402
from moonriver_env.training.fast.config import LOCKED_ON_RESUME, FastConfig  # noqa: E402
from moonriver_env.training.fast.losses import advantages, imitation_step  # noqa: E402
from moonriver_env.training.fast.parallel_play import PlayPool, shares  # noqa: E402
from moonriver_env.training.fast.runner import (  # noqa: E402
    RESUME_FILE,
    Progress,
    Runner,
    lineups,
    load_resume,
    ppo_step,
)
from moonriver_env.training.fast.train import build_parser, main, train  # noqa: E402
from moonriver_env.training.pipeline import load_pipeline  # noqa: E402
from moonriver_env.training.policy_net import (  # noqa: E402
    NetConfig,
    RanchNet,
    cell_max,
    legal_lists,
    load_net,
    save_net,
    with_critic,
)
from moonriver_env.training.variants import (  # noqa: E402
    ALL_VARIANTS,
    variant_config,
    variant_list,
)

from moonriver_env.moonriver.backend import Encoder, make_game  # noqa: E402
from moonriver_env.moonriver.observation import ObservationEncoder  # noqa: E402
from moonriver_env.moonriver.rules import NUM_ACTIONS, Game, GameConfig  # noqa: E402
from moonriver_env.moonriver.rules.actions import ACTIONS, Build, Thief  # noqa: E402
from tests.helpers import ctrl_c_as_in_a_terminal  # noqa: E402
from tests.training.test_cli import one_error_line  # noqa: E402

torch.set_num_threads(1)


def _positions(count: int, players: int = 4, seed: int = 0):
    """Observations and masks of the players to act along a random game."""
    enc, rng = ObservationEncoder(), np.random.default_rng(seed)
    game = Game(GameConfig(num_players=players), seed=seed)
    obs, masks = [], []
    while len(obs) < count:
        if game.is_over:
            game = Game(GameConfig(num_players=players), seed=int(rng.integers(1000)))
        obs.append(enc.encode(game, game.current_player))
        masks.append(game.legal_mask().astype(bool))
        legal = masks[-1].nonzero()[0]
        game.apply(int(legal[rng.integers(legal.size)]))
    return np.stack(obs), np.stack(masks)


def test_action_index_is_a_permutation_with_spatial_builds() -> None:
    index = action_index()
    assert sorted(index.tolist()) == list(range(NUM_ACTIONS))
    # Both orientations of one pair at one cell are neighbours in the viewer's cell block,
    # and one pair's placements at two cells are 49 scores apart (cell-major layout).
    build = [i for i, a in enumerate(ACTIONS) if isinstance(a, Build)]
    a0, a1 = build[0], build[1]  # pair (0, 1) at (0, 0): horizontal, vertical
    assert index[a1] - index[a0] == 1
    assert index[build[2]] - index[a0] == 49  # the same pair one cell to the right
    thief = [i for i, a in enumerate(ACTIONS) if isinstance(a, Thief)]
    assert index[thief].tolist() == list(range(NUM_ACTIONS - 150, NUM_ACTIONS))


def test_ranchnet_gives_zero_probability_to_illegal_actions() -> None:
    torch.manual_seed(0)
    net = RanchNet(NetConfig(channels=8, opponent_channels=4, hidden=16))
    obs, masks = _positions(40)
    logp, value = net(torch.from_numpy(obs), torch.from_numpy(masks))
    probs = logp.detach().exp()
    assert torch.allclose(probs.sum(dim=1), torch.ones(40), atol=1e-5)
    assert float(probs[~torch.from_numpy(masks)].max()) == 0.0
    assert value.shape == (40,)
    entropy = -(probs * logp.detach()).sum(dim=1)
    assert torch.isfinite(entropy).all()


def test_numpy_forward_matches_torch() -> None:
    torch.manual_seed(1)
    net = RanchNet(NetConfig(channels=8, opponent_channels=4, hidden=16))
    for p in net.parameters():  # non-trivial weights so that every layer matters
        torch.nn.init.normal_(p, std=0.2)
    twin = NumpyRanchNet({k: v.numpy() for k, v in net.state_dict().items()})
    obs, masks = _positions(60, players=2, seed=3)
    with torch.no_grad():
        logp, value = net(torch.from_numpy(obs), torch.from_numpy(masks))
    logits, value_np = twin.forward(obs, masks)
    assert np.abs(value.numpy() - value_np).max() < 1e-4
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp_np = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    assert np.abs(np.where(masks, logp_np - logp.numpy(), 0.0)).max() < 1e-4
    assert (logits.argmax(axis=1) == logp.numpy().argmax(axis=1)).all()


@pytest.mark.parametrize("shape", [(7, 3, 50, 16), (5, 50, 32), (4, 9, 6)])
def test_cell_max_equals_amax_in_value_and_gradient_with_ties(shape) -> None:
    gen = torch.Generator().manual_seed(4)
    x = torch.rand(*shape, generator=gen)
    x[x < 0.6] = 0.0  # ties at zero, as after a ReLU
    x[..., 2, :] = x[..., 1, :]  # and at positive values (cells alike, e.g. two empty cells)
    x.view(-1)[::7] *= -1.0
    up = torch.randn(*shape[:-2], shape[-1], generator=gen)
    ours, theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
    got, want = cell_max(ours), theirs.amax(-2)
    (got * up).sum().backward()
    (want * up).sum().backward()
    assert torch.equal(got, want)
    assert torch.equal(ours.grad, theirs.grad)
    assert (theirs.grad[..., 1, :] != 0).any()  # the ties share the gradient


def test_play_records_only_learner_seats_with_legal_actions() -> None:
    rng = np.random.default_rng(0)
    net = RanchNet(NetConfig(channels=8, opponent_channels=4, hidden=16)).eval()
    games = rollout.new_games(3, 3, "base", rng)
    roles = [["learner", "greedy", "greedy"], ["greedy", "learner", "learner"],
             ["greedy", "greedy", "learner"]]
    batch = rollout.play(games, roles, {"learner": net}, rng, Encoder(),
                         margin_coef=0.5)
    assert all(g.is_over for g in games)
    assert {roles[i][s] for i, s in batch.keys} == {"learner"}
    assert set(batch.returns) == {(0, 0), (1, 1), (1, 2), (2, 2)}
    for mask, action in zip(batch.masks, batch.actions, strict=True):
        assert mask[action]
    for (i, seat), reward in batch.returns.items():
        # +1 / -1 plus half the margin over the best other score (>= 0 for a winner, <= 0
        # for a loser: a loser never outscores the winner)
        assert reward >= 1.0 if seat in games[i].winners() else reward <= -1.0
        assert reward == pytest.approx(rollout.seat_reward(games[i], seat, 0.5))


def test_greedy_labels_are_tied_best_sets_containing_the_move() -> None:
    rng = np.random.default_rng(2)
    games = rollout.new_games(2, 2, "base", rng)
    batch = rollout.play(games, [["greedy", "greedy"]] * 2, {}, rng, Encoder(),
                         record=None, label_greedy=True)
    assert len(batch) > 50
    for mask, ties in zip(batch.masks, batch.actions, strict=True):
        assert ties.any() and not (ties & ~mask.astype(bool)).any()


def test_imitation_lowers_the_loss_on_a_batch() -> None:
    torch.manual_seed(0)
    rng = np.random.default_rng(4)
    net = RanchNet(NetConfig(channels=8, opponent_channels=4, hidden=32))
    batch = rollout.play(rollout.new_games(2, 2, "base", rng), [["greedy", "greedy"]] * 2, {},
                         rng, Encoder(), record=None, label_greedy=True)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    first = imitation_step(net, opt, batch, 1, 4096, rng)
    for _ in range(15):
        last = imitation_step(net, opt, batch, 1, 4096, rng)
    assert last["bc_loss"] < 0.7 * first["bc_loss"]
    assert last["bc_top1_in_ties"] > first["bc_top1_in_ties"]


def test_advantages_follow_gae_with_the_final_reward() -> None:
    batch = rollout.Batch(values=[0.5, 0.2, 0.1], keys=[(0, 1), (0, 2), (0, 1)],
                          returns={(0, 1): 1.0, (0, 2): -1.0})
    adv, ret = advantages(batch, lam=0.5)
    # seat 1: steps 0 and 2; last delta = 1 - 0.1 = 0.9; first = 0.1 - 0.5 + 0.5 * 0.9
    assert adv[2] == pytest.approx(0.9)
    assert adv[0] == pytest.approx(-0.4 + 0.45)
    assert adv[1] == pytest.approx(-1.2)
    assert ret == pytest.approx(adv + np.array([0.5, 0.2, 0.1]))


def test_lineups_always_seat_the_learner() -> None:
    cfg = FastConfig(games=200, p_greedy=0.5, p_self=0.2)
    table = lineups(cfg, np.random.default_rng(0), snapshots=2, num_players=cfg.num_players)
    assert all(r.count("learner") >= 1 for r in table)
    roles = [r for t in table for r in t]
    assert {"greedy", "snapshot0", "snapshot1"} <= set(roles)
    assert set(roles) <= {"learner", "greedy", "snapshot0", "snapshot1"}
    no_pool = lineups(cfg, np.random.default_rng(0), snapshots=0, num_players=cfg.num_players)
    assert {r for t in no_pool for r in t} == {"learner", "greedy"}


def test_lineups_seat_league_networks_only_where_they_fit() -> None:
    cfg = FastConfig(games=300, p_greedy=0.5, p_self=0.2, p_league=0.5)
    table = lineups(cfg, np.random.default_rng(0), 1, 4, league=("league0", "league1"))
    assert all(r.count("learner") >= 1 for r in table)
    others = [r for t in table for r in t if r != "learner"]
    assert 0.4 < (others.count("league0") + others.count("league1")) / len(others) < 0.6
    assert min(others.count("league0"), others.count("league1")) > 100
    # no league network for the variant: the draws of a run without a league
    plain = FastConfig(games=300, p_greedy=0.5, p_self=0.2)
    assert lineups(cfg, np.random.default_rng(0), 1, 4) == \
        lineups(plain, np.random.default_rng(0), 1, 4)


def test_a_league_network_plays_only_its_own_variant(tmp_path) -> None:
    league = str(weights_path("2p-base"))
    cfg = _tiny(tmp_path, variants=("2p-base", "3p-base"), bc_iterations=0, ppo_iterations=10,
                league=(league,), p_league=1.0, p_greedy=1.0, p_self=0.0)
    runner = Runner(cfg)
    assert runner.league_for(GameConfig(num_players=2)) == ("league0",)
    assert runner.league_for(GameConfig(num_players=3)) == ()
    assert runner.league_for(GameConfig(num_players=2, mode="legends", scenario=1)) == ()
    seen = []
    play = runner._play

    def spy(roles, nets, config, **kwargs):
        seen.append((config.num_players, {r for t in roles for r in t}))
        assert nets["league0"] is runner.league[0][0]
        return play(roles, nets, config, **kwargs)

    runner._play = spy
    runner.ppo(iterations=10)  # both variants drawn (seeded: the same every run)
    assert {n for n, _ in seen} == {2, 3}
    for players, roles in seen:
        assert roles == ({"learner", "league0"} if players == 2 else {"learner", "greedy"})
    with pytest.raises(ValueError, match="p_league"):
        FastConfig.load(None, {"p_league": 0.5})
    assert {"league", "p_league"} <= set(LOCKED_ON_RESUME)
    # a league that fits no variant of the run would seat nobody: refused
    with pytest.raises(ValueError, match=r"no league network .* was trained for a variant"):
        Runner(_tiny(tmp_path / "none", variants=("3p-base",), league=(league,), p_league=0.5))
    # building the league networks leaves torch's draws (a fresh network's weights) alone
    fresh = Runner(_tiny(tmp_path / "fresh")).net.state_dict()
    with_league = Runner(_tiny(tmp_path / "with", league=(league,), p_league=0.5)).net
    for name, tensor in fresh.items():
        assert torch.equal(tensor, with_league.state_dict()[name]), name


def test_config_rejects_unknown_and_bad_settings() -> None:
    with pytest.raises(ValueError, match="unknown settings"):
        FastConfig.load(None, {"learning_rat": 0.1})
    with pytest.raises(ValueError, match="p_greedy"):
        FastConfig.load(None, {"p_greedy": 0.9, "p_self": 0.3})
    with pytest.raises(ValueError, match="set minutes or ppo_iterations"):
        FastConfig.load(None, {"minutes": 0, "ppo_iterations": 0})
    with pytest.raises(ValueError, match="bc_iterations must be >= 0"):
        FastConfig.load(None, {"bc_iterations": -1})
    with pytest.raises(ValueError, match="minutes must be a number, got '30'"):
        FastConfig.load(None, {"minutes": "30"})
    with pytest.raises(ValueError, match=r"games must be an integer, got 2\.5"):
        FastConfig.load(None, {"games": 2.5})
    with pytest.raises(ValueError, match="eval_every needs eval_games"):
        FastConfig.load(None, {"eval_every": 5, "eval_games": 0})
    assert FastConfig.load(None, {"minutes": 0, "ppo_iterations": 3}).minutes == 0.0


def _tiny(out, **changes) -> FastConfig:
    """A 2-player run of a few tiny iterations, capped by iteration counts only."""
    settings = dict(num_players=2, out=str(out), minutes=0, bc_minutes=0, bc_iterations=2,
                    ppo_iterations=3, bc_games=2, games=2, minibatch=64, channels=8,
                    opponent_channels=4, hidden=16, eval_games=0, snapshot_every=2,
                    checkpoint_minutes=100, workers=1)
    settings.update(changes)
    return FastConfig(**settings)


# Budgets under which a phase can never run, or can be starved on a slower machine.
CONTRADICTIONS = [
    ({"minutes": 3, "bc_minutes": 5},
     "bc_minutes (5) must be below minutes (3): imitation would take the whole run and PPO "
     "never run"),
    ({"minutes": 5, "bc_minutes": 5}, "bc_minutes (5) must be below minutes (5)"),
    ({"minutes": 3, "bc_iterations": 659},
     "minutes (3) with imitation capped by bc_iterations (659) alone: imitation could take "
     "the whole run and PPO never run; set bc_minutes below minutes too, or minutes 0 "
     "(iteration budgets alone)"),
    ({"minutes": 0, "bc_minutes": 0, "bc_iterations": 0, "ppo_iterations": 0},
     "set minutes or ppo_iterations (both 0 would never stop)"),
    ({"ppo_iterations": 4, "eval_every": 10, "eval_games": 5},
     "eval_every (10) is above ppo_iterations (4): no evaluation would run during training; "
     "lower it, or 0 for the evaluation at the end alone"),
]


@pytest.mark.parametrize("changes, words", CONTRADICTIONS)
def test_budgets_that_contradict_each_other_are_refused_in_one_line(
        changes, words, tmp_path, capsys) -> None:
    assert main(_flags(tmp_path / "run", **changes)) == 2
    line = one_error_line(capsys, "moonriver-train-fast")
    assert words in line
    assert not (tmp_path / "run").exists()  # refused at the start


def test_the_issues_command_is_refused_and_time_budgets_that_leave_ppo_time_are_not(
        tmp_path, capsys) -> None:
    # the 30-minute recipe's imitation limit with a shorter total: PPO would never run
    argv = ["--config", str(SHIPPED), "--minutes", "3", "--bc-minutes", "5", "--out",
            str(tmp_path / "run")]
    assert main(argv) == 2
    assert "bc_minutes (5) must be below minutes (3)" in one_error_line(
        capsys, "moonriver-train-fast")
    for changes in ({"minutes": 3, "bc_minutes": 1}, {"minutes": 3, "bc_minutes": 1,
                                                      "bc_iterations": 0},
                    {"minutes": 3, "bc_iterations": 0}, {"bc_minutes": 1},
                    {"eval_every": 3, "eval_games": 2}):
        replace(_tiny(tmp_path), **changes).validate()


def test_variants_draw_one_game_kind_per_iteration_from_the_runs_generator(tmp_path) -> None:
    cfg = _tiny(tmp_path, variants=("3p-legends-2", "2p-base", "2p-base"), bc_iterations=0)
    runner = Runner(cfg)
    drawn = [runner.variant() for _ in range(60)]
    assert {(c.num_players, c.mode, c.scenario) for c in drawn} == {(3, "legends", 2),
                                                                     (2, "base", None)}
    assert 25 < sum(c.num_players == 2 for c in drawn) < 55  # listed twice: drawn 2 in 3
    again = Runner(_tiny(tmp_path / "again", variants=cfg.variants, bc_iterations=0))
    assert [again.variant() for _ in range(60)] == drawn  # from the run's seeded generator
    plain = Runner(_tiny(tmp_path / "plain", bc_iterations=0))
    state = plain.rng.bit_generator.state
    assert plain.variant() == GameConfig(num_players=2, mode="base")
    assert plain.rng.bit_generator.state == state  # no variants: no draw, runs unchanged
    # the weights name the variants, so that the agents play any game with them
    runner.save(str(tmp_path / "final.pt"))
    meta = load_net(str(tmp_path / "final.pt"))[1]
    assert meta["variants"] == ["2p-base", "3p-legends-2"] and "num_players" not in meta
    export(str(tmp_path / "final.pt"), str(tmp_path / "agent.npz"))
    agent = make_agent(f"pretrained:{tmp_path / 'agent.npz'}")
    for config in (GameConfig(num_players=4), GameConfig(num_players=3, mode="legends")):
        game = make_game(config, seed=1)
        mask = game.legal_mask()
        action = agent.act(game, {"observation": Encoder().encode(game, game.current_player),
                                  "action_mask": mask})
        assert mask[action] == 1


def test_a_pool_plays_the_variant_each_call_names() -> None:
    net = _tiny_net(0)
    seeds = [21, 22, 23]
    roles = [["learner", "greedy", "greedy"], ["greedy", "learner", "learner"],
             ["greedy", "greedy", "learner"]]
    config = GameConfig(num_players=3, mode="legends", scenario=2)
    with PlayPool(2, 2, "base") as pool:  # made for 2-player base games
        batch = pool.play(seeds, roles, {"learner": net}, np.random.default_rng(5),
                          config=config, margin_coef=0.5)
    # each share as one process plays it, with the pool's sampling seeds: the same games
    sample = [int(x) for x in np.random.default_rng(5).integers(2**63, size=2)]
    expected = {}
    for share, sample_seed in zip(shares(3, 2), sample, strict=True):
        part, _ = rollout.play_batched([seeds[i] for i in share], [roles[i] for i in share],
                                       {"learner": net}, np.random.default_rng(sample_seed),
                                       config, margin_coef=0.5)
        expected |= {(i + share.start, seat): r for (i, seat), r in part.returns.items()}
    assert batch.returns == expected and len(expected) == 4  # the learner seats
    with pytest.raises(ValueError, match="unknown variant '5p-base'"):
        FastConfig.load(None, {"variants": ["5p-base"]})


def test_variants_per_iteration_play_each_drawn_variant_and_update_together(
        tmp_path, monkeypatch) -> None:
    import moonriver_env.training.fast.runner as fast_runner

    cfg = _tiny(tmp_path, variants=("3p-legends-2", "4p-base", "2p-base"), bc_iterations=0,
                variants_per_iteration=3, workers=2)
    played, updated = [], []
    real_step = fast_runner.ppo_step

    def step(net, opt, batch, cfg, rng, pool):
        updated.append((len(batch), sorted({g for g, _ in batch.keys}), pool))
        return real_step(net, opt, batch, cfg, rng, pool)

    monkeypatch.setattr(fast_runner, "ppo_step", step)
    with Runner(cfg) as runner:
        real_play = runner._play

        def play(roles, nets, config, **kwargs):
            batch = real_play(roles, nets, config, **kwargs)
            played.append((config.num_players, {len(r) for r in roles}, len(batch),
                           kwargs["keep"]))
            return batch

        runner._play = play
        runner.ppo(iterations=1)
    assert len(played) == 3 and len(updated) == 1
    assert all(sizes == {players} for players, sizes, _, _ in played)
    assert not any(keep for *_, keep in played)  # the update gathers every part's rows
    rows, games, pool = updated[0]
    assert rows == sum(n for _, _, n, _ in played) and pool is None
    assert {g // cfg.games for g in games} == {0, 1, 2}  # each part's games, offset
    with pytest.raises(ValueError, match="variants_per_iteration must be >= 1"):
        FastConfig.load(None, {"variants_per_iteration": 0})


def test_an_exported_npz_loads_as_the_same_network(tmp_path) -> None:
    net = _tiny_net(3)
    save_net(net, str(tmp_path / "net.pt"), {"num_players": 4, "mode": "base"})
    export(str(tmp_path / "net.pt"), str(tmp_path / "net.npz"))
    loaded, meta = load_net(str(tmp_path / "net.npz"))
    assert meta["net"]["hidden"] == 16
    for name, tensor in net.state_dict().items():
        assert torch.equal(tensor, loaded.state_dict()[name]), name
    with np.load(tmp_path / "net.npz") as data:  # the search recipe's four-seat value head
        arrays = {k: data[k] for k in data.files}
    np.savez(tmp_path / "four.npz", **(arrays | {"value_head.weight": np.zeros((4, 16))}))
    four, _ = load_net(str(tmp_path / "four.npz"))
    assert torch.equal(four.trunk[0].weight, net.trunk[0].weight)
    assert four.value_head.weight.shape == (1, 16)  # left fresh
    del arrays["trunk.0.weight"]
    np.savez(tmp_path / "part.npz", **arrays)
    with pytest.raises(ValueError, match=r"do not fit a RanchNet.*trunk\.0\.weight"):
        load_net(str(tmp_path / "part.npz"))


def _log(run) -> list[dict]:
    return [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]


def test_a_tiny_run_writes_loadable_weights(tmp_path) -> None:
    runner = Runner(_tiny(tmp_path))
    runner.imitation(iterations=2)
    runner.ppo(iterations=2)
    runner.save(str(tmp_path / "final.pt"))
    net, meta = load_net(str(tmp_path / "final.pt"))
    assert meta["num_players"] == 2 and meta["samples"] == runner.steps > 0
    assert [line["phase"] for line in _log(tmp_path)] == ["imitation"] * 2 + ["ppo"] * 2
    assert isinstance(net, RanchNet)


def _tiny_net(seed: int = 0) -> RanchNet:
    torch.manual_seed(seed)
    return RanchNet(NetConfig(channels=8, opponent_channels=4, hidden=16, use_prior=True)).eval()


def _same(a: rollout.Batch, b: rollout.Batch) -> None:
    assert a.keys == b.keys and a.returns == b.returns
    assert np.array_equal(np.asarray(a.actions), np.asarray(b.actions))
    assert list(a.logps) == pytest.approx(list(b.logps))
    assert list(a.values) == pytest.approx(list(b.values))
    for name in ("obs", "masks", "priors"):
        rows_a, rows_b = getattr(a, name), getattr(b, name)
        assert len(rows_a) == len(rows_b) and all(
            np.array_equal(x, y) for x, y in zip(rows_a, rows_b, strict=True))


def test_shares_are_contiguous_and_cover_every_game() -> None:
    assert shares(7, 2) == [range(0, 4), range(4, 7)]
    assert shares(1, 3) == [range(0, 1), range(1, 1), range(1, 1)]
    assert [len(r) for r in shares(32, 3)] == [11, 11, 10]


@pytest.mark.parametrize("backend", ["core", "python"])
def test_pool_of_two_is_deterministic_and_merges_its_shares_in_order(backend) -> None:
    net, snapshot = _tiny_net(0), _tiny_net(1)
    seeds = [11, 12, 13, 14, 15]
    roles = [["learner", "greedy"], ["greedy", "learner"], ["learner", "snapshot0"],
             ["snapshot0", "learner"], ["learner", "learner"]]
    nets = {"learner": net, "snapshot0": snapshot}
    with PlayPool(2, 2, "base", backend) as pool:
        first = pool.play(seeds, roles, nets, np.random.default_rng(5), margin_coef=0.5)
        again = pool.play(seeds, roles, nets, np.random.default_rng(5), margin_coef=0.5)
    _same(first, again)
    assert len(set(first.keys)) == len(first.returns)  # one return per (game, seat)
    assert set(first.keys) == set(first.returns)
    assert {roles[i][s] for i, s in first.keys} == {"learner"}
    assert {i for i, _ in first.keys} == set(range(5))  # both shares' games, offset
    # The merge is share 0 then share 1 (games 3 and 4), each played as one process plays a
    # batch (the core: rollout.play_batched; the engine: rollout.play) with the sampling seed
    # the pool drew for it.
    sample = [int(x) for x in np.random.default_rng(5).integers(2**63, size=2)]
    parts = []
    for share, sample_seed in zip(shares(5, 2), sample, strict=True):
        share_rng = np.random.default_rng(sample_seed)
        if backend == "core":
            part, _ = rollout.play_batched([seeds[i] for i in share],
                                           [roles[i] for i in share], nets, share_rng,
                                           GameConfig(num_players=2), margin_coef=0.5)
        else:
            games = [Game(GameConfig(num_players=2), seed=seeds[i]) for i in share]
            part = rollout.play(games, [roles[i] for i in share], nets, share_rng,
                                ObservationEncoder(), margin_coef=0.5)
        part.keys = [(i + share.start, seat) for i, seat in part.keys]
        part.returns = {(i + share.start, seat): r for (i, seat), r in part.returns.items()}
        parts.append(part)
    expected = rollout.Batch()
    for part in parts:
        for name in ("obs", "masks", "actions", "logps", "values", "priors", "keys"):
            getattr(expected, name).extend(getattr(part, name))
        expected.returns.update(part.returns)
    _same(first, expected)
    adv, ret = advantages(first, 0.95)
    assert np.isfinite(adv).all() and len(ret) == len(first)


def test_one_worker_plays_exactly_as_a_single_process(tmp_path) -> None:
    cfg = FastConfig(num_players=2, out=str(tmp_path), seed=3, channels=8, opponent_channels=4,
                     hidden=16, workers=1, backend="python")
    runner = Runner(cfg)
    assert runner.pool is None
    roles = [["greedy", "greedy"]] * 2
    batch = runner._play(roles, {}, runner.variant(), record=None, label_greedy=True)
    rng = np.random.default_rng(3)
    direct = rollout.play(rollout.new_games(2, 2, "base", rng), roles, {}, rng,
                          Encoder(), record=None, label_greedy=True,
                          margin_coef=cfg.margin_coef)
    assert batch.keys == direct.keys and batch.returns == direct.returns
    assert all(np.array_equal(a, b) for a, b in zip(batch.actions, direct.actions, strict=True))


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "2"])
def test_bad_worker_counts_are_refused(bad, tmp_path) -> None:
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        FastConfig.load(None, {"workers": bad})
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        PlayPool(bad, 2, "base")
    with pytest.raises(ValueError, match="update_threads must be an integer >= 0"):
        FastConfig.load(None, {"update_threads": -1 if bad == 0 else bad})


def test_a_tiny_two_worker_run_finishes_and_stops_its_workers(tmp_path) -> None:
    net = train(_tiny(tmp_path, workers=2), quiet=True)
    assert multiprocessing.active_children() == []
    assert isinstance(net, RanchNet) and (tmp_path / "final.pt").exists()
    assert [line["phase"] for line in _log(tmp_path)] == ["imitation"] * 2 + ["ppo"] * 3
    assert [line["iteration"] for line in _log(tmp_path)] == [1, 2, 3, 4, 5]


def test_a_failing_worker_share_raises_in_the_main_process() -> None:
    roles = [["learner", "greedy"], ["learner", "snapshot7"]]  # share 1 names no network
    with PlayPool(2, 2, "base") as pool, pytest.raises(RuntimeError, match="snapshot7"):
        pool.play([1, 2], roles, {"learner": _tiny_net()}, np.random.default_rng(0))
    assert multiprocessing.active_children() == []


def test_a_split_update_with_a_worker_that_played_no_game(tmp_path) -> None:
    """One game per iteration and two play processes: the worker's share is empty, and the
    split update still runs (its part of every minibatch is empty)."""
    net = train(_tiny(tmp_path, workers=2, games=1, bc_games=1), quiet=True)
    assert all(torch.isfinite(p).all() for p in net.parameters())
    assert multiprocessing.active_children() == []


# ------------------------------------------------------------- defaults, flags, progress
ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "training" / "configs" / "fast_4p_base.toml"


def test_the_defaults_are_the_shipped_recipe() -> None:
    shipped = tomllib.loads(SHIPPED.read_text())
    # the file names every setting but the backend, left to $MOONRIVER_BACKEND (else core)
    assert set(shipped) | {"backend"} == {f.name for f in fields(FastConfig)}
    assert asdict(FastConfig.load(str(SHIPPED), {})) == asdict(FastConfig())
    two = tomllib.loads((SHIPPED.parent / "fast_2p_base.toml").read_text())
    assert set(two) == set(shipped)
    assert FastConfig.load(str(SHIPPED.parent / "fast_2p_base.toml"), {}).num_players == 2


# The shipped `pretrained`'s PPO steps (docs/training.md): each starts from the last.
PPO_CHAIN = ("fast_4p_greedy.toml", "fast_all.toml", "fast_greedy.toml",
             "fast_greedy_legends.toml", "fast_greedy_legends_4.toml", "fast_league.toml")
# then a branch from the last of them, and the plain mean of the two (training.soup)
BRANCH = "fast_legends_24.toml"


def test_the_chain_starts_from_the_greedy_only_4_player_recipe() -> None:
    cfg = FastConfig.load(str(SHIPPED.parent / PPO_CHAIN[0]), {})
    recipe = FastConfig.load(str(SHIPPED), {})
    assert not cfg.variants and (cfg.num_players, cfg.mode, cfg.init) == (4, "base", "")
    assert (cfg.p_greedy, cfg.p_self) == (1.0, 0.0)  # every other seat Greedy
    # the 30-minute run's iteration counts instead of its minutes: a rerun ends at its weights
    caps = (cfg.bc_iterations, cfg.ppo_iterations, cfg.minutes, cfg.bc_minutes)
    assert caps == (659, 5927, 0, 0)
    differ = {"minutes", "bc_minutes", "bc_iterations", "ppo_iterations", "p_greedy", "p_self",
              "out", "eval_games"}
    assert {k: v for k, v in asdict(cfg).items() if k not in differ} == \
        {k: v for k, v in asdict(recipe).items() if k not in differ}


def test_each_step_of_the_chain_continues_the_last_over_every_variant() -> None:
    steps = [FastConfig.load(str(SHIPPED.parent / name), {}) for name in PPO_CHAIN]
    for before, cfg in itertools.pairwise(steps):
        assert cfg.init == f"{before.out}/final.pt"  # the step before's last weights
        assert set(variant_list(cfg.variants)) == set(ALL_VARIANTS)
        assert cfg.variants_per_iteration > 1 and not cfg.bc_minutes and not cfg.bc_iterations
        assert cfg.ppo_iterations and not cfg.minutes  # capped by iterations, not time
    assert all((cfg.p_greedy, cfg.p_self) == (1.0, 0.0) for cfg in steps[2:])
    assert len({cfg.out for cfg in steps}) == len(steps)
    # the last steps seat the 2-player reference in 2-player base games only (its variant)
    assert all(cfg.league == ("agents/weights/2p-base.npz",) for cfg in steps[5:])
    assert not any(cfg.league or cfg.p_league for cfg in steps[:5])


def test_the_branch_continues_the_last_step_and_is_averaged_with_it() -> None:
    last = FastConfig.load(str(SHIPPED.parent / PPO_CHAIN[-1]), {})
    branch = FastConfig.load(str(SHIPPED.parent / BRANCH), {})
    assert branch.init == f"{last.out}/final.pt" and branch.out != last.out
    assert branch.ppo_iterations and not branch.minutes and not branch.bc_iterations
    assert (branch.p_greedy, branch.p_self, branch.league) == (1.0, 0.0, ())
    assert {variant_config(v).num_players for v in variant_list(branch.variants)} == {4}
    # the pipeline averages both runs' last weights, and az_value.toml starts from the mean
    pipeline = load_pipeline(str(SHIPPED.parents[1] / "pipelines" / "pretrained.toml"))
    steps = {step.config: step.name for step in pipeline.steps}
    soup = pipeline.steps_by_name["league_soup"]
    assert soup.run == "soup" and soup.inputs["from"] == (
        steps[str(SHIPPED.parent / PPO_CHAIN[-1])], steps[str(SHIPPED.parent / BRANCH)])
    with open(SHIPPED.parent / "az_value.toml", "rb") as fh:
        assert tomllib.load(fh)["warm_start"] == "runs/league_soup/final.pt"


def _default_in_help(text: str) -> str:
    assert text.count("(default: ") == 1, text
    return text.split("(default: ")[1].rsplit(")", 1)[0]


def test_every_flag_names_its_default_and_it_is_the_setting_default() -> None:
    actions = {a.dest: a for a in build_parser()._actions if a.dest != "help"}
    assert {f.name for f in fields(FastConfig)} <= set(actions)
    for action in actions.values():
        assert action.help and "(default: " in action.help, action.dest
    for f in fields(FastConfig):
        text = _default_in_help(actions[f.name].help)
        if isinstance(f.default, bool):
            assert text == str(f.default).lower(), f.name
        elif isinstance(f.default, str):
            assert text == (f.default or '""'), f.name
        elif isinstance(f.default, tuple):
            assert tuple(json.loads(text)) == f.default, f.name
        else:
            assert type(f.default)(text) == f.default, f.name
    assert "default: none" in actions["resume"].help
    assert "default: off" in actions["quiet"].help


def test_the_console_script_is_declared() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["moonriver-train-fast"] == "moonriver_env.training.fast.train:main"


def _flags(out, **changes) -> list[str]:
    """Command-line flags of ``_tiny(out, **changes)``."""
    argv = []
    for name, value in asdict(_tiny(out, **changes)).items():
        if isinstance(value, bool):
            argv.append(("--" if value else "--no-") + name.replace("_", "-"))
        elif isinstance(value, tuple):
            argv += ["--" + name.replace("_", "-"), *value] if value else []
        else:
            argv += ["--" + name.replace("_", "-"), str(value)]
    return argv


def test_progress_shows_phase_minutes_rate_loss_entropy_and_evaluation(tmp_path, capsys) -> None:
    assert main(_flags(tmp_path / "a", eval_games=2, eval_every=2, minutes=60,
                       bc_minutes=30)) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[")]
    # each phase's first and last iteration at least (at most one line per 10 s otherwise)
    assert lines[0].startswith("[imitation ") and "it 1 (imitation 1/2)" in lines[0]
    assert any("it 2 (imitation 2/2)" in line for line in lines)
    assert any(line.startswith("[ppo ") and "(ppo 1/3)" in line for line in lines)
    last = lines[-1]
    assert last.startswith("[ppo ") and "/60 min, about 0.0 min left]" in last
    assert "(ppo 3/3)" in last
    assert "steps/s" in last and "loss " in last and "entropy " in last
    assert "eval vs greedy " in last and "(it 4)" in last  # PPO iteration 2 = run iteration 4
    log = _log(tmp_path / "a")
    assert f"steps {log[-1]['samples'] - log[1]['samples']:,} " in last  # PPO's own steps
    assert main([*_flags(tmp_path / "b"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert not [line for line in out.splitlines() if line.startswith("[")]
    assert (tmp_path / "b" / "final.pt").exists()


class _At:
    """What Progress reads of a Runner, on a clock the test moves."""

    limits = Runner.limits

    def __init__(self, cfg: FastConfig) -> None:
        self.cfg, self.seconds, self.phase, self.iteration, self.steps = cfg, 0.0, "imitation", 0, 0
        self.done, self.phase_steps = {"imitation": 0, "ppo": 0}, {"imitation": 0, "ppo": 0}
        self.last_eval = None

    def elapsed(self) -> float:
        return self.seconds

    def iterate(self, progress: Progress, seconds: float, times: int) -> str:
        """``times`` iterations of ``seconds`` each; the last progress line."""
        stats = {"bc_loss": 0.1, "bc_entropy": 0.5, "bc_top1_in_ties": 0.9, "policy_loss": 0.0,
                 "value_loss": 0.2, "entropy": 0.5, "mean_return": -0.5}
        for _ in range(times):
            self.seconds += seconds
            self.done[self.phase] += 1
            self.iteration += 1
            progress.iteration(self, stats)
        return progress.stream.getvalue().splitlines()[-1]


def test_each_progress_line_shows_the_time_so_far_and_an_estimate_of_what_remains() -> None:
    cfg = _tiny("r", bc_iterations=10, ppo_iterations=20)
    at, progress = _At(cfg), Progress(cfg, every=0, stream=io.StringIO())
    progress.start(at)
    # imitation: 30 s an iteration, 6 of 10 to go; PPO's pace is not known yet
    assert at.iterate(progress, 30, 4).startswith(
        "[imitation 2.0 min, about 3.0 min of imitation left, then 20 PPO iterations]  "
        "it 4 (imitation 4/10)")
    at.iterate(progress, 30, 6)
    at.phase = "ppo"  # as Runner._set_phase moves on
    progress.start(at)
    # PPO: 60 s an iteration, 15 of 20 to go
    assert at.iterate(progress, 60, 5).startswith(
        "[ppo 10.0 min, about 15.0 min left]  it 15 (ppo 5/20)")
    # a time budget ends the run sooner than the iterations would: that estimate
    timed = _At(replace(cfg, minutes=12.0, bc_minutes=1.0))
    progress = Progress(timed.cfg, every=0, stream=io.StringIO())
    timed.phase = "ppo"
    progress.start(timed)
    assert timed.iterate(progress, 60, 5).startswith("[ppo 5.0/12 min, about 7.0 min left]")
    untimed = _At(replace(cfg, minutes=12.0, ppo_iterations=0, bc_iterations=0, bc_minutes=1))
    progress = Progress(untimed.cfg, every=0, stream=io.StringIO())
    progress.start(untimed)
    assert untimed.iterate(progress, 6, 5).startswith("[imitation 0.5/12 min, about 11.5 min "
                                                      "left]")


# ------------------------------------------------------------------------ stop and resume
def _stop_after(count: int):
    def hook(runner: Runner) -> None:
        if runner.iteration == count:
            raise KeyboardInterrupt

    return hook


def _without_timing(log: list[dict]) -> list[dict]:
    return [{k: v for k, v in line.items() if k not in ("seconds", "learner_steps_per_s")}
            for line in log]


def test_a_run_saves_its_state_as_soon_as_it_starts(tmp_path) -> None:
    with Runner(_tiny(tmp_path)):
        state = load_resume(str(tmp_path))
    assert state["iteration"] == 0 and state["phase"] == "imitation"


@pytest.mark.parametrize("stop", [1, 4])  # during imitation; during PPO, after a snapshot
def test_a_stopped_and_resumed_run_equals_an_uninterrupted_one(tmp_path, stop) -> None:
    whole = train(_tiny(tmp_path / "whole"), quiet=True)
    cfg = _tiny(tmp_path / "parts")
    with pytest.raises(KeyboardInterrupt):
        train(cfg, quiet=True, on_iteration=_stop_after(stop))
    state = load_resume(str(tmp_path / "parts"))
    assert state["iteration"] == stop
    assert state["phase"] == ("imitation" if stop <= 2 else "ppo")
    assert len(state["snapshots"]) == (1 if stop == 4 else 0)
    resumed = train(cfg, state, quiet=True)
    for name, tensor in whole.state_dict().items():
        assert torch.equal(tensor, resumed.state_dict()[name]), name
    assert _without_timing(_log(tmp_path / "parts")) == _without_timing(_log(tmp_path / "whole"))
    assert len(_log(tmp_path / "parts")) == 5


def test_resume_continues_the_generator_and_the_optimiser(tmp_path) -> None:
    cfg = _tiny(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        train(cfg, quiet=True, on_iteration=_stop_after(3))
    state = load_resume(str(tmp_path))
    runner = Runner(cfg, state)
    expected = np.random.default_rng(cfg.seed)
    expected.bit_generator.state = json.loads(state["rng"])
    assert runner.rng.random() == expected.random()
    assert runner.opt_phase == "ppo" and runner.done == {"imitation": 2, "ppo": 1}
    assert runner.opt.state_dict()["state"][0]["step"] == state["optimizer"]["state"][0]["step"]


def test_resume_refuses_changed_network_settings_and_new_runs_refuse_a_used_dir(
        tmp_path, capsys) -> None:
    with pytest.raises(KeyboardInterrupt):
        train(_tiny(tmp_path), quiet=True, on_iteration=_stop_after(1))
    assert "hidden" in LOCKED_ON_RESUME
    assert main(["--resume", str(tmp_path), "--hidden", "32"]) == 2
    assert "a resumed run keeps its hidden=16" in capsys.readouterr().err
    assert main(_flags(tmp_path)) == 2
    assert f"--resume {tmp_path}" in capsys.readouterr().err
    assert main(["--resume", str(tmp_path / "nothing")]) == 2
    assert "cannot resume" in capsys.readouterr().err
    # budgets may change: two more PPO iterations than the saved run's cap
    assert main(["--resume", str(tmp_path), "--ppo-iterations", "5", "--quiet"]) == 0
    assert [line["phase"] for line in _log(tmp_path)] == ["imitation"] * 2 + ["ppo"] * 5
    assert main(["--resume", str(tmp_path)]) == 2
    assert "has finished" in capsys.readouterr().err


def test_a_run_saved_before_the_league_settings_resumes_with_their_defaults(tmp_path) -> None:
    with pytest.raises(KeyboardInterrupt):
        train(_tiny(tmp_path), quiet=True, on_iteration=_stop_after(1))
    path = tmp_path / RESUME_FILE
    state = torch.load(path, map_location="cpu", weights_only=False)
    del state["config"]["league"], state["config"]["p_league"]
    torch.save(state, path)
    assert main(["--resume", str(tmp_path), "--quiet"]) == 0
    assert [line["phase"] for line in _log(tmp_path)] == ["imitation"] * 2 + ["ppo"] * 3


@pytest.mark.parametrize("backend", ["core", "python"])  # batched threads; play processes
def test_an_interrupt_stops_the_workers_and_the_run_resumes(tmp_path, backend) -> None:
    cfg = _tiny(tmp_path / "parts", workers=2, backend=backend)
    with pytest.raises(KeyboardInterrupt):
        train(cfg, quiet=True, on_iteration=_stop_after(3))
    assert multiprocessing.active_children() == []
    resumed = train(cfg, load_resume(str(tmp_path / "parts")), quiet=True)
    assert multiprocessing.active_children() == []
    assert [line["iteration"] for line in _log(tmp_path / "parts")] == [1, 2, 3, 4, 5]
    # two play processes draw from the run's one generator too: the same as a whole run
    whole = train(_tiny(tmp_path / "whole", workers=2, backend=backend), quiet=True)
    for name, tensor in whole.state_dict().items():
        assert torch.equal(tensor, resumed.state_dict()[name]), name


# main returns 130, but CPython sometimes ends the process by SIGINT after that (seen when the
# interrupt lands while a worker starts); a shell shows both as status 130.
INTERRUPTED = (130, -signal.SIGINT)


def _wait_until(check, what: str, limit: float = 600.0) -> None:
    """Poll ``check`` (the limit only stops a broken run from hanging the tests)."""
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_saves_says_how_to_continue_and_the_run_finishes_on_resume(tmp_path) -> None:
    out = tmp_path / "run"
    argv = _flags(out, workers=2, ppo_iterations=400)  # far more than run before the Ctrl-C
    proc = subprocess.Popen([sys.executable, "-m", "moonriver_env.training.fast.train", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=ctrl_c_as_in_a_terminal)
    log = out / "log.jsonl"
    try:
        # after the first PPO iteration: the workers have played and a snapshot exists
        _wait_until(lambda: proc.poll() is not None or (
            log.exists() and len(log.read_text().splitlines()) >= 3), "three iterations")
        assert proc.poll() is None, proc.communicate()
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C in a terminal: the workers get it too
        _, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode in INTERRUPTED, err
    assert "Traceback" not in err
    assert err.strip().splitlines() == [err.strip()]  # one line
    assert err.startswith("moonriver-train-fast: interrupted; saved at iteration ")
    assert err.strip().endswith(f"continue with: python -m moonriver_env.training.fast.train "
                                f"--resume {out}")
    assert children  # the play worker (and multiprocessing's helpers) ...
    _wait_until(lambda: not any(_running(pid) for pid in children),
                "the worker processes to end")  # ... end with the run
    saved = load_resume(str(out))["iteration"]
    assert 3 <= saved < 402
    # three PPO iterations more than were saved (a resumed run may change its budget)
    assert main(["--resume", str(out), "--ppo-iterations", str(saved - 2 + 3), "--quiet"]) == 0
    assert [line["iteration"] for line in _log(out)] == list(range(1, saved + 4))
    assert [line["phase"] for line in _log(out)] == ["imitation"] * 2 + ["ppo"] * (saved + 1)


def _running(pid: str) -> bool:
    """Whether process ``pid`` exists and is not a zombie (ended, not yet reaped)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_while_the_workers_start_leaves_one_line_and_a_resumable_run(tmp_path) -> None:
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "moonriver_env.training.fast.train", *_flags(out, workers=2)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=ctrl_c_as_in_a_terminal)
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    try:
        # a worker exists: it is most likely still importing torch (it would print a
        # KeyboardInterrupt traceback if it did not start with SIGINT ignored)
        _wait_until(lambda: proc.poll() is not None or (children.exists()
                                                        and children.read_text().split()),
                    "a play worker")
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode in INTERRUPTED and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1 and f"--resume {out}" in err
    assert load_resume(str(out))["iteration"] <= 5


def test_the_recipe_sets_passive_openmp_waiting_before_torch_loads() -> None:
    """Spinning OpenMP waits halve the update's rate on a busy machine; an explicit choice wins."""
    import subprocess
    import sys

    code = ("import sys; import moonriver_env.training as t; assert 'torch' not in sys.modules; "
            "import os, moonriver_env.training.fast.train; print(os.environ['OMP_WAIT_POLICY'])")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "PASSIVE"
    out = subprocess.run([sys.executable, "-c", code], env={**env, "OMP_WAIT_POLICY": "ACTIVE"},
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ACTIVE"


def test_backend_setting_defaults_to_the_default_backend_and_is_checked(tmp_path) -> None:
    from moonriver_env.moonriver.backend import DEFAULT_BACKEND

    assert FastConfig().backend == DEFAULT_BACKEND
    assert FastConfig.load(None, {"backend": "python"}).backend == "python"
    with pytest.raises(ValueError, match=r"backend must be one of \('core', 'python'\)"):
        FastConfig.load(None, {"backend": "cpp"})


def test_per_game_play_gives_the_same_batches_on_both_backends() -> None:
    """``rollout.play`` (the python backend's path) plays the same games on either Game."""
    batches = {}
    for backend in ("core", "python"):
        rng = np.random.default_rng(3)
        games = rollout.new_games(2, 2, "base", rng, backend=backend)
        batches[backend] = rollout.play(games, [["learner", "greedy"], ["greedy", "learner"]],
                                        {"learner": _tiny_net()}, rng, Encoder(),
                                        margin_coef=0.5)
    _same(batches["core"], batches["python"])


def test_legal_forward_is_forward_at_the_legal_actions() -> None:
    torch.manual_seed(2)
    net = RanchNet(NetConfig(channels=8, opponent_channels=4, hidden=16, use_prior=True))
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.2)
    obs, masks = _positions(50, players=3, seed=5)
    prior = np.random.default_rng(0).normal(size=masks.shape).astype(np.float32) * masks
    legal, valid = legal_lists(masks)
    assert (np.take_along_axis(masks, legal, 1)).all()
    assert (valid.sum(axis=1) == masks.sum(axis=1)).all()
    with torch.no_grad():
        full, value = net(torch.from_numpy(obs), torch.from_numpy(masks),
                          torch.from_numpy(prior))
        part, value2 = net.legal_forward(torch.from_numpy(obs), torch.from_numpy(legal),
                                         torch.from_numpy(valid),
                                         torch.from_numpy(np.take_along_axis(prior, legal, 1)))
    at_legal = np.take_along_axis(full.numpy(), legal, 1)
    assert np.abs(np.where(valid, at_legal - part.numpy(), 0.0)).max() < 1e-5
    assert np.exp(part.numpy()).sum(axis=1) == pytest.approx(np.ones(50), abs=1e-5)
    assert torch.equal(value, value2)


def _replayed(game, seed: int, config: GameConfig):
    """The decisions of a finished core game replayed on a fresh core Game one by one:
    (player, observation, mask, action, Greedy's prior) before each decision, and the game."""
    from moonriver_env.agents.pretrained import greedy_prior

    from moonriver_env.moonriver.core import Game as CoreGame

    replay, steps = CoreGame(config, seed), []
    for event in game.history:
        if event["type"] != "decision" or event.get("auto"):
            continue
        player = replay.current_player
        assert event["player"] == player
        steps.append((player, replay.observe(player), replay.legal_mask().astype(bool),
                      event["action"], greedy_prior(replay)))
        replay.apply(event["action"])
    assert replay.is_over
    return steps, replay


def test_batched_play_agrees_with_its_games_replayed_one_by_one() -> None:
    """Every recorded learner decision is the one a single Game replayed from the same seed
    shows at that point (observation, mask, prior, action); the others' moves follow their
    roles (Greedy's tied-best, the snapshot's legal picks) and the returns are the replayed
    games' rewards."""
    config = GameConfig(num_players=3)
    seeds = [21, 22, 23, 24]
    roles = [["learner", "greedy", "snapshot0"], ["greedy", "learner", "learner"],
             ["snapshot0", "random", "learner"], ["learner", "greedy", "greedy"]]
    nets = {"learner": _tiny_net(0), "snapshot0": _tiny_net(1)}
    batch, games = rollout.play_batched(seeds, roles, nets, np.random.default_rng(8), config,
                                        threads=2, margin_coef=0.5)
    assert {roles[i][s] for i, s in batch.keys} == {"learner"}
    assert set(batch.returns) == {(i, s) for i in range(4) for s in range(3)
                                  if roles[i][s] == "learner"}
    k = 0
    for i, seed in enumerate(seeds):
        steps, replay = _replayed(games[i], seed, config)
        assert replay.winners() == games[i].winners()
        for player, obs, mask, action, prior in steps:
            if roles[i][player] == "greedy" and mask.sum() > 1:
                assert prior[action] == prior[mask].max()  # one of Greedy's tied-best
            if roles[i][player] != "learner":
                continue
            while batch.keys[k][0] != i:  # decisions of other games in between
                k += 1
            assert batch.keys[k] == (i, player)
            np.testing.assert_array_equal(batch.obs[k], obs)
            np.testing.assert_array_equal(batch.masks[k], mask)
            np.testing.assert_array_equal(batch.priors[k], prior)
            assert batch.actions[k] == action and mask[action]
            k += 1
        k = 0
        for seat in range(3):
            if roles[i][seat] == "learner":
                assert batch.returns[(i, seat)] == pytest.approx(
                    rollout.seat_reward(replay, seat, 0.5))
    assert len(batch) == len(batch.logps) == len(batch.values) > 50
    assert (np.asarray(batch.logps) <= 0).all()
    # The same generator state gives the same play-out, whatever the thread count.
    again, _ = rollout.play_batched(seeds, roles, nets, np.random.default_rng(8), config,
                                    threads=1, margin_coef=0.5)
    _same(batch, again)


def test_batched_greedy_labels_are_the_replayed_games_tied_best_sets() -> None:
    config = GameConfig(num_players=2)
    seeds = [5, 6]
    batch, games = rollout.play_batched(seeds, [["greedy", "greedy"]] * 2, {},
                                        np.random.default_rng(1), config, record=None,
                                        label_greedy=True)
    assert len(batch) > 50 and batch.actions.shape == (len(batch), NUM_ACTIONS)
    rows = {i: [k for k, key in enumerate(batch.keys) if key[0] == i] for i in range(2)}
    for i, seed in enumerate(seeds):
        steps, _ = _replayed(games[i], seed, config)
        chosen = [s for s in steps if s[2].sum() > 1]  # forced decisions are not recorded
        assert len(chosen) == len(rows[i])
        for k, (player, obs, mask, action, prior) in zip(rows[i], chosen, strict=True):
            best = mask & (prior == prior[mask].max())
            assert batch.keys[k] == (i, player)
            np.testing.assert_array_equal(batch.obs[k], obs)
            np.testing.assert_array_equal(batch.actions[k], best)
            assert best[action]  # the move played is one of the ties


def test_a_tiny_run_is_a_function_of_its_seed(tmp_path) -> None:
    nets = {}
    for name, seed in (("a", 5), ("b", 5), ("c", 6)):
        nets[name] = train(_tiny(tmp_path / name, seed=seed, workers=2), quiet=True)
    for key, tensor in nets["a"].state_dict().items():
        assert torch.equal(tensor, nets["b"].state_dict()[key]), key
    assert _without_timing(_log(tmp_path / "a")) == _without_timing(_log(tmp_path / "b"))
    assert not torch.equal(nets["a"].trunk[0].weight, nets["c"].trunk[0].weight)


def test_a_split_update_gives_the_one_process_update() -> None:
    """Workers computing their rows' part of each minibatch's gradient: the same weights and
    statistics as the update of the whole batch in one process (up to float rounding)."""
    cfg = FastConfig(num_players=2, channels=8, opponent_channels=4, hidden=16, minibatch=24,
                     use_prior=True)
    net = RanchNet(NetConfig(8, 4, 16, True, 3.0))
    seeds = [21, 22, 23, 24, 25]
    roles = [["learner", "greedy"], ["greedy", "learner"], ["learner", "learner"],
             ["learner", "greedy"], ["greedy", "learner"]]
    results = []
    with PlayPool(2, 2, "base") as pool:
        for keep in (True, False):
            batch = pool.play(seeds, roles, {"learner": net}, np.random.default_rng(7),
                              margin_coef=0.5, keep=keep)
            if keep:  # the worker's rows stayed with it
                assert 0 < batch.local == len(batch.obs) < len(batch)
            else:
                assert batch.local is None and len(batch.obs) == len(batch)
            copy = RanchNet(net.config)
            copy.load_state_dict(net.state_dict())
            opt = torch.optim.Adam(copy.parameters(), lr=1e-3)
            stats = ppo_step(copy, opt, batch, cfg, np.random.default_rng(1),
                             pool if keep else None)
            results.append((copy, stats))
    (split, split_stats), (whole, whole_stats) = results

    def flat(model):
        return torch.cat([p.detach().reshape(-1) for p in model.parameters()])

    moved = (flat(whole) - flat(net)).abs().mean().item()
    assert moved > 1e-3  # the update moved the weights (lr 1e-3, a few Adam steps)
    # Adam divides by each gradient's running size, so rounding shows most on the weights
    # whose gradients are near zero: the largest difference is still a small part of one step
    # (the update without the worker's part differs by about 3e-3 on average)
    diff = (flat(split) - flat(whole)).abs()
    assert diff.max().item() < 2e-4 and diff.mean().item() < 1e-7
    assert split_stats.keys() == whole_stats.keys()
    for key, value in whole_stats.items():
        assert split_stats[key] == pytest.approx(value, rel=1e-3, abs=1e-6), key


def test_numpy_twin_scores_like_torch_and_follows_weight_changes() -> None:
    """Small waves of networks whose decisions are not recorded go through the numpy twin:
    the same log-probabilities and values as torch's, and a new twin after the weights move."""
    net = RanchNet(NetConfig(8, 4, 16, True, 3.0)).eval()
    obs, masks = _positions(6, seed=4)
    legal, valid = legal_lists(masks)
    prior = np.random.default_rng(0).random(masks.shape).astype(np.float32) * masks
    prior_legal = np.take_along_axis(prior, legal, 1)

    def scores(twin_rows):
        return rollout._legal_scores(net, obs, masks, legal, valid, prior, prior_legal, twin_rows)

    twin_before = net.numpy_twin()
    assert net.numpy_twin() is twin_before  # kept while the weights stay
    for _ in range(2):
        (torch_logp, torch_value), (np_logp, np_value) = scores(0), scores(len(obs))
        np.testing.assert_allclose(np.where(valid, np_logp, 0), np.where(valid, torch_logp, 0),
                                   atol=1e-4)
        np.testing.assert_allclose(np_value, torch_value, atol=1e-5)
        with torch.no_grad():  # an optimiser step changes the weights in place
            for p in net.parameters():
                p.add_(0.05)
    assert net.numpy_twin() is not twin_before


@pytest.mark.parametrize("config", [NetConfig(8, 4, 16, True, 3.0, variant_rank=2),
                                    NetConfig(32, 16, 32, True, 3.0, variant_film=True)])
def test_the_core_forward_scores_like_torch_and_follows_weight_changes(config) -> None:
    """play_forward = 'core': the compiled core's log-probabilities and values are torch's
    (variant layers and the greedy prior included), and a new core net after the weights move."""
    torch.manual_seed(3)
    net = RanchNet(config).eval()
    for p in net.parameters():  # the variant layers away from zero too
        torch.nn.init.normal_(p, std=0.2)
    for players in (2, 4):
        obs, masks = _positions(7, players=players, seed=players)
        legal, valid = legal_lists(masks)
        prior = np.random.default_rng(0).random(masks.shape).astype(np.float32) * masks
        prior_legal = np.take_along_axis(prior, legal, 1)
        core_before = net.core_twin()
        assert net.core_twin() is core_before and core_before.one_value
        for _ in range(2):
            torch_logp, torch_value = rollout._legal_scores(net, obs, masks, legal, valid, prior,
                                                            prior_legal)
            core_logp, core_value = rollout._legal_scores(net, obs, masks, legal, valid, prior,
                                                          prior_legal,
                                                          core_net=rollout.core_forward(net))
            assert core_logp.shape == torch_logp.shape and core_value.shape == torch_value.shape
            np.testing.assert_allclose(np.where(valid, core_logp, 0),
                                       np.where(valid, torch_logp, 0), rtol=1e-5, atol=1e-4)
            assert (core_logp[~valid] == MASKED).all()
            np.testing.assert_allclose(core_value, torch_value, rtol=1e-5, atol=1e-5)
            assert np.abs(torch_value).max() > 0.05  # a value that could be wrong
            with torch.no_grad():  # an optimiser step changes the weights in place
                for p in net.parameters():
                    p.add_(0.05)
        assert net.core_twin() is not core_before
    copied = pickle.loads(pickle.dumps(net))  # the compiled twin is left behind
    assert copied._core is None and net._core is not None


def test_the_core_forward_refuses_a_value_layer_and_the_search() -> None:
    """A network with a value layer of its own, or a value per seat, scores in torch; a
    one-value network in the core cannot value a search's leaves by seat."""
    from moonriver_env.moonriver import search

    grown = with_critic(_tiny_net(2), 8, "net.pt")
    seats = _tiny_net(4)
    seats.value_head = torch.nn.Linear(16, 4)  # an az network's head: a value per seat
    obs, masks = _positions(3, seed=5)
    legal, valid = legal_lists(masks)
    prior = np.zeros(masks.shape, np.float32)
    prior_legal = np.take_along_axis(prior, legal, 1)
    for net, refusal in ((grown, "critic_hidden = 8"), (seats, "4 value output")):
        assert not net.core_scores
        with pytest.raises(ValueError, match=refusal):
            net.core_twin()
        torch_scores = rollout._legal_scores(net, obs, masks, legal, valid, prior, prior_legal)
        core_scores = rollout._legal_scores(net, obs, masks, legal, valid, prior, prior_legal,
                                            core_net=rollout.core_forward(net))
        for a, b in zip(torch_scores, core_scores, strict=True):
            assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="critic_hidden = 0, got 8"):
        FastConfig.load(None, {"play_forward": "core", "critic_hidden": 8})
    with pytest.raises(ValueError, match="play_forward must be one of torch, core, got 'gpu'"):
        FastConfig.load(None, {"play_forward": "gpu"})
    batched = search.BatchedSearch([make_game(GameConfig(num_players=2), 1, backend="core")],
                                   simulations=4, greedy_prior=SHAPE_WEIGHT)
    with pytest.raises(ValueError, match="one value"):
        batched.run(_tiny_net(3).core_twin())


def test_a_run_with_the_core_forward_is_deterministic(tmp_path, monkeypatch) -> None:
    """Whole variants per process, the core's forward: two runs end at the same weights."""
    twins = []
    real_twin = RanchNet.core_twin
    monkeypatch.setattr(RanchNet, "core_twin", lambda net: twins.append(1) or real_twin(net))
    nets = []
    for name in ("a", "b"):
        cfg = _tiny(tmp_path / name, variants=("2p-base", "3p-legends-2"), bc_iterations=0,
                    variants_per_iteration=2, workers=2, play_split="variants",
                    play_forward="core", ppo_iterations=2)
        nets.append(train(cfg, quiet=True))
        text = (tmp_path / name / "log.jsonl").read_text().splitlines()
        lines = [json.loads(line) for line in text]
        assert [line["iteration"] for line in lines if line["phase"] == "ppo"] == [1, 2]
    for (name, a), b in zip(nets[0].state_dict().items(), nets[1].state_dict().values(),
                            strict=True):
        assert torch.equal(a, b), name
    assert twins  # this process's variant was scored in the core


def test_a_value_layer_of_its_own_starts_at_the_linear_heads_values_and_numpy_agrees(
        tmp_path) -> None:
    net = _tiny_net(4)
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.2)
    obs, masks = _positions(40, players=4, seed=6)
    prior = np.random.default_rng(1).normal(size=masks.shape).astype(np.float32) * masks
    args = (torch.from_numpy(obs), torch.from_numpy(masks), torch.from_numpy(prior))
    grown = with_critic(net, 12, "net.pt")
    assert grown.config.critic_hidden == 12 and with_critic(grown, 12, "net.pt") is grown
    with torch.no_grad():
        (logp, value), (logp2, value2) = net(*args), grown(*args)
    assert torch.equal(logp, logp2) and torch.equal(value, value2)  # its head starts at zero
    for p in grown.parameters():
        torch.nn.init.normal_(p, std=0.2)
    with torch.no_grad():
        _, value3 = grown(*args)
        legal, valid = legal_lists(masks)
        _, value4 = grown.legal_forward(args[0], torch.from_numpy(legal), torch.from_numpy(valid),
                                        torch.from_numpy(np.take_along_axis(prior, legal, 1)))
    assert (value3 - value).abs().max() > 0.1  # the layer now moves the value
    assert torch.equal(value3, value4)
    _, value_np = grown.numpy_twin().forward(obs, masks, prior)
    assert np.abs(value3.numpy() - value_np).max() < 1e-4
    save_net(grown, str(tmp_path / "grown.pt"))
    export(str(tmp_path / "grown.pt"), str(tmp_path / "grown.npz"))
    loaded, meta = load_net(str(tmp_path / "grown.npz"))
    assert meta["net"]["critic_hidden"] == 12
    for name, tensor in grown.state_dict().items():
        assert torch.equal(tensor, loaded.state_dict()[name]), name
    with pytest.raises(ValueError, match="its value layer has 12 units; set critic_hidden = 12"):
        with_critic(grown, 0, "grown.pt")
    arrays = {k: v.numpy() for k, v in grown.state_dict().items()}
    with pytest.raises(ValueError, match=r"critic_head\.weight has shape \(2, 12\), expected "
                                         r"\(1, 12\)"):
        NumpyRanchNet(arrays | {"critic_head.weight": np.zeros((2, 12), np.float32)})
    with pytest.raises(ValueError, match=r"no array critic_head\.bias"):
        NumpyRanchNet({k: v for k, v in arrays.items() if k != "critic_head.bias"})
    with pytest.raises(ValueError, match=r"no array critic_hidden\.weight"):
        NumpyRanchNet({k: v for k, v in arrays.items() if k != "critic_hidden.weight"})
    with pytest.raises(ValueError, match=r"critic_hidden\.weight has shape \(\), expected 2"):
        NumpyRanchNet(arrays | {"critic_hidden.weight": np.float32(1)})
    # the torch reader refuses what the numpy one would read otherwise: critic arrays that
    # the metadata's sizes do not name, and sizes that are not sizes
    with np.load(tmp_path / "grown.npz") as data:
        saved = {k: data[k] for k in data.files}
    meta = json.loads(str(saved["__meta__"]))
    for critic, match in ((0, r"do not fit a RanchNet of its sizes at critic_hidden"),
                          (-1, r"critic_hidden must be an integer 0\.\.4096, got -1"),
                          ("6", r"critic_hidden must be an integer 0\.\.4096, got '6'")):
        meta["net"]["critic_hidden"] = critic
        np.savez(tmp_path / "bad.npz", **(saved | {"__meta__": np.array(json.dumps(meta))}))
        with pytest.raises(ValueError, match=match):
            load_net(str(tmp_path / "bad.npz"))


def test_a_run_with_a_value_layer_of_its_own_resumes_to_the_same_weights(tmp_path) -> None:
    cfg = _tiny(tmp_path / "whole", critic_hidden=8)
    whole = train(cfg, quiet=True)
    assert whole.critic_head.weight.abs().sum() > 0  # the layer learned
    parts = _tiny(tmp_path / "parts", critic_hidden=8)
    with pytest.raises(KeyboardInterrupt):
        train(parts, quiet=True, on_iteration=_stop_after(4))
    resumed = train(parts, load_resume(str(tmp_path / "parts")), quiet=True)
    for name, tensor in whole.state_dict().items():
        assert torch.equal(tensor, resumed.state_dict()[name]), name
    with pytest.raises(ValueError, match=r"critic_hidden must be in 0\.\.4096"):
        FastConfig.load(None, {"critic_hidden": -1})
    assert "critic_hidden" in LOCKED_ON_RESUME


def test_a_run_from_weights_without_the_layer_adds_it_and_keeps_the_rest(tmp_path) -> None:
    net = _tiny_net(5)
    save_net(net, str(tmp_path / "init.pt"))
    runner = Runner(_tiny(tmp_path / "run", init=str(tmp_path / "init.pt"), critic_hidden=8,
                          channels=32, hidden=128, use_prior=False))  # sizes come from init
    assert runner.net.config == replace(net.config, critic_hidden=8)
    for name, tensor in net.state_dict().items():
        assert torch.equal(tensor, runner.net.state_dict()[name]), name
    assert not runner.net.critic_head.weight.any()
