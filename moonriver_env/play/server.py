"""The play server: a Starlette app holding several games and replays, and the page itself.

Routes are listed in :func:`create_app`; refused requests get a 4xx and ``{"error": message}``.
See docs/play.md (Security)."""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import json
import re
from collections.abc import Iterable
from html import escape
from pathlib import Path
from typing import Any, NoReturn

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

import moonriver_env.play.session as play_session
from moonriver_env.agents.registry import REQUEST_SPECS
from moonriver_env.moonriver.rules.data import resolve_path
from moonriver_env.play.fair import AGENT_THREADS, FairAgentPool, client_key
from moonriver_env.play.session import GameOptions, PlayError, PlaySession, ReplaySession
from moonriver_env.play.store import AddHeaders, ClientCookie, GameStore, owner_of

STATIC = Path(__file__).parent / "static"
DOCS = Path(__file__).resolve().parents[2] / "docs"  # present in a source checkout
DOC_PAGES = ("rules", "actions", "game-record", "observation")  # linked from rules.md
MAX_BODY = 16 * 1024  # actions and new-game options
MAX_RECORD_BODY = 4 * 1024 * 1024  # a game record to replay
MAX_DEPTH = 32  # nesting of a request's JSON (a game record nests 6 deep)


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


@functools.lru_cache(maxsize=2 * len(DOC_PAGES))
def doc_page(name: str, mtime_ns: int) -> str:
    """docs/NAME.md as a page, rendered once per version of the file."""
    # A render takes about 10 ms: per request, one client's requests would hold up others'.
    return rules_html((DOCS / f"{name}.md").read_text(encoding="utf-8"))


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


def parse_json(body: bytes) -> Any:
    """A request body as JSON, refused (PlayError) when not JSON or nested over MAX_DEPTH."""
    try:
        value = json.loads(body, parse_constant=_refuse_constant)
    except RecursionError:
        raise PlayError(f"the request body nests deeper than {MAX_DEPTH} levels") from None
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError, too many digits, NaN
        message = str(exc) if len(str(exc)) <= 200 else str(exc)[:197] + "..."
        raise PlayError(f"the request body is not valid JSON: {message}") from None
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            if depth > MAX_DEPTH:
                raise PlayError(f"the request body nests deeper than {MAX_DEPTH} levels")
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict)
                                                  else item))
    return value


def check_post(request: Request) -> None:
    """Refuse a state-changing request from another site or without the JSON content type."""
    # A cross-site page cannot send the JSON type without a CORS preflight, never granted here.
    origin = request.headers.get("origin")
    host = request.headers.get("host", "")
    if origin is not None and origin.lower() not in (f"http://{host}".lower(),
                                                     f"https://{host}".lower()):
        raise PlayError(f"requests from other sites are refused (origin {origin[:100]!r})",
                        403)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise PlayError(f"send the body as application/json, not "
                        f"{kind[:100] or 'no content type'!r}", 415)


async def _json_body(request: Request, limit: int) -> Any:
    """The request's checked JSON body; PlayError over ``limit`` bytes, not JSON or too deep."""
    check_post(request)
    declared = request.headers.get("content-length")
    if declared is not None:
        if not (declared.isascii() and declared.isdigit()):
            raise PlayError("the Content-Length header must be a number")
        if int(declared) > limit:
            raise PlayError(f"request body of {declared} bytes is over the limit of {limit}", 413)
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise PlayError(f"request body is over the limit of {limit} bytes", 413)
    except ClientDisconnect:  # closed by the client, or by the body timeout
        raise PlayError("the connection closed before the request body was complete",
                        400) from None
    if not body:
        raise PlayError("the request body is empty; send a JSON object")
    return await run_in_threadpool(parse_json, bytes(body))


_HOST = re.compile(r"(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9_.-]+))(?::[0-9]{1,5})?")


def host_name(host: str) -> str:
    """A Host header's name, lower case, without port, brackets or final dot; "" if invalid."""
    host = host.strip().lower()
    if host.count(":") > 1 and not host.startswith("["):  # a bare IPv6 address
        return host if isinstance(_ip(host), ipaddress.IPv6Address) else ""
    match = _HOST.fullmatch(host)
    if match is None:
        return ""
    if match["v6"] is not None:
        return match["v6"] if isinstance(_ip(match["v6"]), ipaddress.IPv6Address) else ""
    name = match["name"].removesuffix(".")
    return name if name.strip(".") and ".." not in name and not name.endswith(".") else ""


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


class HostCheck:
    """Refuse requests whose Host header is not an allowed name (DNS rebinding guard)."""

    # The address the connection arrived at (an IP literal) passes too: a rebinding attack
    # needs a name of its own in the Host header.

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str]) -> None:
        self.app = app
        self.allowed = {host_name(h) for h in allowed_hosts} - {""}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            header = Headers(scope=scope).get("host", "")
            name = host_name(header)
            server = scope.get("server")
            local = _ip(server[0]) if server else None
            problem = None
            if not name:
                problem = (f"the Host header {header[:100]!r} is not a host name or address "
                           "(with an optional :port)")
            elif name not in self.allowed and (local is None or _ip(name) != local):
                problem = (f"Host {name[:100]!r} is not allowed here; start moonriver-play with "
                           f"--allow-host {name[:100]} to allow it")
            if problem:
                await PlainTextResponse(problem, 400)(scope, receive, send)
                return
        await self.app(scope, receive, send)


SECURITY_HEADERS = [
    # Script only from this server's files (app.js): were text from a request or record ever
    # to reach the page as HTML, an inline handler in it would not run. No framing by other
    # sites (clicks tricked through an invisible frame), no guessing of content types.
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; "
                                 b"object-src 'none'; base-uri 'none'; form-action 'self'; "
                                 b"frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
]


