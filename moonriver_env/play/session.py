"""Games being played (human seats and agent seats) and recorded games being replayed."""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from moonriver_env.agents import Agent, make_agent
from moonriver_env.engine import ActionCodec, Game, GameConfig, IllegalActionError
from moonriver_env.engine.record import replay_decisions
from moonriver_env.play.clicks import action_paths, button_labels, move_keys, moved_keys
from moonriver_env.render.style import status_text
from moonriver_env.render.svg import table_svg


class PlayError(ValueError):
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

    def to_dict(self) -> dict[str, Any]:
        """JSON form (for the page's new-game form)."""
        return {"players": self.players, "mode": self.mode, "scenario": self.scenario,
                "humans": list(self.humans), "opponents": list(self.opponents),
                "seed": self.seed}


def options_from_json(body: Any, defaults: GameOptions) -> GameOptions:
    """Validated options from a request body; anything wrong is a PlayError naming it."""
    if not isinstance(body, dict):
        raise PlayError("the body must be a JSON object with players, mode, scenario, humans, "
                        "opponents, seed")
    known = {"players", "mode", "scenario", "humans", "opponents", "seed"}
    unknown = sorted(set(body) - known)
    if unknown:
        raise PlayError(f"unknown fields {unknown}; allowed: {sorted(known)}")
    out = defaults.to_dict()
    out.update(body)
    humans, opponents = out["humans"], out["opponents"]
    if not isinstance(humans, list) or not all(type(h) is int for h in humans):
        raise PlayError(f"'humans' must be a list of seat numbers, got {humans!r}")
    if (not isinstance(opponents, list) or not opponents
            or not all(isinstance(o, str) for o in opponents)):
        raise PlayError(f"'opponents' must be a non-empty list of agent specs, got {opponents!r}")
    return GameOptions(out["players"], out["mode"], out["scenario"], tuple(humans),
                       tuple(opponents), out["seed"])


def make_seats(options: GameOptions, seed: int) -> list[Agent | None]:
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
    seats: list[Agent | None] = [None] * n
    for k, p in enumerate(agent_seats):
        try:
            seats[p] = make_agent(specs[k], seed=seed + 1 + p)
        except (ValueError, OSError) as exc:
            raise PlayError(str(exc)) from None
    return seats


class PlaySession:
    """One game in progress: the engine game, who sits where, and the last move."""

    def __init__(self, options: GameOptions) -> None:
        seed = options.seed
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2**31))
        if type(seed) is not int or seed < 0:
            raise PlayError(f"seed must be a non-negative integer or null, got {seed!r}")
        try:
            config = GameConfig(num_players=options.players, mode=options.mode,
                                scenario=options.scenario)
        except ValueError as exc:
            raise PlayError(str(exc)) from None
        self.seats = make_seats(options, seed)
        self.options = options
        self.id = secrets.token_hex(8)
        self.game = Game(config, seed=seed)
        for p, agent in enumerate(self.seats):
            if agent is not None:
                agent.reset(seed + 1 + p)
        self.names = ["you" if a is None else a.name for a in self.seats]
        self.lock = threading.Lock()
        self.last: dict[str, Any] | None = None
        self._encoder = None

    def human_turn(self) -> bool:
        """Whether a human seat decides now."""
        return not self.game.is_over and self.seats[self.game.current_player] is None

    def _apply(self, action_id: int) -> None:
        last = apply_move(self.game, action_id)
        self.last = {**last, "name": self.names[last["player"]]}

    def act(self, body: Any) -> None:
        """A human's decision ``{"action": id}``, checked by the engine (state unchanged if not)."""
        if not isinstance(body, dict) or set(body) != {"action"}:
            raise PlayError('the body must be a JSON object {"action": <action id>}')
        action = body["action"]
        if type(action) is not int:
            raise PlayError(f"'action' must be an integer action id, got {action!r}")
        if not 0 <= action < ActionCodec.num_actions:
            raise PlayError(f"action ids run from 0 to {ActionCodec.num_actions - 1}, "
                            f"got {action}")
        with self.lock:
            if self.game.is_over:
                raise PlayError("the game is over", 409)
            if not self.human_turn():
                raise PlayError(f"it is not a human's turn: player {self.game.current_player} "
                                f"({self.names[self.game.current_player]}) decides now", 409)
            try:
                self._apply(action)
            except IllegalActionError as exc:
                raise PlayError(str(exc), 409) from None

    def advance(self) -> None:
        """Let the agent whose turn it is make one decision."""
        with self.lock:
            game = self.game
            if game.is_over:
                raise PlayError("the game is over", 409)
            agent = self.seats[game.current_player]
            if agent is None:
                raise PlayError(f"player {game.current_player} is human: waiting for a click",
                                409)
            from moonriver_env.observation import LazyObservation, ObservationEncoder

            if self._encoder is None:
                self._encoder = ObservationEncoder()
            action = int(agent.act(game, LazyObservation(self._encoder, game,
                                                         game.current_player)))
            try:
                self._apply(action)
            except IllegalActionError as exc:
                raise PlayError(f"agent {agent.name} chose an illegal action: {exc}", 500) from None

    def state(self) -> dict[str, Any]:
        """Everything the page draws and offers now."""
        with self.lock:
            game = self.game
            out = table_state(game, self.names)
            out.update(id=self.id, kind="game", last=self.last, human_turn=self.human_turn(),
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
        with self.lock:
            return self.game.to_record()


def apply_move(game: Game, action_id: int) -> dict[str, Any]:
    """Apply a decision; return who made it, its id and text, and the table keys it touched."""
    player = game.current_player
    keys, round_before = move_keys(game, action_id), game.round
    game.apply(action_id)
    return {"player": player, "action": action_id, "text": ActionCodec.to_text(action_id),
            "keys": moved_keys(keys, round_before, game)}


def table_state(game: Game, names: list[str]) -> dict[str, Any]:
    """The parts of the page state shared by live games and replays."""
    scores = game.scores() if game.is_over else game.running_scores()
    return {"svg": table_svg(game, names), "status": status_text(game, names),
            "phase": game.phase.name.lower(), "current_player": game.current_player,
            "over": game.is_over, "names": names,
            "scores": [s.to_dict() for s in scores],
            "winners": game.winners() if game.is_over else None}


class ReplaySession:
    """A recorded game opened for stepping forward and back through its decisions."""

    def __init__(self, record: Any) -> None:
        try:
            final = Game.from_record(record)
        except ValueError as exc:
            raise PlayError(f"not a valid game record: {exc}") from None
        self.id = secrets.token_hex(8)
        self.config = final.config
        self.seed = final.seed
        self.decisions = [e for e in record["events"]
                          if e["type"] == "decision" and not e.get("auto")]
        self.names = [f"P{p}" for p in range(final.num_players)]
        self.lock = threading.Lock()
        self._game = Game(self.config, seed=self.seed)
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
                self._game, self._step, self._last = Game(self.config, seed=self.seed), 0, None
            if self._step < step:  # the record was checked on opening: these replay
                replay_decisions(self._game, self.decisions[self._step:step - 1], ("decision",))
                self._last = apply_move(self._game, self.decisions[step - 1]["action"])
                self._step = step
            last = self._last if step > 0 else None
            out = table_state(self._game, self.names)
        out.update(id=self.id, kind="replay", step=step, steps=self.steps, last=last,
                   human_turn=False, legal=[], buttons={})
        return out
