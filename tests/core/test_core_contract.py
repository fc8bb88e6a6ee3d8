"""The core's own contract (OpenSpiel's RandomSimTest checks) and the backend switch."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from moonriver_env.moonriver import core
from moonriver_env.moonriver.backend import BACKENDS, Encoder, check_backend, make_game
from moonriver_env.moonriver.observation import OBSERVATION_SIZE, VIEWS
from moonriver_env.moonriver.rules import Game, GameConfig, Phase
from moonriver_env.moonriver.rules import actions as A


def test_layout_constants_match_the_python_side() -> None:
    """Action and observation sizes of the extension are the Python layout's."""
    assert core.game._core.NUM_ACTIONS == A.NUM_ACTIONS == 2710
    assert core.game._core.PASS_ID == A.PASS_ID
    assert core.game._core.OBSERVATION_SIZE == OBSERVATION_SIZE == VIEWS["game"].stop


@pytest.mark.parametrize("config", [GameConfig(), GameConfig(num_players=2, mode="legends"),
                                    GameConfig(num_players=3, auto_forced=True)])
def test_random_sim(config: GameConfig) -> None:
    """At every decision: the mask is read-only and agrees with the ids; observations are
    finite, in bounds and sized; a clone and a pickle equal the original and evolve alike;
    at the end every player has a score and winners are among the best."""
    game = core.Game(config, seed=17)
    rng = np.random.default_rng(17)
    out = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
    while not game.is_over:
        mask = game.legal_mask()
        assert mask.dtype == np.int8 and not mask.flags.writeable
        with pytest.raises(ValueError):
            mask[0] = 1
        with pytest.raises(ValueError):
            mask.flags.writeable = True  # as the engine's: no consumer can unlock it
        ids = game.legal_action_ids()
        assert ids.dtype == np.int64 and np.array_equal(np.flatnonzero(mask), ids)
        assert len({A.ACTIONS[i].text() for i in ids.tolist()}) == len(ids) > 0
        for p in range(config.num_players):
            obs = game.observe(p, out)
            assert obs is out and np.isfinite(obs).all() and obs.min() >= 0 and obs.max() <= 64
        aid = int(ids[rng.integers(len(ids))])
        twin, thawed, deep = game.clone(), pickle.loads(pickle.dumps(game)), copy.deepcopy(game)
        for g in (game, twin, thawed, deep):
            g.apply(aid)
        record = game.to_record(include_seed=True)
        assert twin.to_record(True) == thawed.to_record(True) == deep.to_record(True) == record
    assert game.legal_action_ids().size == 0 and not game.legal_mask().any()
    assert game.current_player == -1 and game.phase == Phase.GAME_OVER
    best = max((s.total, s.largest_territory, s.cows) for s in game.scores())
    assert all((game.scores()[w].total, game.scores()[w].largest_territory,
                game.scores()[w].cows) == best for w in game.winners())


def test_observe_refuses_bad_buffers_and_viewers() -> None:
    """A buffer of the wrong dtype, shape, layout or a read-only one is refused, never copied."""
    game = core.Game(seed=1)
    good = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
    read_only = good.copy()
    read_only.flags.writeable = False
    for bad in (np.zeros(OBSERVATION_SIZE, np.float64), np.zeros(OBSERVATION_SIZE + 1, np.float32),
                np.zeros((2, OBSERVATION_SIZE), np.float32)[:, 0], read_only, [0.0] * 4934):
        with pytest.raises(ValueError, match="out must be a writable C-contiguous float32"):
            game.observe(0, bad)
    for viewer in (-1, 4, True, 1.0, "0"):
        with pytest.raises(ValueError, match=r"player must be an int in 0\.\.3"):
            game.observe(viewer)
    assert game.observe(np.int64(2)).shape == (OBSERVATION_SIZE,)


def test_text_view_and_context_are_the_engines() -> None:
    """table_text() and context() read the same as the reference's mid-game."""
    ref, fast = Game(GameConfig(num_players=3), 4), core.Game(GameConfig(num_players=3), 4)
    rng = np.random.default_rng(4)
    for _ in range(70):
        aid = int(ref.legal_action_ids()[rng.integers(len(ref.legal_action_ids()))])
        ref.apply(aid)
        fast.apply(aid)
        assert fast.context() == ref.context()
    assert fast.table_text() == ref.table_text()


def test_playouts_inside_the_core_are_seeded() -> None:
    """The same seed gives the same playouts; totals are sized (games, players)."""
    game = core.Game(GameConfig(num_players=2), seed=3)
    a = core.random_playouts(game, 5, seed=9)
    assert a.shape == (5, 2) and np.array_equal(a, game.random_playouts(5, 9))
    games, decisions = core.random_play_counts(game, 4, seed=9)
    assert games == 4 and decisions > 4 * 50
    assert not game.is_over  # played on copies
    for bad in (-1, 2.0, True):
        with pytest.raises(ValueError, match="count must be a non-negative int"):
            core.random_playouts(game, bad, 1)
    with pytest.raises(ValueError, match="seed must be an int"):
        core.random_playouts(game, 1, -1)


def test_backend_switch() -> None:
    """make_game picks the implementation by name; the Encoder observes both alike."""
    assert BACKENDS == ("core", "python")
    config = GameConfig(num_players=2)
    fast, ref = make_game(config, 5, "core"), make_game(config, 5, backend="python")
    assert isinstance(fast, core.Game) and isinstance(ref, Game)
    encoder = Encoder()
    assert np.array_equal(encoder.encode(fast, 1), encoder.encode(ref, 1))
    for bad in ("cpp", None, 1, "Core"):
        with pytest.raises(ValueError, match=r"backend must be one of \('core', 'python'\)"):
            check_backend(bad)


