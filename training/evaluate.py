"""Tournaments between agents: win rates with confidence intervals, scores, openskill ratings.

The ``moonriver-eval`` command line (the tournament: ``training.tournament``). See docs/guide.md."""

from __future__ import annotations

import argparse
import json
import os
import sys
import zipfile
from collections.abc import Callable
from typing import Any

from moonriver_env.agents.registry import SPECS
from moonriver_env.training.report import add_tournament_options, run_and_report
from moonriver_env.training.report import agent_label as agent_label  # the table's labels
from moonriver_env.training.report import print_table as print_table  # used by the notebooks
from moonriver_env.training.settings import warner
from moonriver_env.training.tournament import GAMES, check_tournament, record_name, run_tournament

from moonriver_env.common.cli import ArgumentParser, add_debug_flag, cli_main, require
from moonriver_env.moonriver.backend import BACKENDS, DEFAULT_BACKEND
from moonriver_env.moonriver.rules import GameConfig
from moonriver_env.moonriver.rules.scenarios import SCENARIOS


def trained_for(path: str) -> dict[str, Any] | None:
    """The variant a moonriver-train checkpoint was trained on (model or config.json), or None."""
    try:
        with zipfile.ZipFile(path) as archive:
            meta = json.loads(archive.read("data")).get("moonriver")
        if isinstance(meta, dict):
            return meta
    except (OSError, KeyError, ValueError, AttributeError, zipfile.BadZipFile):
        pass
    folder = os.path.dirname(os.path.abspath(path))
    for candidate in (folder, os.path.dirname(folder)):
        try:
            with open(os.path.join(candidate, "config.json"), encoding="utf-8") as fh:
                config = json.load(fh)
        except (OSError, ValueError):
            continue
        if isinstance(config, dict) and "num_players" in config:
            return {"num_players": config["num_players"], "mode": config.get("mode")}
    return None


def variant_warnings(specs: list[str], num_players: int, mode: str) -> list[str]:
    """Warnings for SB3 policies trained on another player count or mode than this tournament."""
    warnings = []
    for spec in dict.fromkeys(specs):
        kind, _, path = spec.partition(":")
        meta = trained_for(path) if kind in ("policy", "policy-sample") and path else None
        if meta is None:
            continue
        for key, here in (("num_players", num_players), ("mode", mode)):
            if meta.get(key) is not None and meta[key] != here:
                warnings.append(f"{spec} was trained with {key}={meta[key]!r}, this tournament "
                                f"has {key}={here!r}; its results may say little")
    return warnings


def integer_at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``low`` (a clear one-line error otherwise)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {text!r}") \
                from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {value}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


def build_parser() -> argparse.ArgumentParser:
    """The ``moonriver-eval`` argument parser."""
    parser = ArgumentParser(prog="moonriver-eval", description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="moonriver", choices=GAMES,
                        help="which game: moonriver, or circles (Circles: Far West, 2-5 "
                             "players, agents random and heuristic; see `moonriver-eval --game "
                             "circles --help`) (default: %(default)s)")
    parser.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                        help="agent specs, at most one per seat: "
                             + ", ".join(SPECS) + " (e.g. mcts:100, mcts:0.5s, "
                             "pretrained+search:32, pretrained:2p-base, pretrained+puct:0.1s; "
                             "pretrained and pretrained+search play every variant)")
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4),
                        help="players per game (default: %(default)s)")
    parser.add_argument("--mode", default="base", choices=("base", "legends"),
                        help="game mode (default: %(default)s)")
    parser.add_argument("--scenario", type=int, choices=tuple(SCENARIOS), default=None,
                        help="legends scenario (default: drawn at random)")
    add_tournament_options(parser, integer_at_least,
                           ", replayable with `python -m moonriver_env replay FILE`")
    parser.add_argument("--backend", default=DEFAULT_BACKEND, choices=BACKENDS,
                        help="implementation that plays the games: core (compiled, fast) or "
                             "python (the reference engine); both play the same games from the "
                             "same seeds (default: %(default)s, or $MOONRIVER_BACKEND)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_debug_flag(parser)
    return parser


def split_game(argv: list[str]) -> tuple[str, list[str]]:
    """The ``--game`` value (last one wins) and the arguments without it."""
    game, rest, i = "moonriver", [], 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--game" and i + 1 < len(argv):
            game, i = argv[i + 1], i + 2
            continue
        if arg.startswith("--game="):
            game = arg.split("=", 1)[1]
        else:
            rest.append(arg)
        i += 1
    return game, rest


def main(argv: list[str] | None = None) -> int:
    """CLI entry point (``moonriver-eval``); ``--game circles`` hands over to Circles."""
    args = sys.argv[1:] if argv is None else list(argv)
    game, rest = split_game(args)
    if game == "circles":
        from moonriver_env.training.circles_eval import make_main

        return make_main("moonriver-eval --game circles")(rest)
    return moonriver_main(args)


@cli_main("moonriver-eval")
def moonriver_main(argv: list[str] | None = None) -> int:
    """The Moon River tournament CLI."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_tournament(args.agents, args.players, args.games, args.seed, args.workers,
                         args.duplicate)
        config = GameConfig(num_players=args.players, mode=args.mode, scenario=args.scenario)
    except ValueError as exc:
        parser.error(str(exc))
    require("tqdm", "rich", "openskill", what="moonriver-eval")
    for warning in variant_warnings(args.agents, args.players, args.mode):
        warner("moonriver-eval")(warning)
    hint = (f" (replay one with: python -m moonriver_env replay "
            f"{os.path.join(args.save_records, record_name(0))})" if args.save_records else "")
    run_and_report(args, lambda records_dir: run_tournament(
        args.agents, args.players, args.mode, args.games, args.seed, args.workers,
        progress=not args.no_progress, records_dir=records_dir, backend=args.backend,
        config=config, duplicate=args.duplicate),
        records_hint=hint)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
