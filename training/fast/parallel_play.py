"""Batched play split over processes: one share of the games here, the others in workers.

For a split PPO update the workers keep their shares' rows and send gradient parts."""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
import torch
from moonriver_env.training.fast.losses import LossWeights, Shard, flat_grads, set_params
from moonriver_env.training.fast.rollout import LEARNER, Batch, play, play_batched
from moonriver_env.training.policy_net import NetConfig, RanchNet

from moonriver_env.common.cli import sigint_deferred
from moonriver_env.moonriver.backend import DEFAULT_BACKEND, Encoder, check_backend, make_game
from moonriver_env.moonriver.observation import OBSERVATION_SIZE
from moonriver_env.moonriver.rules import NUM_ACTIONS, GameConfig

_LIST_FIELDS = ("obs", "masks", "actions", "logps", "values", "priors")
_HELD_FIELDS = ("obs", "masks", "priors")  # what a split update leaves where it was played
_JOIN_SECONDS = 5.0


def check_workers(workers: object) -> None:
    """Refuse a ``workers`` setting that is not an integer >= 1."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1 (processes that play the games), "
                         f"got {workers!r}")


def shares(count: int, workers: int) -> list[range]:
    """Contiguous game index ranges of ``workers`` near-equal shares (the first ones larger)."""
    size, extra = divmod(count, workers)  # share w starts after w shares and min(w, extra) extras
    return [range(w * size + min(w, extra), (w + 1) * size + min(w + 1, extra))
            for w in range(workers)]


def _stacked(rows: Any) -> np.ndarray | None:
    if isinstance(rows, np.ndarray):
        return rows if len(rows) else None
    if not rows:
        return None
    return np.stack(rows) if isinstance(rows[0], np.ndarray) else np.asarray(rows)


def pack(batch: Batch, rows: bool = True, legal_priors: bool = True) -> dict[str, Any]:
    """A Batch as a few stacked arrays (cheap to pickle; priors at the legal actions only)."""
    out: dict[str, Any] = {"keys": batch.keys, "returns": batch.returns}
    for name in _LIST_FIELDS:
        out[name] = None if not rows and name in _HELD_FIELDS else _stacked(getattr(batch, name))
    out["legal_priors"] = legal_priors and out["priors"] is not None
    if out["legal_priors"]:
        out["priors"] = out["priors"][out["masks"].astype(bool)]
    return out


def held_rows(batch: Batch) -> dict[str, Any]:
    """A share's observations, masks and priors: what stays where it was played (split update)."""
    obs, masks = _stacked(batch.obs), _stacked(batch.masks)
    return {"obs": np.zeros((0, OBSERVATION_SIZE), np.float32) if obs is None else obs,
            "masks": np.zeros((0, NUM_ACTIONS), np.bool_) if masks is None else masks,
            "priors": _stacked(batch.priors)}


def _held_together(batches: list[Batch]) -> dict[str, Any]:
    """``held_rows`` of several Batches, one after the other."""
    if not batches:
        return held_rows(Batch())
    parts = [held_rows(b) for b in batches]
    return {name: None if parts[0][name] is None else np.concatenate([p[name] for p in parts])
            for name in _HELD_FIELDS}


def merge(parts: list[dict[str, Any]], offsets: list[int]) -> Batch:
    """One Batch of packed shares in order, game indices shifted by each share's offset."""
    batch = Batch()
    for part in parts:
        if part["legal_priors"]:  # back to full rows
            legal = part["masks"].astype(bool)
            rows = np.zeros(legal.shape, np.float32)
            rows[legal] = part["priors"]
            part["priors"] = rows
    for name in _LIST_FIELDS:
        arrays = [part[name] for part in parts if part[name] is not None]
        if arrays:
            setattr(batch, name, np.concatenate(arrays))
    for part, offset in zip(parts, offsets, strict=True):
        batch.keys.extend((i + offset, seat) for i, seat in part["keys"])
        batch.returns.update({(i + offset, seat): r for (i, seat), r in part["returns"].items()})
    return batch


def play_share(seeds: list[int], roles: list[list[str]], nets: Mapping[str, torch.nn.Module],
               rng: np.random.Generator, config: GameConfig, backend: str,
               encoder: Encoder, **kwargs: Any) -> Batch:
    """One process's share of a batch: ``play_batched`` on the core, else ``play``."""
    if backend == "core":
        return play_batched(seeds, roles, nets, rng, config, **kwargs)[0]
    games = [make_game(config, s, backend=backend) for s in seeds]
    return play(games, roles, nets, rng, encoder, **kwargs)


