"""Many games per call on the compiled core: batched steps, a Gymnasium 1.x ``VectorEnv``
(``gymnasium.make_vec("MoonRiver-v0", num_envs=N)``: autoreset modes, per-game seeds and
resets, masks in ``infos``), an SB3 ``VecEnv`` and a batched self-play view.

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

``observation="compact"``: ``obs`` and ``final_obs`` are (N, 4940) uint8 instead, written by
the core directly: the same values as raw integers (docs/observation.md has the layout and
scales); ``expand_observation(compact)`` gives the float32 observation back exactly.

Seats are ``"learner"`` (Python decides), ``"random"`` (uniform over legal actions),
``"greedy"`` (``agents.GreedyAgent``'s ranking, the core's ``greedy_values``: best value, then
best tie-break, remaining ties drawn at random) or ``"mcts:N"`` (``agents.MCTSAgent`` with N
simulations: the core's ``mcts_search``, seeded from the game's stream, the most visited action,
ties drawn): built-in seats are played inside the core,
GIL released, so Python sees only learner decisions. They draw from one SplitMix64 stream per
game, seeded from the reset seed and the game's index, so ``threads`` (the batch split over
that many ``std::thread``s) never changes a result. The greedy seat ranks as GreedyAgent does;
only its draws among equal choices come from the core's stream instead of the agent's.

Network seats, ``"pretrained"`` (the shipped network) and ``"az:PATH.npz"`` (a
``moonriver-train-az`` file, loaded when the batch takes the seat), play ``agents.az.AZAgent``'s
moves (the policy's most likely legal action). The core plays their forced decisions and stops
at their others; after each core step the batch decides them in rounds (each round: the waiting
games' greedy priors in one core call, one numpy forward per network, then ``step_network``
plays on in the core) until every game waits on a learner, so they too never reach Python as
agent-steps, and rewards, autoreset, ``final_obs`` and seeds behave as with the other seats.
Search seats, ``"pretrained+search:SIMS"`` and ``"az+search:PATH.npz:SIMS"`` (SIMS simulations
a decision, ``agents.az.AZSearchAgent``'s search), are network seats too: in each round the
games waiting on one are searched together, one ``moonriver_env.moonriver.search.BatchedSearch`` per
network and simulation count, seeded from a generator that ``reset(seed)`` seeds.

**Seeds.** ``reset(seed)`` starts game g of the batch from ``seed + g`` (``reset(seed,
seeds=[...])``: from ``seeds[g]``); its k-th episode (k = 0, 1, ...) uses ``seed + g + N * k``,
so game g of a batch always replays the same games (``moonriver_env.moonriver.core.Game(config,
seed + g
+ N * k)``), and ``restart(games)`` moves the listed games on to their next episodes. The
adapters follow the field's conventions: as EnvPool's ``seed + env_id``, game g's series
starts at ``seed + g``; as Gymnasium's, ``reset(seed=...)`` reseeds and a ``reset()`` without a
seed goes on: every game moves on to an episode its slot has not played, so a later reset
never replays a game (the SB3 ``VecEnv``'s too). Every set-up is drawn inside the core from
its seed (numpy's ``default_rng`` draw for draw, the engine's games): a game that ends in a
step is replaced there by its slot's next episode, with no Python work per game.

**Illegal actions.** If any action is not legal in its game, ``step`` raises
``BatchIllegalActionError`` (an ``IllegalActionError``) naming the first such game index, the
action and why, and no game changes.
"""

from __future__ import annotations

import functools
import os
import zipfile
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium.vector import AutoresetMode

from moonriver_env.common.gym import check_illegal
from moonriver_env.moonriver.aec_env import check_number
from moonriver_env.moonriver.core import Game as CoreGame
from moonriver_env.moonriver.core import _core
from moonriver_env.moonriver.core.game import game_of, setup_plan_of
from moonriver_env.moonriver.core.rng import seed_words
from moonriver_env.moonriver.observation import (
    MAX_PLAYERS,
    NUM_ROUNDS,
    NUMBER_SCALE,
    OBSERVATION_SIZE,
    RANCH_CHANNELS,
    SCORE_SCALE,
    VIEWS,
)
from moonriver_env.moonriver.rules import actions as A
from moonriver_env.moonriver.rules.components import NUM_COWS
from moonriver_env.moonriver.rules.config import GameConfig
from moonriver_env.moonriver.rules.game import IllegalActionError, why_illegal

NUM_ACTIONS = len(A.ACTIONS)
OBS_HIGH = 64.0  # moonriver_v0's observation bound
SEAT_KINDS = {"learner": _core.SEAT_LEARNER, "random": _core.SEAT_RANDOM,
              "greedy": _core.SEAT_GREEDY, "pretrained": _core.SEAT_NETWORK}
OPPONENT_NAMES = ("'random', 'greedy', 'mcts:N' (N simulations, 1..65535), 'pretrained' (the "
                  "shipped network), 'az:PATH.npz' (a moonriver-train-az network), "
                  "'pretrained+search:SIMS' or 'az+search:PATH.npz:SIMS' (the network's search, "
                  "SIMS simulations a decision)")
SEAT_NAMES = "'learner', " + OPPONENT_NAMES
_SEARCH_PREFIXES = {"pretrained+search:": "pretrained", "az+search:": "az:"}
# The search seats' generator: numpy's default_rng([reset seed, SEARCH_STREAM]).
SEARCH_STREAM = 0x736561726368  # "search"


