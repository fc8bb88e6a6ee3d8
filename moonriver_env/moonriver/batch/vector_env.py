"""The Gymnasium 1.x ``VectorEnv`` over batched games: ``MoonRiverVectorEnv``, one learner seat
per game against opponents played inside the batch (``gymnasium.make_vec("MoonRiver-v0", ...)``).

- Observations: (N, 4934) float32; ``observation="compact"``: (N, 4940) uint8
  (``expand_observation``); ``dict_observation=True``: a Dict of ``observation``, ``action_mask``.
- Actions: N ids of ``Discrete(2710)``. Rewards: the learner's end-of-game reward (``reward=``).
- Masks: ``infos["action_mask"]`` (N, 2710) int8 after every reset and step; ``action_masks()``
  the same as bool.
- ``autoreset_mode``: ``NEXT_STEP`` (default: a done row's mask opens every action; its next
  step ignores the action and starts the next game), ``SAME_STEP`` (the next game at once;
  ``infos["final_obs"]``, ``infos["final_info"]``) or ``DISABLED`` (``reset_mask`` restarts).
- Seeds: game g's series starts at ``seed + g`` (EnvPool); a ``reset()`` without a seed moves
  every game on to an episode its slot has not played.
- Rows: ``call``, ``get_attr``, ``set_attr`` as ``SyncVectorEnv``'s (:data:`ROW_ATTRIBUTES`);
  ``copy=False`` returns the batch's own arrays, overwritten by the next step.
- Illegal actions: ``illegal="raise"`` (``BatchIllegalActionError``, no game changed) or
  ``"penalty"`` (that row ends with reward ``illegal_penalty`` and ``infos["illegal_action"]``).

See docs/vector.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium.vector import AutoresetMode

import moonriver_env.moonriver.batch.seats as seats
from moonriver_env.common.gym import check_illegal
from moonriver_env.common.validate import game_seed
from moonriver_env.moonriver.aec_env import check_number
from moonriver_env.moonriver.batch.compact import COMPACT_SIZE
from moonriver_env.moonriver.batch.games import NUM_ACTIONS, BatchedGames, check_actions, check_int
from moonriver_env.moonriver.observation import OBSERVATION_SIZE
from moonriver_env.moonriver.rules.config import GameConfig

OBS_HIGH = 64.0  # moonriver_v0's observation bound
# One for every other seat, or one per other seat.
Opponents = seats.SeatLike | Sequence[seats.SeatLike]


def learner_seats(config: GameConfig, seat: int,
                  opponents: Opponents) -> tuple[seats.SeatLike, ...]:
    """The batch's seats: the learner at ``seat``, ``opponents`` (one, or a list) at the others."""
    n = config.num_players
    others: list[seats.SeatLike] = []
    if isinstance(opponents, (str, seats.BuiltinSeat, seats.NetworkSeat)):
        others = [opponents] * (n - 1)
    elif isinstance(opponents, (list, tuple)):
        others = list(opponents)
    checked = [seats.as_seat(o) for o in others]
    if len(others) != n - 1 or any(s is None or s.name == seats.LEARNER for s in checked):
        raise ValueError(f"opponents must be one of {seats.OPPONENT_NAMES}, a seat (BuiltinSeat, "
                         f"NetworkSeat) or a list of one per other seat ({n - 1}), got "
                         f"{opponents!r:.60}; {seats.NETWORK_SEATS_HINT}")
    rest = iter(others)
    return tuple(seats.LEARNER if p == seat else next(rest) for p in range(n))


