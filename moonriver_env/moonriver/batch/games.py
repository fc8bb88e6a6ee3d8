"""Many Moon River games a call on the compiled core: ``BatchedGames``, the batch itself.

``step(actions)`` writes ``player``, ``obs``, ``mask``, ``rewards``, ``done`` and ``final_obs``
into arrays allocated once (same-step autoreset). See docs/vector.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

import moonriver_env.moonriver.batch.compact as compact
from moonriver_env.moonriver import search
from moonriver_env.moonriver.batch.seats import (
    NetworkSeat,
    Seat,
    SeatLike,
    SeatNetwork,
    check_seats,
    seat_kind,
)
from moonriver_env.moonriver.core import Game as CoreGame
from moonriver_env.moonriver.core import _core
from moonriver_env.moonriver.core.game import game_of, setup_plan_of
from moonriver_env.moonriver.core.rng import seed_words
from moonriver_env.moonriver.rules import actions as A
from moonriver_env.moonriver.rules.config import GameConfig
from moonriver_env.moonriver.rules.game import IllegalActionError, why_illegal

NUM_ACTIONS = len(A.ACTIONS)
REWARD_MODES = ("win", "rank", "score", "margin")  # the core's order
# The search seats' generator: numpy's default_rng([reset seed, SEARCH_STREAM]).
SEARCH_STREAM = 0x736561726368  # "search"


def check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    """``value`` as an int in ``low..high`` (no upper bound when None), else a ValueError."""
    if (type(value) is not int and not isinstance(value, np.integer)) or isinstance(value, bool):
        raise ValueError(f"{name} must be an int, got {value!r:.40}")
    if value < low or (high is not None and value > high):
        allowed = f">= {low}" if high is None else f"in {low}..{high}"
        raise ValueError(f"{name} must be {allowed}, got {value}")
    return int(value)


def check_actions(actions: npt.ArrayLike, n: int, fresh: bool = False) -> npt.NDArray[np.int64]:
    """The step's actions as a contiguous int64 array of n ids (a copy if ``fresh``)."""
    acts = np.asarray(actions)
    if acts.shape != (n,) or not np.issubdtype(acts.dtype, np.integer):
        raise ValueError(f"actions must be {n} integer action ids, got {acts.dtype} array of "
                         f"shape {acts.shape}")
    return acts.astype(np.int64) if fresh else np.ascontiguousarray(acts, dtype=np.int64)


class BatchIllegalActionError(IllegalActionError):
    """An action that is not legal in one game of a batch; ``game_index`` names the game."""

    def __init__(self, game_index: int, action: Any, reason: str, legal: list[str]) -> None:
        self.game_index = game_index
        super().__init__(f"{action} in game {game_index} of the batch (no game was changed)",
                         reason, legal)


