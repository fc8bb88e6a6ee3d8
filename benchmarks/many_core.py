"""One command for a machine with many cores: build the project, then its scaling table.

Threads (powers of two up to ``os.cpu_count()``, and the count itself) x batch sizes (64, 256,
1024, 4096) x observations (float32 and compact), measured by benchmarks/vector_throughput.py
(every seat a learner, random legal actions drawn in the core) with PettingZoo's tictactoe_v3
in the same run. Prints the machine, one table per observation kind (agent-steps/s and the
speed-up over one thread at the same size), and ends with one JSON line.

The build: with a Python that already imports the compiled core (the project's venv), that
one is measured as it is; otherwise, or with ``--build``, a virtual environment is made at
``--venv`` (default ``.venv-many-core`` in the repository), the repository is pip-installed
into it (``.[bench]`` with constraints.txt; the C++ core compiled with every core), and
this script runs again under it. Building needs a C++ compiler, Python's headers and the
package index (or a local mirror that pip is set up for).

    python benchmarks/many_core.py [--build] [--venv DIR] [--seconds 2] [--rounds 5]
                                   [--sizes 64,256,1024,4096] [--max-threads N] [--players 4]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import signal
import subprocess
import sys
from typing import Any

from machine import machine  # this script's directory is on sys.path
from progress import main_of

REPO = pathlib.Path(__file__).resolve().parents[1]
OBSERVATIONS = ("float32", "compact")


def _core_importable() -> bool:
    """Whether this interpreter imports the project's compiled core."""
    try:
        from moonriver_env.moonriver.core import _core  # noqa: F401
    except ImportError:
        return False
    return True


def build(venv: pathlib.Path) -> pathlib.Path:
    """Make ``venv`` (if missing) and pip-install the repository into it; its python."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    jobs = str(os.cpu_count() or 1)
    env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": jobs, "MAKEFLAGS": f"-j{jobs}"}
    subprocess.run([str(python), "-m", "pip", "install", "-q", "-c",
                    str(REPO / "constraints.txt"), f"{REPO}[bench]"], check=True, env=env)
    return python


def thread_counts(max_threads: int) -> list[int]:
    """1, 2, 4, ... up to ``max_threads``, and ``max_threads`` itself."""
    counts = [1]
    while counts[-1] * 2 <= max_threads:
        counts.append(counts[-1] * 2)
    return counts if counts[-1] == max_threads else [*counts, max_threads]


def scaling(results: dict[str, dict[str, float]], threads: list[int], sizes: list[int],
            observation: str) -> dict[str, dict[str, float]]:
    """Per size: each thread count's agent-steps/s and its ratio to one thread's."""
    suffix = "-compact" if observation == "compact" else ""
    table: dict[str, dict[str, float]] = {}
    for size in sizes:
        one = results[f"t1-b{size}{suffix}"]["agent_steps_per_s"]
        for t in threads:
            rate = results[f"t{t}-b{size}{suffix}"]["agent_steps_per_s"]
            table[f"t{t}-b{size}"] = {"agent_steps_per_s": rate,
                                      "vs_one_thread": round(rate / one, 2)}
    return table


def print_scaling(table: dict[str, dict[str, float]], threads: list[int], sizes: list[int],
                  observation: str) -> None:
    """Threads down, sizes across: agent-steps/s (speed-up over one thread)."""
    print(f"\n{observation}: agent-steps/s (x one thread at that size)")
    print(f"{'threads':>7} " + " ".join(f"{f'{s} games':>22}" for s in sizes))
    for t in threads:
        cells = (table[f"t{t}-b{s}"] for s in sizes)
        print(f"{t:>7} " + " ".join(f"{c['agent_steps_per_s']:>13,} ({c['vs_one_thread']:>5.2f}x)"
                                    for c in cells))


@main_of("many_core.py")
def main() -> None:
    """Build (or take the current venv), measure, print the tables and one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="store_true",
                        help="build into --venv even when this Python has the core")
    parser.add_argument("--venv", type=pathlib.Path, default=REPO / ".venv-many-core")
    parser.add_argument("--built", default=None, help=argparse.SUPPRESS)  # set on the re-run
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="seconds per configuration in all")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--sizes", default="64,256,1024,4096",
                        help="comma-separated batch sizes")
    parser.add_argument("--max-threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    args = parser.parse_args()
    sizes = _sizes(parser, args.sizes)
    if args.max_threads < 1:
        parser.error(f"--max-threads must be >= 1, got {args.max_threads}")
    if args.built is None and (args.build or not _core_importable()):
        python = build(args.venv)
        rest = [a for a in sys.argv[1:] if a != "--build"]
        rerun = subprocess.Popen([str(python), __file__, *rest, "--built", str(args.venv)])
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the re-run answers Ctrl-C, in one line
        sys.exit(rerun.wait())
    run(args, sizes, build_used=args.built or f"current ({sys.executable})")


def _sizes(parser: argparse.ArgumentParser, text: str) -> list[int]:
    try:
        sizes = [int(s) for s in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        parser.error(f"--sizes: a comma-separated list of positive ints, got {text!r}")
    return sizes


def run(args: argparse.Namespace, sizes: list[int], build_used: str) -> None:
    """Measure every configuration, print the machine and the tables, end with JSON."""
    from vector_throughput import measure

    threads = thread_counts(args.max_threads)
    info = machine()
    print(f"machine: {info['cpu_model']}, {info['cpus']} CPUs, load "
          f"{info['load_average_1min']}; build: {build_used}")
    results = measure(sizes, threads, list(OBSERVATIONS), args.players, args.seconds,
                      args.rounds, show=False)
    print(f"tictactoe_v3: {results['tictactoe_v3']['agent_steps_per_s']:,} agent-steps/s "
          "(PettingZoo AEC, random masked play, same run)")
    tables: dict[str, Any] = {}
    for kind in OBSERVATIONS:
        tables[kind] = scaling(results, threads, sizes, kind)
        print_scaling(tables[kind], threads, sizes, kind)
    print(json.dumps({"benchmark": "many_core", "build": build_used, "players": args.players,
                      "threads": threads, "sizes": sizes, "seconds": args.seconds,
                      "rounds": args.rounds, "scaling": tables, "results": results,
                      "machine": machine()}))


if __name__ == "__main__":
    raise SystemExit(main())
