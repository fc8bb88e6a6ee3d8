"""Train MaskablePPO (sb3-contrib) on the MoonRiver-v0 wrapper, with optional self-play.

    moonriver-train --timesteps 2000000 --out runs/ppo4p
    moonriver-train --config my.toml --resume runs/ppo4p/checkpoints/ppo_400000_steps.zip
    moonriver-train --config my.toml --resume runs/ppo4p   # its newest readable checkpoint

Settings come from the defaults of ``TrainConfig``, then a TOML or JSON file (``--config``),
then command-line flags. The run directory gets the resolved config (``config.json``),
checkpoints, TensorBoard logs (``tb/``), Monitor logs, periodic evaluations against fixed
baselines (``eval_<agent>/evaluations.npz``, masked like ``MaskableEvalCallback``), the final
model (``final_model.zip``) and, with self-play, the snapshots (``snapshots/``). Models carry
the variant they were trained on (``model.moonriver``), which ``moonriver-eval`` checks.
Checkpoints, snapshots and the final model are written atomically (complete or absent);
``--resume RUN_DIR`` takes the newest checkpoint that reads, skipping (with one line each)
any newer one that does not.

Evaluations run at the first step, every ``eval_every`` timesteps and once more when learning
stops (also when ``max_minutes`` stops it), so even a short run has a curve. The progress
bar's total is what the run will reach: ``timesteps``, or fewer when the current rate reaches
``max_minutes`` first, so its time estimate respects the limit.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any

from moonriver_env.training.atomic import atomic_text, check_archive, first_line, remove_partials
from moonriver_env.training.settings import load_settings

from moonriver_env.common.cli import ArgumentParser, add_debug_flag, cli_main, require

TRAIN_MODULES = ("torch", "stable_baselines3", "sb3_contrib", "tensorboard", "tqdm")
CHECKPOINT = re.compile(r"ppo_(\d+)_steps\.zip")  # checkpoints/ names, by timestep count


@dataclass
class TrainConfig:
    """Every setting of a training run."""

    num_players: int = 4
    mode: str = "base"
    timesteps: int = 1_000_000
    n_envs: int = 8
    vec_env: str = "dummy"  # "dummy" (one process) or "subproc"
    policy: str = "mlp"  # "mlp" or "cnn" (RanchCNN feature extractor)
    net_arch: tuple[int, ...] = (256, 256)
    learning_rate: float = 3e-4
    n_steps: int = 256
    batch_size: int = 512
    n_epochs: int = 4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    ent_coef: float = 0.01
    reward: str = "win"
    shaping: float = 1.0
    opponents: tuple[str, ...] = ("random",)  # baseline agent specs for the opponent seats
    self_play: bool = False
    baseline_prob: float = 0.5  # self-play: chance that a seat plays a baseline
    snapshot_every: int = 100_000  # self-play: timesteps between pool evaluations
    snapshot_threshold: float = 0.5  # self-play: win rate vs the opponent mix to add a snapshot
    snapshot_games: int = 100
    eval_every: int = 100_000
    eval_games: int = 100
    eval_opponents: tuple[str, ...] = ("random", "greedy")
    checkpoint_every: int = 200_000
    seed: int = 0
    out: str = "runs/ppo"
    progress: bool = True
    max_minutes: float = 0.0  # stop learning after this wall-clock time (0: no limit)
    torch_threads: int = 1  # torch intra-op threads (1 avoids oversubscribing small CPUs)

    @classmethod
    def load(cls, path: str | None, overrides: dict[str, Any]) -> TrainConfig:
        """Defaults, then a TOML/JSON file, then explicit overrides; unknown keys are errors."""
        return cls(**load_settings(cls, path, overrides, check=check_setting,
                                   label="training settings"))


# What each setting means and which values it allows: a list of choices, a bound (">=1",
# ">0") or an interval ("0..1", both ends included). The CLI's help is built from this table.
SETTINGS: dict[str, tuple[str, str | list[int] | list[str]]] = {
    "num_players": ("players per game", [2, 3, 4]),
    "mode": ("game mode", ["base", "legends"]),
    "timesteps": ("learner timesteps to train", ">=1"),
    "n_envs": ("parallel environments", ">=1"),
    "vec_env": ("vectorised env: one process (dummy) or one per env (subproc)",
                ["dummy", "subproc"]),
    "policy": ("network: MLP, or a CNN over the ranch planes", ["mlp", "cnn"]),
    "net_arch": ("hidden layer sizes, e.g. 256 256", "each >=1"),
    "learning_rate": ("Adam learning rate", ">0"),
    "n_steps": ("steps per env per PPO rollout", ">=2"),
    "batch_size": ("PPO minibatch size", ">=2"),
    "n_epochs": ("PPO epochs per rollout", ">=1"),
    "gamma": ("discount factor", "0..1"),
    "gae_lambda": ("GAE lambda", "0..1"),
    "ent_coef": ("entropy bonus coefficient", ">=0"),
    "reward": ("final reward", ["win", "rank", "score", "margin"]),
    "shaping": ("weight of the running-score shaping reward (0 disables it)", "finite"),
    "opponents": ("agent specs for the opponent seats (random, greedy, mcts:SIMS, "
                  "policy:PATH.zip, ...)", "agent specs"),
    "self_play": ("mix frozen snapshots of the learner into the opponents", "flag"),
    "baseline_prob": ("self-play: chance that a seat plays a baseline", "0..1"),
    "snapshot_every": ("self-play: timesteps between pool evaluations", ">=1"),
    "snapshot_threshold": ("self-play: win rate vs the opponent mix that adds a snapshot",
                           "0..1"),
    "snapshot_games": ("self-play: games per pool evaluation", ">=1"),
    "eval_every": ("timesteps between evaluations (also at the start and the end)", ">=1"),
    "eval_games": ("games per evaluation and opponent", ">=1"),
    "eval_opponents": ("agent specs to evaluate against (each fills every opponent seat)",
                       "agent specs"),
    "checkpoint_every": ("timesteps between checkpoints", ">=1"),
    "seed": ("seed of the run", ">=0"),
    "out": ("run directory", "a path"),
    "progress": ("show a progress bar", "flag"),
    "max_minutes": ("stop learning after this many minutes of wall-clock time (0: no limit)",
                    ">=0"),
    "torch_threads": ("torch intra-op threads", ">=1"),
}


def check_setting(name: str, kind: str, value: Any) -> Any:
    """``value`` checked against the setting's type and allowed values (ValueError if not)."""
    allowed = SETTINGS[name][1]
    bad = ValueError(f"setting {name} must be {describe_allowed(kind, allowed)}, got {value!r}")
    if kind == "bool":
        if not isinstance(value, bool):
            raise bad
        return value
    if kind.startswith("tuple"):
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise bad
        elem = "int" if "int" in kind else "str"
        if elem == "int" and (not value or any(
                isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in value)):
            raise bad
        if elem == "str":
            if any(not isinstance(v, str) for v in value) or (name == "opponents" and not value):
                raise bad
            from moonriver_env.agents.registry import make_agent

            for spec in value:
                make_agent(spec)  # an unknown spec says which forms are allowed
        return tuple(value)
    if kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
        raise bad
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            raise bad
        value = float(value)
    if kind == "str" and not isinstance(value, str):
        raise bad
    if isinstance(allowed, list):
        if value not in allowed:
            raise bad
    elif allowed.startswith(">="):
        if value < float(allowed[2:]):
            raise bad
    elif allowed.startswith(">"):
        if value <= float(allowed[1:]):
            raise bad
    elif ".." in allowed:
        low, high = (float(x) for x in allowed.split(".."))
        if not low <= value <= high:
            raise bad
    elif allowed == "a path" and not value:
        raise bad
    return value


