"""Moon River as a PettingZoo AEC environment (``moonriver_v0``).

| | |
|---|---|
| Import | `from moonriver_env import moonriver_v0` |
| Agents | `player_0 .. player_{n-1}` (n = 2, 3 or 4) |
| Actions | `Discrete(2710)`, the same for every variant (docs/actions.md) |
| Observations | `Dict(observation=Box(0, 64, (4934,), f32), action_mask=Box(0, 1, (2710,), i8))` |
| State | `state()`: the observation of player_0 (absolute frame), same shape |

**Agents and seats.** Agent ids are stable (`player_i` is engine player `i`); the order in which
rancheros are placed (and so who plays first) is drawn from the seeded generator, and each
round's turn order follows the columns, so the seat is not the id. One agent acts at a time; a
turn is several steps (build, recruit, cowboy moves, select ...) by the same agent.

**Observation.** A flat float32 vector of named views (`env.observation_views`,
docs/observation.md): the ranch planes of every player relative to the viewer (viewer first),
reserves and hand, the saloon and partner pile counts, both columns with who stands where,
the phase and pending context, running scores, round and counts. The order of the plot box
and the partner pile never appears. `action_mask` opens the legal actions of the agent to act;
it is all zeros for every other agent and once the game is over.

**Rewards** (`reward=`), given when the game ends:
- `"win"` (default): +1 to each winner (after tie-breaks; shared victories all get +1), -1 to
  every other player;
- `"rank"`: from +1 (first) to -1 (last) in equal steps; tied players share the mean;
- `"score"`: own final score / 100;
- `"margin"`: (own score - best opponent score) / 100.
`shaping=c` (default 0) adds, at every step, c x (change of each player's running score) / 100
to every player, a dense signal whose sum telescopes to c x final score / 100.

**Illegal actions.** An action is an integer id (Python or numpy integer, a 0-d integer array
too); a bool, float, str or any other value is never coerced into a move. `raw_env` raises
`IllegalActionError` for anything not legal (loud, for debugging; the state is unchanged).
`env()` behaves as PettingZoo's wrapper chain `OrderEnforcingWrapper`, then `ActionIdWrapper` (a
strict `AssertOutOfBoundsWrapper`: a value that is not an id of the action space raises
`IllegalActionError`), then `TerminateIllegalWrapper` (an id that is illegal now gives the
offender -1 and ends the game), with every check of the three in one flat class
(`wrapped_env`; the chain's attribute delegation cost as much as the game).
`wrapped_env_chain()` builds the stock chain itself.

**Options.** `num_players` (2-4), `mode` ("base" | "legends"), `scenario` (1-4 or None),
`boards` (legends), `auto_forced` (play single-option decisions automatically), data file
paths (see `GameConfig`), `reward`, `shaping`, `render_mode` ("ansi", "rgb_array", "human":
prints the ansi text, needs no display), `backend` ("core": the compiled rules, default;
"python": the reference engine; the same games, see `moonriver_env.moonriver.backend`).

**Records.** `env.game_record()` is the engine's JSON game record; `python -m moonriver_env
replay FILE` steps through one in the terminal. While the game runs the record leaves the seed
out (it would reveal the hidden box and pile order); `game_record(include_seed=True)` keeps it
for an owner who saves the game to resume it (docs/game-record.md).

Version history: v0 (0.1.0) first release; v0 hardening (unreleased): the saloon is refilled at
the end of the last round too (RULES.md 4.4; only games with a recruit in the last round
change), actions must be integer ids, records are version 2 (a decision before the chance
events it causes).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils.env import AECIterable, AECIterator
from pettingzoo.utils.env_logger import EnvLogger

from moonriver_env.common.aec import TableAECEnv
from moonriver_env.common.validate import action_id as _action_id
from moonriver_env.common.validate import check_seed
from moonriver_env.common.wrappers import stock_chain
from moonriver_env.moonriver.backend import DEFAULT_BACKEND, Encoder, check_backend, make_game
from moonriver_env.moonriver.contract import MoonRiverGame
from moonriver_env.moonriver.observation import SCORE_SCALE
from moonriver_env.moonriver.rules import NUM_ACTIONS, GameConfig, IllegalActionError
from moonriver_env.moonriver.rules.game import NO_MOVES

REWARD_MODES = ("win", "rank", "score", "margin")
OBS_HIGH = 64.0
ILLEGAL_REWARD = -1.0


def env(**kwargs: Any) -> AECEnv:
    """The env with PettingZoo's standard wrappers' checks in one class, :class:`wrapped_env`."""
    try:
        return wrapped_env(**kwargs)
    except (ValueError, TypeError) as exc:  # a bad argument: raised from the caller's call
        raise exc.with_traceback(None) from None


def wrapped_env_chain(**kwargs: Any) -> AECEnv:
    """``raw_env`` behind PettingZoo's stock wrapper objects: what :func:`env` behaves as."""
    return stock_chain(raw_env(**kwargs), ILLEGAL_REWARD)


