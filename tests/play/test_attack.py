"""The play server against requests a browser would never send and against guessing: Host
headers that only look like an allowed name, and games whose hidden order could be found by
trying every seed."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2; httpx still works
    warnings.filterwarnings("ignore", message=".*httpx.*deprecated")
    from starlette.testclient import TestClient

from moonriver_env.play import GameOptions, PlaySession, create_app
from moonriver_env.play.server import host_name
from tests.helpers import watching_opens


@pytest.fixture()
def local() -> TestClient:
    app = create_app(GameOptions(), allowed_hosts=["127.0.0.1", "localhost", "::1"])
    return TestClient(app, base_url="http://127.0.0.1:8765", raise_server_exceptions=False)


@pytest.mark.parametrize("host", [
    "127.0.0.1:80@rebound.example", "[localhost]rebound.example", "[::1]rebound.example",
    "localhost:abc", "localhost:80:80", "localhost:", "localhost..", "local host",
    "localhost/x", "[localhost]", "[127.0.0.1", "localhost:123456", ":8765", ".",
])
def test_malformed_host_headers_are_refused(local, host) -> None:
    r = local.get("/api/defaults", headers={"host": host})
    assert r.status_code == 400, (host, r.text)
    assert "not a host name or address" in r.text


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:8765", "localhost", "LOCALHOST.",
                                  "localhost.:8765", "[::1]", "[::1]:8765", "::1"])
def test_allowed_hosts_in_every_form_are_served(local, host) -> None:
    assert local.get("/api/defaults", headers={"host": host}).status_code == 200, host


def test_host_names_are_parsed_strictly() -> None:
    assert host_name("LocalHost.:8765") == "localhost"
    assert host_name("[::1]:80") == "::1"
    assert host_name("127.0.0.1:80@evil.example") == ""
    assert host_name("[::1]evil.example") == ""


def test_a_malformed_allow_host_entry_allows_nothing_more() -> None:
    app = create_app(GameOptions(), allowed_hosts=["localhost", "bad host:x"])
    client = TestClient(app, raise_server_exceptions=False)
    assert client.get("/api/defaults", headers={"host": "localhost:abc"}).status_code == 400
    assert client.get("/api/defaults", headers={"host": "localhost"}).status_code == 200


def test_random_seeds_are_too_many_to_try() -> None:
    """A game started without a seed draws it from 63 bits: the visible setup cannot be
    matched against every possible seed to find the hidden box and pile order."""
    seeds = [PlaySession(GameOptions(opponents=("random",))).game.seed for _ in range(8)]
    assert max(seeds) >= 2**40, seeds  # all 8 below 2**40 by chance: about 2**-184


@pytest.mark.parametrize("method, path, headers", [
    ("get", "/", {}), ("get", "/game/x", {}), ("get", "/rules", {}),
    ("get", "/api/defaults", {}), ("get", "/static/app.js", {}), ("get", "/api/games/nope", {}),
    ("get", "/<img src=x onerror=alert(1)>.md", {}), ("post", "/api/games", {}),
    ("get", "/api/defaults", {"host": "rebound.example"}),
    ("get", "/api/defaults", {"host": "bad host"}),
])
def test_every_response_forbids_sniffing_framing_and_inline_script(local, method, path,
                                                                   headers) -> None:
    """Defence in depth: were server text ever to reach the page as HTML, it could not run
    script, and no other site may frame the page to trick clicks."""
    r = getattr(local, method)(path, headers=headers)
    assert r.headers["x-content-type-options"] == "nosniff", path
    policy = r.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy.split("script-src")[-1].split(";")[0]
    assert r.headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize("spec", [
    "pretrained:~/w.npz", "pretrained:file:///etc/passwd", "pretrained:http://127.0.0.1/w.npz",
    "pretrained:../weights/2p-base", "pretrained:2p-base/../2p-base", "pretrained:2p-base.npz",
    "pretrained:2P-BASE", "pretrained:2p\u2010base", "pretrained:2p-base\x00", "pretrained:",
    "pretrained+puct:/etc/passwd:5", "pretrained+puct:2p-base:2p-base:5", "policy:~",
    "rllib:.", "Random", " greedy", "greedy ", "\uff4dcts:5", "mcts:\uff15", "mcts:5000.0000001",
    "mcts:1e3s", "mcts:-1", "mcts:nan", "mcts:infs", "mcts:0s", "mcts:0", "mcts:+5", "mcts:0x10",
    "mcts:5\n", "mcts:10.000000000001s", "puct:5:5", "mcts+puct:5", "pretrained+mcts:5",
    "pretrained+search:/etc/passwd:5", "pretrained+search:~/w.npz", "pretrained+search:",
    "pretrained+search", "pretrained+search:0", "pretrained+search:1e3",
])
def test_request_specs_that_name_files_or_odd_budgets_are_refused_unread(spec) -> None:
    client = TestClient(create_app(GameOptions()), raise_server_exceptions=False)
    with watching_opens() as opened:
        r = client.post("/api/games", json={"opponents": [spec]})
    assert r.status_code == 400 and "is not allowed here" in r.json()["error"], (spec, r.text)
    assert opened == [], opened


def test_the_open_watch_sees_opens() -> None:
    with watching_opens() as opened:
        Path(__file__).read_bytes()
    assert opened == [__file__]


def test_no_response_of_a_running_game_holds_its_seed_or_hidden_order() -> None:
    """A game started without a seed: its seed (63 random bits, so a distinctive number) and
    its box and pile order appear in no answer the server gives while it runs."""
    client = TestClient(create_app(GameOptions(players=3, mode="legends")),
                        raise_server_exceptions=False)
    gid = client.post("/api/games", json={"players": 3, "mode": "legends", "humans": [0],
                                          "opponents": ["random"]}).json()["id"]
    game = client.app.state.store.get(gid, PlaySession).game
    texts = [client.get("/").text, client.get("/api/defaults").text]
    state = client.get(f"/api/games/{gid}").json()
    for _ in range(60):
        if state["human_turn"]:
            body = {"action": state["legal"][-1]["id"], "decision": state["decision"]}
            r = client.post(f"/api/games/{gid}/actions", json=body)
        else:
            r = client.post(f"/api/games/{gid}/advance", json={"decision": state["decision"]})
        state = r.json()
        texts += [r.text, client.get(f"/api/games/{gid}/record").text]
    assert not state["over"]
    runs = [run for order in (list(game.box), list(game.pile))  # drawn from the end
            for run in (order[:6], order[-6:], order[-6:][::-1])]
    assert all(len(run) == 6 for run in runs)
    hidden = [str(game.seed), *(json.dumps(run, separators=(",", ":"))[1:-1] for run in runs)]
    leaks = [(h, i) for h in hidden for i, text in enumerate(texts)
             if h in text.replace(" ", "")]
    assert not leaks, leaks
    assert json.loads(texts[-1])["seed"] is None


class _BrokenAgent:
    """An agent that fails (as a command-line agent for another player count might)."""

    name = "broken"

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reset."""

    def act(self, game: object, observation: object) -> int:
        raise RuntimeError("weights for 4 players, table of 2")


def test_an_agent_that_fails_is_a_json_error_and_the_game_goes_on() -> None:
    client = TestClient(create_app(GameOptions(humans=(), opponents=("random",))),
                        raise_server_exceptions=False)
    gid = client.post("/api/games", json={"humans": [], "seed": 3}).json()["id"]
    session = client.app.state.store.get(gid, PlaySession)
    working = session.seats
    session.seats = [_BrokenAgent(), _BrokenAgent()]
    before = client.get(f"/api/games/{gid}").json()
    r = client.post(f"/api/games/{gid}/advance", json={"decision": 0})
    assert r.status_code == 500
    message = r.json()["error"]
    assert "agent broken failed" in message and "RuntimeError" in message
    assert client.get(f"/api/games/{gid}").json() == before  # unchanged, not thinking
    session.seats = working
    r = client.post(f"/api/games/{gid}/advance", json={"decision": 0})
    assert r.status_code == 200 and r.json()["decision"] == 1
