"""``moonriver-train-pipeline``: every step of a shipped network from one TOML file.

See docs/training.md ("The shipped network: one command")."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from typing import Any

from moonriver_env.training.atomic import atomic_save, atomic_text, sha256
from moonriver_env.training.fast.rollout import TRAINING_SEEDS

from moonriver_env.common.cli import CLIError, cli_main

PROG = "moonriver-train-pipeline"
STEP_FILE = "step.json"
AGENT_FILE = "agent.npz"
RESUME_FILE = "resume.pt"
# glibc's allocator in the steps' processes keeps freed memory and serves large arrays from it,
# so each PPO iteration's batches reuse pages instead of faulting in fresh ones; only where
# memory comes from changes, not the weights (measured: docs/research-log.md, "Kept: the
# allocator keeps freed memory"). A value already in the environment is kept.
HEAP_SETTINGS = {"MALLOC_MMAP_THRESHOLD_": str(2**32), "MALLOC_TRIM_THRESHOLD_": str(2**34),
                 "MALLOC_TOP_PAD_": str(2**29)}

# What each kind of step runs and writes: module, product, whether it resumes, its keys
# (init, league, warm_start, expert, base, from: earlier steps' names; set: settings given
# as flags).
KINDS: dict[str, tuple[str, str, bool, frozenset[str]]] = {
    "fast": ("moonriver_env.training.fast.train", "final.pt", True,
             frozenset({"config", "set", "init", "league"})),
    "az": ("moonriver_env.training.az.train", "az.npz", True,
           frozenset({"config", "set", "warm_start", "expert"})),
    "soup": ("moonriver_env.training.soup", "final.pt", False, frozenset({"from"})),
    "export": ("moonriver_env.training.export_weights", "agent.npz", False,
               frozenset({"from"})),
    "fold": ("moonriver_env.training.az.fold", "az.npz", False,
             frozenset({"base", "from", "set"})),
}


@dataclass(frozen=True)
class Step:
    """One step: its name, kind, config file (absolute) and the steps it reads."""

    name: str
    run: str
    config: str = ""
    inputs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    settings: dict[str, str | int | float | bool] = field(default_factory=dict)

    @property
    def product(self) -> str:
        """The file name of what this step writes."""
        return KINDS[self.run][1]


@dataclass(frozen=True)
class Pipeline:
    """The steps in order, the step whose product is the agent, and where ``--ship`` puts it."""

    steps: tuple[Step, ...]
    agent: str
    ship: str = ""

    @property
    def steps_by_name(self) -> dict[str, Step]:
        """Each step under its name."""
        return {step.name: step for step in self.steps}


def _strings(where: str, value: Any) -> tuple[str, ...]:
    """A step name or a list of them, as a tuple."""
    names = (value,) if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or not names or not all(
            isinstance(name, str) and name for name in names):
        raise CLIError(f"{where}: expected a step name or a list of step names, got {value!r}")
    return tuple(names)


def _step(raw: Any, index: int, folder: str, earlier: dict[str, Step]) -> Step:
    """One ``[[step]]`` table, checked: its kind, keys, config file and inputs."""
    if not isinstance(raw, dict):
        raise CLIError(f"step {index + 1}: expected a table, got {raw!r}")
    name, run = raw.get("name"), raw.get("run")
    if not isinstance(name, str) or not name.replace("_", "").replace("-", "").isalnum():
        raise CLIError(f"step {index + 1}: name must be letters, digits, '-' or '_', got {name!r}")
    if name in earlier:
        raise CLIError(f"step {name!r}: the name is used twice")
    if run not in KINDS:
        raise CLIError(f"step {name!r}: run must be one of {sorted(KINDS)}, got {run!r}")
    allowed = KINDS[run][3] | {"name", "run"}
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise CLIError(f"step {name!r}: unknown keys {unknown}; a {run} step takes "
                       f"{sorted(allowed)}")
    config = ""
    if "config" in allowed:
        if not isinstance(raw.get("config"), str):
            raise CLIError(f"step {name!r}: a {run} step needs config = \"FILE\"")
        config = os.path.normpath(os.path.join(folder, raw["config"]))
        if not os.path.isfile(config):
            raise CLIError(f"step {name!r}: no config file {config}")
    elif "from" not in raw:
        raise CLIError(f"step {name!r}: a {run} step needs from = step name(s)")
    if "base" in allowed and "base" not in raw:
        raise CLIError(f"step {name!r}: a {run} step needs base = step name")
    inputs = {key: _strings(f"step {name!r}: {key}", raw[key])
              for key in ("init", "league", "warm_start", "expert", "base", "from")
              if key in raw}
    for key in ("init", "warm_start", "expert", "base"):
        if len(inputs.get(key, ())) > 1:
            raise CLIError(f"step {name!r}: {key} names one step, got {list(inputs[key])}")
    for key, names in inputs.items():
        missing = [other for other in names if other not in earlier]
        if missing:
            raise CLIError(f"step {name!r}: {key} names {missing}, which are not earlier steps")
    settings = raw.get("set", {})
    if not isinstance(settings, dict) or not all(
            isinstance(value, str | int | float | bool) for value in settings.values()):
        raise CLIError(f"step {name!r}: set must be a table of settings (strings, numbers, "
                       f"booleans), got {settings!r}")
    if run == "fold":
        _check_fold(name, inputs, settings, earlier)
    return Step(name, run, config, inputs, settings)


def _check_fold(name: str, inputs: dict[str, tuple[str, ...]],
                settings: dict[str, Any], earlier: dict[str, Step]) -> None:
    """A fold step's inputs are distinct search-recipe networks; its one setting is the rank."""
    base, sources = inputs["base"][0], inputs["from"]
    not_az = [other for other in (base, *sources) if earlier[other].product != "az.npz"]
    if not_az:
        raise CLIError(f"step {name!r}: base and from name az or fold steps (search-recipe "
                       f"networks), got {not_az}")
    if base in sources or len(set(sources)) != len(sources):
        raise CLIError(f"step {name!r}: from names each specialist once and not the base, "
                       f"got base {base!r}, from {list(sources)}")
    if set(settings) - {"rank"} or not all(
            isinstance(value, int) and not isinstance(value, bool)
            for value in settings.values()):
        raise CLIError(f"step {name!r}: a fold step's set takes rank = an integer, got "
                       f"{settings!r}")


