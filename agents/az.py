"""Agents on the search recipe's network (``moonriver-train-az``), played without torch.

One network plays every variant, so these agents are never refused one. See docs/agents.md.
"""

from __future__ import annotations

import functools
import math
import os
import time
import zipfile
from typing import TYPE_CHECKING, Any

import numpy as np
from moonriver_env.agents import pretrained
from moonriver_env.agents.base import Observation, SeededAgent
from moonriver_env.agents.specs import SECONDS_BUDGET, SIMS, parse_budget

from moonriver_env.common.validate import check_time_limit
from moonriver_env.moonriver.backend import game_class
from moonriver_env.moonriver.contract import has_core_extras

if TYPE_CHECKING:  # the batch (and its compiled core) is imported where a seat is built
    from moonriver_env.moonriver.batch.seats import NetworkSeat

AZ_FORMAT = "moonriver-az/1"
SHIPPED_FILE = "all.npz"  # weights/all.npz: the shipped network for every variant
SEATS = 4  # value outputs: the most players a table has
MAX_SIMULATIONS = 100_000


def seat_mask(num_players: Any) -> np.ndarray:
    """(B, 4) bool: which relative seats are at each row's table of ``num_players``."""
    return np.arange(SEATS)[None, :] < np.asarray(num_players).reshape(-1, 1)


def absolute_shares(relative: np.ndarray, seat: Any, num_players: Any) -> np.ndarray:
    """Win shares by player id (B, 4) from shares by seat relative to ``seat``, the mover."""
    relative = np.asarray(relative)
    seat, players = np.asarray(seat).reshape(-1), np.asarray(num_players).reshape(-1)
    rows = np.arange(relative.shape[0])[:, None]
    k = np.arange(SEATS)[None, :]
    out = np.zeros_like(relative)
    inside = k < players[:, None]
    ids = (seat[:, None] + k) % players[:, None]
    out[np.broadcast_to(rows, ids.shape)[inside], ids[inside]] = relative[inside]
    return out


class NumpyAZNet(pretrained.NumpyRanchNet):
    """The AZNet forward in numpy: masked logits and win shares per relative seat."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        super().__init__(arrays)
        if self.w["value_head.weight"].shape[0] != SEATS:
            raise ValueError(f"value_head.weight has shape {self.w['value_head.weight'].shape}:"
                             f" an az network gives {SEATS} seats' values")

    def evaluate(self, obs: np.ndarray, mask: np.ndarray, num_players: Any,
                 prior: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Masked logits (B, 2710) and win shares (B, 4) by seat relative to the player to move."""
        logits, value = self.forward_heads(obs, mask, prior)
        seats = seat_mask(num_players)
        value = np.where(seats, value, -np.inf)
        value = np.exp(value - value.max(axis=1, keepdims=True))
        return logits, (value / value.sum(axis=1, keepdims=True)).astype(np.float32)

    def __getstate__(self) -> dict[str, Any]:
        """The arrays only (pickling): the C++ copy, ``core``, is made again where used."""
        return {k: v for k, v in self.__dict__.items() if k != "core"}

    @functools.cached_property
    def core(self) -> Any:
        """The same network in C++ (``_core.AzNet``): values a search's leaves inside the core."""
        return core_net(self.w)


def core_net(arrays: dict[str, np.ndarray]) -> Any:
    """The C++ network (``_core.AzNet``) of a state dict's arrays (an ``.npz``'s or an AZNet's)."""
    from moonriver_env.moonriver.core import _core

    return _core.AzNet({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in arrays.items()},
                       pretrained.action_index())


def shipped_path() -> str:
    """The path of the shipped network for every variant (``pretrained``)."""
    from importlib import resources

    return str(resources.files("moonriver_env.agents").joinpath("weights", SHIPPED_FILE))


def load_az(path: str) -> tuple[NumpyAZNet, dict[str, Any]]:
    """The numpy network and metadata of a ``moonriver-train-az`` ``.npz`` (else an error)."""
    if not os.path.isfile(path):
        raise FileNotFoundError(2, "az network file not found", path)
    arrays, meta = pretrained.read_npz(path)
    if meta.get("format") != AZ_FORMAT:
        raise ValueError(f"{os.path.basename(path)} is not an az network (written by "
                         f"moonriver-train-az, format {AZ_FORMAT}); pretrained:PATH.npz plays "
                         f"the PPO recipe's weights")
    try:
        return NumpyAZNet(arrays), meta
    except ValueError as exc:
        raise ValueError(f"{os.path.basename(path)}: {exc}") from None


_CACHE: dict[str, tuple[NumpyAZNet, dict[str, Any]]] = {}


def cached_az(path: str) -> tuple[NumpyAZNet, dict[str, Any]]:
    """``load_az`` once per file path and process (agents share the read-only arrays)."""
    key = os.path.abspath(path)
    if key not in _CACHE:
        _CACHE[key] = load_az(path)
    return _CACHE[key]


def agent_weights(path: str) -> tuple[NumpyAZNet, dict[str, Any]]:
    """The cached network of ``path`` and its ``meta`` without players or mode (any variant)."""
    net, meta = cached_az(path)
    return net, {k: v for k, v in meta.items() if k not in ("num_players", "mode")}


