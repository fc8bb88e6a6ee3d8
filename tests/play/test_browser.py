"""End to end in a real browser: Playwright drives Debian's Chromium against the play server.

A human seat plays whole games by clicking the highlighted table elements and buttons; the
final scores the page shows must equal the engine's replay of the downloaded record. Without
Chromium or Playwright these tests skip locally and FAIL in CI (``CI=true``).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from moonriver_env.moonriver.rules import ActionCodec, Game

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
IN_CI = os.environ.get("CI", "").lower() == "true"
_APPS: dict = {}  # base url -> the server's app (tests may reach its game store)


def _missing(what: str) -> None:
    message = f"browser tests need {what} (bash scripts/setup.sh installs it)"
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


@contextmanager
def serving(app) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 (any free port) in a thread; yields its base url."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 300  # only stops a server that never starts
    while not server.started:
        assert time.time() < deadline and thread.is_alive(), "the play server did not start"
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    _APPS[url] = app
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    try:
        import uvicorn  # noqa: F401

        from moonriver_env.play.server import create_app
    except ImportError as exc:
        _missing(f"the play extra ({exc})")
    from moonriver_env.play import GameOptions

    with serving(create_app(GameOptions(players=2, humans=(0,), opponents=("greedy",)))) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package")
    if not os.path.exists(CHROMIUM):
        _missing(f"Chromium at {CHROMIUM}")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


# Tests drive the page with Playwright's wait_for_function, which evaluates JavaScript text:
# the page's content security policy forbids that, so their browser contexts bypass it;
# test_the_page_runs_under_its_content_security_policy checks the page without bypassing.
@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(60_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert not errors, errors


def body(page, name: str) -> str | None:
    return page.evaluate(f"document.body.dataset.{name} ?? null")


def wait_for_decision(page) -> None:
    page.wait_for_function("document.body.dataset.over === 'true' || "
                           "document.body.dataset.humanTurn === 'true'")


def click_one(page, rng: np.random.Generator) -> None:
    """Click one highlighted element (table element or move button), then wait for the page."""
    before = page.evaluate("[document.body.dataset.version, document.body.dataset.picks]")
    targets = page.locator("#board [data-key].can")
    buttons = page.locator("#buttons button")
    n, nb = targets.count(), buttons.count()
    assert n + nb > 0, "a human decision with nothing to click"
    if n and (not nb or rng.random() < 0.85):
        targets.nth(int(rng.integers(n))).click()
    else:
        buttons.nth(int(rng.integers(nb))).click()
    page.wait_for_function("([v, p]) => document.body.dataset.version !== v || "
                           "document.body.dataset.picks !== p", arg=before)
    assert page.locator("#error").is_hidden(), page.locator("#error").text_content()


def play_to_end(page, rng: np.random.Generator, reload_after: int | None = None) -> int:
    """Play the human seat by clicking until the end screen shows; returns clicks made."""
    clicks = 0
    while True:
        wait_for_decision(page)
        if body(page, "over") == "true":
            return clicks
        click_one(page, rng)
        clicks += 1
        if clicks == reload_after:  # a game survives a page reload
            wait_for_decision(page)
            status = page.locator("#status").text_content()
            svg = page.locator("#board").inner_html()
            if body(page, "humanTurn") == "true" and body(page, "picks") == "0":
                page.reload()
                wait_for_decision(page)
                assert page.locator("#status").text_content() == status
                assert page.locator("#board").inner_html() == svg


def check_end_screen(page, base_url: str) -> dict:
    """The end screen's totals and winners equal the engine's replay of the game record."""
    page.wait_for_selector("#end:not([hidden])")
    game_id = page.url.split("/game/")[1].split("?")[0]
    record = page.request.get(f"{base_url}/api/games/{game_id}/record").json()
    game = Game.from_record(record)
    assert game.is_over
    shown = [int(page.locator(f'#end td.total[data-player="{p}"]').text_content())
             for p in range(game.num_players)]
    assert shown == [s.total for s in game.scores()]
    winners_text = page.locator("#winners").text_content()
    for p in game.winners():
        assert f"P{p}" in winners_text
    return record


def human_segments(record: dict, seat: int) -> set[str]:
    return {ActionCodec.segment_of(e["action"]) for e in record["events"]
            if e["type"] == "decision" and e["player"] == seat}


def test_two_player_game_by_clicking_against_greedy(page, base_url: str, tmp_path) -> None:
    made = page.request.post(f"{base_url}/api/games",
                             data={"players": 2, "humans": [0], "opponents": ["greedy"],
                                   "seed": 21})
    assert made.status == 201
    page.goto(f"{base_url}/game/{made.json()['id']}?speed=0")
    clicks = play_to_end(page, np.random.default_rng(21), reload_after=12)
    record = check_end_screen(page, base_url)
    assert clicks > 40
    played = human_segments(record, 0)
    assert {"select", "build"} <= played, played
    # the downloaded record opens in the same page as a replay: step forward and back
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    page.goto(f"{base_url}/")
    page.wait_for_function("document.body.dataset.ready === 'true'")
    page.set_input_files("#record-file", str(path))
    page.wait_for_url("**/replay/**")
    page.wait_for_function("document.body.dataset.step === '0'")
    for expected in ("1", "2", "3"):
        page.click("#forward")
        page.wait_for_function(f"document.body.dataset.step === '{expected}'")
    page.click("#back")
    page.wait_for_function("document.body.dataset.step === '2'")
    decisions = [e for e in record["events"] if e["type"] == "decision"]
    assert decisions[1]["text"] in page.locator("#last").text_content()
    page.reload()
    page.wait_for_function("document.body.dataset.step === '2'")
    page.click("#last-step")
    page.wait_for_function(f"document.body.dataset.step === '{len(decisions)}'")
    shown = [int(page.locator(f'#end td.total[data-player="{p}"]').text_content())
             for p in range(2)]
    assert shown == [s["total"] for s in record["scores"]]


def test_four_player_legends_game_to_the_end(page, base_url: str) -> None:
    page.goto(f"{base_url}/?speed=0")
    page.wait_for_function("document.body.dataset.ready === 'true'")
    page.select_option("select[name=players]", "4")
    page.select_option("select[name=mode]", "legends")
    page.fill("input[name=humans]", "0")
    page.fill("input[name=opponents]", "greedy")
    page.fill("input[name=seed]", "5")
    page.click("#start")
    page.wait_for_url("**/game/**")
    play_to_end(page, np.random.default_rng(5))
    record = check_end_screen(page, base_url)
    assert record["config"]["mode"] == "legends" and record["config"]["num_players"] == 4
    assert {"select", "build"} <= human_segments(record, 0)


def test_illegal_click_is_not_offered_and_refused_by_the_server(page, base_url: str) -> None:
    made = page.request.post(f"{base_url}/api/games",
                             data={"players": 3, "humans": [0, 1, 2], "seed": 2})
    game_id = made.json()["id"]
    page.goto(f"{base_url}/game/{game_id}")
    wait_for_decision(page)
    # setup: only free column positions are highlighted; the pending column is not clickable
    assert page.locator('#board [data-key^="col:active:"].can').count() == 4
    assert page.locator('#board [data-key^="col:pending:"].can').count() == 0
    page.locator('#board [data-key="cell:0:1:1"]').click()  # not a legal choice: nothing sent
    assert body(page, "picks") == "0"
    bad = page.request.post(f"{base_url}/api/games/{game_id}/actions",
                            data={"action": 4, "decision": int(body(page, "decision"))})
    assert bad.status == 409 and "illegal action" in bad.json()["error"]


@pytest.mark.parametrize("phase", ["desperado", "drought", "recruit"])
def test_rarer_decisions_are_made_by_clicking(page, base_url: str, phase: str) -> None:
    """Random play reaches the decision; the page then makes it with clicks alone."""
    from moonriver_env.moonriver.rules import GameConfig, Phase
    from moonriver_env.play import PlaySession

    target = Phase[phase.upper()]
    for seed in range(10, 40):
        game = Game(GameConfig(num_players=3, mode="base"), seed=seed)
        rng = np.random.default_rng(seed)
        while not game.is_over and game.phase != target:
            ids = game.legal_action_ids()
            game.apply(int(ids[rng.integers(len(ids))]))
        if game.phase == target:
            break
    assert game.phase == target
    made = page.request.post(f"{base_url}/api/games", data={"players": 3, "humans": [0, 1, 2]})
    game_id = made.json()["id"]
    session = _APPS[base_url].state.store.games[game_id]
    assert isinstance(session, PlaySession) and session.seats == [None, None, None]
    session.game = game  # every seat is human: the page decides
    decisions = len([e for e in game.history if e["type"] == "decision"])
    page.goto(f"{base_url}/game/{game_id}?auto=0")  # even a forced move by click
    wait_for_decision(page)
    assert body(page, "phase") == phase
    rng = np.random.default_rng(0)
    while body(page, "phase") == phase and body(page, "over") == "false":
        click_one(page, rng)
        wait_for_decision(page)
    events = [e for e in session.game.history if e["type"] == "decision"]
    assert len(events) > decisions
    assert ActionCodec.segment_of(events[decisions]["action"]) in (phase, "pass")


def test_a_missing_browser_fails_under_ci_and_skips_elsewhere(monkeypatch) -> None:
    import sys

    module = sys.modules[__name__]
    monkeypatch.setattr(module, "IN_CI", True)
    with pytest.raises(pytest.fail.Exception, match="browser tests need Chromium"):
        _missing("Chromium at /nowhere")
    monkeypatch.setattr(module, "IN_CI", False)
    with pytest.raises(pytest.skip.Exception):
        _missing("Chromium at /nowhere")


# ------------------------------------------------------------------ hostile text, stale tabs
HTML = "<img src=x onerror=window.__pwned=1>"


def _not_run(page) -> None:
    assert page.evaluate("window.__pwned ?? null") is None, "text from the server ran as HTML"
    assert page.locator("img").count() == 0


def test_html_in_names_errors_and_records_is_shown_as_text(page, tmp_path) -> None:
    """A command-line agent named with HTML (a weights file's name), HTML in a new-game
    request and in a record: shown as text everywhere, never run."""
    import shutil
    from pathlib import Path

    from moonriver_env.play import GameOptions
    from moonriver_env.play.server import create_app

    weights = tmp_path / f"{HTML}.npz"
    shutil.copy(Path(__file__).resolve().parents[2] / "agents" / "weights" / "2p-base.npz",
                weights)
    spec = f"pretrained:{weights}"
    shown = f"pretrained:{HTML}.npz"  # pages show the file's name, never its path
    app = create_app(GameOptions(players=2, humans=(), opponents=(spec,)))
    with serving(app) as url:
        made = page.request.post(f"{url}/api/games", data={"humans": [], "seed": 4})
        page.goto(f"{url}/game/{made.json()['id']}?speed=0")
        page.wait_for_selector("#end:not([hidden])")
        _not_run(page)
        assert f"P0 ({shown})" in page.locator("#end").text_content()
        assert HTML in page.locator("#winners").text_content()
        assert HTML in page.locator("#last").text_content()
        # its record, replayed: the names come back, still as text
        record = page.request.get(f"{url}/api/games/{made.json()['id']}/record").json()
        path = tmp_path / "game.json"
        path.write_text(json.dumps(record))
        page.goto(f"{url}/")
        page.wait_for_function("document.body.dataset.ready === 'true'")  # defaults fetched
        assert shown in page.locator("#specs").text_content()
        page.set_input_files("#record-file", str(path))
        page.wait_for_url("**/replay/**")
        page.wait_for_function("document.body.dataset.step === '0'")
        page.click("#last-step")
        page.wait_for_selector("#end:not([hidden])")
        assert f"P1 ({shown})" in page.locator("#end").text_content()
        _not_run(page)
        # a new-game request and a record carrying HTML: the errors are text
        page.goto(f"{url}/")
        page.wait_for_function("document.body.dataset.ready === 'true'")
        word = "<svg/onload=window.__pwned=2>"  # the form splits specs at spaces
        page.fill("input[name=opponents]", word)
        page.click("#start")
        page.wait_for_selector("#form-error:not([hidden])")
        assert word in page.locator("#form-error").text_content()
        assert page.locator("#form-error *").count() == 0
        _not_run(page)
        bad = dict(record, config={**record["config"], "mode": HTML})
        path.write_text(json.dumps(bad))
        page.set_input_files("#record-file", str(path))
        page.wait_for_function("document.getElementById('form-error').textContent"
                               ".includes('not a valid game record')")
        assert HTML in page.locator("#form-error").text_content()
        assert page.locator("#form-error *").count() == 0
        _not_run(page)
        # HTML in the address: game and replay ids, the replay step
        from urllib.parse import quote

        for address in (f"/game/{quote(HTML)}", f"/replay/{quote(HTML)}?step={quote(HTML)}"):
            page.goto(url + address)
            page.wait_for_selector("#error:not([hidden])")
            assert "<img" in page.locator("#error").text_content()
            assert page.locator("#error *").count() == 0
            _not_run(page)


@pytest.mark.parametrize("field, value, words", [
    ("seed", "abc", "the seed must be a whole number"),
    ("seed", "-3", "the seed must be a whole number"),
    ("seed", "9223372036854775808", "from 0 to 9223372036854775807"),
    ("humans", "zero", 'human seats must be seat numbers from 0 to 1, separated by spaces; '
                       'got "zero"'),
    ("humans", "0 2", 'got "2"'),
])
def test_the_new_game_form_says_what_is_wrong(page, base_url: str, field, value,
                                              words) -> None:
    page.goto(f"{base_url}/")
    page.wait_for_function("document.body.dataset.ready === 'true'")
    page.fill(f"input[name={field}]", value)
    page.click("#start")
    page.wait_for_selector("#form-error:not([hidden])")
    assert words in page.locator("#form-error").text_content()
    assert "/game/" not in page.url


@pytest.mark.parametrize("typed, seed", [("9007199254740993", 2**53 + 1),
                                         ("9223372036854775807", 2**63 - 1), ("007", 7)])
def test_the_new_game_form_sends_the_seed_as_typed(page, base_url: str, typed, seed) -> None:
    """Seeds past 2**53 (those of games started without one) reach the server exactly."""
    from moonriver_env.play import PlaySession

    page.goto(f"{base_url}/")
    page.wait_for_function("document.body.dataset.ready === 'true'")
    page.fill("input[name=seed]", typed)
    page.click("#start")
    page.wait_for_url("**/game/**")
    gid = page.url.split("/game/")[1].split("?")[0]
    assert _APPS[base_url].state.store.get(gid, PlaySession).game.seed == seed


def test_the_page_runs_under_its_content_security_policy(browser, base_url) -> None:
    """Without bypassing the policy the page plays a game, and markup with inline script put
    into the table (as a hole in the SVG's escaping would) does not run."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        made = page.request.post(f"{base_url}/api/games", data={"humans": [0], "seed": 9})
        page.goto(f"{base_url}/game/{made.json()['id']}?speed=0&auto=0")
        page.wait_for_selector("body[data-human-turn='true']", state="attached")  # app.js ran
        assert page.locator("#board [data-key].can").count() > 0  # and offers the moves
        ran = page.evaluate("""() => new Promise((done) => {
            const board = document.getElementById('board');
            board.innerHTML = '<img id="probe" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" ' +
                'onload="window.__pwned = 1" onerror="window.__pwned = 1">' +
                '<svg><a href="javascript:window.__pwned = 2"><text>x</text></a></svg>';
            board.querySelector('a').dispatchEvent(new MouseEvent('click', {bubbles: true}));
            const probe = document.getElementById('probe');
            const settle = () => setTimeout(() => done(window.__pwned ?? null), 0);
            probe.addEventListener('load', settle);
            probe.addEventListener('error', settle);
        })""")
        assert ran is None, "inline script ran"
        assert not errors, errors
    finally:
        context.close()


def test_a_move_in_a_stale_tab_is_refused_and_the_tab_catches_up(browser, base_url) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, bypass_csp=True)
    context.set_default_timeout(60_000)
    try:
        first, second = context.new_page(), context.new_page()
        made = first.request.post(f"{base_url}/api/games",
                                  data={"players": 2, "humans": [0, 1], "seed": 13})
        game_id = made.json()["id"]
        for tab in (first, second):
            tab.goto(f"{base_url}/game/{game_id}?auto=0")
            wait_for_decision(tab)
            assert body(tab, "decision") == "0"
        keys = [k for k in second.locator("#board [data-key].can").evaluate_all(
            "els => els.map((e) => e.dataset.key)") if k.startswith("col:")]
        assert len(keys) >= 2, keys
        first.locator(f'#board [data-key="{keys[0]}"]').click()  # a setup placement: one click
        first.wait_for_function("document.body.dataset.decision === '1'")
        second.locator(f'#board [data-key="{keys[1]}"]').click()  # chosen on decision 0
        second.wait_for_function("document.body.dataset.decision === '1'")
        assert "another tab" in second.locator("#error").text_content()
        state = first.request.get(f"{base_url}/api/games/{game_id}").json()
        assert state["decision"] == 1
        assert second.locator("#board").inner_html() == first.locator("#board").inner_html()
    finally:
        context.close()


# ------------------------------------------------------------------ forced moves, badges
def _game_where(test, players: int = 2, seeds: range = range(40)) -> Game:
    """A random-play game stopped at the first state where ``test(game)`` holds."""
    from moonriver_env.moonriver.rules import GameConfig

    for seed in seeds:
        game = Game(GameConfig(num_players=players), seed=seed)
        rng = np.random.default_rng(seed)
        while not game.is_over:
            if test(game):
                return game
            ids = game.legal_action_ids()
            game.apply(int(ids[rng.integers(len(ids))]))
    raise AssertionError("no game reached the state")


def _hot_seat_page(page, base_url: str, game: Game, query: str = ""):
    """A game of human seats set to ``game``, opened in the page; returns its session."""
    made = page.request.post(f"{base_url}/api/games",
                             data={"players": game.num_players,
                                   "humans": list(range(game.num_players))})
    from moonriver_env.play import PlaySession

    session = _APPS[base_url].state.store.get(made.json()["id"], PlaySession)
    session.game = game
    page.goto(f"{base_url}/game/{session.id}{query}")
    return session


def test_forced_moves_are_played_by_the_page_unless_turned_off(page, base_url: str) -> None:
    game = _game_where(lambda g: g.round > 0 and len(g.legal_action_ids()) == 1)
    forced = int(game.legal_action_ids()[0])
    before = len(game.history)
    session = _hot_seat_page(page, base_url, game.clone(), "?auto=0")
    page.wait_for_function("document.body.dataset.humanTurn === 'true'")
    assert page.locator("#move-list li").count() == 1  # waits for the click
    assert page.locator("#auto-forced").is_checked() is False
    session = _hot_seat_page(page, base_url, game.clone(), "?auto=1")
    assert page.locator("#auto-forced").is_checked()
    page.wait_for_function("Number(document.body.dataset.decision) > 1")
    assert session.game.history[before]["action"] == forced
    page.goto(f"{base_url}/")  # on by default (nothing saved): the checkbox starts checked
    page.evaluate("localStorage.removeItem('moonriver-auto-forced')")
    session = _hot_seat_page(page, base_url, game.clone())
    assert page.locator("#auto-forced").is_checked()


def test_a_ranchero_on_a_column_plot_leaves_its_skull_visible(page, base_url: str) -> None:
    from moonriver_env.moonriver.render.style import SKULL

    def owned_skull(game: Game) -> str | None:
        for name, column, owner in (("active", game.active, game.active_owner),
                                    ("pending", game.pending, game.pending_owner)):
            for pos in range(4):
                plot = -1 if column is None else column[pos]
                if plot >= 0 and owner[pos] >= 0 and \
                        game.data.kinds[int(game.data.plot_kind[plot])].skull:
                    return f"col:{name}:{pos}"
        return None

    game = _game_where(lambda g: owned_skull(g) is not None, players=3)
    key = owned_skull(game)
    _hot_seat_page(page, base_url, game, "?auto=0")
    wait_for_decision(page)
    top = page.evaluate("""([key, fill]) => {
        const skull = [...document.querySelectorAll(`[data-key="${key}"] circle`)]
            .find((c) => c.getAttribute("fill") === fill);
        const box = skull.getBoundingClientRect();
        const el = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
        const group = el.closest("[data-key]");
        return group ? group.dataset.key : el.tagName;
    }""", [key, SKULL])
    assert top == key, f"the skull of {key} is covered by {top}"
