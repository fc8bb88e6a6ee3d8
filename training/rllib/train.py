"""Multi-agent self-play PPO on Ray RLlib (new API stack), embedded or on a Ray cluster.

See docs/rllib.md."""

from __future__ import annotations

import argparse
import functools
import json
import logging
import math
import os
import shutil
import signal
import socket
import sys
import time
from collections.abc import Hashable, Iterator
from dataclasses import asdict, dataclass, fields
from typing import Any

from moonriver_env.training.atomic import atomic_folder, atomic_text, remove_partials
from moonriver_env.training.rllib import BATCHED_OPPONENTS, ENV_BACKENDS
from moonriver_env.training.rllib.logs import quiet_rllib_logs
from moonriver_env.training.rllib.paths import CHECKPOINT_DIR, algorithm_checkpoint, write_manifest
from moonriver_env.training.settings import add_setting_flags, load_settings, warner

from moonriver_env.common.cli import (
    ArgumentParser,
    CLIError,
    MissingExtraError,
    add_debug_flag,
    cli_main,
)

MODULE_ID = "shared"
PROG = "moonriver-train-rllib"


class UsageError(CLIError):
    """A bad setting or flag: reported as one line, exit status 2."""


@dataclass
class RLlibTrainConfig:
    """Every setting of an RLlib training run."""

    num_players: int = 4
    mode: str = "base"
    reward: str = "win"
    shaping: float = 0.0
    auto_forced: bool = False  # play single-option decisions automatically
    opponents: tuple[str, ...] = ()  # fixed-agent specs for some seats (empty: pure self-play)
    opponent_prob: float = 0.5  # chance that a seat is a fixed opponent in a game
    iterations: int = 100  # training iterations (0: no limit, needs max_minutes)
    max_minutes: float = 0.0  # stop after this wall-clock time (0: no limit)
    num_env_runners: int = 1  # sampling actors (0: sample in the driver)
    num_envs_per_env_runner: int = 64  # games stepped as one batch in each env runner
    env_backend: str = "batched"  # "batched": the core's BatchedGames; "pettingzoo": reference
    num_cpus_per_env_runner: float = 1.0
    num_learners: int = 0  # learner actors (0: learn in the driver)
    num_gpus_per_learner: float = 0.0
    net_arch: tuple[int, ...] = (256, 256)
    learning_rate: float = 3e-4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    entropy_coeff: float = 0.01
    clip_param: float = 0.2
    vf_loss_coeff: float = 0.5
    train_batch_size: int = 4000  # env steps per learner per iteration
    minibatch_size: int = 500
    num_epochs: int = 4
    eval_every: int = 10  # iterations between evaluations (0: none)
    eval_games: int = 10
    eval_opponents: tuple[str, ...] = ("greedy",)  # every other seat in evaluation games
    checkpoint_every: int = 10  # iterations between checkpoints (a last one is always saved)
    keep_checkpoints: int = 3
    seed: int = 0
    out: str = "runs/rllib"
    address: str = ""  # Ray cluster address (empty: start an embedded local Ray)
    torch_threads: int = 1  # torch threads in the driver and in every env runner
    object_store_mb: int = 512  # object store of the embedded Ray

    @classmethod
    def load(cls, path: str | None, overrides: dict[str, Any]) -> RLlibTrainConfig:
        """Defaults, then a TOML/JSON file, then explicit overrides; the result is validated."""
        try:
            values = load_settings(cls, path, overrides)
        except OSError as exc:
            raise UsageError(f"cannot read config {path!r}: {exc}") from exc
        except ValueError as exc:  # what is wrong and what is allowed, as one line
            raise UsageError(str(exc)) from None
        cfg = cls(**values)
        cfg.validate()
        return cfg

    def validate(self) -> None:
        """Check every setting before Ray starts; the message says what is allowed."""
        from moonriver_env.agents.registry import make_agent

        from moonriver_env.moonriver.aec_env import REWARD_MODES
        from moonriver_env.moonriver.rules import GameConfig

        checks = [
            (self.num_players in (2, 3, 4), "num_players must be 2, 3 or 4"),
            (self.mode in ("base", "legends"), "mode must be 'base' or 'legends'"),
            (self.reward in REWARD_MODES, f"reward must be one of {list(REWARD_MODES)}"),
            (0.0 <= self.opponent_prob <= 1.0, "opponent_prob must be in [0, 1]"),
            (self.iterations >= 0 and self.max_minutes >= 0,
             "iterations and max_minutes must be >= 0"),
            (self.iterations > 0 or self.max_minutes > 0,
             "set iterations or max_minutes (both 0 would never stop)"),
            (self.num_env_runners >= 0 and self.num_learners >= 0,
             "num_env_runners and num_learners must be >= 0"),
            (self.num_envs_per_env_runner >= 1, "num_envs_per_env_runner must be >= 1"),
            (self.env_backend in ENV_BACKENDS, f"env_backend must be one of {ENV_BACKENDS}"),
            (self.train_batch_size >= 1 and 1 <= self.minibatch_size <= self.train_batch_size,
             "need 1 <= minibatch_size <= train_batch_size"),
            (self.train_batch_size > max(1, self.num_env_runners) * self.num_envs_per_env_runner,
             "train_batch_size must exceed num_env_runners x num_envs_per_env_runner (one env step "
             f"per game gives RLlib's PPO learner no minibatch); got {self.train_batch_size} for "
             f"{max(1, self.num_env_runners)} x {self.num_envs_per_env_runner}"),
            (self.num_epochs >= 1, "num_epochs must be >= 1"),
            (bool(self.net_arch) and min(self.net_arch) >= 1,
             "net_arch must be one or more positive layer widths"),
            (self.eval_every >= 0 and self.eval_games >= 1,
             "eval_every must be >= 0 and eval_games >= 1"),
            (self.checkpoint_every >= 1 and self.keep_checkpoints >= 1,
             "checkpoint_every and keep_checkpoints must be >= 1"),
            (self.torch_threads >= 1, "torch_threads must be >= 1"),
        ]
        for ok, message in checks:
            if not ok:
                raise UsageError(message)
        variant = GameConfig(num_players=self.num_players, mode=self.mode)
        for spec in (*self.opponents, *self.eval_opponents):
            try:
                make_agent(spec, config=variant)
            except (ValueError, OSError) as exc:
                raise UsageError(f"opponent {spec!r}: {exc}") from exc
        if self.env_backend == "batched":
            for spec in (*self.opponents, *(self.eval_opponents if self.eval_every else ())):
                if spec not in BATCHED_OPPONENTS:
                    raise UsageError(f"opponent {spec!r}: env_backend 'batched' plays only "
                                     f"{' and '.join(BATCHED_OPPONENTS)} opponents (in the "
                                     f"core); use env_backend 'pettingzoo' for any agent spec")

    def env_config(self) -> dict[str, Any]:
        """The env config every env runner builds its environments from."""
        return {"num_players": self.num_players, "mode": self.mode, "reward": self.reward,
                "shaping": self.shaping, "auto_forced": self.auto_forced,
                "opponents": list(self.opponents), "opponent_prob": self.opponent_prob,
                "seed": self.seed, "torch_threads": self.torch_threads}


