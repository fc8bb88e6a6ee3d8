"""The play server against hostile requests: no file named by a request is read, no code run,
no 5xx, bounded agents, games that stay responsive, stale moves refused, least recently used
games dropped (and the 404 saying so)."""

from __future__ import annotations

import copy
import json
import shutil
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

import httpx

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2; httpx still works
    warnings.filterwarnings("ignore", message=".*httpx.*deprecated")
    from starlette.testclient import TestClient

from moonriver_env.moonriver.rules import Game, GameConfig
from moonriver_env.play import GameOptions, PlaySession, create_app
from moonriver_env.play.session import PlayError
from moonriver_env.play.store import (
    CLIENT_COOKIE,
    MAX_GAMES_PER_CLIENT,
    MAX_REPLAYS_PER_CLIENT,
    GameStore,
)
from tests.helpers import watching_opens

JSON = {"content-type": "application/json"}
WEIGHTS = Path(__file__).resolve().parents[2] / "agents" / "weights" / "2p-base.npz"
PLOTS = (Path(__file__).resolve().parents[2] / "moonriver_env" / "moonriver" / "rules" / "data"
         / "plots.csv")



@pytest.fixture()
def client() -> TestClient:
    app = create_app(GameOptions(players=2, humans=(0,), opponents=("greedy",)))
    return TestClient(app, raise_server_exceptions=False)


def new_game(client, **body) -> str:
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()["id"]


def finished_record(seed: int = 5, players: int = 2, config: GameConfig | None = None) -> dict:
    game = Game(config or GameConfig(num_players=players), seed=seed)
    rng = np.random.default_rng(seed)
    while not game.is_over:
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(len(ids))]))
    return game.to_record()


# ---------------------------------------------------------------- 1. agent specs naming files
def _attacker_files(tmp_path: Path) -> dict[str, str]:
    weights = tmp_path / "w.npz"
    shutil.copy(WEIGHTS, weights)  # real weights: the old server loaded them
    (tmp_path / "m.zip").write_bytes(b"PK\x05\x06" + bytes(18))  # an (empty) zip
    return {"policy": f"policy:{tmp_path / 'm.zip'}",
            "policy-sample": f"policy-sample:{tmp_path / 'm.zip'}",
            "rllib": f"rllib:{tmp_path}", "rllib-sample": f"rllib-sample:{tmp_path}",
            "pretrained": f"pretrained:{weights}",
            "pretrained+puct": f"pretrained+puct:{weights}:10",
            "pretrained+puct-variant": f"pretrained+puct:{weights}:2p-base:10"}


@pytest.mark.parametrize("kind", ["policy", "policy-sample", "rllib", "rllib-sample",
                                  "pretrained", "pretrained+puct", "pretrained+puct-variant"])
def test_a_request_cannot_name_agent_files(client, tmp_path, kind) -> None:
    spec = _attacker_files(tmp_path)[kind]
    with watching_opens() as opened:
        r = client.post("/api/games", json={"opponents": [spec]})
    assert r.status_code == 400, r.text
    assert "can be given only on the command line" in r.json()["error"]
    assert not [p for p in opened if p.startswith(str(tmp_path))], opened


def test_agent_files_given_on_the_command_line_may_be_chosen_by_file_name(tmp_path) -> None:
    """The page shows a command-line spec with its file's name only, and a request chooses
    it by that name; the path itself, arriving over the network, is refused."""
    spec = _attacker_files(tmp_path)["pretrained"]
    client = TestClient(create_app(GameOptions(opponents=(spec,))))
    assert client.post("/api/games", json={}).status_code == 201
    assert client.post("/api/games", json={"opponents": ["pretrained:w.npz"]}).status_code == 201
    specs = client.get("/api/defaults").json()["agent_specs"]
    assert "pretrained:w.npz" in specs and "random" in specs and not any("PATH" in s for s in specs)
    r = client.post("/api/games", json={"opponents": [spec]})
    assert r.status_code == 400 and "can be given only on the command line" in r.json()["error"]


