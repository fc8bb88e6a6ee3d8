"""A package's public names imported on first use (PEP 562), so that importing it stays light."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str], public: Iterable[str],
                 ) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: each name of ``exports`` comes from
    its submodule (a name mapped to itself is that submodule); ``dir`` lists ``public``."""

    def __getattr__(name: str) -> object:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(f"{package}.{exports[name]}")
        return module if exports[name] == name else getattr(module, name)

    def __dir__() -> list[str]:
        return sorted(public)

    return __getattr__, __dir__