def shared_policy(agent_id: Hashable, episode: Any = None, **kwargs: Any) -> str:
    """Policy mapping: every seat plays the one shared module (self-play)."""
    return MODULE_ID


def build_config(cfg: RLlibTrainConfig) -> Any:
    """The RLlib ``PPOConfig`` (new API stack) for a training config."""
    from moonriver_env.training.rllib.env import ENV_NAME, BatchedEnvRunner, register
    from moonriver_env.training.rllib.module import MaskedPPOTorchRLModule
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    register()
    model = DefaultModelConfig(fcnet_hiddens=list(cfg.net_arch), fcnet_activation="relu",
                               head_fcnet_hiddens=[], vf_share_layers=False)
    config = (
        PPOConfig()
        # RLlib's env checker steps unmasked random actions, which here only end games early.
        .environment(ENV_NAME, env_config=cfg.env_config(), disable_env_checking=True)
        .framework("torch")
        .multi_agent(policies={MODULE_ID}, policy_mapping_fn=shared_policy,
                     policies_to_train=[MODULE_ID])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            MODULE_ID: RLModuleSpec(module_class=MaskedPPOTorchRLModule, model_config=model)}))
        .env_runners(num_env_runners=cfg.num_env_runners,
                     num_envs_per_env_runner=cfg.num_envs_per_env_runner,
                     # Ray takes fractions of a CPU here (its hint says int)
                     num_cpus_per_env_runner=cfg.num_cpus_per_env_runner,  # type: ignore[arg-type]
                     rollout_fragment_length="auto")
        # A restartable actor makes Ray's C++ side print a note about its constructor
        # arguments; an embedded run has no node to lose, so it needs no restarts.
        .fault_tolerance(restart_failed_env_runners=bool(cfg.address))
        .learners(num_learners=cfg.num_learners, num_gpus_per_learner=cfg.num_gpus_per_learner)
        .training(lr=cfg.learning_rate, gamma=cfg.gamma, lambda_=cfg.gae_lambda,
                  entropy_coeff=cfg.entropy_coeff, clip_param=cfg.clip_param,
                  vf_loss_coeff=cfg.vf_loss_coeff,
                  train_batch_size_per_learner=cfg.train_batch_size,
                  minibatch_size=cfg.minibatch_size, num_epochs=cfg.num_epochs)
        .debugging(seed=cfg.seed, log_level="ERROR")
    )
    if cfg.env_backend == "batched":
        config.env_runners(env_runner_cls=BatchedEnvRunner)
    if cfg.eval_every:
        eval_env = {**cfg.env_config(), "reward": "win", "shaping": 0.0,
                    "opponents": list(cfg.eval_opponents), "opponent_prob": 1.0,
                    "seed": cfg.seed + 10_000}
        config.evaluation(evaluation_interval=cfg.eval_every,
                          evaluation_duration=cfg.eval_games,
                          evaluation_duration_unit="episodes", evaluation_num_env_runners=0,
                          evaluation_config={"env_config": eval_env, "explore": False,
                                             "num_envs_per_env_runner": min(
                                                 cfg.num_envs_per_env_runner, cfg.eval_games)})
    return config