@pytest.mark.parametrize("spec, allowed", [
    ("mcts:1e308s", False), ("mcts:10.01s", False), ("mcts:5001", False),
    ("puct:100000", False), ("pretrained+puct:2p-base:60s", False), ("mcts:nans", False),
    ("mcts:1_000", False), ("pretrained:../../x", False), ("random:1", False),
    ("mcts:10s", True), ("mcts:5000", True), ("puct:0.5s", True), ("mcts", True),
    ("pretrained:2p-base", True), ("pretrained+puct:2p-base:5", True), ("greedy", True),
    ("pretrained+search:999999", False), ("pretrained+search:10.5s", False),
    ("pretrained+search:50", True), ("pretrained+search:0.5s", True), ("pretrained", True),
])
def test_request_budgets_are_bounded(client, spec, allowed) -> None:
    r = client.post("/api/games", json={"opponents": [spec]})
    assert r.status_code == (201 if allowed else 400), r.text
    if not allowed:
        assert "is not allowed here" in r.json()["error"]


@pytest.mark.parametrize("backend", ["core", "python"])
def test_every_agent_thinks_at_most_the_servers_time_limit(backend) -> None:
    """A server whose agents may think 1e-9 s a decision (passed at the first check on any
    machine): a command-line puct:1000000 and a request's pretrained+puct:5000, mcts:5000 and
    pretrained+search:5000 each move after one simulation (counted, so no wall-clock bound;
    before, they ran their whole budget: pretrained+puct:5000 took 15-17 s a decision)."""
    app = create_app(GameOptions(players=4, humans=(), opponents=("puct:1000000",),
                                 backend=backend, time_limit=1e-9))
    client = TestClient(app)
    for spec in ("puct:1000000", "pretrained+puct:5000", "mcts:5000", "pretrained+search:5000"):
        gid = new_game(client, players=4, humans=[], opponents=[spec], seed=3)
        agents = app.state.store.get(gid, PlaySession).seats
        state = client.get(f"/api/games/{gid}").json()
        for _ in range(12):  # past the forced decisions, which need no search
            r = client.post(f"/api/games/{gid}/advance", json={"decision": state["decision"]})
            assert r.status_code == 200, r.text
            state = r.json()
        counts = [agent.last_simulations for agent in agents]
        assert set(counts) <= {0, 1} and 1 in counts, (spec, counts)


def test_command_line_budgets_are_not_bounded() -> None:
    client = TestClient(create_app(GameOptions(opponents=("mcts:60s",))))
    assert client.post("/api/games", json={"opponents": ["mcts:60s"]}).status_code == 201
    assert client.post("/api/games", json={"opponents": ["mcts:61s"]}).status_code == 400


# ---------------------------------------------------------------- 2. records naming files
def test_a_record_naming_data_files_is_refused_without_reading_them(client, tmp_path) -> None:
    record = finished_record()
    secret = tmp_path / "plots.csv"
    secret.write_text("TOPSECRET,first line\n")
    paths = [str(secret), str(tmp_path / "missing.csv"), str(tmp_path), "/etc/passwd",
             "relative.csv", 7, ["x"]]
    messages = set()
    with watching_opens() as opened:
        for field in ("plots_file", "boards_file", "partners_file", "bonus_file"):
            for path in paths:
                tampered = copy.deepcopy(record)
                tampered["config"][field] = path
                r = client.post("/api/replays", json=tampered)
                assert r.status_code == 400, r.text
                messages.add(r.json()["error"])
    assert len(messages) == 1, messages  # the same words whatever the file
    (message,) = messages
    assert "package's own data" in message and "TOPSECRET" not in message
    assert not [p for p in opened if p.startswith(str(tmp_path)) or p == "/etc/passwd"], opened


def test_data_files_named_on_the_command_line_may_be_replayed(tmp_path) -> None:
    plots = tmp_path / "plots.csv"
    shutil.copy(PLOTS, plots)
    record = finished_record(config=GameConfig(num_players=2, plots_file=str(plots)))
    assert TestClient(create_app()).post("/api/replays", json=record).status_code == 400
    client = TestClient(create_app(data_files=[str(plots)]))
    assert client.post("/api/replays", json=record).status_code == 201


