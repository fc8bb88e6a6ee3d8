"""The play server shows agent specs without paths (pages, states, errors) and opens no file
that a request names, however it is spelled."""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2; httpx still works
    warnings.filterwarnings("ignore", message=".*httpx.*deprecated")
    from starlette.testclient import TestClient

from moonriver_env.moonriver.rules import Game
from moonriver_env.play import GameOptions, PlaySession, create_app
from moonriver_env.play.cli import main
from moonriver_env.play.server import STATIC
from moonriver_env.play.session import shown_spec, trusted_specs
from tests.helpers import watching_opens

WEIGHTS = Path(__file__).resolve().parents[2] / "agents" / "weights" / "2p-base.npz"


@pytest.fixture()
def weights(tmp_path: Path) -> Path:
    folder = tmp_path / "secret-folder"
    folder.mkdir()
    shutil.copy(WEIGHTS, folder / "w.npz")
    return folder / "w.npz"


@pytest.mark.parametrize("spec, shown", [
    ("pretrained:/home/me/runs/w.npz", "pretrained:w.npz"),
    ("pretrained:runs/w.npz", "pretrained:w.npz"),
    ("pretrained+puct:/home/me/w.npz:200", "pretrained+puct:w.npz:200"),
    ("policy:/home/me/model.zip", "policy:model.zip"),
    ("policy-sample:/home/me/model.zip", "policy-sample:model.zip"),
    ("rllib:/home/me/run/", "rllib:run"), ("rllib-sample:/home/me/run", "rllib-sample:run"),
    ("pretrained:2p-base", "pretrained:2p-base"), ("pretrained+puct:4p-base:5", None),
    ("mcts:0.5s", None), ("greedy", None), ("random", None),
])
def test_specs_are_shown_with_file_names_only(spec, shown) -> None:
    assert shown_spec(spec) == (shown or spec)


def test_defaults_and_game_states_show_no_path(weights) -> None:
    spec = f"pretrained:{weights}"
    client = TestClient(create_app(GameOptions(opponents=(spec,))))
    defaults = client.get("/api/defaults").json()
    assert defaults["opponents"] == ["pretrained:w.npz"]
    assert "pretrained:w.npz" in defaults["agent_specs"]
    for body in ({}, {"opponents": ["pretrained:w.npz"]}):
        gid = client.post("/api/games", json=body).json()["id"]
        state = client.get(f"/api/games/{gid}").json()
        assert state["names"] == ["you", "pretrained:w.npz"]
        assert state["options"]["opponents"] == ["pretrained:w.npz"]
        record = client.get(f"/api/games/{gid}/record").text
        texts = [json.dumps(defaults), json.dumps(state), record]
        assert not [t for t in texts if "secret-folder" in t or str(weights.parent) in t]


def test_two_command_line_files_of_one_name_are_refused(tmp_path, weights, monkeypatch,
                                                        capsys) -> None:
    other = tmp_path / "w.npz"
    shutil.copy(WEIGHTS, other)
    specs = (f"pretrained:{weights}", f"pretrained:{other}")
    with pytest.raises(ValueError, match="give the files different names"):
        trusted_specs(specs)
    with pytest.raises(ValueError, match=r"'pretrained:w\.npz' is given twice"):
        create_app(GameOptions(players=3, opponents=specs))
    monkeypatch.setattr(pytest.importorskip("uvicorn"), "Server", None)  # never reached
    with pytest.raises(SystemExit) as exit_info:
        main(["--no-browser", "--port", "0", "--players", "2", "--human", "--opponents", *specs])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "give the files different names" in err and str(tmp_path) not in err
    assert len(err.strip().splitlines()) == 1, err


def test_errors_about_command_line_agents_show_no_path(weights) -> None:
    spec = f"pretrained:{weights}"
    client = TestClient(create_app(GameOptions(humans=(), opponents=(spec,))),
                        raise_server_exceptions=False)
    gid = client.post("/api/games", json={}).json()["id"]

    class Failing:
        name = spec

        def act(self, game: Game, observation: object) -> int:
            raise OSError(f"cannot read {weights}")

    client.app.state.store.get(gid, PlaySession).seats = [Failing(), Failing()]
    r = client.post(f"/api/games/{gid}/advance", json={"decision": 0})
    assert r.status_code == 500 and "cannot read w.npz" in r.json()["error"]
    assert "secret-folder" not in json.dumps(client.get(f"/api/games/{gid}").json())
    for junk in ("bad.npz", "missing.npz"):  # a command-line file that does not load
        if junk == "bad.npz":
            (weights.parent / junk).write_bytes(b"not weights")
        spec = f"pretrained:{weights.parent}/{junk}"
        bad = TestClient(create_app(GameOptions(opponents=(spec,))))
        r = bad.post("/api/games", json={})
        assert r.status_code == 400 and junk in r.json()["error"], r.text
        assert "secret-folder" not in r.text


def test_no_request_opens_a_file_it_names(tmp_path) -> None:
    """Paths in URLs (plain, encoded, climbing out of the static folder), queries, agent
    specs and records: none is opened, and the secret is never sent."""
    secret = tmp_path / "secret.md"
    secret.write_text("TOPSECRET\n")
    up = os.path.relpath(secret, STATIC)
    client = TestClient(create_app(), raise_server_exceptions=False)
    gets = [f"/static/{up}", f"/static/{up.replace('/', '%2F')}",
            f"/{secret.with_suffix('')}.md", f"/{up.removesuffix('.md')}.md",
            f"/{secret.stem}.md", f"/rules?name={secret}",
            f"/api/replays/x?step={secret}", f"/static/{'..%2F' * 8}etc/passwd",
            "/%2e%2e/%2e%2e/etc/passwd", f"/game/{up}"]
    posts = [("/api/games", {"opponents": [f"{kind}:{secret}"]})
             for kind in ("policy", "rllib", "pretrained", "pretrained+puct")]
    posts.append(("/api/replays", {"config": {"plots_file": str(secret)}, "events": []}))
    with watching_opens() as opened:
        answers = [client.get(path) for path in gets]
        answers += [client.post(path, json=body) for path, body in posts]
    assert not [p for p in opened if p.startswith(str(tmp_path)) or p == "/etc/passwd"], opened
    for r in answers:
        assert "TOPSECRET" not in r.text and "root:" not in r.text, r.url
    assert all(r.status_code >= 400 or r.url.path == "/rules" for r in answers), answers
