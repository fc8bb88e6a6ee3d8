"""``moonriver-train-az``: one policy-value network for every variant, trained by search.

See docs/training.md (the search recipe)."""

from __future__ import annotations

import copy
import functools
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from moonriver_env.agents.az import absolute_shares, seat_mask
from moonriver_env.agents.pretrained import MAX_VALUE_WIDTH, MAX_VARIANT_RANK
from moonriver_env.training import atomic
from moonriver_env.training.az import network, selfplay
from moonriver_env.training.az.network import AZNet, source_sizes, warm_start
from moonriver_env.training.az.tables import TableSearch
from moonriver_env.training.policy_net import NetConfig
from moonriver_env.training.settings import load_settings
from moonriver_env.training.variants import variant_config, variant_list

from moonriver_env.common.cli import ArgumentParser, CLIError, add_debug_flag, cli_main
from moonriver_env.common.cli import sigint_deferred as deferred_interrupt
from moonriver_env.moonriver.core import Game
from moonriver_env.moonriver.search import BatchedSearch, LeafBatch

FORMAT = "moonriver-az-resume/1"
RESUME_FILE, RESUME_PREVIOUS, WEIGHTS_FILE = "resume.pt", "resume.prev.pt", "az.npz"
LOG_FILE = "log.jsonl"  # one JSON line per iteration
# Settings that fix the network or the run's draws: a resumed run keeps them.
FIXED = ("seed", "variants", "games", "simulations", "max_considered", "c_visit", "c_scale",
         "gumbel_scale", "buffer", "batch_size", "updates", "channels", "opponent_channels",
         "hidden", "value_hidden", "variant_film", "variant_rank", "prior",
         "value_warmup", "hold_policy", "freeze_policy", "warm_start", "leaves", "target",
         "expert", "rollout_weight", "rollout_depth", "rollout_temperature", "table_search",
         "target_searches", "anchor", "variant_learning_rate", "greedy_seats")
LEAVES = ("auto", "torch", "core")  # who values the search's leaves (auto: core on the CPU)
# the policy's target: the search's improved policy, its choice, or the choice all
# target_searches searches agree on (rows where they differ teach no policy)
TARGETS = ("improved", "action", "steady")
MAX_TARGET_SEARCHES = 16  # searches of each decision (their targets averaged, or steady)


