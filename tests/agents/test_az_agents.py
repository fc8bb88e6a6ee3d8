"""Agents on the search recipe's network: the numpy forward matches torch, the policy and the
search agent play legal moves in every variant (engine and core games), specs and files are
checked, and no variant is refused (one network plays them all)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from moonriver_env.agents.az import (  # noqa: E402
    MAX_SIMULATIONS,
    TABLE_SEARCH,
    AZAgent,
    AZSearchAgent,
    absolute_shares,
    load_az,
    table_search,
)
from moonriver_env.agents.pretrained import read_npz  # noqa: E402
from moonriver_env.agents.registry import make_agent  # noqa: E402
from moonriver_env.training.az.network import AZNet, export_npz, load_az_net  # noqa: E402
from moonriver_env.training.policy_net import NetConfig  # noqa: E402
from moonriver_env.training.variants import ALL_VARIANTS, variant_config  # noqa: E402

from moonriver_env.moonriver.backend import Encoder, make_game  # noqa: E402
from tests.helpers import advance_agents  # noqa: E402

SHIPPED = Path(__file__).resolve().parents[2] / "agents" / "weights" / "4p-base.npz"


@pytest.fixture(scope="module")
def weights(tmp_path_factory) -> str:
    """A small random AZNet exported as the agents read it."""
    torch.manual_seed(0)
    net = AZNet(NetConfig(channels=6, opponent_channels=3, hidden=12))
    path = str(tmp_path_factory.mktemp("az") / "net.npz")
    export_npz(net, path, {"note": "untrained, for tests"})
    return path


def _positions(variant: str, backend: str = "core", decisions: int = 7) -> object:
    game = make_game(variant_config(variant), seed=3, backend=backend)
    rng = np.random.default_rng(0)
    for _ in range(decisions):
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(ids.size)]))
    return game


def _observation(game) -> dict[str, np.ndarray]:
    return {"observation": Encoder().encode(game, game.current_player),
            "action_mask": game.legal_mask()}


@pytest.mark.parametrize(("value_hidden", "film"), [(0, False), (5, False), (5, True)])
def test_numpy_forward_matches_torch_in_every_variant(weights, value_hidden, film,
                                                      tmp_path) -> None:
    games = [_positions(v) for v in ALL_VARIANTS]
    obs = np.stack([Encoder().encode(g, g.current_player) for g in games])
    mask = np.stack([g.legal_mask() for g in games])
    players = np.array([g.num_players for g in games], np.int32)
    torch.manual_seed(0)
    net = AZNet(NetConfig(channels=6, opponent_channels=3, hidden=12, variant_film=film),
                value_hidden=value_hidden).eval()
    if film:  # a scale and shift per variant, moved from zero so that each variant's differs
        with torch.no_grad():
            plain = net.heads(torch.from_numpy(obs), torch.from_numpy(mask).bool(),
                              torch.from_numpy(players))[0]
            net.variant_film.weight.normal_(0.0, 0.5)
    if value_hidden:  # the value's own layer: another file, read back with its width
        weights = str(tmp_path / "value_hidden.npz")
        export_npz(net, weights)
        assert load_az_net(weights).value_hidden is not None
        assert load_az_net(weights).config.variant_film == film
    with torch.no_grad():
        logp, logv, _ = net.heads(torch.from_numpy(obs), torch.from_numpy(mask).bool(),
                                  torch.from_numpy(players))
    numpy_net, meta = load_az(weights)
    assert numpy_net.value_hidden == bool(value_hidden)
    assert meta["format"] == "moonriver-az/1" and "relative to the player to move" in meta["value"]
    logits, shares = numpy_net.evaluate(obs, mask, players)
    legal = mask.astype(bool)
    top = logits.max(1, keepdims=True)
    log_p = logits - top - np.log(np.exp(logits - top).sum(1, keepdims=True))
    np.testing.assert_allclose(log_p[legal], logp.numpy()[legal], atol=2e-5)
    if film:  # the film moved every variant's policy where there is a choice
        moved = (logp - plain).abs().masked_fill(~torch.from_numpy(legal), 0).amax(1).numpy()
        choice = legal.sum(1) > 1
        assert choice.sum() >= 8 and (moved[choice] > 1e-3).all()
    np.testing.assert_allclose(shares, logv.exp().numpy(), atol=2e-6)
    np.testing.assert_allclose(shares.sum(1), 1.0, atol=1e-6)
    assert (shares[players == 2][:, 2:] == 0).all() and (shares[players == 3][:, 3] == 0).all()


def test_absolute_shares_turn_relative_seats_into_player_ids() -> None:
    relative = np.array([[0.1, 0.2, 0.7, 0.0], [0.4, 0.6, 0.0, 0.0], [0.1, 0.2, 0.3, 0.4]])
    out = absolute_shares(relative, [2, 1, 3], [3, 2, 4])
    np.testing.assert_allclose(out, [[0.2, 0.7, 0.1, 0.0], [0.6, 0.4, 0.0, 0.0],
                                     [0.2, 0.3, 0.4, 0.1]])


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_policy_and_search_agents_play_legal_moves_in_every_variant(weights, variant) -> None:
    agents = [make_agent(f"az:{weights}", seed=1, config=variant_config(variant)),
              make_agent(f"az-sample:{weights}", seed=1),
              make_agent(f"az+search:{weights}:6", seed=1, config=variant_config(variant))]
    for backend in ("core", "python"):
        game = _positions(variant, backend)
        for _ in range(4):
            for agent in agents:
                action = agent.act(game, _observation(game))
                assert game.legal_mask()[action] == 1, (agent.name, action)
            game.apply(agents[2].act(game, _observation(game)))


def test_search_agent_plays_the_batched_searchs_choice(weights) -> None:
    from moonriver_env.moonriver.search import BatchedSearch

    game = _positions("3p-legends-2")
    agent = AZSearchAgent(weights, 8, seed=5)
    seed = int(np.random.default_rng(5).integers(2**62))  # the agent's first draw
    assert agent.search_settings == {"max_considered": 16, "c_visit": 50.0, "c_scale": 1.0,
                                     "gumbel_scale": 0.0}  # no recipe in the file: defaults
    assert table_search(3) == TABLE_SEARCH and table_search(2) == {}  # added at 3 and 4
    search = BatchedSearch([game], simulations=8, seed=seed,
                           **{**agent.search_settings, **table_search(game.num_players)})
    net = load_az(weights)[0].core  # the agent's leaves are valued by the core's forward
    while (leaves := search.leaves()) is not None:
        logits, shares = net.evaluate(leaves.observation, leaves.mask, leaves.num_players)
        search.evaluate(logits, absolute_shares(shares, leaves.seat, leaves.num_players))
    assert agent.act(game, _observation(game)) == int(search.result().action[0])
    agent.reset(5)
    assert agent.act(game, _observation(game)) == int(search.result().action[0])


def test_search_agent_plays_the_play_settings_whatever_its_recipe(tmp_path) -> None:
    torch.manual_seed(0)
    path = str(tmp_path / "recipe.npz")
    export_npz(AZNet(NetConfig(channels=6, opponent_channels=3, hidden=12)), path,
               {"recipe": {"max_considered": 4, "c_visit": 30.0, "c_scale": 0.1}})
    agent = AZSearchAgent(path, 8, seed=1)
    assert agent.search_settings == {"max_considered": 16, "c_visit": 50.0, "c_scale": 1.0,
                                     "gumbel_scale": 0.0}
    assert AZSearchAgent(path, 8, max_considered=2).search_settings["max_considered"] == 2
    game = _positions("4p-base")
    assert game.legal_mask()[agent.act(game, _observation(game))] == 1


def test_search_agent_with_seconds_sizes_its_simulations_to_the_time(weights) -> None:
    """The budget after calibration is the seconds over the measured time per simulation
    (checked from the agent's own measurement, never against the wall clock)."""
    agent = make_agent(f"az+search:{weights}:0.05s", seed=0)
    game = _positions("2p-base")
    assert agent.budget() == AZSearchAgent.CALIBRATION
    for _ in range(4):
        action = agent.act(game, _observation(game))
        assert game.legal_mask()[action] == 1
        game.apply(action)
    assert agent.per_simulation is not None and agent.per_simulation > 0
    assert agent.budget() == max(1, min(MAX_SIMULATIONS, int(0.05 / agent.per_simulation)))
    assert agent.budget() == max(1, min(100_000, int(0.05 / agent.per_simulation)))
    with pytest.raises(ValueError, match="simulations or as seconds"):
        AZSearchAgent(weights)


def test_sampled_policy_follows_its_seed(weights) -> None:
    game = _positions("4p-base", decisions=2)

    def draws(seed: int) -> list[int]:
        agent = AZAgent(weights, deterministic=False, seed=seed)
        return [agent.act(game, _observation(game)) for _ in range(20)]

    assert draws(7) == draws(7)
    assert len(set(draws(7))) > 1  # an untrained policy is spread over many actions


def test_az_plays_every_variant_in_gymnasium_and_the_tournament(weights) -> None:
    import gymnasium
    from moonriver_env.training.tournament import run_tournament

    import moonriver_env  # noqa: F401

    env = gymnasium.make("MoonRiver-v0", num_players=3, mode="legends", scenario=2,
                         opponents=[f"az:{weights}", f"az+search:{weights}:4"])
    env.reset(seed=0)
    env.close()
    result = run_tournament([f"az:{weights}", f"az+search:{weights}:4"], 2, "base", 2, 0,
                            workers=1, progress=False)
    assert sum(a.games for a in result.agents) == 4


@pytest.mark.parametrize(("spec", "error", "words"), [
    ("az:missing.npz", FileNotFoundError, "az network file not found"),
    (f"az:{SHIPPED}", ValueError, "is not an az network"),
    ("az+search:{w}:0", ValueError, "simulations must be an integer from 1"),
    ("az+search:{w}", ValueError, "expected az:PATH.npz"),
    ("az+search:{w}:0s", ValueError, "seconds must be a finite number over 0"),
    ("az+search:{w}:nans", ValueError, "az+search:PATH.npz:SECONDSs"),
    ("az+search:{w}:-1s", ValueError, "az+search:PATH.npz:SECONDSs"),
    ("az:", ValueError, "expected az:PATH.npz"),
])
def test_bad_az_specs_say_what_is_allowed(weights, spec, error, words) -> None:
    with pytest.raises(error, match=words.replace("+", r"\+").replace(".", r"\.")):
        make_agent(spec.format(w=weights))


def test_play_server_pages_show_only_the_az_files_name() -> None:
    from moonriver_env.play.session import shown_spec

    assert shown_spec("az:/home/me/runs/net.npz") == "az:net.npz"
    assert shown_spec("az-sample:/home/me/net.npz") == "az-sample:net.npz"
    assert shown_spec("az+search:/home/me/net.npz:32") == "az+search:net.npz:32"


def test_play_server_seats_az_agents_from_the_command_line(weights) -> None:
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*httpx.*deprecated")
        from starlette.testclient import TestClient
    from moonriver_env.play import GameOptions, create_app

    specs = (f"az:{weights}", f"az+search:{weights}:4")
    client = TestClient(create_app(GameOptions(players=3, humans=(0,), opponents=specs)))
    r = client.post("/api/games", json={"players": 3, "mode": "legends", "scenario": 3,
                                        "humans": [], "opponents": ["az:net.npz"]})
    assert r.status_code == 201, r.text
    advance_agents(client, r.json()["id"])  # the agents' moves
    r = client.post("/api/games", json={"players": 3, "opponents": ["az+search:net.npz:4"]})
    assert r.status_code == 201, r.text
    r = client.post("/api/games", json={"opponents": ["az:/elsewhere/net.npz"]})
    assert r.status_code == 400


@pytest.mark.parametrize(("name", "cut", "words"), [
    ("value_hidden.weight", np.s_[:, :40], r"value_hidden.weight has shape \(5, 40\), expected"),
    ("value_head.weight", np.s_[:, :3], r"value_head.weight has shape \(4, 3\), expected \(4, 5"),
    ("value_hidden.bias", np.s_[:4], r"value_hidden.bias has shape \(4,\), expected \(5,\)"),
    ("value_hidden.bias", None, "no array value_hidden.bias"),
    ("value_head.weight", np.s_[:1], r"value_head.bias has shape \(4,\), expected \(1,\)"),
])
def test_a_value_layer_that_does_not_fit_is_refused_naming_the_file(tmp_path, name, cut,
                                                                      words) -> None:
    torch.manual_seed(0)
    net = AZNet(NetConfig(channels=6, opponent_channels=3, hidden=12), value_hidden=5)
    path = tmp_path / "net.npz"
    export_npz(net, str(path))
    arrays, meta = read_npz(str(path))
    if cut is None:
        del arrays[name]
    else:
        arrays[name] = arrays[name][cut]
    np.savez(path, **arrays, __meta__=np.array(json.dumps(meta)))
    words = "net.npz: " + words
    with pytest.raises(ValueError, match=words):
        make_agent(f"az:{path}")


def test_an_az_file_whose_value_head_is_not_four_seats_is_refused(tmp_path) -> None:
    torch.manual_seed(0)
    path = tmp_path / "one.npz"
    export_npz(AZNet(NetConfig(channels=6, opponent_channels=3, hidden=12)), str(path))
    arrays, meta = read_npz(str(path))
    arrays["value_head.weight"], arrays["value_head.bias"] = (arrays["value_head.weight"][:1],
                                                              arrays["value_head.bias"][:1])
    np.savez(path, **arrays, __meta__=np.array(json.dumps(meta)))
    with pytest.raises(ValueError, match=r"one.npz: .*an az network gives 4 seats' values"):
        make_agent(f"az:{path}")
