"""The play server's HTTP API: games, moves checked by the engine, refusals, records, replays."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2; httpx still works
    warnings.filterwarnings("ignore", message=".*httpx.*deprecated")
    from starlette.testclient import TestClient

from moonriver_env.moonriver.render.svg import table_svg
from moonriver_env.moonriver.rules import ActionCodec, Game, GameConfig, Phase
from moonriver_env.play import GameOptions, create_app
from moonriver_env.play.clicks import action_paths
from moonriver_env.play.server import MAX_BODY

JSON = {"content-type": "application/json"}


@pytest.fixture()
def client() -> TestClient:
    return TestClient(create_app(GameOptions(players=2, humans=(0,), opponents=("greedy",))))


def new_game(client: TestClient, **body) -> str:
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()["id"]


def advance(client: TestClient, gid: str, state: dict | None = None):
    """POST advance at the state's decision number (the state is read when not given)."""
    if state is None:
        state = client.get(f"/api/games/{gid}").json()
    return client.post(f"/api/games/{gid}/advance", json={"decision": state["decision"]})


def act(client: TestClient, gid: str, state: dict, action: int):
    """POST a human move chosen on ``state``."""
    return client.post(f"/api/games/{gid}/actions",
                       json={"action": action, "decision": state["decision"]})


def to_human_turn(client: TestClient, gid: str) -> dict:
    state = client.get(f"/api/games/{gid}").json()
    while not state["human_turn"] and not state["over"]:
        r = advance(client, gid, state)
        assert r.status_code == 200, r.text
        state = r.json()
    return state


def record_of(client: TestClient, gid: str) -> dict:
    r = client.get(f"/api/games/{gid}/record")
    assert r.status_code == 200
    assert "attachment" in r.headers["content-disposition"]
    return r.json()


def test_full_game_through_the_api_matches_the_engine(client: TestClient) -> None:
    gid = new_game(client, players=2, seed=11)
    rng = np.random.default_rng(0)
    state = to_human_turn(client, gid)
    moves = 0
    while not state["over"]:
        legal = state["legal"]
        assert legal and all(m["paths"] for m in legal)
        choice = legal[int(rng.integers(len(legal)))]
        r = act(client, gid, state, choice["id"])
        assert r.status_code == 200, r.text
        assert r.json()["last"]["text"] == choice["text"]
        moves += 1
        state = to_human_turn(client, gid)
    assert moves > 20
    record = record_of(client, gid)
    replayed = Game.from_record(record)
    assert [s["total"] for s in state["scores"]] == [s.total for s in replayed.scores()]
    assert state["winners"] == replayed.winners()
    humans = {e["player"] for e in record["events"] if e["type"] == "decision"}
    assert humans == {0, 1}


@pytest.mark.parametrize("body, status, words", [
    ({"action": "pass"}, 400, "integer action id"),
    ({"action": 1.5}, 400, "integer action id"),
    ({"action": True}, 400, "integer action id"),
    ({"action": -1}, 400, "action ids run from 0"),
    ({"action": 999999}, 400, "action ids run from 0"),
    ({"action": 10**4000}, 400, "action ids run from 0"),
    ({"action": 1, "decision": "x"}, 400, "'decision' must be the state's decision number"),
    ({"action": 1, "decision": None}, 400, "'decision' must be the state's decision number"),
    ({"action": 7}, 400, '{"action": <action id>, "decision": <n>}'),  # no decision
    ({"move": 3}, 400, '{"action"'),
    ([1, 2], 400, '{"action"'),
])
def test_malformed_actions_are_refused_and_change_nothing(client: TestClient, body, status,
                                                          words) -> None:
    gid = new_game(client, seed=3)
    before = to_human_turn(client, gid)
    if isinstance(body, dict) and "action" in body and len(body) == 1 and body["action"] != 7:
        body = {**body, "decision": before["decision"]}
    r = client.post(f"/api/games/{gid}/actions", json=body)
    assert r.status_code == status
    assert words in r.json()["error"]
    assert client.get(f"/api/games/{gid}").json() == before


def test_illegal_action_is_refused_with_the_engine_reason(client: TestClient) -> None:
    gid = new_game(client, seed=3)
    before = to_human_turn(client, gid)
    legal = {m["id"] for m in before["legal"]}
    illegal = next(a for a in range(ActionCodec.num_actions) if a not in legal)
    record = record_of(client, gid)
    r = act(client, gid, before, illegal)
    assert r.status_code == 409
    assert "illegal action" in r.json()["error"] and "Legal now" in r.json()["error"]
    assert client.get(f"/api/games/{gid}").json() == before
    assert record_of(client, gid) == record


