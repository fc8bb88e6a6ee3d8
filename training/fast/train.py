"""The fast recipe: imitation of GreedyAgent, then PPO against Greedy, itself and snapshots.

See docs/training.md (the fast recipe)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import Field, asdict, fields
from typing import Any

from moonriver_env.training.fast.config import LOCKED_ON_RESUME, SETTINGS, FastConfig
from moonriver_env.training.fast.rollout import TRAINING_SEEDS
from moonriver_env.training.fast.runner import (
    AGENT_FILE,
    CONFIG_FILE,
    PROG,
    PROGRESS_SECONDS,
    RESUME_FILE,
    Progress,
    Runner,
    check_fresh,
    load_resume,
    resume_path,
)
from moonriver_env.training.policy_net import RanchNet
from moonriver_env.training.settings import add_setting_flags
from moonriver_env.training.variants import variant_list

from moonriver_env.common.cli import ArgumentParser, CLIError, cli_main


def _shown(value: Any) -> str:
    """A default as the help text shows it (TOML spelling)."""
    if isinstance(value, bool | tuple) or value == "":
        return json.dumps(value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def _metavar(f: Field[Any]) -> dict[str, Any]:
    """A setting flag's metavar: N, X, NAME (lists), DIR, FILE or the setting's name."""
    return {"metavar": {"int": "N", "float": "X", "tuple[str, ...]": "NAME"}.get(str(f.type))
            or {"out": "DIR", "init": "FILE"}.get(f.name, f.name.upper())}


def train(cfg: FastConfig, state: dict[str, Any] | None = None, *, quiet: bool = False,
          on_iteration: Callable[[Runner], None] | None = None) -> RanchNet:
    """Run the whole recipe (or the rest of a saved run); Ctrl-C saves ``resume.pt``, re-raised."""
    progress = None if quiet else Progress(cfg)
    with Runner(cfg, state, progress=progress, on_iteration=on_iteration) as runner:
        try:
            runner.run()
        except KeyboardInterrupt:
            runner.write_resume()  # then leaving the block stops the workers
            raise
    return runner.net


def build_parser() -> argparse.ArgumentParser:
    """The CLI: one flag per FastConfig setting, plus --config, --resume, --quiet, --debug."""
    parser = ArgumentParser(
        prog=PROG, description=__doc__.splitlines()[0],
        epilog="Progress: one line per iteration (at most one per "
               f"{PROGRESS_SECONDS:g} s within a phase): minutes so far and an estimate of "
               "what remains, iterations, rate, loss, entropy, and the latest evaluation when "
               "eval_every is set. Budgets under which a phase could never run are refused. "
               "Ctrl-C stops the run and saves it; "
               f"{PROG} --resume RUN_DIR continues it. Run directory: config.json, log.jsonl, "
               "checkpoints/, after_imitation.pt, final.pt, agent.npz, resume.pt, "
               "resume.prev.pt.")
    parser.add_argument("--config", metavar="FILE",
                        help="TOML file of settings; flags override it (default: none, the "
                             "built-in defaults, which are training/configs/fast_4p_base.toml)")
    parser.add_argument("--resume", metavar="RUN_DIR",
                        help="continue the run saved in RUN_DIR (its resume.pt): settings, "
                             "weights, optimiser, snapshots, generator, elapsed time and phase; "
                             "--config and flags may change budgets and rates, not "
                             f"{', '.join(LOCKED_ON_RESUME)} (default: none, a new run)")
    parser.add_argument("--quiet", action="store_true",
                        help="print no progress lines (default: off: one line per iteration, "
                             f"at most one per {PROGRESS_SECONDS:g} s within a phase)")
    parser.add_argument("--debug", action="store_true",
                        help="on an error, show the full traceback instead of one line "
                             "(default: off)")
    add_setting_flags(parser, fields(FastConfig),
                      lambda f: f"{SETTINGS[f.name]} (default: {_shown(f.default)})",
                      options=_metavar)
    return parser


def _limits(minutes: float, iterations: int, clock: str) -> str:
    """A phase's limits in words: "up to 659 iterations or 5 min" ("" when none)."""
    parts = [f"{iterations:,} iterations" if iterations else "",
             f"{minutes:g} min{clock}" if minutes else ""]
    return " or ".join(part for part in parts if part)


def _budget(cfg: FastConfig) -> str:
    """The run's budget in words: imitation's limits, PPO's, evaluation."""
    imitation = _limits(cfg.bc_minutes, cfg.bc_iterations, "")
    ppo = _limits(cfg.minutes, cfg.ppo_iterations, " in all")
    phases = (f"imitation up to {imitation}, then PPO up to {ppo}" if imitation
              else f"no imitation, PPO up to {ppo}")
    evaluation = (f"evaluation {cfg.eval_games} games vs Greedy "
                  f"{f'every {cfg.eval_every} PPO iterations and ' if cfg.eval_every else ''}"
                  f"at the end" if cfg.eval_games else "no evaluation")
    return f"{phases}; {evaluation}"


