"""Train MaskablePPO (sb3-contrib) on the MoonRiver-v0 wrapper, with optional self-play.

    moonriver-train --timesteps 2000000 --out runs/ppo4p
    moonriver-train --config my.toml --resume runs/ppo4p/checkpoints/ppo_400000_steps.zip

Settings come from the defaults of ``TrainConfig``, then a TOML or JSON file (``--config``),
then command-line flags. The run directory gets the resolved config (``config.json``),
checkpoints, TensorBoard logs (``tb/``), Monitor logs, periodic evaluations against fixed
baselines (``eval_<agent>/evaluations.npz``, masked like ``MaskableEvalCallback``), the final
model (``final_model.zip``) and, with self-play, the snapshots (``snapshots/``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import asdict, dataclass, fields
from typing import Any


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
        values: dict[str, Any] = {}
        if path:
            with open(path, "rb") as fh:
                if path.endswith(".toml"):
                    import tomllib

                    values = tomllib.load(fh)
                else:
                    values = json.load(fh)
        values.update({k: v for k, v in overrides.items() if v is not None})
        known = {f.name for f in fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"unknown training settings {sorted(unknown)}; allowed: "
                             f"{sorted(known)}")
        for key in ("net_arch", "opponents", "eval_opponents"):
            if key in values:
                values[key] = tuple(values[key])
        cfg = cls(**values)
        if cfg.policy not in ("mlp", "cnn"):
            raise ValueError(f"policy must be 'mlp' or 'cnn', got {cfg.policy!r}")
        if cfg.vec_env not in ("dummy", "subproc"):
            raise ValueError(f"vec_env must be 'dummy' or 'subproc', got {cfg.vec_env!r}")
        return cfg


def make_env(cfg: TrainConfig, rank: int, opponents: Any | None = None):
    """A thunk building one MoonRiver-v0 env (Monitor-wrapped) for a vectorised env."""

    def thunk():
        from moonriver_env.training.selfplay import OpponentPool, PoolOpponent
        from stable_baselines3.common.monitor import Monitor

        from moonriver_env.gym_env import MoonRiverGymEnv

        opp = opponents
        if opp is None:
            pool = OpponentPool(list(cfg.opponents), baseline_prob=cfg.baseline_prob)
            opp = [PoolOpponent(pool) for _ in range(cfg.num_players - 1)]
        env = MoonRiverGymEnv(opponents=opp, num_players=cfg.num_players, mode=cfg.mode,
                              reward=cfg.reward, shaping=cfg.shaping, illegal="raise")
        env.reset(seed=cfg.seed * 1000 + rank)
        return Monitor(env)

    return thunk


def add_snapshot(vec_env, path: str) -> None:
    """Add a snapshot to the opponent pool of every env (in this or worker processes)."""
    vec_env.env_method("notify_opponents", "add_snapshot", path)


def win_rate(model, cfg: TrainConfig, opponents: list[Any], games: int, seed: int) -> float:
    """Learner's win rate (shared wins split) over ``games`` masked, deterministic games."""
    from moonriver_env.gym_env import MoonRiverGymEnv

    env = MoonRiverGymEnv(opponents=opponents, num_players=cfg.num_players, mode=cfg.mode)
    wins = 0.0
    for g in range(games):
        obs, info = env.reset(seed=seed + g)
        done = False
        while not done:
            action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
            obs, _, done, _, info = env.step(int(action))
        if info["seat"] in info["winners"]:
            wins += 1 / len(info["winners"])
    return wins / games