def check_address(address: str, timeout: float = 3.0) -> None:
    """Fail fast unless a Ray cluster's GCS answers at ``address`` (``HOST:PORT``)."""
    if address == "auto":
        return
    if address.startswith("ray://"):
        raise UsageError("Ray Client addresses (ray://) are not supported; give the head's "
                         "GCS address HOST:PORT (port 6379 by default)")
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise UsageError(f"--address must be HOST:PORT of the Ray head (e.g. 10.0.0.5:6379) "
                         f"or 'auto', got {address!r}")
    hint = "start one with `ray start --head` or leave out --address for a local Ray"
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise UsageError(f"no Ray cluster reachable at {address} ({reason}); {hint}") from exc
    code = gcs_probe(f"{host}:{port}", timeout)
    if code in ("UNAVAILABLE", "DEADLINE_EXCEEDED"):
        raise UsageError(f"no Ray cluster reachable at {address} ({code.lower()}); {hint}")
    if code not in ("", "OK", "UNAUTHENTICATED", "PERMISSION_DENIED"):
        raise UsageError(f"something answers at {address}, but not a Ray head's GCS "
                         f"({code.lower()}); give the head's port (6379 by default)")
    if code == "UNAUTHENTICATED" and "RAY_AUTH_MODE" not in os.environ:
        # The cluster uses Ray's token authentication: Ray then reads the token from
        # RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token.
        os.environ["RAY_AUTH_MODE"] = "token"


def gcs_probe(target: str, timeout: float) -> str:
    """The gRPC status name of a GetClusterId call to a Ray GCS ("" when grpc is missing)."""
    # the empty request goes as raw bytes: Ray must not be imported yet (it reads its token
    # settings at import)
    try:
        import grpc
    except ImportError:
        return ""
    with grpc.insecure_channel(target) as channel:
        call = channel.unary_unary("/ray.rpc.NodeInfoGcsService/GetClusterId")
        try:
            call(b"", timeout=timeout)
        except grpc.RpcError as exc:
            status: str = exc.code().name
            return status
    return "OK"


