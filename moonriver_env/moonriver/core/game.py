"""``Game``: the engine's contract over the compiled state (moonriver_env.moonriver.core._core).

Config, data files, records and text stay the engine's Python; the core draws the set-up, plays,
and writes masks and observations. See docs/core.md.
"""

from __future__ import annotations

import atexit
import copy
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any, Generic, TypeVar, cast, overload

import numpy as np

from moonriver_env.common.validate import check_time_limit, game_seed
from moonriver_env.common.view import bounded_store
from moonriver_env.moonriver.contract import CoreExtras
from moonriver_env.moonriver.observation import OBSERVATION_SIZE, board_ids
from moonriver_env.moonriver.rules import actions as A
from moonriver_env.moonriver.rules import record as _record
from moonriver_env.moonriver.rules.actions import Action
from moonriver_env.moonriver.rules.components import Board
from moonriver_env.moonriver.rules.config import GameConfig
from moonriver_env.moonriver.rules.data import GameData
from moonriver_env.moonriver.rules.game import (
    IllegalActionError,
    action_id,
    board_pool,
    put_next_draws,
    why_illegal,
    win_returns,
)
from moonriver_env.moonriver.rules.grid import COLS, NUM_CELLS, usable_cells
from moonriver_env.moonriver.rules.phase import Context, Phase
from moonriver_env.moonriver.rules.scenarios import SCENARIOS
from moonriver_env.moonriver.rules.scoring import ScoreBreakdown

try:
    import moonriver_env.moonriver.core._core as _core

    from .rng import seed_words
except ImportError as exc:  # a source tree that was never built
    raise ImportError("moonriver_env.moonriver.core: the compiled extension is not built; "
                      "install the package (pip install -e .; it needs a C++17 compiler) or "
                      "play the Python engine with backend='python'") from exc

_PHASES = tuple(Phase)
_GAME_OVER = int(Phase.GAME_OVER)
_EV_DECISION, _EV_COLUMN, _EV_SALOON, _EV_BONUS_LOST = range(4)
# id(data) -> (data kept alive, core tables)
_TABLES: dict[int, tuple[GameData, _core.Tables]] = {}
_TABLES_SIZE = 64
# Dropped before the interpreter's teardown: nanobind reports core objects still held by a module
# global at exit as leaks (a warning on stderr of every process that made a game).
atexit.register(_TABLES.clear)
# config -> (data, (board names, plan))
_PLANS: dict[GameConfig, tuple[GameData, tuple[tuple[str, ...], _core.SetupPlan]]] = {}
atexit.register(_PLANS.clear)
T = TypeVar("T")


def _tables(data: GameData) -> _core.Tables:
    """The core's copy of a set of data tables (made once per GameData)."""
    entry = _TABLES.get(id(data))
    if entry is not None and entry[0] is data:
        return entry[1]
    kinds = np.stack([data.terrain, data.nugget, data.beaver, data.corn, data.cows,
                      data.skull, data.circle, data.number], axis=1).astype(np.int64)
    tables = _core.make_tables(kinds.ravel(), data.num_box_kinds,
                               data.plot_kind.astype(np.int64),
                               np.array([int(k) for k in data.partner_specialists], np.int64))
    return bounded_store(_TABLES, id(data), (data, tables), _TABLES_SIZE)[1]


def setup_plan(config: GameConfig, data: GameData) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """What ``config`` fixes of a set-up: its board names and ``_core.SetupPlan``'s arguments."""
    # The seed draws the rest in the core, in rules.game.setup_draws's order.
    n, legends = config.num_players, config.mode == "legends"
    names = board_pool(config, data)
    boards = [data.boards[name] for name in names]
    return names, (n, config.auto_forced, config.scenario or 0,
                   legends and config.scenario is None, min(SCENARIOS), max(SCENARIOS) + 1,
                   [b.reserve for b in boards],
                   [sum(1 << (r * COLS + c) for r, c in b.bridges) for b in boards],
                   board_ids(data, names), legends and config.boards is None)


