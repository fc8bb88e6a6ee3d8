"""One table of agent specs (moonriver_env.agents.specs.TABLE): the registry, the play server's
allow-list and paths, the batch seats and docs/agents.md all read it, so a new agent is one
module and one row."""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import pytest
from moonriver_env.agents import specs
from moonriver_env.agents.az import shipped_path
from moonriver_env.agents.registry import (
    REQUEST_SPECS,
    SPECS,
    batch_seat,
    make_agent,
    request_spec_problem,
    spec_paths,
)
from moonriver_env.agents.specs import TABLE, AgentSpec, markdown_table, rows

from moonriver_env.moonriver.batch import BuiltinSeat, NetworkSeat

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = {"SIMS": "3", "SECONDSs": "0.5s", "BUDGET": "3", "VARIANT": "2p-base"}


def _example(row: AgentSpec, folder: Path) -> str:
    """A spec of the row's form: budgets small, files real (a copy of the shipped network)."""
    weights = folder / "w.npz"
    if not weights.exists():
        shutil.copy(shipped_path(), weights)
    parts = [EXAMPLE.get(name, str(weights)) for name, _ in row.parts()]
    return ":".join([row.kind, *parts])


def _resolve(target: str) -> object:
    module, _, name = target.partition(":")
    return getattr(__import__(module, fromlist=[name]), name)


def test_the_docs_tables_are_the_spec_table() -> None:
    text = (ROOT / "docs" / "agents.md").read_text()
    for game in specs.GAMES:
        assert markdown_table(game) in text, f"docs/agents.md's {game} table is stale: " \
            f"paste moonriver_env.agents.specs.markdown_table({game!r})"
    assert len(re.findall(r"^\| `", text, re.MULTILINE)) == len(TABLE)


def test_the_spec_lists_are_the_tables() -> None:
    assert tuple(row.pattern for row in rows("moonriver")) == SPECS
    assert tuple(row.pattern for row in rows("moonriver") if row.request) == REQUEST_SPECS
    assert len(set(SPECS)) == len(SPECS)


@pytest.mark.parametrize("row", TABLE, ids=lambda r: f"{r.game}-{r.pattern}")
def test_each_row_names_functions_that_exist_and_one_builder_a_kind(row: AgentSpec) -> None:
    assert callable(_resolve(row.build))
    if row.seat_build:
        assert callable(_resolve(row.seat_build))
    same_kind = [r for r in rows(row.game) if r.kind == row.kind and r.takes_arg]
    assert len({r.build for r in same_kind}) <= 1  # the builder says what is wrong


@pytest.mark.parametrize("fields", [
    {"pattern": "net", "seat": "network"}, {"pattern": "net", "seat_build": "m:f"},
    {"pattern": "net", "files": "all"}, {"pattern": "net", "seat": "core"},
    {"pattern": "Net:SIMS"}, {"pattern": "net SIMS"}, {"pattern": "net:SIMS]"},
])
def test_a_row_is_checked_when_written(fields: dict[str, str]) -> None:
    with pytest.raises(ValueError, match=fields["pattern"]):
        AgentSpec(**{"build": "m:f", "about": "x", **fields})


@pytest.mark.parametrize("row", [r for r in rows("moonriver") if "PATH" not in r.pattern
                                 or r.pattern.endswith(".npz") or ".npz:" in r.pattern],
                         ids=lambda r: r.pattern)
def test_each_spec_builds_its_agent_and_its_batch_seat(row: AgentSpec, tmp_path: Path) -> None:
    spec = _example(row, tmp_path)
    if spec.startswith("pretrained:/"):  # PPO weights: the az network is no PPO file
        spec = f"pretrained:{ROOT / 'agents' / 'weights' / '2p-base.npz'}"
    assert make_agent(spec, seed=1).name == spec
    if row.seat == "builtin":
        assert batch_seat(spec) == BuiltinSeat(spec)
    elif row.seat == "network":
        seat = batch_seat(spec)
        assert isinstance(seat, NetworkSeat) and seat.name == spec
        assert seat.simulations == (3 if "SIMS" in row.pattern else 0)
    else:  # a time budget, a sampled policy, PPO weights: no batch seat plays them
        with pytest.raises(ValueError, match="seat"):
            batch_seat(spec)


@pytest.mark.parametrize("row", rows("moonriver"), ids=lambda r: r.pattern)
def test_the_play_servers_checks_follow_the_table(row: AgentSpec, tmp_path: Path) -> None:
    spec = _example(row, tmp_path)
    assert (request_spec_problem(spec) is None) == row.request, spec
    if any(name in specs.BUDGETS for name, _ in row.parts()) and row.request:
        assert "budget must be" in (request_spec_problem(spec, max_simulations=2,
                                                         max_seconds=0.25) or "")
    paths = spec_paths(spec)
    assert paths == ([str(tmp_path / "w.npz")] if "PATH" in row.pattern else []), spec


COIN = '''
"""A new agent: one module."""
import numpy as np


class CoinAgent:
    """Flips a coin over the legal actions."""

    def __init__(self, flips: int, seed, name: str) -> None:
        self.flips, self.name, self.rng = flips, name, np.random.default_rng(seed)

    def reset(self, seed=None) -> None:
        pass

    def act(self, game, observation) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[self.rng.integers(legal.size)])


def coin_from_spec(spec: str, seed=None) -> CoinAgent:
    return CoinAgent(int(spec.partition(":")[2]), seed, spec)
'''


def test_a_new_agent_is_one_module_and_one_table_row(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "coin_agent.py").write_text(textwrap.dedent(COIN))
    monkeypatch.syspath_prepend(str(tmp_path))
    row = AgentSpec("coin:SIMS", "coin_agent:coin_from_spec", "a coin flip", request=True)
    monkeypatch.setattr(specs, "TABLE", (*TABLE, row))
    agent = make_agent("coin:7", seed=3)
    assert type(agent).__name__ == "CoinAgent" and agent.flips == 7
    assert request_spec_problem("coin:7") is None
    assert "budget must be" in (request_spec_problem("coin:70000") or "")
    assert spec_paths("coin:7") == []
    with pytest.raises(ValueError, match="'coin:7' has no batch seat"):
        batch_seat("coin:7")
    assert "| `coin:SIMS` | a coin flip | all | | | yes |" in markdown_table()