# ---------------------------------------------------------------- 5. /advance checks
def test_advance_refuses_other_sites_and_other_content_types(client) -> None:
    gid = new_game(client, humans=[], opponents=["random"], seed=3)
    before = client.get(f"/api/games/{gid}").json()
    url, body = f"/api/games/{gid}/advance", json.dumps({"decision": before["decision"]})
    evil = {"origin": "http://evil.example"}
    r = client.post(url, content=body, headers={"content-type": "text/plain", **evil})
    assert r.status_code == 403 and "other sites" in r.json()["error"]
    r = client.post(url, content=body, headers={"content-type": "text/plain"})
    assert r.status_code == 415 and "application/json" in r.json()["error"]
    r = client.post(url, content=body, headers={**JSON, **evil})
    assert r.status_code == 403
    r = client.post(url, content=body, headers={**JSON, "origin": "http://testserver.evil"})
    assert r.status_code == 403
    assert client.get(f"/api/games/{gid}").json() == before
    r = client.post(url, content=body, headers={**JSON, "origin": "http://testserver"})
    assert r.status_code == 200 and r.json()["decision"] == before["decision"] + 1


# ---------------------------------------------------------------- 7. no 5xx
def test_deep_huge_and_odd_inputs_are_4xx_json(client) -> None:
    gid = new_game(client, seed=3)
    state = client.get(f"/api/games/{gid}").json()
    actions, deep = f"/api/games/{gid}/actions", "[" * 5000 + "]" * 5000
    cases = [
        ("post", actions, '{"action": ' + deep + ', "decision": 0}'),
        ("post", actions, '{"action": 1' + "0" * 4999 + ', "decision": 0}'),
        ("post", actions, '{"action": NaN, "decision": 0}'),
        ("post", actions, '{"action": 1, "decision": 1e999}'),
        ("post", actions, '{"action": 1, "decision": ' + "9" * 4000 + "}"),
        ("post", "/api/replays", "[" * 100_000 + "]" * 100_000),
        ("post", "/api/replays", '{"a":' * 50_000 + "1" + "}" * 50_000),
        ("post", "/api/replays", json.dumps(_nested(40))),
        ("post", "/api/games", '{"seed": ' + "9" * 5000 + "}"),
        ("post", "/api/games", '{"seed": 1e400}'),
        ("post", "/api/games", '{"players": Infinity}'),
        ("post", "/api/games", json.dumps({"mode": _nested(30)})),
        ("post", "/api/games", json.dumps({"scenario": [1]})),
        ("post", "/api/games", json.dumps({"players": 2.0})),
        ("post", "/api/games", json.dumps({"opponents": [_nested(20)]})),
        ("post", f"/api/games/{gid}/advance", '{"decision": ' + deep + "}"),
    ]
    for method, url, body in cases:
        r = getattr(client, method)(url, content=body.encode(), headers=JSON)
        assert 400 <= r.status_code < 500, (url, body[:60], r.status_code, r.text[:200])
        assert isinstance(r.json()["error"], str)
    assert client.get(f"/api/games/{gid}").json() == state
    rid = client.post("/api/replays", json=finished_record()).json()["id"]
    for step in ("%C2%B2", "%D9%A3", "-1", "1.5", "9" * 40, "%00", "1e3"):
        r = client.get(f"/api/replays/{rid}?step={step}")
        assert r.status_code == 400, (step, r.status_code)
        assert "step must be a whole number" in r.json()["error"]


def _nested(depth: int) -> list:
    out: list = []
    for _ in range(depth):
        out = [out]
    return out


def test_mangled_records_are_4xx(client) -> None:
    """Fields of a record replaced by values of other types: refused (or, where the value
    happens to be the recorded one, opened), never a server error."""
    record = finished_record(seed=8)
    odd = [None, True, -1, 10**30, 1.5, "x", [], {}, [None], {"type": "decision"}]
    paths = [("config",), ("config", "num_players"), ("config", "boards"),
             ("config", "scenario"), ("config", "mode"), ("config", "auto_forced"), ("seed",),
             ("events",), ("events", 0), ("events", 3), ("events", 3, "action"),
             ("events", 3, "player"), ("events", 0, "boards"), ("final",), ("scores",),
             ("version",), ("format",), ("winners",), ("over",)]
    for path in paths:
        for value in odd:
            tampered = copy.deepcopy(record)
            target = tampered
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value
            r = client.post("/api/replays", json=tampered)
            assert r.status_code in (201, 400), (path, value, r.status_code, r.text[:200])


