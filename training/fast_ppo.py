"""The fast recipe: imitation of GreedyAgent, then PPO against Greedy, itself and snapshots.

    python -m moonriver_env.training.fast_ppo --config training/configs/fast_4p_base.toml

Schedule (all wall-clock, torch threads 1 per process; the games of every batch are split
over ``workers`` processes, see ``parallel_play``, and the updates run in the main one with
``update_threads`` torch threads, by default one per play process, as those are idle then):

1. Imitation (``bc_minutes``): batches of ``bc_games`` games where GreedyAgent plays every
   seat; the network learns to put its probability on Greedy's tied-best actions of every
   non-forced decision (cross-entropy on the tied set) and its value learns each seat's final
   reward. Each batch is used for ``bc_epochs`` passes, then dropped.
2. PPO until ``minutes`` have passed in total: each iteration plays ``games`` whole games.
   One seat of each game is the learner; each other seat is, independently, Greedy
   (``p_greedy``), the learner again (``p_self``; its decisions are trained on too) or a frozen
   snapshot of the learner (the rest; Greedy while there is none). A snapshot is taken every
   ``snapshot_every`` iterations; the newest ``max_snapshots`` are kept. The reward is +1 for
   a win (shared wins count), -1 otherwise, plus ``margin_coef`` x (own score - best other) /
   100, all at the end of the game; advantages by GAE over each seat's decisions.

The run directory gets ``config.json``, ``log.jsonl`` (one line per iteration),
``checkpoints/`` (every ``checkpoint_minutes``, for learning curves) and ``final.pt``
(weights for ``moonriver_env.agents.pretrained``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
import torch
from moonriver_env.training.parallel_play import PlayPool, check_workers
from moonriver_env.training.policy_net import NetConfig, RanchNet, load_net, save_net
from moonriver_env.training.rollout import (
    GREEDY,
    LEARNER,
    Batch,
    evaluate,
    game_seeds,
    new_games,
    play,
)


@dataclass
class FastConfig:
    """Every setting of a fast-recipe run."""

    num_players: int = 4
    mode: str = "base"
    seed: int = 0
    out: str = "runs/fast"
    minutes: float = 30.0  # total wall-clock budget (imitation + PPO)
    bc_minutes: float = 8.0
    bc_games: int = 16
    bc_epochs: int = 2
    bc_lr: float = 1e-3
    games: int = 32  # games per PPO iteration
    learning_rate: float = 3e-4
    epochs: int = 2
    minibatch: int = 1024
    clip: float = 0.2
    ent_coef: float = 0.003
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    gae_lambda: float = 0.95
    margin_coef: float = 0.5
    p_greedy: float = 0.5
    p_self: float = 0.3
    snapshot_every: int = 10
    max_snapshots: int = 5
    checkpoint_minutes: float = 2.5
    eval_games: int = 100  # final evaluation against Greedy (0: none)
    channels: int = 32
    opponent_channels: int = 16
    hidden: int = 128
    use_prior: bool = True  # logits add a learned multiple of Greedy's one-ply values
    prior_init: float = 3.0
    init: str = ""  # start from these weights (a .pt of save_net) instead of scratch
    torch_threads: int = 1
    update_threads: int = 0  # torch threads of the updates (0: max(torch_threads, workers))
    workers: int = 2  # processes that play the games (1: all in the main process)

    @classmethod
    def load(cls, path: str | None, overrides: dict[str, Any]) -> FastConfig:
        """Defaults, then a TOML file, then explicit overrides; unknown keys are errors."""
        values: dict[str, Any] = {}
        if path:
            import tomllib

            with open(path, "rb") as fh:
                values = tomllib.load(fh)
        values.update({k: v for k, v in overrides.items() if v is not None})
        known = {f.name for f in fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"unknown settings {sorted(unknown)}; allowed: {sorted(known)}")
        cfg = cls(**values)
        if not 0 <= cfg.p_greedy + cfg.p_self <= 1:
            raise ValueError("p_greedy + p_self must be within [0, 1]")
        if cfg.num_players not in (2, 3, 4):
            raise ValueError(f"num_players must be 2, 3 or 4, got {cfg.num_players}")
        check_workers(cfg.workers)
        if isinstance(cfg.update_threads, bool) or not isinstance(cfg.update_threads, int) \
                or cfg.update_threads < 0:
            raise ValueError(f"update_threads must be an integer >= 0 (0: one per play "
                             f"process), got {cfg.update_threads!r}")
        return cfg


def _tensors(batch: Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    priors = torch.from_numpy(np.stack(batch.priors)) if batch.priors else None
    return (torch.from_numpy(np.stack(batch.obs)),
            torch.from_numpy(np.stack(batch.masks)).view(torch.bool), priors)


def _rows(priors: torch.Tensor | None, t: torch.Tensor) -> torch.Tensor | None:
    return None if priors is None else priors[t]


def imitation_step(net: RanchNet, opt: torch.optim.Optimizer, batch: Batch, epochs: int,
                   minibatch: int, rng: np.random.Generator) -> dict[str, float]:
    """Cross-entropy on Greedy's tied-best set and value regression on the final reward."""
    obs, masks, priors = _tensors(batch)
    ties = torch.from_numpy(np.stack(batch.actions))
    targets = torch.tensor([batch.returns[k] for k in batch.keys], dtype=torch.float32)
    n, stats = len(batch), {}
    for _ in range(epochs):
        for idx in np.array_split(rng.permutation(n), max(1, n // minibatch)):
            t = torch.from_numpy(idx)
            logp, value = net(obs[t], masks[t], _rows(priors, t))
            policy_loss = -torch.logsumexp(logp.masked_fill(~ties[t], -1e9), dim=1).mean()
            value_loss = (value - targets[t]).pow(2).mean()
            opt.zero_grad()
            (policy_loss + 0.5 * value_loss).backward()
            opt.step()
            top = logp.argmax(dim=1)
            stats = {"bc_loss": policy_loss.item(), "bc_value_loss": value_loss.item(),
                     "bc_top1_in_ties": ties[t].gather(1, top[:, None]).float().mean().item()}
    return stats


def advantages(batch: Batch, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """GAE (gamma 1) over each seat's decisions in order; the reward comes at its last one."""
    values = np.asarray(batch.values, dtype=np.float32)
    adv = np.zeros_like(values)
    trajectories: dict[tuple[int, int], list[int]] = {}
    for k, key in enumerate(batch.keys):
        trajectories.setdefault(key, []).append(k)
    for key, steps in trajectories.items():
        next_value, running = 0.0, 0.0
        reward = batch.returns[key]
        for j, k in enumerate(reversed(steps)):
            delta = (reward if j == 0 else 0.0) + next_value - values[k]
            running = delta + lam * running
            adv[k] = running
            next_value = values[k]
    return adv, adv + values


def ppo_step(net: RanchNet, opt: torch.optim.Optimizer, batch: Batch, cfg: FastConfig,
             rng: np.random.Generator) -> dict[str, float]:
    """Clipped PPO epochs over one iteration's decisions."""
    obs, masks, priors = _tensors(batch)
    actions = torch.tensor(batch.actions, dtype=torch.long)
    old_logp = torch.tensor(batch.logps, dtype=torch.float32)
    adv_np, ret_np = advantages(batch, cfg.gae_lambda)
    adv, returns = torch.from_numpy(adv_np), torch.from_numpy(ret_np)
    n, stats = len(batch), {}
    for _ in range(cfg.epochs):
        for idx in np.array_split(rng.permutation(n), max(1, n // cfg.minibatch)):
            t = torch.from_numpy(idx)
            logp_all, value = net(obs[t], masks[t], _rows(priors, t))
            logp = logp_all.gather(1, actions[t, None]).squeeze(1)
            a = adv[t]
            a = (a - a.mean()) / (a.std() + 1e-8)
            ratio = torch.exp(logp - old_logp[t])
            policy_loss = -torch.min(ratio * a,
                                     ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * a).mean()
            value_loss = (value - returns[t]).pow(2).mean()
            entropy = -(logp_all.exp() * logp_all).sum(dim=1).mean()
            loss = policy_loss + cfg.vf_coef * value_loss - cfg.ent_coef * entropy
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            opt.step()
            stats = {"policy_loss": policy_loss.item(), "value_loss": value_loss.item(),
                     "entropy": entropy.item(),
                     "clip_frac": ((ratio - 1).abs() > cfg.clip).float().mean().item(),
                     "approx_kl": (old_logp[t] - logp).mean().item()}
    return stats


def lineups(cfg: FastConfig, rng: np.random.Generator, snapshots: int) -> list[list[str]]:
    """Seat roles of one iteration's games (see the module docstring)."""
    out = []
    for _ in range(cfg.games):
        me = int(rng.integers(cfg.num_players))
        roles = []
        for seat in range(cfg.num_players):
            u = rng.random()
            if seat == me or cfg.p_greedy <= u < cfg.p_greedy + cfg.p_self:
                roles.append(LEARNER)
            elif u < cfg.p_greedy or not snapshots:
                roles.append(GREEDY)
            else:
                roles.append(f"snapshot{int(rng.integers(snapshots))}")
        out.append(roles)
    return out


class Runner:
    """One training run: network, optimiser, generator, snapshots, logs, play workers
    (stopped by ``close`` or at the end of a ``with`` block)."""

    def __init__(self, cfg: FastConfig) -> None:
        from moonriver_env.observation import ObservationEncoder

        check_workers(cfg.workers)
        torch.set_num_threads(cfg.torch_threads)
        torch.manual_seed(cfg.seed)
        self.cfg = cfg
        self.rng = np.random.default_rng(cfg.seed)
        if cfg.init:
            self.net, _ = load_net(cfg.init)
            self.net.train()
        else:
            self.net = RanchNet(NetConfig(cfg.channels, cfg.opponent_channels, cfg.hidden,
                                          cfg.use_prior, cfg.prior_init))
        self.encoder = ObservationEncoder()
        self.snapshots: list[RanchNet] = []
        self.steps = 0
        self.iteration = 0
        self.start = time.perf_counter()
        self.next_checkpoint = cfg.checkpoint_minutes * 60
        os.makedirs(os.path.join(cfg.out, "checkpoints"), exist_ok=True)
        with open(os.path.join(cfg.out, "config.json"), "w", encoding="utf-8") as fh:
            json.dump(asdict(cfg), fh, indent=1)
        self.log_path = os.path.join(cfg.out, "log.jsonl")
        self.pool = (PlayPool(cfg.workers, cfg.num_players, cfg.mode) if cfg.workers > 1
                     else None)

    def close(self, force: bool = False) -> None:
        """Stop the play workers (idempotent; ``force``: without waiting for a share)."""
        if self.pool is not None:
            self.pool.close(force=force)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, kind: object, error: object, tb: object) -> None:
        self.close(force=kind is not None)

    def elapsed(self) -> float:
        """Seconds since the run started."""
        return time.perf_counter() - self.start

    def _record(self, phase: str, samples: int, stats: dict[str, float]) -> None:
        self.steps += samples
        self.iteration += 1
        line = {"phase": phase, "iteration": self.iteration, "seconds": round(self.elapsed(), 1),
                "samples": self.steps, **{k: round(v, 4) for k, v in stats.items()}}
        with open(self.log_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")
        if self.elapsed() >= self.next_checkpoint:
            self.save(os.path.join(self.cfg.out, "checkpoints",
                                   f"net_{int(self.elapsed()):05d}s.pt"))
            self.next_checkpoint += self.cfg.checkpoint_minutes * 60

    def save(self, path: str) -> None:
        """Weights plus the variant and the run's settings."""
        save_net(self.net, path, {"num_players": self.cfg.num_players, "mode": self.cfg.mode,
                                  "seconds": round(self.elapsed(), 1), "samples": self.steps,
                                  "config": asdict(self.cfg)})

    def _play(self, roles: list[list[str]], nets: dict[str, torch.nn.Module], *,
              record: str | None = LEARNER, label_greedy: bool = False) -> Batch:
        """Play ``len(roles)`` fresh games (seeds from the run's generator), in the pool's
        processes when there is one."""
        cfg = self.cfg
        if self.pool is None:
            games = new_games(len(roles), cfg.num_players, cfg.mode, self.rng)
            return play(games, roles, nets, self.rng, self.encoder, record=record,
                        label_greedy=label_greedy, margin_coef=cfg.margin_coef)
        return self.pool.play(game_seeds(len(roles), self.rng), roles, nets, self.rng,
                              record=record, label_greedy=label_greedy,
                              margin_coef=cfg.margin_coef)

    @contextmanager
    def _update_threads(self) -> Iterator[None]:
        """Torch threads for an update: the play workers are idle meanwhile."""
        threads = self.cfg.update_threads or max(self.cfg.torch_threads, self.cfg.workers)
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            yield
        finally:
            torch.set_num_threads(before)

    def imitation(self, seconds: float) -> None:
        """Phase 1: imitate GreedyAgent for ``seconds``."""
        cfg = self.cfg
        opt = torch.optim.Adam(self.net.parameters(), lr=cfg.bc_lr)
        end = self.elapsed() + seconds
        while self.elapsed() < end:
            roles = [[GREEDY] * cfg.num_players for _ in range(cfg.bc_games)]
            batch = self._play(roles, {}, record=None, label_greedy=True)
            with self._update_threads():
                stats = imitation_step(self.net, opt, batch, cfg.bc_epochs, cfg.minibatch,
                                       self.rng)
            self._record("imitation", len(batch), stats)

    def ppo(self, seconds: float) -> None:
        """Phase 2: PPO against Greedy, itself and snapshots for ``seconds``."""
        cfg = self.cfg
        opt = torch.optim.Adam(self.net.parameters(), lr=cfg.learning_rate)
        end = self.elapsed() + seconds
        while self.elapsed() < end:
            t0 = time.perf_counter()
            roles = lineups(cfg, self.rng, len(self.snapshots))
            nets: dict[str, torch.nn.Module] = {LEARNER: self.net}
            nets.update({f"snapshot{i}": s for i, s in enumerate(self.snapshots)})
            self.net.eval()
            batch = self._play(roles, nets)
            self.net.train()
            with self._update_threads():
                stats = ppo_step(self.net, opt, batch, cfg, self.rng)
            stats["learner_steps_per_s"] = len(batch) / (time.perf_counter() - t0)
            stats["mean_return"] = float(np.mean(list(batch.returns.values())))
            self._record("ppo", len(batch), stats)
            if self.iteration % cfg.snapshot_every == 0:
                frozen = RanchNet(self.net.config)
                frozen.load_state_dict(self.net.state_dict())
                frozen.eval()
                self.snapshots = [*self.snapshots, frozen][-cfg.max_snapshots:]


def train(cfg: FastConfig) -> RanchNet:
    """Run the whole recipe; writes ``final.pt`` and returns the network."""
    budget = cfg.minutes * 60
    with Runner(cfg) as runner:
        runner.imitation(min(cfg.bc_minutes * 60, budget))
        runner.save(os.path.join(cfg.out, "after_imitation.pt"))
        runner.ppo(budget - runner.elapsed())
        runner.save(os.path.join(cfg.out, "final.pt"))
    if cfg.eval_games:
        runner.net.eval()
        rate = evaluate(runner.net, cfg.num_players, cfg.mode, cfg.eval_games)
        print(json.dumps({"eval_vs_greedy": rate, "games": cfg.eval_games}))
    return runner.net


def main(argv: list[str] | None = None) -> int:
    """CLI: ``python -m moonriver_env.training.fast_ppo --config FILE [--key value ...]``."""
    parser = argparse.ArgumentParser(prog="python -m moonriver_env.training.fast_ppo",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="TOML file of FastConfig settings")
    for f in fields(FastConfig):
        flag = "--" + f.name.replace("_", "-")
        if str(f.type) == "bool":
            parser.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction,
                                default=None)
            continue
        kind = {"int": int, "float": float}.get(str(f.type), str)
        parser.add_argument(flag, dest=f.name, type=kind, default=None)
    args = vars(parser.parse_args(argv))
    config_path = args.pop("config")
    try:
        cfg = FastConfig.load(config_path, args)
    except (ValueError, TypeError, OSError) as err:
        parser.error(str(err))
    print("training with", json.dumps(asdict(cfg)))
    train(cfg)
    print("saved", os.path.join(cfg.out, "final.pt"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