def _search_parts(name: str) -> tuple[str, str] | None:
    """A search seat name's network seat (``"pretrained"`` or ``"az:PATH"``, ``"az:"`` when
    PATH is missing) and budget text; None for a name that is not a search seat's."""
    for prefix, network in _SEARCH_PREFIXES.items():
        if name.startswith(prefix):
            rest = name[len(prefix):]
            if network == "pretrained":
                return network, rest
            path, _, budget = rest.rpartition(":")
            return network + path, budget
    return None


def _search_problem(name: object) -> str | None:
    """Why a seat name that starts as a search seat's names none (one line), else None."""
    parts = _search_parts(name) if isinstance(name, str) else None
    if parts is None:
        return None
    from moonriver_env.agents.az import MAX_SIMULATIONS
    from moonriver_env.agents.registry import SECONDS_BUDGET

    network, budget = parts
    sims = f"SIMS, an integer 1..{MAX_SIMULATIONS} without a leading zero"
    if network == "az:":
        return (f"seat {name!r:.80}: an az search seat is 'az+search:PATH.npz:SIMS' (a network "
                f"file, then {sims})")
    if SECONDS_BUDGET.fullmatch(budget):
        return (f"seat {name!r:.80}: batch seats take a simulation count ({sims}), not a time "
                f"budget")
    if not (budget.isascii() and budget.isdigit()) or budget[0] == "0" \
            or int(budget) > MAX_SIMULATIONS:
        return f"seat {name!r:.80}: a search seat's budget must be {sims}, got {budget!r:.20}"
    return None


def _network_seat(name: str) -> tuple[str, int] | None:
    """A network seat's network (``"pretrained"`` or ``"az:PATH"``) and simulations a decision
    (0: the policy alone), or None for a name that is no network seat."""
    if name == "pretrained" or (name.startswith("az:") and len(name) > 3):
        return name, 0
    parts = _search_parts(name)
    if parts is None or _search_problem(name) is not None:
        return None
    return parts[0], int(parts[1])


def seat_kind(name: object) -> int | None:
    """The core's seat kind of a seat name (``SEAT_KINDS``, ``"mcts:N"``: the core's IS-MCTS
    with N simulations, ``MCTSAgent``'s defaults, or ``"az:PATH"``, ``"pretrained+search:SIMS"``,
    ``"az+search:PATH:SIMS"``: a network seat), or None for no seat kind; a network seat's file
    is checked when a batch takes it."""
    if not isinstance(name, str):
        return None
    if name in SEAT_KINDS:
        return SEAT_KINDS[name]
    if _network_seat(name) is not None:
        return _core.SEAT_NETWORK
    sims = name.removeprefix("mcts:")
    if sims != name and sims.isascii() and sims.isdigit() and sims[0] != "0" \
            and int(sims) <= _core.MAX_MCTS_SIMULATIONS:
        return _core.SEAT_MCTS + int(sims)
    return None


def _seat_kinds(names: Sequence[str]) -> list[int]:
    """The core's seat kinds of seat names already checked (``_check_seats``)."""
    kinds = [kind for kind in map(seat_kind, names) if kind is not None]
    assert len(kinds) == len(names), names
    return kinds


def _network_path(name: str) -> str:
    """The network file a network seat plays: the shipped one for ``"pretrained"`` (and
    ``"pretrained+search:SIMS"``), PATH for ``"az:PATH"`` (and ``"az+search:PATH:SIMS"``)."""
    seat = _network_seat(name)
    assert seat is not None, name
    if seat[0] == "pretrained":
        from moonriver_env.agents.az import shipped_path

        return shipped_path()
    return seat[0][3:]


def _load_network(name: str) -> Any:
    """The numpy network (``agents.az.NumpyAZNet``, loaded once per file) of a network seat;
    a missing file or one that is not a moonriver-train-az network is a
    ValueError."""
    from moonriver_env.agents.az import cached_az

    path = _network_path(name)
    if not os.path.isfile(path):
        form = "az+search:PATH.npz:SIMS" if name.startswith("az+search:") else "az:PATH.npz"
        what = "the shipped network" if name.startswith("pretrained") else \
            f"{form} names a file written by moonriver-train-az"
        raise ValueError(f"seat {name!r}: no network file {path!r} ({what})")
    try:
        return cached_az(path)[0]
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise ValueError(f"seat {name!r}: {path!r} is not a moonriver-train-az network "
                         f"({exc!s:.120})") from None

REWARD_MODES = ("win", "rank", "score", "margin")  # the core's order

ActionMask = npt.NDArray[np.int8]
Observations = npt.NDArray[np.float32]
OBSERVATION_KINDS = ("float32", "compact")
# The compact observation (docs/observation.md): uint8 rows of COMPACT_SIZE, the float
# observation's values as raw integers at its offsets, then each seat's score's high byte and
# the denominators of the "game" view's box and pile fractions.
COMPACT_SIZE = int(_core.COMPACT_SIZE)
_O_SCORES_HIGH = OBSERVATION_SIZE
_O_NUM_PLOTS = _O_SCORES_HIGH + MAX_PLAYERS
_O_NUM_PARTNERS = _O_NUM_PLOTS + 1