# ---------------------------------------------------------------- 8. least recently used
def test_games_are_dropped_least_recently_used_and_replays_counted_apart(client) -> None:
    playing = new_game(client, seed=1)
    untouched = new_game(client, seed=2)
    for i in range(MAX_GAMES_PER_CLIENT):
        new_game(client, seed=10 + i)
        if i % 10 == 0:  # the game being played keeps being looked at
            assert client.get(f"/api/games/{playing}").status_code == 200
    assert client.get(f"/api/games/{playing}").status_code == 200
    r = client.get(f"/api/games/{untouched}")
    assert r.status_code == 404
    message = r.json()["error"]
    assert "closed to make room" in message
    assert f"{MAX_GAMES_PER_CLIENT} most recently used games of each client" in message
    record = finished_record()
    first_replay = client.post("/api/replays", json=record).json()["id"]
    for _ in range(MAX_REPLAYS_PER_CLIENT):
        assert client.post("/api/replays", json=record).status_code == 201
    assert client.get(f"/api/games/{playing}").status_code == 200  # replays do not push it out
    r = client.get(f"/api/replays/{first_replay}")
    assert r.status_code == 404 and "replay" in r.json()["error"]
    assert "closed to make room" in r.json()["error"]
    r = client.get("/api/games/0123456789abcdef")
    assert r.status_code == 404 and "never existed" in r.json()["error"]


def test_one_clients_games_and_replays_never_close_anothers() -> None:
    """Client A starts 70 games and 70 replays; client B's game and replay stay open (before,
    the server kept the 64 most recent of everyone's together, and B's answered 404)."""
    app = create_app(GameOptions(players=2, humans=(0,), opponents=("greedy",)))
    a, b = TestClient(app), TestClient(app)
    for browser in (a, b):  # a browser loads the page first, which gives it its cookie
        assert browser.get("/").status_code == 200
    b_game = new_game(b, seed=1)
    record = finished_record()
    b_replay = b.post("/api/replays", json=record).json()["id"]
    a_games = [new_game(a, seed=10 + i) for i in range(70)]
    a_replays = [a.post("/api/replays", json=record).json()["id"] for _ in range(70)]
    assert b.get(f"/api/games/{b_game}").status_code == 200
    assert b.get(f"/api/replays/{b_replay}?step=1").status_code == 200
    r = a.get(f"/api/games/{a_games[0]}")  # A's share is bounded: its own oldest closed
    assert r.status_code == 404 and "of the client that started it" in r.json()["error"]
    assert a.get(f"/api/games/{a_games[-1]}").status_code == 200
    assert a.get(f"/api/replays/{a_replays[0]}").status_code == 404
    assert b.get(f"/api/games/{a_games[-1]}").status_code == 200  # a game's link works for all
    assert a.cookies[CLIENT_COOKIE] != b.cookies[CLIENT_COOKIE]  # two browsers, two clients


def test_requests_without_the_cookie_are_one_client() -> None:
    """A script that drops the cookie is one client (per network), not a new one per game:
    its games close its own, never a browser's."""
    app = create_app(GameOptions(players=2, humans=(0,), opponents=("greedy",)))
    browser, script = TestClient(app), TestClient(app)
    assert browser.get("/").status_code == 200
    kept = new_game(browser, seed=1)
    made = []
    for i in range(MAX_GAMES_PER_CLIENT + 6):
        script.cookies.clear()
        made.append(new_game(script, seed=10 + i))
    assert browser.get(f"/api/games/{kept}").status_code == 200
    script.cookies.clear()
    assert script.get(f"/api/games/{made[0]}").status_code == 404
    assert script.get(f"/api/games/{made[-1]}").status_code == 200


