"""What the games' single-agent Gymnasium views share: opponents, the learner's seat, reset,
step, masks and render."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar

import gymnasium
import numpy as np

from .cli import require
from .contract import TableGame
from .errors import IllegalActionError
from .validate import action_id, check_seed
from .view import Encoder, LazyObservation

ILLEGAL_POLICIES = ("raise", "penalty")
GameT = TypeVar("GameT", bound=TableGame)
GameT_contra = TypeVar("GameT_contra", bound=TableGame, contravariant=True)
ActionId = int | np.integer  # what a step takes: a Python or numpy integer id


class Opponent(Protocol[GameT_contra]):
    """What plays an opponent's seat: an action id for the game and the player's observation."""

    def act(self, game: GameT_contra, observation: Mapping[str, np.ndarray]) -> int:
        """The chosen action id."""


class UniformOpponent:
    """Default opponent: a uniformly random legal action from the env's generator."""

    name = "random"

    def __init__(self, env: gymnasium.Env[np.ndarray, ActionId]) -> None:
        self.env = env

    def act(self, game: TableGame, observation: Mapping[str, np.ndarray]) -> int:
        legal = observation["action_mask"].view(np.bool_).nonzero()[0]
        return int(legal[self.env.np_random.integers(legal.size)])


class FunctionOpponent:
    """A callable ``f(observation) -> action id`` as an opponent (bad ids refused, not coerced)."""

    def __init__(self, fn: Callable[[Mapping[str, np.ndarray]], object], num_actions: int) -> None:
        self.fn, self.num_actions = fn, num_actions

    def act(self, game: TableGame, observation: Mapping[str, np.ndarray]) -> int:
        return action_id(self.fn(observation), self.num_actions)


def check_illegal(illegal: str) -> None:
    """An illegal-action policy of ILLEGAL_POLICIES, else a ValueError."""
    if illegal not in ILLEGAL_POLICIES:
        raise ValueError(f"illegal must be one of {ILLEGAL_POLICIES}, got {illegal!r}")


def check_seat(seat: int | None, num_players: int) -> None:
    """A learner's seat: None (drawn each episode) or a player id, else a ValueError."""
    if seat is not None and (type(seat) is not int or not 0 <= seat < num_players):
        raise ValueError(f"seat must be None (random each episode) or 0..{num_players - 1}, "
                         f"got {seat!r}")


class TableGameMixin(Generic[GameT]):
    """An environment's current game (None before reset) and its game's RGB renderer."""

    game: GameT | None

    def _table_image(self, game: GameT) -> np.ndarray:
        """The table as an RGB image (each game has its own renderer)."""
        raise NotImplementedError

    def _require_game(self) -> GameT:
        if self.game is None:
            raise RuntimeError("call reset() before using the environment")
        return self.game


