"""Agent threads are shared fairly: one client cannot hold them all, a free thread goes to
the client with the fewest agents thinking, and each game and client has bounded moves
waiting. The agents here think until the test lets them go (events, not wall time)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest

from moonriver_env.moonriver.rules import Game
from moonriver_env.play import GameOptions, PlaySession, create_app
from moonriver_env.play.fair import FairAgentPool, client_key
from moonriver_env.play.session import PlayError

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")


class Gates:
    """Work that blocks until its name is let go, recording the order it started in."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.events: dict[str, threading.Event] = {}

    def work(self, name: str) -> Callable[[], str]:
        self.events[name] = threading.Event()

        def run() -> str:
            self.started.append(name)
            assert self.events[name].wait(60), f"{name} was never let go"
            return name

        return run

    def release_all(self) -> None:
        for event in self.events.values():
            event.set()


async def _until(condition: Callable[[], bool]) -> None:
    """Yield to the loop until ``condition`` holds (a bounded number of short waits)."""
    for _ in range(6000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never held")


def test_one_client_cannot_take_every_thread() -> None:
    async def scenario() -> None:
        pool, gates = FairAgentPool(threads=2, per_client=1), Gates()
        held = [asyncio.ensure_future(pool.run("A", f"a{i}", gates.work(f"a{i}")))
                for i in range(3)]
        await _until(lambda: gates.started == ["a0"])
        try:  # A holds a thread and has two moves waiting; B's move thinks at once
            assert await asyncio.wait_for(pool.run("B", "b", lambda: "b"), 30) == "b"
            assert gates.started == ["a0"] and pool.running == {"A": 1}
        finally:
            gates.release_all()
        assert await asyncio.gather(*held) == ["a0", "a1", "a2"]
        pool.shutdown()

    asyncio.run(scenario())


def test_a_free_thread_goes_to_the_client_with_fewest_thinking() -> None:
    async def scenario() -> None:
        pool, gates = FairAgentPool(threads=2, per_client=2), Gates()
        moves = [asyncio.ensure_future(pool.run("A", f"a{i}", gates.work(f"a{i}")))
                 for i in range(3)]
        await _until(lambda: sorted(gates.started) == ["a0", "a1"])
        moves.append(asyncio.ensure_future(pool.run("B", "b0", gates.work("b0"))))
        await asyncio.sleep(0)
        try:
            assert pool.busy == 2 and list(pool.waiting) == ["A", "B"]
            gates.events["a0"].set()  # A waited first, but B has none thinking
            await _until(lambda: len(gates.started) == 3)
            assert gates.started[2] == "b0"
        finally:
            gates.release_all()
        await asyncio.gather(*moves)
        assert gates.started[3] == "a2" and pool.busy == 0 and not pool.waiting
        pool.shutdown()

    asyncio.run(scenario())


def test_a_game_has_one_move_and_a_client_a_bounded_queue() -> None:
    async def scenario() -> None:
        pool, gates = FairAgentPool(threads=1, per_client=1, max_waiting=2), Gates()
        moves = [asyncio.ensure_future(pool.run("A", f"g{i}", gates.work(f"g{i}")))
                 for i in range(3)]
        await _until(lambda: gates.started == ["g0"])
        try:
            for key, status in (("g0", 409), ("g1", 409), ("g9", 429)):
                with pytest.raises(PlayError) as refused:
                    await pool.run("A", key, lambda: None)
                assert refused.value.status == status, key
            moves[2].cancel()  # a request that went away drops its waiting move
            await _until(lambda: len(pool.waiting["A"]) == 1)
            moves[2] = asyncio.ensure_future(pool.run("B", "g2", lambda: "g2 again"))
        finally:
            gates.release_all()
        assert await asyncio.gather(*moves) == ["g0", "g1", "g2 again"]
        pool.shutdown()

    asyncio.run(scenario())


@pytest.mark.parametrize("address, key", [
    ("127.0.0.1", "127.0.0.1"), ("2001:db8::1", "2001:db8::/64"),
    ("2001:db8::ffff:1", "2001:db8::/64"), ("2001:db8:0:1::1", "2001:db8:0:1::/64"),
    ("::ffff:10.0.0.7", "10.0.0.7"), (None, "unknown"), ("testclient", "testclient"),
])
def test_clients_are_told_apart_by_address_and_ipv6_network(address, key) -> None:
    assert client_key(address) == key


def test_bad_thread_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="per_client must be from 1 to threads"):
        FairAgentPool(threads=2, per_client=3)
    with pytest.raises(ValueError, match="threads must be from 1 to 256"):
        FairAgentPool(threads=0)


class GateAgent:
    """An agent that thinks until the test lets it go, counting the agents thinking."""

    name = "gate"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.thinking = 0
        self._lock = threading.Lock()

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reset."""

    def act(self, game: Game, observation: object) -> int:
        with self._lock:
            self.thinking += 1
        self.release.wait(120)
        return int(game.legal_action_ids()[0])


def test_one_client_filling_the_agent_threads_does_not_delay_another(live_server) -> None:
    """Client A asks 8 games' agents (as many as the server's threads) to think at once;
    client B's move is played while they all still think (the old server's 8 shared threads
    made it wait for A's)."""
    url, app = live_server
    agent = GateAgent()
    own = {"a": httpx.HTTPTransport(local_address="127.0.0.1"),
           "b": httpx.HTTPTransport(local_address="127.0.0.2")}
    try:
        with httpx.Client(base_url=url, transport=own["b"], timeout=5) as probe:
            probe.get("/api/defaults")
    except httpx.ConnectError:
        pytest.skip("this system has no second loopback address (127.0.0.2)")
    with httpx.Client(base_url=url, transport=own["a"], timeout=60) as a:
        games = [a.post("/api/games", json={"seed": i}).json()["id"] for i in range(8)]
    for gid in games:
        app.state.store.get(gid, PlaySession).seats = [agent, agent]
    answers: list[int] = []

    def advance(gid: str) -> None:
        with httpx.Client(base_url=url, timeout=120,
                          transport=httpx.HTTPTransport(local_address="127.0.0.1")) as a:
            answers.append(a.post(f"/api/games/{gid}/advance", json={"decision": 0})
                           .status_code)

    movers = [threading.Thread(target=advance, args=(gid,)) for gid in games]
    for t in movers:
        t.start()
    try:
        for _ in range(6000):  # until A's agents think (bounded)
            if agent.thinking >= 4:
                break
            threading.Event().wait(0.01)
        with httpx.Client(base_url=url, transport=own["b"], timeout=20) as b:
            other = b.post("/api/games", json={"seed": 99}).json()["id"]
            r = b.post(f"/api/games/{other}/advance", json={"decision": 0})
            assert r.status_code == 200, r.text
        assert agent.thinking == 4  # A's cap: half of the 8 threads; its other 4 wait
        assert app.state.agents.running["127.0.0.1"] == 4
    finally:
        agent.release.set()
        for t in movers:
            t.join(120)
    assert answers == [200] * 8


@pytest.fixture()
def live_server():
    pytest.importorskip("uvicorn")
    from tests.play.test_hardening import _serve

    app = create_app(GameOptions(players=2, humans=(), opponents=("random",)))
    for url in _serve(app):
        yield url, app
    app.state.agents.shutdown()


def test_the_server_shares_its_agent_threads_fairly() -> None:
    app = create_app(agent_threads=6, agent_threads_per_client=2)
    assert (app.state.agents.threads, app.state.agents.per_client) == (6, 2)
    assert create_app().state.agents.per_client == 4
