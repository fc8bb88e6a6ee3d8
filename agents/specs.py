"""The table of agent specs: one row per form of spec, read by everything that takes a spec.

This module imports no agent: builders are named ``"module:function"``. See docs/agents.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypedDict

SIMS = re.compile(r"[0-9]{1,12}")  # SIMS: simulations a decision
SECONDS_BUDGET = re.compile(r"([0-9]{1,12}(\.[0-9]{0,12})?|\.[0-9]{1,12})s")  # SECONDSs
VARIANTS = ("4p-base", "2p-base")  # the variants with shipped PPO weights (pretrained:VARIANT)
BUDGETS = ("SIMS", "SECONDSs", "BUDGET")  # the placeholders of a search's budget
FILES = ("arg", "parts", "")  # AgentSpec.files
SEATS = ("builtin", "network", "")  # AgentSpec.seat
_KIND = re.compile(r"[a-z][a-z+-]*")
_TOKEN = re.compile(r"\[:([A-Za-z.]+)\]|:([A-Za-z.]+)")


class Budget(TypedDict, total=False):
    """A search budget: simulations or seconds (a searching agent's keyword arguments)."""

    simulations: int
    seconds: float


def parse_budget(text: str) -> Budget:
    """``SIMS`` or ``SECONDSs`` as a Budget; else int's or float's ValueError."""
    if text.endswith("s"):
        return {"seconds": float(text[:-1])}
    return {"simulations": int(text)}


@dataclass(frozen=True)
class AgentSpec:
    """One form of agent spec (a row of the table)."""

    pattern: str  # placeholders in capitals, [:PART] optional: pretrained+puct[:VARIANT]:BUDGET
    build: str  # "module:function", called as function(spec, seed)
    about: str
    variants: str = "all"
    files: str = ""  # "arg": all after the colon is a path; "parts": the path-like parts
    request: bool = False  # a play server's request may name it (budgets bounded)
    default: str = ""  # the budget when left out (mcts alone: 100)
    seat: str = ""  # "builtin": the core plays it; "network": seat_build makes a NetworkSeat
    seat_build: str = ""
    needs: str = ""
    game: str = "moonriver"

    def __post_init__(self) -> None:
        if self.files not in FILES or self.seat not in SEATS:
            raise ValueError(f"{self.pattern}: files must be one of {FILES}, seat one of "
                             f"{SEATS}")
        if (self.seat == "network") != bool(self.seat_build):
            raise ValueError(f"{self.pattern}: a network seat, and only one, has a seat_build")
        if _KIND.match(self.pattern) is None or "".join(
                m.group(0) for m in _TOKEN.finditer(self.pattern)) != self.pattern[
                len(self.kind):]:
            raise ValueError(f"{self.pattern}: a pattern is KIND then :PART or [:PART] parts")

    @property
    def kind(self) -> str:
        """The text before the first colon (``pretrained+puct``)."""
        match = _KIND.match(self.pattern)
        assert match is not None, self.pattern
        return match.group(0)

    @property
    def takes_arg(self) -> bool:
        """Whether the spec goes on after its kind (``mcts`` too: its budget may be left out)."""
        return self.pattern != self.kind

    def parts(self) -> list[tuple[str, bool]]:
        """The placeholders after the kind, each with whether it may be left out."""
        out = [(m.group(1) or m.group(2), m.group(1) is not None)
               for m in _TOKEN.finditer(self.pattern)]
        if self.default:  # a default budget: the budget may be left out
            out = [(name, optional or name in BUDGETS) for name, optional in out]
        return out


_SHIPPED = "the shipped network for every variant (`agents/weights/all.npz`)"
_AZ_SEAT = "moonriver_env.agents.az:network_seat"  # every network seat is an az network
TABLE: tuple[AgentSpec, ...] = (
    AgentSpec("random", "moonriver_env.agents.random_agent:random_from_spec",
              "a uniformly random legal action", request=True, seat="builtin"),
    AgentSpec("greedy", "moonriver_env.agents.greedy:greedy_from_spec",
              "the best change of (own running score - best opponent's) one decision ahead, "
              "ties at random", request=True, seat="builtin"),
    AgentSpec("mcts:SIMS", "moonriver_env.agents.mcts:mcts_from_spec",
              "information-set MCTS over determinizations, random rollouts of 20 decisions "
              "valued by the score margin (`mcts` alone: 100 simulations); on a core game the "
              "search runs inside the core", request=True, default="100", seat="builtin"),
    AgentSpec("mcts:SECONDSs", "moonriver_env.agents.mcts:mcts_from_spec",
              "the same with a time budget", request=True, default="100"),
    AgentSpec("pretrained", "moonriver_env.agents.az:shipped_from_spec",
              f"{_SHIPPED}: its policy's most likely legal action", request=True,
              seat="network", seat_build=_AZ_SEAT),
    AgentSpec("pretrained+search:SIMS", "moonriver_env.agents.az:shipped_from_spec",
              "the batched Gumbel search of the compiled core, every leaf valued by that "
              "network's C++ forward, mixed with a random playout's and weighed 3x against "
              "the prior at tables of 3 and 4 (1 to 100,000 simulations)", request=True,
              seat="network", seat_build=_AZ_SEAT),
    AgentSpec("pretrained+search:SECONDSs", "moonriver_env.agents.az:shipped_from_spec",
              "the same, about SECONDS a decision: the budget follows the measured time of a "
              "simulation", request=True),
    AgentSpec("pretrained:VARIANT", "moonriver_env.agents.pretrained:pretrained_from_spec",
              "the PPO weights of one variant, `pretrained:4p-base` or `pretrained:2p-base` "
              "(the fast recipe's, kept for comparison)", variants="that one", request=True),
    AgentSpec("pretrained:PATH.npz", "moonriver_env.agents.pretrained:pretrained_from_spec",
              "weights exported from a fast-recipe run (`agent.npz`)",
              variants="those its file names", files="parts"),
    AgentSpec("puct:SIMS", "moonriver_env.agents.puct:puct_from_spec",
              "PUCT over information sets with Greedy's one-ply values as its prior, random "
              "rollouts", request=True, default="200"),
    AgentSpec("puct:SECONDSs", "moonriver_env.agents.puct:puct_from_spec",
              "the same with a time budget", request=True, default="200"),
    AgentSpec("pretrained+puct[:VARIANT]:BUDGET", "moonriver_env.agents.puct:puct_from_spec",
              "PUCT with the PPO policy of VARIANT (4p-base when left out) as its prior",
              variants="that one", files="parts", request=True),
    AgentSpec("az:PATH.npz", "moonriver_env.agents.az:az_from_spec",
              "a `moonriver-train-az` network's most likely legal action", files="arg",
              seat="network", seat_build=_AZ_SEAT),
    AgentSpec("az-sample:PATH.npz", "moonriver_env.agents.az:az_from_spec",
              "the same, sampled from its policy", files="arg"),
    AgentSpec("az+search:PATH.npz:SIMS", "moonriver_env.agents.az:az_from_spec",
              "the batched search valued by that network (tables of 3 and 4 as above)",
              files="parts", seat="network", seat_build=_AZ_SEAT),
    AgentSpec("az+search:PATH.npz:SECONDSs", "moonriver_env.agents.az:az_from_spec",
              "the same with a time budget", files="parts"),
    AgentSpec("policy:PATH", "moonriver_env.agents.policy:policy_from_spec",
              "a MaskablePPO model of `moonriver-train` (`final_model.zip`), its most likely "
              "action", variants="as trained", files="arg", needs="`train` extra"),
    AgentSpec("policy-sample:PATH", "moonriver_env.agents.policy:policy_from_spec",
              "the same, sampled", variants="as trained", files="arg", needs="`train` extra"),
    AgentSpec("rllib:PATH", "moonriver_env.agents.rllib_agent:rllib_from_spec",
              "an RLlib run folder (its newest checkpoint) or one checkpoint of "
              "`moonriver-train-rllib`, no Ray instance needed", variants="as trained",
              files="arg", needs="`rllib` extra"),
    AgentSpec("rllib-sample:PATH", "moonriver_env.agents.rllib_agent:rllib_from_spec",
              "the same, sampled", variants="as trained", files="arg", needs="`rllib` extra"),
    AgentSpec("random", "moonriver_env.agents.random_agent:random_from_spec",
              "a uniformly random legal action (it reads only the mask, so it plays any game)",
              game="circles"),
    AgentSpec("heuristic", "moonriver_env.agents.circles_heuristic:heuristic_from_spec",
              "`CirclesHeuristicAgent` ([Circles](circles.md#agents-and-tournaments))",
              game="circles"),
)
GAMES = ("moonriver", "circles")


def rows(game: str = "moonriver") -> tuple[AgentSpec, ...]:
    """The table's rows of ``game``."""
    return tuple(row for row in TABLE if row.game == game)


def patterns(game: str = "moonriver", request: bool = False) -> tuple[str, ...]:
    """The patterns of ``game``'s specs (``request``: only those a request may name)."""
    return tuple(row.pattern for row in rows(game) if row.request or not request)


def any_variant_specs() -> tuple[str, ...]:
    """One pattern per kind of the Moon River specs that play every variant."""
    kinds: dict[str, str] = {}
    for row in rows("moonriver"):
        if row.variants == "all":
            kinds.setdefault(row.kind, row.pattern)
    return tuple(kinds.values())


def find(spec: str, game: str = "moonriver") -> AgentSpec | None:
    """The row building ``spec`` (a row with arguments takes any: its builder checks) or None."""
    kind, colon, arg = spec.partition(":")
    candidates = [row for row in rows(game) if row.kind == kind]
    bare = [row for row in candidates if not row.takes_arg]
    if bare and not colon:
        return bare[0]
    with_arg = [row for row in candidates if row.takes_arg]
    if with_arg and (arg or not bare):
        return with_arg[0]
    return None


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_table(game: str = "moonriver") -> str:
    """``game``'s specs as the Markdown table docs/agents.md shows."""
    if game != "moonriver":
        lines = ["| spec | what it plays |", "|---|---|"]
        lines += [f"| `{row.pattern}` | {_cell(row.about)} |" for row in rows(game)]
        return "\n".join(lines) + "\n"
    lines = ["| spec | what it plays | variants | batch seat | needs | request |",
             "|---|---|---|---|---|---|"]
    seats = {"builtin": "built-in", "network": "network", "": ""}
    for row in rows(game):
        cells = (f"`{row.pattern}`", row.about, row.variants, seats[row.seat], row.needs,
                 "yes" if row.request else "no")
        lines.append("|" + "|".join(f" {_cell(c)} " if c else " " for c in cells) + "|")
    return "\n".join(lines) + "\n"
