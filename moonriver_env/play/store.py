"""The play server's games and replays, kept per client (a browser's cookie token within its
network). See docs/play.md (Games kept)."""

from __future__ import annotations

import re
import secrets
from collections import Counter, OrderedDict
from typing import Any, Generic, TypeVar

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from moonriver_env.play.fair import client_key
from moonriver_env.play.session import PlayError, PlaySession, ReplaySession

CLIENT_COOKIE = "moonriver_client"
MAX_GAMES_PER_CLIENT = 64  # one client's most recently used games kept
MAX_GAMES = 1024  # games kept in all (about 60 KB each)
MAX_REPLAYS_PER_CLIENT = 64  # likewise for replays, counted apart from games
MAX_REPLAYS = 1024  # (about 75 KB each: a record must replay, so its size is a game's)
REMEMBERED = 4096  # closed ids (and why) kept in mind for the 404's words
_TOKEN = re.compile(r"[0-9a-f]{32}")
Owner = tuple[str, str]  # (network, token; "" for requests without the cookie)
COMMAND_LINE: Owner = ("", "command line")  # the game moonriver-play starts with
T = TypeVar("T")


def cookie_token(headers: Headers) -> str | None:
    """The client token of a request's cookie; None when it has none or a malformed one."""
    for part in headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == CLIENT_COOKIE and _TOKEN.fullmatch(value):
            return value
    return None


def owner_of(request: Request) -> Owner:
    """The client a request comes from: its network and its cookie's token."""
    network = client_key(request.client.host if request.client else None)
    return network, cookie_token(request.headers) or ""


class AddHeaders:
    """ASGI middleware: each HTTP response gets the headers :meth:`extra` gives."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def extra(self, scope: Scope, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        """The headers to add to the response to ``scope``, which has ``headers``."""
        raise NotImplementedError

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Only an HTTP scope sends "http.response.start": others pass through unchanged.
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = message.get("headers", [])
                message = {**message, "headers": [*headers, *self.extra(scope, headers)]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class ClientCookie(AddHeaders):
    """Issue a client token cookie (HttpOnly, SameSite=Lax) to a request that carries none."""

    def extra(self, scope: Scope, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        if cookie_token(Headers(scope=scope)) is not None:
            return []
        return [(b"set-cookie", (f"{CLIENT_COOKIE}={secrets.token_hex(16)}; Path=/; HttpOnly; "
                                 "SameSite=Lax").encode())]


class Shelf(Generic[T]):
    """Items ("game" or "replay") by id, owned by clients: ``per_client`` each, ``total`` in all."""

    def __init__(self, what: str, per_client: int, total: int) -> None:
        if not 1 <= per_client <= total:
            raise ValueError(f"per_client must be from 1 to total ({total}), got {per_client}")
        self.what, self.per_client, self.total = what, per_client, total
        self.items: dict[str, tuple[Owner, T]] = {}
        self.used: dict[Owner, OrderedDict[str, None]] = {}  # least recently used first
        self.networks: Counter[str] = Counter()  # items held by each network
        self.arrived: dict[Owner, int] = {}  # when each client holding items came
        self._arrivals = 0
        self.dropped: OrderedDict[str, str] = OrderedDict()  # id -> why it was closed

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, key: str) -> T:
        return self.items[key][1]

    def values(self) -> list[T]:
        """The items, in no particular order."""
        return [item for _, item in self.items.values()]

    def add(self, owner: Owner, key: str, item: T) -> None:
        """Keep ``item`` as ``owner``'s most recently used, closing another to make room."""
        if owner not in self.used:
            self._arrivals += 1
            self.used[owner], self.arrived[owner] = OrderedDict(), self._arrivals
        self.items[key] = (owner, item)
        self.used[owner][key] = None
        self.networks[owner[0]] += 1
        if len(self.used[owner]) > self.per_client:
            self._close(owner, "own")
        elif len(self.items) > self.total:
            # the one added counts for its client, but is not closed
            closable = [o for o in self.used if o != owner or len(self.used[o]) > 1]
            # the client holding the most: its network's items, then its own, then the latest
            self._close(max(closable, key=lambda o: (self.networks[o[0]], len(self.used[o]),
                                                     self.arrived[o])), "total")

    def _close(self, owner: Owner, why: str) -> None:
        """Close ``owner``'s least recently used item."""
        key = next(iter(self.used[owner]))
        del self.items[key], self.used[owner][key]
        self.networks[owner[0]] -= 1
        if not self.used[owner]:
            del self.used[owner], self.arrived[owner]
        self.dropped[key] = why
        while len(self.dropped) > REMEMBERED:
            self.dropped.popitem(last=False)

    def get(self, key: str) -> T:
        """The item of id ``key``, now its owner's most recently used; else a 404 PlayError."""
        found = self.items.get(key)
        if found is None:
            raise PlayError(self._missing(key), 404)
        owner, item = found
        self.used[owner].move_to_end(key)
        return item

    def _missing(self, key: str) -> str:
        what, shown, why = self.what, repr(key[:40]), self.dropped.get(key)
        if why == "own":
            return (f"{what} {shown} was closed to make room: this server keeps the "
                    f"{self.per_client} most recently used {what}s of each client (browser), "
                    f"and this one was the least recently used of the client that started it")
        if why == "total":
            return (f"{what} {shown} was closed to make room: this server keeps {self.total} "
                    f"{what}s in all, and when full it closes the least recently used {what} "
                    "of the client holding the most")
        return (f"no {what} with id {shown} on this server (it never existed here, or the "
                "server was restarted since)")


class GameStore:
    """One server's games and replays (a Shelf each), and who played the games it recorded."""

    def __init__(self, games: tuple[int, int] = (MAX_GAMES_PER_CLIENT, MAX_GAMES),
                 replays: tuple[int, int] = (MAX_REPLAYS_PER_CLIENT, MAX_REPLAYS)) -> None:
        self.games: Shelf[PlaySession] = Shelf("game", *games)
        self.replays: Shelf[ReplaySession] = Shelf("replay", *replays)
        self.players: OrderedDict[str, tuple[list[str | None], list[int]]] = OrderedDict()

    def add(self, item: PlaySession | ReplaySession, owner: Owner = COMMAND_LINE) -> None:
        """Keep a game or replay that ``owner`` started."""
        if isinstance(item, PlaySession):
            self.games.add(owner, item.id, item)
        else:
            self.replays.add(owner, item.id, item)

    def get(self, key: str, kind: type[Any]) -> Any:
        """The game (``kind`` PlaySession) or replay (ReplaySession) of id ``key``."""
        return (self.games if kind is PlaySession else self.replays).get(key)

    def remember_players(self, key: str, session: PlaySession) -> None:
        """Who played a game whose record (fingerprint ``key``) this server wrote, for replays."""
        humans = [p for p, a in enumerate(session.seats) if a is None]
        self.players[key] = (list(session.names), humans)
        while len(self.players) > REMEMBERED:
            self.players.popitem(last=False)
