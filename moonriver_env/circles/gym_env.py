"""Single-agent Gymnasium view of Circles: the learner plays one seat against opponents.

    import gymnasium, moonriver_env
    env = gymnasium.make("CirclesFarWest-v0", num_players=3, opponents=None, seat=None)

- Observation: the learner's flat float32 observation (docs/circles_observation.md); the
  legal-action mask is ``env.action_masks()`` (what sb3-contrib's MaskablePPO asks for;
  read-only) and ``info["action_mask"]`` (a copy).
- Action: ``Discrete(87)`` for the Far West ring (docs/circles.md).
- Opponents: ``None`` (uniform random legal actions from the env's generator), one agent or
  callable for every opponent, or a list with one per opponent in seat order after the learner.
  An agent has ``act(game, observation) -> id`` (and optionally ``reset(seed)``); a callable is
  ``f(observation) -> id``; ``gymnasium.make`` also takes agent names (``"heuristic"``,
  ``"random"``: ``moonriver_env.agents.gym_entry``). Opponents act inside ``step`` until the
  learner decides again (a saloon bet can ask the learner to stake or throw during an
  opponent's turn) or the game ends.
- Seat: ``None`` draws the learner's player id each episode; an int fixes it.
- Reward: the end-of-game reward of circles_far_west_v0 (+1 sole winner, 0 shared win, -1
  otherwise) on the learner's last transition.
- Illegal actions: ``illegal="raise"`` (default) raises IllegalActionError and leaves the game
  unchanged; ``illegal="penalty"`` ends the episode with reward ``illegal_penalty`` and
  ``info["illegal_action"] = True`` (the Gymnasium and SB3 checkers sample unmasked actions).
- After ``terminated`` (game over or penalty) ``step`` raises RuntimeError until ``reset``, and
  ``action_masks()`` is all ones (a vector env's autoreset ignores that step's action).
  Reset, step and masks are ``common.gym.SeatGymEnv``'s, the same as Moon River's single-agent
  env.

This module imports gymnasium; the engine modules beside it do not.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from moonriver_env.common.gym import SeatGymEnv, check_illegal, check_seat
from moonriver_env.common.validate import action_id

from .config import CirclesConfig
from .game import CirclesGame
from .observation import ObservationEncoder


class _Function:
    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def act(self, game: CirclesGame, observation: dict[str, np.ndarray]) -> int:
        return action_id(self.fn(observation), game.num_actions)  # refused, never coerced


class CirclesGymEnv(SeatGymEnv[CirclesGame]):
    """Circles: Far West for one learner against fixed opponents."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 2}
    function_opponent = _Function

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
        self.opponents = self._opponents(opponents, n - 1)
        self.encoder = ObservationEncoder(self.config)
        num_actions = CirclesGame(self.config, seed=0).num_actions
        self.observation_space = gymnasium.spaces.Box(0.0, self.encoder.high,
                                                      (self.encoder.size,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(num_actions)
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
