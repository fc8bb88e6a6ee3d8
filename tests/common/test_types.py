"""Types are checked: mypy over the installed package (scripts/typecheck.py) passes, and catches a
core game passed where an engine game is declared; both engines implement the written contract
(``MoonRiverGame``) directly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from moonriver_env.common.contract import TableGame
from moonriver_env.moonriver.contract import MoonRiverGame, RanchView
from moonriver_env.moonriver.core import Game as CoreGame
from moonriver_env.moonriver.rules import Game as EngineGame
from moonriver_env.moonriver.rules.game import why_illegal
from tests.helpers import HANG_GUARD

ROOT = Path(__file__).resolve().parents[2]
TYPECHECK = ROOT / "scripts" / "typecheck.py"

pytest.importorskip("mypy")


def _typecheck(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TYPECHECK), *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=HANG_GUARD)


def _check_file(tmp_path: Path, source: str) -> list[str]:
    """mypy's error lines in ``source`` (a module importing the package; the package's own
    errors are test_the_package_type_checks's)."""
    path = tmp_path / "use.py"
    path.write_text(source)
    done = _typecheck("--files", str(path))
    return [line for line in done.stdout.splitlines()
            if ": error:" in line and line.startswith(str(path))]


def test_the_package_type_checks() -> None:
    done = _typecheck()
    assert done.returncode == 0, f"mypy found type errors:\n{done.stdout}{done.stderr}"
    assert "Success: no issues found" in done.stdout


def test_a_core_game_where_an_engine_game_is_declared_is_a_type_error(tmp_path) -> None:
    errors = _check_file(tmp_path, (
        "from moonriver_env.moonriver.core import Game as CoreGame\n"
        "from moonriver_env.moonriver.rules import Game as EngineGame\n"
        "from moonriver_env.moonriver.rules.record import final_state\n"
        "\n"
        "def engine_only(game: EngineGame) -> int:\n"
        "    return game.round\n"
        "\n"
        "engine_only(CoreGame(seed=1))\n"  # line 8: the mistake
        "final_state(CoreGame(seed=1))\n"))  # records take the contract: fine
    assert len(errors) == 1, errors
    assert ":8: error:" in errors[0] and "[arg-type]" in errors[0]
    assert "moonriver_env.moonriver.core.game.Game" in errors[0]


def test_both_engines_meet_the_contract_and_only_it_is_promised(tmp_path) -> None:
    errors = _check_file(tmp_path, (
        "from moonriver_env.moonriver.backend import make_game\n"
        "from moonriver_env.moonriver.contract import MoonRiverGame\n"
        "from moonriver_env.moonriver.core import Game as CoreGame\n"
        "from moonriver_env.moonriver.rules import Game as EngineGame\n"
        "\n"
        "a: MoonRiverGame = EngineGame(seed=1)\n"
        "b: MoonRiverGame = CoreGame(seed=1)\n"
        "c = make_game(None, 1)\n"
        "n: int = len(c.ranches[0].hand) + c.round + len(c.saloon)\n"
        "c._core\n"))  # line 10: not in the contract
    assert len(errors) == 1, errors
    assert ":10: error:" in errors[0] and "_core" in errors[0]


def test_the_core_stubs_are_read(tmp_path) -> None:
    errors = _check_file(tmp_path, (
        "from moonriver_env.moonriver.core import _core\n"
        "\n"
        "_core.state_layout(1)\n"))  # the stub says it takes no argument
    assert len(errors) == 1 and ":3: error:" in errors[0], errors


def _options(module: str, config: Path = ROOT / "pyproject.toml") -> Any:
    """mypy's options for ``module`` under the ``[tool.mypy]`` settings of ``config``."""
    from mypy.main import process_options

    _, options = process_options(["--config-file", str(config), "-c", "pass"],
                                 require_targets=False)
    return options.clone_for_module(module)


def _strict_settings() -> dict[str, object]:
    """Each per-module flag mypy's own --strict changes, with its strict value (a newer mypy's
    additions count too)."""
    from mypy.main import process_options
    from mypy.options import PER_MODULE_OPTIONS, Options

    _, strict = process_options(["--strict", "-c", "pass"], require_targets=False)
    default = Options()
    return {k: getattr(strict, k) for k in sorted(PER_MODULE_OPTIONS)
            if getattr(strict, k) != getattr(default, k)}


@pytest.mark.parametrize("module", ["moonriver_env.common.gym", "moonriver_env.common.records",
                                    "moonriver_env.moonriver.rules.game",
                                    "moonriver_env.moonriver.core.rng",
                                    "moonriver_env.moonriver.contract"])
def test_the_shared_layer_rules_core_and_contract_are_strict(module) -> None:
    wanted = _strict_settings()
    assert {"disallow_untyped_defs", "warn_return_any", "implicit_reexport"} <= set(wanted)
    options = _options(module)
    assert {k: getattr(options, k) for k in wanted} == wanted


@pytest.mark.parametrize("module", ["moonriver_env.play.server", "moonriver_env.circles.game",
                                    "moonriver_env.training.tournament"])
def test_generics_and_any_returns_are_checked_everywhere_strict_only_where_asked(module) -> None:
    options = _options(module)
    assert options.disallow_any_generics and options.warn_return_any
    assert not options.disallow_untyped_defs  # `strict = true` in an override would leak here


def test_a_bare_generic_and_an_any_return_are_type_errors(tmp_path) -> None:
    errors = _check_file(tmp_path, (
        "import json\n"
        "\n"
        "def first(items: list) -> int:\n"  # line 3: list of what?
        "    return json.loads(items[0])\n"))  # line 4: Any returned as an int
    assert len(errors) == 2, errors
    assert ":3: error:" in errors[0] and "[type-arg]" in errors[0]
    assert ":4: error:" in errors[1] and "[no-any-return]" in errors[1]


def test_typecheck_refuses_unknown_arguments_with_one_line() -> None:
    done = _typecheck("--nope")
    assert done.returncode == 2 and "unrecognized arguments: --nope" in done.stderr


@pytest.mark.parametrize("cls", [EngineGame, CoreGame])
def test_both_engines_are_table_games_with_the_whole_table(cls) -> None:
    game = cls(seed=3)
    assert isinstance(game, TableGame) and isinstance(game, MoonRiverGame)
    assert all(isinstance(ranch, RanchView) for ranch in game.ranches)
    assert "__getattr__" not in vars(cls)


def test_the_core_table_fields_are_read_only_copies() -> None:
    game = CoreGame(seed=5)
    box = game.box
    box.clear()
    assert len(game.box) == len(EngineGame(seed=5).box) > 0
    with pytest.raises(AttributeError):
        game.no_such_field  # noqa: B018


def test_one_reason_for_an_illegal_action_in_both_engines() -> None:
    engine, core = EngineGame(seed=7), CoreGame(seed=7)
    legal = set(engine.legal_action_ids().tolist())
    for aid in (i for i in range(200) if i not in legal):
        assert why_illegal(engine, aid) == why_illegal(core, aid)
    with pytest.raises(Exception) as from_engine:
        engine.apply(int(np.flatnonzero(engine.legal_mask() == 0)[0]))
    with pytest.raises(Exception) as from_core:
        core.apply(int(np.flatnonzero(core.legal_mask() == 0)[0]))
    assert str(from_engine.value) == str(from_core.value)