def test_a_full_server_closes_the_games_of_the_client_holding_the_most() -> None:
    """With room for 6 games in all (4 a client): a newcomer closes the least recently used
    game of the client holding the most; once the three networks hold 2 each, new tokens from
    one network close that network's games, never the others' (nor the game just started)."""
    store = GameStore(games=(4, 6))
    sessions = [PlaySession(GameOptions(opponents=("random",), seed=i)) for i in range(12)]
    ids = [s.id for s in sessions]
    greedy, modest, flood = ("10.0.0.1", "a" * 32), ("10.0.0.2", "b" * 32), "10.0.0.3"
    for s in sessions[:4]:
        store.add(s, greedy)
    store.add(sessions[4], modest)
    store.add(sessions[5], modest)
    store.get(ids[0], PlaySession)  # greedy's first game is its most recently used now
    store.add(sessions[6], (flood, "c" * 32))  # full: greedy (4) holds the most
    with pytest.raises(PlayError, match="keeps 6 games in all"):
        store.get(ids[1], PlaySession)
    for k, s in enumerate(sessions[7:11]):  # one game each from new tokens of one network
        store.add(s, (flood, f"{k:032x}"))
    for i in (0, 4, 5):  # greedy's most recent and modest's two are kept
        assert store.get(ids[i], PlaySession) is sessions[i]
    assert [i for i in range(11) if ids[i] in store.games.items] == [0, 3, 4, 5, 6, 10]


# ---------------------------------------------------------------- 9. stale moves
def test_a_move_chosen_on_an_old_state_is_refused(client) -> None:
    gid = new_game(client, players=2, humans=[0, 1], seed=4)
    state = client.get(f"/api/games/{gid}").json()
    assert state["decision"] == 0
    first = client.post(f"/api/games/{gid}/actions",
                        json={"action": state["legal"][0]["id"], "decision": 0})
    assert first.status_code == 200 and first.json()["decision"] == 1
    legal_now = first.json()["legal"][0]["id"]
    r = client.post(f"/api/games/{gid}/actions", json={"action": legal_now, "decision": 0})
    assert r.status_code == 409 and "decision 0" in r.json()["error"]
    assert client.get(f"/api/games/{gid}").json()["decision"] == 1


def _serve(app) -> Iterator[str]:
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(600):  # up to 30 s for the server to start
        if server.started or not thread.is_alive():
            break
        time.sleep(0.05)
    assert server.started, "the play server did not start"
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture()
def live() -> Iterator[tuple[str, object]]:
    pytest.importorskip("uvicorn")
    app = create_app(GameOptions(players=2, humans=(), opponents=("random",)))
    for url in _serve(app):
        yield url, app


def test_concurrent_moves_on_one_state_play_exactly_one(live) -> None:
    url, _ = live
    with httpx.Client(base_url=url, timeout=60) as http:
        gid = http.post("/api/games", json={"players": 2, "humans": [0, 1], "seed": 6}).json()
        gid = gid["id"]
        rng = np.random.default_rng(0)
        state = http.get(f"/api/games/{gid}").json()
        while len(state["legal"]) < 20:  # play on to a decision with many choices
            move = state["legal"][int(rng.integers(len(state["legal"])))]["id"]
            state = http.post(f"/api/games/{gid}/actions",
                              json={"action": move, "decision": state["decision"]}).json()
    moves = [m["id"] for m in state["legal"][:20]]
    statuses: list[int] = []

    def send(action: int) -> None:
        with httpx.Client(base_url=url, timeout=60) as own:
            statuses.append(own.post(f"/api/games/{gid}/actions", json={
                "action": action, "decision": state["decision"]}).status_code)

    threads = [threading.Thread(target=send, args=(m,)) for m in moves]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(statuses) == [200] + [409] * 19, statuses
    with httpx.Client(base_url=url, timeout=60) as http:
        assert http.get(f"/api/games/{gid}").json()["decision"] == state["decision"] + 1