def test_not_json_empty_and_oversized_bodies_are_refused(client: TestClient) -> None:
    gid = new_game(client, seed=3)
    before = to_human_turn(client, gid)
    url = f"/api/games/{gid}/actions"
    r = client.post(url, content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]
    r = client.post(url, content=b"", headers=JSON)
    assert r.status_code == 400 and "empty" in r.json()["error"]
    big = json.dumps({"action": 1, "pad": "x" * (MAX_BODY + 10)}).encode()
    r = client.post(url, content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "limit" in r.json()["error"]

    def chunks():  # no Content-Length: the limit is enforced while reading
        for _ in range(40):
            yield b" " * 1024

    r = client.post(url, content=chunks(), headers=JSON)
    assert r.status_code == 413
    r = client.post("/api/replays", content=b"x" * (5 * 1024 * 1024), headers=JSON)
    assert r.status_code == 413
    assert client.get(f"/api/games/{gid}").json() == before


def test_cross_site_and_non_json_requests_are_refused(client: TestClient) -> None:
    gid = new_game(client, seed=3)
    before = to_human_turn(client, gid)
    action = json.dumps({"action": before["legal"][0]["id"], "decision": before["decision"]})
    url = f"/api/games/{gid}/actions"
    r = client.post(url, content=action, headers={"content-type": "text/plain"})
    assert r.status_code == 415 and "application/json" in r.json()["error"]
    r = client.post(url, content=action, headers={**JSON, "origin": "http://evil.example"})
    assert r.status_code == 403 and "other sites" in r.json()["error"]
    assert client.get(f"/api/games/{gid}").json() == before
    r = client.post(url, content=action, headers={**JSON, "origin": "http://testserver"})
    assert r.status_code == 200


def test_allowed_hosts_refuse_other_host_names() -> None:
    local = TestClient(create_app(allowed_hosts=["127.0.0.1", "localhost"]),
                       base_url="http://127.0.0.1:8765")
    assert local.get("/api/defaults").status_code == 200
    assert local.get("/api/defaults", headers={"host": "rebound.example"}).status_code == 400


def test_unknown_ids_are_404(client: TestClient) -> None:
    for method, url in (("get", "/api/games/nope"), ("post", "/api/games/nope/advance"),
                        ("get", "/api/games/nope/record"), ("get", "/api/replays/nope")):
        r = getattr(client, method)(url)
        assert r.status_code == 404, url
        assert "nope" in r.json()["error"]
    r = client.post("/api/games/nope/actions", json={"action": 0, "decision": 0})
    assert r.status_code == 404
    assert client.get("/api/no-such-route").status_code == 404


def test_turn_order_is_enforced(client: TestClient) -> None:
    gid = new_game(client, players=2, humans=[1], seed=8)
    state = client.get(f"/api/games/{gid}").json()
    # find a moment where the agent (seat 0) is to act
    while state["human_turn"]:
        state = act(client, gid, state, state["legal"][0]["id"]).json()
    r = act(client, gid, state, 0)
    assert r.status_code == 409 and "not a human's turn" in r.json()["error"]
    state = to_human_turn(client, gid)
    r = advance(client, gid, state)
    assert r.status_code == 409 and "human" in r.json()["error"]
    assert client.get(f"/api/games/{gid}").json() == state


@pytest.mark.parametrize("body, words", [
    ({"players": 5}, "players must be 2, 3 or 4"),
    ({"players": 3, "humans": [3]}, "seat 3 does not exist"),
    ({"mode": "advanced"}, "mode must be one of"),
    ({"mode": "base", "scenario": 2}, "scenario applies only"),
    ({"opponents": ["grandmaster"]}, "agent spec 'grandmaster' is not allowed here"),
    ({"players": 4, "opponents": ["greedy", "random"]}, "one opponent spec for every agent seat"),
    ({"humans": "0"}, "'humans' must be a list"),
    ({"seed": -4}, "seed must be a whole number from 0"),
    ({"seed": "abc"}, "seed must be a whole number from 0"),
    ({"humans": [None]}, "'humans' must be a list of seat numbers 0 to 3, got [null]"),
    ({"colour": "red"}, "unknown fields"),
])
def test_bad_new_game_options_are_refused(client: TestClient, body, words) -> None:
    r = client.post("/api/games", json=body)
    assert r.status_code == 400
    assert words in r.json()["error"]


def test_several_games_at_once_are_independent(client: TestClient) -> None:
    a = new_game(client, seed=1)
    b = new_game(client, players=4, mode="legends", humans=[], opponents=["random"], seed=2)
    sa = to_human_turn(client, a)
    for _ in range(10):
        assert advance(client, b).status_code == 200
    assert client.get(f"/api/games/{a}").json() == sa
    sb = client.get(f"/api/games/{b}").json()
    assert len(sb["scores"]) == 4 and sb["options"]["mode"] == "legends"


def test_replay_steps_forward_and_back(client: TestClient) -> None:
    game = Game(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(30):
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(len(ids))]))
    r = client.post("/api/replays", json=game.to_record(include_seed=True))
    assert r.status_code == 201
    rid, steps = r.json()["id"], r.json()["steps"]
    assert steps == 30
    s5 = client.get(f"/api/replays/{rid}?step=5").json()
    s6 = client.get(f"/api/replays/{rid}?step=6").json()
    decisions = [e for e in game.to_record()["events"] if e["type"] == "decision"]
    assert s6["step"] == 6 and s6["last"]["action"] == decisions[5]["action"]
    back = client.get(f"/api/replays/{rid}?step=5").json()
    assert back == s5 and s5["svg"] != s6["svg"]
    end = client.get(f"/api/replays/{rid}?step=30").json()
    assert end["svg"] == table_svg(game, end["names"])
    assert client.get(f"/api/replays/{rid}?step=31").status_code == 400
    assert client.get(f"/api/replays/{rid}?step=x").status_code == 400
    tampered = game.to_record(include_seed=True)
    tampered["seed"] += 1
    r = client.post("/api/replays", json=tampered)
    assert r.status_code == 400 and "not a valid game record" in r.json()["error"]


