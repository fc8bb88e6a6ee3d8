"""The build backend: scikit-build-core, with editable installs that expose only moonriver_env.

Not installed (see ``wheel.exclude``); named in pyproject.toml's ``[build-system]``.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path
from typing import Any

from scikit_build_core import build as _skbc
from scikit_build_core.build import *  # noqa: F403  (the PEP 517 / 660 hooks)
from scikit_build_core.build import __all__  # noqa: F401


def build_editable(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                   metadata_directory: str | None = None) -> str:
    """scikit-build-core's editable wheel, its ``.pth`` reduced to the finder's import line."""
    # The .pth also lists the repository root and its parent, which would make agents/ and
    # training/ importable under bare top-level names (tests/test_packaging.py forbids it).
    name = _skbc.build_editable(wheel_directory, config_settings, metadata_directory)
    _keep_import_lines(Path(wheel_directory) / name)
    return name


def _keep_import_lines(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        entries = [(info, zf.read(info)) for info in zf.infolist()]
    changed: dict[str, bytes] = {}
    for info, data in entries:
        if info.filename.endswith(".pth") and "/" not in info.filename:
            lines = [ln for ln in data.decode().splitlines() if ln.startswith("import ")]
            changed[info.filename] = ("\n".join(lines) + "\n").encode()
    if not changed:
        return
    out = []
    for info, data in entries:
        data = changed.get(info.filename, data)
        if info.filename.endswith(".dist-info/RECORD"):
            rows = []
            for row in data.decode().splitlines():
                path = row.split(",")[0]
                if path in changed:
                    digest = base64.urlsafe_b64encode(
                        hashlib.sha256(changed[path]).digest()).rstrip(b"=").decode()
                    row = f"{path},sha256={digest},{len(changed[path])}"
                rows.append(row)
            data = ("\n".join(rows) + "\n").encode()
        out.append((info, data))
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, data in out:
            zf.writestr(info, data)
