"""The SB3 recipe's callbacks: checkpoints, evaluations, self-play, time limit, progress bar."""

from __future__ import annotations

import os
import re
import time
from typing import TYPE_CHECKING, Any

from moonriver_env.agents.registry import make_agent
from moonriver_env.training.atomic import atomic_save
from moonriver_env.training.sb3.selfplay import OpponentPool, PoolOpponent
from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
from stable_baselines3.common.callbacks import BaseCallback, CheckpointCallback
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import VecEnv

from moonriver_env.common.gym import ActionId
from moonriver_env.moonriver.gym_env import MoonRiverGymEnv

if TYPE_CHECKING:
    import numpy as np
    from moonriver_env.training.sb3.config import TrainConfig


def save_model(model: Any, path: str) -> str:
    """``model.save`` to ``path`` atomically (complete or absent); returns the path."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    return atomic_save(path, model.save)


class Checkpoints(CheckpointCallback):
    """SB3's checkpoints (``PREFIX_N_steps.zip`` every ``save_freq`` calls), written atomically."""

    def _on_step(self) -> bool:
        if self.n_calls % self.save_freq == 0:
            save_model(self.model, self._checkpoint_path(extension="zip"))
        return True


def win_rate(model: Any, cfg: TrainConfig, opponents: list[Any], games: int, seed: int) -> float:
    """Learner's win rate (shared wins split) over ``games`` masked, deterministic games."""
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


def projected_timesteps(target: int, done: int, elapsed: float, limit_seconds: float) -> int:
    """Timesteps the run will reach: ``target``, or what the current rate reaches by the limit."""
    if limit_seconds <= 0 or done <= 0 or elapsed <= 0:
        return target
    reach = done + done / elapsed * max(0.0, limit_seconds - elapsed)
    return max(done, min(target, int(reach)))


class Evaluation(MaskableEvalCallback):
    """Masked evaluation at the first step, every ``eval_every`` timesteps and at the end."""

    def _on_step(self) -> bool:
        if self.n_calls == 1:
            return self._evaluate_now()
        return super()._on_step()

    def _on_training_end(self) -> None:
        if not self.evaluations_timesteps or \
                self.evaluations_timesteps[-1] != self.num_timesteps:
            self._evaluate_now()

    def _evaluate_now(self) -> bool:
        every, self.eval_freq = self.eval_freq, 1
        try:
            return super()._on_step()
        finally:
            self.eval_freq = every


class SelfPlay(BaseCallback):
    """Adds a snapshot (``snapshots/snapshot_N.zip``) when the learner beats the opponent mix."""

    def __init__(self, cfg: TrainConfig, vec_env: VecEnv) -> None:
        super().__init__()
        self.cfg, self.vec_env = cfg, vec_env
        self.next_check = cfg.snapshot_every
        self.paths: list[str] = []

    def _on_step(self) -> bool:
        cfg = self.cfg
        if self.num_timesteps < self.next_check:
            return True
        self.next_check += cfg.snapshot_every
        pool = OpponentPool(list(cfg.opponents), cfg.baseline_prob, snapshots=self.paths)
        rate = win_rate(self.model, cfg, [PoolOpponent(pool) for _ in range(cfg.num_players - 1)],
                        cfg.snapshot_games, seed=cfg.seed + 50_000 + self.num_timesteps)
        self.logger.record("selfplay/win_rate_vs_pool", rate)
        if rate >= cfg.snapshot_threshold:
            path = os.path.join(cfg.out, "snapshots", f"snapshot_{self.num_timesteps}.zip")
            self.paths.append(save_model(self.model, path))
            # to the opponent pool of every env (in this or worker processes)
            self.vec_env.env_method("notify_opponents", "add_snapshot", path)
        self.logger.record("selfplay/pool_snapshots", len(self.paths))
        return True


class TimeLimit(BaseCallback):
    """Stops learning once the wall clock (``time.perf_counter``) reaches ``deadline``."""

    def __init__(self, deadline: float) -> None:
        super().__init__()
        self.deadline = deadline

    def _on_step(self) -> bool:
        return time.perf_counter() < self.deadline


class Progress(BaseCallback):
    """A tqdm bar whose total is ``projected_timesteps`` (it respects ``max_minutes``)."""

    def __init__(self, max_minutes: float, started: float) -> None:
        super().__init__()
        self.max_minutes, self.started = max_minutes, started

    def _on_training_start(self) -> None:
        from tqdm import tqdm

        self.first = self.model.num_timesteps
        self.target = self.locals["total_timesteps"] - self.first
        limit = f" (limit {self.max_minutes:g} min)" if self.max_minutes > 0 else ""
        self.bar = tqdm(total=self.target, unit="step", unit_scale=True, dynamic_ncols=True,
                        desc="timesteps" + limit)

    def _on_step(self) -> bool:
        done = self.model.num_timesteps - self.first
        self.bar.total = projected_timesteps(self.target, done,
                                             time.perf_counter() - self.started,
                                             60 * self.max_minutes)
        self.bar.update(done - self.bar.n)
        return True

    def _on_training_end(self) -> None:
        self.bar.total = self.bar.n
        self.bar.refresh()
        self.bar.close()


def build_callbacks(cfg: TrainConfig, vec_env: VecEnv,
                    started: float | None = None) -> list[BaseCallback]:
    """The run's callbacks; ``started`` is the run's start on ``time.perf_counter``."""
    started = time.perf_counter() if started is None else started
    every = max(1, cfg.eval_every // cfg.n_envs)
    callbacks: list[BaseCallback] = [Checkpoints(max(1, cfg.checkpoint_every // cfg.n_envs),
                                   os.path.join(cfg.out, "checkpoints"), "ppo")]
    for spec in cfg.eval_opponents:
        opponents = [make_agent(spec, seed=cfg.seed + i) for i in range(cfg.num_players - 1)]
        eval_env: Monitor[np.ndarray, ActionId] = Monitor(MoonRiverGymEnv(
            opponents=opponents, num_players=cfg.num_players, mode=cfg.mode, reward="win"))
        eval_env.reset(seed=cfg.seed + 10_000)
        callbacks.append(Evaluation(
            eval_env, n_eval_episodes=cfg.eval_games, eval_freq=every,
            log_path=os.path.join(cfg.out, "eval_" + re.sub(r"[^\w.-]+", "-", spec)),
            best_model_save_path=None, deterministic=True, verbose=0))
    if cfg.self_play:
        callbacks.append(SelfPlay(cfg, vec_env))
    if cfg.max_minutes > 0:
        callbacks.append(TimeLimit(started + 60 * cfg.max_minutes))
    if cfg.progress:
        callbacks.append(Progress(cfg.max_minutes, started))
    return callbacks
