"""Single-agent Gymnasium view of Moon River: the learner plays one seat against opponents.

    import gymnasium, moonriver_env
    env = gymnasium.make("MoonRiver-v0", num_players=4, opponents=None, seat=None)

- Observation: the learner's flat float32 observation (docs/observation.md); the mask is
  ``env.action_masks()`` (read-only; under wrappers ``env.get_wrapper_attr("action_masks")()``)
  and ``info["action_mask"]`` (a copy).
- Action: ``Discrete(2710)``, the ids of docs/actions.md (Python or numpy integers, never
  coerced).
- Opponents: ``None`` (seeded uniform random), one agent (``act(game, observation) -> id``) or
  callable (``f(observation) -> id``) for all, or a list of one per opponent in seat order;
  ``gymnasium.make`` also takes agent names. They act inside ``step``.
- Seat: ``None`` draws the learner's player id each episode; an int fixes it.
- Reward: what the learner earned since its previous action (``reward=`` as in moonriver_v0,
  plus ``shaping``), so the end-of-game reward lands on its last transition.
- Illegal actions: ``illegal="raise"`` (IllegalActionError, game unchanged) or ``"penalty"``
  (the episode ends with ``illegal_penalty`` and ``info["illegal_action"] = True``).
- After ``terminated``, ``step`` raises RuntimeError until ``reset``.
- ``backend``: ``"core"`` (default) or ``"python"``, the same games. See docs/design.md.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from moonriver_env.common.gym import SeatGymEnv, check_illegal, check_seat
from moonriver_env.moonriver.aec_env import OBS_HIGH, check_number, check_options, final_rewards
from moonriver_env.moonriver.backend import DEFAULT_BACKEND, Encoder, check_backend, make_game
from moonriver_env.moonriver.contract import MoonRiverGame
from moonriver_env.moonriver.observation import SCORE_SCALE
from moonriver_env.moonriver.rules import NUM_ACTIONS, GameConfig


class MoonRiverGymEnv(SeatGymEnv[MoonRiverGame]):
    """Moon River for one learner against fixed or self-play opponents."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 2}

    def __init__(self, opponents: Any = None, seat: int | None = None, reward: str = "win",
                 shaping: float = 0.0, illegal: str = "raise", illegal_penalty: float = -1.0,
                 render_mode: str | None = None, num_players: int = 4, mode: str = "base",
                 backend: str = DEFAULT_BACKEND, **config: Any) -> None:
        try:  # a bad argument is raised from here, the caller's own call
            self.config = GameConfig(num_players=num_players, mode=mode, **config)
            self.backend = check_backend(backend)
            check_options(reward, shaping, render_mode, self.metadata["render_modes"])
            check_illegal(illegal)
            check_number("illegal_penalty", illegal_penalty, "the reward of an illegal action")
            check_seat(seat, self.config.num_players)
        except (ValueError, TypeError) as exc:
            raise exc.with_traceback(None) from None
        n = self.config.num_players
        self.reward_mode = reward
        self.shaping = float(shaping)
        self.illegal = illegal
        self.illegal_penalty = float(illegal_penalty)
        self.render_mode = render_mode
        self.fixed_seat = seat
        self.action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)  # before function opponents
        self.opponents = self._opponents(opponents, n - 1)
        self.encoder = Encoder()
        self.observation_space = gymnasium.spaces.Box(0.0, OBS_HIGH, (self.encoder.size,),
                                                      np.float32)
        self.game: MoonRiverGame | None = None
        self.seat = 0

    # --------------------------------------------------- what Moon River gives
    def _table_image(self, game: MoonRiverGame) -> np.ndarray:
        from moonriver_env.moonriver.render.image import table_image

        return table_image(game)

    def _new_game(self, seed: int) -> MoonRiverGame:
        return make_game(self.config, seed, self.backend)

    def _final_reward(self, game: MoonRiverGame) -> float:
        return final_rewards(game, self.reward_mode)[self.seat]

    def _end_info(self, game: MoonRiverGame) -> dict[str, Any]:
        return {"scores": [s.to_dict() for s in game.scores()], "winners": game.winners()}

    def _start_shaping(self) -> None:
        self._running = self._running_total()

    def _running_total(self) -> int:
        return self._require_game().running_scores()[self.seat].total if self.shaping else 0

    def _shaped(self) -> float:
        if not self.shaping:
            return 0.0
        now = self._running_total()
        delta, self._running = now - self._running, now
        return self.shaping * delta / SCORE_SCALE