class MoonRiverVectorEnv(gymnasium.vector.VectorEnv[Any, npt.ArrayLike, np.ndarray]):
    """Gymnasium ``VectorEnv``: one learner seat per game, the opponents played in the batch."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int, config: GameConfig | None = None, seat: int = 0,
                 opponents: Opponents = "random", reward: str = "win", threads: int = 1,
                 copy: bool = True, *, autoreset_mode: AutoresetMode | str =
                 AutoresetMode.NEXT_STEP, illegal: str = "raise", illegal_penalty: float = -1.0,
                 dict_observation: bool = False, observation: str = "float32") -> None:
        config = config if config is not None else GameConfig()
        self.seat = check_int("seat", seat, 0, config.num_players - 1)
        self.autoreset_mode = _check_autoreset_mode(autoreset_mode)
        check_illegal(illegal)
        check_number("illegal_penalty", illegal_penalty, "the reward of an illegal action")
        self.illegal = illegal
        self.illegal_penalty = float(illegal_penalty)
        self.games = BatchedGames(num_envs, config, learner_seats(config, self.seat, opponents),
                                  reward, threads,
                                  autoreset=self.autoreset_mode == AutoresetMode.SAME_STEP,
                                  observation=observation)
        self.num_envs = self.games.num_games
        self.copy = copy
        self.dict_observation = bool(dict_observation)
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.single_observation_space = _observation_space(self.dict_observation, observation)
        self.single_action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gymnasium.vector.utils.batch_space(
            self.single_observation_space, self.num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space,
                                                               self.num_envs)
        self.render_mode = None
        self.opponents = opponents
        self._row_seeds: list[int] | None = None  # np_random_seed once the batch started
        self._first_seed: int | None = None  # drawn for the first reset without a seed
        self._ended = np.zeros(self.num_envs, bool)  # rows whose game ended, not restarted

    # ---------------------------------------------------------------- reset
    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start games: ``seed`` an int (game g from seed + g), one per game, or None (go on)."""
        # options={"reset_mask": m} restarts only the marked games (built-in seats' streams go
        # on); a seed without it starts a new batch, replaying the same games for the same seeds.
        rows = _reset_mask(options, self.num_envs)
        seeds = _seed_list(seed, self.num_envs)
        if self.games.seed is None or (rows is None and seeds is not None):
            self._start(seeds if seeds is not None else [None] * self.num_envs)
            self._ended[:] = False
        else:
            rows = np.arange(self.num_envs) if rows is None else rows
            self.games.restart(rows, None if seeds is None else [seeds[r] for r in rows])
            self._ended[rows] = False
            self._keep_seeds(seeds, rows)
        self._show_ended()
        return self._outputs()

    def _start(self, seeds: list[int | None]) -> None:
        """A whole new batch: row g from ``seeds[g]`` (None: its next episode, or a drawn seed)."""
        n = self.num_envs
        filled = [self._next_seed(g) if s is None else s for g, s in enumerate(seeds)]
        given = [s for s in seeds if s is not None]  # the streams: from these alone
        if len(given) == n and given == list(range(given[0], given[0] + n)):
            self.games.reset(given[0])  # an int's list: the int's games and streams
        elif self.games.seed is None and not given:
            self.games.reset(filled[0])  # np_random_seed drawn: as an int
        else:
            self.games.reset(_mixed(given) if given else game_seed(None) % 2**62, seeds=filled)
        if self._row_seeds is None:
            self._row_seeds = filled
        self._keep_seeds(seeds, np.arange(n))

    def _keep_seeds(self, seeds: list[int | None] | None, rows: npt.NDArray[np.intp]) -> None:
        """``np_random_seed``: the listed rows take their given seeds (None: keep theirs)."""
        assert self._row_seeds is not None
        for r in rows.tolist():
            seed = None if seeds is None else seeds[r]
            if seed is not None:
                self._row_seeds[r] = seed

    def _next_seed(self, g: int) -> int:
        """Game g's seed for a None entry: its slot's next episode, or its drawn np_random_seed."""
        if self.games.seed is None:
            return self.np_random_seed[g]
        return self.games.episode_seed(g, int(self.games.episodes[g]) + 1)

    @property
    def np_random_seed(self) -> tuple[int, ...]:  # type: ignore[override]
        """Each row's seed, as ``SyncVectorEnv``'s: the one its last seeded reset gave it."""
        # Read before the first reset, the seeds are drawn here and a first reset() plays them.
        if self._row_seeds is not None:
            return tuple(self._row_seeds)
        if self._first_seed is None:
            self._first_seed = game_seed(None) % 2**62  # room for + g + N*k
        return tuple(self._first_seed + g for g in range(self.num_envs))

    # ----------------------------------------------------------------- step
    def step(self, actions: npt.ArrayLike) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray,
                                                    dict[str, Any]]:
        """One learner decision per game (autoreset and illegal actions: the module docstring)."""
        g = self.games
        if g.seed is None:
            raise RuntimeError("call reset() before step()")
        acts = check_actions(actions, self.num_envs, fresh=True)  # illegal rows are redrawn
        pending = self._ended.copy()
        if pending.any() and self.autoreset_mode == AutoresetMode.DISABLED:
            raise RuntimeError(f"games {np.flatnonzero(pending).tolist()[:8]} ended: restart "
                               f"them with reset(options={{'reset_mask': mask}}) before the "
                               f"next step (autoreset_mode=DISABLED)")
        illegal = self._illegal(acts, pending)
        dropped = pending & (g.player >= 0)  # rows ignored this step whose game still runs
        left = dict(zip(np.flatnonzero(illegal).tolist(), g.obs[illegal].copy(), strict=True))
        if illegal.any() or dropped.any():  # any legal move: the game is dropped anyway
            acts[illegal | dropped] = g.random_actions()[illegal | dropped]
        g.step(acts)
        rewards = g.rewards[:, self.seat].copy()
        ended = g.done.copy()
        rewards[pending], ended[pending] = 0.0, False
        final = ended.copy()  # rows whose ended game's view is g.final_obs
        rewards[illegal], ended[illegal] = self.illegal_penalty, True
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            infos = self._next_games_now(final, illegal, left)
        else:
            infos = self._ended_games_stay(pending, final, left)
            self._ended = ended.copy()
            self._show_ended()
        if self.illegal == "penalty":  # always there: a reader sees the same keys each step
            infos.update({"illegal_action": illegal, "_illegal_action": illegal.copy()})
            if "final_info" in infos:  # SAME_STEP: the ended step's info, as Gymnasium's
                infos["final_info"].update({"illegal_action": illegal.copy(),
                                            "_illegal_action": illegal.copy()})
        obs, mask_info = self._outputs()
        infos.update(mask_info)
        return obs, rewards, ended, np.zeros(self.num_envs, bool), infos

    def _illegal(self, acts: npt.NDArray[np.int64], pending: npt.NDArray[np.bool_]
                 ) -> npt.NDArray[np.bool_]:
        """Rows whose action is illegal under ``illegal="penalty"`` (none otherwise: it raises)."""
        if self.illegal == "raise":
            return np.zeros(self.num_envs, bool)
        legal = (acts >= 0) & (acts < NUM_ACTIONS)
        legal &= self.games.mask[np.arange(self.num_envs), np.where(legal, acts, 0)] != 0
        return ~legal & ~pending

    def _next_games_now(self, final: np.ndarray, illegal: np.ndarray,
                        left: dict[int, np.ndarray]) -> dict[str, Any]:
        """SAME_STEP: restart rows dropped for an illegal action; ``final_obs`` as Gymnasium's."""
        ended = final | illegal
        if illegal.any():
            self.games.restart(np.flatnonzero(illegal & ~self.games.done))
        if not ended.any():
            return {}
        out = np.full(self.num_envs, None, dtype=object)
        for g in np.flatnonzero(ended).tolist():
            obs = left[g] if illegal[g] else self.games.final_obs[g].copy()
            if self.dict_observation:
                obs = {"observation": obs, "action_mask": np.zeros(NUM_ACTIONS, np.int8)}
            out[g] = obs
        info = {"action_mask": np.zeros((self.num_envs, NUM_ACTIONS), np.int8),
                "_action_mask": ended.copy()}
        return {"final_obs": out, "_final_obs": ended, "final_info": info,
                "_final_info": ended.copy()}

    def _ended_games_stay(self, pending: np.ndarray, final: np.ndarray,
                          left: dict[int, np.ndarray]) -> dict[str, Any]:
        """Restart the rows ended last step (NEXT_STEP); show those ending now their last view."""
        g = self.games
        if pending.any() and self.autoreset_mode == AutoresetMode.NEXT_STEP:
            g.restart(np.flatnonzero(pending))  # writes every row: views are set after it
        g.obs[final] = g.final_obs[final]
        for row, obs in left.items():
            g.obs[row] = obs
        return {}

    def _show_ended(self) -> None:
        """An ended row's mask: every action under NEXT_STEP (ignored), none under DISABLED."""
        # Every action: a masked sampler always has actions to draw from (pgx's terminal states).
        self.games.mask[self._ended] = self.autoreset_mode == AutoresetMode.NEXT_STEP

    def _outputs(self) -> tuple[Any, dict[str, Any]]:
        """The observations and the masks' info; copies unless ``copy=False``."""
        obs: Any = self.games.obs.copy() if self.copy else self.games.obs
        mask = self.games.mask.copy() if self.copy else self.games.mask
        if self.dict_observation:
            obs = {"observation": obs, "action_mask": mask}
        return obs, {"action_mask": mask, "_action_mask": np.ones(self.num_envs, bool)}

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """(N, 2710) bool legal actions; an ended row: all under NEXT_STEP, none under DISABLED."""
        return self.games.mask.astype(bool)

    # ------------------------------------------------------------------ rows
    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Each row's attribute ``name`` (:data:`ROW_ATTRIBUTES`), called if a method."""
        getter = _ROW_GETTERS.get(name)
        if getter is None:
            raise AttributeError(f"a row of MoonRiverVectorEnv has no attribute {name!r:.40}; "
                                 f"rows have: {', '.join(ROW_ATTRIBUTES)}")
        values = [getter(self, g) for g in range(self.num_envs)]
        return tuple(v(*args, **kwargs) if callable(v) else v for v in values)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Each row's attribute ``name`` (``call(name)``, as ``SyncVectorEnv.get_attr``)."""
        return self.call(name)

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        """Set ``name`` (:data:`SETTABLE_ROW_ATTRIBUTES`) of every row: one value (one batch)."""
        if name not in SETTABLE_ROW_ATTRIBUTES:
            what = "read-only" if name in _ROW_GETTERS else "no row attribute"
            raise AttributeError(f"set_attr sets only {', '.join(SETTABLE_ROW_ATTRIBUTES)} "
                                 f"(one value for every row); {name!r:.40} is {what}")
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:  # Gymnasium's words
            raise ValueError(f"Values must be a list or tuple with length equal to the number "
                             f"of environments. Got `{len(values)}` values for {self.num_envs} "
                             f"environments.")
        value = values[0]
        if name == "illegal":
            check_illegal(value)
        else:
            check_number("illegal_penalty", value, "the reward of an illegal action")
        if any(v != value for v in values[1:]):
            raise ValueError(f"the rows share one batch: {name} takes one value for every row, "
                             f"got {list(values)!r:.80}")
        setattr(self, name, value if name == "illegal" else float(value))