def action_id(action: object, num_actions: int = NUM_ACTIONS) -> int:
    """Moon River's :func:`moonriver_env.common.validate.action_id` (ids 0..2709 by default)."""
    return action if type(action) is int else _action_id(action, num_actions)


def check_number(name: str, value: object, hint: str) -> None:
    """A finite int or float (not bool), else a ValueError saying what is allowed."""
    if (not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool)
            or not math.isfinite(value)):
        raise ValueError(f"{name} must be a finite number ({hint}), got {value!r}")


def check_options(reward: str, shaping: float, render_mode: str | None,
                  render_modes: list[str]) -> None:
    """Validate the options both environments share; the message says what is allowed."""
    if reward not in REWARD_MODES:
        raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
    check_number("shaping", shaping, "0 disables it")
    if render_mode is not None and render_mode not in render_modes:
        raise ValueError(f"render_mode must be None or one of {render_modes}, "
                         f"got {render_mode!r}")


def final_rewards(game: MoonRiverGame, mode: str) -> list[float]:
    """End-of-game reward of each player under a reward mode (see the module docstring)."""
    scores = game.scores()
    totals = [s.total for s in scores]
    n = len(totals)
    if mode == "win":
        return game.returns()
    if mode == "score":
        return [t / SCORE_SCALE for t in totals]
    if mode == "margin":
        return [(t - max(totals[:p] + totals[p + 1:])) / SCORE_SCALE
                for p, t in enumerate(totals)]
    # rank: order by the tie-break keys; players equal on every key share their places
    keys = [(s.total, s.largest_territory, s.cows) for s in scores]
    place_value = [1.0 - 2.0 * r / (n - 1) for r in range(n)]
    ranked = sorted(keys, reverse=True)
    out = []
    for key in keys:
        first, tied = ranked.index(key), ranked.count(key)
        out.append(sum(place_value[first:first + tied]) / tied)
    return out


class raw_env(TableAECEnv[MoonRiverGame]):  # lower-case name: the PettingZoo convention
    """Moon River AEC environment without wrappers; see the module docstring."""

    metadata: dict[str, Any] = {"name": "moonriver_v0",
                                "render_modes": ["ansi", "rgb_array", "human"],
                                "is_parallelizable": False, "render_fps": 2}

    def __init__(self, num_players: int = 4, mode: str = "base", scenario: int | None = None,
                 boards: tuple[str, ...] | None = None, auto_forced: bool = False,
                 reward: str = "win", shaping: float = 0.0, render_mode: str | None = None,
                 backend: str = DEFAULT_BACKEND, **data_files: str | None) -> None:
        super().__init__()
        try:  # a bad argument is raised from here, the caller's own call
            self.config = GameConfig(num_players=num_players, mode=mode, scenario=scenario,
                                     boards=boards, auto_forced=auto_forced, **data_files)
            check_options(reward, shaping, render_mode, self.metadata["render_modes"])
            self.backend = check_backend(backend)
        except (ValueError, TypeError) as exc:
            raise exc.with_traceback(None) from None
        self.reward_mode = reward
        self.shaping = float(shaping)
        self.render_mode = render_mode
        self.encoder = Encoder()
        self._init_table(num_players, self.encoder.views, self.encoder.size, OBS_HIGH, NUM_ACTIONS)
        self._no_moves = NO_MOVES  # immutable: no consumer can make it writable
        self.game: MoonRiverGame | None = None

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game; a seed reseeds the env's generator, which seeds every game."""
        seed = check_seed(seed)
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self._start_episode(make_game(self.config, int(self.np_random.integers(2**63 - 1)),
                                      self.backend))
        self._running = self._running_totals() if self.shaping else None

    def step(self, action: int | None) -> None:
        """Play the selected agent's action (None for an agent that is done)."""
        game = self._deciding_game(action)
        if game is None:
            return
        agent = self.agent_selection
        game.apply(action_id(action))  # raises IllegalActionError, state unchanged
        self._cumulative_rewards[agent] = 0.0
        if not self.shaping and not game.is_over:
            # The usual step: every reward is 0 (rewards come at the end, or with shaping),
            # so there is nothing to reset or accumulate.
            self.agent_selection = self.possible_agents[game.player]
            if self.render_mode == "human":
                self.render()
            return
        for a in self.agents:
            self.rewards[a] = 0.0
        if self.shaping:
            now = self._running_totals()
            assert self._running is not None  # kept from reset on while shaping
            for p, a in enumerate(self.possible_agents):
                self.rewards[a] = self.shaping * (now[p] - self._running[p]) / SCORE_SCALE
            self._running = now
        if game.is_over:
            for p, r in enumerate(final_rewards(game, self.reward_mode)):
                self.rewards[self.possible_agents[p]] += r
            self.terminations = dict.fromkeys(self.agents, True)
            self.infos = {a: {"scores": game.scores()[self.agent_ids[a]].to_dict(),
                              "winners": [self.possible_agents[w] for w in game.winners()]}
                          for a in self.agents}
        else:
            self.agent_selection = self.possible_agents[game.current_player]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # -------------------------------------------------------------- records
    def save_record(self, path: str, include_seed: bool = False) -> None:
        """Write the current game's record as JSON (the seed as in :meth:`game_record`)."""
        record = self.game_record(include_seed)
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(record, fh)

    # -------------------------------------------------------------- helpers
    def _table_image(self, game: MoonRiverGame) -> np.ndarray:
        from moonriver_env.moonriver.render.image import table_image

        return table_image(game)

    def _running_totals(self) -> list[int]:
        return [s.total for s in self._require_game().running_scores()]


