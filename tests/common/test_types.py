"""Types are checked: mypy over the installed package (scripts/typecheck.py) passes, and catches a
core game passed where an engine game is declared; both engines implement the written contract
(``MoonRiverGame``) directly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