def test_envs_take_a_backend() -> None:
    """Both envs play the backend they are given; a bad name is refused at construction."""
    import gymnasium

    from moonriver_env import moonriver_v0
    from moonriver_env.moonriver.gym_env import MoonRiverGymEnv

    for backend, kind in (("core", core.Game), ("python", Game)):
        aec = moonriver_v0.raw_env(num_players=2, backend=backend)
        aec.reset(seed=3)
        assert isinstance(aec.game, kind)
        env = gymnasium.make("MoonRiver-v0", num_players=2, backend=backend)
        env.reset(seed=3)
        assert isinstance(env.unwrapped.game, kind)
    with pytest.raises(ValueError, match="backend must be one of"):
        moonriver_v0.raw_env(backend="fast")
    with pytest.raises(ValueError, match="backend must be one of"):
        MoonRiverGymEnv(backend="fast")


def test_envs_play_the_same_game_on_both_backends() -> None:
    """The same seeds and actions give the same observations, masks and records."""
    from moonriver_env import moonriver_v0

    envs = [moonriver_v0.raw_env(num_players=3, mode="legends", backend=b) for b in BACKENDS]
    for env in envs:
        env.reset(seed=11)
    rng = np.random.default_rng(0)
    while not envs[0].game.is_over:
        agent = envs[0].agent_selection
        seen = [env.observe(agent) for env in envs]
        assert all(env.agent_selection == agent for env in envs)
        assert np.array_equal(seen[0]["observation"], seen[1]["observation"])
        assert np.array_equal(seen[0]["action_mask"], seen[1]["action_mask"])
        ids = np.flatnonzero(seen[0]["action_mask"])
        aid = int(ids[rng.integers(len(ids))])
        for env in envs:
            env.step(aid)
    assert envs[0].game_record() == envs[1].game_record()
    assert envs[0].rewards == envs[1].rewards


def test_one_ply_margins_are_greedys_values_on_the_reference() -> None:
    """The core's one-ply margins equal Greedy's clone-and-apply values on the Python engine."""
    from moonriver_env.agents.greedy import action_values

    config = GameConfig(num_players=2, mode="legends")
    ref, fast = Game(config, 6), core.Game(config, 6)
    rng = np.random.default_rng(6)
    valued = 0
    margin_phases = (Phase.BUILD, Phase.DROUGHT, Phase.RECRUIT, Phase.COWBOY, Phase.THIEF,
                     Phase.BONUS)
    while not ref.is_over:
        ids = ref.legal_action_ids()
        if ref.phase in margin_phases:
            expected = [v for v, _ in action_values(ref, ids.tolist())]
            assert fast.one_ply_margins().tolist() == expected
            assert fast.one_ply_margins(ids[::-1]).tolist() == expected[::-1]
            valued += 1
        aid = int(ids[rng.integers(len(ids))])
        ref.apply(aid)
        fast.apply(aid)
    assert valued > 40
    with pytest.raises(RuntimeError, match="the game is over"):
        fast.one_ply_margins()


def test_one_ply_margins_refuse_illegal_ids() -> None:
    game = core.Game(seed=2)
    with pytest.raises(ValueError, match="every id must be legal now"):
        game.one_ply_margins(np.array([A.PASS_ID]))


def test_random_rollouts_play_legal_games() -> None:
    """A rollout plays ``depth`` legal decisions in place (fewer at the end): its record
    replays on the reference engine."""
    game = core.Game(GameConfig(num_players=3, mode="legends"), seed=12)
    assert game.random_rollout(25, seed=1) == 25
    Game.from_record(game.to_record(include_seed=True))
    played = game.random_rollout(10_000, seed=2)
    assert game.is_over and 0 < played < 10_000
    assert Game.from_record(game.to_record()).scores() == game.scores()
    assert game.random_rollout(5, seed=3) == 0
    with pytest.raises(ValueError, match="depth must be a non-negative int"):
        game.random_rollout(-1, seed=3)


@pytest.mark.parametrize("config", [GameConfig(num_players=4), GameConfig(num_players=2,
                                                                         mode="legends")])
def test_greedy_plays_the_same_game_on_both_backends(config: GameConfig) -> None:
    """Greedy (its one-ply values inside the core on core games) makes the same decisions."""
    from moonriver_env.agents.greedy import GreedyAgent

    records = []
    for backend in BACKENDS:
        game = make_game(config, 13, backend)
        agents = [GreedyAgent(seed=p) for p in range(config.num_players)]
        while not game.is_over:
            game.apply(agents[game.current_player].act(game, {}))
        records.append(game.to_record())
    assert records[0] == records[1]


def test_mcts_rollouts_run_inside_the_core() -> None:
    """MCTS on a core game rolls out inside the core and plays legal, seeded games."""
    from moonriver_env.agents.mcts import MCTSAgent

    def play(seed: int) -> dict:
        game = make_game(GameConfig(num_players=2), 5, "core")
        agent = MCTSAgent(simulations=8, rollout_depth=15, seed=seed)
        while not game.is_over:
            game.apply(agent.act(game, {}))
        return game.to_record()

    record = play(1)
    assert Game.from_record(record).to_record() == record  # every decision legal
    assert play(1) == record