def _row_mask(env: MoonRiverVectorEnv, g: int) -> npt.NDArray[np.bool_]:
    """Row g's ``action_masks()``."""
    mask: npt.NDArray[np.bool_] = env.games.mask[g].astype(bool)
    return mask


def _shared(name: str) -> Callable[[MoonRiverVectorEnv, int], Any]:
    """The getter of a setting every row shares: the env's own attribute."""
    return lambda env, g: getattr(env, name)


# What one row (one game of the batch) shows to call / get_attr, by the single env's names:
# its own mask, game and seeds, its spaces (the single ones), then the settings every row
# shares. The batch's own methods (step, reset, ...) are no row's.
_ROW_GETTERS: dict[str, Callable[[MoonRiverVectorEnv, int], Any]] = {
    "action_masks": lambda env, g: functools.partial(_row_mask, env, g),
    "game": lambda env, g: env.games.game(g),
    "episode_seed": lambda env, g: env.games.episode_seed(g),
    "np_random_seed": lambda env, g: env.np_random_seed[g],
    "observation_space": lambda env, g: env.single_observation_space,
    "action_space": lambda env, g: env.single_action_space,
    "config": lambda env, g: env.games.config,
    "reward": lambda env, g: env.games.reward,
    **{name: _shared(name) for name in ("seat", "opponents", "illegal", "illegal_penalty",
                                        "render_mode", "spec", "metadata")},
}
ROW_ATTRIBUTES = tuple(_ROW_GETTERS)
SETTABLE_ROW_ATTRIBUTES = ("illegal", "illegal_penalty")


