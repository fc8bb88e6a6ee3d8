"""Every engine meets the written TableGame contract (moonriver_env.common.contract): it is an
instance of the Protocol, and each method behaves as the contract says on random games."""

from __future__ import annotations

import ast
import graphlib
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from moonriver_env.circles import CirclesConfig, CirclesGame
from moonriver_env.circles.observation import ObservationEncoder
from moonriver_env.common import IllegalActionError, TableGame
from moonriver_env.moonriver.aec_env import final_rewards
from moonriver_env.moonriver.rules import Game, GameConfig

try:
    from moonriver_env.moonriver.core import Game as CoreGame
except ImportError:  # the compiled core is not built here
    CoreGame = None

ROOT = Path(__file__).resolve().parents[2]

ENGINES: dict[str, Callable[[int, int], Any]] = {
    "moonriver-python": lambda n, seed: Game(GameConfig(num_players=n), seed=seed),
    "moonriver-core": lambda n, seed: CoreGame(GameConfig(num_players=n), seed=seed),
    "circles": lambda n, seed: CirclesGame(CirclesConfig(num_players=n), seed=seed),
}
CASES = [(name, n, seed) for name in ENGINES for n, seed in ((2, 3), (3, 11), (4, 29))]


def _make(name: str, n: int, seed: int) -> Any:
    if name == "moonriver-core" and CoreGame is None:
        pytest.skip("the compiled core is not built")
    return ENGINES[name](n, seed)


def _public(game: Any) -> tuple[Any, ...]:
    """What a player can see of the game now (its record, seed left out, and its decision)."""
    return (game.to_record(), game.current_player, game.legal_action_ids().tolist())


def _check_decision(game: Any, width: int) -> np.ndarray:
    """The types of a running game's answers, and the mask agreeing with the legal ids."""
    assert isinstance(game.is_over, bool) and not game.is_over
    assert type(game.current_player) is int and 0 <= game.current_player < game.num_players
    ids = game.legal_action_ids()
    assert isinstance(ids, np.ndarray) and ids.dtype.kind == "i" and ids.ndim == 1 and ids.size
    assert np.all(np.diff(ids) > 0)  # ascending, no repeats
    mask = game.legal_mask()
    assert isinstance(mask, np.ndarray) and mask.dtype == np.int8 and mask.shape == (width,)
    assert not mask.flags.writeable
    assert np.array_equal(np.flatnonzero(mask), ids)
    assert game.returns() == [0.0] * game.num_players
    with pytest.raises(RuntimeError):
        game.scores()
    return ids


@pytest.mark.parametrize("name", list(ENGINES))
def test_each_engine_is_a_table_game(name: str) -> None:
    game = _make(name, 3, 1)
    assert isinstance(game, TableGame)
    assert isinstance(game.clone(), TableGame)