def load_pipeline(path: str) -> Pipeline:
    """Read and check a pipeline file; every problem is a one-line ``CLIError``."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CLIError(f"{path}: {exc}") from exc
    unknown = sorted(set(data) - {"step", "agent", "ship"})
    if unknown:
        raise CLIError(f"{path}: unknown keys {unknown}; allowed: agent, ship, [[step]]")
    folder, steps, names = os.path.dirname(os.path.abspath(path)), [], dict[str, Step]()
    for index, raw in enumerate(data.get("step", [])):
        step = _step(raw, index, folder, names)
        steps.append(step)
        names[step.name] = step
    if not steps:
        raise CLIError(f"{path}: no [[step]] tables")
    agent = data.get("agent", steps[-1].name)
    if agent not in names:
        raise CLIError(f"{path}: agent = {agent!r} is not a step")
    ship = data.get("ship", "")
    if not isinstance(ship, str):
        raise CLIError(f"{path}: ship must be a path, got {ship!r}")
    return Pipeline(tuple(steps), agent, os.path.normpath(os.path.join(folder, ship)) if ship
                    else "")


def finished(folder: str, step: Step) -> bool:
    """Whether ``step`` has finished in ``folder``: its record names its product's hash."""
    try:
        with open(os.path.join(folder, STEP_FILE), encoding="utf-8") as fh:
            record = json.load(fh)
        return bool(record.get("sha256") == sha256(os.path.join(folder, step.product)))
    except (OSError, ValueError, AttributeError):
        return False


def command(step: Step, folder: str, products: dict[str, str]) -> list[str]:
    """The command line that runs (or resumes) ``step`` in ``folder``."""
    module, product, resumes, _ = KINDS[step.run]
    head = [sys.executable, "-m", module]
    sources = [products[name] for name in step.inputs.get("from", ())]
    out = os.path.join(folder, product)
    if step.run == "fold":
        return [*head, out, products[step.inputs["base"][0]], *sources, *_flags(step.settings)]
    if step.run in ("soup", "export"):
        if step.run == "export" and len(sources) != 1:
            raise CLIError(f"step {step.name!r}: an export step takes one step, got {sources}")
        return head + ([out, *sources] if step.run == "soup" else [sources[0], out])
    if resumes and os.path.isfile(os.path.join(folder, RESUME_FILE)):
        return [*head, "--resume", folder]
    args = [*head, "--config", step.config, "--out", folder]
    for key, names in step.inputs.items():
        args += [_flag(key), *(products[name] for name in names)]
    return args + _flags(step.settings)


def _flags(settings: dict[str, str | int | float | bool]) -> list[str]:
    """A step's ``set`` table as command-line flags."""
    args: list[str] = []
    for key, value in settings.items():
        if isinstance(value, bool):
            args.append(_flag(key) if value else _flag(f"no_{key}"))
        else:
            args += [_flag(key), str(value)]
    return args


