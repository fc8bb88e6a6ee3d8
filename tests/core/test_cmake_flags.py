"""CMakeLists.txt gives GCC/Clang-only flags to GCC and Clang alone: MSVC and clang-cl
(cibuildwheel's Windows build) read -Wall as every warning and refuse -Wextra, -O3 and the
sanitizer options, so each such flag sits inside an ``if(... NOT MSVC)`` block."""

from __future__ import annotations

import re
from pathlib import Path

CMAKE = Path(__file__).resolve().parents[2] / "CMakeLists.txt"
GNU_FLAG = re.compile(r'(?<![\w/])(-O[0-3s]|-W(all|extra)|-f[\w-]+|-g)(?=[\s"),=]|$)')


def gnu_flags_outside_not_msvc(text: str) -> list[str]:
    """The lines holding a GCC/Clang flag that no enclosing if() limits to a non-MSVC build."""
    conditions: list[str] = []
    outside = []
    for line in text.splitlines():
        code = line.split("#", 1)[0].strip()
        if re.match(r"if\s*\(", code):
            conditions.append(code)
        elif re.match(r"endif\s*\(", code):
            conditions.pop()
        elif re.match(r"(option|message)\s*\(", code):  # text that names a flag
            continue
        elif GNU_FLAG.search(code) and not any("NOT MSVC" in c for c in conditions):
            outside.append(code)
    return outside


def test_gcc_and_clang_flags_are_kept_from_msvc() -> None:
    assert gnu_flags_outside_not_msvc(CMAKE.read_text()) == []


def test_the_check_finds_a_flag_given_to_every_compiler() -> None:
    text = ("if(NOT MSVC)\n  target_compile_options(a PRIVATE -O3 -Wall)\nendif()\n"
            "if(MOONRIVER_SANITIZE)\n  add_link_options(-fsanitize=address)\nendif()\n"
            'set_source_files_properties(v.cc PROPERTIES COMPILE_OPTIONS "-O3")\n')
    assert gnu_flags_outside_not_msvc(text) == [
        "add_link_options(-fsanitize=address)",
        'set_source_files_properties(v.cc PROPERTIES COMPILE_OPTIONS "-O3")']