@pytest.mark.parametrize(("name", "n", "seed"), CASES)
def test_each_method_keeps_the_contract_on_random_games(name: str, n: int, seed: int) -> None:
    game = _make(name, n, seed)
    rng = np.random.default_rng(seed)
    width = game.legal_mask().size
    decisions = 0
    while not game.is_over:
        ids = _check_decision(game, width)
        if decisions % 7 == 0:  # an illegal id raises the common error and changes nothing
            before = _public(game)
            illegal = int(np.flatnonzero(game.legal_mask() == 0)[rng.integers(width - ids.size)])
            with pytest.raises(IllegalActionError):
                game.apply(illegal)
            with pytest.raises(IllegalActionError):
                game.apply(width)  # past the enumeration
            assert _public(game) == before
        if decisions % 23 == 0:  # a clone plays on without touching the original
            before = _public(game)
            twin = game.clone()
            assert type(twin) is type(game) and _public(twin) == before
            twin.determinize(np.random.default_rng(decisions))
            assert _public(twin) == before  # only hidden things are redrawn
            for _ in range(5):
                if twin.is_over:
                    break
                legal = twin.legal_action_ids()
                twin.apply(int(legal[rng.integers(legal.size)]))
            assert _public(game) == before
        game.apply(int(ids[rng.integers(ids.size)]))
        decisions += 1
    assert game.current_player == -1 and game.legal_action_ids().size == 0
    assert not game.legal_mask().any() and game.legal_mask().shape == (width,)
    scores = game.scores()
    assert len(scores) == n
    winners = game.winners()
    assert winners and winners == sorted(set(winners)) and set(winners) <= set(range(n))
    returns = game.returns()
    assert isinstance(returns, list) and len(returns) == n
    assert all(type(r) is float and r in (-1.0, 0.0, 1.0) for r in returns)
    losers = [p for p in range(n) if p not in winners]
    assert all(returns[p] == -1.0 for p in losers)
    assert len({returns[p] for p in winners}) == 1 and returns[winners[0]] >= 0.0
    assert sum(returns) == returns[winners[0]] * len(winners) - len(losers)
    if name != "circles":
        assert returns == final_rewards(game, "win")  # moonriver_v0's "win" reward
    record = game.to_record()
    assert record["seed"] == seed  # shown once over
    assert type(game).from_record(record).to_record() == record


def test_circles_shares_a_win_as_its_rules_say() -> None:
    """Circles' returns: +1 a sole winner, 0 each of shared winners (Moon River: +1 each)."""
    for seed in range(40):
        game = _make("circles", 4, seed)
        rng = np.random.default_rng(seed)
        while not game.is_over:
            ids = game.legal_action_ids()
            game.apply(int(ids[rng.integers(ids.size)]))
        won = 1.0 if len(game.winners()) == 1 else 0.0
        assert [game.returns()[p] for p in game.winners()] == [won] * len(game.winners())
        assert game.scores() == [game.wealth(p) for p in range(4)]


def test_tournament_observation_of_a_player_not_to_act_is_as_wide_as_circles_mask() -> None:
    """The tournament's lazy observation: a Circles seat not to act sees Circles' all-zero mask
    (87 wide), not Moon River's 2710."""
    from moonriver_env.training import tournament

    config = CirclesConfig(num_players=3)
    game = CirclesGame(config, seed=5)
    waiting = (game.current_player + 1) % 3
    obs = tournament.LazyObservation(ObservationEncoder(config), game, waiting)
    assert game.num_actions == 87
    assert obs["action_mask"].shape == (87,) and not obs["action_mask"].any()
    assert not obs["action_mask"].flags.writeable
    acting = tournament.LazyObservation(ObservationEncoder(config), game, game.current_player)
    assert np.array_equal(acting["action_mask"], game.legal_mask())
    assert acting["observation"].shape == (ObservationEncoder(config).size,)


MOON_RIVER_MODULES = ("moonriver", "moonriver_v0")  # all of Moon River, and its env's face
GAMES = ("moonriver", "circles")
ABOVE_GAMES = ("agents", "training", "play")


