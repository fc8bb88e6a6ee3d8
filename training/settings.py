"""The recipes' one settings loader: defaults (or a base), a .toml/.json file, then overrides."""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import Field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Check = Callable[[str, str, Any], Any]
_TYPES: dict[str, type | tuple[type, ...]] = {"int": int, "float": (int, float), "bool": bool,
                                              "str": str}
KIND_WORDS = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "a string"}


def read_settings(path: str) -> dict[str, Any]:
    """The settings of a ``.toml`` or ``.json`` file; errors name the file and the problem."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".toml", ".json"):
        raise ValueError(f"config file {path!r} must be .toml or .json, got {ext or 'no'} "
                         f"extension")
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        if ext == ".toml":
            import tomllib

            values = tomllib.loads(data.decode("utf-8"))
        else:
            values = json.loads(data)
    except ValueError as exc:  # TOMLDecodeError, JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"config file {path!r} is not valid {ext[1:].upper()}: {exc}") from None
    if not isinstance(values, dict):
        raise ValueError(f"config file {path!r} must hold a table of settings")
    return values


def is_kind(kind: str, value: object) -> bool:
    """Whether ``value`` is of a plain type (ints pass as floats, bools never as numbers)."""
    if kind in ("int", "float") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[kind])


def typed_setting(name: str, kind: str, value: Any) -> Any:
    """``value`` checked against the setting's declared type; a ValueError says what is allowed."""
    if kind.startswith("tuple"):
        elem = "int" if "int" in kind else "str"
        if isinstance(value, (list, tuple)) and all(is_kind(elem, v) for v in value):
            return tuple(value)
        word = "integers" if elem == "int" else "strings"
        raise ValueError(f"{name} must be a list of {word}, got {value!r}")
    if not is_kind(kind, value):
        raise ValueError(f"{name} must be {KIND_WORDS[kind]}, got {value!r}")
    return float(value) if kind == "float" else value


def warner(prog: str) -> Callable[[str], None]:
    """A function that prints ``PROG: warning: LINE`` on stderr, flushed."""
    return lambda line: print(f"{prog}: warning: {line}", file=sys.stderr, flush=True)


def add_setting_flags(parser: argparse.ArgumentParser, settings: Iterable[Field[Any]],
                      help_of: Callable[[Field[Any]], str], nargs: str = "+",
                      options: Callable[[Field[Any]], dict[str, Any]] = lambda f: {}) -> None:
    """One flag per setting: --x/--no-x for a bool, a list for a tuple; ``options`` adds more."""
    for f in settings:
        kind, flag = str(f.type), "--" + f.name.replace("_", "-")
        text = help_of(f).replace("%", "%%")
        if kind == "bool":
            parser.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction,
                                default=None, help=text)
            continue
        elem = kind.removeprefix("tuple[").removesuffix(", ...]")
        given: dict[str, Any] = {"type": {"int": int, "float": float}.get(elem, str)}
        if elem != kind:
            given["nargs"] = nargs
        parser.add_argument(flag, dest=f.name, default=None, help=text, **(given | options(f)))


def load_settings(cls: type[DataclassInstance], path: str | None, overrides: Mapping[str, Any],
                  base: Mapping[str, Any] | None = None, *, check: Check = typed_setting,
                  unchecked: tuple[str, ...] = (), label: str = "settings") -> dict[str, Any]:
    """``cls``'s settings: ``base``, the file at ``path``, then the overrides that are not None."""
    values: dict[str, Any] = dict(base or {})
    if path:
        values.update(read_settings(path))
    values.update({k: v for k, v in overrides.items() if v is not None})
    types = {f.name: str(f.type) for f in fields(cls)}
    unknown = set(values) - set(types)
    if unknown:
        where = f" in {path}" if path else ""
        hints = [f"{k!r} -> {m[0]!r}" for k in sorted(unknown)
                 if (m := difflib.get_close_matches(k, types, n=1))]
        hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
        raise ValueError(f"unknown {label} {sorted(unknown)}{where}{hint}; "
                         f"allowed: {sorted(types)}")
    return {k: v if k in unchecked else check(k, types[k], v) for k, v in values.items()}