def _compact_scales() -> npt.NDArray[np.float64]:
    """Each float observation value's divisor of its compact integer (1: unscaled)."""
    scales = np.ones(OBSERVATION_SIZE, np.float64)
    for view in ("reserves", "columns"):  # a plot's number: its last feature
        scales[VIEWS[view].start + 13:VIEWS[view].stop:14] = NUMBER_SCALE
    scales[VIEWS["reserve_size"].start:VIEWS["reserve_size"].stop] = 4.0
    scales[VIEWS["pile"].start:VIEWS["pile"].stop] = 5.0
    scales[VIEWS["scores"].start:VIEWS["scores"].stop] = SCORE_SCALE
    context, game = VIEWS["context"].start, VIEWS["game"].start
    scales[context + 3:context + 5] = 2.0  # builds done, builds allowed
    scales[context + 5] = 3.0  # cowboy moves left
    scales[context + 8] = 2.0  # bonus tiles left
    scales[game] = NUM_ROUNDS
    scales[game + 3] = NUM_COWS
    return scales


_SCALES = _compact_scales()
_SCORES = np.arange(VIEWS["scores"].start, VIEWS["scores"].stop)
_RANCHES = VIEWS["ranches"]
_FREE = np.arange(_RANCHES.start, _RANCHES.stop).reshape(_RANCHES.shape)[
    :, RANCH_CHANNELS.index("free")].ravel()  # the free planes' places


def _check_compact(data: Any) -> None:
    """Refuse the compact observation for data files whose values a byte cannot hold."""
    sizes = {"plot number": int(data.number.max(initial=0)), "plots in the box":
             data.num_plots, "partner tokens": data.num_partners}
    over = {name: value for name, value in sizes.items() if value > 255}
    if over:
        found = ", ".join(f"{name} {value}" for name, value in over.items())
        raise ValueError(f"observation='compact' holds values up to 255; these data files "
                         f"have {found}: use observation='float32'")


def expand_observation(compact: npt.ArrayLike) -> Observations:
    """The float32 observation(s) of compact ones (uint8, last axis COMPACT_SIZE), exactly."""
    c = np.asarray(compact)
    if c.dtype != np.uint8 or c.ndim < 1 or c.shape[-1] != COMPACT_SIZE:
        raise ValueError(f"expand_observation takes uint8 rows of {COMPACT_SIZE} (the compact "
                         f"observation), got {c.dtype} of shape {c.shape}")
    raw = c[..., :OBSERVATION_SIZE].astype(np.float64)
    raw[..., _SCORES] += 256.0 * c[..., _O_SCORES_HIGH:_O_NUM_PLOTS]
    raw[..., _FREE] = c[..., _FREE].view(np.int8)  # a built cell off the ranch: -1
    raw /= _SCALES
    game = VIEWS["game"].start
    raw[..., game + 1] /= c[..., _O_NUM_PLOTS]  # plots left in the box / the game's plots
    raw[..., game + 2] /= c[..., _O_NUM_PARTNERS]  # partners in the pile / the game's partners
    return raw.astype(np.float32)


