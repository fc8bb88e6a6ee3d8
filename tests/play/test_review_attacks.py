"""Attacks found in review of the play server's bounds: requests that cost the event loop
every time, and clients that name themselves (X-Forwarded-For) to escape their share."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("uvicorn")
from starlette.testclient import TestClient

from moonriver_env.play import server as play_server
from moonriver_env.play.connections import ServerLimits, uvicorn_config


def test_a_docs_page_is_rendered_once_not_per_request(monkeypatch) -> None:
    """Rendering rules.md takes about 10 ms of the server: 20 requests render it once (before,
    every request rendered it on the event loop, so one client asking in a loop held up every
    other request)."""
    if not (play_server.DOCS / "rules.md").is_file():
        pytest.skip("docs/ is not in this copy")
    renders = []
    real = play_server.rules_html
    monkeypatch.setattr(play_server, "rules_html", lambda text: renders.append(1) or real(text))
    cached = getattr(play_server, "doc_page", None)
    if cached is not None:
        cached.cache_clear()
    client = TestClient(play_server.create_app())
    pages = {client.get("/rules").text for _ in range(20)}
    assert len(pages) == 1 and "<h1" in pages.pop()
    assert len(renders) == 1


def test_a_forwarded_for_header_does_not_change_the_client() -> None:
    """The agent threads are shared by client address: a request from 127.0.0.1 naming
    another address in X-Forwarded-For is still 127.0.0.1's (uvicorn's default trusts the
    header from 127.0.0.1, so one local client could pose as many)."""
    seen: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["client"])

    config = uvicorn_config(app, "127.0.0.1", 0, ServerLimits(8))
    config.load()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "GET", "scheme": "http", "path": "/", "raw_path": b"/",
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 5000),
             "server": ("127.0.0.1", 8765),
             "headers": [(b"host", b"127.0.0.1"), (b"x-forwarded-for", b"10.9.9.9")]}
    asyncio.run(config.loaded_app(scope, None, None))
    assert seen == [("127.0.0.1", 5000)]
