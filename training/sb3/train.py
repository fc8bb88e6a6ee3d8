"""Train MaskablePPO (sb3-contrib) on the MoonRiver-v0 wrapper, with optional self-play.

See docs/training.md ("Stable-Baselines3 MaskablePPO")."""

from __future__ import annotations

import argparse
import json
import os
import re
import time
import zipfile
from collections.abc import Callable
from dataclasses import Field, asdict, fields
from typing import Any

from moonriver_env.training.atomic import atomic_text, check_archive, first_line, remove_partials
from moonriver_env.training.sb3.config import SETTINGS, TrainConfig, describe_allowed
from moonriver_env.training.settings import add_setting_flags, warner

from moonriver_env.common.cli import ArgumentParser, add_debug_flag, cli_main, require

TRAIN_MODULES = ("torch", "stable_baselines3", "sb3_contrib", "tensorboard", "tqdm")
CHECKPOINT = re.compile(r"ppo_(\d+)_steps\.zip")  # checkpoints/ names, by timestep count
_warn = warner("moonriver-train")


def checkpoint_problem(path: str) -> str | None:
    """Why a checkpoint .zip cannot be resumed from (a short reason), or None when it can."""
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


def resume_checkpoint(path: str, report: Callable[[str], None] = _warn) -> str:
    """``path`` itself when it is a file, else the run directory's newest readable checkpoint."""
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


def _help(f: Field[Any]) -> str:
    text, allowed = SETTINGS[f.name]
    shown = " ".join(map(str, f.default)) if isinstance(f.default, tuple) else f.default
    return f"{text}; {describe_allowed(str(f.type), allowed)} (default: {shown})"


def _options(f: Field[Any]) -> dict[str, Any]:
    if "tuple" in str(f.type):
        return {"nargs": "*" if f.name == "eval_opponents" else "+",
                "metavar": "N" if f.name == "net_arch" else "SPEC"}
    allowed = SETTINGS[f.name][1]
    return {"choices": allowed if isinstance(allowed, list) else None}


def build_parser() -> argparse.ArgumentParser:
    """The ``moonriver-train`` argument parser: one flag per setting, with its help."""
    parser = ArgumentParser(prog="moonriver-train", description=__doc__.splitlines()[0])
    parser.add_argument("--config", metavar="FILE",
                        help="TOML or JSON file of settings (flags override it; default: none)")
    parser.add_argument("--resume", metavar="CHECKPOINT",
                        help="checkpoint .zip to continue from, or a run directory: its newest "
                             "readable checkpoint (default: none)")
    add_setting_flags(parser, fields(TrainConfig), _help, options=_options)
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
