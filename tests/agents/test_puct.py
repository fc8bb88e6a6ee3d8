"""PUCTAgent: legal and deterministic play, budget validation, the prior, and strength."""

from __future__ import annotations

import math

import numpy as np
import pytest
from moonriver_env.agents import puct
from moonriver_env.agents.greedy import GreedyAgent
from moonriver_env.agents.puct import (
    HeuristicEvaluator,
    PolicyEvaluator,
    PUCTAgent,
    heuristic_scores,
)
from moonriver_env.agents.registry import make_agent
from moonriver_env.training.tournament import run_tournament

from moonriver_env.moonriver.observation import LazyObservation, ObservationEncoder
from moonriver_env.moonriver.rules import NUM_ACTIONS, Game, GameConfig


def _positions(players: int, seed: int, every: int = 9) -> list[Game]:
    """Positions with a real choice, sampled from a random game."""
    game = Game(GameConfig(num_players=players), seed=seed)
    rng = np.random.default_rng(seed)
    out, k = [], 0
    while not game.is_over:
        legal = game.legal_action_ids()
        if legal.size > 1 and k % every == 0:
            out.append(game.clone())
        game.apply(int(legal[rng.integers(legal.size)]))
        k += 1
    return out


def _play(agents: list, players: int, seed: int, reseed: bool = True) -> Game:
    game = Game(GameConfig(num_players=players), seed=seed)
    for p, agent in enumerate(agents):
        if reseed:
            agent.reset(seed * 10 + p)
    encoder = ObservationEncoder()
    while not game.is_over:
        p = game.current_player
        action = agents[p].act(game, LazyObservation(encoder, game, p))
        assert game.legal_mask()[action], f"illegal action {action}"
        game.apply(action)
    return game


@pytest.mark.parametrize("players", [2, 4])
def test_plays_whole_games_legally(players: int) -> None:
    game = _play([PUCTAgent(simulations=6) for _ in range(players)], players, seed=11)
    assert game.is_over and len(game.scores()) == players


def test_search_leaves_the_game_untouched() -> None:
    for game in _positions(4, seed=3)[:6]:
        before = game.to_record()
        hidden = (list(game.box), list(game.pile))  # what each simulation reshuffles
        mask = game.legal_mask().copy()
        action = PUCTAgent(simulations=30, seed=0).act(game, None)
        assert game.to_record() == before
        assert (game.box, game.pile) == hidden
        assert mask[action]


def test_same_seed_same_game() -> None:
    records = [_play([make_agent("puct:12"), make_agent("greedy")], 2, seed=21).to_record()
               for _ in range(2)]
    assert records[0] == records[1]


def test_seed_changes_the_search() -> None:
    records = [_play([PUCTAgent(simulations=12, seed=seed), GreedyAgent(seed=0)], 2,
                     seed=21, reseed=False).to_record()["events"] for seed in (1, 2)]
    assert records[0] != records[1]


