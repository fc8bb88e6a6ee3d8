"""The engine's chosen draws (Game.set_next_draws) and the OpenSpiel game python_moonriver."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from moonriver_env.moonriver.rules import Game, GameConfig

try:
    import pyspiel
    from moonriver_env.agents import openspiel_bots as bots

    import moonriver_env.moonriver.openspiel as mos
except ImportError:  # the openspiel extra is not installed: only the engine tests run
    pyspiel = mos = bots = None

needs_openspiel = pytest.mark.skipif(pyspiel is None, reason="needs the openspiel extra")

# ---------------------------------------------------------------- engine: chosen draws


def _finish_round(game: Game, rng: np.random.Generator) -> None:
    """Play random decisions until the setup or the current round is over (a column drawn)."""
    box = len(game.box)
    while len(game.box) == box and not game.is_over:
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(ids.size)]))


def test_set_next_draws_orders_the_box_and_pile_and_leaves_the_generator() -> None:
    game = Game(GameConfig(num_players=3), seed=7)
    box, pile = list(game.box), list(game.pile)
    state = game.rng.bit_generator.state
    plots, partners = [box[0], box[5], box[-1], box[9]], [pile[3], pile[0]]
    game.set_next_draws("box", plots)
    game.set_next_draws("pile", partners)
    # Draws pop from the end: the chosen come first, the rest keeps its order.
    assert game.box == [p for p in box if p not in plots] + plots[::-1]
    assert game.pile == [t for t in pile if t not in partners] + partners[::-1]
    assert game.rng.bit_generator.state == state


def test_the_next_column_is_the_chosen_plots() -> None:
    game = Game(GameConfig(num_players=4), seed=3)
    chosen = sorted(game.box)[:4]
    game.set_next_draws("box", chosen)
    _finish_round(game, np.random.default_rng(0))  # the setup draws the second column
    assert sorted(game.pending) == chosen
    number = game.data.number[game.data.plot_kind]
    assert [number[p] for p in game.pending] == sorted(number[p] for p in chosen)


def test_first_draws_choose_the_first_saloon_and_column() -> None:
    config = GameConfig(num_players=2)
    plain = Game(config, seed=11)
    chosen = Game(config, seed=11, first_draws={"pile": [4, 0, 19, 7, 2], "box": [95, 0, 50, 3]})
    assert chosen.saloon == [4, 0, 19, 7, 2]
    assert sorted(chosen.active) == [0, 3, 50, 95]
    assert chosen.setup_order == plain.setup_order  # the seeded seating is untouched
    assert Game(config, seed=11).to_record() == plain.to_record()  # no first_draws: unchanged


def test_chosen_draws_are_reproducible() -> None:
    def play() -> dict:
        game = Game(GameConfig(num_players=2), seed=5, first_draws={"box": [1, 2, 3, 4]})
        rng = np.random.default_rng(9)
        for k in range(3):
            game.set_next_draws("box", sorted(game.box)[k:k + 4])
            game.set_next_draws("pile", sorted(game.pile)[:1])
            _finish_round(game, rng)
        return game.to_record()

    assert play() == play()


@pytest.mark.parametrize(("source", "items", "words"), [
    ("deck", [1], "'box' (plots) or 'pile' (partners)"),
    ("box", [1, 1], "distinct ids it holds"),
    ("pile", [20], "distinct ids it holds"),
    ("box", [True], "distinct ids it holds"),
    ("box", [1.0], "distinct ids it holds"),
])
def test_set_next_draws_refuses_bad_draws(source: str, items: list, words: str) -> None:
    game = Game(GameConfig(), seed=1)
    box, pile = list(game.box), list(game.pile)
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        game.set_next_draws(source, items)
    assert (game.box, game.pile) == (box, pile)


def test_first_draws_refuse_a_plot_twice() -> None:
    with pytest.raises(ValueError, match="distinct ids"):
        Game(GameConfig(), seed=1, first_draws={"box": [3, 3, 4, 5]})


@needs_openspiel
@pytest.mark.parametrize("players", [2, 3, 4])
def test_only_setup_selections_and_the_last_round_draw(players: int) -> None:
    """The rule the OpenSpiel state relies on to look ahead only where a decision may draw."""
    rng = np.random.default_rng(players)
    for seed in range(4):
        game = Game(GameConfig(num_players=players), seed=seed)
        while not game.is_over:
            may = mos._may_draw(game)
            box, pile = len(game.box), len(game.pile)
            ids = game.legal_action_ids()
            game.apply(int(ids[rng.integers(ids.size)]))
            assert may or (len(game.box), len(game.pile)) == (box, pile)


# ------------------------------------------------------------------- OpenSpiel game
VARIANTS = ["players=2", "players=3", "players=4",
            "players=2,mode=legends", "players=3,mode=legends", "players=4,mode=legends",
            "players=2,mode=legends,scenario=1", "players=3,mode=legends,scenario=2",
            "players=4,mode=legends,scenario=3", "players=4,mode=legends,scenario=4"]


def _load(params: str = "players=4") -> pyspiel.Game:
    return pyspiel.load_game(f"python_moonriver({params})")


def _at_decision(state: pyspiel.State) -> pyspiel.State:
    """Take the first outcome of chance nodes until a player decides."""
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    return state


def _random_state(game: pyspiel.Game, seed: int, decisions: int | None = None) -> pyspiel.State:
    """A state reached by random chance outcomes and decisions (to the end by default)."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    made = 0
    while not state.is_terminal() and (decisions is None or made < decisions):
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
            made += 1
    return state


