"""The play server: a Starlette app holding several games and replays, and the page itself.

Routes (JSON unless said otherwise):

| method, path                     | what                                                   |
|----------------------------------|--------------------------------------------------------|
| GET  /, /game/{id}, /replay/{id} | the page (static/index.html)                           |
| GET  /rules, /{doc}.md           | docs/rules.md (and the docs it links) as pages       |
| GET  /api/defaults               | the new-game form's defaults                           |
| POST /api/games                  | start a game: {players, mode, scenario, humans, ...}   |
| GET  /api/games/{id}             | the state: table SVG, status, scores, legal moves      |
| POST /api/games/{id}/actions     | a human decision {"action": id} (checked by the engine)|
| POST /api/games/{id}/advance     | the agent to act makes one decision                    |
| GET  /api/games/{id}/record      | the game record (docs/game-record.md) as a download    |
| POST /api/replays                | open a game record for replay                          |
| GET  /api/replays/{id}?step=n    | the table after n decisions of the record              |

Refused requests get a 4xx status and ``{"error": message}``; the game is left unchanged.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from html import escape
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from moonriver_env.agents.registry import SPECS
from moonriver_env.play.session import (
    GameOptions,
    PlayError,
    PlaySession,
    ReplaySession,
    options_from_json,
)

STATIC = Path(__file__).parent / "static"
DOCS = Path(__file__).resolve().parents[2] / "docs"  # present in a source checkout
DOC_PAGES = ("rules", "actions", "game-record", "observation")  # linked from rules.md
MAX_BODY = 16 * 1024  # actions and new-game options
MAX_RECORD_BODY = 4 * 1024 * 1024  # a game record to replay
MAX_GAMES = 64  # the oldest game or replay is dropped beyond this


def rules_html(markdown_text: str) -> str:
    """docs/rules.md as a page (Markdown rendered; plain text when markdown is missing)."""
    try:
        import markdown
    except ImportError:
        return f"<pre>{escape(markdown_text)}</pre>"
    body = markdown.markdown(markdown_text, extensions=["tables"])
    return ('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Moon River rules'
            '</title><link rel="stylesheet" href="/static/style.css"></head>'
            f'<body class="rules">{body}</body></html>')


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _json_body(request: Request, limit: int) -> Any:
    """The request's JSON body, refused when larger than ``limit`` bytes or not JSON.

    The JSON content type is required: a cross-site page cannot send it without a CORS
    preflight, which this server never grants, so other sites cannot drive local games.
    """
    origin = request.headers.get("origin")
    if origin is not None and origin.split("://", 1)[-1] != request.headers.get("host"):
        raise PlayError(f"requests from other sites are refused (origin {origin!r})", 403)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise PlayError(f"send the body as application/json, not {kind or 'no content type'!r}",
                        415)
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise PlayError("the Content-Length header must be a number")
        if int(declared) > limit:
            raise PlayError(f"request body of {declared} bytes is over the limit of {limit}", 413)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise PlayError(f"request body is over the limit of {limit} bytes", 413)
    if not body:
        raise PlayError("the request body is empty; send a JSON object")
    try:
        return json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PlayError(f"the request body is not valid JSON: {exc}") from None


class _Store:
    """Games and replays by id, the oldest dropped beyond MAX_GAMES."""

    def __init__(self) -> None:
        self.items: OrderedDict[str, PlaySession | ReplaySession] = OrderedDict()

    def add(self, item: PlaySession | ReplaySession) -> None:
        self.items[item.id] = item
        while len(self.items) > MAX_GAMES:
            self.items.popitem(last=False)

    def get(self, key: str, kind: type) -> Any:
        item = self.items.get(key)
        if not isinstance(item, kind):
            what = "game" if kind is PlaySession else "replay"
            raise PlayError(f"no {what} with id {key!r} (it may have ended with the server)", 404)
        return item


def create_app(defaults: GameOptions | None = None,
               allowed_hosts: list[str] | None = None) -> Starlette:
    """The ASGI app; ``defaults`` fill in what a new-game request leaves out.

    ``allowed_hosts`` (for example ``["127.0.0.1", "localhost"]``) refuses requests naming any
    other Host, which guards a local server against DNS rebinding.
    """
    defaults = defaults or GameOptions()
    store = _Store()

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    async def rules(request: Request) -> Response:
        name = request.path_params.get("name", "rules")
        path = DOCS / f"{name}.md"
        if name not in DOC_PAGES or not path.is_file():
            return PlainTextResponse(f"docs/{name}.md is not available in this copy", 404)
        return HTMLResponse(rules_html(path.read_text(encoding="utf-8")))

    async def get_defaults(request: Request) -> Response:
        return JSONResponse({**defaults.to_dict(), "agent_specs": list(SPECS)})

    async def new_game(request: Request) -> Response:
        options = options_from_json(await _json_body(request, MAX_BODY), defaults)
        session = await run_in_threadpool(PlaySession, options)
        store.add(session)
        return JSONResponse({"id": session.id}, status_code=201)

    async def game_state(request: Request) -> Response:
        session = store.get(request.path_params["id"], PlaySession)
        return JSONResponse(await run_in_threadpool(session.state))

    async def game_action(request: Request) -> Response:
        session = store.get(request.path_params["id"], PlaySession)
        body = await _json_body(request, MAX_BODY)
        await run_in_threadpool(session.act, body)
        return JSONResponse(await run_in_threadpool(session.state))

    async def game_advance(request: Request) -> Response:
        session = store.get(request.path_params["id"], PlaySession)
        await run_in_threadpool(session.advance)
        return JSONResponse(await run_in_threadpool(session.state))

    async def game_record(request: Request) -> Response:
        session = store.get(request.path_params["id"], PlaySession)
        record = await run_in_threadpool(session.record)
        name = f"moonriver-{session.id}.json"
        return JSONResponse(record, headers={"Content-Disposition":
                                             f'attachment; filename="{name}"'})

    async def new_replay(request: Request) -> Response:
        record = await _json_body(request, MAX_RECORD_BODY)
        replay = await run_in_threadpool(ReplaySession, record)
        store.add(replay)
        return JSONResponse({"id": replay.id, "steps": replay.steps}, status_code=201)

    async def replay_state(request: Request) -> Response:
        replay = store.get(request.path_params["id"], ReplaySession)
        raw = request.query_params.get("step", "0")
        if not raw.isdigit():
            raise PlayError(f"step must be a whole number, got {raw!r}")
        return JSONResponse(await run_in_threadpool(replay.state, int(raw)))

    async def play_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, PlayError)
        return _error(str(exc), exc.status)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if request.url.path.startswith("/api/"):
            return _error(exc.detail, exc.status_code)
        return PlainTextResponse(exc.detail, exc.status_code)

    routes = [
        Route("/", page), Route("/game/{id}", page), Route("/replay/{id}", page),
        Route("/rules", rules), Route("/{name}.md", rules),
        Route("/api/defaults", get_defaults),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{id}", game_state),
        Route("/api/games/{id}/actions", game_action, methods=["POST"]),
        Route("/api/games/{id}/advance", game_advance, methods=["POST"]),
        Route("/api/games/{id}/record", game_record),
        Route("/api/replays", new_replay, methods=["POST"]),
        Route("/api/replays/{id}", replay_state),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]
    middleware = []
    if allowed_hosts:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts))
    app = Starlette(routes=routes, middleware=middleware,
                    exception_handlers={PlayError: play_error, HTTPException: http_error})
    app.state.store = store
    return app
