"""An SB3 ``VecEnv`` over batched games: ``make_sb3_vec_env``, for ``sb3_contrib.MaskablePPO``."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from moonriver_env.moonriver.batch.games import check_int
from moonriver_env.moonriver.batch.vector_env import MoonRiverVectorEnv, Opponents
from moonriver_env.moonriver.rules.config import GameConfig


def make_sb3_vec_env(num_envs: int, config: GameConfig | None = None, seat: int = 0,
                     opponents: Opponents = "random", reward: str = "win", threads: int = 1,
                     seed: int = 0, illegal: str = "raise", illegal_penalty: float = -1.0) -> Any:
    """An SB3 ``VecEnv`` over :class:`MoonRiverVectorEnv` (needs stable-baselines3)."""
    # Its first reset starts game g from seed + g; a later one moves every game on.
    venv = MoonRiverVectorEnv(num_envs, config, seat, opponents, reward, threads,
                              autoreset_mode=AutoresetMode.SAME_STEP, illegal=illegal,
                              illegal_penalty=illegal_penalty)
    return _sb3_class()(venv, check_int("seed", seed, 0))


@functools.cache
def _sb3_class() -> type:
    from stable_baselines3.common.vec_env import VecEnv

    class MoonRiverSB3VecEnv(VecEnv):
        """SB3 ``VecEnv`` over the batched core games (one learner seat per game)."""

        def __init__(self, venv: MoonRiverVectorEnv, seed: int) -> None:
            self.venv = venv
            self.autoreset_mode = venv.autoreset_mode
            self._seed: int | None = seed  # the next reset's seed; None: go on
            self._actions: np.ndarray | None = None
            super().__init__(venv.num_envs, venv.single_observation_space,
                             venv.single_action_space)

        def reset(self) -> np.ndarray:
            obs: np.ndarray  # the venv's observations: one array (no dict_observation here)
            obs, infos = self.venv.reset(seed=self._seed)
            self._seed = None  # a later reset plays each game's next episode
            # reset_infos as SB3's DummyVecEnv fills them
            self.reset_infos = [{"action_mask": mask} for mask in infos["action_mask"]]
            return obs

        def set_options(self, options: list[dict[str, Any]] | dict[str, Any] | None = None
                        ) -> None:
            """Only no options: the batched games take none (SB3 would drop them silently)."""
            rows = [options] if isinstance(options, dict) else list(options or ())
            if any(rows):
                raise ValueError(f"make_sb3_vec_env's VecEnv takes no reset options (its "
                                 f"games restart by reset(), seeds by seed()), got "
                                 f"{options!r:.80}")

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = actions

        def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
            assert self._actions is not None, "step_async comes first"
            obs, rew, term, _, infos = self.venv.step(self._actions)
            out: list[dict[str, Any]] = [{"action_mask": mask} for mask in infos["action_mask"]]
            for g in np.flatnonzero(term).tolist():
                out[g]["terminal_observation"] = infos["final_obs"][g]
            for g in np.flatnonzero(infos.get("illegal_action", ())).tolist():
                out[g]["illegal_action"] = True
            return obs, rew, term, out

        def close(self) -> None:
            pass

        def seed(self, seed: int | None = None) -> Sequence[int | None]:
            """The next reset starts game g from ``seed + g`` (None: it goes on)."""
            self._seed = None if seed is None else check_int("seed", seed, 0)
            return [None if seed is None else seed + g for g in range(self.num_envs)]

        def action_masks(self) -> np.ndarray:
            return self.venv.action_masks()

        def _indices_list(self, indices: Any) -> list[int]:
            return list(range(self.num_envs)) if indices is None else \
                list(np.arange(self.num_envs)[indices].reshape(-1))

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            """The listed rows' attribute (``MoonRiverVectorEnv.get_attr``: ROW_ATTRIBUTES)."""
            values = self.venv.get_attr(attr_name)
            return [values[g] for g in self._indices_list(indices)]

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            """Set a settable attribute of every row (the rows share one batch)."""
            if len(self._indices_list(indices)) != self.num_envs:
                raise ValueError(f"the rows share one batch: {attr_name} takes one value for "
                                 f"every row; set it with indices=None")
            self.venv.set_attr(attr_name, value)

        def env_method(self, method_name: str, *method_args: Any, indices: Any = None,
                       **method_kwargs: Any) -> list[Any]:
            """The listed rows' method (``MoonRiverVectorEnv.call``: ``action_masks``)."""
            # action_masks: one array for every row, MaskablePPO's call
            values: Any = (self.venv.action_masks() if method_name == "action_masks"
                           else self.venv.call(method_name, *method_args, **method_kwargs))
            return [values[g] for g in self._indices_list(indices)]

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            return [False for _ in self._indices_list(indices)]

    return MoonRiverSB3VecEnv
