"""What the games' single-agent Gymnasium views share: opponents, the learner's seat, render.

`gym_env.MoonRiverGymEnv` and `circles.gym_env.CirclesGymEnv` derive from `SeatGymEnv`; each
keeps its own reset, step, rewards and observations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

import gymnasium
import numpy as np

ILLEGAL_POLICIES = ("raise", "penalty")
GameT = TypeVar("GameT")


class UniformOpponent:
    """Default opponent: a uniformly random legal action from the env's generator."""

    name = "random"

    def __init__(self, env: gymnasium.Env) -> None:
        self.env = env

    def act(self, game: Any, observation: dict[str, np.ndarray]) -> int:
        legal = observation["action_mask"].view(np.bool_).nonzero()[0]
        return int(legal[self.env.np_random.integers(legal.size)])


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


class SeatGymEnv(TableGameMixin[GameT], gymnasium.Env):
    """One learner in a seat of a table game; the other seats are played by opponents."""

    # how a callable opponent f(observation) -> id is wrapped into an agent
    function_opponent: type
    config: Any
    render_mode: str | None
    fixed_seat: int | None
    opponents: list[Any]
    seat: int
    _episode_over = False  # True from the episode's last step (game over or penalty) to reset

    def _live_game(self) -> GameT:
        """The game of an episode still going: after ``terminated`` (game over or an illegal
        action's penalty) a step is refused with a RuntimeError until ``reset``."""
        game = self._require_game()
        if self._episode_over:
            raise RuntimeError("the episode is over; call reset()")
        return game

    def _opponents(self, spec: Any, count: int) -> list[Any]:
        if spec is None:
            return [UniformOpponent(self) for _ in range(count)]
        many = isinstance(spec, Sequence) and not isinstance(spec, (str, bytes))
        items = list(spec) if many else [spec] * count  # a name: one agent per seat
        if len(items) != count:
            raise ValueError(f"opponents: expected one per opponent ({count}), got {len(items)}")
        out = []
        for item in items:
            if isinstance(item, str):
                raise TypeError(f"opponent {item!r:.40} is an agent name: the environment takes "
                                f"agents or callables; gymnasium.make(...) resolves names, or "
                                f"build the agent with moonriver_env.agents.make_agent")
            if hasattr(item, "act"):
                out.append(item)
            elif callable(item):
                out.append(self.function_opponent(item))
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

    def render(self) -> str | np.ndarray | None:
        """The table as ansi text or an RGB image."""
        game = self._require_game()
        if self.render_mode == "rgb_array":
            return self._table_image(game)
        if self.render_mode == "ansi":
            return game.table_text()
        return None