def describe_allowed(kind: str, allowed: str | list[int] | list[str]) -> str:
    """Allowed values in words, e.g. 'one of base, legends' or 'an integer >=1'."""
    if isinstance(allowed, list):
        return "one of " + ", ".join(map(str, allowed))
    noun = {"int": "an integer", "float": "a number", "bool": "true or false",
            "str": "a string"}.get(kind, "a list")
    if allowed in ("flag",):
        return noun
    if allowed == "each >=1":
        return "a non-empty list of integers, each >=1"
    if allowed == "agent specs":
        return "a list of agent specs"
    if ".." in allowed:
        return f"{noun} in [{allowed.replace('..', ', ')}]"
    if allowed in ("finite", "a path"):
        return f"{'a finite number' if allowed == 'finite' else 'a non-empty path'}"
    return f"{noun} {allowed}"


def checkpoint_problem(path: str) -> str | None:
    """Why a checkpoint .zip cannot be resumed from (a short reason), or None when it can:
    it must open as a zip archive whose members all pass their checksums and hold a model."""
    try:
        check_archive(path)
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except OSError as exc:
        return first_line(exc)
    except ValueError as exc:  # no zip archive, or a member that fails its CRC-32
        return str(exc).removeprefix(f"{path}: ")
    if not {"data", "policy.pth"} <= names:
        return "it holds no MaskablePPO model (data, policy.pth)"
    return None