class _NetworkPlayer(NamedTuple):
    """What a network seat plays: a batch's network (its index there) with ``simulations``
    a decision (0: the policy alone, else the search with ``settings``)."""

    network: int
    simulations: int
    settings: dict[str, Any]
    policy_prior: bool  # the policy alone of a network that adds Greedy's prior


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
                 threads: int = 1, autoreset: bool = True,
                 observation: str = "float32") -> None:
        self.num_games = _check_int("num_games", num_games, 1)
        if observation not in OBSERVATION_KINDS:
            raise ValueError(f"observation must be one of {OBSERVATION_KINDS}, got "
                             f"{observation!r:.40}")
        self.observation = observation
        if not isinstance(autoreset, bool):
            raise ValueError(f"autoreset must be True or False, got {autoreset!r:.40}")
        self.autoreset = autoreset
        self.config = config if config is not None else GameConfig()
        n = self.config.num_players
        self._networks: list[Any] = []  # the networks of the batch's network seats
        self._network_ids: dict[str, int] = {}  # a network file's path -> its index there
        self._players: list[_NetworkPlayer] = []  # what each network seat plays
        self._with_prior = np.zeros(0, bool)  # by network seat: its policy takes Greedy's prior
        self._player_ids: dict[tuple[str, int], int] = {}  # (path, simulations) -> player
        self._prior: npt.NDArray[np.float32] | None = None  # greedy_prior rows, made once
        # the search seats' seeds, one draw per search; seeded again by reset(seed)
        self._search_rng = np.random.default_rng([0, SEARCH_STREAM])
        # rounds of network decisions (one forward per policy network, one search per search
        # seat's network and simulations) and the network-seat decisions made in them
        self.network_rounds = 0
        self.network_decisions = 0
        seats = self._check_seats(seats if seats is not None else ("learner",) * n)
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        self.seats = seats
        self.reward = reward
        self.threads = _check_int("threads", threads, 1)
        self.data = self.config.data
        if observation == "compact":
            _check_compact(self.data)
        self._plan = setup_plan_of(self.config, self.data)[1]  # set-ups are drawn in the core
        N = self.num_games
        self.player = np.zeros(N, np.int32)
        shape, dtype = _observation_row(observation)
        self.obs: npt.NDArray[Any] = np.zeros((N, shape), dtype)
        self.mask = np.zeros((N, NUM_ACTIONS), np.int8)
        self.rewards = np.zeros((N, n), np.float32)
        self._done = np.zeros(N, np.uint8)
        self.final_obs: npt.NDArray[Any] = np.zeros((N, shape), dtype)
        self._batch: Any = None
        self.seed: int | None = None
        self._bases: list[int] = []  # game g's k-th episode: Game(config, _bases[g] + stride*k)
        self._stride = N  # a pool's size for a batch that is part of one (vector_async)
        self.episodes = np.zeros(N, np.int64)  # episodes begun per game, less one
        # each game's seats' network players (indices into _players; -1: no network seat)
        self._seat_network = np.tile(self._network_row(seats), (N, 1))

    def _check_seats(self, seats: Sequence[str]) -> tuple[str, ...]:
        n = self.config.num_players
        seats = tuple(seats)
        if len(seats) != n or any(seat_kind(s) is None for s in seats):
            problem = next(filter(None, map(_search_problem, seats)), None)
            if problem is not None:
                raise ValueError(problem)
            raise ValueError(f"seats must name one of {SEAT_NAMES} for each of the {n} "
                             f"players, got {seats!r:.80}")
        if "learner" not in seats:
            raise ValueError(f"at least one seat must be 'learner', got {seats!r:.80}")
        return seats

    def _add_network(self, name: str) -> int:
        """The index of a network seat's player among the batch's: one per network file and
        simulations (``"pretrained"`` and ``"pretrained+search:16"`` are two players of one
        network, loaded once, when new)."""
        seat = _network_seat(name)
        assert seat is not None, name
        path = os.path.abspath(_network_path(name))
        key = (path, seat[1])
        if key in self._player_ids:
            return self._player_ids[key]
        if path not in self._network_ids:
            net = _load_network(name)
            self._networks.append(net)
            self._network_ids[path] = len(self._networks) - 1
        index = self._network_ids[path]
        from moonriver_env.agents.az import play_search_settings

        self._players.append(_NetworkPlayer(
            index, seat[1], play_search_settings(),
            seat[1] == 0 and bool(self._networks[index].uses_prior)))
        self._player_ids[key] = len(self._players) - 1
        self._with_prior = np.array([p.policy_prior for p in self._players])
        return self._player_ids[key]

    def _network_row(self, seats: Sequence[str]) -> npt.NDArray[np.int16]:
        """Each seat's network player index among the batch's (-1: not a network seat)."""
        return np.array([self._add_network(s) if seat_kind(s) == _core.SEAT_NETWORK else -1
                         for s in seats], np.int16)

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
        return self._bases[g] + self._stride * k

    def _begin(self, g: int, k: int) -> None:
        """Set up game g's k-th episode in the core (with autoreset, the core sets up its
        later ones as its games end)."""
        self.episodes[g] = k
        self._batch.begin(g, seed_words(self._bases[g]), k, self._stride)

    def reset(self, seed: int = 0, *, seeds: Sequence[int] | None = None,
              seats: Sequence[Sequence[str]] | None = None) -> None:
        """Start every game: game g from ``seed + g``; its k-th episode from seed + g + N*k.

        ``seeds``: game g from ``seeds[g]`` instead (its k-th episode from seeds[g] + N*k;
        ``seed`` still seeds the built-in seats' streams). ``seats``: one seat list per game,
        instead of the batch's ``seats`` for every game (each with at least one
        ``"learner"``). The search seats' generator is seeded from ``seed`` alone (numpy's
        ``default_rng([seed, SEARCH_STREAM])``; ``restart`` goes on with it)."""
        self.seed = _check_int("seed", seed, 0)
        N = self.num_games
        bases = [self.seed + g for g in range(N)]
        if seeds is not None:
            bases = [_check_int("seeds[g]", s, 0) for s in seeds]
            if len(bases) != N:
                raise ValueError(f"seeds must hold one seed per game ({N}), got {len(bases)}")
        kinds = None
        if seats is not None:
            if len(seats) != N:
                raise ValueError(f"seats must hold one seat list per game ({N}), got "
                                 f"{len(seats)}")
            kinds = [[seat_kind(s) for s in self._check_seats(row)] for row in seats]
            networks = np.stack([self._network_row(row) for row in seats])
        else:
            networks = np.tile(self._network_row(self.seats), (N, 1))
        self._batch = _core.Batch(N, _seat_kinds(self.seats), REWARD_MODES.index(self.reward),
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
        """Start the listed games anew, the others unchanged: game g's next episode (one its
        slot has not played), or with ``seeds[i]`` given, games[i] from that seed (its k-th
        episode from seeds[i] + N*k). After it ``rewards`` and ``done`` are zero for every
        game, as after ``reset``; the built-in seats' streams go on."""
        if self._batch is None:
            raise RuntimeError("call reset(seed) before restart()")
        rows = [_check_int("games[i]", g, 0, self.num_games - 1)
                for g in np.asarray(games, dtype=object).reshape(-1)]
        if seeds is not None and len(seeds) != len(rows):
            raise ValueError(f"seeds must hold one seed (or None) per listed game "
                             f"({len(rows)}), got {len(seeds)}")
        for i, g in enumerate(rows):
            seed = None if seeds is None else seeds[i]
            if seed is None:
                self._begin(g, int(self.episodes[g]) + 1)
            else:
                self._bases[g] = _check_int("seeds[i]", seed, 0)
                self._begin(g, 0)
        self._write_all()

    def _write_all(self) -> None:
        """Let built-in seats play up to a learner's decision; write every game's row."""
        self._batch.start(self.player, self.obs, self.mask, self.rewards, self._done,
                          self.final_obs, self.threads)
        self._play_networks()

    def _waiting_on_networks(self) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.int16]]:
        """The games whose next decision is a network seat's, and each one's network player
        (an index into ``_players``)."""
        player = self.player
        network = self._seat_network[np.arange(self.num_games), np.maximum(player, 0)]
        network[player < 0] = -1
        games = np.flatnonzero(network >= 0)
        return games, network[games]

    def _play_networks(self) -> None:
        """Network seats decide in rounds until every game waits on a learner (or is over):
        each round, the games waiting on a policy seat take their greedy prior in one core
        call and each network's decisions in one forward, the games waiting on a search seat
        are searched together (one search per network and simulations), and the core applies
        the moves and plays on (the learner step they belong to goes on: rewards, done and
        final_obs as ``step``)."""
        if not self._players:
            return
        while True:
            games, player = self._waiting_on_networks()
            if games.size == 0:
                return
            actions = np.empty(games.size, np.int64)
            prior = None
            with_prior = np.flatnonzero(self._with_prior[player])
            if with_prior.size:
                if self._prior is None:
                    self._prior = np.empty((self.num_games, NUM_ACTIONS), np.float32)
                from moonriver_env.agents.pretrained import SHAPE_WEIGHT

                prior = self.greedy_prior(games[with_prior], out=self._prior,
                                          shape_weight=SHAPE_WEIGHT)
            for k in np.unique(player).tolist():
                rows = np.flatnonzero(player == k)
                seat = self._players[k]
                if seat.simulations:
                    actions[rows] = self._search_moves(seat, games[rows])
                    continue
                rows_prior = None
                if seat.policy_prior:
                    assert prior is not None
                    rows_prior = prior[np.searchsorted(with_prior, rows)]
                actions[rows] = self._network_moves(self._networks[seat.network], games[rows],
                                                    rows_prior)
            self._batch.step_network(games.astype(np.int64), actions, self.player, self.obs,
                                     self.mask, self.rewards, self._done, self.final_obs,
                                     self.threads)
            self.network_rounds += 1
            self.network_decisions += int(games.size)

    def _network_moves(self, net: Any, games: npt.NDArray[np.intp],
                       prior: npt.NDArray[np.float32] | None) -> npt.NDArray[np.int64]:
        """The network's most likely legal action in each listed game (``agents.az.AZAgent``
        deterministic: the argmax of its policy), from one forward."""
        obs = self.obs[games]
        if self.observation == "compact":
            obs = expand_observation(obs)
        logits, _ = net.evaluate(obs, self.mask[games], self.config.num_players, prior)
        return np.argmax(logits, axis=1).astype(np.int64)  # the softmax keeps the order

    def _search_moves(self, seat: _NetworkPlayer, games: npt.NDArray[np.intp]
                      ) -> npt.NDArray[np.int64]:
        """The search's action in each listed game (``agents.az.AZSearchAgent``'s search: the
        network's recipe constants, no Gumbel noise), the games searched together: one
        ``BatchedSearch`` over their core games, its seed the next draw of the batch's
        generator, each game seeded there by its index in the batch (a game searched alone with
        ``indices=[g]`` and that seed gets the same search), the leaves valued inside the core
        (``BatchedSearch.run``)."""
        from moonriver_env.agents.pretrained import SHAPE_WEIGHT
        from moonriver_env.moonriver.search import BatchedSearch

        net = self._networks[seat.network]
        rows = games.tolist()
        search = BatchedSearch([self.game(g) for g in rows], simulations=seat.simulations,
                               seed=int(self._search_rng.integers(2**62)), algorithm="gumbel",
                               threads=self.threads, indices=rows,
                               greedy_prior=SHAPE_WEIGHT if net.uses_prior else None,
                               **seat.settings)
        return search.run(net.core).action.astype(np.int64)

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
        if not 0 <= aid < NUM_ACTIONS:
            raise BatchIllegalActionError(g, aid, f"action ids are 0..{NUM_ACTIONS - 1}", legal)
        raise BatchIllegalActionError(g, A.ACTIONS[aid].text(), why_illegal(game, aid), legal)

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
        self._batch.random_actions(out, self.threads)
        return out

    # ---------------------------------------------------------------- views
    def game(self, g: int) -> CoreGame:
        """A copy of game g's current state as a core Game (records, text, checks)."""
        if self._batch is None:
            raise RuntimeError("call reset(seed) first")
        g = _check_int("g", g, 0, self.num_games - 1)
        return game_of(self.config, self.episode_seed(g), self._batch.game(g))

    @property
    def builtin_decisions(self) -> int:
        """Decisions the built-in seats made inside the core since the last reset."""
        return 0 if self._batch is None else int(self._batch.builtin_decisions)


