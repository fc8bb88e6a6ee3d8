"""The fixed action enumeration (ActionCodec) and how apply() refuses what is not an action."""

from __future__ import annotations

import numpy as np
import pytest

from moonriver_env.moonriver.rules import (
    ACTIONS,
    NUM_ACTIONS,
    ActionCodec,
    Bonus,
    Build,
    CowboyMove,
    Desperado,
    Discard,
    Drought,
    Game,
    GameConfig,
    IllegalActionError,
    Pass,
    Phase,
    Recruit,
    Select,
    Thief,
)
from moonriver_env.moonriver.rules import actions as A

SEGMENT_SIZES = {"select": 4, "build": 2000, "pass": 1, "discard": 10, "recruit": 20,
                 "cowboy": 200, "drought": 50, "desperado": 75, "thief": 150, "bonus": 200}
SEGMENT_TYPES = {"select": Select, "build": Build, "pass": Pass, "discard": Discard,
                 "recruit": Recruit, "cowboy": CowboyMove, "drought": Drought,
                 "desperado": Desperado, "thief": Thief, "bonus": Bonus}


def test_num_actions() -> None:
    assert NUM_ACTIONS == 2710
    assert ActionCodec.num_actions == NUM_ACTIONS == len(ACTIONS)
    assert sum(SEGMENT_SIZES.values()) == NUM_ACTIONS


def test_every_id_decodes_and_encodes_to_itself() -> None:
    for aid in range(NUM_ACTIONS):
        action = ActionCodec.decode(aid)
        assert ActionCodec.encode(action) == aid
        assert ACTIONS[aid] is action


def test_numpy_ids_decode() -> None:
    assert ActionCodec.decode(np.int64(5)) == ActionCodec.decode(5)
    assert ActionCodec.to_text(np.int32(A.PASS_ID)) == "pass"


def test_texts_are_unique_and_round_trip() -> None:
    texts = [ActionCodec.to_text(aid) for aid in range(NUM_ACTIONS)]
    assert len(set(texts)) == NUM_ACTIONS
    for aid, text in enumerate(texts):
        assert text == ActionCodec.decode(aid).text() == ActionCodec.to_text(ACTIONS[aid])
        assert ActionCodec.from_text(text) == aid
        assert ActionCodec.from_text(f"  {text}\n") == aid


def test_from_text_refuses_unknown_text() -> None:
    for bad in ("", "build", "pass please", "select position 4", "PASS"):
        with pytest.raises(ValueError, match="unknown action text"):
            ActionCodec.from_text(bad)


def test_examples_of_texts() -> None:
    assert ActionCodec.to_text(Select(2)) == "select position 2"
    assert ActionCodec.to_text(Pass()) == "pass"
    assert ActionCodec.to_text(Build(1, 0, 1, 3, True)) == "build plots 1+0 at (1,3)-(2,3)"
    assert ActionCodec.to_text(Build(0, 1, 4, 3, False)) == "build plots 0+1 at (4,3)-(4,4)"


