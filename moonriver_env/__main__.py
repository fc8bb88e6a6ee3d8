"""Command line: ``python -m moonriver_env {replay,actions-doc,observation-doc} ...``."""

from __future__ import annotations

import argparse
import json
import sys

from moonriver_env.engine import ActionCodec, Game


def replay(path: str, step: bool, delay: float) -> int:
    """Step through a recorded game in the terminal (Enter for the next decision)."""
    import time

    with open(path, encoding="utf-8") as fh:
        record = json.load(fh)
    final = Game.from_record(record)  # checks the record replays
    game = Game(final.config, seed=record["seed"])
    decisions = [e for e in record["events"] if e["type"] == "decision" and not e.get("auto")]
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
    print("\nfinal scores:", [s.total for s in game.scores()], "winners:", game.winners())
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(prog="python -m moonriver_env")
    sub = parser.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("replay", help="step through a recorded game (JSON record)")
    rp.add_argument("file")
    rp.add_argument("--no-step", action="store_true", help="print every step without pausing")
    rp.add_argument("--delay", type=float, default=0.0, help="seconds between steps (--no-step)")
    sub.add_parser("actions-doc", help="print docs/actions.md")
    sub.add_parser("observation-doc", help="print docs/observation.md")
    args = parser.parse_args(argv)
    if args.command == "replay":
        return replay(args.file, step=not args.no_step and sys.stdin.isatty(), delay=args.delay)
    if args.command == "actions-doc":
        from moonriver_env.actions import actions_markdown

        sys.stdout.write(actions_markdown())
    else:
        from moonriver_env.observation import ObservationEncoder

        sys.stdout.write(ObservationEncoder().markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