def start_ray(cfg: RLlibTrainConfig) -> None:
    """Connect to the cluster at ``cfg.address``, or start a small embedded Ray."""
    import ray

    quiet_rllib_logs()
    if cfg.address:
        try:
            ray.init(address=cfg.address, logging_level=logging.ERROR)
        except (ConnectionError, RuntimeError) as exc:
            raise UsageError(f"cannot join the Ray cluster at {cfg.address}: {exc}") from exc
        return
    cpus = max(os.cpu_count() or 1, math.ceil(cfg.num_env_runners * cfg.num_cpus_per_env_runner)
               + cfg.num_learners + 1)
    ray.init(num_cpus=cpus, include_dashboard=False, logging_level=logging.ERROR,
             object_store_memory=cfg.object_store_mb * 2**20,
             runtime_env={"worker_process_setup_hook":
                          "moonriver_env.training.rllib.logs.quiet_rllib_logs"})


def flatten(tree: Any, prefix: str = "") -> Iterator[tuple[str, float]]:
    """Numeric leaves of a nested result dict as ``("a/b/c", value)``."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from flatten(value, f"{prefix}/{key}" if prefix else str(key))
    elif isinstance(tree, (int, float)) and not isinstance(tree, bool) and math.isfinite(tree):
        yield prefix, float(tree)


SUMMARY_KEYS = {
    "env_steps": "env_runners/num_env_steps_sampled_lifetime",
    "episodes": "env_runners/num_episodes_lifetime",
    "episode_len_mean": "env_runners/episode_len_mean",
    "return_mean": f"env_runners/module_episode_returns_mean/{MODULE_ID}",
    "module_steps_trained": "learners/__all_modules__/num_module_steps_trained_lifetime",
    "policy_loss": f"learners/{MODULE_ID}/policy_loss",
    "vf_loss": f"learners/{MODULE_ID}/vf_loss",
    "entropy": f"learners/{MODULE_ID}/entropy",
    "eval_return_mean": f"evaluation/env_runners/module_episode_returns_mean/{MODULE_ID}",
    "iter_seconds": "time_this_iter_s",
}


def summarise(result: dict[str, Any]) -> dict[str, float]:
    """The headline figures of one iteration's result (those present)."""
    flat = dict(flatten(result))
    out = {"iteration": float(result.get("training_iteration", 0))}
    out.update({name: flat[key] for name, key in SUMMARY_KEYS.items() if key in flat})
    if "eval_return_mean" in out:  # evaluation uses the win reward: +1 win, -1 loss
        out["eval_win_rate"] = (out["eval_return_mean"] + 1) / 2
    return out


class StopFlag:
    """First Ctrl-C: stop after the current iteration; a second one interrupts at once."""

    def __init__(self) -> None:
        self.stop = False
        self._previous: Any = None

    def __enter__(self) -> StopFlag:
        self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGINT, self._previous)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.stop:
            raise KeyboardInterrupt
        self.stop = True
        print("\nstopping after this iteration and saving a checkpoint "
              "(Ctrl-C again to stop now)", file=sys.stderr, flush=True)


def save_checkpoint(algo: Any, cfg: RLlibTrainConfig) -> str:
    """Save the algorithm as ``checkpoints/iter_NNNNNN`` atomically; keep only the newest few."""
    root = os.path.join(cfg.out, CHECKPOINT_DIR)
    os.makedirs(root, exist_ok=True)
    path = os.path.abspath(os.path.join(root, f"iter_{algo.iteration:06d}"))
    with atomic_folder(path) as partial:
        algo.save_to_path(partial)
        write_manifest(partial)
    done = sorted(d for d in os.listdir(root) if d.startswith("iter_") and "." not in d)
    for old in done[:-cfg.keep_checkpoints]:
        shutil.rmtree(os.path.join(root, old), ignore_errors=True)
    return path


