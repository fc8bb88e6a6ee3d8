"""The fast recipe: imitation of GreedyAgent, then PPO against Greedy, itself and snapshots.

    moonriver-train-fast --config training/configs/fast_4p_base.toml --out runs/fast_4p
    moonriver-train-fast --resume runs/fast_4p      # continue a stopped run

(``python -m moonriver_env.training.fast.train`` is the same command.) The built-in defaults
are the shipped recipe, ``training/configs/fast_4p_base.toml``. Torch threads 1 per process;
the games of every batch are split over ``workers`` processes (see ``parallel_play``). With
``split_updates`` (the default) each PPO update is split over them too: every process keeps
the decisions it recorded and computes their part of each minibatch's gradient
(``ppo_loss``); the imitation updates, and PPO without ``split_updates``, run in the main
process with ``update_threads`` torch threads (by default one per play process, as those are
idle then). On the compiled core (``backend = "core"``, the default)
each process plays its share in one ``moonriver_env.vector.BatchedGames``
(``rollout.play_batched``): Greedy seats and Greedy's prior are computed in the core, in
batch, and the networks score only the legal actions. With ``backend = "python"`` (the
reference engine) each share is a list of per-game ``Game`` objects played by
``rollout.play``, Greedy in Python.

1. Imitation, until ``bc_minutes`` have passed or ``bc_iterations`` iterations are done
   (whichever comes first; 0 is no limit, both 0 skip the phase): batches of ``bc_games``
   games where GreedyAgent plays every seat; the network learns to put its probability on
   Greedy's tied-best actions of every non-forced decision (cross-entropy on the tied set)
   and its value learns each seat's final reward. Each batch is used for ``bc_epochs``
   passes, then dropped.
2. PPO, until ``minutes`` have passed in total or ``ppo_iterations`` iterations are done
   (0 is no limit; one of them must be set): each iteration plays ``games`` whole games.
   One seat of each game is the learner; each other seat is, independently, Greedy
   (``p_greedy``), the learner again (``p_self``; its decisions are trained on too) or a frozen
   snapshot of the learner (the rest; Greedy while there is none); before that draw, with
   chance ``p_league``, one of the fixed ``league`` networks trained for the game's variant
   (a past release; none sits in a variant it was not trained for). A snapshot is taken every
   ``snapshot_every`` iterations; the newest ``max_snapshots`` are kept. The reward is +1 for
   a win (shared wins count), -1 otherwise, plus ``margin_coef`` x (own score - best other) /
   100, all at the end of the game; advantages by GAE over each seat's decisions.
3. An evaluation of ``eval_games`` games against Greedy (also every ``eval_every`` PPO
   iterations when that is set).

The run directory gets ``config.json``, ``log.jsonl`` (one line per iteration),
``checkpoints/net_itNNNNNN.pt`` (weights every ``checkpoint_minutes``, for learning curves,
named by iteration), ``after_imitation.pt``, ``final.pt`` (the network), ``agent.npz`` (the
same as ``moonriver_env.agents.pretrained`` loads it, written when PPO ends) and
``resume.pt``: the whole state of the run at the end of an iteration (weights, optimiser,
snapshots, the generator, iteration counts, elapsed time and phase), written when the run
starts, after its first iteration, at least every minute, at each phase's end and on Ctrl-C;
the state it replaces is kept as ``resume.prev.pt``. Every file is written atomically
(``training/atomic.py``), every weights file read has its checksums checked, and a run's start
removes the partial files a killed one left. Ctrl-C stops the run and its play workers and
saves ``resume.pt``; ``--resume RUN_DIR`` continues it exactly where it stopped (same weights,
same generator draws), from ``resume.prev.pt`` with one line when ``resume.pt`` cannot be read
or fails its checksum. The run
opens with a short summary (``summary``) and ends with the ``moonriver-eval`` command that
measures its agent (``eval_command``).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import math
import os
import re
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from typing import Any, TextIO

import numpy as np

# Waiting OpenMP threads spin by default: on a busy 2-core machine the second update thread's
# spinning halved the learner's rate (docs/training.md). Set before torch loads its OpenMP
# runtime, which reads it once; the play workers inherit it. An explicit setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch
from moonriver_env.agents.pretrained import MAX_VALUE_WIDTH, variant_refusal
from moonriver_env.training.atomic import (
    ChecksumError,
    atomic_save,
    atomic_text,
    first_line,
    keep_copy,
    load_checked,
    remove_partials,
)
from moonriver_env.training.az.selfplay import variant_config, variant_list
from moonriver_env.training.export_weights import export
from moonriver_env.training.fast.parallel_play import (
    PlayPool,
    check_workers,
    merge,
    pack,
    play_share,
    sigint_deferred,
)
from moonriver_env.training.fast.ppo_loss import (
    LossWeights,
    Shard,
    add_grads,
    flat_params,
    minibatch_norm,
)
from moonriver_env.training.fast.rollout import (
    GREEDY,
    LEARNER,
    TRAINING_SEEDS,
    Batch,
    evaluate,
    game_seeds,
)
from moonriver_env.training.policy_net import (
    LegalRows,
    NetConfig,
    RanchNet,
    load_net,
    save_net,
    with_critic,
)
from moonriver_env.training.settings import load_settings

from moonriver_env.backend import DEFAULT_BACKEND, Encoder, check_backend
from moonriver_env.common.cli import ArgumentParser, CLIError, cli_main
from moonriver_env.engine import GameConfig

PROG = "moonriver-train-fast"
CONFIG_FILE = "config.json"  # every setting of the run
RESUME_FILE = "resume.pt"
RESUME_PREVIOUS = "resume.prev.pt"  # the state before resume.pt, should that be unreadable
AGENT_FILE = "agent.npz"  # the trained agent, as PretrainedAgent loads it (export_weights)
RESUME_SECONDS = 60.0  # resume.pt is at most this old (plus one iteration) after a hard kill
PROGRESS_SECONDS = 10.0  # at most one progress line per this many seconds within a phase
PHASES = ("imitation", "ppo", "evaluation", "done")
# Settings that fix the network or the run's draws: a resumed run must keep them.
LOCKED_ON_RESUME = ("num_players", "mode", "variants", "seed", "channels", "opponent_channels",
                    "hidden", "use_prior", "prior_init", "critic_hidden", "init", "league",
                    "p_league")


@dataclass
class FastConfig:
    """Every setting of a fast-recipe run (the defaults are training/configs/fast_4p_base.toml)."""

    num_players: int = 4
    mode: str = "base"
    # one variant per iteration, drawn from this list (empty: num_players and mode)
    variants: tuple[str, ...] = ()
    variants_per_iteration: int = 1  # PPO: this many variants drawn, `games` games of each
    seed: int = 0
    out: str = "runs/fast_4p_base"
    minutes: float = 30.0  # total wall-clock budget, imitation included (0: none)
    bc_minutes: float = 5.0  # imitation's wall-clock limit (0: none)
    bc_iterations: int = 0  # imitation's iteration limit (0: none; both 0: no imitation)
    bc_games: int = 16
    bc_epochs: int = 2
    bc_lr: float = 1e-3
    ppo_iterations: int = 0  # PPO's iteration limit (0: none, ``minutes`` ends it)
    games: int = 32  # games per PPO iteration
    learning_rate: float = 1e-3
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
    league: tuple[str, ...] = ()  # agents' .npz files of fixed networks (see p_league)
    p_league: float = 0.0
    snapshot_every: int = 10
    max_snapshots: int = 5
    checkpoint_minutes: float = 2.5
    eval_games: int = 200  # evaluation against Greedy at the end (0: none)
    eval_every: int = 0  # PPO iterations between evaluations during training (0: none)
    channels: int = 32
    opponent_channels: int = 16
    hidden: int = 128
    use_prior: bool = True  # logits add a learned multiple of Greedy's one-ply values
    prior_init: float = 3.0
    critic_hidden: int = 0  # units of the value's own layer (0: a linear head on the state)
    init: str = ""  # start from these weights (a .pt of save_net or an agents' .npz)
    torch_threads: int = 1
    update_threads: int = 0  # torch threads of the updates in the main process
    # (0: max(torch_threads, workers); a split PPO update runs on torch_threads)
    workers: int = 2  # processes that play the games (1: all in the main process)
    split_updates: bool = True  # PPO updates: each play process computes its rows' gradient
    backend: str = DEFAULT_BACKEND  # implementation that plays the games: core or python

    @classmethod
    def load(cls, path: str | None, overrides: dict[str, Any],
             base: dict[str, Any] | None = None) -> FastConfig:
        """``base`` (else the defaults), then a TOML file, then explicit overrides; unknown
        keys and values of the wrong type are errors."""
        values = load_settings(cls, path, overrides, base,
                               unchecked=("workers", "update_threads"))  # validate() words them
        cfg = cls(**values)
        cfg.validate()
        return cfg

    def validate(self) -> None:
        """Refuse settings that cannot run; the message says what is allowed."""
        GameConfig(num_players=self.num_players, mode=self.mode)  # its own clear errors
        if self.variants:
            variant_list(self.variants)  # its own clear errors
        check_backend(self.backend)
        check_workers(self.workers)
        if isinstance(self.update_threads, bool) or not isinstance(self.update_threads, int) \
                or self.update_threads < 0:
            raise ValueError(f"update_threads must be an integer >= 0 (0: one per play "
                             f"process), got {self.update_threads!r}")
        if not 0 <= self.p_greedy + self.p_self <= 1 or min(self.p_greedy, self.p_self) < 0:
            raise ValueError("p_greedy and p_self must be >= 0 with p_greedy + p_self <= 1")
        if not 0 <= self.p_league <= 1 or (self.p_league and not self.league):
            raise ValueError(f"p_league must be in [0, 1] and above 0 only with league files, "
                             f"got {self.p_league!r} with league {list(self.league)!r}")
        for name in ("minutes", "bc_minutes", "bc_iterations", "ppo_iterations", "eval_games",
                     "eval_every", "checkpoint_minutes"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0 (0: none), got {getattr(self, name)}")
        if not self.minutes and not self.ppo_iterations:
            raise ValueError("set minutes or ppo_iterations (both 0 would never stop)")
        if self.eval_every and not self.eval_games:
            raise ValueError("eval_every needs eval_games >= 1")
        for name in ("bc_games", "bc_epochs", "games", "variants_per_iteration", "epochs",
                     "minibatch", "snapshot_every", "max_snapshots", "channels",
                     "opponent_channels", "hidden", "torch_threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 0 <= self.critic_hidden <= MAX_VALUE_WIDTH:
            raise ValueError(f"critic_hidden must be in 0..{MAX_VALUE_WIDTH} (0: none), got "
                             f"{self.critic_hidden}")


SETTINGS: dict[str, str] = {
    "num_players": "players per game: 2, 3 or 4",
    "mode": "rules: base or legends",
    "variants": "one variant per iteration (imitation and PPO), drawn from this list: names "
                "such as 2p-base or 3p-legends-2, 'all' for the 15; a name listed twice is "
                "drawn twice as often (empty: every game is num_players and mode; the final "
                "evaluation plays num_players and mode either way)",
    "variants_per_iteration": "PPO: variants drawn for each iteration, games games of each, "
                              "their decisions updated together (above 1 the update runs in "
                              "the main process, not split)",
    "seed": "seed of the run's generator (game seeds, seat roles, sampling, minibatches) and "
            "of the initial weights",
    "out": "run directory (a new run refuses one that already holds a run)",
    "minutes": "wall-clock budget of the whole run, imitation included (0: no time limit, "
               "ppo_iterations ends the run)",
    "bc_minutes": "imitation ends after this many minutes of the run (0: no time limit; with "
                  "bc_iterations also 0, no imitation)",
    "bc_iterations": "imitation ends after this many iterations (0: no iteration limit)",
    "bc_games": "imitation: all-Greedy games per iteration",
    "bc_epochs": "imitation: passes over each iteration's decisions",
    "bc_lr": "imitation: Adam learning rate",
    "ppo_iterations": "PPO ends after this many iterations (0: no iteration limit, minutes "
                      "ends it)",
    "games": "PPO: games per iteration",
    "learning_rate": "PPO: Adam learning rate",
    "epochs": "PPO: passes over each iteration's decisions",
    "minibatch": "decisions per minibatch (both phases)",
    "clip": "PPO: clip range of the probability ratio",
    "ent_coef": "PPO: entropy bonus coefficient",
    "vf_coef": "PPO: value loss coefficient",
    "max_grad_norm": "PPO: gradient norm clip",
    "gae_lambda": "GAE lambda (gamma is 1)",
    "margin_coef": "reward: weight of (own score - best other) / 100 added to +1 win / -1 loss",
    "p_greedy": "PPO: chance that a seat other than the learner's is Greedy",
    "p_self": "PPO: chance that a seat other than the learner's is the learner again "
              "(p_greedy + p_self <= 1; the rest are snapshots)",
    "league": "PPO: agents' .npz files of fixed networks (a past release, another run), "
              "seated only in games of a variant their weights were trained for",
    "p_league": "PPO: chance that a seat other than the learner's is a league network (one "
                "of those trained for the game's variant, uniformly), drawn before the "
                "p_greedy and p_self draw, which seats the rest (0: none)",
    "snapshot_every": "iterations (both phases counted) between frozen snapshots of the learner",
    "max_snapshots": "snapshots kept (the newest)",
    "checkpoint_minutes": "minutes between the weights saved in checkpoints/ for learning "
                          "curves (0: every iteration)",
    "eval_games": "games of the evaluation against Greedy at the end, and of each one during "
                  "training (0: none)",
    "eval_every": "PPO iterations between evaluations against Greedy during training; their "
                  "time counts in minutes (0: only the one at the end)",
    "channels": "network: viewer cell features",
    "opponent_channels": "network: opponents' cell features",
    "hidden": "network: trunk units",
    "use_prior": "network: the logits add a learned multiple of Greedy's one-ply values",
    "prior_init": "network: starting weight of that prior (logits per point)",
    "critic_hidden": "network: units of a hidden layer of the value's own (over the "
                     "observation after the ranches, the trunk's input and its state) whose "
                     "value adds to the linear head's; it starts at zero, so a network from "
                     "init without one keeps its values (0: the linear head alone)",
    "init": "start from these weights (a .pt of save_net or an exported .npz) instead of fresh "
            "ones (empty: fresh)",
    "torch_threads": "torch threads of each play process",
    "update_threads": "torch threads of the updates run in the main process alone "
                      "(0: one per play process)",
    "workers": "processes that play each batch's games (1: all in the main process)",
    "split_updates": "split each PPO update over the play processes, each computing its "
                     "own decisions' part of the gradient",
    "backend": "implementation that plays the games: core (compiled: the games of a batch "
               "played together in the core) or python (the reference engine, one Game object "
               "per game, Greedy in Python); the two draw Greedy's ties from different "
               "generators, so their runs differ (default from $MOONRIVER_BACKEND when set)",
}


def _shown(value: Any) -> str:
    """A default as the help text shows it (TOML spelling)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return json.dumps(list(value))
    return '""' if value == "" else f"{value:g}" if isinstance(value, float) else str(value)