def setup_plan_of(config: GameConfig,
                  data: GameData) -> tuple[tuple[str, ...], _core.SetupPlan]:
    """``config``'s board names and core set-up plan (made once per config and data)."""
    entry = _PLANS.get(config)
    if entry is not None and entry[0] is data:
        return entry[1]
    names, args = setup_plan(config, data)
    plan = (names, _core.SetupPlan(_tables(data), *args))
    return bounded_store(_PLANS, config, (data, plan), _TABLES_SIZE)[1]


def _scenario(config: GameConfig, drawn: int) -> int | None:
    """The game's scenario: the config's, or the drawn one when the config leaves it open."""
    return drawn if config.mode == "legends" and config.scenario is None else config.scenario


def _setup_draws(config: GameConfig, data: GameData, seed: int,
                 first_draws: Mapping[str, Sequence[int]] | None) -> dict[str, Any]:
    """The setup's draws (``rules.game.setup_draws``'s, made in the core), first draws applied."""
    names, plan = setup_plan_of(config, data)
    scenario, seats, box, pile, order = plan.draw(seed_words(seed))
    hidden = SimpleNamespace(box=box, pile=pile)
    for source, items in (first_draws or {}).items():  # explicit chance, as the engine's
        put_next_draws(hidden, source, items)  # the engine's own (same refusals)
    return {"scenario": _scenario(config, scenario), "boards": tuple(names[i] for i in seats),
            "box": box, "pile": pile, "setup_order": order}


def _setup_of(config: GameConfig,
              core: _core.Game) -> tuple[int | None, tuple[str, ...], list[int]]:
    """The scenario, board names and setup order ``core`` keeps (nothing is drawn again)."""
    if core.num_players != config.num_players:
        raise ValueError(f"moonriver core: state refused: it holds {core.num_players} players, "
                         f"its config {config.num_players}")
    seats = core.board_indices
    names = board_pool(config, config.data)
    if seats is None or max(seats) >= len(names):
        raise ValueError("moonriver core: a Game over a core game needs one set up from a plan "
                         "of its config (a batch's or SetupPlan.game's), whose board indices "
                         "name its boards; this one was handed its boards")
    return _scenario(config, core.scenario), tuple(names[i] for i in seats), core.setup_order


def game_of(config: GameConfig, seed: int, core: _core.Game) -> Game:
    """A Game over ``core``: a batch's copy of the game ``config``'s plan set up from ``seed``."""
    scenario, names, order = _setup_of(config, core)
    game = Game.__new__(Game)
    game.__setstate__({"config": config, "seed": seed, "scenario": scenario,
                       "board_names": names, "setup_order": order, "core": core})
    return game


class _Field(Generic[T]):
    """A read-only field of the table, a copy of the core snapshot's entry of the same name."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, game: None, owner: type | None = None) -> _Field[T]: ...
    @overload
    def __get__(self, game: Game, owner: type | None = None) -> T: ...
    def __get__(self, game: Game | None, owner: type | None = None) -> T | _Field[T]:
        if game is None:  # read on the class: the field itself
            return self
        return cast(T, copy.copy(game._snapshot()[self.name]))  # the snapshot's dict is untyped


class _RanchView:
    """A read-only view of one ranch, with the engine Ranch's public fields."""

    __slots__ = ("board", "bonus_taken", "bridge", "capacity", "cows", "face", "hand", "kind",
                 "label", "partner", "plot", "rows", "terrain")

    def __init__(self, raw: dict[str, Any], board: Board) -> None:
        cells = raw["cells"]
        cells.flags.writeable = False
        self.kind: np.ndarray  # the snapshot's rows are untyped
        self.kind, self.cows, self.partner, self.face, self.plot = cells[:5]
        self.terrain = cells[5].astype(np.int8)
        self.label = cells[6]
        self.hand: list[int] = raw["hand"]
        self.bonus_taken: bool = raw["bonus_taken"]
        self.capacity: int = raw["capacity"]
        self.rows: int = raw["rows"]
        self.board = board
        bridge = np.zeros(NUM_CELLS, dtype=bool)
        for r, c in board.bridges:
            bridge[r * COLS + c] = True
        bridge.flags.writeable = False
        self.bridge = bridge

    @property
    def in_hand(self) -> bool:
        """True when the reserve is over-full: a plot is held in hand (forced expansion)."""
        return len(self.hand) > self.capacity

    @property
    def empty(self) -> np.ndarray:
        """Free cells a plot may go on."""
        return usable_cells(self.rows) & (self.kind < 0)