def _weights(net: torch.nn.Module) -> tuple[NetConfig, dict[str, np.ndarray]]:
    if not isinstance(net, RanchNet):
        raise TypeError(f"play processes build RanchNets; got a {type(net).__name__}")
    return net.config, {k: v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()}


def _take_nets(nets: dict[str, RanchNet], job: dict[str, Any]) -> None:
    """Drop the networks ``job`` names gone; load the weights it sends (reusing the modules)."""
    for name in job["drop"]:
        nets.pop(name, None)
    for name, (config, state) in job["weights"].items():
        net = nets.get(name)
        if net is None or net.config != config:  # else reused: building one costs more
            net = nets[name] = RanchNet(config).eval()
        net.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})


def _play_job(games: dict[str, Any], job: dict[str, Any], nets: Mapping[str, torch.nn.Module],
              encoder: Encoder) -> Batch:
    """Play ``games`` (seeds, roles, sample seed and variant) with ``job``'s settings."""
    config = GameConfig(num_players=games["num_players"], mode=games["mode"],
                        scenario=games["scenario"])
    return play_share(games["seeds"], games["roles"], nets,
                      np.random.default_rng(games["sample_seed"]), config, job["backend"],
                      encoder, record=job["record"], label_greedy=job["label_greedy"],
                      margin_coef=job["margin_coef"], core=job["core"])


def _serve(conn: Connection) -> None:
    """A worker's loop: play each received share and send back its packed Batch."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    if hasattr(signal, "pthread_sigmask"):  # blocked since the start (sigint_deferred)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    torch.set_num_threads(1)
    encoder = Encoder()
    nets: dict[str, RanchNet] = {}
    held: dict[str, Any] = {}  # the last kept share's rows
    shard: Shard | None = None
    learner: RanchNet | None = None  # the learner's copy for split updates
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        if job is None:
            return
        try:
            cpu = time.process_time()
            if job.get("kind") == "shard":
                shard = Shard(held["obs"], held["masks"], held["priors"], **job["rows"])
                learner = RanchNet(job["net_config"])
                conn.send(("ok", len(shard), time.process_time() - cpu))
                continue
            if job.get("kind") == "grads":
                if shard is None or learner is None:
                    raise RuntimeError("a gradient job before its shard job")
                set_params(learner, job["params"])
                learner.zero_grad(set_to_none=True)
                loss, sums = shard.loss(learner, job["idx"], job["norm"], job["size"],
                                        job["weights"])
                if loss is not None:
                    loss.backward()
                conn.send(("ok", (flat_grads(learner), sums), time.process_time() - cpu))
                continue
            _take_nets(nets, job)
            if job.get("kind") == "jobs":  # whole variants, one after the other
                played = [_play_job(part, job, nets, encoder) for part in job["jobs"]]
                if job["keep"]:
                    held, shard = _held_together(played), None
                conn.send(("ok", [pack(b, rows=not job["keep"]) for b in played],
                           time.process_time() - cpu))
                continue
            batch = _play_job(job, job, nets, encoder)
            if job["keep"]:
                held, shard = held_rows(batch), None
            conn.send(("ok", pack(batch, rows=not job["keep"]), time.process_time() - cpu))
        except Exception:
            conn.send(("error", traceback.format_exc(), 0.0))


@dataclass(frozen=True)
class Job:
    """One variant's games for ``PlayPool.play_jobs``, played whole by one process."""

    config: GameConfig
    seeds: list[int]
    roles: list[list[str]]
    sample_seed: int  # the seed of the generator that samples the networks' actions

    @property
    def cost(self) -> int:
        """Players x games: what ``assign`` balances (decision waves scale with both)."""
        return self.config.num_players * len(self.seeds)

    def message(self) -> dict[str, Any]:
        """The games as a worker reads them."""
        return {"seeds": self.seeds, "roles": self.roles, "sample_seed": self.sample_seed,
                "num_players": self.config.num_players, "mode": self.config.mode,
                "scenario": self.config.scenario}


def assign(jobs: list[Job], processes: int) -> list[list[int]]:
    """Each process's jobs: the costliest first (players x games), each to the least loaded."""
    loads = [0] * processes
    out: list[list[int]] = [[] for _ in range(processes)]
    for k in sorted(range(len(jobs)), key=lambda k: -jobs[k].cost):
        # ties go to a worker: this process also merges the batches
        w = min(range(processes), key=lambda p: (loads[p], p == 0, p))
        out[w].append(k)
        loads[w] += jobs[k].cost
    return out