def build_callbacks(cfg: TrainConfig, vec_env) -> list:
    """Checkpoints, evaluations against fixed baselines, and the self-play pool schedule."""
    from moonriver_env.agents.registry import make_agent
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
    from stable_baselines3.common.callbacks import BaseCallback, CheckpointCallback
    from stable_baselines3.common.monitor import Monitor

    from moonriver_env.gym_env import MoonRiverGymEnv

    every = max(1, cfg.eval_every // cfg.n_envs)
    callbacks: list = [CheckpointCallback(max(1, cfg.checkpoint_every // cfg.n_envs),
                                          os.path.join(cfg.out, "checkpoints"), "ppo")]
    for spec in cfg.eval_opponents:
        opponents = [make_agent(spec, seed=cfg.seed + i) for i in range(cfg.num_players - 1)]
        eval_env = Monitor(MoonRiverGymEnv(opponents=opponents, num_players=cfg.num_players,
                                           mode=cfg.mode, reward="win"))
        eval_env.reset(seed=cfg.seed + 10_000)
        callbacks.append(MaskableEvalCallback(
            eval_env, n_eval_episodes=cfg.eval_games, eval_freq=every,
            log_path=os.path.join(cfg.out, f"eval_{spec.replace(':', '-')}"),
            best_model_save_path=None, deterministic=True, verbose=0))

    class SelfPlay(BaseCallback):
        """Adds a snapshot when the learner beats the current opponent mix often enough."""

        def __init__(self) -> None:
            super().__init__()
            self.next_check = cfg.snapshot_every
            self.snapshots = 0

        def _on_step(self) -> bool:
            if self.num_timesteps < self.next_check:
                return True
            self.next_check += cfg.snapshot_every
            from moonriver_env.training.selfplay import OpponentPool, PoolOpponent

            pool = OpponentPool(list(cfg.opponents), cfg.baseline_prob,
                                snapshots=self._paths())
            rate = win_rate(self.model, cfg, [PoolOpponent(pool)
                                              for _ in range(cfg.num_players - 1)],
                            cfg.snapshot_games, seed=cfg.seed + 50_000 + self.num_timesteps)
            self.logger.record("selfplay/win_rate_vs_pool", rate)
            if rate >= cfg.snapshot_threshold:
                path = os.path.join(cfg.out, "snapshots", f"snapshot_{self.snapshots}.zip")
                self.model.save(path)
                self.snapshots += 1
                add_snapshot(vec_env, path)
            self.logger.record("selfplay/pool_snapshots", self.snapshots)
            return True

        def _paths(self) -> list[str]:
            return [os.path.join(cfg.out, "snapshots", f"snapshot_{i}.zip")
                    for i in range(self.snapshots)]

    class TimeLimit(BaseCallback):
        """Stops learning once ``max_minutes`` of wall-clock time have passed."""

        def __init__(self) -> None:
            super().__init__()
            self.deadline = time.perf_counter() + 60 * cfg.max_minutes

        def _on_step(self) -> bool:
            return time.perf_counter() < self.deadline

    if cfg.self_play:
        callbacks.append(SelfPlay())
    if cfg.max_minutes > 0:
        callbacks.append(TimeLimit())
    return callbacks


def train(cfg: TrainConfig, resume: str | None = None):
    """Run MaskablePPO training; returns the model."""
    import torch
    from moonriver_env.training.features import RanchCNN
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    os.makedirs(cfg.out, exist_ok=True)
    with open(os.path.join(cfg.out, "config.json"), "w", encoding="utf-8") as fh:
        json.dump(asdict(cfg), fh, indent=1)
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
    start = time.perf_counter()
    model.learn(total_timesteps=cfg.timesteps, callback=build_callbacks(cfg, vec_env),
                progress_bar=cfg.progress, reset_num_timesteps=resume is None)
    model.save(os.path.join(cfg.out, "final_model"))
    with open(os.path.join(cfg.out, "train_time.json"), "w", encoding="utf-8") as fh:
        json.dump({"seconds": time.perf_counter() - start,
                   "timesteps": int(model.num_timesteps)}, fh)
    vec_env.close()
    return model


def main(argv: list[str] | None = None) -> int:
    """CLI entry point (``moonriver-train``)."""
    parser = argparse.ArgumentParser(prog="moonriver-train", description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="TOML or JSON file of TrainConfig settings")
    parser.add_argument("--resume", help="checkpoint .zip to continue from")
    for f in fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        if f.type in ("bool",):
            parser.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction,
                                default=None)
        elif "tuple" in str(f.type):
            elem = int if f.name == "net_arch" else str
            parser.add_argument(flag, dest=f.name, nargs="+", type=elem, default=None)
        else:
            kind = {"int": int, "float": float}.get(str(f.type), str)
            parser.add_argument(flag, dest=f.name, type=kind, default=None)
    args = vars(parser.parse_args(argv))
    config_path, resume = args.pop("config"), args.pop("resume")
    cfg = TrainConfig.load(config_path, args)
    print("training with", json.dumps(asdict(cfg)))
    train(cfg, resume=resume)
    print("saved", os.path.join(cfg.out, "final_model.zip"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
