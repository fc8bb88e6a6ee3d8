"""Circles: Far West tournaments: seat rotation, win rates with Wilson intervals, openskill.

The command line that ``moonriver-eval --game circles`` hands over to. See docs/circles.md."""

from __future__ import annotations

import functools
from collections.abc import Callable

from moonriver_env.agents.registry import CIRCLES_SPECS, make_agent
from moonriver_env.training.report import add_tournament_options, run_and_report
from moonriver_env.training.tournament import check_tournament, run_tournament

from moonriver_env.common.cli import ArgumentParser, add_debug_flag, cli_main, require


def build_parser(prog: str = "circles-eval") -> ArgumentParser:
    """The Circles tournament's argument parser."""
    parser = ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                        help=f"agent specs, at most one per seat: {', '.join(CIRCLES_SPECS)}")
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4, 5),
                        help="players per game (default: %(default)s)")
    add_tournament_options(parser, lambda low: int)  # check_tournament words the errors
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_debug_flag(parser)
    return parser


def _main(argv: list[str] | None, prog: str) -> int:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    try:
        check_tournament(args.agents, args.players, args.games, args.seed, args.workers,
                         args.duplicate)
        for spec in set(args.agents):
            make_agent(spec, game="circles")
    except ValueError as exc:
        parser.error(str(exc))
    require("tqdm", "rich", "openskill", what=prog)
    run_and_report(args, lambda records_dir: run_tournament(
        args.agents, args.players, games=args.games, seed=args.seed, workers=args.workers,
        progress=not args.no_progress, records_dir=records_dir, game="circles",
        duplicate=args.duplicate))
    return 0


def make_main(prog: str) -> Callable[[list[str] | None], int]:
    """A CLI entry point whose usage and one-line errors carry ``prog``."""
    return cli_main(prog)(functools.partial(_main, prog=prog))


def main(argv: list[str] | None = None) -> int:
    """CLI entry point (``python -m moonriver_env.training.circles_eval``)."""
    return make_main("circles-eval")(argv)


if __name__ == "__main__":
    raise SystemExit(main())