# ---------------------------------------------------------------- 6. a thinking agent
class BlockingAgent:
    """An agent that thinks until the test lets it go (no wall-clock time involved)."""

    name = "blocking"

    def __init__(self) -> None:
        self.thinking = threading.Event()
        self.release = threading.Event()

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reset."""

    def act(self, game: Game, observation: object) -> int:
        self.thinking.set()
        self.release.wait(120)
        return int(game.legal_action_ids()[0])


def test_readers_and_other_games_are_answered_while_an_agent_thinks(live) -> None:
    url, app = live
    with httpx.Client(base_url=url, timeout=60) as http:
        slow = http.post("/api/games", json={"seed": 1}).json()["id"]
        other = http.post("/api/games", json={"seed": 2}).json()["id"]
        agent = BlockingAgent()
        app.state.store.get(slow, PlaySession).seats = [agent, agent]
        before = http.get(f"/api/games/{slow}").json()
        before.setdefault("decision", 0)  # (a server without decision numbers ignores it)
    answers: list[httpx.Response] = []

    def post_advance() -> None:
        with httpx.Client(base_url=url, timeout=120) as own:
            answers.append(own.post(f"/api/games/{slow}/advance",
                                    json={"decision": before["decision"]}))

    mover = threading.Thread(target=post_advance)
    mover.start()
    try:
        assert agent.thinking.wait(60), "the agent was never asked to move"
        states: list[dict] = []
        errors: list[str] = []

        def read() -> None:
            try:  # the timeout only bounds a failing run: a working server answers at once
                with httpx.Client(base_url=url, timeout=20) as own:
                    states.append(own.get(f"/api/games/{slow}").json())
            except httpx.HTTPError as exc:
                errors.append(repr(exc))

        readers = [threading.Thread(target=read) for _ in range(50)]
        for t in readers:
            t.start()
        for t in readers:
            t.join(60)
        assert not errors, errors[:3]
        assert len(states) == 50
        assert all(s["thinking"] and s["decision"] == before["decision"] for s in states)
        with httpx.Client(base_url=url, timeout=20) as http:
            r = http.post(f"/api/games/{slow}/advance", json={"decision": before["decision"]})
            assert r.status_code == 409 and "already choosing" in r.json()["error"]
            for _ in range(5):  # another game goes on meanwhile
                other_state = http.get(f"/api/games/{other}").json()
                assert not other_state["thinking"]
                r = http.post(f"/api/games/{other}/advance",
                              json={"decision": other_state["decision"]})
                assert r.status_code == 200, r.text
    finally:
        agent.release.set()
        mover.join(120)
    assert answers and answers[0].status_code == 200, answers
    done = answers[0].json()
    assert done["decision"] == before["decision"] + 1 and not done["thinking"]


# ---------------------------------------------------------------- 10. replay labels
def test_a_replay_of_a_game_played_here_knows_the_players(client) -> None:
    gid = new_game(client, players=2, humans=[1], opponents=["random"], seed=12)
    state = client.get(f"/api/games/{gid}").json()
    while not state["over"]:
        if state["human_turn"]:
            body = {"action": state["legal"][0]["id"], "decision": state["decision"]}
            state = client.post(f"/api/games/{gid}/actions", json=body).json()
        else:
            state = client.post(f"/api/games/{gid}/advance",
                                json={"decision": state["decision"]}).json()
    record = client.get(f"/api/games/{gid}/record").json()
    made = client.post("/api/replays", json=record).json()
    end = client.get(f"/api/replays/{made['id']}?step={made['steps']}").json()
    assert end["names"] == ["random", "you"] and end["humans"] == [1]
    assert "P1 (you)" in end["svg"] and "P0 (random)" in end["svg"]
    other = client.post("/api/replays", json=finished_record(seed=3)).json()
    start = client.get(f"/api/replays/{other['id']}?step=0").json()
    assert start["names"] == [None, None] and start["humans"] == []
    assert "(P0)" not in start["svg"] and "(P1)" not in start["svg"]


def test_a_record_naming_the_package_data_by_path_replays(client) -> None:
    record = finished_record(config=GameConfig(num_players=2, plots_file=str(PLOTS)))
    assert record["config"]["plots_file"] == str(PLOTS.resolve())
    assert client.post("/api/replays", json=record).status_code == 201
