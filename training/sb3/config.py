"""Every setting of a MaskablePPO run (``TrainConfig``), with its help, allowed values and check."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from moonriver_env.training.settings import KIND_WORDS, is_kind, load_settings


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
    if kind.startswith("tuple"):
        elem = "int" if "int" in kind else "str"
        if not isinstance(value, (list, tuple)) or not all(is_kind(elem, v) for v in value):
            raise bad
        if elem == "int" and (not value or min(value) < 1):
            raise bad
        if elem == "str":
            if name == "opponents" and not value:
                raise bad
            from moonriver_env.agents.registry import make_agent

            for spec in value:
                make_agent(spec)  # an unknown spec says which forms are allowed
        return tuple(value)
    if not is_kind(kind, value) or (kind == "float" and not math.isfinite(value)):
        raise bad
    if kind == "float":
        value = float(value)
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
    noun = KIND_WORDS.get(kind, "a list")
    if ".." in allowed:
        return f"{noun} in [{allowed.replace('..', ', ')}]"
    return {"flag": noun, "each >=1": "a non-empty list of integers, each >=1",
            "agent specs": "a list of agent specs", "finite": "a finite number",
            "a path": "a non-empty path"}.get(allowed, f"{noun} {allowed}")
