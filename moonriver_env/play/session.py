"""Games being played (human seats and agent seats) and recorded games being replayed."""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from moonriver_env.agents import Agent, make_agent
from moonriver_env.agents.registry import request_spec_problem, spec_paths
from moonriver_env.common.errors import PicklableError
from moonriver_env.common.records import replay_decisions
from moonriver_env.moonriver.backend import (
    DEFAULT_BACKEND,
    Encoder,
    check_backend,
    game_class,
    make_game,
)
from moonriver_env.moonriver.contract import MoonRiverGame
from moonriver_env.moonriver.observation import LazyObservation
from moonriver_env.moonriver.render.style import status_text
from moonriver_env.moonriver.render.svg import table_svg
from moonriver_env.moonriver.rules import ActionCodec, GameConfig, IllegalActionError
from moonriver_env.moonriver.rules.record import record_start
from moonriver_env.play.clicks import action_paths, button_labels, move_keys, moved_keys

MAX_REQUEST_SECONDS = 10.0  # an agent's time a decision, for agents a request names
MAX_REQUEST_SIMULATIONS = 5000  # an agent's simulations a decision, likewise
MAX_SEED = 2**63 - 1
_log = logging.getLogger(__name__)


class PlayError(PicklableError, ValueError):
    """A request the game cannot take; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class GameOptions:
    """What game to start: variant, human seats and the agent specs of the other seats."""

    players: int = 2
    mode: str = "base"
    scenario: int | None = None
    humans: tuple[int, ...] = (0,)
    opponents: tuple[str, ...] = ("greedy",)
    seed: int | None = None
    # Server settings that requests do not change:
    backend: str = DEFAULT_BACKEND  # "core" or "python"
    time_limit: float = MAX_REQUEST_SECONDS  # an agent's seconds a decision (0: no cap)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (for the page's new-game form)."""
        return {"players": self.players, "mode": self.mode, "scenario": self.scenario,
                "humans": list(self.humans),
                "opponents": [shown_spec(spec) for spec in self.opponents],
                "seed": self.seed}


def hide_paths(text: str, specs: Iterable[str]) -> str:
    """``text`` with the file paths that ``specs`` name replaced by the files' names."""
    for spec in specs:
        for path in spec_paths(spec):  # the spec table's "files it may name"
            text = text.replace(path, PurePath(path).name or path)
    return text


def shown_spec(spec: str) -> str:
    """A spec as pages and requests see it: file paths cut to names (``pretrained:w.npz``)."""
    return hide_paths(spec, (spec,))


def trusted_specs(specs: Iterable[str]) -> dict[str, str]:
    """The command line's agent specs by their :func:`shown_spec`; two alike: ValueError."""
    out: dict[str, str] = {}
    for spec in specs:
        shown = shown_spec(spec)
        if out.get(shown, spec) != spec:
            raise ValueError(f"--opponents {shown_spec(out[shown])!r} is given twice with "
                             "files of the same name in different folders; pages show only "
                             "file names, so give the files different names")
        out[shown] = spec
    return out


def options_from_json(body: Any, defaults: GameOptions,
                      max_seconds: float = MAX_REQUEST_SECONDS,
                      max_simulations: int = MAX_REQUEST_SIMULATIONS) -> GameOptions:
    """Validated options from a request body; anything wrong is a PlayError naming it."""
    if not isinstance(body, dict):
        raise PlayError("the body must be a JSON object with players, mode, scenario, humans, "
                        "opponents, seed")
    known = {"players", "mode", "scenario", "humans", "opponents", "seed"}
    unknown = sorted(set(body) - known)
    if unknown:
        raise PlayError(f"unknown fields {_short(unknown)}; allowed: {sorted(known)}")
    out = defaults.to_dict()
    out.update(body)
    humans, opponents = out["humans"], out["opponents"]
    if (not isinstance(humans, list) or len(humans) > 4
            or not all(type(h) is int and 0 <= h < 4 for h in humans)):
        raise PlayError(f"'humans' must be a list of seat numbers 0 to 3, got {_short(humans)}")
    if (not isinstance(opponents, list) or not 1 <= len(opponents) <= 4
            or not all(isinstance(o, str) for o in opponents)):
        raise PlayError(f"'opponents' must be a list of 1 to 4 agent specs (strings), got "
                        f"{_short(opponents)}")
    trusted = trusted_specs(defaults.opponents)
    specs: list[str] = opponents  # checked above: strings
    for spec in specs:
        if spec in trusted:  # given on the command line: any spec, any budget
            continue
        problem = request_spec_problem(spec, max_seconds, max_simulations)
        if problem:
            raise PlayError(f"{problem}. Specs that name files (policy:PATH, rllib:PATH, "
                            "pretrained:PATH.npz) or larger budgets can be given only on the "
                            "command line (moonriver-play --opponents)")
    seed = out["seed"]
    if seed is not None and (type(seed) is not int or not 0 <= seed <= MAX_SEED):
        raise PlayError(f"seed must be a whole number from 0 to {MAX_SEED} or null (random), "
                        f"got {_short(seed)}")
    for key in ("players", "scenario"):
        if out[key] is not None and type(out[key]) is not int:
            raise PlayError(f"{key} must be a whole number, got {_short(out[key])}")
    return GameOptions(out["players"], out["mode"], out["scenario"], tuple(humans),
                       tuple(trusted.get(spec, spec) for spec in specs), seed,
                       defaults.backend, defaults.time_limit)