def train(cfg: RLlibTrainConfig, resume: str | None = None, log: Any = None) -> str:
    """Run PPO self-play until the iteration or time limit (or Ctrl-C); returns the checkpoint."""
    import ray
    import torch
    from torch.utils.tensorboard import SummaryWriter

    log = functools.partial(print, flush=True) if log is None else log
    torch.set_num_threads(cfg.torch_threads)
    restore = algorithm_checkpoint(resume) if resume else None
    start_ray(cfg)
    try:
        os.makedirs(cfg.out, exist_ok=True)
        for folder in (cfg.out, os.path.join(cfg.out, "checkpoints")):
            remove_partials(folder)  # a killed run's temporary files and folders
        atomic_text(os.path.join(cfg.out, "config.json"), json.dumps(asdict(cfg), indent=1))
        algo = build_config(cfg).build_algo()
        if restore:
            algo.restore_from_path(restore)
            log(f"resumed from {restore} at iteration {algo.iteration}")
        writer = SummaryWriter(os.path.join(cfg.out, "tb"))
        deadline = time.monotonic() + 60 * cfg.max_minutes if cfg.max_minutes else math.inf
        first = algo.iteration
        path = ""
        with StopFlag() as flag, open(os.path.join(cfg.out, "metrics.jsonl"), "a",
                                      encoding="utf-8") as metrics:
            while not flag.stop and time.monotonic() < deadline and (
                    not cfg.iterations or algo.iteration - first < cfg.iterations):
                result = algo.train()
                row = summarise(result)
                if not cfg.eval_every or algo.iteration % cfg.eval_every:
                    # RLlib repeats the last evaluation in later results; log it once
                    row = {k: v for k, v in row.items() if not k.startswith("eval_")}
                    result.pop("evaluation", None)
                step = int(row.get("env_steps", algo.iteration))
                for key, value in flatten(result):
                    writer.add_scalar(key, value, step)
                writer.flush()
                metrics.write(json.dumps(row) + "\n")
                metrics.flush()
                log(" ".join(f"{k}={v:.4g}" for k, v in row.items()))
                if algo.iteration % cfg.checkpoint_every == 0:
                    path = save_checkpoint(algo, cfg)
            if not path.endswith(f"iter_{algo.iteration:06d}"):
                path = save_checkpoint(algo, cfg)
        writer.close()
        log(f"saved {path}")
        algo.stop()
        return path
    finally:
        ray.shutdown()


def build_parser() -> argparse.ArgumentParser:
    """The CLI: one flag per config field, plus --config, --resume and --debug."""
    parser = ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="TOML or JSON file of RLlibTrainConfig settings")
    parser.add_argument("--resume", help="checkpoint directory (or run directory: its newest "
                                         "undamaged checkpoint) to continue from")
    add_debug_flag(parser)
    add_setting_flags(parser, fields(RLlibTrainConfig),
                      lambda f: f"(default: {f.default!r})".replace("'", ""), nargs="*")
    return parser


@cli_main(PROG)
def main(argv: list[str] | None = None) -> int:
    """CLI entry point (``moonriver-train-rllib``)."""
    args = vars(build_parser().parse_args(argv))
    config_path, resume = args.pop("config"), args.pop("resume")
    args.pop("debug")
    cfg = RLlibTrainConfig.load(config_path, args)
    if resume:  # a bad path fails before Ray starts; a damaged newest checkpoint is named
        resume = algorithm_checkpoint(resume, report=warner(PROG))
    if cfg.address:
        check_address(cfg.address)
    try:
        import ray.rllib  # noqa: F401
    except ModuleNotFoundError as exc:
        raise MissingExtraError("ray", "rllib", PROG) from exc
    print("training with", json.dumps(asdict(cfg)), flush=True)
    try:
        train(cfg, resume=resume)
    except KeyboardInterrupt:
        try:
            newest = algorithm_checkpoint(cfg.out)
        except FileNotFoundError:
            newest = "none was saved"
        print(f"{PROG}: interrupted; newest complete checkpoint: {newest}", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
