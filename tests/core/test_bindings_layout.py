"""The core's bindings are split by area: bindings.cc holds a short module block that calls one
``bind_<area>(nb::module_&)`` per file (game, set-up, search, batched search, network, batch),
each declared in bindings.h, and no area's classes are bound in the module block itself."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "moonriver_env" / "moonriver" / "core" / "src"
AREAS = {"game": "game_bindings.cc", "setup": "setup_bindings.cc", "search": "search_bindings.cc",
         "az_search": "az_bindings.cc", "network": "network_bindings.cc",
         "vector": "vector_bindings.cc"}


def module_block(text: str) -> list[str]:
    """The lines of the NB_MODULE block, its braces included."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("NB_MODULE("))
    end = next(i for i in range(start, len(lines)) if lines[i] == "}")
    return lines[start:end + 1]


def test_the_module_block_is_short_and_calls_each_area() -> None:
    block = module_block((SRC / "bindings.cc").read_text())
    assert len(block) <= 15
    calls = re.findall(r"^\s*bind_(\w+)\(m\);$", "\n".join(block), re.M)
    assert sorted(calls) == sorted(AREAS)
    assert not any("class_<" in line or "m.def(" in line for line in block)


def test_each_area_defines_its_bind_function_declared_in_bindings_h() -> None:
    header = (SRC / "bindings.h").read_text()
    for area, name in AREAS.items():
        assert f"void bind_{area}(nanobind::module_& m);" in header
        assert re.search(rf"^void bind_{area}\(nb::module_& m\) \{{", (SRC / name).read_text(),
                         re.M), name
