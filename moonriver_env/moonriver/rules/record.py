"""Game records: a JSON account of a game that replays to the same state (docs/game-record.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

from moonriver_env.common.records import rebuild, record_seed

from .actions import ActionCodec
from .components import Face, PartnerKind, Terrain
from .config import GameConfig
from .grid import COLS

if TYPE_CHECKING:
    from moonriver_env.moonriver.contract import MoonRiverGame, RanchView

    from .game import Game

G = TypeVar("G", bound="MoonRiverGame")

RECORD_FORMAT = "moonriver-record"
RECORD_VERSION = 2
# Version 1 listed each decision after the chance events it caused; it still replays.
READABLE_VERSIONS = (1, 2)


def _cell_state(game: MoonRiverGame, ranch: RanchView, cell: int) -> dict[str, Any]:
    kind_id = int(ranch.kind[cell])
    kind = game.data.kinds[kind_id]
    plot = int(ranch.plot[cell])
    out: dict[str, Any] = {
        "row": cell // COLS, "col": cell % COLS,
        "plot": plot if plot >= 0 else None,
        "bonus_tile": "AB"[-2 - plot] if plot < -1 else None,
        "kind": kind.label, "terrain": Terrain(kind.terrain).name.lower(),
        "nugget": kind.nugget, "beaver": kind.beaver, "corn": kind.corn,
        "cow_symbols": kind.cows, "skull": kind.skull, "circle": kind.circle,
        "cows": int(ranch.cows[cell]), "partner": None,
    }
    token = int(ranch.partner[cell])
    if token >= 0:
        face = Face(int(ranch.face[cell]))
        shown = PartnerKind.COWBOY if face == Face.COWBOY else game.data.partner_specialists[token]
        out["partner"] = {"token": token, "face": face.name.lower(), "kind": shown.name.lower()}
    return out


def final_state(game: MoonRiverGame) -> dict[str, Any]:
    """The public state of the table now: ranches, reserves, columns, saloon, supplies."""
    data = game.data
    players = []
    for p, ranch in enumerate(game.ranches):
        cells = [_cell_state(game, ranch, c) for c in range(len(ranch.kind)) if ranch.kind[c] >= 0]
        players.append({
            "player": p, "board": game.board_names[p], "cells": cells,
            "reserve": [{"plot": plot, "kind": data.kinds[int(data.plot_kind[plot])].label}
                        for plot in ranch.hand],
            "bonus_taken": ranch.bonus_taken,
        })
    return {
        "phase": game.phase.name.lower(), "round": game.round, "last_round": game.last_round,
        "current_player": game.current_player, "players": players,
        "active_column": list(game.active or ()), "pending_column":
            None if game.pending is None else list(game.pending),
        "saloon": list(game.saloon), "cow_supply": game.supply, "box_count": len(game.box),
        "pile_count": len(game.pile), "removed": list(game.removed),
        "discarded": list(game.discarded),
    }


def to_record(game: MoonRiverGame, include_seed: bool = False) -> dict[str, Any]:
    """The game's record: config, seed (see :func:`record_seed`), events, final state, scores."""
    events = game.history  # a deep copy: the record shares nothing with the game
    for event in events:
        if event["type"] == "decision":
            event["text"] = ActionCodec.to_text(event["action"])
    over = game.is_over
    scores = game.scores() if over else game.running_scores()
    record = {
        "format": RECORD_FORMAT, "version": RECORD_VERSION,
        "config": game.config.to_dict(), "seed": record_seed(game, include_seed),
        "scenario": game.scenario, "boards": list(game.board_names),
        "events": events, "final": final_state(game), "over": over,
        "scores": [s.to_dict() for s in scores],
        "winners": game.winners() if over else None,
    }
    if game.chosen_draws:  # explicit chance: the replay takes its draws from the events
        record["chosen_draws"] = True
    return record


def _drawn_ids(event: dict[str, Any]) -> tuple[str, Any] | None:
    """The source ("box" or "pile") and the ids a chance event drew, None if it drew none."""
    if event.get("event") == "column":
        return "box", event.get("plots")
    if event.get("event") == "saloon":
        filled = event.get("filled")
        if not isinstance(filled, list) or not all(isinstance(f, list) and len(f) == 2
                                                   for f in filled):
            return "pile", None
        return "pile", [token for _, token in filled]
    return None


def chosen_draws(record: dict[str, Any]) -> dict[str, list[int]] | None:
    """A ``chosen_draws`` record's draws from its chance events, in draw order; None if seeded."""
    flag = record.get("chosen_draws")
    if flag is None:
        return None
    if flag is not True:
        raise ValueError(f"record field 'chosen_draws' is true when present, got {flag!r:.40}")
    events = record.get("events")
    draws: dict[str, list[int]] = {"box": [], "pile": []}
    for i, event in enumerate(events if isinstance(events, list) else []):
        drawn = _drawn_ids(event) if isinstance(event, dict) and \
            event.get("type") == "chance" else None
        if drawn is None:
            continue
        source, ids = drawn
        if not isinstance(ids, list) or not all(type(x) is int for x in ids):
            raise ValueError(f"record event {i}: a {event['event']} event of a chosen_draws "
                             f"record must list integer ids, got {event!r:.80}")
        draws[source] += ids
    return draws


def _version_1_order(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events in version 1's order: each decision after the chance events it caused."""
    out: list[dict[str, Any]] = []
    held: dict[str, Any] | None = None
    for event in events:
        if event["type"] == "decision":
            if held is not None:
                out.append(held)
            held = event
        else:
            out.append(event)
    if held is not None:
        out.append(held)
    return out


_REQUIRED = {"config": dict, "seed": int, "events": list, "final": dict, "scores": list}


@overload
def from_record(record: dict[str, Any], verify: bool = True) -> Game: ...
@overload
def from_record(record: dict[str, Any], verify: bool, game_class: Callable[..., G]) -> G: ...
def from_record(record: dict[str, Any], verify: bool = True,
                game_class: Callable[..., MoonRiverGame] | None = None) -> MoonRiverGame:
    """Replay a record and check it reaches the same record; a faulty one raises ValueError."""
    build_game = _game_class(game_class)

    def rewrite(game: MoonRiverGame, version: int) -> dict[str, Any]:
        again = to_record(game, include_seed=True)  # the record has its seed
        if version == 1:
            again.update(version=1, events=_version_1_order(again["events"]))
        return again

    draws = chosen_draws(record) if isinstance(record, dict) else None
    return rebuild(record, game="Moon River", fmt=RECORD_FORMAT, versions=READABLE_VERSIONS,
                   required=_REQUIRED,
                   build=lambda config, seed: build_game(GameConfig.from_dict(config), seed=seed,
                                                         first_draws=draws),
                   kinds=("decision", "chance"), rewrite=rewrite, verify=verify)


def _game_class(game_class: Callable[..., MoonRiverGame] | None) -> Callable[..., MoonRiverGame]:
    """``game_class``, or the reference engine's Game when None."""
    if game_class is not None:
        return game_class
    from .game import Game

    return Game


def record_start(record: dict[str, Any], verify: bool = True,
                 game_class: Callable[..., MoonRiverGame] | None = None) -> MoonRiverGame:
    """The game a record starts from, before its first decision (checked as by from_record)."""
    build_game = _game_class(game_class)
    from_record(record, verify, build_game)
    return build_game(GameConfig.from_dict(record["config"]), seed=record["seed"],
                      first_draws=chosen_draws(record))
