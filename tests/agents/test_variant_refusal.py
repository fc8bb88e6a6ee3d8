"""Weights trained for one variant are refused in every other, with one line, everywhere
agents are built: the registry, the Gymnasium env, the play server, RLlib, and a game handed
to the agent itself (OpenSpiel bots, hand-built opponents)."""

from __future__ import annotations

import pickle
import warnings

import gymnasium
import numpy as np
import pytest
from moonriver_env.agents.pretrained import PretrainedAgent, VariantError, variant_refusal
from moonriver_env.agents.registry import make_agent
from moonriver_env.agents.specs import any_variant_specs

from moonriver_env.moonriver.observation import ObservationEncoder
from moonriver_env.moonriver.rules import Game, GameConfig

REFUSED = [
    ("pretrained:4p-base", GameConfig(num_players=3), "3-player base", "4-player base"),
    ("pretrained:4p-base", GameConfig(num_players=2), "2-player base", "4-player base"),
    ("pretrained:4p-base", GameConfig(mode="legends", scenario=2),
     "4-player Legends scenario 2", "4-player base"),
    ("pretrained:2p-base", GameConfig(num_players=2, mode="legends"), "2-player Legends",
     "2-player base"),
    ("pretrained+puct:5", GameConfig(num_players=3), "3-player base", "4-player base"),
    ("pretrained+puct:2p-base:5", GameConfig(num_players=4), "4-player base",
     "2-player base"),
]


@pytest.mark.parametrize(("spec", "config", "asked", "trained"), REFUSED)
def test_registry_refuses_weights_of_another_variant(spec, config, asked, trained) -> None:
    with pytest.raises(VariantError) as info:
        make_agent(spec, config=config)
    line = str(info.value)
    assert "\n" not in line
    assert line.startswith(f"agent spec {spec!r} cannot play {asked}: its weights were "
                           f"trained for {trained} only")
    assert "az:PATH.npz" in line  # what can play it
    assert f"(agents for every variant: {', '.join(any_variant_specs())})" in line
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is VariantError and str(again) == line


@pytest.mark.parametrize(("spec", "config"), [
    ("pretrained", GameConfig()), ("pretrained:2p-base", GameConfig(num_players=2)),
    ("pretrained", GameConfig(num_players=3, mode="legends", scenario=1)),
    ("pretrained+search:4", GameConfig(num_players=2, mode="legends", scenario=4)),
    ("pretrained:4p-base", GameConfig()), ("pretrained+puct:4p-base:5", GameConfig()),
    ("pretrained+puct:2p-base:5", GameConfig(num_players=2)),
    ("greedy", GameConfig(num_players=3, mode="legends", scenario=4)),
    ("mcts:5", GameConfig(num_players=2, mode="legends")), ("puct:5", GameConfig(num_players=3)),
])
def test_registry_builds_agents_that_can_play_the_variant(spec, config) -> None:
    assert make_agent(spec, config=config).name == spec


def test_metadata_with_a_scenario_plays_only_that_scenario() -> None:
    meta = {"num_players": 2, "mode": "legends", "scenario": 3}
    assert variant_refusal("x", meta, 2, "legends", 3) is None
    assert "2-player Legends scenario 3 only" in variant_refusal("x", meta, 2, "legends", 1)
    assert variant_refusal("x", meta, 2, "legends", None) is not None  # drawn: may differ
    assert variant_refusal("x", {}, 3, "legends", 1) is None  # no variant named: any


def _observation(game: Game) -> dict[str, np.ndarray]:
    return {"observation": ObservationEncoder().encode(game, game.current_player),
            "action_mask": game.legal_mask()}


def test_the_agent_refuses_a_game_of_another_variant_at_its_first_decision() -> None:
    agent = PretrainedAgent()
    game = Game(GameConfig(num_players=3), seed=0)
    with pytest.raises(VariantError, match="cannot play 3-player base"):
        agent.act(game, _observation(game))
    ok = Game(GameConfig(num_players=4), seed=0)
    assert ok.legal_mask()[agent.act(ok, _observation(ok))]


def test_gymnasium_make_refuses_a_named_opponent_of_another_variant() -> None:
    import moonriver_env  # noqa: F401  (registers MoonRiver-v0)

    with pytest.raises(VariantError, match="'pretrained:4p-base' cannot play 3-player base"):
        gymnasium.make("MoonRiver-v0", num_players=3, opponents=["pretrained:4p-base", "greedy"])
    with pytest.raises(VariantError, match="cannot play 4-player Legends scenario 1"):
        gymnasium.make("MoonRiver-v0", mode="legends", scenario=1,
                       opponents="pretrained:4p-base")
    env = gymnasium.make("MoonRiver-v0", num_players=2, opponents=["pretrained:2p-base"])
    env.reset(seed=0)
    env.close()


def test_gym_env_with_a_built_agent_refuses_at_the_agents_turn() -> None:
    from moonriver_env.moonriver.gym_env import MoonRiverGymEnv

    env = MoonRiverGymEnv(num_players=3, seat=1,
                          opponents=[PretrainedAgent(), make_agent("greedy")])
    with pytest.raises(VariantError, match="cannot play 3-player base"):
        env.reset(seed=0)  # seat 0 (the pretrained agent) plays first


def test_play_server_refuses_with_a_4xx_json_line() -> None:
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*httpx.*deprecated")
        from starlette.testclient import TestClient
    from moonriver_env.play import GameOptions, create_app

    client = TestClient(create_app(GameOptions(players=2, humans=(0,), opponents=("greedy",))))
    r = client.post("/api/games", json={"players": 3, "opponents": ["pretrained:4p-base"]})
    assert 400 <= r.status_code < 500, r.text
    error = r.json()["error"]
    assert "agent spec 'pretrained:4p-base' cannot play 3-player base" in error
    assert "\n" not in error
    r = client.post("/api/games", json={"players": 2, "opponents": ["pretrained:2p-base"]})
    assert r.status_code == 201, r.text


def test_rllib_config_refuses_an_opponent_of_another_variant() -> None:
    pytest.importorskip("ray")
    from moonriver_env.training.rllib.train import RLlibTrainConfig, UsageError

    with pytest.raises(UsageError, match="'pretrained:4p-base' cannot play 2-player base"):
        RLlibTrainConfig.load(None, {"num_players": 2, "opponents": ["pretrained:4p-base"],
                                     "env_backend": "pettingzoo"})


def test_openspiel_bot_refuses_a_game_of_another_variant() -> None:
    pyspiel = pytest.importorskip("pyspiel")
    from moonriver_env.agents.openspiel_bots import AgentBot

    import moonriver_env.moonriver.openspiel  # noqa: F401  (registers python_moonriver)

    state = pyspiel.load_game("python_moonriver(players=2)").new_initial_state()
    while state.is_chance_node():  # the setup's draws
        state.apply_action(state.chance_outcomes()[0][0])
    with pytest.raises(VariantError, match="cannot play 2-player base"):
        AgentBot("pretrained:4p-base", seed=0).step(state)
    assert np.isscalar(AgentBot("pretrained:2p-base", seed=0).step(state))