class PlayPool:
    """``workers`` processes (this one included) that play shares of a list of games."""

    def __init__(self, workers: int, num_players: int, mode: str,
                 backend: str = DEFAULT_BACKEND) -> None:
        check_workers(workers)
        self.workers = workers
        self.backend = check_backend(backend)
        self.config = GameConfig(num_players=num_players, mode=mode)
        self.encoder = Encoder()
        self.worker_cpu_s = 0.0  # CPU seconds the children spent playing
        self._sent: dict[str, torch.nn.Module] = {}  # frozen networks the children hold
        self._rows: list[int] = []  # rows of each share of the last batch
        self._conns: list[Connection] = []
        self._procs: list[multiprocessing.process.BaseProcess] = []
        ctx = multiprocessing.get_context("spawn")
        if workers > 1 and hasattr(signal, "pthread_sigmask"):
            # multiprocessing's resource tracker unblocks SIGINT when it starts (inside the
            # first start()): start it before sigint_deferred
            from multiprocessing import resource_tracker

            resource_tracker.ensure_running()
        try:
            for w in range(1, workers):
                parent, child = ctx.Pipe()
                proc = ctx.Process(target=_serve, args=(child,), daemon=True,
                                   name=f"moonriver-play-{w}")
                with sigint_deferred():
                    proc.start()
                child.close()
                self._conns.append(parent)
                self._procs.append(proc)
        except BaseException:
            self.close(force=True)
            raise

    def play(self, seeds: list[int], roles: list[list[str]],
             nets: dict[str, torch.nn.Module], rng: np.random.Generator, *,
             config: GameConfig | None = None, record: str | None = LEARNER,
             label_greedy: bool = False, margin_coef: float = 0.0,
             keep: bool = False, core: bool = False) -> Batch:
        """Play the games of ``seeds`` across the pool; networks but the learner must not change.

        ``core``: the networks' forwards in the compiled core (``rollout.play_batched``)."""
        if len(seeds) != len(roles):
            raise ValueError(f"{len(seeds)} game seeds but {len(roles)} role lists")
        self._check_alive()
        config = self.config if config is None else config
        ranges = shares(len(seeds), self.workers)
        # from the caller's generator: a run is deterministic for a seed and number of workers
        sample_seeds = [int(s) for s in rng.integers(2**63, size=self.workers)]
        weights, drop = self._outgoing(nets)
        for conn, share, sample_seed in zip(self._conns, ranges[1:], sample_seeds[1:],
                                            strict=True):
            conn.send({"seeds": [seeds[i] for i in share], "roles": [roles[i] for i in share],
                       "weights": weights, "drop": drop, "sample_seed": sample_seed,
                       "record": record, "label_greedy": label_greedy,
                       "margin_coef": margin_coef, "num_players": config.num_players,
                       "mode": config.mode, "scenario": config.scenario,
                       "backend": self.backend, "keep": keep, "core": core})
        self._sent = {name: net for name, net in nets.items() if name != LEARNER}
        mine = play_share([seeds[i] for i in ranges[0]], [roles[i] for i in ranges[0]], nets,
                          np.random.default_rng(sample_seeds[0]), config, self.backend,
                          self.encoder, record=record, label_greedy=label_greedy,
                          margin_coef=margin_coef, core=core)
        parts = [pack(mine, rows=not keep), *self._collect()]
        batch = merge(parts, [r.start for r in ranges])
        self._rows = [len(part["keys"]) for part in parts]  # rows of each share, in order
        if keep:  # this share's rows as they are (no copy)
            for name, rows in held_rows(mine).items():
                setattr(batch, name, [] if rows is None else rows)
            batch.local = self._rows[0]
        return batch

    def _check_alive(self) -> None:
        """Refuse to send work when a worker has died."""
        if self._procs and not all(p.is_alive() for p in self._procs):
            raise RuntimeError("a play worker process has died; close the pool")

    def _outgoing(self, nets: Mapping[str, torch.nn.Module]
                  ) -> tuple[dict[str, tuple[NetConfig, dict[str, np.ndarray]]], list[str]]:
        """The weights the workers lack (the learner's always) and the names they can drop."""
        fresh = {name: net for name, net in nets.items()
                 if name == LEARNER or self._sent.get(name) is not net}
        return ({name: _weights(net) for name, net in fresh.items()},
                [name for name in self._sent if name not in nets])

    def play_jobs(self, jobs: list[Job], nets: dict[str, torch.nn.Module], *,
                  record: str | None = LEARNER, margin_coef: float = 0.0,
                  keep: bool = False, core: bool = False) -> Batch:
        """Play each job whole in one process (``assign``); one Batch, a process's jobs together.

        A job's game indices follow the jobs before it in ``jobs``; ``keep`` and ``core`` as in
        ``play``."""
        self._check_alive()
        weights, drop = self._outgoing(nets)
        plan = assign(jobs, self.workers)
        for conn, mine in zip(self._conns, plan[1:], strict=True):
            conn.send({"kind": "jobs", "jobs": [jobs[k].message() for k in mine],
                       "weights": weights, "drop": drop, "record": record,
                       "label_greedy": False, "margin_coef": margin_coef,
                       "backend": self.backend, "keep": keep, "core": core})
        self._sent = {name: net for name, net in nets.items() if name != LEARNER}
        played = [play_share(jobs[k].seeds, jobs[k].roles, nets,
                             np.random.default_rng(jobs[k].sample_seed), jobs[k].config,
                             self.backend, self.encoder, record=record,
                             margin_coef=margin_coef, core=core) for k in plan[0]]
        shares = [[pack(b, rows=not keep) for b in played], *self._collect()]
        starts = np.cumsum([0, *(len(job.seeds) for job in jobs)]).tolist()
        batch = merge([part for share in shares for part in share],
                      [starts[k] for mine in plan for k in mine])
        self._rows = [sum(len(part["keys"]) for part in share) for share in shares]
        if keep:  # this process's rows as they are
            for name, rows in _held_together(played).items():
                setattr(batch, name, [] if rows is None else rows)
            batch.local = self._rows[0]
        return batch

    def begin_update(self, net: RanchNet, taken: np.ndarray, old_logp: np.ndarray,
                     adv: np.ndarray, returns: np.ndarray) -> None:
        """Ready a split update of the last batch played with ``keep`` (each worker's rows)."""
        for conn, (lo, hi) in zip(self._conns, self._spans()[1:], strict=True):
            conn.send({"kind": "shard", "net_config": net.config,
                       "rows": {"taken": taken[lo:hi], "old_logp": old_logp[lo:hi],
                                "adv": adv[lo:hi], "returns": returns[lo:hi]}})
        self._collect()

    def request_grads(self, idx: np.ndarray, params: np.ndarray, norm: tuple[float, float],
                      weights: LossWeights) -> None:
        """Ask each worker for its part of minibatch ``idx``'s gradient at ``params``."""
        for conn, (lo, hi) in zip(self._conns, self._spans()[1:], strict=True):
            mine = idx[(idx >= lo) & (idx < hi)] - lo
            conn.send({"kind": "grads", "idx": mine, "params": params, "norm": norm,
                       "size": int(idx.size), "weights": weights})

    def receive_grads(self) -> list[tuple[np.ndarray, dict[str, float]]]:
        """Each worker's gradient part (``losses.flat_grads``) and statistics' sums."""
        return self._collect()

    def _collect(self) -> list[Any]:
        """Each worker's answer to the job just sent to it (its CPU time counted)."""
        out = []
        for conn, proc in zip(self._conns, self._procs, strict=True):
            status, payload, cpu = self._receive(conn, proc)
            if status != "ok":
                raise RuntimeError(f"play worker {proc.name} failed:\n{payload}")
            out.append(payload)
            self.worker_cpu_s += cpu
        return out

    def _spans(self) -> list[tuple[int, int]]:
        """Each share's rows in the merged batch, as (start, stop)."""
        stops = np.cumsum(self._rows).tolist()
        return [(stop - rows, stop) for rows, stop in zip(self._rows, stops, strict=True)]

    @staticmethod
    def _receive(conn: Connection, proc: multiprocessing.process.BaseProcess
                 ) -> tuple[str, Any, float]:
        while not conn.poll(1.0):
            if not proc.is_alive():
                raise RuntimeError(f"play worker {proc.name} exited with code {proc.exitcode}")
        answer: tuple[str, Any, float] = conn.recv()  # (status, payload, CPU seconds)
        return answer

    def close(self, force: bool = False) -> None:
        """Stop the worker processes (``force``: terminate them without waiting for a share)."""
        for conn, proc in zip(self._conns, self._procs, strict=True):
            if not force and proc.is_alive():
                with contextlib.suppress(OSError):
                    conn.send(None)
        for proc in self._procs:
            proc.join(0.1 if force else _JOIN_SECONDS)
            if proc.is_alive():
                proc.terminate()
                proc.join(_JOIN_SECONDS)
            if proc.is_alive():
                proc.kill()
                proc.join()
        for conn in self._conns:
            conn.close()
        self._conns, self._procs, self._sent = [], [], {}

    def __enter__(self) -> PlayPool:
        return self

    def __exit__(self, kind: object, error: object, tb: object) -> None:
        self.close(force=kind is not None)