def _imported(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            if node.module == "moonriver_env":  # from moonriver_env import engine
                names += [f"moonriver_env.{a.name}" for a in node.names]
    return names


def test_common_imports_no_game_and_nothing_above() -> None:
    """common/ is below every game: it imports no game, agent, training or play module (lazy
    imports inside functions included)."""
    files = sorted((ROOT / "moonriver_env" / "common").glob("*.py"))
    assert len(files) > 5
    for path in files:
        for module in _imported(path):
            parts = module.split(".")
            assert not (parts[0] == "moonriver_env" and len(parts) > 1
                        and parts[1] in GAMES + ABOVE_GAMES), f"{path.name} imports {module}"


def test_circles_imports_nothing_from_moon_river() -> None:
    files = [*sorted((ROOT / "moonriver_env" / "circles").glob("*.py")),
             ROOT / "moonriver_env" / "circles_far_west_v0.py"]
    assert len(files) > 5
    for path in files:
        for module in _imported(path):
            parts = module.split(".")
            assert not (parts[0] == "moonriver_env" and len(parts) > 1
                        and parts[1] in MOON_RIVER_MODULES), f"{path.name} imports {module}"


def test_no_game_imports_agents_training_or_play() -> None:
    """A game is below the agents, training and play: no module of moonriver_env/moonriver or
    moonriver_env/circles imports them, lazy imports inside functions included (the batched
    games take seats the agents package built)."""
    files = [path for game in GAMES for path in sorted((ROOT / "moonriver_env" / game).rglob(
        "*.py"))]
    assert len(files) > 30
    for path in files:
        for module in _imported(path):
            parts = module.split(".")
            assert not (parts[0] == "moonriver_env" and len(parts) > 1
                        and parts[1] in ABOVE_GAMES), f"{path.relative_to(ROOT)} imports {module}"


# The installed package maps these folders to moonriver_env.agents / moonriver_env.training.
MAPPED = {"agents": ROOT / "agents", "training": ROOT / "training"}


def _module_name(path: Path) -> str:
    """The dotted name a source file is imported as."""
    for name, folder in MAPPED.items():
        if folder in path.parents:
            parts = ["moonriver_env", name, *path.relative_to(folder).with_suffix("").parts]
            break
    else:
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Each module of the package (agents/ and training/ included) -> the package's modules it
    imports: relative, lazy and type-checking imports and ``from package import module``
    included."""
    folders = [ROOT / "moonriver_env", *MAPPED.values()]
    files = [p for folder in folders for p in folder.rglob("*.py") if "__pycache__" not in p.parts]
    paths = {_module_name(p): p for p in files}
    packages = {_module_name(p) for p in files if p.name == "__init__.py"}
    graph = {}
    for name, path in paths.items():
        here = name.split(".") if name in packages else name.split(".")[:-1]
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = here[:len(here) - node.level + 1] if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                found |= {module} | {f"{module}.{alias.name}" for alias in node.names}
        graph[name] = {m for m in found if m in paths and m != name}
    return graph


def test_no_modules_import_each_other_in_a_circle() -> None:
    """The package's imports form no circle (rules.data and rules.scoring, the observation and
    the reference game, sb3's callbacks and trainer, the fast recipe's losses and play pool
    did)."""
    graph = _import_graph()
    assert "moonriver_env.agents.registry" in graph and len(graph) > 100
    assert "moonriver_env.moonriver.rules.scoring" in graph["moonriver_env.moonriver.rules.game"]
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as err:
        raise AssertionError(f"modules import each other in a circle: {err.args[1]}") from None


def test_agent_protocol_is_typed_on_the_contract() -> None:
    from moonriver_env.agents.base import Agent, CallableAgent

    game = typing.get_type_hints(Agent.act)["game"]  # Agent[G]: G a kind of TableGame
    assert isinstance(game, typing.TypeVar) and game.__bound__ is TableGame
    assert typing.get_type_hints(CallableAgent.act)["game"] is TableGame


def test_one_error_class_for_every_game_and_no_re_export_shims() -> None:
    """The public names stay where users find them (moonriver_env.moonriver.rules, .circles); the
    internal modules that only handed names on from their old homes are gone."""
    from pathlib import Path

    import moonriver_env.circles
    import moonriver_env.moonriver.aec_env
    import moonriver_env.moonriver.rules
    from moonriver_env.common import errors

    assert (moonriver_env.moonriver.rules.IllegalActionError
            is moonriver_env.circles.IllegalActionError is errors.IllegalActionError)
    package = Path(moonriver_env.moonriver.rules.__file__).parents[1]
    for gone in ("aec_common.py", "gym_common.py", "../agents/circles_registry.py"):
        assert not (package / gone).exists(), gone
    with pytest.raises(IllegalActionError, match=r"0\.\.2709"):
        moonriver_env.moonriver.aec_env.action_id(1.0)
