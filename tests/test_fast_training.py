"""The fast recipe's pieces: RanchNet's action layout, its numpy twin, batched play, PPO maths."""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from moonriver_env.agents.pretrained import NumpyRanchNet, action_index  # noqa: E402
from moonriver_env.training import rollout  # noqa: E402
from moonriver_env.training.fast_ppo import (  # noqa: E402
    FastConfig,
    Runner,
    advantages,
    imitation_step,
    lineups,
    train,
)
from moonriver_env.training.parallel_play import PlayPool, shares  # noqa: E402
from moonriver_env.training.policy_net import NetConfig, RanchNet, load_net  # noqa: E402

from moonriver_env.engine import NUM_ACTIONS, Game, GameConfig  # noqa: E402
from moonriver_env.engine.actions import ACTIONS, Build, Thief  # noqa: E402
from moonriver_env.observation import ObservationEncoder  # noqa: E402

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


def test_play_records_only_learner_seats_with_legal_actions() -> None:
    rng = np.random.default_rng(0)
    net = RanchNet(NetConfig(channels=8, opponent_channels=4, hidden=16)).eval()
    games = rollout.new_games(3, 3, "base", rng)
    roles = [["learner", "greedy", "greedy"], ["greedy", "learner", "learner"],
             ["greedy", "greedy", "learner"]]
    batch = rollout.play(games, roles, {"learner": net}, rng, ObservationEncoder(),
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
    batch = rollout.play(games, [["greedy", "greedy"]] * 2, {}, rng, ObservationEncoder(),
                         record=None, label_greedy=True)
    assert len(batch) > 50
    for mask, ties in zip(batch.masks, batch.actions, strict=True):
        assert ties.any() and not (ties & ~mask.astype(bool)).any()


def test_imitation_lowers_the_loss_on_a_batch() -> None:
    torch.manual_seed(0)
    rng = np.random.default_rng(4)
    net = RanchNet(NetConfig(channels=8, opponent_channels=4, hidden=32))
    batch = rollout.play(rollout.new_games(2, 2, "base", rng), [["greedy", "greedy"]] * 2, {},
                         rng, ObservationEncoder(), record=None, label_greedy=True)
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
    table = lineups(cfg, np.random.default_rng(0), snapshots=2)
    assert all(r.count("learner") >= 1 for r in table)
    roles = [r for t in table for r in t]
    assert {"greedy", "snapshot0", "snapshot1"} <= set(roles)
    assert set(roles) <= {"learner", "greedy", "snapshot0", "snapshot1"}
    no_pool = lineups(cfg, np.random.default_rng(0), snapshots=0)
    assert {r for t in no_pool for r in t} == {"learner", "greedy"}


def test_config_rejects_unknown_and_bad_settings() -> None:
    with pytest.raises(ValueError, match="unknown settings"):
        FastConfig.load(None, {"learning_rat": 0.1})
    with pytest.raises(ValueError, match="p_greedy"):
        FastConfig.load(None, {"p_greedy": 0.9, "p_self": 0.3})


def test_a_tiny_run_writes_loadable_weights(tmp_path) -> None:
    cfg = FastConfig(num_players=2, out=str(tmp_path), minutes=0.05, bc_minutes=0.02,
                     bc_games=2, games=2, minibatch=256, channels=8, opponent_channels=4,
                     hidden=16, eval_games=0, checkpoint_minutes=100, workers=1)
    runner = Runner(cfg)
    runner.imitation(0.5)
    runner.ppo(0.5)
    runner.save(str(tmp_path / "final.pt"))
    net, meta = load_net(str(tmp_path / "final.pt"))
    assert meta["num_players"] == 2 and meta["samples"] == runner.steps > 0
    phases = [line.split('"phase": "')[1].split('"')[0]
              for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert phases[0] == "imitation" and phases[-1] == "ppo"
    assert isinstance(net, RanchNet)


def _tiny_net(seed: int = 0) -> RanchNet:
    torch.manual_seed(seed)
    return RanchNet(NetConfig(channels=8, opponent_channels=4, hidden=16, use_prior=True)).eval()


def _same(a: rollout.Batch, b: rollout.Batch) -> None:
    assert a.keys == b.keys and a.returns == b.returns and a.actions == b.actions
    assert a.logps == pytest.approx(b.logps) and a.values == pytest.approx(b.values)
    for name in ("obs", "masks", "priors"):
        rows_a, rows_b = getattr(a, name), getattr(b, name)
        assert len(rows_a) == len(rows_b) and all(
            np.array_equal(x, y) for x, y in zip(rows_a, rows_b, strict=True))


def test_shares_are_contiguous_and_cover_every_game() -> None:
    assert shares(7, 2) == [range(0, 4), range(4, 7)]
    assert shares(1, 3) == [range(0, 1), range(1, 1), range(1, 1)]
    assert [len(r) for r in shares(32, 3)] == [11, 11, 10]


def test_pool_of_two_is_deterministic_and_merges_its_shares_in_order() -> None:
    net, snapshot = _tiny_net(0), _tiny_net(1)
    seeds = [11, 12, 13, 14, 15]
    roles = [["learner", "greedy"], ["greedy", "learner"], ["learner", "snapshot0"],
             ["snapshot0", "learner"], ["learner", "learner"]]
    nets = {"learner": net, "snapshot0": snapshot}
    with PlayPool(2, 2, "base") as pool:
        first = pool.play(seeds, roles, nets, np.random.default_rng(5), margin_coef=0.5)
        again = pool.play(seeds, roles, nets, np.random.default_rng(5), margin_coef=0.5)
    _same(first, again)
    assert len(set(first.keys)) == len(first.returns)  # one return per (game, seat)
    assert set(first.keys) == set(first.returns)
    assert {roles[i][s] for i, s in first.keys} == {"learner"}
    assert {i for i, _ in first.keys} == set(range(5))  # both shares' games, offset
    # The merge is share 0 then share 1 (games 3 and 4), each played as rollout.play plays it
    # with the sampling seed the pool drew for it.
    sample = [int(x) for x in np.random.default_rng(5).integers(2**63, size=2)]
    parts = []
    for share, sample_seed in zip(shares(5, 2), sample, strict=True):
        games = [Game(GameConfig(num_players=2), seed=seeds[i]) for i in share]
        part = rollout.play(games, [roles[i] for i in share], nets,
                            np.random.default_rng(sample_seed), ObservationEncoder(),
                            margin_coef=0.5)
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
                     hidden=16, workers=1)
    runner = Runner(cfg)
    assert runner.pool is None
    roles = [["greedy", "greedy"]] * 2
    batch = runner._play(roles, {}, record=None, label_greedy=True)
    rng = np.random.default_rng(3)
    direct = rollout.play(rollout.new_games(2, 2, "base", rng), roles, {}, rng,
                          ObservationEncoder(), record=None, label_greedy=True,
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
    cfg = FastConfig(num_players=2, out=str(tmp_path), minutes=0.03, bc_minutes=0.01,
                     bc_games=2, games=2, minibatch=256, channels=8, opponent_channels=4,
                     hidden=16, eval_games=0, checkpoint_minutes=100, workers=2)
    net = train(cfg)
    assert multiprocessing.active_children() == []
    assert isinstance(net, RanchNet) and (tmp_path / "final.pt").exists()
    phases = [line.split('"phase": "')[1].split('"')[0]
              for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert "imitation" in phases and phases[-1] == "ppo"


def test_a_failing_worker_share_raises_in_the_main_process() -> None:
    roles = [["learner", "greedy"], ["learner", "snapshot7"]]  # share 1 names no network
    with PlayPool(2, 2, "base") as pool, pytest.raises(RuntimeError, match="snapshot7"):
        pool.play([1, 2], roles, {"learner": _tiny_net()}, np.random.default_rng(0))
    assert multiprocessing.active_children() == []
