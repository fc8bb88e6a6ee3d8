"""GameConfig validation and serialisation; data files (plot manifest, boards) and their errors."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from moonriver_env.moonriver.rules import DataFileError, Game, GameConfig, Phase
from moonriver_env.moonriver.rules import actions as A
from moonriver_env.moonriver.rules.data import default_path

PLOT_HEADER = "kind,terrain,nugget,beaver,corn,cows,skull,circle,count,number"
LEGENDS = ["big_jo", "calamity", "mary", "wesley"]


# ------------------------------------------------------------------ GameConfig values
@pytest.mark.parametrize(
    ("kwargs", "field", "allowed"),
    [
        ({"num_players": 1}, "num_players", "2, 3 or 4"),
        ({"num_players": 5}, "num_players", "2, 3 or 4"),
        ({"num_players": "4"}, "num_players", "2, 3 or 4"),
        ({"num_players": True}, "num_players", "2, 3 or 4"),
        ({"num_players": 3.0}, "num_players", "2, 3 or 4"),
        ({"mode": "expert"}, "mode", "legends"),
        ({"mode": None}, "mode", "base"),
        ({"mode": "legends", "scenario": 0}, "scenario", "[1, 2, 3, 4]"),
        ({"mode": "legends", "scenario": 5}, "scenario", "[1, 2, 3, 4]"),
        ({"mode": "legends", "scenario": "2"}, "scenario", "[1, 2, 3, 4]"),
        ({"mode": "legends", "scenario": True}, "scenario", "[1, 2, 3, 4]"),
        ({"scenario": 1}, "scenario", "legends"),
        ({"mode": "legends", "num_players": 3, "boards": ("mary", "wesley")}, "boards",
         "one board per player"),
        ({"mode": "legends", "num_players": 2, "boards": ("mary", "wesley", "calamity")},
         "boards", "one board per player"),
        ({"mode": "legends", "num_players": 2, "boards": ("mary", "camp")}, "boards",
         "big_jo"),
        ({"mode": "legends", "num_players": 2, "boards": ("mary", "zorro")}, "boards",
         "allowed"),
        ({"mode": "legends", "num_players": 2, "boards": ("mary", "mary")}, "boards",
         "distinct"),
        ({"mode": "legends", "num_players": 2, "boards": "mary"}, "boards",
         "one board per player"),
        ({"num_players": 2, "boards": ("mary", "wesley")}, "boards", "legends"),
        ({"auto_forced": 1}, "auto_forced", "True or False"),
        ({"auto_forced": "yes"}, "auto_forced", "True or False"),
        ({"auto_forced": None}, "auto_forced", "True or False"),
    ],
)
def test_bad_config_values_are_refused(kwargs: dict, field: str, allowed: str) -> None:
    with pytest.raises(ValueError) as info:
        GameConfig(**kwargs)
    message = str(info.value)
    assert f"GameConfig.{field}" in message, message
    assert allowed in message, message


def test_unknown_board_message_lists_the_legend_boards() -> None:
    with pytest.raises(ValueError) as info:
        GameConfig(num_players=2, mode="legends", boards=("mary", "zorro"))
    message = str(info.value)
    assert "zorro" in message
    for name in LEGENDS:
        assert name in message


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("mode", ["base", "legends"])
def test_good_configs(num_players: int, mode: str) -> None:
    cfg = GameConfig(num_players=num_players, mode=mode)
    assert cfg.rows == (10 if num_players == 2 else 5)
    game = Game(cfg, seed=0)
    assert len(game.ranches) == num_players
    if mode == "base":
        assert game.scenario is None and set(game.board_names) == {"camp"}
    else:
        assert game.scenario in (1, 2, 3, 4)
        assert len(set(game.board_names)) == num_players
        assert set(game.board_names) <= set(LEGENDS)


def test_named_boards_and_scenario_are_used() -> None:
    cfg = GameConfig(num_players=3, mode="legends", scenario=3,
                     boards=("wesley", "big_jo", "mary"))
    game = Game(cfg, seed=1)
    assert game.scenario == 3
    assert game.board_names == ("wesley", "big_jo", "mary")
    assert [r.capacity for r in game.ranches] == [3, 2, 4]


def test_boards_given_as_a_list_become_a_tuple() -> None:
    cfg = GameConfig(num_players=2, mode="legends", boards=["mary", "wesley"])
    assert cfg.boards == ("mary", "wesley")
    assert hash(cfg) == hash(GameConfig(num_players=2, mode="legends",
                                        boards=("mary", "wesley")))


def test_legend_draws_depend_on_the_seed() -> None:
    drawn = {(g.scenario, g.board_names) for g in
             (Game(GameConfig(num_players=2, mode="legends"), seed=s) for s in range(40))}
    assert {s for s, _ in drawn} == {1, 2, 3, 4}
    assert len({b for _, b in drawn}) > 4


# ---------------------------------------------------------- serialisation and freezing
CONFIGS = [
    GameConfig(),
    GameConfig(num_players=2, auto_forced=True),
    GameConfig(num_players=3, mode="legends"),
    GameConfig(num_players=4, mode="legends", scenario=2,
               boards=("mary", "wesley", "calamity", "big_jo")),
    GameConfig(num_players=2, mode="legends", scenario=4, boards=("big_jo", "mary"),
               plots_file=default_path("plots.csv"), boards_file=default_path("boards.json")),
]


@pytest.mark.parametrize("cfg", CONFIGS)
def test_to_dict_from_dict_round_trip(cfg: GameConfig) -> None:
    d = cfg.to_dict()
    assert json.loads(json.dumps(d)) == d
    again = GameConfig.from_dict(json.loads(json.dumps(d)))
    assert again == cfg
    assert again.boards is None or isinstance(again.boards, tuple)
    assert set(d) == {f.name for f in dataclasses.fields(GameConfig)}


def test_from_dict_refuses_unknown_keys() -> None:
    d = GameConfig().to_dict()
    d["colour"] = "red"
    with pytest.raises(ValueError) as info:
        GameConfig.from_dict(d)
    message = str(info.value)
    assert "colour" in message and "num_players" in message  # names the key and the allowed


def test_from_dict_validates_values() -> None:
    d = GameConfig().to_dict()
    d["num_players"] = 9
    with pytest.raises(ValueError, match="num_players"):
        GameConfig.from_dict(d)


def test_from_dict_partial_uses_defaults() -> None:
    assert GameConfig.from_dict({"num_players": 3}) == GameConfig(num_players=3)


def test_config_is_frozen() -> None:
    cfg = GameConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.num_players = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.mode = "legends"  # type: ignore[misc]
    assert cfg.num_players == 4
    assert hash(cfg) == hash(GameConfig())


# ------------------------------------------------------------------------ data files
def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def default_text(name: str) -> str:
    return Path(default_path(name)).read_text(encoding="utf-8")


def test_user_copy_of_the_plot_manifest_works(tmp_path: Path) -> None:
    path = write(tmp_path, "my_plots.csv", default_text("plots.csv"))
    cfg = GameConfig(num_players=3, plots_file=path)
    assert cfg.data.num_plots == 96
    ours = Game(cfg, seed=3)
    theirs = Game(GameConfig(num_players=3), seed=3)
    rng_a, rng_b = np.random.default_rng(0), np.random.default_rng(0)
    while not ours.is_over:
        ids = ours.legal_action_ids()
        assert np.array_equal(ids, theirs.legal_action_ids())
        ours.apply(int(ids[rng_a.integers(ids.size)]))
        theirs.apply(int(ids[rng_b.integers(ids.size)]))
    assert ours.scores() == theirs.scores()
    assert ours.to_record()["config"]["plots_file"] == str(Path(path).resolve())
    assert Game.from_record(json.loads(json.dumps(ours.to_record()))).scores() == ours.scores()


def test_user_manifest_with_other_symbols_is_used(tmp_path: Path) -> None:
    """A manifest where every plot is a 2-cow farm: the first build puts 4 cows down."""
    path = write(tmp_path, "farms.csv", PLOT_HEADER + "\n1,farm,0,0,0,2,0,0,96,5\n")
    game = Game(GameConfig(num_players=4, plots_file=path), seed=0)
    while game.phase != Phase.BUILD:
        game.apply(int(game.legal_action_ids()[0]))
    builds = [i for i in game.legal_action_ids().tolist() if i != A.PASS_ID]
    player = game.current_player
    game.apply(builds[0])
    assert int(game.ranches[player].cows.sum()) == 4
    assert game.supply == 28


def manifest_with(line: str | None = None, header: str = PLOT_HEADER,
                  replace: tuple[str, str] | None = None) -> str:
    body = default_text("plots.csv").splitlines()[1:]
    if replace is not None:
        body = [row.replace(*replace, 1) if row.startswith(replace[0].split(",")[0] + ",")
                else row for row in body]
    if line is not None:
        body.append(line)
    return "\n".join([header, *body]) + "\n"


BAD_MANIFESTS = {
    "bad header": (manifest_with(header=PLOT_HEADER.replace("terrain", "landscape")),
                   "header must be"),
    "missing column": (manifest_with(header=PLOT_HEADER.rsplit(",", 1)[0]), "header must be"),
    "empty file": ("", "header must be"),
    "unknown terrain": (manifest_with(replace=("3,desert", "3,swamp")), "terrain must be one of"),
    "non-integer count": (manifest_with("26,farm,0,0,0,0,0,0,two,9"),
                          "'count' must be an integer"),
    "negative count": (manifest_with("26,farm,0,0,0,0,0,0,-1,9"), "'count' must be in"),
    "non-integer cows": (manifest_with("26,farm,0,0,0,x,0,0,1,9"), "'cows' must be an integer"),
    "three cows": (manifest_with("26,farm,0,0,0,3,0,0,1,9"), "'cows' must be in 0..2"),
    "skull 2": (manifest_with("26,farm,0,0,0,0,2,0,1,9"), "'skull' must be in 0..1"),
    "duplicate kind": (manifest_with("5,farm,0,0,0,0,0,0,1,9"), "'kind' must be a unique"),
    "empty kind": (manifest_with(",farm,0,0,0,0,0,0,1,9"), "'kind' must be a unique"),
    "too few plots": (PLOT_HEADER + "\n1,farm,0,0,0,0,0,0,7,1\n", "at least 8 plots"),
    "no plots": (PLOT_HEADER + "\n", "at least 8 plots"),
}


@pytest.mark.parametrize("case", list(BAD_MANIFESTS), ids=list(BAD_MANIFESTS))
def test_malformed_plot_manifest(tmp_path: Path, case: str) -> None:
    text, problem = BAD_MANIFESTS[case]
    path = write(tmp_path, "bad_plots.csv", text)
    with pytest.raises(DataFileError) as info:
        GameConfig(plots_file=path)
    message = str(info.value)
    assert "bad_plots.csv" in message, message
    assert problem in message, message
    assert isinstance(info.value, ValueError)


def test_manifest_error_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "bad_plots.csv", manifest_with(replace=("3,desert", "3,swamp")))
    with pytest.raises(DataFileError, match=r"line 4: terrain must be one of \['desert'"):
        GameConfig(plots_file=path)


def test_eight_plots_are_enough(tmp_path: Path) -> None:
    path = write(tmp_path, "tiny.csv", PLOT_HEADER + "\n1,farm,0,0,0,1,0,0,8,1\n")
    for n in (2, 3, 4):
        game = Game(GameConfig(num_players=n, plots_file=path), seed=n)
        rng = np.random.default_rng(n)
        while not game.is_over:
            ids = game.legal_action_ids()
            game.apply(int(ids[rng.integers(ids.size)]))
        assert game.round == 2


def boards_doc(**changes) -> dict:
    doc = json.loads(default_text("boards.json"))
    for name, fields in changes.items():
        entry = next(b for b in doc["boards"] if b["name"] == name)
        entry.update(fields)
    return doc


BAD_BOARDS = {
    "bridge off the rows": (boards_doc(camp={"bridges": [[10, 0]]}), "bridges[0] must be"),
    "bridge off the columns": (boards_doc(mary={"bridges": [[0, 5]]}), "bridges[0] must be"),
    "bridge not a pair": (boards_doc(mary={"bridges": [[0]]}), "bridges[0] must be"),
    "bridge not integers": (boards_doc(mary={"bridges": [["0", "1"]]}), "must be [row, col]"),
    "homestead bridge": (boards_doc(wesley={"bridges": [[0, 0], [0, 2]]}), "bridges[1] must be"),
    "no bridges": (boards_doc(mary={"bridges": []}), "non-empty list"),
    "reserve 0": (boards_doc(calamity={"reserve": 0}), "'reserve' must be an integer in 1..4"),
    "reserve 5": (boards_doc(calamity={"reserve": 5}), "'reserve' must be an integer in 1..4"),
    "reserve text": (boards_doc(calamity={"reserve": "3"}), "'reserve' must be an integer"),
    "bad side": (boards_doc(mary={"side": "night"}), "'side' must be 'camp' or 'legend'"),
    "duplicate name": (boards_doc(mary={"name": "wesley"}), "'name' must be a unique"),
    "no camp board": (boards_doc(camp={"side": "legend"}), "at least one board with side 'camp'"),
    "no boards list": ({"format": "moonriver-boards"}, "non-empty 'boards' list"),
    "not an object": ([1, 2, 3], "non-empty 'boards' list"),
}


@pytest.mark.parametrize("case", list(BAD_BOARDS), ids=list(BAD_BOARDS))
def test_malformed_boards_file(tmp_path: Path, case: str) -> None:
    doc, problem = BAD_BOARDS[case]
    path = write(tmp_path, "bad_boards.json", json.dumps(doc))
    with pytest.raises(DataFileError) as info:
        GameConfig(boards_file=path)
    message = str(info.value)
    assert "bad_boards.json" in message, message
    assert problem in message, message


def test_boards_file_not_json(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.json", '{"boards": [')
    with pytest.raises(DataFileError, match=r"broken\.json: not valid JSON"):
        GameConfig(boards_file=path)


def test_too_few_legend_boards_for_the_players(tmp_path: Path) -> None:
    doc = boards_doc()
    doc["boards"] = [b for b in doc["boards"] if b["name"] in ("camp", "mary", "wesley")]
    path = write(tmp_path, "two_legends.json", json.dumps(doc))
    assert GameConfig(num_players=2, mode="legends", boards_file=path)
    with pytest.raises(ValueError, match="fewer than 3 players"):
        GameConfig(num_players=3, mode="legends", boards_file=path)
    assert GameConfig(num_players=4, mode="base", boards_file=path)


@pytest.mark.parametrize("field", ["plots_file", "boards_file", "partners_file", "bonus_file"])
def test_missing_data_file(tmp_path: Path, field: str) -> None:
    missing = tmp_path / "nowhere" / "absent.csv"
    with pytest.raises(DataFileError) as info:
        GameConfig(**{field: str(missing)})
    message = str(info.value)
    assert str(missing) in message and "not found" in message


def test_directory_is_not_a_data_file(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match="not found"):
        GameConfig(plots_file=str(tmp_path))


def test_malformed_partners_and_bonus_files(tmp_path: Path) -> None:
    path = write(tmp_path, "partners.csv", "specialist,count\nsheriff,3\n")
    with pytest.raises(DataFileError, match=r"partners\.csv, line 2: specialist must be one of"):
        GameConfig(partners_file=path)
    path = write(tmp_path, "bonus.csv", default_text("bonus_tiles.csv").splitlines()[0] + "\n")
    with pytest.raises(DataFileError, match=r"bonus\.csv: exactly 2 bonus tiles"):
        GameConfig(bonus_file=path)


# --------------------------------------------------------------- custom board layouts
def first_build_cells(cfg: GameConfig, seed: int = 0) -> tuple[Game, set[tuple[int, int]]]:
    """The cells covered by the legal builds of the first build decision of a game."""
    game = Game(cfg, seed=seed)
    while game.phase != Phase.BUILD:
        game.apply(int(game.legal_action_ids()[0]))
    assert (game.ranches[game.current_player].plot == -1).all(), "not the first build"
    cells = set()
    for aid in game.legal_action_ids().tolist():
        if aid != A.PASS_ID:
            cells.update(A.ACTIONS[aid].cells)
    return game, cells


def test_custom_bridges_change_placement_legality(tmp_path: Path) -> None:
    _, default_cells = first_build_cells(GameConfig(num_players=4))
    # Every first domino touches a camp bridge: (0,0), (1,2) or (0,4).
    assert default_cells == {(0, 0), (1, 0), (0, 1), (1, 2), (1, 1), (1, 3), (2, 2),
                             (0, 4), (0, 3), (1, 4)}
    doc = boards_doc(camp={"bridges": [[1, 0], [1, 4]]})
    path = write(tmp_path, "other_bridges.json", json.dumps(doc))
    game, cells = first_build_cells(GameConfig(num_players=4, boards_file=path))
    assert cells == {(1, 0), (0, 0), (2, 0), (1, 1), (1, 4), (0, 4), (2, 4), (1, 3)}
    assert game.ranches[0].board.bridges == ((1, 0), (1, 4))
    # The same plots, the same seed: only the bridges differ, so do the legal builds.
    assert cells != default_cells


def test_custom_reserve_size_is_used(tmp_path: Path) -> None:
    doc = boards_doc(camp={"reserve": 1})
    path = write(tmp_path, "tiny_reserve.json", json.dumps(doc))
    game = Game(GameConfig(num_players=4, boards_file=path), seed=2)
    assert all(r.capacity == 1 for r in game.ranches)
    rng = np.random.default_rng(2)
    while not game.is_over:
        for p, ranch in enumerate(game.ranches):
            assert len(ranch.hand) <= 1 + (p == game.current_player)
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(ids.size)]))


def test_custom_legend_bridges(tmp_path: Path) -> None:
    """Mary's single bridge moved to (0, 0): her first domino must cover (0, 0)."""
    doc = boards_doc(mary={"bridges": [[0, 0]]})
    path = write(tmp_path, "mary.json", json.dumps(doc))
    cfg = GameConfig(num_players=2, mode="legends", boards=("mary", "wesley"), boards_file=path)
    game = Game(cfg, seed=0)
    while not (game.phase == Phase.BUILD and game.current_player == 0):
        ids = game.legal_action_ids().tolist()
        pass_ok = game.phase == Phase.BUILD and A.PASS_ID in ids
        game.apply(A.PASS_ID if pass_ok else ids[0])  # nobody builds unless forced
    assert (game.ranches[0].plot == -1).all()
    for aid in game.legal_action_ids().tolist():
        if aid != A.PASS_ID:
            assert (0, 0) in A.ACTIONS[aid].cells


