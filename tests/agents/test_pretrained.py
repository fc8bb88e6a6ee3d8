"""The shipped pretrained policies: they load from the package, play legally and beat random."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from moonriver_env.agents import make_agent
from moonriver_env.agents.pretrained import VARIANTS, PretrainedAgent, weights_path

from moonriver_env.moonriver.observation import LazyObservation, ObservationEncoder
from moonriver_env.moonriver.rules import Game, GameConfig

PLAYERS = {"4p-base": 4, "2p-base": 2}


def _match(variant: str, games: int, seed: int) -> float:
    """Win share of the pretrained agent against RandomAgents, seats rotated."""
    n = PLAYERS[variant]
    encoder, share = ObservationEncoder(), 0.0
    for g in range(games):
        seat = g % n
        agents = [make_agent(f"pretrained:{variant}") if p == seat
                  else make_agent("random", seed=seed + 10 * g + p) for p in range(n)]
        game = Game(GameConfig(num_players=n), seed=seed + g)
        while not game.is_over:
            p = game.current_player
            action = agents[p].act(game, LazyObservation(encoder, game, p))
            assert game.legal_mask()[action]
            game.apply(action)
        if seat in game.winners():
            share += 1 / len(game.winners())
    return share / games


@pytest.mark.parametrize("variant", VARIANTS)
def test_shipped_checkpoint_loads_and_matches_its_variant(variant: str) -> None:
    assert weights_path(variant).is_file()
    agent = PretrainedAgent(variant)
    assert agent.meta["num_players"] == PLAYERS[variant]
    assert agent.meta["mode"] == "base"


@pytest.mark.parametrize("variant", VARIANTS)
def test_shipped_checkpoint_beats_random(variant: str) -> None:
    # Chance is 1/4 (4 players) or 1/2 (2 players); the trained policies win far more often.
    rate = _match(variant, games=16, seed=2_000_000_000)
    assert rate >= {4: 0.6, 2: 0.85}[PLAYERS[variant]], rate


def test_make_agent_specs_and_errors() -> None:
    assert make_agent("pretrained:4p-base").variant == "4p-base"
    assert make_agent("pretrained:2p-base").variant == "2p-base"
    assert PretrainedAgent().name == "pretrained:4p-base"  # bare pretrained is another agent
    with pytest.raises(ValueError, match="unknown agent spec 'pretrained:'"):
        make_agent("pretrained:")
    with pytest.raises(ValueError, match="shipped: 4p-base, 2p-base"):
        make_agent("pretrained:3p-legends")
    with pytest.raises(FileNotFoundError):
        make_agent("pretrained:/no/such/weights.npz")


def test_policy_is_a_distribution_over_legal_actions() -> None:
    agent = make_agent("pretrained:4p-base")
    game = Game(GameConfig(num_players=4), seed=5)
    obs = LazyObservation(ObservationEncoder(), game, game.current_player)
    probs, value = agent.policy(obs, game)
    mask = game.legal_mask().astype(bool)
    assert probs.sum() == pytest.approx(1.0, abs=1e-5)
    assert probs[~mask].max() == 0.0
    assert np.isfinite(value)
    assert agent.act(game, obs) == int(np.argmax(probs))


def test_gymnasium_opponents_by_name() -> None:
    gymnasium = pytest.importorskip("gymnasium")
    import moonriver_env  # noqa: F401  (registers MoonRiver-v0)

    env = gymnasium.make("MoonRiver-v0", opponents=["pretrained", "greedy", "greedy"])
    _obs, info = env.reset(seed=3)
    done = False
    while not done:
        legal = info["action_mask"].nonzero()[0]
        _obs, _, done, _, info = env.step(int(legal[0]))
    assert "winners" in info


def test_pretrained_agent_needs_no_torch() -> None:
    code = ("import sys; from moonriver_env.agents import make_agent; "
            "from moonriver_env.moonriver.rules import Game, GameConfig; "
            "from moonriver_env.moonriver.observation import LazyObservation, ObservationEncoder; "
            "g = Game(GameConfig(num_players=2), seed=1); a = make_agent('pretrained:2p-base'); "
            "a.act(g, LazyObservation(ObservationEncoder(), g, g.current_player)); "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_greedy_prior_ranks_greedys_choice_first() -> None:
    from moonriver_env.agents.greedy import GreedyAgent
    from moonriver_env.agents.pretrained import greedy_prior

    rng = np.random.default_rng(7)
    greedy = GreedyAgent(seed=1)
    game = Game(GameConfig(num_players=3), seed=11)
    checked = 0
    while not game.is_over:
        prior = greedy_prior(game)
        legal = game.legal_action_ids()
        assert not prior[np.setdiff1d(np.arange(prior.size), legal)].any()
        choice = greedy.act(game, None)
        if legal.size > 1:
            assert prior[choice] == prior[legal].max()
            checked += 1
        game.apply(choice if rng.random() < 0.5 else int(legal[rng.integers(legal.size)]))
    assert checked > 30


def test_weights_are_package_data() -> None:
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = config["tool"]["scikit-build"]["wheel"]
    assert wheel["packages"]["moonriver_env/agents"] == "agents"  # every file of agents/ installs
    assert not any("weights" in p or "npz" in p for p in wheel.get("exclude", []))
    for variant in VARIANTS:
        size = (root / "agents" / "weights" / f"{variant}.npz").stat().st_size
        assert 10_000 < size < 5_000_000  # weights only: a few hundred kB


@pytest.mark.parametrize("content", ["junk", "npy", "truncated", "objects", "meta"])
def test_a_file_that_is_not_an_agents_npz_is_refused_in_one_line(tmp_path, content) -> None:
    path = tmp_path / "w.npz"
    if content == "junk":
        path.write_text("junk")
    elif content == "npy":
        with open(path, "wb") as fh:
            np.save(fh, np.zeros(3))
    elif content == "truncated":
        whole = weights_path("2p-base").read_bytes()
        path.write_bytes(whole[: len(whole) // 2])
    elif content == "objects":
        np.savez(path, a=np.array([{"code": 1}], dtype=object))
    else:  # metadata that is JSON but not an object
        np.savez(path, a=np.zeros(2), __meta__=np.array("[1, 2]"))
    with pytest.raises(ValueError, match=r"not an agents' \.npz") as err:
        make_agent(f"pretrained:{path}")
    assert "\n" not in str(err.value)