class SeatGymEnv(TableGameMixin[GameT], gymnasium.Env[np.ndarray, ActionId]):
    """One learner in a seat of a table game, opponents in the others; subclasses make the game."""

    config: Any
    render_mode: str | None
    fixed_seat: int | None
    opponents: list[Opponent[GameT]]
    seat: int
    illegal: str  # an ILLEGAL_POLICIES entry
    illegal_penalty: float
    encoder: Encoder[GameT]
    action_space: gymnasium.spaces.Discrete[np.int64]
    _episode_over = False  # True from the episode's last step (game over or penalty) to reset

    def _live_game(self) -> GameT:
        """The game of an episode still going; RuntimeError after ``terminated`` until reset."""
        game = self._require_game()
        if self._episode_over:
            raise RuntimeError("the episode is over; call reset()")
        return game

    def _opponents(self, spec: object, count: int) -> list[Opponent[GameT]]:
        if spec is None:
            return [UniformOpponent(self) for _ in range(count)]
        if isinstance(spec, Sequence) and not isinstance(spec, (str, bytes)):
            items = list(spec)
        else:
            items = [spec] * count  # a name: one agent per seat
        if len(items) != count:
            raise ValueError(f"opponents: expected one per opponent ({count}), got {len(items)}")
        out: list[Opponent[GameT]] = []
        for item in items:
            if isinstance(item, str):
                raise TypeError(f"opponent {item!r:.40} is an agent name: the environment takes "
                                f"agents or callables; gymnasium.make(...) resolves names, or "
                                f"build the agent with moonriver_env.agents.make_agent")
            if hasattr(item, "act"):
                out.append(item)
            elif callable(item):
                out.append(FunctionOpponent(item, int(self.action_space.n)))
            else:
                raise TypeError(f"an opponent must be an agent with act(game, observation) or a "
                                f"callable f(observation) -> action id, got {item!r}")
        return out

    def _seat_learner(self) -> None:
        """Draw the learner's seat (unless fixed) and reseed the opponents, from the generator."""
        n = self.config.num_players
        self.seat = (self.fixed_seat if self.fixed_seat is not None
                     else int(self.np_random.integers(n)))
        for i, opponent in enumerate(self.opponents):
            if hasattr(opponent, "reset"):
                opponent.reset(int(self.np_random.integers(2**31)) + i)

    def render(self) -> str | np.ndarray | None:  # type: ignore[override]  # gymnasium's TypeVar
        """The table as ansi text or an RGB image."""
        game = self._require_game()
        if self.render_mode == "rgb_array":
            require("PIL", what="render_mode='rgb_array'")  # the 'images' extra, named if missing
            return self._table_image(game)
        if self.render_mode == "ansi":
            return game.table_text()
        return None

    # ------------------------------------------------------------- the episode
    def _new_game(self, seed: int) -> GameT:
        """A new game of the env's config from ``seed`` (each game makes its own)."""
        raise NotImplementedError

    def _final_reward(self, game: GameT) -> float:
        """The learner's reward at the end of ``game``."""
        raise NotImplementedError

    def _end_info(self, game: GameT) -> dict[str, Any]:
        """What ``info`` adds once ``game`` is over (scores, winners)."""
        raise NotImplementedError

    def _shaped(self) -> float:
        """Shaped reward since the last call (0 unless the game offers shaping)."""
        return 0.0

    def _start_shaping(self) -> None:
        """Note where shaping starts in a new game (nothing unless the game offers shaping)."""

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a game; the learner's seat and the game seed come from the env's generator."""
        super().reset(seed=check_seed(seed))
        self.game = self._new_game(int(self.np_random.integers(2**63 - 1)))
        self._seat_learner()
        self._start_shaping()
        reward = self._play_opponents()
        if self.game.is_over:  # cannot happen with real rules; kept for custom rules and data
            raise RuntimeError("the game ended before the learner's first decision")
        self._pending_reward = reward
        self._episode_over = False
        return self._observe(), self._info()

    def step(self, action: ActionId) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play the learner's action, then the opponents' until the learner's next turn."""
        game = self._live_game()
        try:
            game.apply(action_id(action, int(self.action_space.n)))
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
            reward += self._final_reward(game)
        return self._observe(), float(reward), game.is_over, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's read-only legal mask: all ones once the episode is over, else zeros."""
        game = self._require_game()
        # pgx's terminal mask: a vector env's autoreset ignores the next action, so a masked
        # sampler needs no special case.
        if self._episode_over:
            return np.frombuffer(b"\x01" * int(self.action_space.n), dtype=np.int8)
        if game.current_player != self.seat:
            return np.frombuffer(bytes(int(self.action_space.n)), dtype=np.int8)
        return game.legal_mask()

    def notify_opponents(self, method: str, *args: object) -> None:
        """Call ``method(*args)`` on every opponent that has it (e.g. a self-play pool update)."""
        for opponent in self.opponents:
            hook = getattr(opponent, method, None)
            if callable(hook):
                hook(*args)

    def _observe(self) -> np.ndarray:
        return self.encoder.encode(self._require_game(), self.seat)  # a fresh array

    def _info(self) -> dict[str, Any]:
        game = self._require_game()
        info: dict[str, Any] = {"action_mask": self.action_masks().copy(), "seat": self.seat}
        if game.is_over:
            info.update(self._end_info(game))
        return info

    def _play_opponents(self) -> float:
        """Step opponents until the learner decides or the game ends; the shaped reward."""
        game = self._require_game()
        n = self.config.num_players
        reward = 0.0
        while not game.is_over and game.current_player != self.seat:
            p = game.current_player
            opponent = self.opponents[(p - self.seat - 1) % n]
            game.apply(opponent.act(game, LazyObservation(self.encoder, game, p)))
            reward += self._shaped()
        return reward