class AZAgent(SeededAgent):
    """The network's policy alone: its most likely legal action, or a sample from it."""

    def __init__(self, path: str, deterministic: bool = True, seed: int | None = None,
                 name: str = "az") -> None:
        super().__init__(seed=seed, name=name)
        self.net, self.meta = agent_weights(path)
        self.deterministic = deterministic

    def policy(self, game: Any, observation: Observation) -> tuple[np.ndarray, np.ndarray]:
        """Probabilities over the 2710 ids (zero where illegal) and win shares by player id."""
        prior = pretrained.greedy_prior(game)[None] if self.net.uses_prior else None
        logits, shares = self.net.evaluate(observation["observation"][None],
                                           np.asarray(observation["action_mask"])[None],
                                           game.num_players, prior)
        p = np.exp(logits[0] - logits[0].max())
        return p / p.sum(), absolute_shares(shares, game.current_player, game.num_players)[0]

    def act(self, game: Any, observation: Observation) -> int:
        """The most likely legal action (or one drawn from the policy)."""
        p, _ = self.policy(game, observation)
        if self.deterministic:
            return int(np.argmax(p))
        return int(self.rng.choice(p.size, p=p))


def core_game(game: Any) -> Any:
    """``game`` as a game of the compiled core (a Python engine game is replayed there)."""
    if has_core_extras(game):
        return game
    return game_class("core").from_record(game.to_record(include_seed=True))


PLAY_SEARCH = {"max_considered": 16, "c_visit": 50.0, "c_scale": 1.0}  # the search's defaults
# What the search adds at tables of 3 and 4 (docs/agents.md): random playouts to the end mixed
# into the leaf values, and those values weighed 3x as much against the prior; at mcts:1000's
# time they lifted those games, and playouts cost 2-player ones (docs/results.md).
TABLE_SEARCH = {"rollout_weight": 0.8, "rollout_depth": 0, "rollout_temperature": 10.0,
                "c_scale": 3.0}
SEARCH_TABLES = (3, 4)


def play_search_settings(max_considered: int | None = None,
                         gumbel_scale: float = 0.0) -> dict[str, Any]:
    """``BatchedSearch``'s constants to play: ``PLAY_SEARCH`` unless overridden (agents, seats)."""
    return {**PLAY_SEARCH, "max_considered": max_considered or PLAY_SEARCH["max_considered"],
            "gumbel_scale": gumbel_scale}


def table_search(num_players: int) -> dict[str, Any]:
    """The settings the search agents add at a table of ``num_players`` (none at 2)."""
    return dict(TABLE_SEARCH) if num_players in SEARCH_TABLES else {}


class AZSearchAgent(SeededAgent):
    """The batched Gumbel search of one game, the network valuing every leaf (sims or seconds)."""

    CALIBRATION = 8  # simulations of a time-budgeted agent's first decision

    def __init__(self, path: str, simulations: int | None = None, seed: int | None = None,
                 name: str = "az+search", max_considered: int | None = None,
                 seconds: float | None = None, gumbel_scale: float = 0.0,
                 time_limit: float = 0.0) -> None:
        if (simulations is None) == (seconds is None):
            raise ValueError("give the budget as simulations or as seconds (one of them)")
        if simulations is not None and (isinstance(simulations, bool) or not isinstance(
                simulations, int) or not 1 <= simulations <= MAX_SIMULATIONS):
            raise ValueError(f"simulations must be an integer from 1 to {MAX_SIMULATIONS}, "
                             f"got {simulations!r:.40}")
        if seconds is not None and not (isinstance(seconds, (int, float))
                                        and math.isfinite(seconds) and seconds > 0):
            raise ValueError(f"seconds must be a finite number over 0, got {seconds!r:.40}")
        super().__init__(seed=seed, name=name)
        self.net, self.meta = agent_weights(path)
        self.simulations, self.seconds = simulations, seconds
        self.search_settings = play_search_settings(max_considered, gumbel_scale)
        self.per_simulation: float | None = None  # seconds a simulation took, so far
        self.time_limit = check_time_limit(time_limit)  # TimeCapped: a decision's cap (0: none)
        self.last_simulations = 0

    def budget(self) -> int:
        """The simulations of the next decision."""
        if self.simulations is not None:
            return self.simulations
        if self.per_simulation is None or self.seconds is None:
            return self.CALIBRATION
        return max(1, min(MAX_SIMULATIONS, int(self.seconds / self.per_simulation)))

    def act(self, game: Any, observation: Observation) -> int:
        """The action the search chooses (its own seed drawn from the agent's generator)."""
        from moonriver_env.moonriver.search import BatchedSearch

        sims = self.budget()
        start = time.perf_counter()
        settings = {**self.search_settings, **table_search(game.num_players)}
        search = BatchedSearch([core_game(game)], simulations=sims,
                               seed=int(self.rng.integers(2**62)), algorithm="gumbel",
                               greedy_prior=pretrained.SHAPE_WEIGHT if self.net.uses_prior
                               else None, time_limit=self.time_limit, **settings)
        result = search.run(self.net.core)
        done = sims  # a time cap can stop it sooner: each simulation visits one root child
        if self.time_limit and bool(result.searched[0]):
            done = max(1, int(result.visits[0].sum()))
        spent = (time.perf_counter() - start) / done
        self.per_simulation = spent if self.per_simulation is None else \
            0.7 * self.per_simulation + 0.3 * spent
        self.last_simulations = done
        return int(result.action[0])


