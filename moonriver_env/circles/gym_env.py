"""Single-agent Gymnasium view of Circles: the learner plays one seat against opponents.

    import gymnasium, moonriver_env
    env = gymnasium.make("CirclesFarWest-v0", num_players=3, opponents=None, seat=None)

- Observation: the learner's flat float32 observation (docs/circles_observation.md); the
  legal-action mask is ``env.action_masks()`` (what sb3-contrib's MaskablePPO asks for) and
  ``info["action_mask"]``.
- Action: ``Discrete(87)`` for the Far West ring (docs/circles.md).
- Opponents: ``None`` (uniform random legal actions from the env's generator), one agent or
  callable for every opponent, or a list with one per opponent in seat order after the learner.
  An agent has ``act(game, observation) -> id`` (and optionally ``reset(seed)``); a callable is
  ``f(observation) -> id``. Opponents act inside ``step`` until the learner decides again (a
  saloon bet can ask the learner to stake or throw during an opponent's turn) or the game ends.
- Seat: ``None`` draws the learner's player id each episode; an int fixes it.
- Reward: the end-of-game reward of circles_far_west_v0 (+1 sole winner, 0 shared win, -1
  otherwise) on the learner's last transition.
- Illegal actions: ``illegal="raise"`` (default) raises IllegalActionError and leaves the game
  unchanged; ``illegal="penalty"`` ends the episode with reward ``illegal_penalty`` and
  ``info["illegal_action"] = True`` (the Gymnasium and SB3 checkers sample unmasked actions).
- After ``terminated`` (game over or penalty) ``step`` raises RuntimeError until ``reset``, and
  ``action_masks()`` is all zeros.

This module imports gymnasium; the engine modules beside it do not.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from moonriver_env.common.gym import SeatGymEnv, check_illegal, check_seat
from moonriver_env.common.validate import action_id, check_seed

from .config import CirclesConfig
from .game import CirclesGame, IllegalActionError
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
        self._no_moves = np.zeros(num_actions, dtype=np.int8)
        self.game: CirclesGame | None = None
        self.seat = 0

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a game; the learner's seat and the game seed come from the env's generator."""
        super().reset(seed=check_seed(seed))
        self.game = CirclesGame(self.config, seed=int(self.np_random.integers(2**63 - 1)))
        self._seat_learner()
        self._play_opponents()
        if self.game.is_over:
            raise RuntimeError("the game ended before the learner's first decision")
        self._episode_over = False
        return self._observe(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play the learner's action, then the opponents' until the learner decides again."""
        game = self._live_game()
        try:
            game.apply(action_id(action, int(self.action_space.n)))
        except IllegalActionError:
            if self.illegal == "raise":
                raise
            self._episode_over = True
            info = self._info()
            info["illegal_action"] = True
            return self._observe(), self.illegal_penalty, True, False, info
        self._play_opponents()
        self._episode_over = game.is_over
        reward = game.returns()[self.seat]
        return self._observe(), reward, game.is_over, False, self._info()

    def action_masks(self) -> np.ndarray:
        """Legal-action mask of the learner (all zeros once the episode is over); a writable
        copy, since torch warns about read-only arrays (the engine's masks are shared)."""
        game = self._require_game()
        live = not self._episode_over and game.current_player == self.seat
        mask = game.legal_mask() if live else self._no_moves
        return mask.copy()

    def _table_image(self, game: CirclesGame) -> np.ndarray:
        from .image import table_image

        return table_image(game)

    def _observe(self) -> np.ndarray:
        return self.encoder.encode(self._require_game(), self.seat)

    def _info(self) -> dict[str, Any]:
        game = self._require_game()
        info: dict[str, Any] = {"action_mask": self.action_masks(), "seat": self.seat}
        if game.is_over:
            info["wealth"] = [game.wealth(p) for p in range(game.num_players)]
            info["winners"] = game.winners()
        return info

    def _play_opponents(self) -> None:
        game = self._require_game()
        n = self.config.num_players
        while not game.is_over and game.current_player != self.seat:
            p = game.current_player
            opponent = self.opponents[(p - self.seat - 1) % n]
            obs = {"observation": self.encoder.encode(game, p),
                   "action_mask": game.legal_mask()}
            game.apply(opponent.act(game, obs))
