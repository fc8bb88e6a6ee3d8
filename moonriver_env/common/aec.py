"""What the games' PettingZoo AEC environments share: spaces, agents, render, records."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from moonriver_env.common.cli import require
from moonriver_env.common.contract import ActionMask
from moonriver_env.common.gym import GameT, TableGameMixin
from moonriver_env.common.view import Encoder, View


class TableAECEnv(TableGameMixin[GameT], AECEnv):  # type: ignore[misc]  # pettingzoo: untyped
    """AEC base of a table game; a subclass sets ``encoder``, ``_no_moves``, ``reset``, ``step``."""

    encoder: Encoder[GameT]
    _no_moves: ActionMask

    def _init_table(self, num_players: int, views: Mapping[str, View], obs_size: int,
                    obs_high: float, num_actions: int) -> None:
        """Agents, spaces (observation vector and action mask), the generator; no game yet."""
        self._views = views
        self.possible_agents = [f"player_{p}" for p in range(num_players)]
        self.agent_ids = {a: p for p, a in enumerate(self.possible_agents)}
        obs_space = gymnasium.spaces.Dict({
            "observation": gymnasium.spaces.Box(0.0, obs_high, (obs_size,), np.float32),
            "action_mask": gymnasium.spaces.Box(0, 1, (num_actions,), np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces: dict[str, gymnasium.spaces.Discrete[np.int64]] = {
            a: gymnasium.spaces.Discrete(num_actions) for a in self.possible_agents}
        self.np_random, _ = seeding.np_random(None)
        self.game = None

    # ------------------------------------------------------------------ API
    def observation_space(self, agent: str) -> gymnasium.spaces.Dict:
        """Observation space of an agent (the same for all)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Discrete[np.int64]:
        """Action space of an agent (the same for all)."""
        return self.action_spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """Observation of an agent: the table from its point of view and its action mask."""
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before using the environment")
        p = self.agent_ids[agent]
        obs = self.encoder.encode(game, p)  # a fresh array: callers may keep it
        mask = game.legal_mask() if p == game.current_player else self._no_moves
        return {"observation": obs, "action_mask": mask}

    def state(self) -> np.ndarray:
        """Global state: the observation vector in player_0's (absolute) frame."""
        return self.encoder.encode(self._require_game(), 0)

    @property
    def observation_views(self) -> dict[str, tuple[int, int, tuple[int, ...]]]:
        """Named slices of the observation vector: name -> (start, stop, shape)."""
        return {v.name: (v.start, v.stop, v.shape) for v in self._views.values()}

    def render(self) -> str | np.ndarray | None:
        """Render the table: ansi text, an RGB image, or print the text ("human")."""
        game = self._require_game()
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode=...")
            return None
        if self.render_mode == "rgb_array":
            require("PIL", what="render_mode='rgb_array'")  # the 'images' extra, named if missing
            return self._table_image(game)
        text = game.table_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""

    def game_record(self, include_seed: bool = False) -> dict[str, Any]:
        """The current game's JSON record; the seed is left out while it runs unless asked for."""
        return self._require_game().to_record(include_seed)

    # -------------------------------------------------------------- helpers
    def _step_game(self) -> GameT:
        """The game a step plays in; RuntimeError before ``reset`` or once every agent has left."""
        game = self._require_game()
        if not self.agents:
            raise RuntimeError("the game is over and every agent has left; call reset()")
        return game

    def _deciding_game(self, action: object) -> GameT | None:
        """The game the selected agent decides in; None for a done agent (a dead step)."""
        game = self._step_game()
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return None
        return game

    def _start_episode(self, game: GameT) -> None:
        """Install a new game: every agent live, rewards and infos cleared, its player to act."""
        self.game = game
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[game.current_player]
