"""The backend switch: ``MOONRIVER_BACKEND`` picks the default implementation."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from moonriver_env.moonriver.backend import BACKENDS, backend_from_env, check_backend, make_game


def test_env_var_unset_or_empty_means_core() -> None:
    assert backend_from_env({}) == "core"
    assert backend_from_env({"MOONRIVER_BACKEND": ""}) == "core"


@pytest.mark.parametrize("name", BACKENDS)
def test_env_var_names_the_backend(name: str) -> None:
    assert backend_from_env({"MOONRIVER_BACKEND": name}) == name


def test_bad_env_var_names_the_allowed_values() -> None:
    with pytest.raises(ValueError, match=r"MOONRIVER_BACKEND must be one of \('core', 'python'\)"):
        backend_from_env({"MOONRIVER_BACKEND": "cpp"})


def test_check_backend_refuses_unknown_names() -> None:
    with pytest.raises(ValueError, match="backend must be one of"):
        check_backend("Core")


def _default_in_fresh_process(value: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MOONRIVER_BACKEND"}
    if value is not None:
        env["MOONRIVER_BACKEND"] = value
    code = ("from moonriver_env.moonriver.backend import DEFAULT_BACKEND, make_game; "
            "print(DEFAULT_BACKEND, type(make_game(seed=1)).__module__)")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=False)


@pytest.mark.parametrize(("value", "expected"), [
    (None, "core moonriver_env.moonriver.core"),
    ("python", "python moonriver_env.moonriver.rules")])
def test_default_backend_read_from_environment_at_import(value: str | None,
                                                         expected: str) -> None:
    out = _default_in_fresh_process(value)
    assert out.returncode == 0, out.stderr
    name, module = out.stdout.split()
    want_name, want_module = expected.split()
    assert name == want_name and module.startswith(want_module)


def test_bad_default_backend_fails_at_import_with_clear_error() -> None:
    out = _default_in_fresh_process("fast")
    assert out.returncode != 0
    assert "MOONRIVER_BACKEND must be one of ('core', 'python'), got 'fast'" in out.stderr


def test_make_game_on_either_backend_plays_the_same_opening() -> None:
    games = [make_game(seed=3, backend=b) for b in BACKENDS]
    assert [g.current_player for g in games] == [games[0].current_player] * 2