# ------------------------------------- regressions (engine bugs found by these tests)
@pytest.mark.parametrize("field", ["plots_file", "boards_file", "partners_file", "bonus_file"])
def test_non_string_data_file_is_refused(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        GameConfig(**{field: 123})


def test_path_data_file_gives_a_json_config() -> None:
    try:
        cfg = GameConfig(plots_file=Path(default_path("plots.csv")))
    except ValueError:
        return  # refusing a Path outright is also acceptable
    d = json.loads(json.dumps(cfg.to_dict()))
    assert GameConfig.from_dict(d).data == cfg.data
    json.dumps(Game(cfg, seed=0).to_record())


def test_scores_follow_each_games_own_data_files(tmp_path: Path) -> None:
    """Many manifests alike but for their nugget count: each game scores its own nuggets."""
    # A score memo keyed on id(data) once served a freed GameData's scores to a new one with
    # the same id; that showed within ~100 manifests.
    for i in range(600):
        nuggets = i % 4
        path = write(tmp_path, f"plots_{i}.csv",
                     PLOT_HEADER + f"\n1,desert,{nuggets},0,0,0,0,0,8,1\n")
        game = Game(GameConfig(num_players=2, plots_file=path), seed=0)
        while not game.is_over:
            game.apply(int(game.legal_action_ids()[0]))
        for p, score in enumerate(game.scores()):
            placed = int((game.ranches[p].plot >= 0).sum())
            assert placed > 0
            assert score.resources == placed * nuggets, f"manifest {i}, player {p}"
        del game