# Attributes PettingZoo's OrderEnforcingWrapper refuses before the first reset.
_NEEDS_RESET = frozenset({"rewards", "terminations", "truncations", "infos", "agent_selection",
                          "num_agents", "agents"})


class wrapped_env(raw_env):  # lower-case name: the PettingZoo convention
    """``raw_env`` with every check and behaviour of PettingZoo's stock chain, in one class."""

    _has_reset = False  # class defaults: read before __init__ sets them is harmless

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._has_reset = False
        self._has_updated = False
        self._terminated = False  # terminated by an illegal move

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes that do not exist: the wrappers' messages.
        if name.startswith("_") and name != "_cumulative_rewards":
            raise AttributeError(f"accessing private attribute '{name}' is prohibited")
        if name in _NEEDS_RESET and not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game (see ``raw_env.reset``)."""
        self._has_reset = True
        self._has_updated = True
        self._terminated = False
        super().reset(seed=seed, options=options)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """Observation of an agent and its action mask (see ``raw_env.observe``)."""
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        # A new array the core writes in place, so a caller may keep it: one buffer reused per
        # environment measured no faster.
        return super().observe(agent)

    def state(self) -> np.ndarray:
        """Global state (see ``raw_env.state``)."""
        if not self._has_reset:
            EnvLogger.error_state_before_reset()
        return super().state()

    def render(self) -> str | np.ndarray | None:
        """Render the table (see ``raw_env.render``)."""
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        return super().render()

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        """Iterate over the agent to act, checking that each one steps (OrderEnforcingWrapper)."""
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _OrderedIterable(self, max_iter)

    def step(self, action: int | None) -> None:
        """Play the selected agent's action (a non-id raises; an illegal id ends the game)."""
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        self._has_updated = True
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        dead = self.terminations[agent] or self.truncations[agent]
        if action is not None or not dead:  # ActionIdWrapper: an integer id of the space
            action = action_id(action, NUM_ACTIONS)
            if not 0 <= action < NUM_ACTIONS:
                raise IllegalActionError(action, f"action ids run from 0 to {NUM_ACTIONS - 1}")
        if dead:
            if self._terminated:
                self._was_dead_step(action)
            else:
                super().step(action)
            return
        game = self._require_game()
        if self.agent_ids[agent] == game.current_player and game.legal_mask()[action]:
            super().step(action)
            return
        # TerminateIllegalWrapper: the offender gets -1 and the game ends for everyone.
        EnvLogger.warn_on_illegal_move()
        self._cumulative_rewards[agent] = 0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.truncations, 0)
        self.rewards[agent] = float(ILLEGAL_REWARD)
        self._accumulate_rewards()
        self._deads_step_first()
        self._terminated = True


class _OrderedIterable(AECIterable):
    def __iter__(self) -> AECIterator:
        return _OrderedIterator(self.env, self.max_iter)


class _OrderedIterator(AECIterator):
    """AECIterator that asserts a step (or reset) between agents, as PettingZoo's does."""

    def __next__(self) -> str:
        env = self.env
        if not env.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        agent: str = env.agent_selection
        return agent
