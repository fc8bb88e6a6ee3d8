"""A tournament command's report: the results table, ``summary.csv`` and ``results.json``."""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any

from moonriver_env.training.tournament import TournamentResult


def agent_label(name: str, width: int) -> str:
    """``name`` in at most ``width`` characters where it holds a path (its last parts kept)."""
    if len(name) <= width or "/" not in name:
        return name
    kind, sep, path = name.partition(":")
    prefix = f"{kind}:.../" if sep else ".../"
    parts = (path if sep else name).rstrip("/").split("/")
    tail = parts[-1]
    for part in reversed(parts[:-1]):
        if len(prefix) + len(part) + 1 + len(tail) > width:
            break
        tail = f"{part}/{tail}"
    return prefix + tail


def print_table(result: TournamentResult, console: Any = None) -> None:
    """The results table, one line per agent, fitted to the console (80 columns and up)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    cfg = result.config
    agents = sorted(result.agents, key=lambda a: -a.rating)
    rows = [[str(a.games), f"{a.win_rate:.3f}", f"{a.win_ci_low:.2f}-{a.win_ci_high:.2f}",
             f"{a.mean_score:.1f}", f"{a.mean_margin:+.1f}", f"{a.rating:.2f}",
             f"{a.rating_mu:.1f} ± {a.rating_sigma:.1f}"] for a in agents]
    headers = ["games", "win", "95% CI", "score", "margin", "rating", "mu ± sigma"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    room = max(console.width - sum(w + 3 for w in widths), 12)  # 3 characters between columns
    labels = [agent_label(a.name, room) for a in agents]
    if max(map(len, labels)) > room:
        headers, rows = headers[:-1], [r[:-1] for r in rows]
        room += widths[-1] + 3
        labels = [agent_label(a.name, room) for a in agents]
    if len(set(labels)) < len(labels):  # shortening made two agents look alike
        labels = [a.name for a in agents]
    scenario = f", scenario {cfg['scenario']}" if cfg.get("scenario") is not None else ""
    table = Table(title=f"{cfg['games']} games, {cfg['num_players']} players, {cfg['mode']}"
                        f"{scenario}",
                  box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                  caption="win: shared wins split; rating: openskill mu - 3 sigma")
    table.add_column("agent", overflow="fold", min_width=min(max(map(len, labels)), room))
    for col in headers:
        table.add_column(col, justify="right", no_wrap=True)
    for label, row in zip(labels, rows, strict=True):
        table.add_row(label, *row)
    console.print(table)


def write_outputs(result: TournamentResult, out_dir: str) -> tuple[str, str]:
    """Write ``summary.csv`` and ``results.json`` into a directory; return their paths."""
    os.makedirs(out_dir, exist_ok=True)
    csv_path = os.path.join(out_dir, "summary.csv")
    json_path = os.path.join(out_dir, "results.json")
    with open(csv_path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(asdict(result.agents[0])))
        writer.writeheader()
        writer.writerows(asdict(a) for a in result.agents)
    with open(json_path, "w", encoding="utf-8") as fh:
        json.dump(result.to_json(), fh, indent=1)
    return csv_path, json_path


@contextmanager
def staged_dir(path: str | None) -> Iterator[str | None]:
    """A temporary directory whose files move into ``path`` only if the block succeeds."""
    if path is None:
        yield None
        return
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"output path {path!r} exists and is not a directory")
    staging = tempfile.mkdtemp(prefix="moonriver-eval-")
    try:
        yield staging
        os.makedirs(path, exist_ok=True)
        for name in sorted(os.listdir(staging)):
            shutil.move(os.path.join(staging, name), os.path.join(path, name))
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def add_tournament_options(parser: argparse.ArgumentParser,
                           count: Callable[[int], Callable[[str], int]], records: str = "") -> None:
    """--games, --seed, --workers, --out, --save-records (``count(low)``: the counts' type)."""
    parser.add_argument("--games", type=count(1), default=100,
                        help="games to play, >= 1 (default: %(default)s)")
    parser.add_argument("--seed", type=count(0), default=0,
                        help="seed of game 0, >= 0; game g uses seed + g (default: %(default)s)")
    parser.add_argument("--duplicate", action="store_true",
                        help="deal each seed once per seat (game g on seed + g // players; "
                             "--games a multiple of the players), so equal agents tie exactly")
    parser.add_argument("--workers", type=count(1), default=1,
                        help="worker processes, >= 1 (default: %(default)s)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="directory for summary.csv and results.json (default: none)")
    parser.add_argument("--save-records", default=None, metavar="DIR",
                        help=f"directory for each game's JSON record{records} (default: none)")


def run_and_report(args: argparse.Namespace, play: Callable[[str | None], TournamentResult],
                   records_hint: str = "") -> None:
    """Run ``play(records_dir)`` with the output folders staged, then print the table."""
    with staged_dir(args.out) as out_dir, staged_dir(args.save_records) as records_dir:
        result = play(records_dir)
        if out_dir is not None:
            write_outputs(result, out_dir)
    print_table(result)
    if args.out:
        print("wrote", os.path.join(args.out, "summary.csv"),
              os.path.join(args.out, "results.json"))
    if args.save_records:
        print(f"wrote {args.games} game records to {args.save_records}{records_hint}")