def _array(rows: Any) -> np.ndarray:
    """A batch field as one array (the batched play stores arrays, ``play`` lists of rows)."""
    return rows if isinstance(rows, np.ndarray) else np.stack(rows)


def imitation_step(net: RanchNet, opt: torch.optim.Optimizer, batch: Batch, epochs: int,
                   minibatch: int, rng: np.random.Generator) -> dict[str, float]:
    """Cross-entropy on Greedy's tied-best set and value regression on the final reward."""
    rows = LegalRows(_array(batch.obs), _array(batch.masks),
                     _array(batch.priors) if len(batch.priors) else None)
    valid = rows.valid
    ties = torch.from_numpy(np.take_along_axis(_array(batch.actions), rows.legal_np, 1)) & valid
    targets = torch.tensor([batch.returns[k] for k in batch.keys], dtype=torch.float32)
    n, stats = len(batch), {}
    for _ in range(epochs):
        for idx in np.array_split(rng.permutation(n), max(1, n // minibatch)):
            t = torch.from_numpy(idx)
            logp, value = rows.forward(net, idx)
            policy_loss = -torch.logsumexp(logp.masked_fill(~ties[t], -1e9), dim=1).mean()
            value_loss = (value - targets[t]).pow(2).mean()
            opt.zero_grad()
            (policy_loss + 0.5 * value_loss).backward()
            opt.step()
            top = logp.argmax(dim=1)
            with torch.no_grad():
                entropy = -torch.where(valid[t], logp.exp() * logp, 0.0).sum(dim=1).mean()
            stats = {"bc_loss": policy_loss.item(), "bc_value_loss": value_loss.item(),
                     "bc_entropy": entropy.item(),
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
             rng: np.random.Generator, pool: PlayPool | None = None) -> dict[str, float]:
    """Clipped PPO epochs over one iteration's decisions (the policy over each decision's
    legal actions, ``RanchNet.legal_forward``). With ``pool`` and a batch it played with
    ``keep``, each worker computes its rows' part of every minibatch's gradient meanwhile."""
    adv_np, ret_np = advantages(batch, cfg.gae_lambda)
    taken = np.asarray(batch.actions, dtype=np.int64)
    old_logp = np.asarray(batch.logps, dtype=np.float32)
    split = pool if batch.local is not None else None  # the pool that holds the other rows
    local = batch.local if split is not None and batch.local is not None else len(batch)
    shard = Shard(_array(batch.obs), _array(batch.masks),
                  _array(batch.priors) if len(batch.priors) else None, taken[:local],
                  old_logp[:local], adv_np[:local], ret_np[:local])
    if split is not None:
        split.begin_update(net, taken, old_logp, adv_np, ret_np)
    weights = LossWeights(cfg.clip, cfg.vf_coef, cfg.ent_coef)
    adv = torch.from_numpy(adv_np)
    n, stats = len(batch), {}
    for _ in range(cfg.epochs):
        for idx in np.array_split(rng.permutation(n), max(1, n // cfg.minibatch)):
            norm = minibatch_norm(adv[torch.from_numpy(idx)])
            if split is not None:
                split.request_grads(idx, flat_params(net), norm, weights)
            opt.zero_grad()
            loss, sums = shard.loss(net, idx[idx < local], norm, idx.size, weights)
            if loss is not None:
                loss.backward()
            if split is not None:
                for grads, theirs in split.receive_grads():
                    add_grads(net, grads)
                    sums = {k: v + theirs[k] for k, v in sums.items()}
            torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            opt.step()
            stats = {k: v / idx.size for k, v in sums.items()}
    return stats


def lineups(cfg: FastConfig, rng: np.random.Generator, snapshots: int,
            num_players: int, league: tuple[str, ...] = ()) -> list[list[str]]:
    """Seat roles of one iteration's games of ``num_players`` (see the module docstring);
    ``league`` names the league networks that may sit in this variant."""
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
    """Progress lines: phase, elapsed / total minutes, iterations, rate, latest loss, entropy
    and evaluation; one per iteration but at most one per ``every`` seconds, plus each
    phase's first and last iteration."""

    def __init__(self, cfg: FastConfig, every: float = PROGRESS_SECONDS,
                 stream: TextIO | None = None) -> None:
        self.cfg, self.every, self.stream = cfg, every, stream
        self.shown_at = -math.inf
        self.phase = ""
        self.pending: str | None = None  # the newest line not printed yet
        self.since = (time.perf_counter(), 0)  # (wall clock, samples) of the last line

    def start(self, runner: Runner) -> None:
        """Rates count from here (the run's steps so far, its play workers started)."""
        self.since = (time.perf_counter(), runner.steps)

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

    def line(self, runner: Runner, stats: dict[str, float]) -> str:
        """One progress line for the state of ``runner`` after an iteration."""
        cfg = self.cfg
        minutes = runner.elapsed() / 60
        total = f"/{cfg.minutes:g}" if cfg.minutes else ""
        cap = {"imitation": cfg.bc_iterations, "ppo": cfg.ppo_iterations}.get(runner.phase, 0)
        done = runner.done.get(runner.phase, 0)
        wall, samples = self.since
        rate = (runner.steps - samples) / max(time.perf_counter() - wall, 1e-9)
        parts = [f"[{runner.phase} {minutes:.1f}{total} min]",
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


def _atomic_save(blob: dict[str, Any], path: str, previous: str = "") -> None:
    """``torch.save`` to ``path`` atomically (complete or absent, a Ctrl-C waits for it);
    ``previous``: the file now at ``path`` is kept there first."""
    with sigint_deferred():
        if previous and os.path.isfile(path):
            keep_copy(path, previous)
        atomic_save(path, lambda fh: torch.save(blob, fh))


def _resume_path(run: str) -> str:
    """The resume state of a run directory (or the given file itself)."""
    return run if os.path.isfile(run) else os.path.join(run, RESUME_FILE)


def _check_fresh(out: str) -> None:
    """Refuse to start a new run in a directory that holds one."""
    held = [name for name in ("log.jsonl", RESUME_FILE) if os.path.exists(os.path.join(out, name))]
    if held:
        raise ValueError(f"{out} already holds a run ({', '.join(held)}); continue it with "
                         f"--resume {out}, or give another --out")


def _resume_candidates(run: str) -> list[str]:
    """The files a resume may read, newest first: a run's resume.pt and the state before it
    (resume.prev.pt), or the one file given."""
    if os.path.isfile(run) and os.path.basename(run) != RESUME_FILE:
        return [run]
    folder = os.path.dirname(run) if os.path.isfile(run) else run
    return [os.path.join(folder, RESUME_FILE), os.path.join(folder, RESUME_PREVIOUS)]


def _read_resume(path: str) -> dict[str, Any]:
    """One saved resume state, its checksums checked; CLIError (one line) when it cannot be
    read."""
    try:
        state = load_checked(path)
    except ChecksumError as exc:
        raise CLIError(f"cannot resume from {path!r}: "
                       f"{str(exc).removeprefix(f'{path}: ')}") from None
    except Exception as exc:
        raise CLIError(f"cannot resume from {path!r}: not a readable resume state "
                       f"({first_line(exc)})") from exc
    if not isinstance(state, dict) or state.get("format") != "moonriver-fast-resume/1":
        raise CLIError(f"cannot resume from {path!r}: not a fast-recipe resume state")
    return state


def _warn(line: str) -> None:
    print(f"{PROG}: warning: {line}", file=sys.stderr, flush=True)


def load_resume(run: str, report: Callable[[str], None] = _warn) -> dict[str, Any]:
    """The resume state saved in a run directory: ``resume.pt``, or the state before it
    (``resume.prev.pt``) when that cannot be read, ``report`` getting one line that names the
    skipped file; a clear error when there is none."""
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
    """One training run: network, optimiser, generator, snapshots, logs, play workers
    (stopped by ``close`` or at the end of a ``with`` block). ``state`` (from
    ``load_resume``) continues a saved run; ``on_iteration(runner)`` is called after each
    iteration, once its state is complete."""

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
            _check_fresh(cfg.out)
            if cfg.init:
                self.net = with_critic(load_net(cfg.init)[0], cfg.critic_hidden, cfg.init)
                self.net.train()
            else:
                self.net = RanchNet(NetConfig(cfg.channels, cfg.opponent_channels, cfg.hidden,
                                              cfg.use_prior, cfg.prior_init, cfg.critic_hidden))
        else:
            self.net = self._restore(state)
        os.makedirs(os.path.join(cfg.out, "checkpoints"), exist_ok=True)
        for folder in (cfg.out, os.path.join(cfg.out, "checkpoints")):  # a killed run's
            remove_partials(folder)
        atomic_text(os.path.join(cfg.out, CONFIG_FILE), json.dumps(asdict(cfg), indent=1))
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
        if os.path.exists(self.log_path):  # iterations logged after the saved state go
            with open(self.log_path, encoding="utf-8") as fh:
                lines = [line for line in fh
                         if line.strip() and json.loads(line)["iteration"] <= self.iteration]
            with open(self.log_path, "w", encoding="utf-8") as fh:
                fh.writelines(lines)
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
        """Write the newest complete state to ``resume.pt`` (the one it held goes to
        ``resume.prev.pt``)."""
        _atomic_save(self.boundary, self.resume_file,
                     os.path.join(self.cfg.out, RESUME_PREVIOUS))
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

    def save(self, path: str) -> None:
        """Weights plus the variant (or the variants: any game then) and the run's settings."""
        cfg = self.cfg
        played: dict[str, Any] = (
            {"variants": sorted(set(variant_list(cfg.variants)))} if cfg.variants
            else {"num_players": cfg.num_players, "mode": cfg.mode})
        save_net(self.net, path, played | {"seconds": round(self.elapsed(), 1),
                                           "samples": self.steps, "config": asdict(cfg)})

    def played(self) -> list[GameConfig]:
        """The games the run draws from: one per name of ``variants`` (repeats kept), or
        ``num_players`` and ``mode`` when the list is empty."""
        cfg = self.cfg
        if not cfg.variants:
            return [GameConfig(num_players=cfg.num_players, mode=cfg.mode)]
        return [variant_config(name) for name in variant_list(cfg.variants)]

    def variant(self) -> GameConfig:
        """The game of the next iteration: one of ``played()`` drawn from the run's generator
        (no draw when ``variants`` is empty)."""
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
        """Play ``len(roles)`` fresh games of ``config`` (seeds from the run's generator), in
        the pool's processes when there is one (``keep``: they keep their rows for a split
        update); batched in the core on the core backend."""
        cfg = self.cfg
        if self.pool is None:
            return play_share(game_seeds(len(roles), self.rng), roles, nets, self.rng, config,
                              cfg.backend, self.encoder, record=record,
                              label_greedy=label_greedy, margin_coef=cfg.margin_coef)
        return self.pool.play(game_seeds(len(roles), self.rng), roles, nets, self.rng,
                              config=config, record=record, label_greedy=label_greedy,
                              margin_coef=cfg.margin_coef, keep=keep)

    @contextmanager
    def _update_threads(self, split: bool = False) -> Iterator[None]:
        """Torch threads for an update: the play workers are idle meanwhile, unless they
        take part in it (``split``)."""
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
                stats = imitation_step(self.net, opt, batch, cfg.bc_epochs, cfg.minibatch,
                                       self.rng)
            self._finish("imitation", len(batch), stats)

    def ppo(self, seconds: float = math.inf, iterations: int | None = None) -> None:
        """Phase 2: PPO against Greedy, itself and snapshots for ``seconds`` more or
        ``iterations`` more."""
        cfg = self.cfg
        opt = self._phase_optimizer("ppo")
        for _ in self._until("ppo", seconds, iterations):
            t0 = time.perf_counter()
            nets: dict[str, torch.nn.Module] = {LEARNER: self.net}
            nets.update({f"snapshot{i}": s for i, s in enumerate(self.snapshots)})
            nets.update({f"league{i}": net for i, (net, _) in enumerate(self.league)})
            split = (self.pool is not None and cfg.split_updates
                     and cfg.variants_per_iteration == 1)
            self.net.eval()
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
        """Freeze a copy of the learner when the PPO iteration ending now makes the run's
        iteration count (imitation included) a multiple of ``snapshot_every``."""
        if (self.iteration + 1) % self.cfg.snapshot_every == 0:
            frozen = RanchNet(self.net.config)
            frozen.load_state_dict(self.net.state_dict())
            frozen.eval()
            self.snapshots = [*self.snapshots, frozen][-self.cfg.max_snapshots:]

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
        """Seconds and iterations left to ``phase`` under the run's settings (None: no
        iteration limit)."""
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
        """The recipe from the current phase to its end (see the module docstring)."""
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


def train(cfg: FastConfig, state: dict[str, Any] | None = None, *, quiet: bool = False,
          on_iteration: Callable[[Runner], None] | None = None) -> RanchNet:
    """Run the whole recipe (or the rest of a saved run); writes ``final.pt`` and returns the
    network. On KeyboardInterrupt the workers stop, ``resume.pt`` gets the state at the end of
    the last finished iteration, and the interrupt goes on to the caller."""
    progress = None if quiet else Progress(cfg)
    with Runner(cfg, state, progress=progress, on_iteration=on_iteration) as runner:
        try:
            runner.run()
        except KeyboardInterrupt:
            runner.write_resume()  # then leaving the block stops the workers
            raise
    return runner.net


def _command() -> str:
    """How this program was started, for the line that says how to continue."""
    if os.path.basename(sys.argv[0]) == PROG:
        return PROG
    return "python -m moonriver_env.training.fast.train"


def build_parser() -> argparse.ArgumentParser:
    """The CLI: one flag per FastConfig setting, plus --config, --resume, --quiet, --debug."""
    parser = ArgumentParser(
        prog=PROG, description=__doc__.splitlines()[0],
        epilog="Progress: one line per iteration (at most one per "
               f"{PROGRESS_SECONDS:g} s within a phase). Ctrl-C stops the run and saves it; "
               f"{PROG} --resume RUN_DIR continues it. Run directory: config.json, log.jsonl, "
               "checkpoints/, after_imitation.pt, final.pt, agent.npz, resume.pt, "
               "resume.prev.pt.")
    parser.add_argument("--config", metavar="FILE",
                        help="TOML file of settings; flags override it (default: none, the "
                             "built-in defaults, which are training/configs/fast_4p_base.toml)")
    parser.add_argument("--resume", metavar="RUN_DIR",
                        help="continue the run saved in RUN_DIR (its resume.pt): settings, "
                             "weights, optimiser, snapshots, generator, elapsed time and phase; "
                             "--config and flags may change budgets and rates, not "
                             f"{', '.join(LOCKED_ON_RESUME)} (default: none, a new run)")
    parser.add_argument("--quiet", action="store_true",
                        help="print no progress lines (default: off: one line per iteration, "
                             f"at most one per {PROGRESS_SECONDS:g} s within a phase)")
    parser.add_argument("--debug", action="store_true",
                        help="on an error, show the full traceback instead of one line "
                             "(default: off)")
    for f in fields(FastConfig):
        flag = "--" + f.name.replace("_", "-")
        help_text = f"{SETTINGS[f.name]} (default: {_shown(f.default)})".replace("%", "%%")
        if str(f.type) == "tuple[str, ...]":
            parser.add_argument(flag, dest=f.name, nargs="+", default=None, help=help_text,
                                metavar="NAME")
            continue
        if str(f.type) == "bool":
            parser.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction,
                                default=None, help=help_text)
            continue
        kind = {"int": int, "float": float}.get(str(f.type), str)
        metavar = {"int": "N", "float": "X"}.get(str(f.type), {"out": "DIR", "init": "FILE"}
                                                  .get(f.name, f.name.upper()))
        parser.add_argument(flag, dest=f.name, type=kind, default=None, help=help_text,
                            metavar=metavar)
    return parser


def _budget(cfg: FastConfig) -> str:
    """The run's budget in words: total, imitation's limit, evaluation."""
    total = " or ".join(part for part in (
        f"{cfg.minutes:g} min" if cfg.minutes else "",
        f"{cfg.ppo_iterations} PPO iterations" if cfg.ppo_iterations else "") if part)
    limits = " or ".join(part for part in (
        f"{cfg.bc_minutes:g} min" if cfg.bc_minutes else "",
        f"{cfg.bc_iterations} iterations" if cfg.bc_iterations else "") if part)
    imitation = f"imitation up to {limits}, then PPO" if limits else "no imitation, PPO only"
    evaluation = (f"evaluation {cfg.eval_games} games vs Greedy" if cfg.eval_games
                  else "no evaluation")
    return f"{total} in all; {imitation}; {evaluation}"


def _games(cfg: FastConfig) -> str:
    """The games a run plays, in words."""
    if not cfg.variants:
        return f"{cfg.num_players}-player {cfg.mode} game"
    names = variant_list(cfg.variants)
    return (f"{len(set(names))} variants, {cfg.variants_per_iteration} drawn per PPO iteration "
            f"(one per imitation iteration) from {' '.join(names)} (evaluation: "
            f"{cfg.num_players}-player {cfg.mode})")


def summary(cfg: FastConfig) -> str:
    """The few lines a run opens with: variant, budget, device, network, output."""
    processes = (f"{cfg.workers} play processes" if cfg.workers > 1
                 else "1 play process") + f" x {cfg.torch_threads} torch thread"
    split = (", split PPO updates" if cfg.split_updates and cfg.workers > 1
             and cfg.variants_per_iteration == 1 else "")
    prior = "on" if cfg.use_prior else "off"
    start = f", from {cfg.init}" if cfg.init else ""
    critic = f", value layer {cfg.critic_hidden}" if cfg.critic_hidden else ""
    league = (f", league {' '.join(cfg.league)} (p_league {cfg.p_league:g})"
              if cfg.p_league else "")
    return "\n".join([
        f"{PROG}: {_games(cfg)}, seed {cfg.seed}",
        f"  budget:   {_budget(cfg)}",
        f"  device:   CPU, {processes}{'s' if cfg.torch_threads > 1 else ''}, {cfg.backend} "
        f"backend{split}",
        f"  settings: {cfg.games * cfg.variants_per_iteration} games/iteration, "
        f"lr {cfg.learning_rate:g}, net "
        f"{cfg.channels}/{cfg.opponent_channels} channels x {cfg.hidden} hidden{critic}, "
        f"Greedy prior {prior}{start}{league}",
        f"  output:   {cfg.out} (every setting: {os.path.join(cfg.out, CONFIG_FILE)})"])


def eval_command(cfg: FastConfig) -> str:
    """The moonriver-eval command that measures a run's agent against Greedy."""
    agent = os.path.join(cfg.out, AGENT_FILE)
    mode = f" --mode {cfg.mode}" if cfg.mode != "base" else ""
    return (f"moonriver-eval --agents {shlex.quote('pretrained:' + agent)}"
            f"{' greedy' * (cfg.num_players - 1)} "
            f"--players {cfg.num_players}{mode} --games 1000 --seed {TRAINING_SEEDS} "
            f"--workers 2")


def _resumed_config(state: dict[str, Any], run: str, config_path: str | None,
                   overrides: dict[str, Any]) -> FastConfig:
    """A saved run's settings, its directory as ``out``, then the file and flags; settings
    that fix the network or the draws must not change."""
    # a run saved before a setting existed ran with its default
    before = {**asdict(FastConfig()), **state["config"]}
    base = {**before, "out": os.path.dirname(_resume_path(run)) or "."}
    cfg = FastConfig.load(config_path, overrides, base=base)
    changed = [name for name in LOCKED_ON_RESUME if getattr(cfg, name) != before[name]]
    if changed:
        saved = ", ".join(f"{name}={before[name]!r}" for name in changed)
        raise CLIError(f"a resumed run keeps its {saved}; only budgets, rates and the like "
                       f"may change")
    if state["phase"] == "done":
        raise CLIError(f"the run in {run!r} has finished; its agent is "
                       f"{os.path.join(cfg.out, AGENT_FILE)} (network: "
                       f"{os.path.join(cfg.out, 'final.pt')})")
    return cfg


@cli_main(PROG)
def main(argv: list[str] | None = None) -> int:
    """CLI entry point (``moonriver-train-fast``)."""
    args = vars(build_parser().parse_args(argv))
    config_path, run, quiet = args.pop("config"), args.pop("resume"), args.pop("quiet")
    args.pop("debug")
    state = load_resume(run) if run else None
    if state is None:
        cfg = FastConfig.load(config_path, args)
        _check_fresh(cfg.out)
    else:
        cfg = _resumed_config(state, run, config_path, args)
        print(f"resuming {run} at iteration {state['iteration']} ({state['phase']}, "
              f"{state['seconds'] / 60:.1f} min)", flush=True)
    print(summary(cfg), flush=True)
    try:
        train(cfg, state, quiet=quiet)
    except KeyboardInterrupt:
        if not os.path.isfile(os.path.join(cfg.out, RESUME_FILE)):
            print(f"{PROG}: interrupted before the run started; nothing was saved",
                  file=sys.stderr)
            return 130
        saved = None
        with contextlib.suppress(Exception):
            saved = load_resume(cfg.out, report=lambda line: None)
        where = (f" at iteration {saved['iteration']} ({saved['phase']}, "
                 f"{saved['seconds'] / 60:.1f} min)" if saved else "")
        print(f"{PROG}: interrupted; saved{where}; continue with: {_command()} --resume "
              f"{cfg.out}", file=sys.stderr)
        return 130
    print(f"saved the network {os.path.join(cfg.out, 'final.pt')} and the agent "
          f"{os.path.join(cfg.out, AGENT_FILE)}", flush=True)
    print(f"measure it: {eval_command(cfg)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