class Game(CoreExtras):
    """A game of Moon River on the compiled core; the contract of ``engine.Game``."""

    def __init__(self, config: GameConfig | None = None, seed: int | None = None,
                 first_draws: Mapping[str, Sequence[int]] | None = None) -> None:
        self.config = config if config is not None else GameConfig()
        self.seed = game_seed(seed)
        self.data = self.config.data
        self._n = self.config.num_players
        plan = setup_plan_of(self.config, self.data)[1]
        box = pile = None
        if first_draws:  # explicit chance: the drawn box and pile with the chosen draws on top
            draws = _setup_draws(self.config, self.data, self.seed, first_draws)
            box, pile = draws["box"], draws["pile"]
        self._core: _core.Game = plan.game(seed_words(self.seed), box, pile)
        self.chosen_draws = bool(first_draws)  # as the engine's: the record replays its draws
        self.scenario: int | None
        self.board_names: tuple[str, ...]
        self.setup_order: list[int]
        self.scenario, self.board_names, self.setup_order = _setup_of(self.config, self._core)
        self._fresh()

    def _fresh(self) -> None:
        """Forget what was read from the state (after it changed)."""
        self._mask: np.ndarray | None = None
        self._snap: dict[str, Any] | None = None
        self._views: list[_RanchView] | None = None

    def _snapshot(self) -> dict[str, Any]:
        if self._snap is None:
            self._snap = self._core.snapshot()
        return self._snap

    # ------------------------------------------------------------- public API
    @property
    def num_players(self) -> int:
        """Number of players."""
        return self.config.num_players

    @property
    def current_player(self) -> int:
        """The player to decide now (-1 once the game is over)."""
        return self._core.current_player

    @property
    def player(self) -> int:
        """The player whose turn it is (kept after the game ends, as in the engine)."""
        return self._core.player

    @property
    def phase(self) -> Phase:
        """The current decision's phase."""
        return _PHASES[self._core.phase]

    @property
    def is_over(self) -> bool:
        """True once the game has ended and been scored."""
        return self._core.is_over

    def legal_mask(self) -> np.ndarray:
        """Read-only int8 mask over the action enumeration (zeros when over)."""
        if self._mask is None:
            self._mask = self._core.frozen_mask()
        return self._mask

    def legal_action_ids(self) -> np.ndarray:
        """Ids of the legal actions, ascending."""
        return self._core.legal_ids()

    def legal_actions(self) -> list[Action]:
        """Structured legal actions for the current player."""
        return [A.ACTIONS[i] for i in self.legal_action_ids().tolist()]

    def apply(self, action: Action | int) -> None:
        """Play one decision; raises IllegalActionError (state unchanged) if it is not legal."""
        aid = action_id(action)  # the engine's conversion: the same ids, refusals and messages
        if not self._core.apply(aid):
            raise IllegalActionError(A.ACTIONS[aid].text(), why_illegal(self, aid),
                                     [a.text() for a in self.legal_actions()])
        self._fresh()

    # ---------------------------------------------------------------- scores
    def running_scores(self) -> list[ScoreBreakdown]:
        """What each player would score if the game ended now (overpopulation applied)."""
        return [ScoreBreakdown(*s) for s in self._core.running_scores()]

    def running_score(self, player: int) -> ScoreBreakdown:
        """One player's entry of :meth:`running_scores`."""
        return self.running_scores()[player]

    def scores(self) -> list[ScoreBreakdown]:
        """Final scores with breakdown, per player; the game must be over."""
        if not self.is_over:
            raise RuntimeError("the game is not over; use running_scores() for scores so far")
        return self.running_scores()

    def winners(self) -> list[int]:
        """Winning players after tie-breaks (largest territory, then most cows; else shared)."""
        return list(self._core.winners())

    def returns(self) -> list[float]:
        """moonriver_v0's "win" rewards: +1 each winner, -1 the others; 0 before the end."""
        return win_returns(self)  # the reference's words, on this game's winners

    # ----------------------------------------------------------- observation
    def observe(self, player: int, out: np.ndarray | None = None) -> np.ndarray:
        """``player``'s observation (4934 float32), written into ``out`` when given."""
        if type(player) is not int and isinstance(player, np.integer):  # plain ints pay one test
            player = int(player)
        if type(player) is not int or not 0 <= player < self._n:
            raise ValueError(f"player must be an int in 0..{self.num_players - 1}, "
                             f"got {player!r:.40}")
        if out is None:
            out = np.empty(OBSERVATION_SIZE, dtype=np.float32)
        try:  # the core checks ``out`` through the buffer protocol: never a copy
            self._core.observe(player, out)
        except TypeError:
            raise ValueError(f"out must be a writable C-contiguous float32 array of shape "
                             f"({OBSERVATION_SIZE},), got {type(out).__name__} "
                             f"{getattr(out, 'dtype', '')} {getattr(out, 'shape', '')}") from None
        return out

    # ------------------------------------------------------- search support
    def clone(self) -> Game:
        """An independent copy of the full state (one C++ copy)."""
        return self._over(self._core.copy())

    def _over(self, core: _core.Game) -> Game:
        """This game over a copy ``core`` of its state: the same mask (read-only: shared)."""
        g = Game.__new__(Game)
        g.__dict__.update(self.__dict__)
        g._core = core
        g._snap = None
        g._views = None
        return g

    def __deepcopy__(self, memo: dict[int, Any]) -> Game:
        return self.clone()

    def __copy__(self) -> Game:
        return self.clone()  # a shallow copy would share the core state

    def determinize(self, rng: np.random.Generator) -> None:
        """Reshuffle what is hidden (order of the plot box and partner pile) in place."""
        if isinstance(rng, np.random.Generator):
            bits = rng.bit_generator
            with bits.lock:  # numpy's Generator.shuffle, twice, in the core: the same draws
                self._core.determinize_numpy(bits.capsule)
        else:  # another shuffler: its own shuffles, handed back through set_hidden (checked)
            box, pile = self._core.hidden()
            rng.shuffle(box)
            rng.shuffle(pile)
            self._core.set_hidden(box, pile)
        self._snap = None

    def determinized_clone(self, seed: int) -> Game:
        """A clone whose box and pile the core reshuffles (SplitMix64 seeded with ``seed``)."""
        _check_seed(seed)
        return self._over(self._core.determinized_clone(seed))  # what is legal is not hidden

    def greedy_values(self, ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Greedy's (value float64, tie-break int64) of each of ``ids`` (None: all legal ids)."""
        if self.is_over:
            raise RuntimeError("the game is over: there is no decision to value")
        ids = self.legal_action_ids() if ids is None else _id_array(ids)
        return self._core.greedy_values(ids)

    def greedy_ties(self) -> tuple[int, list[int]]:
        """``(number of legal ids, the ids Greedy ranks best, ascending)``, in one core call."""
        if self.is_over:
            raise RuntimeError("the game is over: there is no decision to value")
        return self._core.greedy_ties()

    def mcts_search(self, simulations: int = 100, seconds: float | None = None,
                    rollout_depth: int = 20, exploration: float = 1.0,
                    value_scale: float = 20.0, seed: int = 0,
                    time_limit: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """IS-MCTS from this state in the core (GIL released): ``(root actions, visits)``."""
        # ``seconds`` replaces the simulation budget; ``time_limit`` > 0 caps either budget
        # (one simulation at least).
        if self.is_over:
            raise RuntimeError("the game is over: there is no decision to search")
        if type(simulations) is not int or simulations < 1:
            raise ValueError(f"simulations must be an int >= 1, got {simulations!r:.40}")
        if seconds is not None and not (isinstance(seconds, (int, float)) and seconds > 0
                                        and seconds < float("inf")):
            raise ValueError(f"seconds must be None or a finite number > 0, got {seconds!r:.40}")
        if type(rollout_depth) is not int or rollout_depth < 0:
            raise ValueError(f"rollout_depth must be an int >= 0, got {rollout_depth!r:.40}")
        _check_seed(seed)
        actions, visits, _ = self._core.mcts_search(
            simulations, float(seconds or 0.0), rollout_depth, float(exploration),
            float(value_scale), seed, time_limit=check_time_limit(time_limit))
        return np.asarray(actions, np.int64), np.asarray(visits, np.int64)

    def random_playouts(self, count: int, seed: int) -> np.ndarray:
        """Final totals (count, players) of ``count`` random playouts from here, in the core."""
        return random_playouts(self, count, seed)

    def set_next_draws(self, source: str, items: Sequence[int]) -> None:
        """Make ``items`` the next draws from ``source`` ("box": plot ids, "pile": partner ids)."""
        box, pile = self._core.hidden()
        hidden = SimpleNamespace(box=box, pile=pile)
        put_next_draws(hidden, source, items)
        self._core.set_hidden(hidden.box, hidden.pile)
        self._snap = None
        self.chosen_draws = True

    def random_rollout(self, depth: int, seed: int) -> int:
        """Play up to ``depth`` random legal decisions in place, in the core; return how many."""
        if type(depth) is not int or depth < 0:
            raise ValueError(f"depth must be a non-negative int, got {depth!r:.40}")
        _check_seed(seed)
        played = self._core.random_rollout(depth, seed)
        self._fresh()
        return played

    def one_ply_margins(self, ids: np.ndarray | None = None) -> np.ndarray:
        """Greedy's one-ply values in the core: each id's change of the mover's margin (int64)."""
        if self.is_over:
            raise RuntimeError("the game is over: there is no decision to value")
        ids = self.legal_action_ids() if ids is None else _id_array(ids)
        return self._core.one_ply_margins(self._core.player, ids)

    @property
    def native(self) -> Any:
        """The extension's ``_core.Game`` behind this one (what the batched search takes)."""
        return self._core

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "seed": self.seed, "scenario": self.scenario,
                "board_names": self.board_names, "setup_order": self.setup_order,
                "chosen_draws": self.chosen_draws, "state": self._core.serialize()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.config = state["config"]
        self.seed = state["seed"]
        self.scenario = state["scenario"]
        self.board_names = state["board_names"]
        self.setup_order = state["setup_order"]
        self.chosen_draws = state.get("chosen_draws", False)
        self.data = self.config.data
        self._n = self.config.num_players
        self._core = (state["core"] if "core" in state  # a core state handed over (game_of)
                      else _core.Game.deserialize(_tables(self.data), state["state"]))
        if self._core.num_players != self._n:
            raise ValueError(f"moonriver core: state refused: it holds {self._core.num_players} "
                             f"players, its config {self._n}")
        scenario = self.scenario or 0  # the core's 0 is the base game
        if self._core.scenario != scenario or (self.config.mode == "base") != (scenario == 0):
            raise ValueError(f"moonriver core: state refused: it holds scenario "
                             f"{self._core.scenario}, its config {self.config.mode} with "
                             f"scenario {scenario}")
        self._fresh()

    # ---------------------------------------------------------------- views
    # The table's public fields (MoonRiverGame's), read-only copies from one snapshot.
    round = _Field[int]()
    last_round = _Field[bool]()
    emptying = _Field[bool]()
    forced = _Field[bool]()
    builds_done = _Field[int]()
    builds_allowed = _Field[int]()
    skulls = _Field[list[int]]()
    circles = _Field[list[int]]()
    effect_cell = _Field[int]()
    cowboy_moves_left = _Field[int]()
    supply = _Field[int]()
    saloon = _Field[list[int]]()
    active = _Field["list[int] | None"]()
    pending = _Field["list[int] | None"]()
    active_owner = _Field[list[int]]()
    pending_owner = _Field[list[int]]()
    order = _Field[list[int]]()
    turn_index = _Field[int]()
    empty_order = _Field[list[int]]()
    box = _Field[list[int]]()
    pile = _Field[list[int]]()
    removed = _Field[list[int]]()
    discarded = _Field[list[int]]()
    recruited_this_round = _Field[bool]()

    @property
    def ranches(self) -> list[_RanchView]:
        """Read-only views of the players' ranches (the engine Ranch's public fields)."""
        if self._views is None:
            self._views = [_RanchView(raw, self.data.boards[name]) for raw, name in
                           zip(self._snapshot()["ranches"], self.board_names, strict=True)]
        return self._views

    @property
    def bonus_tiles(self) -> list[bool]:
        """Which 2-player bonus tiles are still to take."""
        return list(self._snapshot()["bonus_tiles"])

    def context(self) -> Context:
        """The pending context of the current decision."""
        s = self._snapshot()
        phase = self.phase
        return Context(phase, self.current_player, s["round"], s["last_round"], s["emptying"],
                       s["forced"], s["builds_done"], s["builds_allowed"],
                       (s["circles"][0], s["circles"][1]),
                       s["skulls"][0] if phase == Phase.DROUGHT else -1,
                       s["effect_cell"], s["cowboy_moves_left"])

    @property
    def history(self) -> list[dict[str, Any]]:
        """Decisions and chance events so far, in order, as the engine records them."""
        events: list[dict[str, Any]] = [{
            "type": "chance", "event": "setup", "scenario": self.scenario,
            "boards": list(self.board_names), "setup_order": list(self.setup_order)}]
        raw = self._core.history()
        i = 0
        while i < len(raw):
            tag = raw[i]
            if tag == _EV_DECISION:
                event = {"type": "decision", "player": raw[i + 1], "action": raw[i + 2]}
                if raw[i + 3]:
                    event["auto"] = True
                i += 4
            elif tag == _EV_COLUMN:
                event = {"type": "chance", "event": "column", "plots": raw[i + 1:i + 5]}
                i += 5
            elif tag == _EV_SALOON:
                k = raw[i + 1]
                flat = raw[i + 2:i + 2 + 2 * k]
                event = {"type": "chance", "event": "saloon",
                         "filled": [[flat[2 * j], flat[2 * j + 1]] for j in range(k)]}
                i += 2 + 2 * k
            else:
                event = {"type": "chance", "event": "bonus_lost", "player": raw[i + 1],
                         "tile": raw[i + 2]}
                i += 3
            events.append(event)
        return events

    # ---------------------------------------------------------------- records
    def to_record(self, include_seed: bool = False) -> dict[str, Any]:
        """JSON-serialisable record of the game so far, as the engine writes it."""
        return _record.to_record(self, include_seed)

    @classmethod
    def from_record(cls, record: dict[str, Any], verify: bool = True) -> Game:
        """Replay a record to the same state (checked unless ``verify`` is False), as the engine."""
        return _record.from_record(record, verify, game_class=cls)

    def table_text(self) -> str:
        """The whole table as readable text (the engine's text view of this state)."""
        from moonriver_env.moonriver.rules.text import table_text

        return table_text(self)


def random_playouts(game: Game, count: int, seed: int) -> np.ndarray:
    """Final totals (count, players) float64 of ``count`` random playouts from ``game``, in C++."""
    if type(count) is not int or count < 0:
        raise ValueError(f"count must be a non-negative int, got {count!r:.40}")
    _check_seed(seed)
    totals = game._core.random_playouts(count, seed)
    return np.asarray(totals, dtype=np.float64).reshape(count, game.num_players)


def random_play_counts(game: Game, count: int, seed: int) -> tuple[int, int]:
    """Play ``count`` random games from ``game``'s state in the core; return (games, decisions)."""
    if type(count) is not int or count < 0:
        raise ValueError(f"count must be a non-negative int, got {count!r:.40}")
    _check_seed(seed)
    return game._core.random_play_counts(count, seed)


def _id_array(ids: object) -> np.ndarray:
    """``ids`` as a contiguous int64 array; floats (cut to other ids) are a ValueError."""
    array = np.asarray(ids)
    if array.size and array.dtype.kind not in "iu":
        raise ValueError(f"action ids must be integers, got an array of {array.dtype}")
    return np.ascontiguousarray(array, np.int64)


def _check_seed(seed: object) -> None:
    """A seed of the core's generator is an int in 0..2**64-1 (a ValueError otherwise)."""
    if type(seed) is not int or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be an int in 0..2**64-1, got {seed!r:.40}")