class SecurityHeaders(AddHeaders):
    """Add :data:`SECURITY_HEADERS` to every response."""

    def extra(self, scope: Scope, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        names = {name.lower() for name, _ in headers}
        return [(n, v) for n, v in SECURITY_HEADERS if n not in names]


def record_key(record: Any) -> str:
    """A fingerprint of a game record (its canonical JSON)."""
    text = json.dumps(record, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def create_app(defaults: GameOptions | None = None,
               allowed_hosts: list[str] | None = None,
               data_files: Iterable[str] = (),
               max_seconds: float = play_session.MAX_REQUEST_SECONDS,
               max_simulations: int = play_session.MAX_REQUEST_SIMULATIONS,
               agent_threads: int = AGENT_THREADS,
               agent_threads_per_client: int | None = None) -> Starlette:
    """The ASGI app; ``defaults`` fill in a new-game request; ``allowed_hosts`` None: no check."""
    defaults = defaults or GameOptions()
    play_session.trusted_specs(defaults.opponents)  # two files of one name: refused before serving
    store = GameStore()
    package_data = [resolve_path(None, name) for name in
                    ("plots.csv", "boards.json", "partners.csv", "bonus_tiles.csv")]
    allowed_data = frozenset(str(Path(f).resolve()) for f in [*package_data, *data_files])
    agents = FairAgentPool(agent_threads, agent_threads_per_client)

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    async def rules(request: Request) -> Response:
        name = request.path_params.get("name", "rules")
        if name not in DOC_PAGES or not (DOCS / f"{name}.md").is_file():
            return PlainTextResponse(f"docs/{name[:40]}.md is not available in this copy", 404)
        mtime_ns = (DOCS / f"{name}.md").stat().st_mtime_ns
        return HTMLResponse(await run_in_threadpool(doc_page, name, mtime_ns))

    async def get_defaults(request: Request) -> Response:
        shown = map(play_session.shown_spec, defaults.opponents)
        specs = list(dict.fromkeys([*REQUEST_SPECS, *shown]))
        return JSONResponse({**defaults.to_dict(), "agent_specs": specs,
                             "max_seconds": max_seconds, "max_simulations": max_simulations})

    async def new_game(request: Request) -> Response:
        body = await _json_body(request, MAX_BODY)
        options = play_session.options_from_json(body, defaults, max_seconds, max_simulations)
        session = await run_in_threadpool(PlaySession, options)
        store.add(session, owner_of(request))
        return JSONResponse({"id": session.id}, status_code=201)

    async def game_state(request: Request) -> Response:
        session = store.get(request.path_params["id"], PlaySession)
        return JSONResponse(await run_in_threadpool(session.state))

    def decision_of(body: object, fields: tuple[str, ...]) -> int:
        if not isinstance(body, dict) or set(body) != set(fields):
            shape = ", ".join(f'"{f}": <{"action id" if f == "action" else "n"}>'
                              for f in fields)
            raise PlayError(f"the body must be a JSON object {{{shape}}}, where n is the "
                            "decision number of the state the move was chosen on")
        play_session.check_decision_number(body["decision"], required=True)
        decision: int = body["decision"]
        return decision

    async def game_action(request: Request) -> Response:
        session = store.get(request.path_params["id"], PlaySession)
        body = await _json_body(request, MAX_BODY)
        decision_of(body, ("action", "decision"))
        await run_in_threadpool(session.act, body)
        return JSONResponse(await run_in_threadpool(session.state))

    async def game_advance(request: Request) -> Response:
        session = store.get(request.path_params["id"], PlaySession)
        decision = decision_of(await _json_body(request, MAX_BODY), ("decision",))
        # Agents think on their own threads, shared fairly among clients: the request
        # threads stay free for readers, and one client cannot hold every agent thread.
        client = client_key(request.client.host if request.client else None)
        await agents.run(client, session.id, session.advance, decision)
        return JSONResponse(await run_in_threadpool(session.state))

    async def game_record(request: Request) -> Response:
        session = store.get(request.path_params["id"], PlaySession)
        record = await run_in_threadpool(session.record)
        store.remember_players(await run_in_threadpool(record_key, record), session)
        name = f"moonriver-{session.id}.json"
        return JSONResponse(record, headers={"Content-Disposition":
                                             f'attachment; filename="{name}"'})

    async def new_replay(request: Request) -> Response:
        record = await _json_body(request, MAX_RECORD_BODY)
        names, humans = None, None
        if isinstance(record, dict):
            names, humans = store.players.get(await run_in_threadpool(record_key, record),
                                              (None, None))
        replay = await run_in_threadpool(ReplaySession, record, allowed_data, names, humans,
                                         defaults.backend)
        store.add(replay, owner_of(request))
        return JSONResponse({"id": replay.id, "steps": replay.steps}, status_code=201)

    async def replay_state(request: Request) -> Response:
        replay = store.get(request.path_params["id"], ReplaySession)
        raw = request.query_params.get("step", "0")
        if not (raw.isascii() and raw.isdigit() and len(raw) <= 12):
            raise PlayError(f"step must be a whole number (0 to {replay.steps}), "
                            f"got {raw[:40]!r}")
        return JSONResponse(await run_in_threadpool(replay.state, int(raw)))

    async def play_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, PlayError)
        return JSONResponse({"error": str(exc)}, status_code=exc.status)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
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
    middleware = [Middleware(SecurityHeaders), Middleware(ClientCookie)]
    if allowed_hosts is not None:
        middleware.append(Middleware(HostCheck, allowed_hosts=allowed_hosts))
    app = Starlette(routes=routes, middleware=middleware,
                    exception_handlers={PlayError: play_error, HTTPException: http_error})
    app.state.store = store
    app.state.agents = agents
    return app
