"""Single-agent Gymnasium view of Moon River: the learner plays one seat against opponents.

    import gymnasium, moonriver_env
    env = gymnasium.make("MoonRiver-v0", num_players=4, opponents=None, seat=None)

- Observation: the learner's flat float32 observation (docs/observation.md); the legal-action
  mask is ``env.action_masks()`` (read-only) and ``info["action_mask"]`` (a copy).
  ``gymnasium.make`` returns the environment itself (it enforces reset-before-step on its
  own, so no ``OrderEnforcing`` wrapper hides ``action_masks``); under other wrappers
  (``max_episode_steps``, ``Monitor``) reach it with ``env.get_wrapper_attr("action_masks")()``,
  which is what sb3-contrib's ``get_action_masks`` and ``VecEnv.env_method`` call.
- Action: ``Discrete(2710)``, the ids of docs/actions.md: a Python or numpy integer (a 0-d
  integer array too). A bool, float, str or other value is an illegal action, never coerced.
- Opponents: ``None`` (uniform random legal actions, seeded from the env), one agent or
  callable for every opponent, or a list with one per opponent in seat order after the
  learner. An agent has ``act(game, observation) -> id`` (and optionally ``reset(seed)``, see
  moonriver_env.agents.Agent); a callable is ``f(observation) -> id``. ``gymnasium.make``
  also takes agent names (``"greedy"``, ``"mcts:200"``; a name gives each opponent its own
  agent: ``moonriver_env.agents.gym_entry``); the class itself takes agents
  (``moonriver_env.agents.make_agent(name)``): environments never import agents.
  Opponents act inside ``step`` until it is the learner's turn again or the game ends.
- Seat: ``None`` draws the learner's player id each episode; an int fixes it.
- Reward: everything the learner earned since its previous action (final reward by
  ``reward=`` as in moonriver_v0, plus optional ``shaping``), so the end-of-game reward lands
  on its last transition even when opponents finish the game.
- Illegal actions: ``illegal="raise"`` (default) raises IllegalActionError and leaves the game
  unchanged; ``illegal="penalty"`` ends the episode with reward ``illegal_penalty`` (a finite
  number) and ``info["illegal_action"] = True``.
- After ``terminated`` (game over or penalty) ``step`` raises RuntimeError until ``reset``.
- Backend: ``backend="core"`` (default, the compiled rules) or ``"python"`` (the reference
  engine): the same games (``moonriver_env.backend``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np

from moonriver_env.backend import DEFAULT_BACKEND, Encoder, check_backend, make_game
from moonriver_env.common.gym import SeatGymEnv, check_illegal, check_seat
from moonriver_env.engine import NUM_ACTIONS, Game, GameConfig, IllegalActionError
from moonriver_env.moonriver_v0 import (
    OBS_HIGH,
    action_id,
    check_number,
    check_options,
    check_seed,
    final_rewards,
)
from moonriver_env.observation import SCORE_SCALE, LazyObservation


class _FunctionOpponent:
    def __init__(self, fn: Callable[[dict[str, np.ndarray]], int]) -> None:
        self.fn = fn

    def act(self, game: Game, observation: dict[str, np.ndarray]) -> int:
        return action_id(self.fn(observation))  # a bad value is refused, never coerced


class MoonRiverGymEnv(SeatGymEnv[Game]):
    """Moon River for one learner against fixed or self-play opponents."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 2}
    function_opponent = _FunctionOpponent

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
        self.opponents = self._opponents(opponents, n - 1)
        self.encoder = Encoder()
        self.observation_space = gymnasium.spaces.Box(0.0, OBS_HIGH, (self.encoder.size,),
                                                      np.float32)
        self.action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self.game: Game | None = None
        self.seat = 0
        self._episode_over = False

    # ------------------------------------------------------------------ API
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a game; the learner's seat and the game seed come from the env's generator."""
        super().reset(seed=check_seed(seed))
        self.game = make_game(self.config, int(self.np_random.integers(2**63 - 1)), self.backend)
        self._seat_learner()
        self._running = self._running_total()
        reward = self._play_opponents()
        if self.game.is_over:  # cannot happen with real rules; kept for custom data files
            raise RuntimeError("the game ended before the learner's first decision")
        self._pending_reward = reward
        self._episode_over = False
        return self._observe(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play the learner's action, then the opponents' until the learner's next turn."""
        game = self._live_game()
        try:
            game.apply(action_id(action))
        except IllegalActionError:
            if self.illegal == "raise":
                raise
            self._episode_over = True
            reward, self._pending_reward = self._pending_reward, 0.0
            info = self._info()
            info["illegal_action"] = True
            return self._observe(), reward + self.illegal_penalty, True, False, info
        reward, self._pending_reward = self._pending_reward, 0.0
        reward += self._shaped()
        reward += self._play_opponents()
        if game.is_over:
            self._episode_over = True
            reward += final_rewards(game, self.reward_mode)[self.seat]
        return self._observe(), float(reward), game.is_over, False, self._info()

    def action_masks(self) -> np.ndarray:
        """Legal-action mask of the learner: read-only; once the episode is over a fresh
        all-zeros array that nothing can make writable."""
        game = self._require_game()
        if self._episode_over or game.current_player != self.seat:
            return np.frombuffer(bytes(NUM_ACTIONS), dtype=np.int8)
        return game.legal_mask()

    def notify_opponents(self, method: str, *args: Any) -> None:
        """Call ``method(*args)`` on every opponent that has it (e.g. a self-play pool update,
        through ``VecEnv.env_method("notify_opponents", "add_snapshot", path)``)."""
        for opponent in self.opponents:
            hook = getattr(opponent, method, None)
            if callable(hook):
                hook(*args)

    # -------------------------------------------------------------- helpers
    def _table_image(self, game: Game) -> np.ndarray:
        from moonriver_env.render import table_image

        return table_image(game)

    def _observe(self) -> np.ndarray:
        return self.encoder.encode(self._require_game(), self.seat)  # fresh array

    def _info(self) -> dict[str, Any]:
        game = self._require_game()
        info: dict[str, Any] = {"action_mask": self.action_masks().copy(), "seat": self.seat}
        if game.is_over:
            info["scores"] = [s.to_dict() for s in game.scores()]
            info["winners"] = game.winners()
        return info

    def _running_total(self) -> int:
        return self._require_game().running_scores()[self.seat].total if self.shaping else 0

    def _shaped(self) -> float:
        if not self.shaping:
            return 0.0
        now = self._running_total()
        delta, self._running = now - self._running, now
        return self.shaping * delta / SCORE_SCALE

    def _play_opponents(self) -> float:
        """Step opponents until the learner decides or the game ends; return shaped reward."""
        game = self._require_game()
        n = self.config.num_players
        reward = 0.0
        while not game.is_over and game.current_player != self.seat:
            p = game.current_player
            opponent = self.opponents[(p - self.seat - 1) % n]
            game.apply(opponent.act(game, LazyObservation(self.encoder, game, p)))
            reward += self._shaped()
        return reward
