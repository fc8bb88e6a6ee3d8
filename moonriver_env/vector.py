"""Many games per call on the compiled core: batched steps, a Gymnasium ``VectorEnv``, an SB3
``VecEnv`` and a batched self-play view.

``BatchedGames(num_games, config, seats)`` holds N games in one core object. ``step(actions)``
applies one decision per game (an int64 array of N action ids) and writes, into arrays it
allocated once:

- ``player`` (N,) int32: the seat to decide next in each game;
- ``obs`` (N, 4934) float32: each game seen by that seat (docs/observation.md);
- ``mask`` (N, 2710) int8: its legal actions (the core Game's ``legal_mask`` dtype);
- ``rewards`` (N, players) float32: every seat's reward of this step (0 until a game ends, then
  the PettingZoo env's end-of-game rewards, ``reward=`` "win" | "rank" | "score" | "margin");
- ``done`` (N,) bool: the game ended in this step; it was replaced by its next game at once,
  so ``obs``/``mask``/``player`` already belong to the new game ("same-step" autoreset);
- ``final_obs`` (N, 4934) float32: for games that ended, the ended game seen by the seat whose
  decision was applied in this step (other rows are stale).

Seats are ``"learner"`` (Python decides), ``"random"`` (uniform over legal actions) or
``"greedy"`` (``agents.GreedyAgent``'s ranking, the core's ``greedy_values``: best value, then
best tie-break, remaining ties drawn at random): built-in seats are played inside the core,
GIL released, so Python sees only learner decisions. They draw from one SplitMix64 stream per
game, seeded from the reset seed and the game's index, so ``threads`` (the batch split over
that many ``std::thread``s) never changes a result. The greedy seat ranks as GreedyAgent does;
only its draws among equal choices come from the core's stream instead of the agent's.

**Seeds.** ``reset(seed)`` starts game g of the batch from ``seed + g``; its k-th episode
(k = 0, 1, ...) uses ``seed + g + N * k``, so game g of a batch always replays the same games
(``moonriver_env.core.Game(config, seed + g + N * k)``). A reset's setup draws are the engine's,
made in Python (``numpy.random.default_rng``, as every core Game's): about one Python call per
ended game, after the core's step, to set up the game that will follow the next one.

**Illegal actions.** If any action is not legal in its game, ``step`` raises
``BatchIllegalActionError`` (an ``IllegalActionError``) naming the first such game index, the
action and why, and no game changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt

from moonriver_env.core import Game as CoreGame
from moonriver_env.core import _vector
from moonriver_env.core.game import _setup_draws
from moonriver_env.engine import actions as A
from moonriver_env.engine.config import GameConfig
from moonriver_env.engine.game import IllegalActionError
from moonriver_env.engine.grid import COLS
from moonriver_env.moonriver.observation import OBSERVATION_SIZE, board_ids

NUM_ACTIONS = len(A.ACTIONS)
OBS_HIGH = 64.0  # moonriver_v0's observation bound
SEAT_KINDS = {"learner": _vector.SEAT_LEARNER, "random": _vector.SEAT_RANDOM,
              "greedy": _vector.SEAT_GREEDY}
REWARD_MODES = ("win", "rank", "score", "margin")  # the core's order

ActionMask = npt.NDArray[np.int8]
Observations = npt.NDArray[np.float32]


class BatchIllegalActionError(IllegalActionError):
    """An action that is not legal in one game of a batch; ``game_index`` names the game."""

    def __init__(self, game_index: int, action: Any, reason: str, legal: list[str]) -> None:
        self.game_index = game_index
        super().__init__(f"{action} in game {game_index} of the batch (no game was changed)",
                         reason, legal)


def _check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    if (type(value) is not int and not isinstance(value, np.integer)) or isinstance(value, bool):
        raise ValueError(f"{name} must be an int, got {value!r:.40}")
    if value < low or (high is not None and value > high):
        allowed = f">= {low}" if high is None else f"in {low}..{high}"
        raise ValueError(f"{name} must be {allowed}, got {value}")
    return int(value)


class BatchedGames:
    """N games of Moon River stepped together in the core; see the module docstring."""

    def __init__(self, num_games: int, config: GameConfig | None = None,
                 seats: Sequence[str] | None = None, reward: str = "win",
                 threads: int = 1, autoreset: bool = True) -> None:
        self.num_games = _check_int("num_games", num_games, 1)
        if not isinstance(autoreset, bool):
            raise ValueError(f"autoreset must be True or False, got {autoreset!r:.40}")
        self.autoreset = autoreset
        self.config = config if config is not None else GameConfig()
        n = self.config.num_players
        seats = self._check_seats(seats if seats is not None else ("learner",) * n)
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        self.seats = seats
        self.reward = reward
        self.threads = _check_int("threads", threads, 1)
        self.data = self.config.data
        data = self.data
        kinds = np.stack([data.terrain, data.nugget, data.beaver, data.corn, data.cows,
                          data.skull, data.circle, data.number], axis=1).astype(np.int64)
        self._tables_args = (kinds.ravel(), data.num_box_kinds,
                             data.plot_kind.astype(np.int64),
                             np.array([int(k) for k in data.partner_specialists], np.int64))
        N = self.num_games
        self.player = np.zeros(N, np.int32)
        self.obs = np.zeros((N, OBSERVATION_SIZE), np.float32)
        self.mask = np.zeros((N, NUM_ACTIONS), np.int8)
        self.rewards = np.zeros((N, n), np.float32)
        self._done = np.zeros(N, np.uint8)
        self.final_obs = np.zeros((N, OBSERVATION_SIZE), np.float32)
        self._batch: Any = None
        self.seed: int | None = None
        self.episodes = np.zeros(N, np.int64)  # episodes begun per game, less one

    def _check_seats(self, seats: Sequence[str]) -> tuple[str, ...]:
        n = self.config.num_players
        seats = tuple(seats)
        if len(seats) != n or any(not isinstance(s, str) or s not in SEAT_KINDS for s in seats):
            raise ValueError(f"seats must name one of {tuple(SEAT_KINDS)} for each of the "
                             f"{n} players, got {seats!r:.80}")
        if "learner" not in seats:
            raise ValueError(f"at least one seat must be 'learner', got {seats!r:.80}")
        return seats

    @property
    def done(self) -> npt.NDArray[np.bool_]:
        """(N,) bool: which games ended in the last step."""
        return self._done.view(np.bool_)

    @property
    def over(self) -> npt.NDArray[np.bool_]:
        """(N,) bool: which games are over and wait for nothing (``autoreset=False``: a
        finished game stays in its slot; with autoreset no game is ever over between steps)."""
        return self.player < 0

    # -------------------------------------------------------------- seeding
    def episode_seed(self, g: int, k: int | None = None) -> int:
        """The seed of game g's k-th episode (its current one when k is None)."""
        if self.seed is None:
            raise RuntimeError("call reset(seed) first")
        k = int(self.episodes[g]) if k is None else k
        return self.seed + g + self.num_games * k

    def _install(self, g: int, k: int, next_: bool, seed: int | None = None) -> None:
        seed = self.episode_seed(g, k) if seed is None else seed
        draws = _setup_draws(self.config, self.data, seed, None)
        boards = [self.data.boards[name] for name in draws["boards"]]
        self._batch.set_game(
            g, next_, self.config.num_players, draws["scenario"] or 0, self.config.auto_forced,
            [b.reserve for b in boards],
            [sum(1 << (r * COLS + c) for r, c in b.bridges) for b in boards],
            draws["box"], draws["pile"], draws["setup_order"],
            board_ids(self.data, draws["boards"]))
        self._meta[next_][g] = (seed, draws)

    def reset(self, seed: int = 0, *, seeds: Sequence[int] | None = None,
              seats: Sequence[Sequence[str]] | None = None) -> None:
        """Start every game: game g from ``seed + g``; its k-th episode from seed + g + N*k.

        ``seeds`` (``autoreset=False`` only): game g from ``seeds[g]`` instead (``seed`` still
        seeds the built-in seats' streams). ``seats``: one seat list per game, instead of the
        batch's ``seats`` for every game (each with at least one ``"learner"``)."""
        self.seed = _check_int("seed", seed, 0)
        N = self.num_games
        if seeds is not None:
            if self.autoreset:
                raise ValueError("seeds= plays a fixed list of games: it needs autoreset=False")
            seeds = [_check_int("seeds[g]", s, 0) for s in seeds]
            if len(seeds) != N:
                raise ValueError(f"seeds must hold one seed per game ({N}), got {len(seeds)}")
        kinds = None
        if seats is not None:
            if len(seats) != N:
                raise ValueError(f"seats must hold one seat list per game ({N}), got "
                                 f"{len(seats)}")
            kinds = [[SEAT_KINDS[s] for s in self._check_seats(row)] for row in seats]
        self._batch = _vector.Batch(N, self.config.num_players,
                                    [SEAT_KINDS[s] for s in self.seats],
                                    REWARD_MODES.index(self.reward), self.seed % 2**64,
                                    *self._tables_args)
        self.episodes[:] = 0
        self._meta: dict[bool, list[Any]] = {False: [None] * N, True: [None] * N}
        for g in range(N):
            if kinds is not None:
                self._batch.set_seats(g, kinds[g])
            self._install(g, 0, False, None if seeds is None else seeds[g])
            if self.autoreset:
                self._install(g, 1, True)
        self._batch.start(self.player, self.obs, self.mask, self.rewards, self._done,
                          self.final_obs, self.threads)

    # ----------------------------------------------------------------- step
    def step(self, actions: npt.ArrayLike) -> None:
        """Apply one decision per game (N action ids); results land in this object's arrays."""
        if self._batch is None:
            raise RuntimeError("call reset(seed) before step()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_games,) or not (np.issubdtype(acts.dtype, np.integer)):
            raise ValueError(f"actions must be {self.num_games} integer action ids, got "
                             f"{acts.dtype} array of shape {acts.shape}")
        acts = np.ascontiguousarray(acts, dtype=np.int64)
        bad = self._batch.step(acts, self.player, self.obs, self.mask, self.rewards,
                               self._done, self.final_obs, self.threads)
        if bad >= 0:
            self._raise_illegal(bad, int(acts[bad]))
        if not self.autoreset:
            return
        for g in np.flatnonzero(self._done).tolist():
            self.episodes[g] += 1
            self._meta[False][g] = self._meta[True][g]
            self._install(g, int(self.episodes[g]) + 1, True)

    def _raise_illegal(self, g: int, aid: int) -> None:
        game = self.game(g)
        legal = [a.text() for a in game.legal_actions()]
        if not 0 <= aid < NUM_ACTIONS:
            raise BatchIllegalActionError(g, aid, f"action ids are 0..{NUM_ACTIONS - 1}", legal)
        raise BatchIllegalActionError(g, A.ACTIONS[aid].text(), game._why_illegal(aid), legal)

    def greedy_prior(self, games: npt.ArrayLike, out: npt.NDArray[np.float32] | None = None,
                     shape_weight: float = 0.05) -> npt.NDArray[np.float32]:
        """``agents.pretrained.greedy_prior`` of the listed games in one core call (GIL
        released, split over ``threads``): row r holds Greedy's value plus ``shape_weight`` x
        its tie-break for each legal action of game ``games[r]``, 0 elsewhere (all 0 for a
        forced decision). Written into ``out`` (at least len(games) rows of 2710 float32) when
        given; no listed game may be over."""
        if self._batch is None:
            raise RuntimeError("call reset(seed) first")
        ids = np.asarray(games)
        if ids.size and ids.dtype.kind not in "iu":  # a float or bool array is no index list
            raise ValueError(f"games must be integer game indices, got dtype {ids.dtype}")
        rows = np.ascontiguousarray(ids, dtype=np.int64).reshape(-1)
        if out is None:
            out = np.empty((rows.size, NUM_ACTIONS), np.float32)
        if out.dtype != np.float32 or out.ndim != 2 or not out.flags.c_contiguous:
            raise ValueError("out must be a C-contiguous float32 array of shape (k, 2710)")
        self._batch.greedy_prior(rows, float(shape_weight), out, self.threads)
        return out[:rows.size]

    def random_actions(self) -> npt.NDArray[np.int64]:
        """One uniform random legal id per game, drawn in the core (a random driver for
        benchmarks and baselines; its own per-game streams, seeded by ``reset``)."""
        if self._batch is None:
            raise RuntimeError("call reset(seed) first")
        out = np.empty(self.num_games, np.int64)
        self._batch.random_actions(out)
        return out

    # ---------------------------------------------------------------- views
    def game(self, g: int) -> CoreGame:
        """A copy of game g's current state as a core Game (records, text, checks)."""
        if self._batch is None:
            raise RuntimeError("call reset(seed) first")
        g = _check_int("g", g, 0, self.num_games - 1)
        seed, draws = self._meta[False][g]
        out = CoreGame.__new__(CoreGame)
        out.__setstate__({"config": self.config, "seed": seed, "scenario": draws["scenario"],
                          "board_names": draws["boards"], "setup_order": draws["setup_order"],
                          "state": self._batch.serialize(g)})
        return out

    @property
    def builtin_decisions(self) -> int:
        """Decisions the built-in seats made inside the core since the last reset."""
        return 0 if self._batch is None else int(self._batch.builtin_decisions)


def _learner_seat(config: GameConfig, seat: int, opponents: str) -> tuple[str, ...]:
    n = config.num_players
    seat = _check_int("seat", seat, 0, n - 1)
    if opponents not in ("random", "greedy"):
        raise ValueError(f"opponents must be 'random' or 'greedy', got {opponents!r}")
    return tuple("learner" if p == seat else opponents for p in range(n))


class MoonRiverVectorEnv(gymnasium.vector.VectorEnv):
    """Gymnasium ``VectorEnv``: one learner seat per game, built-in opponents in the core.

    Observations are (N, 4934) float32, actions N ids of ``Discrete(2710)``, rewards the
    learner's end-of-game reward. Autoreset is same-step: on a done step the observation is
    the next game's and ``infos["final_obs"]`` holds the ended game's (``infos["_final_obs"]``
    marks which). ``action_masks()`` gives the (N, 2710) bool masks (MaskablePPO's method).
    ``copy=False`` returns the batch's own observation array, overwritten by the next step:
    only for a consumer that is done with it by then (SB3 keeps the last one: keep the copy).
    """

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int, config: GameConfig | None = None, seat: int = 0,
                 opponents: str = "random", reward: str = "win", threads: int = 1,
                 copy: bool = True) -> None:
        config = config if config is not None else GameConfig()
        self.seat = _check_int("seat", seat, 0, config.num_players - 1)
        self.games = BatchedGames(num_envs, config, _learner_seat(config, seat, opponents),
                                  reward, threads)
        self.num_envs = self.games.num_games
        self.copy = copy
        self.single_observation_space = gymnasium.spaces.Box(0.0, OBS_HIGH, (OBSERVATION_SIZE,),
                                                             np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gymnasium.vector.utils.batch_space(
            self.single_observation_space, self.num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space,
                                                               self.num_envs)
        self.render_mode = None
        self._np_random_seed = None

    def _out(self, arr: np.ndarray) -> np.ndarray:
        return arr.copy() if self.copy else arr

    def reset(self, *, seed: int | list[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[Observations, dict[str, Any]]:
        """Start every game (game g from seed + g; an unseeded reset draws a seed)."""
        if isinstance(seed, list):
            raise ValueError("seed must be one int (game g gets seed + g) or None")
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % 2**62)
        self.games.reset(seed)
        return self._out(self.games.obs), {}

    def step(self, actions: npt.ArrayLike) -> tuple[Observations, np.ndarray, np.ndarray,
                                                    np.ndarray, dict[str, Any]]:
        """One learner decision per game; same-step autoreset."""
        g = self.games
        g.step(actions)
        done = g.done.copy()
        infos: dict[str, Any] = {}
        if done.any():
            infos = {"final_obs": np.where(done[:, None], g.final_obs, 0.0).astype(np.float32),
                     "_final_obs": done}
        return (self._out(g.obs), g.rewards[:, self.seat].copy(), done,
                np.zeros(self.num_envs, bool), infos)

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """(N, 2710) bool: the learner's legal actions in each game."""
        return self.games.mask.astype(bool)


class SingleGameEnv(gymnasium.Env):
    """One game of a one-game batch as a ``gymnasium.Env`` (for the libraries' single-env
    checks; train with the vector envs). After an ending step the next game is already set
    up: ``reset()`` without a seed returns it."""

    metadata = {"render_modes": []}

    def __init__(self, config: GameConfig | None = None, seat: int = 0,
                 opponents: str = "random", reward: str = "win", illegal: str = "raise",
                 illegal_penalty: float = -1.0) -> None:
        if illegal not in ("raise", "penalty"):
            raise ValueError(f"illegal must be 'raise' or 'penalty', got {illegal!r}")
        self.vec = MoonRiverVectorEnv(1, config, seat, opponents, reward)
        self.observation_space = self.vec.single_observation_space
        self.action_space = self.vec.single_action_space
        self.illegal = illegal
        self.illegal_penalty = float(illegal_penalty)
        self._started = False

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Observations, dict[str, Any]]:
        """Start a game (from ``seed``), or continue with the next game of the batch."""
        super().reset(seed=seed)
        if seed is not None or not self._started:
            self.vec.reset(seed=seed if seed is not None else
                           int(self.np_random.integers(2**62)))
            self._started = True
        return self.vec.games.obs[0].copy(), {}

    def step(self, action: int) -> tuple[Observations, float, bool, bool, dict[str, Any]]:
        """One learner decision (an illegal one raises, or with ``illegal="penalty"`` ends the
        episode with that reward and ``info["illegal_action"]``; the next reset starts anew)."""
        try:
            obs, rew, term, trunc, _ = self.vec.step(np.array([action]))
        except BatchIllegalActionError:
            if self.illegal == "raise":
                raise
            self._started = False
            return (self.vec.games.obs[0].copy(), self.illegal_penalty, True, False,
                    {"illegal_action": True})
        if term[0]:
            obs = self.vec.games.final_obs[:1].copy()
        return obs[0], float(rew[0]), bool(term[0]), bool(trunc[0]), {}

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """(2710,) bool legal actions."""
        return self.vec.action_masks()[0]


def make_sb3_vec_env(num_envs: int, config: GameConfig | None = None, seat: int = 0,
                     opponents: str = "random", reward: str = "win", threads: int = 1,
                     seed: int = 0) -> Any:
    """An SB3 ``VecEnv`` over :class:`MoonRiverVectorEnv` that ``sb3_contrib.MaskablePPO``
    trains with (masks through ``env_method("action_masks")``); needs stable-baselines3."""
    return _sb3_class()(MoonRiverVectorEnv(num_envs, config, seat, opponents, reward, threads),
                        seed)


_SB3_CLASS: list[type] = []


def _sb3_class() -> type:
    if _SB3_CLASS:
        return _SB3_CLASS[0]
    from stable_baselines3.common.vec_env import VecEnv

    class MoonRiverSB3VecEnv(VecEnv):
        """SB3 ``VecEnv`` over the batched core games (one learner seat per game)."""

        def __init__(self, venv: MoonRiverVectorEnv, seed: int) -> None:
            self.venv = venv
            self._seed = seed
            self._actions: np.ndarray | None = None
            super().__init__(venv.num_envs, venv.single_observation_space,
                             venv.single_action_space)

        def reset(self) -> np.ndarray:
            obs, _ = self.venv.reset(seed=self._seed)
            self._seed += self.num_envs  # a later reset plays new games
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = actions

        def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
            obs, rew, term, _, infos = self.venv.step(self._actions)
            out: list[dict] = [{} for _ in range(self.num_envs)]
            for g in np.flatnonzero(term).tolist():
                out[g]["terminal_observation"] = infos["final_obs"][g]
            return obs, rew, term, out

        def close(self) -> None:
            pass

        def seed(self, seed: int | None = None) -> Sequence[int | None]:
            if seed is not None:
                self._seed = seed
            return [None if seed is None else seed + g for g in range(self.num_envs)]

        def action_masks(self) -> np.ndarray:
            return self.venv.action_masks()

        def _indices_list(self, indices: Any) -> list[int]:
            return list(range(self.num_envs)) if indices is None else \
                list(np.arange(self.num_envs)[indices].reshape(-1))

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            value = getattr(self.venv, attr_name)
            return [value for _ in self._indices_list(indices)]

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            setattr(self.venv, attr_name, value)

        def env_method(self, method_name: str, *method_args: Any, indices: Any = None,
                       **method_kwargs: Any) -> list[Any]:
            if method_name == "action_masks":
                masks = self.venv.action_masks()
                return [masks[g] for g in self._indices_list(indices)]
            result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
            return [result for _ in self._indices_list(indices)]

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            return [False for _ in self._indices_list(indices)]

    _SB3_CLASS.append(MoonRiverSB3VecEnv)
    return MoonRiverSB3VecEnv