def _learner_seat(config: GameConfig, seat: int, opponents: str) -> tuple[str, ...]:
    n = config.num_players
    seat = _check_int("seat", seat, 0, n - 1)
    if seat_kind(opponents) in (None, SEAT_KINDS["learner"]):
        problem = _search_problem(opponents)
        if problem is not None:
            raise ValueError(problem)
        raise ValueError(f"opponents must be one of {OPPONENT_NAMES}, got {opponents!r:.40}")
    return tuple("learner" if p == seat else opponents for p in range(n))


class MoonRiverVectorEnv(gymnasium.vector.VectorEnv):
    """Gymnasium ``VectorEnv``: one learner seat per game, built-in opponents in the core.

    Observations are (N, 4934) float32, or with ``observation="compact"`` (N, 4940) uint8
    (``expand_observation`` gives the float32 ones); ``dict_observation=True``: a Dict of
    ``observation`` and ``action_mask``, as the PettingZoo env's. Actions N ids of
    ``Discrete(2710)``, rewards the learner's end-of-game reward. ``infos["action_mask"]``
    (N, 2710) int8 after ``reset`` and every ``step`` (``infos["_action_mask"]`` marks every
    row, Gymnasium's convention for an info key), and ``action_masks()`` the same as bool
    (MaskablePPO's method): a row's mask holds the actions its next step takes.

    ``autoreset_mode`` (``gymnasium.vector.AutoresetMode``, default ``NEXT_STEP`` as
    Gymnasium's own vector envs): ``NEXT_STEP``: a done row shows the ended game with every
    action in its mask (pgx's terminal mask: a masked sampler always has actions to draw
    from); the next step ignores that row's action, whatever it is, and starts its next game
    (reward 0, not done). ``SAME_STEP``: the next game and its mask are there at once;
    ``infos["final_obs"]`` holds the ended game's observation (``infos["_final_obs"]`` marks
    the rows) and ``infos["final_info"]`` its step's info (an all-zero mask: the ended game
    takes no action). ``DISABLED``: an ended game waits for
    ``reset(options={"reset_mask": m})`` and its mask is all zero; stepping it before raises.

    Seeds as Gymnasium's vector envs take them: ``reset(seed=s)`` is ``reset(seed=[s, s+1,
    ...])`` in every draw, and ``np_random_seed`` is each row's seed. ``call``, ``get_attr``
    and ``set_attr`` reach the rows as ``SyncVectorEnv``'s reach its sub-envs (one value per
    row, in a tuple): the names in :data:`ROW_ATTRIBUTES`, of which ``set_attr`` sets
    :data:`SETTABLE_ROW_ATTRIBUTES` (one value for every row: the rows share one batch).

    ``illegal="raise"`` raises ``BatchIllegalActionError`` and changes no game;
    ``"penalty"``: that row's episode ends with reward ``illegal_penalty``, terminated and
    ``infos["illegal_action"]`` (under ``SAME_STEP`` also in ``infos["final_info"]``, where
    Gymnasium's vector envs put the ended step's info; the game is dropped; the row's next game
    follows as after any ending), the other rows step as usual. ``copy=False`` returns the
    batch's own arrays, overwritten by the next step: only for a consumer that is done with
    them by then.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int, config: GameConfig | None = None, seat: int = 0,
                 opponents: str = "random", reward: str = "win", threads: int = 1,
                 copy: bool = True, *, autoreset_mode: AutoresetMode | str =
                 AutoresetMode.NEXT_STEP, illegal: str = "raise", illegal_penalty: float = -1.0,
                 dict_observation: bool = False, observation: str = "float32") -> None:
        config = config if config is not None else GameConfig()
        self.seat = _check_int("seat", seat, 0, config.num_players - 1)
        self.autoreset_mode = _check_autoreset_mode(autoreset_mode)
        check_illegal(illegal)
        check_number("illegal_penalty", illegal_penalty, "the reward of an illegal action")
        self.illegal = illegal
        self.illegal_penalty = float(illegal_penalty)
        self.games = BatchedGames(num_envs, config, _learner_seat(config, seat, opponents),
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
        """Start games. ``seed``: an int (game g from seed + g, its k-th episode seed + g +
        N*k), one seed or None per game, or None: an env never reset draws a seed, a later
        reset moves every game on to its next episode (never one already played).
        ``options={"reset_mask": m}`` (N bools) restarts only the marked games.

        A seed (int or list) without ``reset_mask`` starts a new batch: the same seed list
        replays the same games whatever came before, built-in seats' draws included (their
        streams are seeded from the list's ints: an int's list ``[s, s+1, ...]`` from ``s``,
        as the int itself; a None entry's game is its slot's next episode, or drawn in an env
        never reset). With ``reset_mask`` the marked games are set up from their seeds and the
        built-in seats' streams go on. ``np_random_seed`` follows: a row's seed is the one
        its last seeded reset gave it."""
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
        """A whole new batch: row g from ``seeds[g]`` (None: its next episode, or a drawn
        seed in an env never reset)."""
        n = self.num_envs
        filled = [self._next_seed(g) if s is None else s for g, s in enumerate(seeds)]
        given = [s for s in seeds if s is not None]  # the streams: from these alone
        if len(given) == n and given == list(range(given[0], given[0] + n)):
            self.games.reset(given[0])  # an int's list: the int's games and streams
        elif self.games.seed is None and not given:
            self.games.reset(filled[0])  # np_random_seed drawn: as an int
        else:
            self.games.reset(_mixed(given) if given else _draw_seed(), seeds=filled)
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
        """Game g's seed for a None entry of a seed list: its slot's next episode (never one
        it played), or its drawn ``np_random_seed`` in a batch never started."""
        if self.games.seed is None:
            return self.np_random_seed[g]
        return self.games.episode_seed(g, int(self.games.episodes[g]) + 1)

    @property
    def np_random_seed(self) -> tuple[int, ...]:  # type: ignore[override]
        """Each row's seed, as ``SyncVectorEnv`` gives its sub-envs': the one its last seeded
        reset gave it (``reset(seed=s)``: s + g). Read before the first reset, the seeds are
        drawn then (``seed + g``, ``seed`` drawn) and a first ``reset()`` without a seed plays
        them; ``reset(seed=list(env.np_random_seed))`` replays a batch's first games."""
        if self._row_seeds is not None:
            return tuple(self._row_seeds)
        if self._first_seed is None:
            self._first_seed = _draw_seed()
        return tuple(self._first_seed + g for g in range(self.num_envs))

    # ----------------------------------------------------------------- step
    def step(self, actions: npt.ArrayLike) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray,
                                                    dict[str, Any]]:
        """One learner decision per game; see the class docstring for autoreset and illegal
        actions."""
        g = self.games
        if g.seed is None:
            raise RuntimeError("call reset() before step()")
        acts = _action_array(actions, self.num_envs)
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
        """Rows whose action is not legal (under ``illegal="penalty"``; none otherwise: the
        core raises)."""
        if self.illegal == "raise":
            return np.zeros(self.num_envs, bool)
        legal = (acts >= 0) & (acts < NUM_ACTIONS)
        legal &= self.games.mask[np.arange(self.num_envs), np.where(legal, acts, 0)] != 0
        return ~legal & ~pending

    def _next_games_now(self, final: np.ndarray, illegal: np.ndarray,
                        left: dict[int, np.ndarray]) -> dict[str, Any]:
        """SAME_STEP: the rows whose game was dropped for an illegal action restart now (the
        core already replaced the games that ended); ``final_obs`` as Gymnasium's vector envs
        give it: an object array of each ended row's last observation, None elsewhere."""
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
        """NEXT_STEP and DISABLED: the rows that ended last step restart (NEXT_STEP); the
        rows that end now show their ended game's last view."""
        g = self.games
        if pending.any() and self.autoreset_mode == AutoresetMode.NEXT_STEP:
            g.restart(np.flatnonzero(pending))  # writes every row: views are set after it
        g.obs[final] = g.final_obs[final]
        for row, obs in left.items():
            g.obs[row] = obs
        return {}

    def _show_ended(self) -> None:
        """An ended row's mask: the actions its next step takes. NEXT_STEP: every action
        (the step ignores it and starts the row's next game; a masked sampler then always has
        actions to draw from, as at pgx's terminal states); DISABLED: none (the row takes no
        step until it is reset)."""
        self.games.mask[self._ended] = self.autoreset_mode == AutoresetMode.NEXT_STEP

    def _outputs(self) -> tuple[Any, dict[str, Any]]:
        """The observations and ``{"action_mask": masks, "_action_mask": all True}`` (the key's
        rows, as Gymnasium's vector envs mark every info key; one mask array for both with a
        Dict observation); copies unless ``copy=False``."""
        obs: Any = self.games.obs.copy() if self.copy else self.games.obs
        mask = self.games.mask.copy() if self.copy else self.games.mask
        if self.dict_observation:
            obs = {"observation": obs, "action_mask": mask}
        return obs, {"action_mask": mask, "_action_mask": np.ones(self.num_envs, bool)}

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """(N, 2710) bool: the learner's legal actions in each game; on a row whose game has
        ended, every action under NEXT_STEP (ignored), none under DISABLED (it raises)."""
        return self.games.mask.astype(bool)

    # ------------------------------------------------------------------ rows
    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Each row's attribute ``name`` (:data:`ROW_ATTRIBUTES`), called with the arguments
        when it is a method, as ``SyncVectorEnv.call`` does with its sub-envs; a name no row
        has is an AttributeError listing those rows have."""
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
        """Set ``name`` (:data:`SETTABLE_ROW_ATTRIBUTES`) of every row: one value, or a list or
        tuple of one per row (``SyncVectorEnv.set_attr``'s form) that must all be equal, the
        rows sharing one batch; the value is checked as the constructor checks it."""
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
    return env.games.mask[g].astype(bool)


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


def _draw_seed() -> int:
    """A fresh seed from the operating system's entropy (below 2**62: room for + g + N*k)."""
    entropy = np.random.SeedSequence().entropy  # an int when drawn fresh
    assert isinstance(entropy, int)
    return entropy % 2**62


def _check_autoreset_mode(mode: Any) -> AutoresetMode:
    """An ``AutoresetMode`` (or its value, e.g. "NextStep"), else a ValueError."""
    try:
        return mode if isinstance(mode, AutoresetMode) else AutoresetMode(mode)
    except ValueError:
        allowed = ", ".join(f"AutoresetMode.{m.name} ({m.value!r})" for m in AutoresetMode)
        raise ValueError(f"autoreset_mode must be one of {allowed}, got {mode!r:.40}") from None


def _observation_row(kind: str) -> tuple[int, type]:
    """The length and dtype of an observation row of ``kind`` ("float32" or "compact")."""
    return (COMPACT_SIZE, np.uint8) if kind == "compact" else (OBSERVATION_SIZE, np.float32)


def _observation_space(as_dict: bool, kind: str = "float32") -> gymnasium.spaces.Space:
    obs = gymnasium.spaces.Box(0.0, OBS_HIGH, (OBSERVATION_SIZE,), np.float32)
    if kind == "compact":
        obs = gymnasium.spaces.Box(0, 255, (COMPACT_SIZE,), np.uint8)
    if not as_dict:
        return obs
    mask = gymnasium.spaces.Box(0, 1, (NUM_ACTIONS,), np.int8)
    return gymnasium.spaces.Dict({"observation": obs, "action_mask": mask})


def _action_array(actions: npt.ArrayLike, n: int) -> npt.NDArray[np.int64]:
    """The step's actions as a fresh int64 array of n ids, else a ValueError."""
    acts = np.asarray(actions)
    if acts.shape != (n,) or not np.issubdtype(acts.dtype, np.integer):
        raise ValueError(f"actions must be {n} integer action ids, got {acts.dtype} array of "
                         f"shape {acts.shape}")
    return acts.astype(np.int64)


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
        base = _check_int("seed", seed, 0)
        return [base + g for g in range(n)]
    if not isinstance(seed, Sequence) or isinstance(seed, str) or len(seed) != n:
        raise ValueError(f"seed must be None, a non-negative int or a list of {n} seeds "
                         f"(ints or None), got {seed!r:.80}")
    return [None if s is None else _check_int("seed[g]", s, 0) for s in seed]


def _mixed(seeds: Sequence[int | None]) -> int:
    """One seed for the built-in seats' streams from a list of game seeds."""
    return int(np.random.SeedSequence([s for s in seeds if s is not None])
               .generate_state(1, np.uint64)[0] >> 2)


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
        self.vec = MoonRiverVectorEnv(1, config, seat, opponents, reward,
                                      autoreset_mode=AutoresetMode.SAME_STEP)
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
                     seed: int = 0, illegal: str = "raise", illegal_penalty: float = -1.0) -> Any:
    """An SB3 ``VecEnv`` over :class:`MoonRiverVectorEnv` that ``sb3_contrib.MaskablePPO``
    trains with (masks through ``env_method("action_masks")``; same-step autoreset, SB3's
    convention). Its first ``reset`` starts game g from ``seed + g`` (or the seed of the last
    ``seed(s)`` call); a later ``reset`` moves every game on to its next episode, never one
    already played. Needs stable-baselines3."""
    venv = MoonRiverVectorEnv(num_envs, config, seat, opponents, reward, threads,
                              autoreset_mode=AutoresetMode.SAME_STEP, illegal=illegal,
                              illegal_penalty=illegal_penalty)
    return _sb3_class()(venv, _check_int("seed", seed, 0))


