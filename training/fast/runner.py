"""The fast recipe's training loop (``Runner``), its progress lines and its resume state."""

from __future__ import annotations

import copy
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any, TextIO

import numpy as np
import torch
from moonriver_env.agents.pretrained import variant_refusal
from moonriver_env.training import atomic
from moonriver_env.training.export_weights import export
from moonriver_env.training.fast import losses
from moonriver_env.training.fast.config import FastConfig
from moonriver_env.training.fast.parallel_play import (
    Job,
    PlayPool,
    check_workers,
    merge,
    pack,
    play_share,
)
from moonriver_env.training.fast.rollout import GREEDY, LEARNER, Batch, evaluate, game_seeds
from moonriver_env.training.policy_net import NetConfig, RanchNet, load_net, save_net, with_critic
from moonriver_env.training.settings import warner
from moonriver_env.training.variants import variant_config, variant_list

from moonriver_env.common.cli import CLIError, sigint_deferred
from moonriver_env.moonriver.backend import Encoder
from moonriver_env.moonriver.rules import GameConfig

PROG = "moonriver-train-fast"  # the command: its parser's prog, its warnings' prefix
_warn = warner(PROG)
CONFIG_FILE = "config.json"  # every setting of the run
RESUME_FILE = "resume.pt"
RESUME_PREVIOUS = "resume.prev.pt"  # the state before resume.pt, should that be unreadable
AGENT_FILE = "agent.npz"  # the trained agent, as PretrainedAgent loads it (export_weights)
RESUME_SECONDS = 60.0  # resume.pt is at most this old (plus one iteration) after a hard kill
PROGRESS_SECONDS = 10.0  # at most one progress line per this many seconds within a phase
PHASES = ("imitation", "ppo", "evaluation", "done")