def _short(value: object) -> str:
    """A request value as JSON for an error message, cut at 80 characters."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= 80 else text[:77] + "..."


def make_seats(options: GameOptions, seed: int,
               config: GameConfig | None = None) -> list[Agent[MoonRiverGame] | None]:
    """One entry per seat: None for a human, else the agent built from its spec."""
    n = options.players
    if type(n) is not int or n not in (2, 3, 4):
        raise PlayError(f"players must be 2, 3 or 4, got {n!r}")
    for h in options.humans:
        if not 0 <= h < n:
            raise PlayError(f"human seat {h} does not exist: seats are 0..{n - 1}")
    if len(set(options.humans)) != len(options.humans):
        raise PlayError(f"human seats must be distinct, got {list(options.humans)}")
    agent_seats = [p for p in range(n) if p not in options.humans]
    specs = list(options.opponents)
    if len(specs) == 1:
        specs = specs * len(agent_seats)
    if agent_seats and len(specs) != len(agent_seats):
        raise PlayError(f"give one opponent spec for every agent seat ({len(agent_seats)}: "
                        f"{agent_seats}) or a single spec for all, got {len(specs)}")
    seats: list[Agent[MoonRiverGame] | None] = [None] * n
    for k, p in enumerate(agent_seats):
        try:
            seats[p] = make_agent(specs[k], seed=seed + 1 + p, config=config,
                                  time_limit=options.time_limit)
        except (ValueError, OSError) as exc:
            text, shown = hide_paths(str(exc), specs), shown_spec(specs[k])
            raise PlayError(text if shown in text else f"agent {shown}: {text}") from None
    return seats


class PlaySession:
    """One game in progress: the engine game, who sits where, and the last move."""

    # ``decision`` counts the moves made so far: a move sent with another number was chosen on
    # an old state and is refused.

    def __init__(self, options: GameOptions) -> None:
        seed = options.seed
        if seed is None:  # 63 bits: too many seeds to try against the visible setup
            seed = secrets.randbelow(MAX_SEED + 1)
        if type(seed) is not int or seed < 0:
            raise PlayError(f"seed must be a non-negative integer or null, got {seed!r:.40}")
        try:
            config = GameConfig(num_players=options.players, mode=options.mode,
                                scenario=options.scenario)
            check_backend(options.backend)
        except (TypeError, ValueError) as exc:
            raise PlayError(str(exc)) from None
        self.seats = make_seats(options, seed, config)
        self.options = options
        self.id = secrets.token_hex(8)
        self._game = make_game(config, seed, backend=options.backend)
        for p, agent in enumerate(self.seats):
            if agent is not None:
                agent.reset(seed + 1 + p)
        self.names = ["you" if a is None else shown_spec(a.name) for a in self.seats]
        self._lock = threading.Lock()  # guards the game and the fields below, held briefly
        self._agent_turn = threading.Lock()  # held by the one advance whose agent thinks
        self.decision = 0
        self.last: dict[str, Any] | None = None
        self._snapshot: tuple[int, dict[str, Any]] | None = None
        self._encoder: Encoder | None = None

    @property
    def game(self) -> MoonRiverGame:
        """The engine game (read it; moves go through :meth:`act` and :meth:`advance`)."""
        return self._game

    @game.setter
    def game(self, game: MoonRiverGame) -> None:
        with self._lock:
            self._game, self.last = game, None
            self.decision += 1

    @property
    def thinking(self) -> bool:
        """Whether an agent of this game is choosing its move now."""
        return self._agent_turn.locked()

    def human_turn(self) -> bool:
        """Whether a human seat decides now."""
        return not self._game.is_over and self.seats[self._game.current_player] is None

    def _apply(self, action_id: int) -> None:
        self.last = apply_move(self._game, action_id, self.names)
        self.decision += 1

    def _check_move(self, decision: int | None) -> None:
        if decision is not None and decision != self.decision:
            raise PlayError(f"this move was chosen at decision {decision}, but the game is at "
                            f"decision {self.decision} now (a move was made elsewhere, for "
                            "example in another tab): look at the table again", 409)
        if self._game.is_over:
            raise PlayError("the game is over", 409)

    def act(self, body: Any) -> None:
        """A human's decision ``{"action": id, "decision": n}`` (``decision`` optional)."""
        if not isinstance(body, dict) or "action" not in body \
                or not set(body) <= {"action", "decision"}:
            raise PlayError('the body must be a JSON object {"action": <action id>, '
                            '"decision": <the state\'s decision number>}')
        action, decision = body["action"], body.get("decision")
        if type(action) is not int:
            raise PlayError(f"'action' must be an integer action id, got {_short(action)}")
        if not 0 <= action < ActionCodec.num_actions:
            raise PlayError(f"action ids run from 0 to {ActionCodec.num_actions - 1}, "
                            f"got {_short(action)}")
        check_decision_number(decision)
        with self._lock:
            self._check_move(decision)
            game = self._game
            if not self.human_turn():
                raise PlayError(f"it is not a human's turn: player {game.current_player} "
                                f"({self.names[game.current_player]}) decides now", 409)
            try:
                self._apply(action)
            except IllegalActionError as exc:
                raise PlayError(str(exc), 409) from None

    def advance(self, decision: int | None = None) -> None:
        """Let the agent whose turn it is make one decision (at state ``decision`` if given)."""
        check_decision_number(decision)
        if not self._agent_turn.acquire(blocking=False):
            raise PlayError("an agent of this game is already choosing its move; ask for the "
                            "state again", 409)
        try:
            with self._lock:
                self._check_move(decision)
                game = self._game
                agent = self.seats[game.current_player]
                if agent is None:
                    raise PlayError(f"player {game.current_player} is human: waiting for a "
                                    "click", 409)
                if self._encoder is None:
                    self._encoder = Encoder()
                view, at = game.clone(), self.decision
            # The agent thinks on its own copy with the lock released: readers are not held up.
            try:
                action = int(agent.act(view, LazyObservation(self._encoder, view,
                                                             view.current_player)))
            except Exception as exc:  # a command-line agent unfit for this game, say
                _log.exception("agent %s failed to choose a move", agent.name)
                shown = hide_paths(str(exc), (agent.name,))[:200]
                raise PlayError(f"agent {shown_spec(agent.name)} failed to choose a move "
                                f"({type(exc).__name__}: {shown}); the game is unchanged",
                                500) from None
            with self._lock:
                if self.decision != at:  # only a test replacing the game gets here
                    raise PlayError("the game changed while the agent was thinking", 409)
                try:
                    self._apply(action)
                except IllegalActionError as exc:
                    raise PlayError(f"agent {shown_spec(agent.name)} chose an illegal "
                                    f"action: {exc}", 500) from None
        finally:
            self._agent_turn.release()

    def state(self) -> dict[str, Any]:
        """Everything the page draws and offers now (built once per decision)."""
        with self._lock:
            if self._snapshot is None or self._snapshot[0] != self.decision:
                self._snapshot = (self.decision, self._build_state())
            out = dict(self._snapshot[1])
        out["thinking"] = self.thinking
        return out

    def _build_state(self) -> dict[str, Any]:
        game = self._game
        out = table_state(game, self.names)
        out.update(id=self.id, kind="game", decision=self.decision, last=self.last,
                   human_turn=self.human_turn(),
                   humans=[p for p, a in enumerate(self.seats) if a is None],
                   options=self.options.to_dict(), legal=[], buttons={})
        if out["human_turn"]:
            ids = game.legal_action_ids().tolist()
            out["legal"] = [{"id": a, "text": ActionCodec.to_text(a),
                             "paths": action_paths(game, a)} for a in ids]
            out["buttons"] = button_labels(game)
        return out

    def record(self) -> dict[str, Any]:
        """The game record so far (docs/game-record.md)."""
        with self._lock:
            return self._game.to_record()