_SB3_CLASS: list[type] = []


def _sb3_class() -> type:
    if _SB3_CLASS:
        return _SB3_CLASS[0]
    from stable_baselines3.common.vec_env import VecEnv

    class MoonRiverSB3VecEnv(VecEnv):
        """SB3 ``VecEnv`` over the batched core games (one learner seat per game)."""

        def __init__(self, venv: MoonRiverVectorEnv, seed: int) -> None:
            self.venv = venv
            self.autoreset_mode = venv.autoreset_mode
            self._seed: int | None = seed  # the next reset's seed; None: go on
            self._actions: np.ndarray | None = None
            super().__init__(venv.num_envs, venv.single_observation_space,
                             venv.single_action_space)

        def reset(self) -> np.ndarray:
            obs, infos = self.venv.reset(seed=self._seed)
            self._seed = None  # a later reset plays each game's next episode
            masks = infos["action_mask"]  # reset_infos as SB3's DummyVecEnv fills them
            self.reset_infos = [{"action_mask": masks[g]} for g in range(self.num_envs)]
            return obs

        def set_options(self, options: list[dict] | dict | None = None) -> None:
            """Only no options: the batched games take none (SB3 would drop them silently)."""
            rows = [options] if isinstance(options, dict) else list(options or ())
            if any(rows):
                raise ValueError(f"make_sb3_vec_env's VecEnv takes no reset options (its "
                                 f"games restart by reset(), seeds by seed()), got "
                                 f"{options!r:.80}")

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = actions

        def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
            assert self._actions is not None, "step_async comes first"
            obs, rew, term, _, infos = self.venv.step(self._actions)
            masks = infos["action_mask"]
            out: list[dict] = [{"action_mask": masks[g]} for g in range(self.num_envs)]
            for g in np.flatnonzero(term).tolist():
                out[g]["terminal_observation"] = infos["final_obs"][g]
            for g in np.flatnonzero(infos.get("illegal_action", ())).tolist():
                out[g]["illegal_action"] = True
            return obs, rew, term, out

        def close(self) -> None:
            pass

        def seed(self, seed: int | None = None) -> Sequence[int | None]:
            """The next reset starts game g from ``seed + g`` (None: it goes on)."""
            self._seed = None if seed is None else _check_int("seed", seed, 0)
            return [None if seed is None else seed + g for g in range(self.num_envs)]

        def action_masks(self) -> np.ndarray:
            return self.venv.action_masks()

        def _indices_list(self, indices: Any) -> list[int]:
            return list(range(self.num_envs)) if indices is None else \
                list(np.arange(self.num_envs)[indices].reshape(-1))

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            """The listed rows' attribute (``MoonRiverVectorEnv.get_attr``: ROW_ATTRIBUTES)."""
            values = self.venv.get_attr(attr_name)
            return [values[g] for g in self._indices_list(indices)]

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            """Set a settable attribute of every row (the rows share one batch, so a part of
            them is refused)."""
            if len(self._indices_list(indices)) != self.num_envs:
                raise ValueError(f"the rows share one batch: {attr_name} takes one value for "
                                 f"every row; set it with indices=None")
            self.venv.set_attr(attr_name, value)

        def env_method(self, method_name: str, *method_args: Any, indices: Any = None,
                       **method_kwargs: Any) -> list[Any]:
            """The listed rows' method (``MoonRiverVectorEnv.call``: ``action_masks``)."""
            if method_name == "action_masks":  # one array for every row: MaskablePPO's call
                masks = self.venv.action_masks()
                return [masks[g] for g in self._indices_list(indices)]
            values = self.venv.call(method_name, *method_args, **method_kwargs)
            return [values[g] for g in self._indices_list(indices)]

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            return [False for _ in self._indices_list(indices)]

    _SB3_CLASS.append(MoonRiverSB3VecEnv)
    return MoonRiverSB3VecEnv