def _warn(line: str) -> None:
    print(f"moonriver-train: warning: {line}", file=sys.stderr, flush=True)


def resume_checkpoint(path: str, report: Callable[[str], None] = _warn) -> str:
    """The checkpoint to resume from: ``path`` itself when it is a file, else the newest
    readable ``ppo_N_steps.zip`` of the run directory (or its ``checkpoints/``); each newer
    one that cannot be read is skipped with one line to ``report``."""
    if os.path.isfile(path):
        problem = checkpoint_problem(path)
        if problem:
            raise ValueError(f"cannot resume from {path}: {problem} (give its run directory "
                             f"to resume from the newest readable checkpoint)")
        return path
    folder = os.path.join(path, "checkpoints")
    folder = folder if os.path.isdir(folder) else path
    if not os.path.isdir(folder):
        raise FileNotFoundError(2, "checkpoint to resume from not found", path)
    found = sorted((int(m[1]), name) for name in os.listdir(folder)
                   if (m := CHECKPOINT.fullmatch(name)))
    skipped: list[str] = []
    for _, name in reversed(found):
        candidate = os.path.join(folder, name)
        problem = checkpoint_problem(candidate)
        if problem is None:
            for line in skipped:
                report(f"{line}; resuming from {candidate}")
            return candidate
        skipped.append(f"skipped {candidate}: {problem}")
    what = f"{len(found)} checkpoints, none readable" if found else "no ppo_N_steps.zip"
    raise ValueError(f"cannot resume from {path}: {what} in {folder} (give a run directory "
                     f"or a checkpoint .zip of moonriver-train)")


def make_env(cfg: TrainConfig, rank: int, opponents: Any | None = None):
    """A thunk building one MoonRiver-v0 env (Monitor-wrapped) for a vectorised env."""

    def thunk():
        from moonriver_env.training.sb3.selfplay import OpponentPool, PoolOpponent
        from stable_baselines3.common.monitor import Monitor

        from moonriver_env.moonriver.gym_env import MoonRiverGymEnv

        opp = opponents
        if opp is None:
            pool = OpponentPool(list(cfg.opponents), baseline_prob=cfg.baseline_prob)
            opp = [PoolOpponent(pool) for _ in range(cfg.num_players - 1)]
        env = MoonRiverGymEnv(opponents=opp, num_players=cfg.num_players, mode=cfg.mode,
                              reward=cfg.reward, shaping=cfg.shaping, illegal="raise")
        env.reset(seed=cfg.seed * 1000 + rank)
        return Monitor(env)

    return thunk


