"""Single-agent Gymnasium view of Circles (``CirclesFarWest-v0``): one learner seat; opponents
are agents, callables ``f(observation) -> id`` (one, or one per seat after the learner), or None
(uniform random). Reset, step and masks are ``common.gym.SeatGymEnv``'s; see docs/design.md."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from moonriver_env.common.gym import SeatGymEnv, check_illegal, check_seat

from .config import CirclesConfig
from .game import CirclesGame
from .observation import ObservationEncoder


class CirclesGymEnv(SeatGymEnv[CirclesGame]):
    """Circles: Far West for one learner against fixed opponents."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 2}

    def __init__(self, opponents: Any = None, seat: int | None = None, illegal: str = "raise",
                 illegal_penalty: float = -1.0, render_mode: str | None = None,
                 num_players: int = 4, **config: Any) -> None:
        try:  # a bad argument is raised from here, the caller's own call
            self.config = CirclesConfig(num_players=num_players, **config)
            n = self.config.num_players
            check_illegal(illegal)
            check_seat(seat, n)
            if render_mode is not None and render_mode not in self.metadata["render_modes"]:
                raise ValueError(f"render_mode must be None or one of "
                                 f"{self.metadata['render_modes']}, got {render_mode!r}")
        except (ValueError, TypeError) as exc:
            raise exc.with_traceback(None) from None
        self.illegal = illegal
        self.illegal_penalty = float(illegal_penalty)
        self.render_mode = render_mode
        self.fixed_seat = seat
        num_actions = CirclesGame(self.config, seed=0).num_actions
        self.action_space = gymnasium.spaces.Discrete(num_actions)  # before function opponents
        self.opponents = self._opponents(opponents, n - 1)
        self.encoder = ObservationEncoder(self.config)
        self.observation_space = gymnasium.spaces.Box(0.0, self.encoder.high,
                                                      (self.encoder.size,), np.float32)
        self.game: CirclesGame | None = None
        self.seat = 0

    def _table_image(self, game: CirclesGame) -> np.ndarray:
        from .image import table_image

        return table_image(game)

    def _new_game(self, seed: int) -> CirclesGame:
        return CirclesGame(self.config, seed=seed)

    def _final_reward(self, game: CirclesGame) -> float:
        return game.returns()[self.seat]

    def _end_info(self, game: CirclesGame) -> dict[str, Any]:
        return {"wealth": [game.wealth(p) for p in range(game.num_players)],
                "winners": game.winners()}
