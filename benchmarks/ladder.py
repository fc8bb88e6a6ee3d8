"""The agent ladder: every baseline against every other, in base and Legends variants.

    python benchmarks/ladder.py --games 1000 --workers 2 --write

``--variants`` names the variants (NP-base or NP-legends-S: N players 2-4, Legends of the West
scenario S 1-4); by default 4p-base, 2p-base and 4p-legends-2 (scenario 2, Gold Rush: the
Legends variant where the PPO weights were measured playing out of their variant, 0.61
against three Greedy and 5 wins in 52 games at a table with ``mcts:100``, so its table shows
what one network for every variant changed; a 4-player table, like the base game's main one).
For each variant the pool is random, greedy, an MCTS agent per ``--mcts`` budget (20, 100 and
1000 simulations by default), the one network for every variant alone (``pretrained``) and
with its batched search per ``--az-search`` budget (``pretrained+search:SIMS``; 160 simulations
by default: on the compiled core about ``mcts:1000``'s time per decision at tables of 3 and 4,
where the search mixes in playouts, and under half of it at 2, see
``benchmarks/equal_time.py``), and, where the variant has the PPO recipe's weights
(4p-base and 2p-base only: other variants refuse them), those weights alone
(``pretrained:4p-base`` or ``pretrained:2p-base``) and as the prior of PUCT search per
``--search`` budget (``pretrained+puct:VARIANT:N``; 30 and 12 by default, 12 about the time of
``mcts:1000``).
When the PPO weights are not installed, ``puct`` (heuristic prior) stands in for their agents,
and when the one network's weights are missing its agents are left out, each with a note.
Every combination of ``players`` agents of a variant's pool is one table, played by
``run_tournament`` with seats rotated, for as many games as give every agent ``--games``
seat-games in all (rounded up to whole tables); table t of variant v uses seeds
``seed + 1_000_000_000 * v + 1_000_000 * t + g``, where v is the variant's place in
``VARIANTS`` (4p-base 0, 2p-base 1, 3p-base 2, then the Legends variants: 4p-legends-2 is
12), whichever variants a run names (from 4e9 by default: training games use seeds below 1e9,
the documented evaluations 1e9 to 3.1e9). Per agent the script pools its seat-games over
all tables of a variant: win rate with its 95% Wilson interval, mean score and margin, and
openskill (Plackett-Luce) ratings updated over all games, interleaved across tables by game
index. Every pair of agents also gets a head-to-head matrix: the share of the games they
played together in which the row agent finished ahead of the column agent (winner first, then
by score; a tie counts half), which for two players is the row's win rate. Tables are spread
over ``--workers`` processes, the slowest first; each finished table is saved under
``--out``'s directory, and ``--resume`` reuses the saved tables of an interrupted run. On
stderr it says what it will play when it starts, then every 10 s the games played so far, the
minutes and an estimate of what remains, and a line per finished table; Ctrl-C stops it with
one line (the finished tables stay saved). It reports wall and CPU seconds (and the load
average before and after, as the machine may be shared) and how long ``--games 1000`` would
take at this run's pace. ``--backend`` names the implementation that plays the games (core
by default, or as ``MOONRIVER_BACKEND`` says). Agents without search play the same games on
both; the search agents run the same algorithms but draw their simulations from the core's
own generator on the core, so their games (not their strength) differ, and ``--resume``
reuses only tables of the same backend.

``--write`` replaces the generated text between the ladder markers of ``docs/results.md``
and of ``README.md`` (the markers must exist). Full results go to ``--out`` as JSON. Last
line: one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import hashlib
import itertools
import json
import math
import multiprocessing
import os
import shutil
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any, NamedTuple

import moonriver_env.agents as agents_package
from machine import machine  # this script's directory is on sys.path
from moonriver_env.agents.az import MAX_SIMULATIONS
from moonriver_env.agents.registry import make_agent
from moonriver_env.training.atomic import atomic_save
from moonriver_env.training.evaluate import integer_at_least
from moonriver_env.training.tournament import run_tournament, summarise, wilson_interval
from moonriver_env.training.variants import ALL_VARIANTS, variant_config
from progress import EVERY, INTERRUPTED, Progress, main_of, watching

import moonriver_env.moonriver.core as core_package
import moonriver_env.moonriver.rules as engine_package
from moonriver_env.common.cli import children_ignore_ctrl_c
from moonriver_env.moonriver.backend import BACKENDS, DEFAULT_BACKEND
from moonriver_env.moonriver.rules.scenarios import SCENARIOS

# Every variant a ladder may play; a variant's place here fixes its seeds (4p-base and 2p-base
# first, as in earlier ladders, then the others in moonriver-train-az's order).
VARIANTS = ("4p-base", "2p-base",
            *(v for v in ALL_VARIANTS if v not in ("4p-base", "2p-base")))
DEFAULT_VARIANTS = ["4p-base", "2p-base", "4p-legends-2"]
PPO_VARIANTS = ("4p-base", "2p-base")  # the variants with PPO weights (pretrained:VARIANT)
MARKERS = ("<!-- ladder:start -->", "<!-- ladder:end -->")
SUMMARY_MARKERS = ("<!-- ladder-summary:start -->", "<!-- ladder-summary:end -->")
TABLE_STRIDE = 1_000_000
VARIANT_STRIDE = 1_000_000_000
MAX_TABLES = VARIANT_STRIDE // TABLE_STRIDE  # tables of one variant, so that seeds stay apart
PLAYING = "playing"  # the folder beside the saved tables where unfinished tables record games


def variant_title(variant: str) -> str:
    """A variant in words: "4-player base game", "4-player Legends, scenario 2 (Gold Rush)"."""
    config = variant_config(variant)
    if config.scenario is None:
        return f"{config.num_players}-player base game"
    return (f"{config.num_players}-player Legends of the West, scenario {config.scenario} "
            f"({SCENARIOS[config.scenario].name})")


def pool_for(variant: str, mcts: Sequence[int], search: Sequence[str],
             az_search: Sequence[int] = ()) -> tuple[list[str], str]:
    """The agent specs of a variant's ladder (random, greedy, an MCTS agent per budget of
    ``mcts``; where the variant has PPO weights, ``pretrained:VARIANT`` and a
    ``pretrained+puct:VARIANT`` agent per budget of ``search``; the one network ``pretrained``
    and a ``pretrained+search`` agent per budget of ``az_search``), and a note on what was
    skipped or stood in (or "")."""
    pool, notes = ["random", "greedy", *(f"mcts:{sims}" for sims in mcts)], []
    if variant in PPO_VARIANTS:
        ppo = f"pretrained:{variant}"
        try:
            make_agent(ppo)
        except (ValueError, OSError, ImportError) as exc:
            notes.append(f"`{ppo}` and `pretrained+puct:{variant}` skipped ({why_missing(exc)}); "
                         f"{', '.join(f'`puct:{b}`' for b in search)} (heuristic prior) play "
                         f"instead")
            pool += [f"puct:{b}" for b in search]
        else:
            pool += [ppo, *(f"pretrained+puct:{variant}:{b}" for b in search)]
    try:
        make_agent("pretrained")
    except (ValueError, OSError, ImportError) as exc:
        notes.append(f"`pretrained` and `pretrained+search` skipped ({why_missing(exc)})")
    else:
        pool += ["pretrained", *(f"pretrained+search:{sims}" for sims in az_search)]
    return pool, "; ".join(notes)


def why_missing(exc: BaseException) -> str:
    """Why an agent could not be built: the missing file's name, or the error's text."""
    if isinstance(exc, OSError) and exc.filename:
        return f"{os.path.basename(exc.filename)} not found"
    return str(exc)


# On the compiled core a PUCT simulation (a network evaluation and a rollout, driven from
# Python) costs about 70 of the core's MCTS simulations, and the core runs about 300,000 of
# those a second (benchmarks/decision_time.py); the order of the tables only needs it rough.
PUCT_COST = 70
# A simulation of the batched search on the network (pretrained+search: one leaf valued by the
# network in numpy, the tree in the core) costs about 60 (16 of them take about the time of
# mcts:1000, 4 and 2 players alike).
AZ_SEARCH_COST = 60
MCTS_SIMS_PER_SECOND = 300_000


def table_cost(specs: Sequence[str]) -> int:
    """A rough relative cost of one game of a table, in MCTS simulations of its search
    agents (a time budget counts as the simulations the core runs in that time)."""
    cost = 0
    for spec in specs:
        if spec.startswith(("mcts:", "puct:", "pretrained+puct:", "pretrained+search:",
                            "az+search:")):
            budget = spec.rsplit(":", 1)[1]
            if budget.isdigit():
                per_simulation = (1 if spec.startswith("mcts:") else PUCT_COST
                                  if spec.startswith(("puct:", "pretrained+puct:"))
                                  else AZ_SEARCH_COST)
                cost += int(budget) * per_simulation
            else:  # SECONDSs: the same time whatever the search
                cost += round(float(budget.removesuffix("s")) * MCTS_SIMS_PER_SECOND)
    return cost


def code_fingerprint() -> str:
    """Hash of what decides a ladder game: the agents' code and weights, the engine, and the
    compiled core (its Python side and its extension module)."""
    import moonriver_env.moonriver.core._core as extension_module

    digest = hashlib.sha256()
    paths = []
    for package in (agents_package, engine_package, core_package):
        root = os.path.dirname(package.__file__)
        paths += [(root, path) for path in sorted(glob.glob(os.path.join(root, "**", "*"),
                                                            recursive=True))
                  if path.endswith((".py", ".npz"))]
    extension = extension_module.__file__
    paths.append((os.path.dirname(extension), extension))
    for root, path in paths:
        digest.update(os.path.relpath(path, root).encode())
        with open(path, "rb") as fh:
            digest.update(fh.read())
    return digest.hexdigest()[:16]


def table_path(tables_dir: str, variant: str, t: int) -> str:
    """Where table ``t`` of ``variant`` is saved once played."""
    return os.path.join(tables_dir, f"{variant}_table{t:03d}.json")


class Task(NamedTuple):
    """One table to play: its agents, games and first seed, and where it is saved."""

    variant: str
    index: int
    specs: tuple[str, ...]
    games: int
    seed: int
    tables_dir: str
    fingerprint: str
    backend: str = DEFAULT_BACKEND


def records_dir(task: Task) -> str:
    """Where the games of ``task`` are recorded while it plays: the progress lines count them
    (the table's JSON keeps its outcomes; the folder goes once the table is saved)."""
    return os.path.join(task.tables_dir, PLAYING, f"{task.variant}_table{task.index:03d}")


def play_table(task: Task) -> dict[str, Any]:
    """Play one table (runs in a worker process), save it, and return its summary, outcomes,
    wall seconds and CPU seconds (of its worker process)."""
    start, start_cpu = time.perf_counter(), time.process_time()
    config = variant_config(task.variant)
    records = records_dir(task)
    shutil.rmtree(records, ignore_errors=True)  # an interrupted run's games of this table
    os.makedirs(records)
    result = run_tournament(list(task.specs), config.num_players, config.mode, task.games,
                            task.seed, 1, progress=False, records_dir=records,
                            backend=task.backend, config=config)
    seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    print(f"{task.variant} table {task.index}: {' '.join(task.specs)}: {task.games} games in "
          f"{seconds:.0f} s", file=sys.stderr, flush=True)
    table = {"agents": list(task.specs), "games": task.games, "seed": task.seed,
             "fingerprint": task.fingerprint, "backend": task.backend, "seconds": seconds,
             "cpu_seconds": cpu,
             "summary": [asdict(a) for a in result.agents], "outcomes": result.games}
    path = table_path(task.tables_dir, task.variant, task.index)
    atomic_save(path, lambda fh: fh.write(json.dumps(table).encode()))  # --resume reads it
    return table


def _play_numbered(item: tuple[int, Task]) -> tuple[int, dict[str, Any]]:
    """``play_table`` of a numbered task, the number returned with it (tables finish in
    any order)."""
    return item[0], play_table(item[1])


class Tally:
    """Games this run has played: those of its finished tables and those recorded so far by
    the tables still playing (the progress lines' count)."""

    def __init__(self, todo: list[Task]) -> None:
        self.todo, self.finished, self.lock = todo, set[Task](), threading.Lock()

    def finish(self, task: Task) -> None:
        """Count ``task`` as finished; its records go."""
        with self.lock:
            self.finished.add(task)
            shutil.rmtree(records_dir(task), ignore_errors=True)

    def count(self) -> tuple[int, str]:
        """Games played so far, and the tables finished in words."""
        with self.lock:
            games = sum(task.games for task in self.finished)
            for task in self.todo:
                if task not in self.finished:
                    with contextlib.suppress(OSError):  # not started yet
                        games += len(os.listdir(records_dir(task)))
            return games, f"{len(self.finished)}/{len(self.todo)} tables"


def saved_table(task: Task) -> dict[str, Any] | None:
    """The saved result of ``task`` when one with the same agents, games, seed, backend and
    code fingerprint exists, with all its games."""
    try:
        with open(table_path(task.tables_dir, task.variant, task.index), encoding="utf-8") as fh:
            table = json.load(fh)
    except (OSError, ValueError):
        return None
    wanted = (list(task.specs), task.games, task.seed, task.fingerprint, task.backend)
    same = ((table.get("agents"), table.get("games"), table.get("seed"),
             table.get("fingerprint"), table.get("backend", "python")) == wanted
            and len(table.get("outcomes", ())) == task.games)
    return table if same else None


def table_seed(seed: int, variant: str, t: int) -> int:
    """The first seed of table ``t`` of ``variant`` (its games take the next ones)."""
    return seed + VARIANT_STRIDE * VARIANTS.index(variant) + TABLE_STRIDE * t


def seed_problem(variant: str, pool_size: int, seat_games: int) -> str | None:
    """Why the seeds of a variant's tables would run into another table's or variant's, or
    None when they stay apart."""
    players = variant_config(variant).num_players
    tables = math.comb(pool_size, players)
    if tables > MAX_TABLES:
        return (f"{variant}: {pool_size} agents make {tables} tables of {players}; at most "
                f"{MAX_TABLES} keep every table's seeds apart (fewer budgets)")
    games = games_per_table(players, pool_size, seat_games)
    if games > TABLE_STRIDE:
        return (f"{variant}: {games} games per table; at most {TABLE_STRIDE} keep every "
                f"table's seeds apart (fewer --games)")
    return None


def ladder_tasks(pools: dict[str, list[str]], seat_games: int, seed: int, tables_dir: str,
                 backend: str = DEFAULT_BACKEND) -> list[Task]:
    """Every table of every variant, in the variants' order."""
    tasks, fingerprint = [], code_fingerprint()
    for variant, pool in pools.items():
        problem = seed_problem(variant, len(pool), seat_games)
        if problem is not None:
            raise ValueError(problem)
    for variant, pool in pools.items():
        players = variant_config(variant).num_players
        games = games_per_table(players, len(pool), seat_games)
        for t, specs in enumerate(itertools.combinations(pool, players)):
            tasks.append(Task(variant, t, specs, games, table_seed(seed, variant, t),
                              tables_dir, fingerprint, backend))
    return tasks


def play_tables(todo: list[Task], workers: int) -> list[dict[str, Any]]:
    """Play ``todo`` (over ``workers`` processes, which leave Ctrl-C to this one), with a
    progress line from the start and every ``EVERY`` seconds; on Ctrl-C the workers stop and
    the games of unfinished tables are removed (finished tables stay saved)."""
    if not todo:
        return []
    tally = Tally(todo)
    progress = Progress("ladder.py", sum(task.games for task in todo), "games")
    played: list[dict[str, Any]] = [{} for _ in todo]
    try:
        if workers == 1:
            with watching(progress, tally.count):
                for i, task in enumerate(todo):
                    played[i] = play_table(task)
                    tally.finish(task)
        else:
            with children_ignore_ctrl_c():
                processes = multiprocessing.get_context("spawn").Pool(workers)
            # leaving the block (at the end or on Ctrl-C) stops the workers
            with processes, watching(progress, tally.count):
                for i, table in processes.imap_unordered(_play_numbered, list(enumerate(todo)),
                                                         chunksize=1):
                    played[i] = table
                    tally.finish(todo[i])
    finally:
        shutil.rmtree(os.path.dirname(records_dir(todo[0])), ignore_errors=True)
    progress.update(*tally.count())
    return played


def run_ladder(pools: dict[str, list[str]], seat_games: int, seed: int, workers: int,
               tables_dir: str, resume: bool = False,
               backend: str = DEFAULT_BACKEND) -> list[dict[str, Any]]:
    """Play every table of every variant (tables spread over ``workers`` processes, the
    slowest first) on the ``backend`` implementation; with ``resume``, tables already saved
    in ``tables_dir`` are reused."""
    tasks = ladder_tasks(pools, seat_games, seed, tables_dir, backend)
    os.makedirs(tables_dir, exist_ok=True)
    saved = {task: table for task in tasks
             if resume and (table := saved_table(task)) is not None}
    todo = sorted((task for task in tasks if task not in saved),
                  key=lambda task: -task.games * table_cost(task.specs))
    if saved:
        print(f"reusing {len(saved)} saved tables of {len(tasks)}", file=sys.stderr)
    print(f"ladder.py: {sum(task.games for task in todo):,} games in {len(todo)} tables of "
          f"{' '.join(pools)} on {workers} worker(s), a progress line every {EVERY:g} s; "
          "Ctrl-C stops, the finished tables stay saved (--resume reuses them)",
          file=sys.stderr, flush=True)
    played = play_tables(todo, workers)
    tables = {**saved, **dict(zip(todo, played, strict=True))}
    runs = []
    for variant, pool in pools.items():
        mine = [task for task in tasks if task.variant == variant]
        outcomes = []
        for task in mine:
            seats = [pool.index(spec) for spec in task.specs]  # table seat -> pool index
            for o in tables[task].pop("outcomes"):
                outcomes.append({**o, "lineup": [seats[a] for a in o["lineup"]],
                                 "table": task.index})
        outcomes.sort(key=lambda o: (o["game"], o["table"]))
        config = variant_config(variant)
        runs.append({"variant": variant, "players": config.num_players, "mode": config.mode,
                     "scenario": config.scenario, "agents": pool,
                     "tables": [tables[task] for task in mine],
                     "summary": [asdict(a) for a in summarise(pool, outcomes)],
                     "head_to_head": head_to_head(pool, outcomes),
                     "reused": sum(task in saved for task in mine)})
    return runs


def head_to_head(pool: list[str], outcomes: list[dict[str, Any]]) -> dict[str, dict[str, list]]:
    """For each row and column agent: [games where the row finished ahead (a tie counts
    half), games they played together]. Ahead means a winner against a non-winner, otherwise
    the higher score."""
    out = {a: {b: [0.0, 0] for b in pool if b != a} for a in pool}
    for o in outcomes:
        keys = [(p in o["winners"], score) for p, score in enumerate(o["scores"])]
        for p, q in itertools.permutations(range(len(keys)), 2):
            a, b = pool[o["lineup"][p]], pool[o["lineup"][q]]
            if a != b:
                cell = out[a][b]
                cell[0] += 1.0 if keys[p] > keys[q] else 0.5 if keys[p] == keys[q] else 0.0
                cell[1] += 1
    return out


def games_per_table(players: int, pool_size: int, seat_games: int) -> int:
    """Games of each table that give every agent at least ``seat_games`` seat-games."""
    if pool_size < players:
        raise ValueError(f"a {players}-player ladder needs at least {players} agents")
    return math.ceil(seat_games / math.comb(pool_size - 1, players - 1))


def estimate(run: dict[str, Any], target: int, key: str = "seconds") -> tuple[int, float]:
    """Games per table for every agent to reach ``target`` seat-games, and their minutes of
    one worker at this run's pace (``key``: "seconds" for wall time, "cpu_seconds" for CPU)."""
    per_table = games_per_table(run["players"], len(run["agents"]), target)
    seconds = sum(t.get(key, math.nan) / t["games"] for t in run["tables"]) * per_table
    return per_table, seconds / 60


def markdown(runs: list[dict[str, Any]], args: argparse.Namespace, notes: list[str],
             elapsed: float, reused: int = 0, host: dict[str, Any] | None = None) -> str:
    """The generated ladder section of docs/results.md (``reused``: tables taken from an
    earlier run by ``--resume``, whose wall time this run does not know; ``host``: the CPU
    model and the load averages before and after, when known)."""
    total = sum(len(r["tables"]) for r in runs)
    wall = (f"all {total} tables reused with `--resume`" if reused == total else
            f"{reused} tables reused with `--resume`, {elapsed / 60:.1f} min wall for the rest"
            if reused else f"{elapsed / 60:.1f} min wall")
    tables = [t for r in runs for t in r["tables"]]
    cpu = (f", {sum(t['cpu_seconds'] for t in tables) / 60:.1f} CPU-minutes"
           if all("cpu_seconds" in t for t in tables) else "")
    where = f"{args.workers} worker(s) of a {os.cpu_count()}-CPU machine"
    if host:
        where += (f" ({host['cpu_model']}; 1-minute load average {host['load_before']:.1f} "
                  f"before, {host['load_after']:.1f} after)")
    lines = [f"Generated by `{command(args)}` on {time.strftime('%Y-%m-%d')} "
             f"({wall}; the tables' recorded times add up to "
             f"{sum(t['seconds'] for t in tables) / 60:.1f} worker-minutes{cpu} on {where}; "
             f"games played by the `{args.backend}` backend).", "",
             "Every combination of agents of a variant's pool plays one table of that variant, "
             f"seats rotated, so that every agent plays at least {args.games} seat-games; win "
             "rates pool each agent's "
             "seat-games over all its tables (a seat-game won counts 1, a shared win 1/k), "
             "ratings are openskill Plackett-Luce ordinals (mu - 3 sigma) over all games. "
             "Chance is 1/players per seat-game. `pretrained` is the one network for every "
             "variant, `pretrained+search:N` its batched search with N simulations a decision; "
             "`pretrained:4p-base` and `pretrained:2p-base` are the PPO recipe's weights, alone "
             "or as the prior of `pretrained+puct:VARIANT:N`, and play only their own variant.",
             ""]
    lines += [f"- {n}" for n in notes]
    if notes:
        lines.append("")
    for run in runs:
        rows = sorted(run["summary"], key=lambda a: -a["rating"])
        lines += [f"### {run['variant']}: {variant_title(run['variant'])} "
                  f"({len(run['tables'])} tables)", "",
                  "| agent | seat-games | win rate | 95% CI | mean score | mean margin "
                  "| openskill ordinal (mu ± sigma) |", "|---|---|---|---|---|---|---|"]
        for a in rows:
            lines.append(f"| {a['name']} | {a['games']} | {a['win_rate']:.3f} | "
                         f"{a['win_ci_low']:.3f}-{a['win_ci_high']:.3f} | "
                         f"{a['mean_score']:.1f} | {a['mean_margin']:+.1f} | "
                         f"{a['rating']:.2f} ({a['rating_mu']:.1f} ± {a['rating_sigma']:.1f}) |")
        lines.append("")
        h2h, names = run["head_to_head"], [a["name"] for a in rows]
        what = ("row's win rate against column" if run["players"] == 2 else
                "share of their games together in which the row finished ahead of the column")
        lines += [f"Head to head ({what}, 95% CI):", "",
                  "| | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        for r in names:
            cells = []
            for c in names:
                ahead, games = h2h[r].get(c, (0.0, 0))
                low, high = wilson_interval(ahead, games)
                cells.append(f"{ahead / games:.2f} ({low:.2f}-{high:.2f})" if games else "")
            lines.append(f"| {r} | " + " | ".join(cells) + " |")
        lines.append("")
        per_table, minutes = estimate(run, 1000)
        cpu_minutes = estimate(run, 1000, "cpu_seconds")[1]
        slowest = max(run["tables"], key=lambda t: t["seconds"] / t["games"])
        lines += [f"Wall time ({run['variant']}, the tables' recorded times): one game of every "
                  "table "
                  f"{sum(t['seconds'] / t['games'] for t in run['tables']):.1f} s in all, "
                  f"slowest table {' '.join(slowest['agents'])} "
                  f"{slowest['seconds'] / slowest['games']:.2f} s per game. "
                  f"`--games 1000` plays {per_table} games per table, about {minutes:.0f} min "
                  f"of one worker at that pace"
                  + (f" ({cpu_minutes:.0f} CPU-minutes)." if math.isfinite(cpu_minutes)
                     else "."), ""]
    return "\n".join(lines).rstrip() + "\n"


def summary_markdown(runs: list[dict[str, Any]], args: argparse.Namespace) -> str:
    """The README's ladder table: an agent a row (a variant's name in it as VARIANT), a column
    per variant, rows in the first variant's rating order."""
    cells: dict[str, dict[str, str]] = {}
    order: dict[str, float] = {}
    for run in runs:
        for a in run["summary"]:
            name = a["name"].replace(run["variant"], "VARIANT")
            cells.setdefault(name, {})[run["variant"]] = f"{a['win_rate']:.2f} ({a['rating']:.1f})"
            order.setdefault(name, -a["rating"])
    variants = [run["variant"] for run in runs]
    least = min(a["games"] for run in runs for a in run["summary"])
    lines = [f"Ladder (`{command(args)}`, details in `docs/results.md`): pooled win rate "
             f"(openskill ordinal) of each agent over at least {least} seat-games per variant; "
             "PUCT and the PPO weights play only their own base game.", "",
             f"| agent | {' | '.join(variants)} |", "|---" * (len(variants) + 1) + "|"]
    lines += [f"| {name} | {' | '.join(cells[name].get(v, '') for v in variants)} |"
              for name in sorted(cells, key=order.__getitem__)]
    return "\n".join(lines) + "\n"


def replace_between(path: str, markers: tuple[str, str], text: str) -> None:
    """Replace what lies between two marker lines of a file; missing markers are an error."""
    with open(path, encoding="utf-8") as fh:
        content = fh.read()
    start, end = content.find(markers[0]), content.find(markers[1])
    if start < 0 or end < start:
        raise SystemExit(f"ladder.py: error: {path} has no {markers[0]} ... {markers[1]} "
                         f"section to replace")
    head = content[:start + len(markers[0])]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(head + "\n" + text + content[end:])


def ladder_variant(text: str) -> str:
    """An argparse type: a variant name the ladder plays (a clear one-line error otherwise)."""
    if text not in VARIANTS:
        raise argparse.ArgumentTypeError(
            f"unknown variant {text!r:.40}; allowed: NP-base or NP-legends-S with N 2-4 and "
            f"S 1-4 ({', '.join(VARIANTS)})")
    return text


def command(args: argparse.Namespace) -> str:
    """The command line that reproduces this run."""
    parts = ["python benchmarks/ladder.py", f"--games {args.games}", f"--seed {args.seed}",
             "--variants " + " ".join(args.variants), "--mcts " + " ".join(map(str, args.mcts)),
             "--search " + " ".join(args.search),
             "--az-search " + " ".join(map(str, args.az_search)), f"--workers {args.workers}"]
    if args.backend != "core":
        parts.append(f"--backend {args.backend}")
    return " ".join(parts) + (" --write" if args.write else "")


@main_of("ladder.py")
def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(prog="ladder.py", description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=integer_at_least(1), default=1000,
                        help="seat-games per agent (tables rounded up to whole games)")
    parser.add_argument("--seed", type=int, default=4_000_000_000,
                        help="first seed (see the seeds of each table above; training games "
                             "use seeds below 1e9)")
    parser.add_argument("--mcts", type=integer_at_least(1), nargs="+", default=[20, 100, 1000],
                        metavar="SIMS", help="the MCTS budgets (simulations), one agent each")
    parser.add_argument("--search", nargs="+", default=["30", "12"], metavar="BUDGET",
                        help="the budgets of pretrained+puct:VARIANT (or puct), one agent each, "
                             "in the variants with PPO weights (4p-base, 2p-base): SIMS or "
                             "SECONDSs (on the core, pretrained+puct:12 takes about the time of "
                             "mcts:1000 per decision; see benchmarks/decision_time.py)")
    parser.add_argument("--az-search", type=integer_at_least(1), nargs="+", default=[160],
                        metavar="SIMS",
                        help="the simulations of pretrained+search (the one network's batched "
                             "search), one agent each (on the core, 160 take about the time of "
                             "mcts:1000 per decision at tables of 3 and 4, under half at 2)")
    parser.add_argument("--variants", nargs="+", default=list(DEFAULT_VARIANTS),
                        metavar="VARIANT", type=ladder_variant,
                        help="the variants, one ladder each: NP-base or NP-legends-S (N "
                             "players 2-4, Legends scenario S 1-4; default: "
                             f"{' '.join(DEFAULT_VARIANTS)})")
    parser.add_argument("--workers", type=integer_at_least(1), default=1,
                        help="worker processes, each playing whole tables")
    parser.add_argument("--out", default="runs/ladder/ladder.json", help="JSON results")
    parser.add_argument("--resume", action="store_true",
                        help="reuse the tables an interrupted run saved next to --out")
    parser.add_argument("--write", action="store_true",
                        help="update the ladder sections of docs/results.md and README.md")
    parser.add_argument("--backend", choices=BACKENDS, default=DEFAULT_BACKEND,
                        help="implementation that plays the games: core (compiled) or python "
                             "(the reference engine); the same games, other times (default: "
                             "%(default)s, or $MOONRIVER_BACKEND)")
    args = parser.parse_args(argv)
    for budget in args.search:
        try:
            make_agent(f"puct:{budget}")
        except ValueError as exc:
            parser.error(f"--search: {exc}")
    for sims in args.az_search:
        if sims > MAX_SIMULATIONS:
            parser.error(f"--az-search: expected simulations from 1 to {MAX_SIMULATIONS}, "
                         f"got {sims}")
    for flag, budgets in (("--mcts", args.mcts), ("--search", args.search),
                          ("--az-search", args.az_search), ("--variants", args.variants)):
        twice = sorted({b for b in budgets if budgets.count(b) > 1}, key=str)
        if twice:
            what = "variants" if flag == "--variants" else "budgets"
            parser.error(f"{flag}: the {what} must differ, got {twice[0]} twice")
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")  # workers play one game each: no BLAS threads
    pools, notes = {}, []
    for variant in args.variants:
        pools[variant], note = pool_for(variant, tuple(args.mcts), args.search,
                                        tuple(args.az_search))
        if note:
            notes.append(f"{variant}: {note}")
        try:
            problem = seed_problem(variant, len(pools[variant]), args.games)
        except ValueError as exc:  # fewer agents than seats
            problem = f"{variant}: {exc}"
        if problem is not None:
            parser.error(problem)
    load_before, start = os.getloadavg()[0], time.perf_counter()
    tables_dir = os.path.join(os.path.dirname(os.path.abspath(args.out)), "tables")
    try:
        runs = run_ladder(pools, args.games, args.seed, args.workers, tables_dir, args.resume,
                          args.backend)
    except KeyboardInterrupt:
        tasks = ladder_tasks(pools, args.games, args.seed, tables_dir, args.backend)
        kept = sum(saved_table(task) is not None for task in tasks)
        print(f"ladder.py: interrupted (Ctrl-C); {kept} of {len(tasks)} tables saved in "
              f"{tables_dir}, reused by the same command with --resume", file=sys.stderr,
              flush=True)
        return INTERRUPTED
    elapsed = time.perf_counter() - start
    host = {"cpu_model": machine()["cpu_model"], "load_before": load_before,
            "load_after": os.getloadavg()[0]}
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump({"command": command(args), "elapsed_s": elapsed, "notes": notes,
                   "host": host, "runs": runs}, fh, indent=1)
    section = markdown(runs, args, notes, elapsed, sum(r["reused"] for r in runs), host)
    print(section)
    print(summary_markdown(runs, args))
    if args.write:
        replace_between("docs/results.md", MARKERS, section)
        replace_between("README.md", SUMMARY_MARKERS, summary_markdown(runs, args))
    print(json.dumps({"command": command(args), "notes": notes, "ladder": {
        r["variant"]: {a["name"]: {"win_rate": round(a["win_rate"], 4),
                                   "ci": [round(a["win_ci_low"], 4), round(a["win_ci_high"], 4)],
                                   "rating": round(a["rating"], 3), "games": a["games"]}
                       for a in r["summary"]} for r in runs},
                      "wall_s": round(elapsed, 1),
                      "cpu_s": round(sum(t.get("cpu_seconds", 0.0) for r in runs
                                         for t in r["tables"]), 1),
                      "machine": machine()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