def train(cfg: TrainConfig, resume: str | None = None):
    """Run MaskablePPO training; returns the model."""
    import torch
    from moonriver_env.training.sb3.callbacks import build_callbacks, save_model
    from moonriver_env.training.sb3.features import RanchCNN
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    started = time.perf_counter()
    if resume is not None:
        resume = resume_checkpoint(resume)
    os.makedirs(cfg.out, exist_ok=True)
    for folder in ("", "checkpoints", "snapshots"):  # what a killed run's writes left
        remove_partials(os.path.join(cfg.out, folder))
    atomic_text(os.path.join(cfg.out, "config.json"), json.dumps(asdict(cfg), indent=1))
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.torch_threads)
    vec_cls = SubprocVecEnv if cfg.vec_env == "subproc" else DummyVecEnv
    vec_env = vec_cls([make_env(cfg, i) for i in range(cfg.n_envs)])
    policy_kwargs: dict[str, Any] = {"net_arch": list(cfg.net_arch)}
    if cfg.policy == "cnn":
        policy_kwargs["features_extractor_class"] = RanchCNN
    if resume:
        model = MaskablePPO.load(resume, env=vec_env, device="cpu",
                                 tensorboard_log=os.path.join(cfg.out, "tb"))
    else:
        model = MaskablePPO("MlpPolicy", vec_env, learning_rate=cfg.learning_rate,
                            n_steps=cfg.n_steps, batch_size=cfg.batch_size,
                            n_epochs=cfg.n_epochs, gamma=cfg.gamma, gae_lambda=cfg.gae_lambda,
                            ent_coef=cfg.ent_coef, policy_kwargs=policy_kwargs, seed=cfg.seed,
                            device="cpu", tensorboard_log=os.path.join(cfg.out, "tb"),
                            verbose=0)
    # SB3 saves extra attributes with the model: what it plays, read back by the evaluators.
    model.moonriver = {  # type: ignore[attr-defined]
        "env": "MoonRiver-v0", "num_players": cfg.num_players, "mode": cfg.mode}
    start = time.perf_counter()
    model.learn(total_timesteps=cfg.timesteps, callback=build_callbacks(cfg, vec_env, started),
                reset_num_timesteps=resume is None)
    save_model(model, os.path.join(cfg.out, "final_model.zip"))
    with open(os.path.join(cfg.out, "train_time.json"), "w", encoding="utf-8") as fh:
        json.dump({"seconds": time.perf_counter() - start,
                   "timesteps": int(model.num_timesteps)}, fh)
    vec_env.close()
    return model


def build_parser() -> argparse.ArgumentParser:
    """The ``moonriver-train`` argument parser: one flag per setting, with its help."""
    parser = ArgumentParser(prog="moonriver-train", description=__doc__.splitlines()[0])
    parser.add_argument("--config", metavar="FILE",
                        help="TOML or JSON file of settings (flags override it; default: none)")
    parser.add_argument("--resume", metavar="CHECKPOINT",
                        help="checkpoint .zip to continue from, or a run directory: its newest "
                             "readable checkpoint (default: none)")
    for f in fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        text, allowed = SETTINGS[f.name]
        default = f.default
        shown = " ".join(map(str, default)) if isinstance(default, tuple) else default
        help_text = f"{text}; {describe_allowed(str(f.type), allowed)} (default: {shown})"
        help_text = help_text.replace("%", "%%")
        if f.type in ("bool",):
            parser.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction,
                                default=None, help=help_text)
        elif "tuple" in str(f.type):
            parser.add_argument(flag, dest=f.name, nargs="*" if f.name == "eval_opponents"
                                else "+", type=int if f.name == "net_arch" else str,
                                default=None, help=help_text, metavar="N" if
                                f.name == "net_arch" else "SPEC")
        else:
            kind = {"int": int, "float": float}.get(str(f.type), str)
            choices = allowed if isinstance(allowed, list) else None
            parser.add_argument(flag, dest=f.name, type=kind, default=None, choices=choices,
                                help=help_text)
    add_debug_flag(parser)
    return parser


@cli_main("moonriver-train")
def main(argv: list[str] | None = None) -> int:
    """CLI entry point (``moonriver-train``)."""
    args = vars(build_parser().parse_args(argv))
    config_path, resume = args.pop("config"), args.pop("resume")
    args.pop("debug")
    require(*TRAIN_MODULES, what="moonriver-train")
    cfg = TrainConfig.load(config_path, args)
    if resume is not None:
        resume = resume_checkpoint(resume)  # a bad path fails before anything starts
    print("training with", json.dumps(asdict(cfg)))
    train(cfg, resume=resume)
    print("saved", os.path.join(cfg.out, "final_model.zip"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