def ppo_step(net: RanchNet, opt: torch.optim.Optimizer, batch: Batch, cfg: FastConfig,
             rng: np.random.Generator, pool: PlayPool | None = None) -> dict[str, float]:
    """Clipped PPO epochs over one iteration's decisions (split over ``pool`` when it kept rows)."""
    adv_np, ret_np = losses.advantages(batch, cfg.gae_lambda)
    taken = np.asarray(batch.actions, dtype=np.int64)
    old_logp = np.asarray(batch.logps, dtype=np.float32)
    split = pool if batch.local is not None else None  # the pool that holds the other rows
    local = batch.local if split is not None and batch.local is not None else len(batch)
    shard = losses.Shard(losses.as_array(batch.obs), losses.as_array(batch.masks),
                         losses.as_array(batch.priors) if len(batch.priors) else None,
                         taken[:local], old_logp[:local], adv_np[:local], ret_np[:local])
    if split is not None:
        split.begin_update(net, taken, old_logp, adv_np, ret_np)
    weights = losses.LossWeights(cfg.clip, cfg.vf_coef, cfg.ent_coef)
    adv = torch.from_numpy(adv_np)
    n, stats = len(batch), {}
    for _ in range(cfg.epochs):
        for idx in np.array_split(rng.permutation(n), max(1, n // cfg.minibatch)):
            norm = losses.minibatch_norm(adv[torch.from_numpy(idx)])
            if split is not None:
                split.request_grads(idx, losses.flat_params(net), norm, weights)
            opt.zero_grad()
            loss, sums = shard.loss(net, idx[idx < local], norm, idx.size, weights)
            if loss is not None:
                loss.backward()
            if split is not None:
                for grads, theirs in split.receive_grads():
                    losses.add_grads(net, grads)
                    sums = {k: v + theirs[k] for k, v in sums.items()}
            torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            opt.step()
            stats = {k: v / idx.size for k, v in sums.items()}
    return stats


def lineups(cfg: FastConfig, rng: np.random.Generator, snapshots: int,
            num_players: int, league: tuple[str, ...] = ()) -> list[list[str]]:
    """Seat roles of one iteration's games of ``num_players`` (see ``fast.train``)."""
    out = []
    for _ in range(cfg.games):
        me = int(rng.integers(num_players))
        roles = []
        for seat in range(num_players):
            u = rng.random()
            if seat != me and league and cfg.p_league and rng.random() < cfg.p_league:
                roles.append(league[int(rng.integers(len(league)))])
            elif seat == me or cfg.p_greedy <= u < cfg.p_greedy + cfg.p_self:
                roles.append(LEARNER)
            elif u < cfg.p_greedy or not snapshots:
                roles.append(GREEDY)
            else:
                roles.append(f"snapshot{int(rng.integers(snapshots))}")
        out.append(roles)
    return out


class Progress:
    """Progress lines: at most one per ``every`` seconds, plus each phase's first and last."""

    def __init__(self, cfg: FastConfig, every: float = PROGRESS_SECONDS,
                 stream: TextIO | None = None) -> None:
        self.cfg, self.every, self.stream = cfg, every, stream
        self.shown_at = -math.inf
        self.phase = ""
        self.pending: str | None = None  # the newest line not printed yet
        self.since = (time.perf_counter(), 0)  # (wall clock, samples) of the last line
        self.mark = ("", 0.0, 0)  # (phase, run seconds, its iterations) when it began here

    def start(self, runner: Runner) -> None:
        """Rates and the estimate of what remains count from here."""
        self.since = (time.perf_counter(), runner.steps)
        self.mark = (runner.phase, runner.elapsed(), runner.done.get(runner.phase, 0))

    def iteration(self, runner: Runner, stats: dict[str, float]) -> None:
        """Note one finished iteration; print it if due."""
        self.pending = self.line(runner, stats)
        now = time.perf_counter()
        if runner.phase != self.phase or now - self.shown_at >= self.every:
            self.flush(runner)

    def flush(self, runner: Runner) -> None:
        """Print the newest line if it was not printed (a phase's last iteration)."""
        if self.pending is not None:
            print(self.pending, file=self.stream or sys.stdout, flush=True)
            self.pending = None
            self.phase = runner.phase
            self.shown_at = time.perf_counter()
            self.since = (self.shown_at, runner.steps)

    def phase_left(self, runner: Runner) -> float:
        """Seconds the current phase has left (at its pace so far, or by its time limit)."""
        seconds, iterations = runner.limits(runner.phase)
        phase, began, done = self.mark
        count = runner.done[runner.phase] - done if phase == runner.phase else 0
        if iterations is not None and count > 0:
            seconds = min(seconds, iterations * (runner.elapsed() - began) / count)
        return max(seconds, 0.0)

    def left(self, runner: Runner) -> str:
        """What remains, in words (in imitation: its minutes and the PPO iterations after it)."""
        phase_left = self.phase_left(runner)
        run_left, ppo_iterations = runner.limits("ppo")
        if runner.phase != "imitation":
            return f"about {phase_left / 60:.1f} min left" if math.isfinite(phase_left) else ""
        if ppo_iterations is None:  # the clock alone ends PPO
            return f"about {run_left / 60:.1f} min left"
        up_to = "up to " if math.isfinite(run_left) else ""
        return (f"about {phase_left / 60:.1f} min of imitation left, then {up_to}"
                f"{ppo_iterations:,} PPO iterations")

    def line(self, runner: Runner, stats: dict[str, float]) -> str:
        """One progress line for the state of ``runner`` after an iteration."""
        cfg = self.cfg
        minutes = runner.elapsed() / 60
        total = f"/{cfg.minutes:g}" if cfg.minutes else ""
        left = self.left(runner)
        cap = {"imitation": cfg.bc_iterations, "ppo": cfg.ppo_iterations}.get(runner.phase, 0)
        done = runner.done.get(runner.phase, 0)
        wall, samples = self.since
        rate = (runner.steps - samples) / max(time.perf_counter() - wall, 1e-9)
        parts = [f"[{runner.phase} {minutes:.1f}{total} min{', ' + left if left else ''}]",
                 f"it {runner.iteration} ({runner.phase} {done}{f'/{cap}' if cap else ''})"]
        steps = runner.phase_steps.get(runner.phase, 0)
        if runner.phase == "imitation":
            parts += [f"samples {steps:,}", f"{rate:,.0f} samples/s",
                      f"loss {stats['bc_loss']:.4f}", f"entropy {stats['bc_entropy']:.3f}",
                      f"in ties {stats['bc_top1_in_ties']:.3f}"]
        else:
            parts += [f"steps {steps:,}", f"{rate:,.0f} steps/s",
                      f"loss {stats['policy_loss']:.4f}", f"value {stats['value_loss']:.4f}",
                      f"entropy {stats['entropy']:.3f}", f"return {stats['mean_return']:+.3f}"]
        if runner.last_eval is not None:
            parts.append(f"eval vs greedy {runner.last_eval['eval_vs_greedy']:.3f} "
                         f"(it {runner.last_eval['iteration']})")
        return "  ".join(parts)


def resume_path(run: str) -> str:
    """The resume state of a run directory (or the given file itself)."""
    return run if os.path.isfile(run) else os.path.join(run, RESUME_FILE)


def check_fresh(out: str) -> None:
    """Refuse to start a new run in a directory that holds one."""
    held = [name for name in ("log.jsonl", RESUME_FILE) if os.path.exists(os.path.join(out, name))]
    if held:
        raise ValueError(f"{out} already holds a run ({', '.join(held)}); continue it with "
                         f"--resume {out}, or give another --out")


def _resume_candidates(run: str) -> list[str]:
    """The files a resume may read, newest first (resume.pt, resume.prev.pt; or the one given)."""
    if os.path.isfile(run) and os.path.basename(run) != RESUME_FILE:
        return [run]
    folder = os.path.dirname(run) if os.path.isfile(run) else run
    return [os.path.join(folder, RESUME_FILE), os.path.join(folder, RESUME_PREVIOUS)]


def _read_resume(path: str) -> dict[str, Any]:
    """One saved resume state, its checksums checked; CLIError when it cannot be read."""
    try:
        state = atomic.load_checked(path)
    except atomic.ChecksumError as exc:
        raise CLIError(f"cannot resume from {path!r}: "
                       f"{str(exc).removeprefix(f'{path}: ')}") from None
    except Exception as exc:
        raise CLIError(f"cannot resume from {path!r}: not a readable resume state "
                       f"({atomic.first_line(exc)})") from exc
    if not isinstance(state, dict) or state.get("format") != "moonriver-fast-resume/1":
        raise CLIError(f"cannot resume from {path!r}: not a fast-recipe resume state")
    return state


def load_resume(run: str, report: Callable[[str], None] = _warn) -> dict[str, Any]:
    """A run directory's ``resume.pt``, else ``resume.prev.pt`` (``report`` names the skipped)."""
    candidates = _resume_candidates(run)
    if not any(os.path.isfile(p) for p in candidates):
        what = "no such directory" if not os.path.exists(run) else f"it holds no {RESUME_FILE}"
        raise CLIError(f"cannot resume {run!r}: {what} (give the run directory of a fast-recipe "
                       f"run, which saves {RESUME_FILE} as soon as it starts)")
    skipped: list[tuple[str, CLIError]] = []
    for path in candidates:
        try:
            if not os.path.isfile(path):
                raise CLIError(f"cannot resume from {path!r}: no such file")
            state = _read_resume(path)
        except CLIError as exc:
            skipped.append((path, exc))
            continue
        for bad, why in skipped:
            reason = str(why).removeprefix(f"cannot resume from {bad!r}: ")
            report(f"skipped {bad}: {reason}; resuming from the state before it, {path}")
        return state
    raise skipped[0][1]


class Runner:
    """One training run (network, optimiser, generator, snapshots, play workers); a context."""

    def __init__(self, cfg: FastConfig, state: dict[str, Any] | None = None, *,
                 progress: Progress | None = None,
                 on_iteration: Callable[[Runner], None] | None = None) -> None:
        check_workers(cfg.workers)
        torch.set_num_threads(cfg.torch_threads)
        torch.manual_seed(cfg.seed)
        self.cfg, self.progress, self.on_iteration = cfg, progress, on_iteration
        self.rng = np.random.default_rng(cfg.seed)
        self.encoder = Encoder()
        self.snapshots: list[RanchNet] = []
        with torch.random.fork_rng(devices=[]):  # building them must not move torch's draws
            self.league = [load_net(path) for path in cfg.league]  # fixed: read again on resume
        self._check_league()
        self.steps = 0
        self.iteration = 0
        self.done = {"imitation": 0, "ppo": 0}  # iterations of each phase
        self.phase_steps = {"imitation": 0, "ppo": 0}  # recorded decisions of each phase
        self.phase = PHASES[0]
        self.last_eval: dict[str, Any] | None = None
        self.opt: torch.optim.Optimizer | None = None
        self.opt_phase = ""
        self.offset = 0.0  # seconds of earlier sessions of this run
        self.next_checkpoint = cfg.checkpoint_minutes * 60
        self.log_path = os.path.join(cfg.out, "log.jsonl")
        self.resume_file = os.path.join(cfg.out, RESUME_FILE)
        if state is None:
            check_fresh(cfg.out)
            if cfg.init:
                self.net = with_critic(load_net(cfg.init)[0], cfg.critic_hidden, cfg.init).train()
            else:
                self.net = RanchNet(NetConfig(cfg.channels, cfg.opponent_channels, cfg.hidden,
                                              cfg.use_prior, cfg.prior_init, cfg.critic_hidden))
        else:
            self.net = self._restore(state)
        os.makedirs(os.path.join(cfg.out, "checkpoints"), exist_ok=True)
        for folder in (cfg.out, os.path.join(cfg.out, "checkpoints")):  # a killed run's
            atomic.remove_partials(folder)
        atomic.atomic_text(os.path.join(cfg.out, CONFIG_FILE), json.dumps(asdict(cfg), indent=1))
        self.start = time.perf_counter()
        self.saved_at = -math.inf  # elapsed seconds when resume.pt was last written
        self.boundary = self.state()  # the newest complete state (what Ctrl-C saves)
        self.write_resume()
        self.pool = (PlayPool(cfg.workers, cfg.num_players, cfg.mode, cfg.backend)
                     if cfg.workers > 1 else None)

    def _restore(self, state: dict[str, Any]) -> RanchNet:
        """Take over a saved run's state; drop what its directory got after that state."""
        net = RanchNet(NetConfig(**state["net_config"]))
        net.load_state_dict(state["net"])
        net.train()
        for weights in state["snapshots"]:
            frozen = RanchNet(net.config)
            frozen.load_state_dict(weights)
            self.snapshots.append(frozen.eval())
        self.rng.bit_generator.state = json.loads(state["rng"])
        torch.set_rng_state(state["torch_rng"])
        self.steps, self.iteration = state["steps"], state["iteration"]
        self.done = dict(state["done"])
        self.phase_steps = dict(state["phase_steps"])
        self.phase = state["phase"]
        self.last_eval = state["last_eval"]
        self.offset = state["seconds"]
        self.next_checkpoint = state["next_checkpoint"]
        if state["optimizer"] is not None:
            self.opt = self._optimizer(net, state["optimizer_phase"])
            self.opt.load_state_dict(state["optimizer"])
            for group in self.opt.param_groups:  # a resumed run may change the rate
                group["lr"] = self._lr(state["optimizer_phase"])
            self.opt_phase = state["optimizer_phase"]
        atomic.trim_log(self.log_path, self.iteration)  # iterations logged after the saved state go
        folder = os.path.join(self.cfg.out, "checkpoints")
        for name in os.listdir(folder) if os.path.isdir(folder) else []:
            newer = re.fullmatch(r"net_it(\d+)\.pt", name)  # named by iteration
            older = re.fullmatch(r"net_(\d+)s\.pt", name)  # by whole seconds (before)
            if (newer and int(newer[1]) > self.iteration) or (
                    older and int(older[1]) > int(self.offset)):
                os.remove(os.path.join(folder, name))
        return net

    def _lr(self, phase: str) -> float:
        return self.cfg.bc_lr if phase == "imitation" else self.cfg.learning_rate

    def _optimizer(self, net: RanchNet, phase: str) -> torch.optim.Optimizer:
        return torch.optim.Adam(net.parameters(), lr=self._lr(phase))

    def _phase_optimizer(self, phase: str) -> torch.optim.Optimizer:
        """The optimiser of ``phase`` (a fresh Adam when the phase changes)."""
        if self.opt is None or self.opt_phase != phase:
            self.opt, self.opt_phase = self._optimizer(self.net, phase), phase
        return self.opt

    def state(self) -> dict[str, Any]:
        """Everything a resumed run needs, copied (later updates do not change it)."""
        return {
            "format": "moonriver-fast-resume/1", "config": asdict(self.cfg),
            "phase": self.phase, "done": dict(self.done), "iteration": self.iteration,
            "phase_steps": dict(self.phase_steps),
            "steps": self.steps, "seconds": self.elapsed(),
            "next_checkpoint": self.next_checkpoint, "last_eval": copy.deepcopy(self.last_eval),
            "net_config": asdict(self.net.config),
            "net": {k: v.detach().clone() for k, v in self.net.state_dict().items()},
            "optimizer": None if self.opt is None else copy.deepcopy(self.opt.state_dict()),
            "optimizer_phase": self.opt_phase,
            # frozen networks never change: their tensors need no copy
            "snapshots": [s.state_dict() for s in self.snapshots],
            "rng": json.dumps(self.rng.bit_generator.state),
            "torch_rng": torch.get_rng_state(),
        }

    def write_resume(self) -> str:
        """Write the newest complete state to ``resume.pt`` (the old one to ``resume.prev.pt``)."""
        with sigint_deferred():
            if os.path.isfile(self.resume_file):
                atomic.keep_copy(self.resume_file, os.path.join(self.cfg.out, RESUME_PREVIOUS))
            atomic.atomic_save(self.resume_file, lambda fh: torch.save(self.boundary, fh))
        self.saved_at = self.boundary["seconds"]
        return self.resume_file

    def close(self, force: bool = False) -> None:
        """Stop the play workers (idempotent; ``force``: without waiting for a share)."""
        pool = getattr(self, "pool", None)  # None too when __init__ failed before it
        if pool is not None:
            pool.close(force=force)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, kind: object, error: object, tb: object) -> None:
        self.close(force=kind is not None)

    def elapsed(self) -> float:
        """Seconds this run has been going (earlier sessions of a resumed run included)."""
        return self.offset + time.perf_counter() - self.start

    def _finish(self, phase: str, samples: int, stats: dict[str, float]) -> None:
        """Count, log and checkpoint one iteration; take its state."""
        self.steps += samples
        self.phase_steps[phase] += samples
        self.iteration += 1
        self.done[phase] += 1
        line = {"phase": phase, "iteration": self.iteration, "seconds": round(self.elapsed(), 1),
                "samples": self.steps, **{k: round(v, 4) for k, v in stats.items()}}
        if self.elapsed() >= self.next_checkpoint:
            self.save(os.path.join(self.cfg.out, "checkpoints",
                                   f"net_it{self.iteration:06d}.pt"))
            self.next_checkpoint += self.cfg.checkpoint_minutes * 60
            if self.next_checkpoint <= self.elapsed():  # a long iteration: no catching up
                self.next_checkpoint = self.elapsed() + self.cfg.checkpoint_minutes * 60
        with sigint_deferred():  # the state and the log line name the same iteration
            self.boundary = self.state()
            with open(self.log_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(line) + "\n")
        if self.elapsed() - self.saved_at >= RESUME_SECONDS or self.iteration == 1:
            self.write_resume()
        if self.progress is not None:
            self.progress.iteration(self, stats)
        if self.on_iteration is not None:
            self.on_iteration(self)

    def _set_phase(self, phase: str) -> None:
        """Move to the next phase; its start is saved."""
        if self.progress is not None:
            self.progress.flush(self)
        self.phase = phase
        self.boundary = self.state()
        self.write_resume()
        if self.progress is not None:
            self.progress.start(self)  # the estimate of what remains follows this phase's pace

    def save(self, path: str) -> None:
        """Weights plus the variant (or the variants: any game then) and the run's settings."""
        cfg = self.cfg
        played: dict[str, Any] = (
            {"variants": sorted(set(variant_list(cfg.variants)))} if cfg.variants
            else {"num_players": cfg.num_players, "mode": cfg.mode})
        save_net(self.net, path, played | {"seconds": round(self.elapsed(), 1),
                                           "samples": self.steps, "config": asdict(cfg)})

    def played(self) -> list[GameConfig]:
        """The games the run draws from (repeats kept; ``num_players`` and ``mode`` if none)."""
        cfg = self.cfg
        if not cfg.variants:
            return [GameConfig(num_players=cfg.num_players, mode=cfg.mode)]
        return [variant_config(name) for name in variant_list(cfg.variants)]

    def variant(self) -> GameConfig:
        """The game of the next iteration, drawn from ``played()`` (no draw without variants)."""
        games = self.played()
        return games[int(self.rng.integers(len(games)))] if self.cfg.variants else games[0]

    def _check_league(self) -> None:
        """Refuse a p_league that would seat nobody: no league network fits a played variant."""
        cfg = self.cfg
        if cfg.p_league and not any(self.league_for(config) for config in self.played()):
            raise ValueError(f"p_league is {cfg.p_league:g} but no league network "
                             f"({', '.join(cfg.league)}) was trained for a variant this run "
                             f"plays: a league network sits only in its own variant")

    def league_for(self, config: GameConfig) -> tuple[str, ...]:
        """Names of the league networks whose weights were trained for ``config``'s variant."""
        return tuple(f"league{i}" for i, (_, meta) in enumerate(self.league)
                     if variant_refusal("league", meta, config.num_players, config.mode,
                                        config.scenario) is None)

    def _play(self, roles: list[list[str]], nets: dict[str, torch.nn.Module],
              config: GameConfig, *, record: str | None = LEARNER, label_greedy: bool = False,
              keep: bool = False) -> Batch:
        """Play ``len(roles)`` fresh games of ``config`` (in the pool's processes if any)."""
        cfg = self.cfg
        core = cfg.core_forward
        if self.pool is None:
            return play_share(game_seeds(len(roles), self.rng), roles, nets, self.rng, config,
                              cfg.backend, self.encoder, record=record,
                              label_greedy=label_greedy, margin_coef=cfg.margin_coef, core=core)
        return self.pool.play(game_seeds(len(roles), self.rng), roles, nets, self.rng,
                              config=config, record=record, label_greedy=label_greedy,
                              margin_coef=cfg.margin_coef, keep=keep, core=core)

    def _play_variants(self, nets: dict[str, torch.nn.Module], keep: bool) -> Batch:
        """One PPO iteration's variants, each played whole by one of the pool's processes."""
        assert self.pool is not None  # play_split "variants" plays in the pool
        cfg, jobs = self.cfg, []
        for _ in range(cfg.variants_per_iteration):  # every draw before any game is played
            config = self.variant()
            roles = lineups(cfg, self.rng, len(self.snapshots), config.num_players,
                            self.league_for(config))
            jobs.append(Job(config, game_seeds(len(roles), self.rng), roles,
                            int(self.rng.integers(2**63))))
        return self.pool.play_jobs(jobs, nets, margin_coef=cfg.margin_coef, keep=keep,
                                   core=cfg.core_forward)

    @contextmanager
    def _update_threads(self, split: bool = False) -> Iterator[None]:
        """Torch threads for an update: the play workers idle meanwhile unless ``split``."""
        threads = (self.cfg.torch_threads if split else
                   self.cfg.update_threads or max(self.cfg.torch_threads, self.cfg.workers))
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            yield
        finally:
            torch.set_num_threads(before)

    def _until(self, phase: str, seconds: float, iterations: int | None) -> Iterator[None]:
        """Yield once per iteration to run: ``seconds`` more or ``iterations`` more."""
        end = self.elapsed() + seconds
        stop = math.inf if iterations is None else self.done[phase] + iterations
        while self.done[phase] < stop and self.elapsed() < end:
            yield

    def imitation(self, seconds: float = math.inf, iterations: int | None = None) -> None:
        """Phase 1: imitate GreedyAgent for ``seconds`` more or ``iterations`` more."""
        cfg = self.cfg
        opt = self._phase_optimizer("imitation")
        for _ in self._until("imitation", seconds, iterations):
            config = self.variant()
            roles = [[GREEDY] * config.num_players for _ in range(cfg.bc_games)]
            batch = self._play(roles, {}, config, record=None, label_greedy=True)
            with self._update_threads():
                stats = losses.imitation_step(self.net, opt, batch, cfg.bc_epochs,
                                              cfg.minibatch, self.rng)
            self._finish("imitation", len(batch), stats)

    def ppo(self, seconds: float = math.inf, iterations: int | None = None) -> None:
        """Phase 2: PPO against Greedy, itself and snapshots for ``seconds`` or ``iterations``."""
        cfg = self.cfg
        opt = self._phase_optimizer("ppo")
        for _ in self._until("ppo", seconds, iterations):
            t0 = time.perf_counter()
            nets: dict[str, torch.nn.Module] = {LEARNER: self.net}
            nets.update({f"snapshot{i}": s for i, s in enumerate(self.snapshots)})
            nets.update({f"league{i}": net for i, (net, _) in enumerate(self.league)})
            split = self.pool is not None and cfg.splits_updates
            self.net.eval()
            if self.pool is not None and cfg.whole_variants:
                batch = self._play_variants(nets, keep=split)
            else:
                parts = []
                for _ in range(cfg.variants_per_iteration):
                    config = self.variant()
                    roles = lineups(cfg, self.rng, len(self.snapshots), config.num_players,
                                    self.league_for(config))
                    parts.append(self._play(roles, nets, config, keep=split))
                batch = parts[0] if len(parts) == 1 else merge(
                    [pack(part, legal_priors=False) for part in parts],
                    [k * cfg.games for k in range(len(parts))])
            self.net.train()
            with self._update_threads(split):
                stats = ppo_step(self.net, opt, batch, cfg, self.rng,
                                 self.pool if split else None)
            stats["learner_steps_per_s"] = len(batch) / (time.perf_counter() - t0)
            stats["mean_return"] = float(np.mean(list(batch.returns.values())))
            self._snapshot_if_due()
            if cfg.eval_every and (self.done["ppo"] + 1) % cfg.eval_every == 0:
                stats["eval_vs_greedy"] = self.evaluate(self.iteration + 1)
            self._finish("ppo", len(batch), stats)

    def _snapshot_if_due(self) -> None:
        """Freeze a copy of the learner every ``snapshot_every`` iterations (imitation counted)."""
        if (self.iteration + 1) % self.cfg.snapshot_every == 0:
            frozen = RanchNet(self.net.config)
            frozen.load_state_dict(self.net.state_dict())
            self.snapshots = [*self.snapshots, frozen.eval()][-self.cfg.max_snapshots:]

    def evaluate(self, iteration: int) -> float:
        """Win share against Greedy over ``eval_games`` fixed games (seeds from 1e9)."""
        self.net.eval()
        rate = evaluate(self.net, self.cfg.num_players, self.cfg.mode, self.cfg.eval_games,
                        backend=self.cfg.backend)
        self.net.train()
        self.last_eval = {"eval_vs_greedy": rate, "games": self.cfg.eval_games,
                          "iteration": iteration}
        return rate

    def limits(self, phase: str) -> tuple[float, int | None]:
        """Seconds and iterations left to ``phase`` (None: no iteration limit)."""
        cfg = self.cfg
        total = cfg.minutes * 60 if cfg.minutes else math.inf
        if phase == "imitation":
            if not cfg.bc_minutes and not cfg.bc_iterations:
                return 0.0, 0
            end = min(total, cfg.bc_minutes * 60 if cfg.bc_minutes else math.inf)
            cap = cfg.bc_iterations
        else:
            end, cap = total, cfg.ppo_iterations
        return end - self.elapsed(), (cap - self.done[phase] if cap else None)

    def run(self) -> None:
        """The recipe from the current phase to its end (see ``fast.train``)."""
        cfg = self.cfg
        if self.progress is not None:
            self.progress.start(self)
        if self.phase == "imitation":
            self.imitation(*self.limits("imitation"))
            self.save(os.path.join(cfg.out, "after_imitation.pt"))
            self._set_phase("ppo")
        if self.phase == "ppo":
            self.ppo(*self.limits("ppo"))
            self.save(os.path.join(cfg.out, "final.pt"))
            export(os.path.join(cfg.out, "final.pt"), os.path.join(cfg.out, AGENT_FILE))
            self._set_phase("evaluation")
        if self.phase == "evaluation":
            if cfg.eval_games:
                self.evaluate(self.iteration)
                assert self.last_eval is not None  # evaluate() wrote it
                print(f"evaluation: win share {self.last_eval['eval_vs_greedy']:.3f} over "
                      f"{cfg.eval_games} games against Greedy (shared wins split)", flush=True)
            self._set_phase("done")