@needs_openspiel
@pytest.mark.parametrize("params", VARIANTS)
def test_random_sim_test_with_serialization(params: str) -> None:
    """OpenSpiel's own consistency checks: clones, serialisation, masks, returns, lengths."""
    pyspiel.random_sim_test(_load(params), num_sims=1, serialize=True, verbose=False)


@needs_openspiel
def test_game_info() -> None:
    game = _load("players=3,mode=legends")
    assert str(game) == "python_moonriver(mode=legends,players=3,scenario=0)"
    assert game.num_players() == 3
    assert game.num_distinct_actions() == 2710
    assert game.max_chance_outcomes() == 96  # plots
    assert game.observation_tensor_shape() == [4934]
    assert game.information_state_tensor_shape() == [4934]
    assert (game.min_utility(), game.max_utility()) == (-1.0, 1.0)
    kind = game.get_type()
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert kind.information == pyspiel.GameType.Information.PERFECT_INFORMATION


@pytest.mark.parametrize(("params", "words"), [
    ("players=5", "players must be 2, 3 or 4"),
    ("mode=tiny", "mode must be one of"),
    ("mode=legends,scenario=7", "scenario must be 0"),
    ("scenario=2", "scenario applies only to mode=legends"),
])
@needs_openspiel
def test_bad_parameters_say_what_is_allowed(params: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        _load(params)


@needs_openspiel
def test_setup_is_chance_and_the_engine_deals_the_chosen() -> None:
    game = _load("players=4,mode=legends")
    state = game.new_initial_state()
    kinds = []
    while state.is_chance_node():
        outcomes = state.chance_outcomes()
        assert sum(p for _, p in outcomes) == pytest.approx(1.0)
        assert len({p for _, p in outcomes}) == 1  # uniform
        kinds.append(state._queue[0])
        state.apply_action(outcomes[-1][0])  # the last outcome: not the engine's own order
    assert kinds == ["scenario"] + ["board"] * 3 + ["seat"] * 3 + ["pile"] * 5 + ["box"] * 4
    engine = mos.engine_game(state)
    assert engine.scenario == 4
    assert engine.board_names == ("wesley", "mary", "calamity", "big_jo")  # sorted, last first
    assert engine.setup_order == [3, 2, 1, 0]
    assert engine.saloon == [19, 18, 17, 16, 15]
    assert sorted(engine.active) == [92, 93, 94, 95]
    assert state.current_player() == 3


@needs_openspiel
def test_round_end_draws_are_chance_over_what_the_box_and_pile_hold() -> None:
    game = _load("players=2")
    state = _random_state(game, seed=4, decisions=30)
    while not state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    engine = mos.engine_game(state)
    chosen: dict[str, list[int]] = {"box": [], "pile": []}
    while state.is_chance_node():
        kind = state._queue[0]
        outcomes = [o for o, _ in state.chance_outcomes()]
        held = engine.box if kind == "box" else engine.pile
        assert outcomes == sorted(set(held) - set(chosen[kind]))
        chosen[kind].append(outcomes[len(outcomes) // 2])
        state.apply_action(chosen[kind][-1])
    assert len(chosen["box"]) == 4
    engine = mos.engine_game(state)
    assert sorted(engine.pending) == sorted(chosen["box"])
    assert set(chosen["pile"]) <= set(engine.saloon)


@needs_openspiel
def test_clone_is_independent_and_pickles_round_trip() -> None:
    game = _load("players=3")
    state = _random_state(game, seed=1, decisions=40)
    clone, before = state.clone(), str(state)
    assert str(clone) == before and clone.history() == state.history()
    for _ in range(30):  # a round end included
        _at_decision(clone).apply_action(clone.legal_actions()[0])
    assert str(state) == before and len(clone.history()) > len(state.history())
    again = pickle.loads(pickle.dumps(state))
    assert str(again) == str(state) and again.history() == state.history()
    ser = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(ser)
    assert str(game2) == str(game) and str(state2) == str(state)
    assert str(pickle.loads(pickle.dumps(game))) == str(game)


@needs_openspiel
def test_replaying_the_history_rebuilds_the_state() -> None:
    game = _load("players=4,mode=legends")
    state = _random_state(game, seed=2, decisions=120)
    again = game.new_initial_state()
    for action in state.history():
        again.apply_action(action)
    assert str(again) == str(state)
    assert mos.engine_game(again).to_record()["events"] == \
        mos.engine_game(state).to_record()["events"]


@needs_openspiel
def test_tensors_strings_and_returns_follow_the_engine() -> None:
    from moonriver_env.moonriver.aec_env import final_rewards
    from moonriver_env.moonriver.observation import ObservationEncoder
    from moonriver_env.moonriver.rules import ActionCodec

    game = _load("players=2")
    root = game.new_initial_state()
    assert not np.any(root.observation_tensor(0))  # nothing dealt yet
    state = _at_decision(_random_state(game, seed=3, decisions=25))
    engine = mos.engine_game(state)
    encoder = ObservationEncoder()
    for p in range(2):
        expected = encoder.encode(engine, p)
        assert np.array_equal(np.asarray(state.observation_tensor(p), np.float32), expected)
        assert np.array_equal(np.asarray(state.information_state_tensor(p), np.float32),
                              expected)
    player = state.current_player()
    assert [state.action_to_string(player, a) for a in state.legal_actions()] == \
        [ActionCodec.to_text(a) for a in engine.legal_action_ids().tolist()]
    assert state.returns() == [0.0, 0.0]
    assert state.observation_string(0) == str(state)
    end = _random_state(game, seed=3)
    assert end.returns() == final_rewards(mos.engine_game(end), "win")
    assert end.current_player() == pyspiel.PlayerId.TERMINAL


@needs_openspiel
def test_illegal_moves_raise_the_engine_error_and_change_nothing() -> None:
    from moonriver_env.moonriver.rules import IllegalActionError

    game = _load("players=2")
    state = game.new_initial_state()
    with pytest.raises(ValueError, match="chance outcome 500 is not possible"):
        state.apply_action(500)
    state = _at_decision(_random_state(game, seed=5, decisions=3))
    before, history = str(state), state.history()
    illegal = next(a for a in range(2710) if a not in state.legal_actions())
    with pytest.raises(IllegalActionError, match="Legal now"):
        state.apply_action(illegal)
    assert str(state) == before and state.history() == history


@needs_openspiel
def test_agent_bot_plays_the_pretrained_agent() -> None:
    game = _load("players=4")
    state = _at_decision(_random_state(game, seed=6, decisions=10))
    bot = bots.AgentBot("pretrained")
    bot.restart_at(state)
    assert bot.step(state) in state.legal_actions()
    with pytest.raises(ValueError, match="past its setup"):
        mos.engine_game(game.new_initial_state())


@needs_openspiel
def test_openspiel_mcts_plays_our_mcts() -> None:
    """A tiny match: OpenSpiel's MCTSBot (2 simulations) against mcts:2, one game per seat."""
    result = bots.play_match(2, games=2, players=2, seed=0)
    assert (result.agent, result.mcts, result.games) == ("mcts:2", "openspiel-mcts:2", 2)
    assert result.mcts_seats == [0, 1]
    assert result.mcts_share + result.agent_share == pytest.approx(1.0)
    for share, (lo, hi) in ((result.mcts_share, result.mcts_interval),
                            (result.agent_share, result.agent_interval)):
        assert 0.0 <= lo <= share <= hi <= 1.0
    for row in result.returns:
        assert set(row) <= {-1.0, 1.0} and 1.0 in row
    assert "openspiel-mcts:2" in str(result)


@needs_openspiel
def test_match_is_reproducible_and_checks_its_budget() -> None:
    first = bots.play_match(2, agent="random", games=1, players=3, seed=4)
    assert bots.play_match(2, agent="random", games=1, players=3, seed=4).returns == first.returns
    assert first.mcts_share + 2 * first.agent_share == pytest.approx(1.0)
    with pytest.raises(ValueError, match="simulations must be an integer >= 2"):
        bots.play_match(1, games=1)
    with pytest.raises(ValueError, match="games must be an integer >= 1"):
        bots.play_match(1, games=0)


@needs_openspiel
@pytest.mark.slow
@pytest.mark.parametrize("params", VARIANTS)
def test_random_sim_test_many(params: str) -> None:
    pyspiel.random_sim_test(_load(params), num_sims=20, serialize=True, verbose=False)


@needs_openspiel
@pytest.mark.slow
def test_openspiel_mcts_against_our_mcts_sweep() -> None:
    result = bots.play_match(10, games=10, players=2, seed=1)
    assert result.games == 10 and len(result.returns) == 10


# ------------------------------------------------------------ records of chosen draws


@needs_openspiel
@pytest.mark.parametrize(("params", "seed"), [("players=2", 3), ("players=3", 4),
                                              ("players=4,mode=legends", 5)])
def test_a_finished_game_record_replays(params: str, seed: int) -> None:
    state = _random_state(_load(params), seed=seed)
    record = mos.engine_game(state).to_record()
    assert record["over"] and record["seed"] is not None and record["chosen_draws"] is True
    again = Game.from_record(record)  # verifies events, final state and scores
    assert again.to_record() == record
    from moonriver_env.moonriver.core import Game as CoreGame
    assert CoreGame.from_record(record).to_record() == record


@needs_openspiel
def test_a_running_game_record_with_its_seed_replays() -> None:
    state = _random_state(_load("players=3"), seed=6, decisions=60)
    game = mos.engine_game(state)
    assert not game.is_over and game.to_record()["seed"] is None
    record = game.to_record(include_seed=True)
    assert Game.from_record(record).to_record(include_seed=True) == record
    assert pickle.loads(pickle.dumps(game)).to_record(include_seed=True) == record


def test_seeded_records_carry_no_chosen_draws() -> None:
    assert "chosen_draws" not in Game(GameConfig(), seed=1).to_record()
    from moonriver_env.moonriver.core import Game as CoreGame
    assert "chosen_draws" not in CoreGame(GameConfig(), seed=1).to_record()


def _chosen_record() -> dict:
    game = Game(GameConfig(num_players=2), seed=5, first_draws={"box": [1, 2, 3, 4]})
    _finish_round(game, np.random.default_rng(1))
    return game.to_record(include_seed=True)


@pytest.mark.parametrize(("edit", "words"), [
    (lambda r: r.update(chosen_draws=1), "'chosen_draws' is true when present"),
    (lambda r: r.update(chosen_draws=False), "'chosen_draws' is true when present"),
    (lambda r: next(e for e in r["events"] if e.get("event") == "column")
     .update(plots=[1, 2, 3, "4"]), "event 2: a column event .* must list integer ids"),
    (lambda r: next(e for e in r["events"] if e.get("event") == "saloon")
     .update(filled=[[0, 1.5]]), "a saloon event .* must list integer ids"),
    (lambda r: next(e for e in r["events"] if e.get("event") == "column")
     .update(plots=[1, 2, 3, 5]), "does not replay"),
])
def test_a_chosen_draws_record_refuses_bad_draws(edit, words: str) -> None:
    record = _chosen_record()
    assert Game.from_record(record).to_record(include_seed=True) == record
    edit(record)
    with pytest.raises(ValueError, match=words):
        Game.from_record(record)


@needs_openspiel
@pytest.mark.parametrize("backend", ["core", "python"])
@pytest.mark.parametrize(("params", "seed", "decisions"), [("players=2", 3, None),
                                                            ("players=3,mode=legends", 6, 60)])
def test_the_replay_command_plays_the_records_chosen_draws(tmp_path, capsys, backend: str,
                                                           params: str, seed: int,
                                                           decisions: int | None) -> None:
    """``python -m moonriver_env replay`` of an OpenSpiel game's record (its draws are the
    chance outcomes, not the seed's) reaches the record's table (it used to stop at the first
    decision that met a draw the seed did not make, exit 2)."""
    import json

    from moonriver_env.__main__ import main as cli

    game = mos.engine_game(_random_state(_load(params), seed=seed, decisions=decisions))
    record = game.to_record(include_seed=True)
    assert record["chosen_draws"] is True and game.is_over == (decisions is None)
    path = tmp_path / "openspiel.json"
    path.write_text(json.dumps(record))
    assert cli(["replay", str(path), "--no-step", "--backend", backend]) == 0
    out = capsys.readouterr().out
    made = sum(e["type"] == "decision" and not e.get("auto") for e in record["events"])
    assert f"=== decision {made}/{made}:" in out
    table, _, ending = out.rpartition("\n\n")
    assert table.endswith(game.table_text())
    assert ending.startswith("final scores:" if game.is_over else "the game is unfinished")


@needs_openspiel
def test_the_play_server_replays_the_records_chosen_draws() -> None:
    """The play page's replay of an OpenSpiel game's record reaches its last table (it used to
    rebuild the draws from the seed and refuse the record as not replaying)."""
    from starlette.testclient import TestClient

    from moonriver_env.moonriver.render.svg import table_svg
    from moonriver_env.play.server import GameOptions, create_app

    game = mos.engine_game(_random_state(_load("players=2"), seed=3))
    record = game.to_record(include_seed=True)
    assert record["chosen_draws"] is True and game.is_over
    client = TestClient(create_app(GameOptions()))
    r = client.post("/api/replays", json=record)
    assert r.status_code == 201, r.text
    rid, steps = r.json()["id"], r.json()["steps"]
    end = client.get(f"/api/replays/{rid}?step={steps}").json()
    assert end["svg"] == table_svg(game, end["names"])
    assert client.get(f"/api/replays/{rid}?step=1").json()["step"] == 1  # and back again