def check_decision_number(decision: object, required: bool = False) -> None:
    """A state's decision number sent with a move: a non-negative integer, or None if optional."""
    if (required or decision is not None) and (type(decision) is not int or decision < 0):
        raise PlayError(f"'decision' must be the state's decision number (a whole number), "
                        f"got {_short(decision)}")


def apply_move(game: MoonRiverGame, action_id: int, names: Sequence[str | None]) -> dict[str, Any]:
    """Apply a decision; return who made it, its id and text, and the table keys it touched."""
    player = game.current_player
    keys, round_before = move_keys(game, action_id), game.round
    game.apply(action_id)
    return {"player": player, "action": action_id, "text": ActionCodec.to_text(action_id),
            "keys": moved_keys(keys, round_before, game), "name": names[player]}


def table_state(game: MoonRiverGame, names: Sequence[str | None]) -> dict[str, Any]:
    """The parts of the page state shared by live games and replays."""
    scores = game.scores() if game.is_over else game.running_scores()
    return {"svg": table_svg(game, names), "status": status_text(game, names),
            "phase": game.phase.name.lower(), "current_player": game.current_player,
            "over": game.is_over, "names": names,
            "scores": [s.to_dict() for s in scores],
            "winners": game.winners() if game.is_over else None}


DATA_FILE_FIELDS = ("plots_file", "boards_file", "partners_file", "bonus_file")
DATA_FILES_REFUSED = ("this server replays only records that use the package's own data "
                      "(config plots_file, boards_file, partners_file and bonus_file null) or "
                      "the data files named on its command line (moonriver-play --data-file)")