def _svg_keys(svg: str) -> set[str]:
    return set(re.findall(r'data-key="([^"]+)"', svg))


def test_every_legal_action_has_a_unique_click_path_on_the_table() -> None:
    phases = set()
    for players, mode, seed in ((2, "base", 0), (2, "base", 4), (3, "legends", 1),
                                (4, "legends", 2), (4, "base", 3), (3, "base", 10)):
        game = Game(GameConfig(num_players=players, mode=mode), seed=seed)
        rng = np.random.default_rng(seed)
        while not game.is_over:
            phases.add(game.phase)
            keys = _svg_keys(table_svg(game))
            seen: dict[tuple[str, ...], int] = {}
            for a in game.legal_action_ids().tolist():
                paths = action_paths(game, a)
                assert paths
                for path in paths:
                    assert path not in seen, (path, a, seen.get(path))
                    seen[path] = a
                    for key in path:
                        assert key.startswith("btn:") or key in keys, (key, game.phase)
            for path in seen:  # a finished path is never the start of a longer one
                assert not any(len(q) > len(path) and q[:len(path)] == path for q in seen)
            ids = game.legal_action_ids()
            game.apply(int(ids[rng.integers(len(ids))]))
    assert phases == set(Phase) - {Phase.GAME_OVER}, phases


def test_rules_page_is_linked_and_served(client: TestClient) -> None:
    page = client.get("/").text
    assert 'href="/rules"' in page
    rules = client.get("/rules")
    assert rules.status_code == 200
    assert "[decision]" in rules.text and "<table>" in rules.text
    for link in re.findall(r'href="([a-z-]+\.md)"', rules.text):
        assert client.get(f"/{link}").status_code == 200, link
    assert client.get("/README.md").status_code == 404


def test_a_game_saved_by_moonriver_eval_opens_as_a_replay(client: TestClient, tmp_path) -> None:
    from moonriver_env.training.tournament import run_tournament

    run_tournament(["random", "greedy"], num_players=2, games=1, seed=3, progress=False,
                   records_dir=str(tmp_path))
    record = json.loads(next(tmp_path.glob("*.json")).read_text())
    r = client.post("/api/replays", json=record)
    assert r.status_code == 201, r.text
    rid, steps = r.json()["id"], r.json()["steps"]
    end = client.get(f"/api/replays/{rid}?step={steps}").json()
    assert end["over"] and end["scores"] == record["scores"]
    assert end["winners"] == record["winners"]


def test_games_and_replays_are_the_same_on_both_backends() -> None:
    from moonriver_env.moonriver.backend import game_class

    states = {}
    for backend in ("core", "python"):
        app = create_app(GameOptions(players=2, humans=(), opponents=("greedy",),
                                     backend=backend))
        local = TestClient(app)
        gid = new_game(local, humans=[], opponents=["greedy"], seed=11)
        seen = [local.get(f"/api/games/{gid}").json()]
        while not seen[-1]["over"]:
            seen.append(advance(local, gid, seen[-1]).json())
        assert type(app.state.store.games[gid].game) is game_class(backend)
        record = record_of(local, gid)
        r = local.post("/api/replays", json=record)
        assert r.status_code == 201, r.text
        rid = r.json()["id"]
        replay = app.state.store.replays[rid]
        assert replay.backend == backend and type(replay._game) is game_class(backend)
        seen += [local.get(f"/api/replays/{rid}?step={k}").json() for k in (12, 3)]
        states[backend] = [{k: v for k, v in s.items() if k not in ("id", "decision_id")}
                           for s in seen]
    assert states["core"] == states["python"]
