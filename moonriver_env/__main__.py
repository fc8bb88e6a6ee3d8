"""Command line: ``python -m moonriver_env {replay,actions-doc,observation-doc} ...``."""

from __future__ import annotations

import json
import sys

from moonriver_env.backend import BACKENDS, DEFAULT_BACKEND, game_class, make_game
from moonriver_env.common.cli import ArgumentParser, add_debug_flag, cli_main
from moonriver_env.engine import ActionCodec
from moonriver_env.engine.text import cell_key


def load_record(path: str) -> dict:
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


def replay(path: str, step: bool, delay: float, backend: str = DEFAULT_BACKEND) -> int:
    """Step through a recorded game in the terminal (Enter for the next decision), played by
    the ``backend`` implementation (records of either replay on both).

    A record saved before the end (records can be written at any time) replays up to its
    last decision and ends with the running scores and a note that the game is unfinished.
    """
    import time

    record = load_record(path)
    try:
        final = game_class(backend).from_record(record)  # checks the record replays
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    game = make_game(final.config, record["seed"], backend=backend)
    decisions = [e for e in record["events"] if e["type"] == "decision" and not e.get("auto")]
    print(cell_key() + "\n")
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
              f"{ActionCodec.to_text(event['action'])}")
        game.apply(event["action"])
        print(game.table_text())
    if game.is_over:
        print("\nfinal scores:", [s.total for s in game.scores()], "winners:", game.winners())
    else:
        print(f"\nthe game is unfinished: the record ends after {len(decisions)} decisions; "
              f"running scores: {[s.total for s in game.running_scores()]}")
    return 0


@cli_main("python -m moonriver_env")
def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = ArgumentParser(prog="python -m moonriver_env")
    add_debug_flag(parser)
    sub = parser.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("replay", help="step through a recorded game (JSON record)")
    rp.add_argument("file", help="a JSON game record (Game.to_record, moonriver-eval "
                                 "--save-records)")
    rp.add_argument("--no-step", action="store_true", help="print every step without pausing")
    rp.add_argument("--delay", type=float, default=0.0, help="seconds between steps (--no-step)")
    rp.add_argument("--backend", choices=BACKENDS, default=DEFAULT_BACKEND,
                    help="implementation that replays the game: core (compiled) or python (the "
                         "reference engine) (default: %(default)s, or $MOONRIVER_BACKEND)")
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