def _check_autoreset_mode(mode: Any) -> AutoresetMode:
    """An ``AutoresetMode`` (or its value, e.g. "NextStep"), else a ValueError."""
    try:
        return AutoresetMode(mode)  # a member gives itself
    except ValueError:
        allowed = ", ".join(f"AutoresetMode.{m.name} ({m.value!r})" for m in AutoresetMode)
        raise ValueError(f"autoreset_mode must be one of {allowed}, got {mode!r:.40}") from None


def _observation_space(as_dict: bool, kind: str = "float32") -> gymnasium.spaces.Space[Any]:
    obs = (gymnasium.spaces.Box(0, 255, (COMPACT_SIZE,), np.uint8) if kind == "compact"
           else gymnasium.spaces.Box(0.0, OBS_HIGH, (OBSERVATION_SIZE,), np.float32))
    if not as_dict:
        return obs
    mask = gymnasium.spaces.Box(0, 1, (NUM_ACTIONS,), np.int8)
    return gymnasium.spaces.Dict({"observation": obs, "action_mask": mask})


def _reset_mask(options: dict[str, Any] | None, n: int) -> npt.NDArray[np.intp] | None:
    """The rows ``options["reset_mask"]`` marks (None: every row), else a ValueError."""
    if options is None:
        return None
    if not isinstance(options, dict) or set(options) - {"reset_mask"}:
        raise ValueError(f"options may hold only 'reset_mask' (N bools), got {options!r:.80}")
    mask = options.get("reset_mask")
    if mask is None:
        return None
    mask = np.asarray(mask)
    if mask.shape != (n,) or mask.dtype != np.bool_ or not mask.any():
        raise ValueError(f"reset_mask must be a bool array of shape ({n},) marking at least "
                         f"one game, got {mask.dtype} array of shape {mask.shape}")
    return np.flatnonzero(mask)


def _seed_list(seed: Any, n: int) -> list[int | None] | None:
    """Game g's seed of a reset: seed + g for an int, seed[g] for a list; None: no seed."""
    if seed is None:
        return None
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        base = check_int("seed", seed, 0)
        return [base + g for g in range(n)]
    if not isinstance(seed, Sequence) or isinstance(seed, str) or len(seed) != n:
        raise ValueError(f"seed must be None, a non-negative int or a list of {n} seeds "
                         f"(ints or None), got {seed!r:.80}")
    return [None if s is None else check_int("seed[g]", s, 0) for s in seed]


def _mixed(seeds: Sequence[int | None]) -> int:
    """One seed for the built-in seats' streams from a list of game seeds."""
    return int(np.random.SeedSequence([s for s in seeds if s is not None])
               .generate_state(1, np.uint64)[0] >> 2)
