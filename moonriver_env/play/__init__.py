"""Play Moon River against agents: a local web page (``moonriver-play``) or the terminal."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from moonriver_env.play.session import GameOptions, PlayError, PlaySession, ReplaySession

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ["GameOptions", "PlayError", "PlaySession", "ReplaySession", "create_app"]


def create_app(defaults: GameOptions | None = None,
               allowed_hosts: list[str] | None = None,
               data_files: Iterable[str] = (), **options: Any) -> Starlette:
    """The play server's ASGI app (needs the ``play`` extra); see ``play.server.create_app``."""
    from moonriver_env.play.server import create_app as _create

    return _create(defaults, allowed_hosts, data_files, **options)
