"""Moon River for RLlib: the PettingZoo env through RLlib's PettingZooEnv, fixed opponents inside.

Every seat that RLlib sees is a learning seat; seats taken by fixed opponents (the project's
``Agent`` protocol: ``greedy``, ``mcts:50``, ``policy:PATH`` ...) are played inside the
environment by :class:`SeatedOpponents`, since such agents read the engine game, which an
RLModule never sees. RLlib receives only the learning seats' observations and rewards.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from pettingzoo.utils import BaseWrapper

from moonriver_env import moonriver_v0
from moonriver_env.observation import LazyObservation

ENV_NAME = "moonriver_v0"
ENV_KEYS = ("num_players", "mode", "reward", "shaping", "auto_forced")


class SeatedOpponents(BaseWrapper):
    """An AEC wrapper in which fixed opponents play some seats; only the other seats are agents.

    Each game, every seat is independently an opponent with probability ``opponent_prob``
    (its spec drawn uniformly from ``opponents``); at least one seat always stays a learning
    seat. Every draw comes from one seeded ``numpy.random.Generator``.
    """

    def __init__(self, env: Any, opponents: Sequence[str], opponent_prob: float = 0.5,
                 seed: int | None = None) -> None:
        from moonriver_env.agents.registry import make_agent

        super().__init__(env)
        if not opponents:
            raise ValueError("SeatedOpponents needs at least one opponent spec")
        if not 0.0 <= opponent_prob <= 1.0:
            raise ValueError(f"opponent_prob must be in [0, 1], got {opponent_prob!r}")
        self.specs = list(opponents)
        self.opponent_prob = float(opponent_prob)
        self.rng = np.random.default_rng(seed)
        seats = len(env.possible_agents)
        self.pool = {(spec, s): make_agent(spec) for spec in self.specs for s in range(seats)}
        self.seated: dict[str, Any] = {}  # agent id -> opponent playing that seat this game

    @property
    def agents(self) -> list[str]:
        """Learning seats still in the game (opponent seats are hidden)."""
        return [a for a in self.env.agents if a not in self.seated]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """A new game: draw the opponent seats, then play until a learning seat is to act."""
        if seed is not None:
            self.rng = np.random.default_rng([seed, 1])
        self.env.reset(seed=seed, options=options)
        ids = list(self.env.possible_agents)
        chosen = [a for a in ids if self.rng.random() < self.opponent_prob]
        if len(chosen) == len(ids):
            chosen.pop(int(self.rng.integers(len(chosen))))
        self.seated = {}
        for a in chosen:
            spec = self.specs[int(self.rng.integers(len(self.specs)))]
            agent = self.pool[(spec, ids.index(a))]
            agent.reset(int(self.rng.integers(2**31)))
            self.seated[a] = agent
        self._play_opponents()

    def step(self, action: Any) -> None:
        """Play a learning seat's action, then every opponent move up to the next learning seat."""
        self.env.step(action)
        self._play_opponents()

    def _play_opponents(self) -> None:
        raw = self.env.unwrapped
        while self.env.agents and self.env.agent_selection in self.seated:
            agent_id = self.env.agent_selection
            if self.env.terminations[agent_id] or self.env.truncations[agent_id]:
                self.env.step(None)
                continue
            game = raw.game
            observation = LazyObservation(raw.encoder, game, raw.agent_ids[agent_id])
            self.env.step(self.seated[agent_id].act(game, observation))


def make_aec_env(env_config: Mapping[str, Any]) -> Any:
    """The PettingZoo AEC env for an RLlib env config, with fixed opponents when asked for."""
    kwargs = {k: env_config[k] for k in ENV_KEYS if k in env_config}
    aec = moonriver_v0.env(**kwargs)
    opponents = list(env_config.get("opponents", ()))
    if not opponents:
        return aec
    worker = int(getattr(env_config, "worker_index", 0))
    vector = int(getattr(env_config, "vector_index", 0))
    seed = [int(env_config.get("seed", 0)), worker, vector]
    return SeatedOpponents(aec, opponents, float(env_config.get("opponent_prob", 0.5)),
                           seed=np.random.SeedSequence(seed).generate_state(1)[0])


def make_rllib_env(env_config: Mapping[str, Any]) -> Any:
    """RLlib's PettingZooEnv around the Moon River AEC env (the env creator RLlib calls).

    It runs in every env runner, so it also sets torch to one thread there.
    """
    import torch
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    torch.set_num_threads(int(env_config.get("torch_threads", 1)))
    aec = make_aec_env(env_config)
    env = PettingZooEnv(aec)
    # PettingZooEnv reads the seats from the first game's agents; with fixed opponents those
    # are only that game's learning seats, so declare every seat (any may learn next game).
    env.possible_agents = list(aec.possible_agents)
    env.observation_spaces = {a: aec.observation_space(a) for a in env.possible_agents}
    env.action_spaces = {a: aec.action_space(a) for a in env.possible_agents}
    env.observation_space = gymnasium.spaces.Dict(env.observation_spaces)
    env.action_space = gymnasium.spaces.Dict(env.action_spaces)
    return env


def register() -> None:
    """Register the env creator with Ray Tune's registry under ``moonriver_v0``."""
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_rllib_env)
