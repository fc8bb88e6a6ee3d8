"""play_split = "variants": each play process plays whole variants of a PPO iteration."""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from moonriver_env.training.fast import rollout  # noqa: E402
from moonriver_env.training.fast.config import FastConfig  # noqa: E402
from moonriver_env.training.fast.parallel_play import Job, PlayPool, assign  # noqa: E402
from moonriver_env.training.fast.runner import ppo_step  # noqa: E402
from moonriver_env.training.fast.train import summary, train  # noqa: E402
from moonriver_env.training.policy_net import NetConfig, RanchNet  # noqa: E402
from moonriver_env.training.variants import variant_config  # noqa: E402

from tests.training.test_fast_training import _same, _tiny, _tiny_net  # noqa: E402

JOBS = [Job(variant_config("2p-base"), [31, 32], [["learner", "greedy"], ["greedy", "learner"]],
            101),
        Job(variant_config("4p-legends-2"), [33], [["greedy", "learner", "snapshot0", "greedy"]],
            102),
        Job(variant_config("3p-base"), [34, 35],
            [["learner", "greedy", "greedy"], ["snapshot0", "learner", "learner"]], 103)]


def test_assign_gives_the_costliest_jobs_first_to_the_least_loaded_process() -> None:
    # costs (players x games): 4, 4, 6; the 6 to the worker (a tie: the main process also
    # merges), then both 4s to the main process, the less loaded
    assert assign(JOBS, 2) == [[0, 1], [2]]
    assert assign(JOBS, 1) == [[2, 0, 1]]
    assert sorted(k for mine in assign(JOBS, 3) for k in mine) == [0, 1, 2]


@pytest.mark.parametrize("keep", [False, True])
def test_each_job_is_played_as_one_process_plays_it_and_merged_a_process_at_a_time(
        keep) -> None:
    nets = {"learner": _tiny_net(0), "snapshot0": _tiny_net(1)}
    with PlayPool(2, 2, "base") as pool:
        batch = pool.play_jobs(JOBS, nets, margin_coef=0.5, keep=keep)
        again = pool.play_jobs(JOBS, nets, margin_coef=0.5, keep=keep)
    assert multiprocessing.active_children() == []
    _same(batch, again)
    starts = [0, 2, 3]  # each job's first game index: the games of the jobs before it
    expected = rollout.Batch()
    for k in (0, 1, 2):  # the main process's jobs, then the worker's
        job = JOBS[k]
        part, _ = rollout.play_batched(job.seeds, job.roles, nets,
                                       np.random.default_rng(job.sample_seed), job.config,
                                       margin_coef=0.5)
        for name in ("obs", "masks", "actions", "logps", "values", "priors"):
            getattr(expected, name).extend(getattr(part, name))
        expected.keys += [(i + starts[k], seat) for i, seat in part.keys]
        expected.returns.update({(i + starts[k], seat): r
                                 for (i, seat), r in part.returns.items()})
    if keep:  # the worker kept its rows: only the main process's job's rows are here
        local = batch.local
        assert local is not None and 0 < local == len(batch.obs) < len(batch)
        for name in ("obs", "masks", "priors"):
            setattr(expected, name, getattr(expected, name)[:local])
            assert len(getattr(batch, name)) == local
    _same(batch, expected)


def test_a_split_update_of_whole_variants_gives_the_one_process_update() -> None:
    cfg = FastConfig(num_players=2, channels=8, opponent_channels=4, hidden=16, minibatch=24,
                     use_prior=True)
    net = RanchNet(NetConfig(8, 4, 16, True, 3.0))
    nets = {"learner": net, "snapshot0": _tiny_net(1)}
    results = []
    with PlayPool(2, 2, "base") as pool:
        for keep in (True, False):
            batch = pool.play_jobs(JOBS, nets, margin_coef=0.5, keep=keep)
            copy = RanchNet(net.config)
            copy.load_state_dict(net.state_dict())
            opt = torch.optim.Adam(copy.parameters(), lr=1e-3)
            ppo_step(copy, opt, batch, cfg, np.random.default_rng(1), pool if keep else None)
            results.append(torch.cat([p.detach().reshape(-1) for p in copy.parameters()]))
    start = torch.cat([p.detach().reshape(-1) for p in net.parameters()])
    assert (results[1] - start).abs().mean().item() > 1e-3  # the update moved the weights
    diff = (results[0] - results[1]).abs()  # float rounding alone (see the games split's test)
    assert diff.max().item() < 2e-4 and diff.mean().item() < 1e-7


def test_a_whole_variants_run_is_a_function_of_its_seed_and_says_how_it_plays(tmp_path) -> None:
    def cfg(name, seed):
        return _tiny(tmp_path / name, seed=seed, workers=2, play_split="variants",
                     variants=("2p-base", "3p-legends-1", "4p-base"), variants_per_iteration=3,
                     bc_iterations=0)

    nets = {name: train(cfg(name, seed), quiet=True) for name, seed in
            (("a", 5), ("b", 5), ("c", 6))}
    for key, tensor in nets["a"].state_dict().items():
        assert torch.equal(tensor, nets["b"].state_dict()[key]), key
    assert not torch.equal(nets["a"].trunk[0].weight, nets["c"].trunk[0].weight)
    assert "whole variants per play process" in summary(cfg("d", 5))
    assert "split PPO updates" in summary(cfg("d", 5))
    assert "whole variants" not in summary(_tiny(tmp_path / "e", workers=2))


def test_bad_play_splits_are_refused_in_words() -> None:
    with pytest.raises(ValueError, match="play_split must be one of games, variants"):
        FastConfig.load(None, {"play_split": "seats"})
    with pytest.raises(ValueError, match=r"needs variants_per_iteration >= workers \(got 1 "
                                         r"and 2\)"):
        FastConfig.load(None, {"play_split": "variants", "workers": 2})
    FastConfig.load(None, {"play_split": "variants", "workers": 1})  # one process: no split