def _flag(key: str) -> str:
    """A setting's command-line flag (``bc_iterations`` -> ``--bc-iterations``)."""
    return "--" + key.replace("_", "-")


def run_pipeline(pipeline: Pipeline, out: str, ship: bool = False,
                 quiet: bool = False) -> str:
    """Run every unfinished step in order; returns the agent's path (``OUT/agent.npz``)."""
    products: dict[str, str] = {}
    for number, step in enumerate(pipeline.steps, 1):
        folder = os.path.join(out, step.name)
        products[step.name] = os.path.join(folder, step.product)
        head = f"{PROG}: step {number}/{len(pipeline.steps)} {step.name} ({step.run})"
        if finished(folder, step):
            print(f"{head}: finished before, skipped", flush=True)
            continue
        os.makedirs(folder, exist_ok=True)
        args = command(step, folder, products)
        if quiet and step.run == "fast":
            args.append("--quiet")
        print(f"{head}: {shlex.join(args[1:])}", flush=True)
        status = _wait(subprocess.Popen(args, env=step_environment()))
        if status != 0:
            raise StepFailed(step.name, status)
        atomic_text(os.path.join(folder, STEP_FILE), json.dumps(
            {"step": step.name, "product": step.product,
             "sha256": sha256(products[step.name])}) + "\n")
    agent = os.path.join(out, AGENT_FILE)
    source = products[pipeline.agent]
    atomic_save(agent, lambda fh: _copy(source, fh))
    if ship and pipeline.ship:
        os.makedirs(os.path.dirname(pipeline.ship) or ".", exist_ok=True)
        atomic_save(pipeline.ship, lambda fh: _copy(source, fh))
        print(f"{PROG}: shipped {pipeline.ship}", flush=True)
    return agent


def step_environment() -> dict[str, str]:
    """A step's environment: this one's, with ``HEAP_SETTINGS`` where it sets none of its own."""
    return {**HEAP_SETTINGS, **os.environ}


def _wait(proc: subprocess.Popen[bytes]) -> int:
    """The step's exit status; a Ctrl-C (the step gets it too) waits for the step to stop."""
    interrupted = False
    while True:
        try:
            status = proc.wait()
            break
        except KeyboardInterrupt:
            interrupted = True
    if interrupted:
        raise KeyboardInterrupt
    return status


def _copy(source: str, fh: Any) -> None:
    """Copy ``source``'s bytes into the open file ``fh``."""
    with open(source, "rb") as src:
        shutil.copyfileobj(src, fh)


class StepFailed(CLIError):
    """A step's command exited with an error (it printed its own message)."""

    def __init__(self, step: str, status: int) -> None:
        super().__init__(step, status)
        self.step, self.status = step, status

    def __str__(self) -> str:
        return (f"step {self.step!r} stopped (exit status {self.status}); rerun the same "
                f"command to continue from it")


def build_parser() -> argparse.ArgumentParser:
    """The command line: the pipeline file, ``--out``, ``--ship``, ``--quiet``."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("pipeline", help="TOML file of steps "
                                         "(training/pipelines/pretrained.toml)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="folder of the steps' runs (one folder a step) and agent.npz")
    parser.add_argument("--ship", action="store_true",
                        help="also write the agent to the pipeline's ship path (default: off)")
    parser.add_argument("--quiet", action="store_true",
                        help="no per-iteration progress lines from the trainers (default: off)")
    parser.add_argument("--debug", action="store_true", help="full tracebacks (default: off)")
    return parser


@cli_main(PROG)
def main(argv: list[str] | None = None) -> int:
    """CLI entry point (``moonriver-train-pipeline``)."""
    args = build_parser().parse_args(argv)
    pipeline = load_pipeline(args.pipeline)
    try:
        agent = run_pipeline(pipeline, args.out, ship=args.ship, quiet=args.quiet)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; continue with the same command", file=sys.stderr)
        return 130
    print(f"{PROG}: wrote the agent {agent}", flush=True)
    steps = pipeline.steps_by_name
    made = steps[pipeline.agent]  # the step whose product is the agent
    spec = ("az:" if made.product == "az.npz" else "pretrained:") + agent
    print(f"measure it: moonriver-eval --agents {shlex.quote(spec)} "
          f"greedy greedy greedy --players 4 --games 1000 --seed {TRAINING_SEEDS} --workers 2",
          flush=True)
    folded = [str(steps[name].settings.get("variants", "")) for name in
              made.inputs.get("from", ())] if made.run == "fold" else []
    if folded and all(folded):  # the variants its adapters change, as the pipeline sets them
        print(f"and where its adapters play: python benchmarks/variants.py --agent "
              f"{shlex.quote(spec)} --variants {' '.join(folded)} --games 1000 --workers 2",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