@pytest.mark.parametrize("kwargs", [
    {"simulations": 0}, {"simulations": -3}, {"simulations": 2.5}, {"simulations": True},
    {"seconds": 0.0}, {"seconds": -1.0}, {"seconds": math.nan}, {"seconds": math.inf},
    {"seconds": "0.1"}, {"exploration": -1.0}, {"rollout_depth": -1},
    {"rollout_depth": 2.0}, {"rollout": "smart"},
])
def test_bad_budgets_and_options_are_refused(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        PUCTAgent(**kwargs)


@pytest.mark.parametrize("spec", ["puct:0", "puct:-5", "puct:abc", "puct:0s", "puct:-0.1s",
                                  "puct:nans", "puct:infs", "puct:1:2", "puct:10:s"])
def test_bad_specs_name_the_spec(spec: str) -> None:
    with pytest.raises(ValueError, match="agent spec"):
        make_agent(spec)


def test_specs_build_the_budget() -> None:
    assert make_agent("puct:40").simulations == 40
    timed = make_agent("puct:0.25s")
    assert timed.seconds == 0.25 and timed.name == "puct:0.25s"
    assert make_agent("puct").simulations == 200


def test_temperature_must_be_positive() -> None:
    with pytest.raises(ValueError, match="temperature"):
        HeuristicEvaluator(0.0)


class _TickingClock:
    """A ``time`` stand-in that moves ``tick`` seconds per reading (no wall clock involved)."""

    def __init__(self, tick: float) -> None:
        self.now, self.tick = 0.0, tick

    def perf_counter(self) -> float:
        self.now += self.tick
        return self.now


def test_time_budget_counts_simulations_on_the_clock(monkeypatch) -> None:
    # One reading sets the deadline, one follows each simulation: a 1 s budget at 0.25 s a
    # reading is 1 + 3 simulations on any machine, and the move is legal.
    monkeypatch.setattr(puct, "time", _TickingClock(0.25))
    game = _positions(2, seed=8)[3]
    agent = PUCTAgent(seconds=1.0, seed=1)
    calls = []
    simulate = agent._simulate
    monkeypatch.setattr(agent, "_simulate", lambda *a: (calls.append(1), simulate(*a)))
    assert game.legal_mask()[agent.act(game, None)]
    assert len(calls) == 4


def test_heuristic_prior_ranks_greedys_choice_first() -> None:
    for players, seed in ((4, 1), (2, 2)):
        for game in _positions(players, seed, every=3):
            legal = game.legal_action_ids().tolist()
            scores = heuristic_scores(game, legal)
            best = {a for a, s in zip(legal, scores, strict=True) if s == max(scores)}
            assert GreedyAgent(seed=0).act(game, None) in best


def test_policy_prior_steers_a_one_simulation_search() -> None:
    for game in _positions(4, seed=4)[:5]:
        favourite = int(game.legal_action_ids()[-1])

        def policy(game: Game, observation: dict,
                   favourite: int = favourite) -> tuple[np.ndarray, float]:
            logits = np.zeros(NUM_ACTIONS)
            logits[favourite] = 5.0
            return logits, 0.0

        agent = PUCTAgent(simulations=1, evaluator=PolicyEvaluator(policy), seed=0)
        assert agent.act(game, None) == favourite


def test_policy_value_replaces_the_rollout() -> None:
    game = _positions(2, seed=6)[2]
    calls = []

    def policy(game: Game, observation: dict) -> tuple[np.ndarray, float]:
        calls.append(game.current_player)
        return np.zeros(NUM_ACTIONS), 0.5

    agent = PUCTAgent(simulations=10, evaluator=PolicyEvaluator(policy), rollout_depth=0,
                      seed=0)
    agent._rollout = None  # a rollout would now fail: every leaf must take the policy value
    assert game.legal_mask()[agent.act(game, None)]
    assert len(calls) >= 2


def test_policy_with_non_finite_logits_is_refused() -> None:
    game = _positions(2, seed=6)[1]
    agent = PUCTAgent(simulations=3, evaluator=PolicyEvaluator(
        lambda game, obs: (np.full(NUM_ACTIONS, np.nan), None)))
    with pytest.raises(ValueError, match="non-finite"):
        agent.act(game, None)


@pytest.mark.parametrize("value", [math.nan, 1.5, -2.0])
def test_policy_value_outside_the_range_is_refused(value: float) -> None:
    game = _positions(2, seed=6)[1]
    agent = PUCTAgent(simulations=3, evaluator=PolicyEvaluator(
        lambda game, obs: (np.zeros(NUM_ACTIONS), value)))
    with pytest.raises(ValueError, match="value"):
        agent.act(game, None)


def test_pretrained_prior_plays_legally() -> None:
    try:
        agent = make_agent("pretrained+puct:4", seed=0)
    except (OSError, ValueError) as exc:
        pytest.skip(f"pretrained weights not installed: {exc}")
    game = _play([agent, make_agent("random"), make_agent("random"), make_agent("random")], 4,
                 seed=31)
    assert game.is_over


@pytest.mark.parametrize("players", [2, 4])
def test_beats_random(players: int) -> None:
    result = run_tournament(["puct:10", "random"], players, "base", games=4, seed=4242,
                            progress=False)
    puct, rand = result.agents
    assert puct.wins == puct.games * (1 if players == 2 else 0.5)  # every game won
    assert puct.mean_score > rand.mean_score


def test_pretrained_prior_keeps_underflowing_legal_actions_finite(monkeypatch) -> None:
    """A legal action whose probability underflows to 0 still gets a finite prior logit."""
    from moonriver_env.agents.pretrained import PretrainedAgent

    real = PretrainedAgent._logits

    def peaked(self, game, observation):  # one legal action far ahead of the others
        logits, value = real(self, game, observation)
        legal = np.flatnonzero(observation["action_mask"])
        logits = logits.copy()
        logits[legal[0]] += 2000.0
        return logits, value

    monkeypatch.setattr(PretrainedAgent, "_logits", peaked)
    game = Game(GameConfig(num_players=2), seed=3)
    while game.legal_action_ids().size < 2:
        game.apply(int(game.legal_action_ids()[0]))
    net = PretrainedAgent("2p-base")
    obs = {"observation": ObservationEncoder().encode(game, game.current_player),
           "action_mask": game.legal_mask()}
    probabilities, _ = net.policy(obs, game)
    legal = game.legal_action_ids()
    assert (probabilities[legal] == 0).any()  # the case that used to give log(0)
    log_p, _ = net.log_policy(obs, game)
    assert np.isfinite(log_p[legal]).all()
    assert np.exp(log_p[legal]).sum() == pytest.approx(1.0)
    agent = make_agent("pretrained+puct:2p-base:4", seed=0)
    assert int(agent.act(game, obs)) in legal.tolist()


PASSED = 1e-9  # a deadline that has passed by the first check, on any machine


@pytest.mark.parametrize("backend", ["python", "core"])
def test_a_time_limit_cuts_a_huge_budget_after_one_simulation(backend) -> None:
    """10**6 simulations a decision with a cap of 1e-9 s: one simulation, a legal move
    (counted, so the test does not depend on the machine's speed)."""
    from moonriver_env.moonriver.backend import make_game

    game = make_game(GameConfig(num_players=4), 5, backend=backend)  # pretrained+puct's variant
    while game.legal_action_ids().size < 2:
        game.apply(int(game.legal_action_ids()[0]))
    for spec in ("puct:1000000", "pretrained+puct:1000000"):
        agent = make_agent(spec, seed=1, time_limit=PASSED)
        action = agent.act(game, {"action_mask": game.legal_mask()})
        assert game.legal_mask()[action] and agent.last_simulations == 1, spec
    uncapped = PUCTAgent(simulations=40, seed=1)
    uncapped.act(game, {"action_mask": game.legal_mask()})
    assert uncapped.last_simulations == 40
    assert PUCTAgent(simulations=40, time_limit=1e9).act(game, {}) in game.legal_action_ids()


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, "1", True])
def test_a_time_limit_must_be_a_finite_number_of_seconds(bad) -> None:
    with pytest.raises(ValueError, match="time_limit must be a finite number of seconds >= 0"):
        PUCTAgent(simulations=5, time_limit=bad)