def test_segments() -> None:
    assert list(ActionCodec.segments) == list(SEGMENT_SIZES)
    start = 0
    for name, (lo, hi) in ActionCodec.segments.items():
        assert lo == start and hi - lo == SEGMENT_SIZES[name], name
        start = hi
        for aid in (lo, (lo + hi) // 2, hi - 1):
            assert ActionCodec.segment_of(aid) == name
        assert all(type(ACTIONS[i]) is SEGMENT_TYPES[name] for i in range(lo, hi))
    assert start == NUM_ACTIONS
    assert ActionCodec.segment_of(A.PASS_ID) == "pass"
    assert ActionCodec.segment_of(0) == "select"
    assert ActionCodec.segment_of(NUM_ACTIONS - 1) == "bonus"
    for bad in (-1, NUM_ACTIONS, 10**6):
        with pytest.raises(ValueError, match=r"outside 0\.\.2709"):
            ActionCodec.segment_of(bad)


def test_structured_actions_are_listed_once() -> None:
    by_type: dict[type, set] = {}
    for action in ACTIONS:
        fields = tuple(action)
        assert fields not in by_type.setdefault(type(action), set())
        by_type[type(action)].add(fields)
    # Each domino placement on two cells of the 10x5 grid appears once per ordered slot pair.
    assert len(A.PAIRS) == 20 and len(set(A.PAIRS)) == 20
    assert all(a != b for a, b in A.PAIRS)


def test_build_cells() -> None:
    assert Build(0, 1, 2, 3, False).cells == ((2, 3), (2, 4))
    assert Build(0, 1, 2, 3, True).cells == ((2, 3), (3, 3))


@pytest.mark.parametrize(
    "bad",
    [
        "pass",
        5,
        None,
        (0,),
        (),
        Select(4),
        Select(-1),
        Build(0, 0, 0, 0, False),
        Build(5, 0, 0, 0, False),
        Build(0, 1, 10, 0, False),
        Discard(1, 0),
        Discard(0, 5),
        Recruit(5, 0, 0),
        CowboyMove(0, 0, 4),
        Drought(10, 0),
        Desperado(0, 0, 0),
        Thief(4, 0, 0),
        Bonus(2, 0, 0, 0),
        (Select, 0),
    ],
    ids=repr,
)
def test_encode_refuses_a_non_action(bad) -> None:
    with pytest.raises(ValueError, match="not an action of the enumeration"):
        ActionCodec.encode(bad)


def test_encode_tells_types_apart() -> None:
    """NamedTuples of different types with equal fields are different actions."""
    assert Select(1) == (1,) and Drought(0, 1) == Discard(0, 1)
    assert ActionCodec.encode(Drought(0, 1)) != ActionCodec.encode(Discard(0, 1))
    assert ActionCodec.segment_of(ActionCodec.encode(Drought(0, 1))) == "drought"
    assert ActionCodec.segment_of(ActionCodec.encode(Discard(0, 1))) == "discard"


# ------------------------------------------------------------------ apply() refusals
@pytest.fixture
def game() -> Game:
    return Game(GameConfig(num_players=3), seed=0)


@pytest.mark.parametrize("bad", [-1, NUM_ACTIONS, NUM_ACTIONS + 100, np.int64(-5),
                                 np.int64(NUM_ACTIONS)], ids=repr)
def test_apply_refuses_out_of_range_ids(game: Game, bad) -> None:
    before = game.to_record()
    with pytest.raises(IllegalActionError) as info:
        game.apply(bad)
    assert "action ids run from 0 to 2709" in str(info.value)
    assert game.to_record() == before


@pytest.mark.parametrize("bad", [True, False, np.bool_(True)], ids=repr)
def test_apply_refuses_bools(game: Game, bad) -> None:
    before = game.to_record()
    with pytest.raises(IllegalActionError) as info:
        game.apply(bad)
    assert "an int id or a structured action" in str(info.value)
    assert game.to_record() == before


@pytest.mark.parametrize("bad", ["pass", "select position 0", "0", 0.0, 1.5, None, [0],
                                 {"action": 0}, b"\x00"], ids=repr)
def test_apply_refuses_non_ids(game: Game, bad) -> None:
    before = game.to_record()
    with pytest.raises(IllegalActionError) as info:
        game.apply(bad)
    message = str(info.value)
    assert "an int id or a structured action" in message
    assert "Build(...)" in message and "Pass()" in message
    assert game.to_record() == before


@pytest.mark.parametrize("bad", [(0,), (), (1, 2, 3), Select(7), Build(0, 0, 0, 0, False),
                                 Thief(0, 0, 0)], ids=repr)
def test_apply_refuses_unknown_tuples(game: Game, bad) -> None:
    before = game.to_record()
    with pytest.raises(IllegalActionError) as info:
        game.apply(bad)
    assert "not an action of the enumeration" in str(info.value)
    assert game.to_record() == before


def test_illegal_action_error_explains_and_lists_legal_actions(game: Game) -> None:
    assert game.phase == Phase.SETUP
    with pytest.raises(IllegalActionError) as info:
        game.apply(A.PASS_ID)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.action == "pass"
    assert "passing is not possible in phase setup" in err.reason
    assert err.legal == [ActionCodec.to_text(i) for i in game.legal_action_ids().tolist()]
    assert "Legal now: select position 0" in str(err)
    with pytest.raises(IllegalActionError, match="a select action is expected, not a build"):
        game.apply(Build(0, 1, 0, 0, False))


def test_taken_position_is_refused(game: Game) -> None:
    game.apply(Select(1))
    with pytest.raises(IllegalActionError, match="position 1 of the column is taken"):
        game.apply(Select(1))


def test_structured_and_id_forms_are_the_same_decision() -> None:
    by_id = Game(GameConfig(num_players=4, mode="legends"), seed=12)
    by_struct = Game(GameConfig(num_players=4, mode="legends"), seed=12)
    rng = np.random.default_rng(12)
    while not by_id.is_over:
        ids = by_id.legal_action_ids()
        assert by_struct.legal_actions() == [ActionCodec.decode(i) for i in ids.tolist()]
        aid = int(ids[rng.integers(ids.size)])
        by_id.apply(np.int64(aid))
        by_struct.apply(ActionCodec.decode(aid))
    assert by_struct.to_record() == by_id.to_record()


def test_game_over_refuses_everything() -> None:
    game = Game(GameConfig(num_players=3), seed=4)
    rng = np.random.default_rng(4)
    while not game.is_over:
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(ids.size)]))
    assert not game.legal_mask().any() and game.legal_actions() == []
    before = game.to_record()
    for aid in (0, A.PASS_ID, NUM_ACTIONS - 1):
        with pytest.raises(IllegalActionError, match="the game is over"):
            game.apply(aid)
    assert game.to_record() == before


def test_mask_is_read_only(game: Game) -> None:
    mask = game.legal_mask()
    with pytest.raises(ValueError):
        mask[0] = 0


@pytest.mark.parametrize("bad", [-1, -NUM_ACTIONS, NUM_ACTIONS], ids=repr)
def test_decode_refuses_out_of_range_ids(bad: int) -> None:
    with pytest.raises(ValueError, match="2709"):
        ActionCodec.decode(bad)
    with pytest.raises(ValueError, match="2709"):
        ActionCodec.to_text(bad)


@pytest.mark.parametrize("action", [
    Select(0.0), Select(np.float64(0)), Select(True), Select(np.bool_(True)), Select(0 + 0j),
    Build(0, 1, 0, 0, 0), Build(0.0, 1, 0, 0, False), Build(0, 1, 0, 0, 1.0)])
def test_a_structured_action_with_a_wrongly_typed_field_is_refused(action) -> None:
    """5.0, True or a complex never stand in for an integer field (nor 0/1 for a bool)."""
    with pytest.raises(ValueError, match="must be"):
        ActionCodec.encode(action)
    game = Game(GameConfig(num_players=4), seed=3)
    before = game.to_record(include_seed=True)
    with pytest.raises(IllegalActionError, match="must be"):
        game.apply(action)
    assert game.to_record(include_seed=True) == before


def test_numpy_integer_fields_still_encode() -> None:
    """A numpy integer is an integer."""
    assert ActionCodec.encode(Select(np.int64(1))) == ActionCodec.encode(Select(1))