class BatchedGames:
    """N games of Moon River stepped together in the core; see docs/vector.md."""

    def __init__(self, num_games: int, config: GameConfig | None = None,
                 seats: Sequence[SeatLike] | None = None, reward: str = "win",
                 threads: int = 1, autoreset: bool = True,
                 observation: str = "float32") -> None:
        self.num_games = check_int("num_games", num_games, 1)
        if observation not in compact.OBSERVATION_KINDS:
            raise ValueError(f"observation must be one of {compact.OBSERVATION_KINDS}, got "
                             f"{observation!r:.40}")
        self.observation = observation
        if not isinstance(autoreset, bool):
            raise ValueError(f"autoreset must be True or False, got {autoreset!r:.40}")
        self.autoreset = autoreset
        self.config = config if config is not None else GameConfig()
        n = self.config.num_players
        self._networks: list[SeatNetwork] = []  # the networks of the batch's network seats
        self._players: list[NetworkSeat] = []  # the network players: one per NetworkSeat.key
        self._player_ids: dict[tuple[Any, ...], int] = {}  # NetworkSeat.key -> player index
        self._prior: npt.NDArray[np.float32] | None = None  # greedy_prior rows, made once
        # the search seats' seeds, one draw per search; seeded again by reset(seed)
        self._search_rng = np.random.default_rng([0, SEARCH_STREAM])
        # rounds of network decisions (one forward or one search per network player) and the
        # network-seat decisions made in them
        self.network_rounds = 0
        self.network_decisions = 0
        self._seats = check_seats(seats if seats is not None else ("learner",) * n, n)
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        self.seats = tuple(seat.name for seat in self._seats)  # the seats by name
        self.reward = reward
        self.threads = check_int("threads", threads, 1)
        self.data = self.config.data
        if observation == "compact":
            compact.check_compact(self.data)
        self._plan = setup_plan_of(self.config, self.data)[1]  # set-ups are drawn in the core
        N = self.num_games
        self.player = np.zeros(N, np.int32)
        shape, dtype = compact.observation_row(observation)
        self.obs: npt.NDArray[Any] = np.zeros((N, shape), dtype)
        self.mask = np.zeros((N, NUM_ACTIONS), np.int8)
        self.rewards = np.zeros((N, n), np.float32)
        self._done = np.zeros(N, np.uint8)
        self.final_obs: npt.NDArray[Any] = np.zeros((N, shape), dtype)
        self._batch: Any = None
        self.seed: int | None = None
        self._bases: list[int] = []  # game g's k-th episode: Game(config, _bases[g] + stride*k)
        self._stride = N  # a pool's size for a batch that is part of one (vector_async)
        self.offset = 0  # the first game's id in that pool: errors name games by it
        self.episodes = np.zeros(N, np.int64)  # episodes begun per game, less one
        # each game's seats' network players (indices into _players; -1: no network seat)
        self._seat_network = np.tile(self._network_row(self._seats), (N, 1))

    def _add_network(self, seat: NetworkSeat) -> int:
        """A network seat's player index: one player per network, simulations, settings, prior."""
        key = seat.key()
        if key not in self._player_ids:
            if not any(net is seat.network for net in self._networks):
                self._networks.append(seat.network)
            self._players.append(seat)
            self._player_ids[key] = len(self._players) - 1
        return self._player_ids[key]

    def _network_row(self, seats: Sequence[Seat]) -> npt.NDArray[np.int16]:
        """Each seat's network player index among the batch's (-1: not a network seat)."""
        return np.array([self._add_network(s) if isinstance(s, NetworkSeat) else -1
                         for s in seats], np.int16)

    @property
    def done(self) -> npt.NDArray[np.bool_]:
        """(N,) bool: which games ended in the last step."""
        return self._done.view(np.bool_)

    @property
    def over(self) -> npt.NDArray[np.bool_]:
        """(N,) bool: which games are over and wait for nothing (only with ``autoreset=False``)."""
        return self.player < 0

    # -------------------------------------------------------------- seeding
    def episode_seed(self, g: int, k: int | None = None) -> int:
        """The seed of game g's k-th episode (its current one when k is None)."""
        if self.seed is None:
            raise RuntimeError("call reset(seed) first")
        k = int(self.episodes[g]) if k is None else k
        return self._bases[g] + self._stride * k

    def _begin(self, g: int, k: int) -> None:
        """Set up game g's k-th episode in the core (with autoreset the core sets up the next)."""
        self.episodes[g] = k
        self._batch.begin(g, seed_words(self._bases[g]), k, self._stride)

    def reset(self, seed: int = 0, *, seeds: Sequence[int] | None = None,
              seats: Sequence[Sequence[SeatLike]] | None = None) -> None:
        """Start every game: game g from ``seed + g`` (or ``seeds[g]``), its k-th episode + N*k."""
        # ``seed`` alone seeds the built-in seats' streams and the search seats' generator;
        # ``seats``: one seat list per game instead of the batch's.
        self.seed = check_int("seed", seed, 0)
        N = self.num_games
        bases = [self.seed + g for g in range(N)]
        if seeds is not None:
            bases = [check_int("seeds[g]", s, 0) for s in seeds]
            if len(bases) != N:
                raise ValueError(f"seeds must hold one seed per game ({N}), got {len(bases)}")
        kinds = None
        if seats is not None:
            if len(seats) != N:
                raise ValueError(f"seats must hold one seat list per game ({N}), got "
                                 f"{len(seats)}")
            rows = [check_seats(row, self.config.num_players) for row in seats]
            kinds = [_seat_kinds(row) for row in rows]
            networks = np.stack([self._network_row(row) for row in rows])
        else:
            networks = np.tile(self._network_row(self._seats), (N, 1))
        self._batch = _core.Batch(N, _seat_kinds(self._seats), REWARD_MODES.index(self.reward),
                                  self.seed % 2**64, self.autoreset,
                                  self._plan, self.observation == "compact")
        self._bases = bases
        self._seat_network = networks
        self._search_rng = np.random.default_rng([self.seed, SEARCH_STREAM])
        for g in range(N):
            if kinds is not None:
                self._batch.set_seats(g, kinds[g])
            self._begin(g, 0)
        self._write_all()

    def restart(self, games: npt.ArrayLike, seeds: Sequence[int | None] | None = None) -> None:
        """Start the listed games anew (next episodes, or from ``seeds``); the others unchanged."""
        if self._batch is None:
            raise RuntimeError("call reset(seed) before restart()")
        rows = [check_int("games[i]", g, 0, self.num_games - 1)
                for g in np.asarray(games, dtype=object).reshape(-1)]
        if seeds is not None and len(seeds) != len(rows):
            raise ValueError(f"seeds must hold one seed (or None) per listed game "
                             f"({len(rows)}), got {len(seeds)}")
        for i, g in enumerate(rows):
            seed = None if seeds is None else seeds[i]
            if seed is None:
                self._begin(g, int(self.episodes[g]) + 1)
            else:
                self._bases[g] = check_int("seeds[i]", seed, 0)
                self._begin(g, 0)
        self._write_all()

    def _write_all(self) -> None:
        """Let built-in seats play up to a learner's decision; write every game's row."""
        self._batch.start(self.player, self.obs, self.mask, self.rewards, self._done,
                          self.final_obs, self.threads)
        self._play_networks()

    def _waiting_on_networks(self) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.int16]]:
        """The games whose next decision is a network seat's, and each one's index in _players."""
        player = self.player
        network = self._seat_network[np.arange(self.num_games), np.maximum(player, 0)]
        network[player < 0] = -1
        games = np.flatnonzero(network >= 0)
        return games, network[games]

    def _play_networks(self) -> None:
        """Network seats decide in rounds (a forward or search a player) until a learner's turn."""
        if not self._players:
            return
        while True:
            games, player = self._waiting_on_networks()
            if games.size == 0:
                return
            actions = np.empty(games.size, np.int64)
            for k in np.unique(player).tolist():
                rows = np.flatnonzero(player == k)
                seat = self._players[k]
                moves = self._search_moves if seat.simulations else self._network_moves
                actions[rows] = moves(seat, games[rows])
            self._batch.step_network(games.astype(np.int64), actions, self.player, self.obs,
                                     self.mask, self.rewards, self._done, self.final_obs,
                                     self.threads)
            self.network_rounds += 1
            self.network_decisions += int(games.size)

    def _network_moves(self, seat: NetworkSeat, games: npt.NDArray[np.intp]
                       ) -> npt.NDArray[np.int64]:
        """The network's most likely legal action in each listed game (AZAgent's), one forward."""
        prior = None
        if seat.greedy_prior is not None:
            if self._prior is None:
                self._prior = np.empty((self.num_games, NUM_ACTIONS), np.float32)
            prior = self.greedy_prior(games, out=self._prior, shape_weight=seat.greedy_prior)
        obs = self.obs[games]
        if self.observation == "compact":
            obs = compact.expand_observation(obs)
        logits, _ = seat.network.evaluate(obs, self.mask[games], self.config.num_players, prior)
        # the softmax keeps the order: the largest logit is the most likely move
        moves: npt.NDArray[np.int64] = np.argmax(logits, axis=1).astype(np.int64)
        return moves

    def _search_moves(self, seat: NetworkSeat, games: npt.NDArray[np.intp]
                      ) -> npt.NDArray[np.int64]:
        """AZSearchAgent's action in each listed game, the games searched together."""
        # Each game is seeded by its batch index: searched alone with indices=[g] and the same
        # seed, it gets the same search.
        rows = games.tolist()
        batched = search.BatchedSearch(
            [self.game(g) for g in rows], simulations=seat.simulations,
            seed=int(self._search_rng.integers(2**62)), algorithm="gumbel",
            threads=self.threads, indices=rows, greedy_prior=seat.greedy_prior,
            **seat.search_settings(self.config.num_players))
        return batched.run(seat.network.core).action.astype(np.int64)

    # ----------------------------------------------------------------- step
    def step(self, actions: npt.ArrayLike) -> None:
        """Apply one decision per game (N action ids); results land in this object's arrays."""
        if self._batch is None:
            raise RuntimeError("call reset(seed) before step()")
        acts = check_actions(actions, self.num_games)
        if self._players and self._waiting_on_networks()[0].size:
            raise RuntimeError("network seats' decisions were left unplayed (interrupted): "
                               "reset() or restart() the batch")
        bad = self._batch.step(acts, self.player, self.obs, self.mask, self.rewards,
                               self._done, self.final_obs, self.threads)
        if bad >= 0:
            self._raise_illegal(bad, int(acts[bad]))
        self._play_networks()
        if self.autoreset:  # ended games moved on to their next episodes inside the core
            self.episodes += self._done

    def _raise_illegal(self, g: int, aid: int) -> None:
        game = self.game(g)
        legal = [a.text() for a in game.legal_actions()]
        g += self.offset  # the game's id in its pool
        if not 0 <= aid < NUM_ACTIONS:
            raise BatchIllegalActionError(g, aid, f"action ids are 0..{NUM_ACTIONS - 1}", legal)
        raise BatchIllegalActionError(g, A.ACTIONS[aid].text(), why_illegal(game, aid), legal)

    def greedy_prior(self, games: npt.ArrayLike, out: npt.NDArray[np.float32] | None = None,
                     shape_weight: float = 0.05) -> npt.NDArray[np.float32]:
        """``agents.pretrained.greedy_prior`` of the listed games in one core call, into ``out``."""
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
        """One uniform random legal id per game, drawn in the core (streams seeded by ``reset``)."""
        if self._batch is None:
            raise RuntimeError("call reset(seed) first")
        out = np.empty(self.num_games, np.int64)
        self._batch.random_actions(out, self.threads)
        return out

    # ---------------------------------------------------------------- views
    def game(self, g: int) -> CoreGame:
        """A copy of game g's current state as a core Game (records, text, checks)."""
        if self._batch is None:
            raise RuntimeError("call reset(seed) first")
        g = check_int("g", g, 0, self.num_games - 1)
        return game_of(self.config, self.episode_seed(g), self._batch.game(g))

    @property
    def builtin_decisions(self) -> int:
        """Decisions the built-in seats made inside the core since the last reset."""
        return 0 if self._batch is None else int(self._batch.builtin_decisions)


def _seat_kinds(seats: Sequence[Seat]) -> list[int]:
    """The core's seat kinds of checked seats."""
    kinds = [kind for kind in map(seat_kind, seats) if kind is not None]
    assert len(kinds) == len(seats), seats
    return kinds