@dataclass(frozen=True)
class AZConfig:
    """The recipe's settings (``training/configs/az_all.toml`` documents each)."""

    seed: int = 0
    out: str = "runs/az"
    variants: tuple[str, ...] = ("all",)
    games: int = 32
    simulations: int = 32
    max_considered: int = 16
    c_visit: float = 50.0
    c_scale: float = 1.0
    gumbel_scale: float = 1.0
    rollout_weight: float = 0.0
    rollout_depth: int = 0
    rollout_temperature: float = 10.0
    table_search: bool = False
    iterations: int = 0
    minutes: float = 0.0
    buffer: int = 8192
    batch_size: int = 256
    updates: int = 16
    learning_rate: float = 1e-3
    weight_decay: float = 1e-4
    value_coef: float = 1.0
    margin_coef: float = 0.1
    channels: int = 32
    opponent_channels: int = 16
    hidden: int = 128
    value_hidden: int = 0
    variant_film: bool = False
    variant_rank: int = 0
    variant_learning_rate: float = 0.0
    prior: bool = True
    value_warmup: int = 0
    hold_policy: bool = False
    freeze_policy: bool = False
    search_threads: int = 1
    leaves: str = "auto"
    target: str = "improved"
    target_searches: int = 1
    anchor: float = 0.0
    greedy_seats: float = 0.0
    expert: str = ""
    warm_start: str = ""
    checkpoint_every: int = 1
    torch_threads: int = 1
    device: str = "auto"

    @classmethod
    def load(cls, path: str | None, overrides: dict[str, Any],
             base: dict[str, Any] | None = None) -> AZConfig:
        """``base`` (else the defaults), then a ``.toml``/``.json`` file, then the overrides."""
        try:
            cfg = cls(**load_settings(cls, path, overrides, base))
        except OSError as exc:
            raise CLIError(f"cannot read config {path!r}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        cfg.validate()
        return cfg

    def validate(self) -> None:
        """Every setting checked; the message says what is allowed."""
        checks = [
            (self.games >= 1 and self.simulations >= 1 and self.max_considered >= 1,
             "games, simulations and max_considered must be >= 1"),
            (self.iterations >= 0 and self.minutes >= 0, "iterations and minutes must be >= 0"),
            (math.isfinite(self.c_visit) and math.isfinite(self.c_scale) and self.c_visit >= 0
             and self.c_scale > 0, "c_visit must be finite and >= 0, c_scale finite and > 0"),
            (math.isfinite(self.gumbel_scale) and self.gumbel_scale >= 0,
             "gumbel_scale must be finite and >= 0 (0: no noise at the root)"),
            (math.isfinite(self.rollout_weight) and 0 <= self.rollout_weight <= 1
             and 0 <= self.rollout_depth <= 2**31 - 1
             and math.isfinite(self.rollout_temperature) and self.rollout_temperature >= 1e-3,
             "rollout_weight must be within [0, 1], rollout_depth 0 to 2**31 - 1 (decisions; "
             "0: to the end), rollout_temperature finite and >= 0.001 (points)"),
            (self.iterations > 0 or self.minutes > 0,
             "set iterations or minutes (both 0 would never stop)"),
            (1 <= self.batch_size <= self.buffer, "need 1 <= batch_size <= buffer"),
            (self.updates >= 0 and self.value_warmup >= 0 and self.checkpoint_every >= 1
             and self.torch_threads >= 1 and self.search_threads >= 1,
             "updates and value_warmup must be >= 0; checkpoint_every, torch_threads and "
             "search_threads >= 1"),
            (math.isfinite(self.variant_learning_rate) and self.variant_learning_rate >= 0
             and (self.variant_film or self.variant_rank or self.variant_learning_rate == 0),
             "variant_learning_rate must be finite and >= 0 (0: learning_rate), and needs "
             "variant_film = true or variant_rank > 0"),
            (0 <= self.variant_rank <= MAX_VARIANT_RANK,
             f"variant_rank must be 0 to {MAX_VARIANT_RANK}"),
            (self.learning_rate > 0 and self.weight_decay >= 0 and self.value_coef >= 0
             and self.margin_coef >= 0 and math.isfinite(self.anchor) and self.anchor >= 0,
             "learning_rate must be > 0; weight_decay, value_coef and margin_coef >= 0; "
             "anchor finite and >= 0"),
            (0.0 <= self.greedy_seats <= 1.0,
             f"greedy_seats is a chance: 0 to 1 (got {self.greedy_seats})"),
            (self.anchor == 0 or not (self.freeze_policy or self.hold_policy),
             "anchor pulls a learning policy toward the starting one: set anchor = 0 with "
             "freeze_policy (the policy does not learn) or hold_policy (its target is already "
             "the starting policy)"),
            (min(self.channels, self.opponent_channels, self.hidden) >= 1
             and 0 <= self.value_hidden <= MAX_VALUE_WIDTH,
             f"channels, opponent_channels and hidden must be >= 1, value_hidden 0 to "
             f"{MAX_VALUE_WIDTH}"),
            (self.device in ("auto", "cpu", "cuda"), "device must be auto, cpu or cuda"),
            (self.leaves in LEAVES, f"leaves must be one of {', '.join(LEAVES)}"),
            (self.target in TARGETS, f"target must be one of {', '.join(TARGETS)}"),
            (1 <= self.target_searches <= MAX_TARGET_SEARCHES,
             f"target_searches must be 1 to {MAX_TARGET_SEARCHES}"),
            (self.target != "steady" or (self.target_searches >= 2 and self.value_warmup == 0),
             "target = \"steady\" needs target_searches >= 2 (the searches that must agree) "
             "and value_warmup = 0 (the warm-up searches each decision once)"),
        ]
        for ok, message in checks:
            if not ok:
                raise CLIError(message)
        try:
            variant_list(self.variants)
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        if self.expert and not network.is_az_file(self.expert):
            raise CLIError(f"expert {self.expert!r}: not an az.npz of this recipe (a file "
                           f"moonriver-train-az wrote; its search plays and sets the targets)")
        if self.warm_start and not os.path.isfile(self.warm_start):
            raise CLIError(f"warm_start {self.warm_start!r}: no such file (a "
                           f"moonriver-train-fast .pt checkpoint or exported .npz)")


def pick_device(name: str) -> torch.device:
    """``auto``: CUDA when a GPU is present, else the CPU; ``cuda`` without one is refused."""
    if name == "cuda" and not torch.cuda.is_available():
        raise CLIError("--device cuda: no CUDA GPU is available (use auto or cpu)")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


class ReplayBuffer:
    """The newest ``capacity`` decisions (a ring); policies kept as float16."""

    def __init__(self, capacity: int) -> None:
        empty = selfplay.Samples.empty()
        self.capacity, self.size, self.next = capacity, 0, 0
        self.arrays = {k: np.zeros((capacity, *v.shape[1:]), np.float16 if k == "policy"
                                   else v.dtype) for k, v in vars(empty).items()}

    def add(self, samples: selfplay.Samples) -> None:
        """Append decisions, overwriting the oldest once full."""
        n = len(samples)
        for start in range(0, n, self.capacity):  # more than the capacity: the newest stay
            part = slice(start, min(n, start + self.capacity))
            rows = (self.next + np.arange(part.stop - part.start)) % self.capacity
            for key, values in vars(samples).items():
                self.arrays[key][rows] = values[part]
            self.next = int((rows[-1] + 1) % self.capacity)
            self.size = min(self.capacity, self.size + len(rows))

    def batch(self, rng: np.random.Generator, size: int) -> dict[str, np.ndarray]:
        """``size`` decisions drawn uniformly (with replacement)."""
        idx = rng.integers(self.size, size=size)
        return {k: v[idx] for k, v in self.arrays.items()}

    def state(self) -> dict[str, Any]:
        """The filled part, as tensors (for ``torch.save``)."""
        return {"next": self.next, "size": self.size,
                "arrays": {k: torch.from_numpy(v[:self.size].copy())
                           for k, v in self.arrays.items()}}

    def restore(self, state: dict[str, Any]) -> None:
        """Refill from ``state``."""
        self.size, self.next = int(state["size"]), int(state["next"])
        for k, v in state["arrays"].items():
            self.arrays[k][:self.size] = v.numpy()


def head_inputs(net: AZNet, batch: dict[str, np.ndarray],
                device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                               torch.Tensor | None]:
    """``net.heads``'s arguments for a batch of recorded decisions (``Samples``' fields)."""
    def t(key: str) -> torch.Tensor:
        return torch.from_numpy(batch[key]).to(device)

    return (t("obs"), t("mask").bool(), t("num_players"), t("prior") if net.uses_prior else None)


def policy_cross_entropy(target: torch.Tensor, logp: torch.Tensor) -> torch.Tensor:
    """Each row's cross-entropy from the masked log-policy to its target (0 where it is 0)."""
    return -(target * logp.masked_fill(target == 0, 0.0)).sum(1)


def losses(net: AZNet, batch: dict[str, np.ndarray], device: torch.device,
           cfg: AZConfig, teacher: AZNet | None = None,
           start: AZNet | None = None) -> tuple[torch.Tensor, dict[str, float]]:
    """A minibatch's loss (policy, value, margin and anchor to ``start``) and its parts."""
    def t(key: str) -> torch.Tensor:
        return torch.from_numpy(batch[key]).to(device)

    inputs = head_inputs(net, batch, device)
    logp, logv, margin = net.heads(*inputs)
    if teacher is None:
        target = t("policy").float()
    else:
        with torch.no_grad():
            target = teacher.heads(*inputs)[0].exp()
    # averaged over the rows with a target (target = "steady" leaves some without one)
    policy = (policy_cross_entropy(target, logp).sum()
              / (target.sum(1) > 0).sum().clamp(min=1))
    value = -(t("outcome") * logv).sum(1).mean()
    seats = torch.from_numpy(seat_mask(batch["num_players"])).to(device)
    err = (margin - t("margin") / network.MARGIN_SCALE).masked_fill(~seats, 0.0)
    margin_loss = (err * err).sum(1).mean()
    total = policy + cfg.value_coef * value + cfg.margin_coef * margin_loss
    parts = {"policy": policy.item(), "value": value.item(), "margin": margin_loss.item()}
    if start is not None and cfg.anchor > 0:  # every row's pull toward the starting policy
        if start is teacher:  # the warm-up's target is that policy already
            held = target
        else:
            with torch.no_grad():
                held = start.heads(*inputs)[0].exp()
        anchor = policy_cross_entropy(held, logp).mean()
        total = total + cfg.anchor * anchor
        parts["anchor"] = anchor.item()
    return total, parts


def network_evaluator(net: AZNet, device: torch.device) -> selfplay.Evaluate:
    """Leaves -> (logits, win shares by player id) from the torch network, in one call."""
    @torch.inference_mode()
    def evaluate(leaves: LeafBatch) -> tuple[np.ndarray, np.ndarray]:
        prior = None if leaves.prior is None else torch.from_numpy(leaves.prior).to(device)
        logp, logv, _ = net.heads(torch.from_numpy(leaves.observation).to(device),
                                  torch.from_numpy(leaves.mask).to(device).bool(),
                                  torch.from_numpy(np.asarray(leaves.num_players)), prior)
        shares = absolute_shares(logv.exp().cpu().numpy(), leaves.seat, leaves.num_players)
        return logp.cpu().numpy().astype(np.float32), shares.astype(np.float32)

    return evaluate


def leaf_kind(leaves: str, device: torch.device) -> str:
    """``leaves`` resolved: ``"auto"`` is ``"core"`` on the CPU (faster there), else ``"torch"``."""
    if leaves == "auto":
        return "core" if device.type == "cpu" else "torch"
    return leaves


def leaf_evaluator(cfg: AZConfig, net: AZNet,
                   device: torch.device) -> selfplay.Evaluate | selfplay.CoreLeaves:
    """Who values the self-play's leaves: ``net`` (or the ``expert``) in torch or in the core."""
    kind = leaf_kind(cfg.leaves, device)
    if cfg.expert:
        return expert_evaluator(cfg.expert, kind, device)
    if kind == "core":
        return selfplay.CoreLeaves(network.core_network(net))
    return network_evaluator(net, device)


@functools.cache
def expert_evaluator(path: str, leaves: str,
                     device: torch.device) -> selfplay.Evaluate | selfplay.CoreLeaves:
    """The leaf evaluator of an ``expert`` file's fixed network (made once per process)."""
    if leaves == "core":
        from moonriver_env.agents.az import cached_az

        return selfplay.CoreLeaves(cached_az(path)[0].core)
    net = network.load_az_net(path).to(device).eval().requires_grad_(False)
    return network_evaluator(net, device)


def search_settings(cfg: AZConfig, simulations: int | None = None,
                    max_considered: int | None = None, playouts: bool = True) -> dict[str, Any]:
    """``BatchedSearch``'s settings: the recipe's (its budget or the one given), its playouts
    unless ``playouts`` is False."""
    from moonriver_env.agents.pretrained import SHAPE_WEIGHT

    return {"simulations": simulations or cfg.simulations, "algorithm": "gumbel",
            "max_considered": max_considered or cfg.max_considered, "c_visit": cfg.c_visit,
            "c_scale": cfg.c_scale, "gumbel_scale": cfg.gumbel_scale,
            "threads": cfg.search_threads, "greedy_prior": SHAPE_WEIGHT if cfg.prior else None,
            "timers": True, "rollout_weight": cfg.rollout_weight if playouts else 0.0,
            "rollout_depth": cfg.rollout_depth, "rollout_temperature": cfg.rollout_temperature}


def batched_search(cfg: AZConfig, simulations: int | None = None,
                   max_considered: int | None = None,
                   playouts: bool = True) -> selfplay.MakeSearch:
    """The core's batched Gumbel search with ``search_settings``; with ``table_search`` (and
    ``playouts``), the search agents' settings added at tables of 3 and 4."""
    from moonriver_env.agents.az import table_search

    settings = search_settings(cfg, simulations, max_considered, playouts)

    def make(games: list[Game], seed: int) -> selfplay.Search:
        if cfg.table_search and playouts:
            return TableSearch(games, seed, settings, table_search)
        return BatchedSearch(games, seed=seed, **settings)

    return make


say = functools.partial(print, flush=True)  # one progress line (a run's log is read while it runs)


def parameter_groups(net: AZNet, variant_learning_rate: float = 0.0) -> list[dict[str, Any]]:
    """The optimiser's groups: the shared weights, the variant layers apart (0: the same rate)."""
    learning = [(n, w) for n, w in net.named_parameters() if w.requires_grad]
    own = [w for n, w in learning if n.startswith("variant_")]
    groups: list[dict[str, Any]] = [
        {"params": [w for n, w in learning if not n.startswith("variant_")]}]
    if own:  # no decay: a variant's layers are pulled toward zero by nothing but its own rows
        groups.append({"params": own, "weight_decay": 0.0}
                      | ({"lr": variant_learning_rate} if variant_learning_rate else {}))
    return groups


class Run:
    """One training run: the network, optimiser, buffer and generator, saved and resumed."""

    def __init__(self, cfg: AZConfig, state: dict[str, Any] | None = None,
                 make_search: selfplay.MakeSearch | None = None,
                 report: Callable[[str], None] = say) -> None:
        self.cfg, self.report = cfg, report
        self.variants = variant_list(cfg.variants)
        self.device = pick_device(cfg.device)
        torch.set_num_threads(cfg.torch_threads)
        torch.manual_seed(cfg.seed)
        self.net = AZNet(NetConfig(channels=cfg.channels, opponent_channels=cfg.opponent_channels,
                                   hidden=cfg.hidden, use_prior=cfg.prior,
                                   variant_film=cfg.variant_film,
                                   variant_rank=cfg.variant_rank),
                         value_hidden=cfg.value_hidden).to(self.device)
        if cfg.warm_start and state is None:
            copied = warm_start(self.net, cfg.warm_start)
            kept = any(k.startswith(network.VALUE_LAYERS) for k in copied)
            report(f"warm start: {len(copied)} weights from {cfg.warm_start}"
                   + ("" if kept else " (not its value layers: they do not fit value_hidden = "
                      f"{cfg.value_hidden}; the value starts anew)"))
        # freeze_policy: the value heads learn alone; else the value warm-up (and hold_policy
        # throughout) holds the policy to a frozen copy of the starting network's, and
        # anchor pulls it toward that copy
        self.teacher: AZNet | None = None
        if cfg.freeze_policy:
            for name, weight in self.net.named_parameters():
                weight.requires_grad_(name.startswith(network.VALUE_LAYERS))
        elif cfg.value_warmup > 0 or cfg.hold_policy or cfg.anchor > 0:
            self.teacher = copy.deepcopy(self.net).eval().requires_grad_(False)
        self.opt = torch.optim.AdamW(parameter_groups(self.net, cfg.variant_learning_rate),
                                     lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
        self.buffer = ReplayBuffer(cfg.buffer)
        self.rng = np.random.default_rng([cfg.seed, 1])  # minibatch draws
        self.iteration, self.samples, self.seconds = 0, 0, 0.0
        if state is not None:
            self._restore(state)
            atomic.trim_log(os.path.join(self.cfg.out, LOG_FILE), self.iteration)
        self.make_search = make_search or batched_search(cfg)
        # value warm-up: one simulation over one sampled root action (Gumbel-max), i.e. a
        # draw from the network's policy, while the value learns through the whole trunk and
        # the policy is held to the starting network's (so no playouts either)
        self.warmup_search = make_search or batched_search(cfg, 1, 1, playouts=False)
        self.started = time.monotonic() - self.seconds
        atomic.remove_partials(cfg.out)  # what a killed run's writes left

    def _restore(self, state: dict[str, Any]) -> None:
        self.net.load_state_dict(state["net"])
        if self.teacher is not None and "teacher" in state:
            self.teacher.load_state_dict(state["teacher"])
        self.opt.load_state_dict(state["opt"])
        self.buffer.restore(state["buffer"])
        self.rng.bit_generator.state = json.loads(state["rng"])
        self.iteration, self.samples = int(state["iteration"]), int(state["samples"])
        self.seconds = float(state["seconds"])

    def state(self) -> dict[str, Any]:
        """Everything a resumed run needs."""
        return {"format": FORMAT, "config": asdict(self.cfg), "iteration": self.iteration,
                "samples": self.samples, "seconds": self.elapsed(),
                "net": self.net.state_dict(), "opt": self.opt.state_dict(),
                **({"teacher": self.teacher.state_dict()}
                   if self.teacher is not None and self.keeps_teacher() else {}),
                "buffer": self.buffer.state(), "rng": json.dumps(self.rng.bit_generator.state)}

    def elapsed(self) -> float:
        """Seconds of training so far (earlier sessions of a resumed run included)."""
        return time.monotonic() - self.started

    def save(self) -> str:
        """``resume.pt`` (the one it replaces kept as ``resume.prev.pt``) and ``az.npz``."""
        os.makedirs(self.cfg.out, exist_ok=True)
        path = os.path.join(self.cfg.out, RESUME_FILE)
        if os.path.isfile(path):
            atomic.keep_copy(path, os.path.join(self.cfg.out, RESUME_PREVIOUS))
        state = self.state()
        atomic.atomic_save(path, lambda fh: torch.save(state, fh))
        network.export_npz(self.net, os.path.join(self.cfg.out, WEIGHTS_FILE),
                           {"recipe": asdict(self.cfg), "iteration": self.iteration,
                            "samples": self.samples, "variants": list(self.variants)})
        return path

    def done(self) -> bool:
        """Whether the iteration or time limit is reached."""
        cfg = self.cfg
        return ((cfg.iterations > 0 and self.iteration >= cfg.iterations)
                or (cfg.minutes > 0 and self.elapsed() >= 60 * cfg.minutes))

    def step(self) -> str:
        """One iteration (self-play, then updates); returns its progress line."""
        t0 = time.monotonic()
        play_rng = np.random.default_rng([self.cfg.seed, 0, self.iteration])
        games = selfplay.new_games(self.variants, self.cfg.games, play_rng)
        greedy = selfplay.greedy_seats(games, self.cfg.greedy_seats, play_rng)
        self.net.eval()
        warmup = self.in_warmup()
        samples, stats = selfplay.play(games, leaf_evaluator(self.cfg, self.net, self.device),
                                       self.warmup_search if warmup else self.make_search,
                                       play_rng, prior=self.cfg.prior, target=self.cfg.target,
                                       searches=1 if warmup else self.cfg.target_searches,
                                       greedy=greedy)
        t_play = time.monotonic() - t0
        with deferred_interrupt():
            self.buffer.add(samples)
            t1 = time.monotonic()
            loss = self._train(self.teacher if self.holds_policy() else None)
            stats.seconds["update"] = time.monotonic() - t1
            self.iteration += 1
            self.samples += len(samples)
            self.log(stats, loss)
        per_s = max(t_play, 1e-9)
        return (f"iter {self.iteration} | {stats.games} games, {stats.decisions} decisions "
                f"({stats.decisions / per_s:.0f}/s), {stats.leaves} leaves "
                f"({stats.leaves / per_s:.0f}/s) | loss policy {loss['policy']:.3f} value "
                f"{loss['value']:.3f} margin {loss['margin']:.3f}"
                + (f" anchor {loss['anchor']:.3f}" if "anchor" in loss else "")
                + f" | buffer {self.buffer.size} | "
                f"{self.elapsed():.0f}s | time: {selfplay.phase_line(stats.seconds)}")

    def log(self, stats: selfplay.PlayStats, loss: dict[str, float]) -> None:
        """One line of ``log.jsonl`` for the iteration just ended."""
        os.makedirs(self.cfg.out, exist_ok=True)
        line = {"iteration": self.iteration, "games": stats.games, "decisions": stats.decisions,
                "leaves": stats.leaves, "network_calls": stats.steps,
                "loss": {k: None if math.isnan(v) else round(v, 5) for k, v in loss.items()},
                "seconds": {k: round(v, 4) for k, v in stats.seconds.items()}}
        with open(os.path.join(self.cfg.out, LOG_FILE), "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")

    def in_warmup(self) -> bool:
        """Whether the next iteration is one of the value warm-up's."""
        return self.iteration < self.cfg.value_warmup

    def holds_policy(self) -> bool:
        """Whether the next iteration's policy target is the frozen starting network's."""
        return self.cfg.hold_policy or self.in_warmup()

    def keeps_teacher(self) -> bool:
        """Whether the frozen starting network is still needed (held policy or anchor)."""
        return self.holds_policy() or self.cfg.anchor > 0

    def _train(self, teacher: AZNet | None) -> dict[str, float]:
        """``updates`` minibatch steps from the buffer; returns the mean losses."""
        totals = {"policy": math.nan, "value": math.nan, "margin": math.nan,
                  **({"anchor": math.nan} if self.cfg.anchor > 0 else {})}
        if self.buffer.size < self.cfg.batch_size:
            return totals
        self.net.train()
        sums = dict.fromkeys(totals, 0.0)
        for _ in range(self.cfg.updates):
            loss, parts = losses(self.net, self.buffer.batch(self.rng, self.cfg.batch_size),
                                 self.device, self.cfg, teacher, self.teacher)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            for k, v in parts.items():
                sums[k] += v / self.cfg.updates
        return sums if self.cfg.updates else totals

    def train(self) -> int:
        """Iterate until done; Ctrl-C saves the last finished iteration. Exit status."""
        try:
            while not self.done():
                self.report(self.step())
                if self.iteration % self.cfg.checkpoint_every == 0:
                    self.save()
        except KeyboardInterrupt:
            path = self.save()
            self.report(f"interrupted: saved iteration {self.iteration} to {path}; continue "
                        f"with moonriver-train-az --resume {self.cfg.out}")
            return 130
        self.save()
        self.report(f"done: {self.iteration} iterations, {self.samples} decisions, "
                    f"{self.elapsed():.0f}s; weights {os.path.join(self.cfg.out, WEIGHTS_FILE)}"
                    f" (measure them: {self.eval_command()})")
        return 0

    def eval_command(self) -> str:
        """The moonriver-eval command for the weights in the first variant of the run."""
        config = variant_config(self.variants[0])
        n = config.num_players
        where = f" --mode legends --scenario {config.scenario}" if config.scenario else ""
        return (f"moonriver-eval --agents az:{os.path.join(self.cfg.out, WEIGHTS_FILE)} "
                f"{' '.join(['greedy'] * (n - 1))} --players {n}{where} --games 1000")


def load_resume(run: str, report: Callable[[str], None] = say) -> dict[str, Any]:
    """A run's saved state: ``resume.pt``, else ``resume.prev.pt`` (one line says why)."""
    paths = [os.path.join(run, RESUME_FILE), os.path.join(run, RESUME_PREVIOUS)]
    problems = []
    for path in paths:
        if not os.path.isfile(path):
            problems.append(f"{path}: no such file")
            continue
        try:
            state = atomic.load_checked(path)
        except atomic.ChecksumError as exc:  # damaged: try the previous one
            problems.append(str(exc))
            continue
        except Exception as exc:  # any unreadable file: try the previous one
            problems.append(f"{path}: not readable ({atomic.first_line(exc, 80)})")
            continue
        if isinstance(state, dict) and state.get("format") == FORMAT:
            if problems:
                report(f"moonriver-train-az: warning: skipped {problems[-1]}; resuming from "
                       f"{path}")
            return state
        problems.append(f"{path}: not a moonriver-train-az resume state")
    raise CLIError(f"cannot resume {run!r}: {'; '.join(problems)}")


def build_parser() -> ArgumentParser:
    """The command line: a config file, a run directory or one to resume, overrides."""
    p = ArgumentParser(prog="moonriver-train-az", description=__doc__.split("\n")[0])
    p.add_argument("--config", help="TOML file of settings (training/configs/az_all.toml)")
    p.add_argument("--out", help="run directory (default runs/az)")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue the run saved in RUN_DIR")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), help="default auto")
    p.add_argument("--seed", type=int)
    p.add_argument("--iterations", type=int, help="stop after this many iterations in all")
    p.add_argument("--minutes", type=float, help="stop after this many minutes in all")
    p.add_argument("--games", type=int, help="games played together per iteration")
    p.add_argument("--simulations", type=int, help="search simulations per decision")
    p.add_argument("--variants", nargs="+", metavar="NAME",
                   help="the variants whose games it plays (default: the config's; all: every "
                   "variant)")
    p.add_argument("--warm-start", dest="warm_start",
                   help="the PPO recipe's weights (.pt checkpoint or exported .npz)")
    p.add_argument("--expert", help="an az.npz whose fixed network values the search's leaves "
                   "and so sets the targets (default: the network being trained)")
    p.add_argument("--leaves", help="who values the search's leaves: torch (every step's "
                   "leaves in one batch on --device), core (a C++ copy of the network, inside "
                   "the core; CPU) or auto (default: core on the CPU, torch on a GPU)")
    add_debug_flag(p)
    return p


@cli_main("moonriver-train-az")
def main(argv: list[str] | None = None) -> int:
    """Train (or resume) a run; one line per iteration."""
    args = build_parser().parse_args(argv)
    overrides = {k: getattr(args, k) for k in ("out", "device", "seed", "iterations",
                                               "minutes", "games", "simulations",
                                               "variants", "warm_start", "expert", "leaves")}
    if args.variants:  # the saved config holds them as a tuple
        overrides["variants"] = tuple(args.variants)
    state = load_resume(args.resume) if args.resume else None
    if state is not None:
        base = dict(state["config"]) | {"out": args.resume}
        fixed = [k for k in FIXED if overrides.get(k) is not None
                 and overrides[k] != base.get(k)]
        if fixed or args.config:
            raise CLIError(f"--resume keeps the run's settings; cannot change "
                           f"{fixed or '--config'} (only iterations, minutes, device)")
        cfg = AZConfig.load(None, overrides | {"out": args.resume}, base=base)
    else:
        cfg = AZConfig.load(args.config, overrides)
        if os.path.exists(os.path.join(cfg.out, RESUME_FILE)):
            raise CLIError(f"{cfg.out} already holds a run: continue it with --resume "
                           f"{cfg.out}, or give another --out")
        if cfg.warm_start:
            cfg = AZConfig.load(None, source_sizes(cfg.warm_start), base=asdict(cfg))
    run = Run(cfg, state)
    print(f"moonriver-train-az: {', '.join(run.variants)} | {cfg.games} games x "
          f"{cfg.simulations} simulations | device {run.device} | out {cfg.out}", flush=True)
    return run.train()


if __name__ == "__main__":
    sys.exit(main())