def az_from_spec(spec: str, seed: int | None = None) -> AZAgent | AZSearchAgent:
    """``az:PATH``, ``az-sample:PATH``, ``az+search:PATH:SIMS`` or ``az+search:PATH:SECONDSs``."""
    kind, _, arg = spec.partition(":")
    if kind in ("az", "az-sample") and arg:
        return AZAgent(arg, deterministic=kind == "az", seed=seed, name=spec)
    path, _, budget = arg.rpartition(":")
    if kind == "az+search" and path and (budget.isdigit() or SECONDS_BUDGET.fullmatch(budget)):
        try:
            return AZSearchAgent(path, **parse_budget(budget), seed=seed, name=spec)
        except ValueError as exc:
            raise ValueError(f"agent spec {spec!r}: {exc}") from None
    raise ValueError(f"agent spec {spec!r}: expected az:PATH.npz, az-sample:PATH.npz, "
                     f"az+search:PATH.npz:SIMS (SIMS an integer from 1 to {MAX_SIMULATIONS}) "
                     f"or az+search:PATH.npz:SECONDSs (a number of seconds over 0)")


def shipped_from_spec(spec: str, seed: int | None = None) -> AZAgent | AZSearchAgent:
    """``pretrained`` (the shipped network's policy) or ``pretrained+search:SIMS|SECONDSs``."""
    kind, _, budget = spec.partition(":")
    if kind == "pretrained" and spec == kind:
        return AZAgent(shipped_path(), deterministic=True, seed=seed, name=spec)
    if kind != "pretrained+search" or not (SIMS.fullmatch(budget)
                                           or SECONDS_BUDGET.fullmatch(budget)):
        raise ValueError(f"agent spec {spec!r:.80}: expected pretrained+search:SIMS (an integer "
                         f"from 1 to {MAX_SIMULATIONS}) or pretrained+search:SECONDSs (a number "
                         f"of seconds over 0)")
    try:
        return AZSearchAgent(shipped_path(), **parse_budget(budget), seed=seed, name=spec)
    except ValueError as exc:
        raise ValueError(f"agent spec {spec!r:.80}: {exc}") from None


def _seat_network(spec: str) -> tuple[str, str]:
    """A network seat's file and budget text ("" for a policy seat); else a ValueError."""
    kind, _, arg = spec.partition(":")
    if spec == "pretrained":
        return shipped_path(), ""
    if kind == "az" and arg:
        return arg, ""
    if kind == "pretrained+search":
        return shipped_path(), arg
    path, _, budget = arg.rpartition(":")
    if kind == "az+search" and path:
        return path, budget
    raise ValueError(f"seat {spec!r:.80}: network seats are 'pretrained', 'az:PATH.npz', "
                     f"'pretrained+search:SIMS' and 'az+search:PATH.npz:SIMS' (a network "
                     f"file, then SIMS)")


def _seat_simulations(spec: str, budget: str) -> int:
    """A search seat's simulations a decision (0 for a policy seat's empty budget)."""
    if not budget and not spec.startswith(("pretrained+search", "az+search")):
        return 0
    sims = f"SIMS, an integer 1..{MAX_SIMULATIONS} without a leading zero"
    if SECONDS_BUDGET.fullmatch(budget):
        raise ValueError(f"seat {spec!r:.80}: batch seats take a simulation count ({sims}), "
                         f"not a time budget")
    if not (budget.isascii() and budget.isdigit()) or budget[0] == "0" \
            or int(budget) > MAX_SIMULATIONS:
        raise ValueError(f"seat {spec!r:.80}: a search seat's budget must be {sims}, got "
                         f"{budget!r:.20}")
    return int(budget)


def network_seat(spec: str) -> NetworkSeat:
    """The batch seat of a network spec, its network loaded once per file; else a ValueError."""
    from moonriver_env.moonriver.batch.seats import NetworkSeat

    path, budget = _seat_network(spec)
    simulations = _seat_simulations(spec, budget)
    if not os.path.isfile(path):
        form = "az+search:PATH.npz:SIMS" if spec.startswith("az+search:") else "az:PATH.npz"
        what = "the shipped network" if spec.startswith("pretrained") else \
            f"{form} names a file written by moonriver-train-az"
        raise ValueError(f"seat {spec!r}: no network file {path!r} ({what})")
    try:
        net = cached_az(path)[0]
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise ValueError(f"seat {spec!r}: {path!r} is not a moonriver-train-az network "
                         f"({exc!s:.120})") from None
    return NetworkSeat(net, simulations, play_search_settings(),
                       pretrained.SHAPE_WEIGHT if net.uses_prior else None, name=spec,
                       table_settings={n: table_search(n) for n in SEARCH_TABLES})