def _games(cfg: FastConfig) -> str:
    """The games a run plays, in words."""
    if not cfg.variants:
        return f"{cfg.num_players}-player {cfg.mode} game"
    names = variant_list(cfg.variants)
    return (f"{len(set(names))} variants, {cfg.variants_per_iteration} drawn per PPO iteration "
            f"(one per imitation iteration) from {' '.join(names)} (evaluation: "
            f"{cfg.num_players}-player {cfg.mode})")


def summary(cfg: FastConfig) -> str:
    """The few lines a run opens with: variant, budget, device, network, output."""
    processes = (f"{cfg.workers} play processes" if cfg.workers > 1
                 else "1 play process") + f" x {cfg.torch_threads} torch thread"
    split = ", split PPO updates" if cfg.splits_updates else ""
    split += ", whole variants per play process" if cfg.whole_variants else ""
    prior = "on" if cfg.use_prior else "off"
    start = f", from {cfg.init}" if cfg.init else ""
    critic = f", value layer {cfg.critic_hidden}" if cfg.critic_hidden else ""
    league = (f", league {' '.join(cfg.league)} (p_league {cfg.p_league:g})"
              if cfg.p_league else "")
    return "\n".join([
        f"{PROG}: {_games(cfg)}, seed {cfg.seed}",
        f"  budget:   {_budget(cfg)}",
        f"  device:   CPU, {processes}{'s' if cfg.torch_threads > 1 else ''}, {cfg.backend} "
        f"backend{split}",
        f"  settings: {cfg.games * cfg.variants_per_iteration} games/iteration, "
        f"lr {cfg.learning_rate:g}, net "
        f"{cfg.channels}/{cfg.opponent_channels} channels x {cfg.hidden} hidden{critic}, "
        f"Greedy prior {prior}{start}{league}",
        f"  output:   {cfg.out} (every setting: {os.path.join(cfg.out, CONFIG_FILE)})"])


def eval_command(cfg: FastConfig) -> str:
    """The moonriver-eval command that measures a run's agent against Greedy."""
    agent = os.path.join(cfg.out, AGENT_FILE)
    mode = f" --mode {cfg.mode}" if cfg.mode != "base" else ""
    return (f"moonriver-eval --agents {shlex.quote('pretrained:' + agent)}"
            f"{' greedy' * (cfg.num_players - 1)} "
            f"--players {cfg.num_players}{mode} --games 1000 --seed {TRAINING_SEEDS} "
            f"--workers 2")


def _resumed_config(state: dict[str, Any], run: str, config_path: str | None,
                   overrides: dict[str, Any]) -> FastConfig:
    """A saved run's settings, its directory as ``out``, then the file and flags (some locked)."""
    # a run saved before a setting existed ran with its default
    before = {**asdict(FastConfig()), **state["config"]}
    base = {**before, "out": os.path.dirname(resume_path(run)) or "."}
    cfg = FastConfig.load(config_path, overrides, base=base)
    changed = [name for name in LOCKED_ON_RESUME if getattr(cfg, name) != before[name]]
    if changed:
        saved = ", ".join(f"{name}={before[name]!r}" for name in changed)
        raise CLIError(f"a resumed run keeps its {saved}; only budgets, rates and the like "
                       f"may change")
    if state["phase"] == "done":
        raise CLIError(f"the run in {run!r} has finished; its agent is "
                       f"{os.path.join(cfg.out, AGENT_FILE)} (network: "
                       f"{os.path.join(cfg.out, 'final.pt')})")
    return cfg


@cli_main(PROG)
def main(argv: list[str] | None = None) -> int:
    """CLI entry point (``moonriver-train-fast``)."""
    args = vars(build_parser().parse_args(argv))
    config_path, run, quiet = args.pop("config"), args.pop("resume"), args.pop("quiet")
    args.pop("debug")
    state = load_resume(run) if run else None
    if state is None:
        cfg = FastConfig.load(config_path, args)
        check_fresh(cfg.out)
    else:
        cfg = _resumed_config(state, run, config_path, args)
        print(f"resuming {run} at iteration {state['iteration']} ({state['phase']}, "
              f"{state['seconds'] / 60:.1f} min)", flush=True)
    print(summary(cfg), flush=True)
    try:
        train(cfg, state, quiet=quiet)
    except KeyboardInterrupt:
        if not os.path.isfile(os.path.join(cfg.out, RESUME_FILE)):
            print(f"{PROG}: interrupted before the run started; nothing was saved",
                  file=sys.stderr)
            return 130
        saved = None
        with contextlib.suppress(Exception):
            saved = load_resume(cfg.out, report=lambda line: None)
        where = (f" at iteration {saved['iteration']} ({saved['phase']}, "
                 f"{saved['seconds'] / 60:.1f} min)" if saved else "")
        command = (PROG if os.path.basename(sys.argv[0]) == PROG  # how this program started
                   else "python -m moonriver_env.training.fast.train")
        print(f"{PROG}: interrupted; saved{where}; continue with: {command} --resume "
              f"{cfg.out}", file=sys.stderr)
        return 130
    print(f"saved the network {os.path.join(cfg.out, 'final.pt')} and the agent "
          f"{os.path.join(cfg.out, AGENT_FILE)}", flush=True)
    print(f"measure it: {eval_command(cfg)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
