"""One settings loader for the three training recipes (training/settings.py): the same file
formats, the same checks and the same words in moonriver-train, -fast and -rllib."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from moonriver_env.training.fast.config import FastConfig
from moonriver_env.training.sb3.train import TrainConfig
from moonriver_env.training.settings import load_settings, typed_setting


def _loaders() -> list:
    """(config class, the error it raises) of each recipe present."""
    out = [(FastConfig, ValueError), (TrainConfig, ValueError)]
    try:
        from moonriver_env.training.rllib.train import RLlibTrainConfig, UsageError
    except ImportError:  # ray[rllib] not installed
        return out
    return [*out, (RLlibTrainConfig, UsageError)]


@pytest.mark.parametrize("cls, error", _loaders())
def test_every_recipe_reads_json_and_toml_alike(tmp_path, cls, error) -> None:
    as_json, as_toml = tmp_path / "c.json", tmp_path / "c.toml"
    as_json.write_text(json.dumps({"seed": 7}))
    as_toml.write_text("seed = 7\n")
    assert load_settings(cls, str(as_json), {}) == load_settings(cls, str(as_toml), {}) \
        == {"seed": 7}
    yaml = tmp_path / "c.yaml"
    yaml.write_text("seed: 7\n")
    with pytest.raises(error, match=r"must be \.toml or \.json, got \.yaml"):
        cls.load(str(yaml), {})


@pytest.mark.parametrize("cls, error", _loaders())
def test_every_recipe_names_the_closest_setting_for_a_typo(cls, error) -> None:
    with pytest.raises(error, match=r"unknown (training )?settings \['sed'\] "
                                    r"\(did you mean 'sed' -> 'seed'\?\); allowed: \["):
        cls.load(None, {"sed": 1})


def test_overrides_win_over_the_file_and_none_leaves_a_setting(tmp_path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("seed = 7\nout = \"runs/x\"\n")
    got = load_settings(FastConfig, str(path), {"seed": 9, "out": None}, {"games": 4})
    assert got == {"games": 4, "seed": 9, "out": "runs/x"}


@pytest.mark.parametrize("kind, value, words", [
    ("int", 2.5, "x must be an integer, got 2.5"),
    ("int", True, "x must be an integer, got True"),
    ("float", "1", "x must be a number, got '1'"),
    ("bool", 1, "x must be true or false, got 1"),
    ("str", 3, "x must be a string, got 3"),
    ("tuple[str, ...]", "greedy", "x must be a list of strings, got 'greedy'"),
    ("tuple[int, ...]", [1, "2"], "x must be a list of integers, got [1, '2']"),
])
def test_a_value_of_the_wrong_type_says_what_is_allowed(kind, value, words) -> None:
    with pytest.raises(ValueError) as err:
        typed_setting("x", kind, value)
    assert str(err.value) == words


def test_typed_values_are_normalised() -> None:
    assert typed_setting("x", "float", 2) == 2.0 and isinstance(typed_setting("x", "float", 2),
                                                                float)
    assert typed_setting("x", "tuple[str, ...]", ["a", "b"]) == ("a", "b")
