"""Command line: ``python -m moonriver_env {replay,actions-doc,observation-doc} ...``."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from moonriver_env.circles.config import CirclesConfig
from moonriver_env.circles.game import CirclesGame
from moonriver_env.circles.record import RECORD_FORMAT as CIRCLES_FORMAT
from moonriver_env.common.cli import ArgumentParser, add_debug_flag, cli_main
from moonriver_env.moonriver.backend import BACKENDS, DEFAULT_BACKEND, game_class
from moonriver_env.moonriver.rules import ActionCodec
from moonriver_env.moonriver.rules.record import RECORD_FORMAT as MOONRIVER_FORMAT
from moonriver_env.moonriver.rules.record import record_start
from moonriver_env.moonriver.rules.text import cell_key


def load_record(path: str) -> dict[str, Any]:
    """A record file's JSON; a truncated or non-JSON file is a ValueError naming the file."""
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        record = json.loads(data.decode("utf-8"))
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"{path} is not a JSON game record (truncated or not JSON: "
                         f"{exc})") from None
    if not isinstance(record, dict):
        raise ValueError(f"{path} is not a game record: expected a JSON object")
    return record


@dataclass(frozen=True)
class _Shown:
    """How the replay command shows one game's records."""

    start: Callable[[dict[str, Any], str], Any]  # the game before the first decision, checked
    action_text: Callable[[Any, int], str]
    summary: Callable[[Any, int], str]  # the last line, given the decisions replayed
    key: str  # printed before the first table


def _moonriver_summary(game: Any, decisions: int) -> str:
    if game.is_over:
        return f"final scores: {[s.total for s in game.scores()]} winners: {game.winners()}"
    return (f"the game is unfinished: the record ends after {decisions} decisions; running "
            f"scores: {[s.total for s in game.running_scores()]}")


def _circles_start(record: dict[str, Any], backend: str) -> CirclesGame:
    """Circles has one implementation, so ``backend`` names none here."""
    CirclesGame.from_record(record)  # checks that the record replays
    return CirclesGame(CirclesConfig.from_dict(record["config"]), seed=record["seed"])


def _circles_summary(game: Any, decisions: int) -> str:
    wealth = [game.wealth(p) for p in range(game.num_players)]
    if game.is_over:
        return f"final wealth: {wealth} winners: {game.winners()}"
    return (f"the game is unfinished: the record ends after {decisions} decisions; wealth so "
            f"far: {wealth}")


# Every record format the project writes (docs/game-record.md, docs/circles.md).
SHOWN = {
    MOONRIVER_FORMAT: _Shown(
        lambda record, backend: record_start(record, game_class=game_class(backend)),
        lambda game, a: ActionCodec.to_text(a), _moonriver_summary, cell_key() + "\n"),
    CIRCLES_FORMAT: _Shown(_circles_start, lambda game, a: game.codec.to_text(a),
                           _circles_summary, ""),
}


def _start(path: str, record: dict[str, Any], backend: str) -> tuple[_Shown, Any]:
    """How to show the record, and its start; ValueError for an unknown or unreplayable record."""
    shown = SHOWN.get(record.get("format"))  # type: ignore[arg-type]
    if shown is None:
        raise ValueError(f"{path}: not a Moon River record nor a Circles record: expected "
                         f"format {MOONRIVER_FORMAT!r} or {CIRCLES_FORMAT!r}, got "
                         f"{record.get('format')!r:.40}")
    try:
        return shown, shown.start(record, backend)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def replay(path: str, step: bool, delay: float, backend: str = DEFAULT_BACKEND) -> int:
    """Step through a Moon River or Circles record in the terminal (Enter: next decision)."""
    import time

    record = load_record(path)
    shown, game = _start(path, record, backend)
    decisions = [e for e in record["events"] if e["type"] == "decision" and not e.get("auto")]
    if shown.key:
        print(shown.key)
    print(game.table_text())
    for i, event in enumerate(decisions, 1):
        if step:
            try:
                if input(f"\n[{i}/{len(decisions)}] Enter: next, q: quit > ").strip() == "q":
                    return 0
            except EOFError:
                step = False
        elif delay:
            time.sleep(delay)
        print(f"\n=== decision {i}/{len(decisions)}: player {event['player']} - "
              f"{shown.action_text(game, event['action'])}")
        game.apply(event["action"])
        print(game.table_text())
    print("\n" + shown.summary(game, len(decisions)))
    return 0


@cli_main("python -m moonriver_env")
def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = ArgumentParser(prog="python -m moonriver_env")
    add_debug_flag(parser)
    sub = parser.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("replay", help="step through a recorded game (JSON record)")
    rp.add_argument("file", help="a JSON game record of Moon River (Game.to_record, "
                                 "moonriver-eval --save-records, the OpenSpiel game's) or of "
                                 "Circles (moonriver-eval --game circles --save-records)")
    rp.add_argument("--no-step", action="store_true", help="print every step without pausing")
    rp.add_argument("--delay", type=float, default=0.0, help="seconds between steps (--no-step)")
    rp.add_argument("--backend", choices=BACKENDS, default=DEFAULT_BACKEND,
                    help="implementation that replays a Moon River game: core (compiled) or python "
                         "(the reference engine) (default: %(default)s, or $MOONRIVER_BACKEND); "
                         "Circles has the Python engine alone")
    add_debug_flag(rp)
    add_debug_flag(sub.add_parser("actions-doc", help="print docs/actions.md"))
    add_debug_flag(sub.add_parser("observation-doc", help="print docs/observation.md"))
    args = parser.parse_args(argv)
    if args.command == "replay":
        if not 0 <= args.delay < float("inf"):
            parser.error(f"argument --delay: expected seconds >= 0, got {args.delay}")
        return replay(args.file, step=not args.no_step and sys.stdin.isatty(), delay=args.delay,
                      backend=args.backend)
    if args.command == "actions-doc":
        from moonriver_env.moonriver.actions import actions_markdown

        sys.stdout.write(actions_markdown())
    else:
        from moonriver_env.moonriver.observation import ObservationEncoder

        sys.stdout.write(ObservationEncoder().markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