REPLAY_ERRORS = (ValueError, TypeError, KeyError, IndexError, OverflowError, RecursionError)


def check_record_data(record: object, allowed: frozenset[str] = frozenset()) -> None:
    """Refuse a record naming data files other than ``allowed``; the files are never read."""
    config = record.get("config") if isinstance(record, dict) else None
    if not isinstance(config, dict):
        return  # Game.from_record refuses it
    for name in DATA_FILE_FIELDS:
        value = config.get(name)
        if value is not None and not (isinstance(value, str) and value in allowed):
            raise PlayError(DATA_FILES_REFUSED)


class ReplaySession:
    """A recorded game opened for stepping forward and back through its decisions."""

    def __init__(self, record: Any, data_files: frozenset[str] = frozenset(),
                 names: list[str | None] | None = None, humans: list[int] | None = None,
                 backend: str = DEFAULT_BACKEND) -> None:
        check_record_data(record, data_files)
        self.backend = check_backend(backend)
        try:  # the record's own draws where it chose them (an OpenSpiel game's record)
            self._start = record_start(record, game_class=game_class(self.backend))
        except REPLAY_ERRORS as exc:
            message = str(exc) if len(str(exc)) <= 300 else str(exc)[:297] + "..."
            raise PlayError(f"not a valid game record: {message}") from None
        self.id = secrets.token_hex(8)
        self.config = self._start.config
        self.seed = self._start.seed
        self.decisions = [e for e in record["events"]
                          if e["type"] == "decision" and not e.get("auto")]
        n = self._start.num_players
        self.names: list[str | None] = list(names) if names and len(names) == n else [None] * n
        self.humans = list(humans or [])
        self.lock = threading.Lock()
        self._game = self._start.clone()
        self._step = 0
        self._last: dict[str, Any] | None = None

    @property
    def steps(self) -> int:
        """Number of decisions in the record."""
        return len(self.decisions)

    def state(self, step: int) -> dict[str, Any]:
        """The table after ``step`` decisions, with the move that led there highlighted."""
        if not 0 <= step <= self.steps:
            raise PlayError(f"step must be between 0 and {self.steps}, got {step}")
        with self.lock:
            if step < self._step:
                self._game, self._step, self._last = self._start.clone(), 0, None
            if self._step < step:  # the record was checked on opening: these replay
                replay_decisions(self._game, self.decisions[self._step:step - 1], ("decision",))
                self._last = apply_move(self._game, self.decisions[step - 1]["action"],
                                        self.names)
                self._step = step
            shown = self._last if step > 0 else None
            out = table_state(self._game, self.names)
        out.update(id=self.id, kind="replay", step=step, steps=self.steps, last=shown,
                   humans=self.humans, human_turn=False, thinking=False, legal=[], buttons={})
        return out
