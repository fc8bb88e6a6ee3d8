"""Bare ``pretrained`` and ``pretrained+search`` are the shipped network for every variant:
they build and play legal moves in all 15 variants wherever agents are built (the registry,
the Gymnasium env, moonriver-eval, the play server, OpenSpiel bots, RLlib), while the PPO
weights keep their explicit names and their refusals."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
from moonriver_env.agents.az import AZAgent, AZSearchAgent, shipped_path
from moonriver_env.agents.pretrained import VariantError
from moonriver_env.agents.registry import REQUEST_SPECS, SPECS, make_agent, request_spec_problem

from moonriver_env.moonriver.backend import Encoder, make_game
from moonriver_env.moonriver.rules import GameConfig
from tests.helpers import advance_agents

CONFIGS = [GameConfig(num_players=n, mode="base") for n in (2, 3, 4)] + [
    GameConfig(num_players=n, mode="legends", scenario=s) for n in (2, 3, 4) for s in (1, 2, 3, 4)]
IDS = [f"{c.num_players}p-{c.mode}{'-' + str(c.scenario) if c.scenario else ''}" for c in CONFIGS]


def _observation(game) -> dict[str, np.ndarray]:
    return {"observation": Encoder().encode(game, game.current_player),
            "action_mask": game.legal_mask()}


def _play(agents, config: GameConfig, backend: str = "core",
          decisions: int | None = None) -> int:
    """Plays a game of ``config`` seeded 5 (every action checked legal); the decisions made."""
    game = make_game(config, seed=5, backend=backend)
    made = 0
    while not game.is_over and (decisions is None or made < decisions):
        agent = agents[game.current_player % len(agents)]
        action = agent.act(game, _observation(game))
        assert game.legal_mask()[action] == 1, (agent.name, action)
        game.apply(action)
        made += 1
    return made


def test_the_specs_name_the_shipped_network() -> None:
    assert "pretrained+search:SIMS" in SPECS and "pretrained+search:SECONDSs" in SPECS
    assert "pretrained+search:SIMS" in REQUEST_SPECS
    assert shipped_path().endswith("all.npz")
    agent = make_agent("pretrained", seed=3)
    assert type(agent) is AZAgent and agent.name == "pretrained" and agent.deterministic
    assert agent.meta["format"] == "moonriver-az/1" and "num_players" not in agent.meta
    search = make_agent("pretrained+search:7", seed=3)
    assert type(search) is AZSearchAgent and (search.simulations, search.seconds) == (7, None)
    timed = make_agent("pretrained+search:0.25s")
    assert (timed.simulations, timed.seconds, timed.name) == (None, 0.25,
                                                             "pretrained+search:0.25s")
    assert make_agent("pretrained+puct:4").meta["num_players"] == 4  # still the 4p-base prior


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_pretrained_plays_every_variant_to_the_end(config: GameConfig) -> None:
    agent = make_agent("pretrained", seed=0, config=config)
    assert _play([agent], config) > 20  # every seat, a whole game
    assert _play([agent], config, backend="python", decisions=6) == 6


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_pretrained_search_plays_every_variant(config: GameConfig) -> None:
    search = make_agent("pretrained+search:4", seed=1, config=config)
    policy = make_agent("pretrained", config=config)
    assert _play([search, policy], config) > 20
    assert _play([search], config, backend="python", decisions=4) == 4
    assert search.last_simulations == 4


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_gymnasium_opponents_play_every_variant(config: GameConfig) -> None:
    import gymnasium

    import moonriver_env  # noqa: F401  (registers MoonRiver-v0)

    opponents = ["pretrained", "pretrained+search:2", "pretrained"][:config.num_players - 1]
    env = gymnasium.make("MoonRiver-v0", num_players=config.num_players, mode=config.mode,
                         scenario=config.scenario, opponents=opponents)
    _obs, info = env.reset(seed=2)
    done, steps = False, 0
    while not done:
        legal = info["action_mask"].nonzero()[0]
        _obs, _, done, _, info = env.step(int(legal[steps % legal.size]))
        steps += 1
    env.close()
    assert "winners" in info and steps > 5


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_moonriver_eval_plays_pretrained_in_every_variant(tmp_path, config) -> None:
    from moonriver_env.training import evaluate

    argv = ["--agents", "pretrained", "greedy", "--players", str(config.num_players),
            "--mode", config.mode, "--games", "1", "--no-progress", "--out", str(tmp_path / "o")]
    if config.scenario:
        argv += ["--scenario", str(config.scenario)]
    assert evaluate.main(argv) == 0
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    games = {a["name"]: a["games"] for a in results["agents"]}
    assert games["pretrained"] >= 1 and sum(games.values()) == config.num_players


@pytest.mark.parametrize(("spec", "words"), [
    ("pretrained+search:0", "simulations must be an integer from 1 to 100000, got 0"),
    ("pretrained+search:100001", "simulations must be an integer from 1 to 100000"),
    ("pretrained+search:0s", "seconds must be a finite number over 0"),
    ("pretrained+search:lots", "expected pretrained+search:SIMS"),
    ("pretrained+search:-1s", "expected pretrained+search:SIMS"),
    ("pretrained+search", "expected pretrained+search:SIMS"),
    ("pretrained+search:4:4", "expected pretrained+search:SIMS"),
])
def test_bad_pretrained_search_specs_say_what_is_allowed(spec: str, words: str) -> None:
    with pytest.raises(ValueError) as info:
        make_agent(spec)
    line = str(info.value)
    assert line.startswith(f"agent spec {spec!r}: ") and words in line and "\n" not in line
    assert str(pickle.loads(pickle.dumps(info.value))) == line


def test_the_ppo_weights_keep_their_names_and_refusals() -> None:
    with pytest.raises(VariantError) as info:
        make_agent("pretrained:4p-base", config=GameConfig(num_players=3))
    line = str(info.value)
    assert "\n" not in line
    assert line.startswith("agent spec 'pretrained:4p-base' cannot play 3-player base: its "
                           "weights were trained for 4-player base only (agents for every "
                           "variant: random, greedy, mcts:SIMS, pretrained, "
                           "pretrained+search:SIMS,")
    with pytest.raises(VariantError, match="'pretrained\\+puct:5' cannot play 3-player base"):
        make_agent("pretrained+puct:5", config=GameConfig(num_players=3))


def test_request_bounds_of_pretrained_search() -> None:
    assert request_spec_problem("pretrained+search:50") is None
    assert request_spec_problem("pretrained+search:2.5s") is None
    assert request_spec_problem("pretrained") is None
    for spec, words in [("pretrained+search:999999", "1 to 5000 simulations"),
                        ("pretrained+search:11s", "at most 10s"),
                        ("pretrained+search", "not one of the allowed forms"),
                        ("pretrained+search:/tmp/w.npz:5", "not one of the allowed forms")]:
        problem = request_spec_problem(spec)
        assert problem is not None and words in problem, (spec, problem)
        assert "pretrained+search:SIMS" in problem
    assert request_spec_problem("pretrained+search:60", max_simulations=50) is not None


def test_play_server_takes_pretrained_search_within_its_bounds() -> None:
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*httpx.*deprecated")
        from starlette.testclient import TestClient
    from moonriver_env.play import GameOptions, create_app

    client = TestClient(create_app(GameOptions(players=2, humans=(0,), opponents=("greedy",))))
    specs = client.get("/api/defaults").json()["agent_specs"]
    assert "pretrained" in specs and "pretrained+search:SIMS" in specs
    r = client.post("/api/games", json={"players": 3, "mode": "legends", "scenario": 2,
                                        "humans": [], "opponents": ["pretrained+search:50",
                                                                    "pretrained", "greedy"]})
    assert r.status_code == 201, r.text
    advance_agents(client, r.json()["id"])  # the agents' moves
    r = client.post("/api/games", json={"players": 3, "opponents": ["pretrained+search:999999"]})
    assert 400 <= r.status_code < 500, r.text
    error = r.json()["error"]
    assert "\n" not in error
    assert error.startswith("agent spec 'pretrained+search:999999' is not allowed here: the "
                            "budget must be 1 to 5000 simulations")


def test_openspiel_bot_and_rllib_take_pretrained_for_two_players() -> None:
    pyspiel = pytest.importorskip("pyspiel")
    from moonriver_env.agents.openspiel_bots import AgentBot

    import moonriver_env.moonriver.openspiel  # noqa: F401  (registers python_moonriver)

    state = pyspiel.load_game("python_moonriver(players=2)").new_initial_state()
    while state.is_chance_node():  # the setup's draws
        state.apply_action(state.chance_outcomes()[0][0])
    for spec in ("pretrained", "pretrained+search:3"):
        assert AgentBot(spec, seed=0).step(state) in state.legal_actions()
    pytest.importorskip("ray")
    from moonriver_env.training.rllib.train import RLlibTrainConfig

    config = RLlibTrainConfig.load(None, {"num_players": 2, "env_backend": "pettingzoo",
                                          "opponents": ["pretrained", "pretrained+search:2"]})
    assert tuple(config.opponents) == ("pretrained", "pretrained+search:2")


def test_pretrained_and_its_search_need_no_torch() -> None:
    code = ("import sys; from moonriver_env.agents import make_agent; "
            "from moonriver_env.moonriver.rules import Game, GameConfig; "
            "from moonriver_env.moonriver.observation import LazyObservation, ObservationEncoder; "
            "g = Game(GameConfig(num_players=3, mode='legends', scenario=1), seed=1); "
            "o = LazyObservation(ObservationEncoder(), g, g.current_player); "
            "[make_agent(s).act(g, o) for s in ('pretrained', 'pretrained+search:2')]; "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
