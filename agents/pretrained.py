"""PretrainedAgent: a PPO recipe's RanchNet policy, evaluated with numpy alone (no torch needed).

Weights whose metadata name a variant play only it (``VariantError``). See docs/agents.md.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import zipfile
import zlib
from contextlib import nullcontext
from importlib import resources
from typing import Any

import numpy as np
from moonriver_env.agents.base import Observation
from moonriver_env.agents.greedy import action_values
from moonriver_env.agents.specs import VARIANTS, any_variant_specs
from moonriver_env.training.atomic import ChecksumError, check_archive

from moonriver_env.common.contract import TableGame
from moonriver_env.moonriver.contract import MoonRiverGame
from moonriver_env.moonriver.observation import NUM_VARIANT_CODES, VIEWS, variant_code
from moonriver_env.moonriver.rules import actions as A
from moonriver_env.moonriver.rules.grid import NUM_CELLS, NUM_PLACEMENTS

DENSE_SCORES = 110  # select 4, pass 1, discard 10, recruit 20, desperado 75
VIEWER_CHANNELS = 49  # per cell: build 40 (pair x orientation), cowboy 4, drought 1, bonus 4
OPPONENTS = 3
MASKED = -1e9
DEFAULT_VARIANT = "4p-base"  # PretrainedAgent() and pretrained+puct:BUDGET (bare pretrained: az)


def action_index() -> np.ndarray:
    """For each action id, its position in a RanchNet's (dense, viewer cells, thief) scores."""

    def viewer(cell: Any, channel: Any) -> Any:
        return DENSE_SCORES + cell * VIEWER_CHANNELS + channel

    out = np.empty(A.NUM_ACTIONS, dtype=np.int64)
    dense = np.r_[A.SELECT0:A.BUILD0, A.PASS_ID:A.COWBOY0, A.DESPERADO0:A.THIEF0]
    out[dense] = np.arange(DENSE_SCORES)
    pair, k = np.divmod(np.arange(A.PASS_ID - A.BUILD0), NUM_PLACEMENTS)
    out[A.BUILD0:A.PASS_ID] = viewer(k // 2, 2 * pair + k % 2)  # channel: pair x orientation
    cell, direction = np.divmod(np.arange(A.DROUGHT0 - A.COWBOY0), 4)
    out[A.COWBOY0:A.DROUGHT0] = viewer(cell, 40 + direction)
    out[A.DROUGHT0:A.DESPERADO0] = viewer(np.arange(NUM_CELLS), 44)
    out[A.THIEF0:A.BONUS0] = viewer(NUM_CELLS, 0) + np.arange(A.BONUS0 - A.THIEF0)
    tile_face, cell = np.divmod(np.arange(A.NUM_ACTIONS - A.BONUS0), NUM_CELLS)
    out[A.BONUS0:] = viewer(cell, 45 + tile_face)
    if len(set(out.tolist())) != A.NUM_ACTIONS:  # pragma: no cover - guards the layout
        raise AssertionError("two action ids share one score")
    return out


SHAPE_WEIGHT = 0.05  # a build's same-terrain neighbours: Greedy's tie-break, under one point


def greedy_prior(game: MoonRiverGame) -> np.ndarray:
    """GreedyAgent's value in points of every legal action (zero elsewhere, or when forced)."""
    prior = np.zeros(A.NUM_ACTIONS, dtype=np.float32)
    legal = game.legal_action_ids().tolist()
    if len(legal) > 1:
        prior[legal] = [value + SHAPE_WEIGHT * shape
                        for value, shape in action_values(game, legal)]
    return prior


MAX_VALUE_WIDTH = 4096  # the widest value layer read (as the core's AzNet's layers)
MAX_VARIANT_RANK = 32  # the highest rank of a variant's change of a layer (variant adapters)
# the layers a network's variant adapters change, and the adapters' array names
ADAPTERS = {"rest.0": "variant_rest", "trunk.0": "variant_trunk"}
ADAPTED = tuple(ADAPTERS)
ADAPTER_PARTS = ("down", "up", "bias")


class NumpyRanchNet:
    """The RanchNet forward pass in numpy, from its state-dict arrays (float32)."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.w = {k: np.asarray(v, dtype=np.float32) for k, v in arrays.items()}
        view = VIEWS["ranches"]
        self.players, self.planes, self.rows, self.cols = view.shape
        self.ranch_size = self.planes * self.rows * self.cols
        self.ranch_stop = view.stop
        conv = self.w["viewer_conv.weight"]
        self.conv_matrix = conv.reshape(conv.shape[0], -1)  # (c, planes * 9)
        self.index = action_index()
        # laid out for one observation a call (a search's leaf): patches are one gather, weights
        # are stored transposed and the four maps read from the trunk's state are one product
        self.patch_index = self._patch_index()
        self.wt = {"viewer_conv": np.ascontiguousarray(self.conv_matrix.T)}
        for name in ("viewer_cells.1", "opponent_cells.0", "rest.0", "trunk.0", "viewer_head",
                     "thief_head"):
            self.wt[name] = np.ascontiguousarray(self.w[name + ".weight"].T)
        # the value head reads the state, or a hidden layer of its own over the observation
        # after the ranches, the trunk's input and its state (``value_hidden``, an option of
        # the search recipe's network)
        self.value_hidden = "value_hidden.weight" in self.w
        heads: tuple[str, ...] = ("dense_head", "viewer_film", "thief_film")
        if self.value_hidden:
            self._check_value_layer("value_hidden", "value_head")
            for name in ("value_hidden", "value_head"):
                self.wt[name] = np.ascontiguousarray(self.w[name + ".weight"].T)
        else:
            heads += ("value_head",)
        # the fast recipe's critic (``critic_hidden``): a layer of the value's own, whose head
        # adds to the linear one's value
        self.critic_hidden = any(k.startswith("critic_") for k in self.w)
        if self.critic_hidden:
            self._check_value_layer("critic_hidden", "critic_head", outputs=1)
            for name in ("critic_hidden", "critic_head"):
                self.wt[name] = np.ascontiguousarray(self.w[name + ".weight"].T)
        self.wt["heads"] = np.ascontiguousarray(
            np.concatenate([self.w[h + ".weight"] for h in heads]).T)
        self.w["heads.bias"] = np.concatenate([self.w[h + ".bias"] for h in heads])
        # a scale and shift of the trunk's units per variant (``NetConfig.variant_film``)
        self.variant_film = "variant_film.weight" in self.w
        if self.variant_film:
            shape = (2 * self.w["trunk.0.bias"].size, NUM_VARIANT_CODES)
            if self.w["variant_film.weight"].shape != shape:
                raise ValueError(f"variant_film.weight has shape "
                                 f"{self.w['variant_film.weight'].shape}, expected {shape}: a "
                                 f"scale and a shift per trunk unit for each variant code")
            self.wt["variant_film"] = np.ascontiguousarray(self.w["variant_film.weight"].T)
        # per variant, a low-rank change of the rest and trunk layers (``variant_rank``)
        rank = variant_layers(self.w)["variant_rank"]
        adapters = {layer: self._adapter(layer, rank) for layer in ADAPTED} if rank else {}
        self.adapters = {layer: codes for layer, codes in adapters.items() if codes}
        self.head_splits = np.cumsum([self.w[h + ".bias"].size for h in heads])[:-1].tolist()

    def _adapter(self, layer: str, rank: int) -> dict[int, tuple[np.ndarray, ...]]:
        """A layer's variant adapter, its shapes checked (else ValueError): (down, up, bias)
        of each code whose change is not zero."""
        name = ADAPTERS[layer]
        outputs, inputs = self.w[f"{layer}.weight"].shape
        down, up, bias = (self.w[f"{name}.{part}"] for part in ADAPTER_PARTS)
        shapes = ((NUM_VARIANT_CODES, rank, inputs), (NUM_VARIANT_CODES, outputs, rank),
                  (NUM_VARIANT_CODES, outputs))
        for part, array, shape in zip(ADAPTER_PARTS, (down, up, bias), shapes, strict=True):
            if array.shape != shape:
                raise ValueError(f"{name}.{part} has shape {array.shape}, expected {shape}: per "
                                 f"variant code, a rank-{rank} change of {layer}'s {outputs} x "
                                 f"{inputs}")
        return {code: (np.ascontiguousarray(down[code].T), np.ascontiguousarray(up[code].T),
                       bias[code]) for code in range(NUM_VARIANT_CODES)
                if up[code].any() or bias[code].any()}

    def _adapted(self, layer: str, x: np.ndarray, code: np.ndarray | None,
                 relu: bool = True) -> np.ndarray:
        """``layer``'s outputs plus its variant adapter's change (when it has one), then ReLU."""
        out = self._linear(layer, x, relu=False)
        for c, (down, up, bias) in self.adapters.get(layer, {}).items():
            assert code is not None  # computed whenever the network has adapters
            rows = np.flatnonzero(code[:, c])  # the rows of that code (a true observation: one)
            if rows.size:
                out[rows] += code[rows, c, None] * ((x[rows] @ down) @ up + bias)
        return np.maximum(out, 0.0, out=out) if relu else out

    def _check_value_layer(self, layer: str, head: str, outputs: int | None = None) -> None:
        """Check a value layer (``layer``, read by ``head``) fits the trunk, else ValueError."""
        for name in (f"{layer}.weight", f"{layer}.bias", f"{head}.weight", f"{head}.bias"):
            if name not in self.w:
                raise ValueError(f"no array {name} (a network with {layer} needs it)")
        for name in (f"{layer}.weight", f"{head}.weight"):
            if self.w[name].ndim != 2:
                raise ValueError(f"{name} has shape {self.w[name].shape}, expected 2 axes "
                                 f"(outputs, inputs)")
        hidden, trunk_in = self.w["trunk.0.weight"].shape
        inputs = self.w["rest.0.weight"].shape[1] + trunk_in + hidden
        width = self.w[f"{layer}.weight"].shape[0]
        outputs = self.w[f"{head}.weight"].shape[0] if outputs is None else outputs
        expected = {f"{layer}.weight": (width, inputs), f"{layer}.bias": (width,),
                    f"{head}.weight": (outputs, width), f"{head}.bias": (outputs,)}
        for name, shape in expected.items():
            if self.w[name].shape != shape:
                raise ValueError(f"{name} has shape {self.w[name].shape}, expected {shape}: "
                                 f"{layer} reads the observation after the ranches, the "
                                 f"trunk's input and its state, and {head} reads it")
        if not 1 <= width <= MAX_VALUE_WIDTH:
            raise ValueError(f"{layer} has {width} units, at most {MAX_VALUE_WIDTH}")

    def _patch_index(self) -> np.ndarray:
        """Per cell, where each (plane, dy, dx) of its 3x3 patch lies in the ranch planes."""
        rows, cols, cells = self.rows, self.cols, self.rows * self.cols
        index = np.full((cells, self.planes, 3, 3), self.ranch_size, dtype=np.intp)
        for r, c, dy, dx in itertools.product(range(rows), range(cols), range(3), range(3)):
            rr, cc = r + dy - 1, c + dx - 1
            if 0 <= rr < rows and 0 <= cc < cols:
                index[r * cols + c, :, dy, dx] = np.arange(self.planes) * cells + rr * cols + cc
        return index.reshape(cells, self.planes * 9)

    def _linear(self, name: str, x: np.ndarray, relu: bool = True) -> np.ndarray:
        out = x @ self.wt[name]
        out += self.w[name + ".bias"]
        return np.maximum(out, 0.0, out=out) if relu else out

    @property
    def uses_prior(self) -> bool:
        """Whether the logits add a learned multiple of ``greedy_prior``."""
        return "prior_weight" in self.w

    def forward(self, obs: np.ndarray, mask: np.ndarray,
                prior: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Masked logits (B, 2710) and values (B,) of a batch of observations (B, D)."""
        logits, value = self.forward_heads(obs, mask, prior)
        return logits, value[:, 0]

    def forward_heads(self, obs: np.ndarray, mask: np.ndarray,
                      prior: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``forward`` with the value head's every output: values (B, outputs)."""
        obs = np.asarray(obs, dtype=np.float32)
        b, cells = obs.shape[0], self.rows * self.cols
        mine = np.zeros((b, self.ranch_size + 1), dtype=np.float32)  # last: outside the grid
        mine[:, :self.ranch_size] = obs[:, :self.ranch_size]
        conv = self._linear("viewer_conv", mine[:, self.patch_index])  # (b, cells, c)
        viewer = self._linear("viewer_cells.1", conv)
        theirs = obs[:, self.ranch_size:self.ranch_stop].reshape(b, OPPONENTS, self.planes,
                                                                  cells)
        others = self._linear("opponent_cells.0", theirs.transpose(0, 1, 3, 2))
        pooled = np.concatenate([viewer.mean(axis=1), viewer.max(axis=1),
                                 others.mean(axis=2).reshape(b, -1),
                                 others.max(axis=2).reshape(b, -1)], axis=1)
        code = variant_code(obs) if self.adapters or self.variant_film else None
        rest = self._adapted("rest.0", obs[:, self.ranch_stop:], code)
        trunk_in = np.concatenate([rest, pooled], axis=1)
        state = self._adapted("trunk.0", trunk_in, code, relu=not self.variant_film)
        if code is not None and self.variant_film:
            scale, shift = np.split(code @ self.wt["variant_film"], 2, axis=1)
            state = np.maximum(state * (1.0 + scale) + shift, 0.0)
        heads = np.split(self._linear("heads", state, relu=False), self.head_splits, axis=1)
        dense, viewer_film, thief_film = heads[:3]
        after = (np.concatenate([obs[:, self.ranch_stop:], trunk_in, state], axis=1)
                 if self.value_hidden or self.critic_hidden else state)  # a value layer's input
        value = (self._linear("value_head", self._linear("value_hidden", after), relu=False)
                 if self.value_hidden else heads[3])
        if self.critic_hidden:  # the PPO recipe's value layer of its own, added to the head's
            value = value + self._linear("critic_head", self._linear("critic_hidden", after),
                                         relu=False)
        viewer += viewer_film[:, None, :]
        others += thief_film[:, None, None, :]
        scores = np.concatenate([
            dense, self._linear("viewer_head", np.maximum(viewer, 0.0, out=viewer),
                                relu=False).reshape(b, -1),
            self._linear("thief_head", np.maximum(others, 0.0, out=others),
                         relu=False).reshape(b, -1)], axis=1)
        scores = scores[:, self.index]
        if self.uses_prior:
            if prior is None:
                raise ValueError("this network adds the greedy prior: pass prior=")
            scores += self.w["prior_weight"] * prior
        logits = np.where(np.asarray(mask, dtype=bool), scores, MASKED)
        return logits, value


def variant_layers(arrays: dict[str, Any]) -> dict[str, Any]:
    """The variant layers a network's arrays hold (film: bool, adapters' rank), else ValueError."""
    adapters = {f"{name}.{part}" for name in ADAPTERS.values() for part in ADAPTER_PARTS}
    names = {k for k in arrays if k.startswith("variant_")}
    unknown = sorted(names - adapters - {"variant_film.weight"})
    if unknown:
        raise ValueError(f"{unknown[0]} is not a variant layer (variant_film.weight, or the "
                         f"adapters' variant_rest.* and variant_trunk.*: down, up, bias)")
    rank = 0
    if names & adapters:
        missing = sorted(adapters - names)
        if missing:
            raise ValueError(f"variant adapters need {missing[0]} too (down, up and bias of "
                             f"both variant_rest and variant_trunk)")
        shapes = [tuple(getattr(arrays[f"{name}.down"], "shape", ()))
                  for name in ADAPTERS.values()]  # numpy's or torch's
        ranks = {int(shape[1]) if len(shape) == 3 else 0 for shape in shapes}
        rank = ranks.pop()
        if ranks or not 1 <= rank <= MAX_VARIANT_RANK:
            raise ValueError(f"the adapters' down arrays have shapes {shapes[0]} and "
                             f"{shapes[1]}: expected (15, rank, inputs), one rank 1 to "
                             f"{MAX_VARIANT_RANK} for both")
    return {"variant_film": "variant_film.weight" in arrays, "variant_rank": rank}


def weights_path(variant: str) -> Any:
    """The packaged weights file of a variant; an unknown variant is a clear error."""
    if variant not in VARIANTS:
        raise ValueError(f"no pretrained weights for {variant!r}; shipped: {', '.join(VARIANTS)}")
    return resources.files("moonriver_env.agents").joinpath("weights", f"{variant}.npz")


def read_npz(file: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays and JSON ``__meta__`` ({} if none) of an agents' ``.npz``; else a ValueError."""
    try:
        with open(file, "rb") as fh:
            data = np.load(fh, allow_pickle=False)
            if not isinstance(data, np.lib.npyio.NpzFile):
                raise ValueError("a single .npy array, not an .npz archive")
            with data:
                check_archive(file)  # numpy checks a member's CRC only if it reads to its end
                meta = json.loads(str(data["__meta__"])) if "__meta__" in data.files else {}
                arrays = {k: data[k] for k in data.files if k != "__meta__"}
            if not isinstance(meta, dict):
                raise ValueError(f"its __meta__ is a JSON {type(meta).__name__}, not an object")
    except ChecksumError:
        raise
    except (ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise ValueError(f"{file}: not an agents' .npz (a numpy .npz archive of plain arrays "
                         f"and a JSON __meta__ object): {exc!s:.120}") from None
    return arrays, meta


def load_weights(source: Any) -> tuple[NumpyRanchNet, dict[str, Any]]:
    """A numpy network and its metadata from a packaged variant name or an .npz path."""
    if isinstance(source, str) and source.endswith(".npz"):
        if not os.path.isfile(source):
            raise FileNotFoundError(2, "pretrained weights not found", source)
        opener: Any = nullcontext(source)
    else:
        opener = resources.as_file(weights_path(source))
    with opener as p:
        arrays, meta = read_npz(p)
    return NumpyRanchNet(arrays), meta


_cached_weights = functools.cache(load_weights)  # one network a variant or path
ANY_VARIANT_SPECS = ", ".join(any_variant_specs())  # the spec table's, one per kind


class VariantError(ValueError):
    """An agent asked to play a variant its weights were not trained for."""


def variant_name(num_players: int, mode: str, scenario: int | None = None) -> str:
    """A variant in words: ``4-player base``, ``3-player Legends scenario 2``."""
    if mode != "legends":
        return f"{num_players}-player {mode}"
    return f"{num_players}-player Legends" + (f" scenario {scenario}" if scenario else "")


def variant_refusal(spec: str, meta: dict[str, Any] | None, num_players: int, mode: str,
                    scenario: int | None = None) -> str | None:
    """Why weights with metadata ``meta`` cannot play this variant (one line), or None."""
    meta = meta or {}
    trained = (meta.get("num_players"), meta.get("mode"), meta.get("scenario"))
    if trained[0] is None and trained[1] is None:
        return None
    fits = (trained[0] in (None, num_players) and trained[1] in (None, mode)
            and (trained[2] is None or (mode == "legends" and trained[2] == scenario)))
    if fits:
        return None
    if trained[0] is None or trained[1] is None:
        can = f"{trained[0]}-player games" if trained[1] is None else f"{trained[1]} games"
    else:
        can = variant_name(trained[0], trained[1], trained[2])
    return (f"agent spec {spec!r} cannot play {variant_name(num_players, mode, scenario)}: "
            f"its weights were trained for {can} only (agents for every variant: "
            f"{ANY_VARIANT_SPECS})")


class PretrainedAgent:
    """Plays the most likely legal action of a shipped (or given .npz) RanchNet policy."""

    def __init__(self, variant: str = DEFAULT_VARIANT, name: str | None = None) -> None:
        self.net, self.meta = _cached_weights(variant)
        self.variant = variant
        self.name = f"pretrained:{variant}" if name is None else name
        self._checked: tuple[int, str, int | None] | None = None  # the variant last allowed

    def check_game(self, game: TableGame) -> None:
        """Refuse (``VariantError``) a game of a variant these weights were not trained for."""
        config = getattr(game, "config", None)
        if config is None or not hasattr(config, "mode"):  # not an engine or core game
            return
        variant = (game.num_players, config.mode, getattr(game, "scenario", None))
        if variant == self._checked:
            return
        problem = variant_refusal(self.name, self.meta, *variant)
        if problem is not None:
            raise VariantError(problem)
        self._checked = variant

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reset: the policy is deterministic."""

    def _logits(self, game: MoonRiverGame | None,
                observation: Observation) -> tuple[np.ndarray, float]:
        prior = None
        if game is not None:
            self.check_game(game)
        if self.net.uses_prior:
            if game is None:
                raise ValueError(f"{self.name}: this policy adds Greedy's one-ply values, so it "
                                 f"needs the game: call policy(observation, game)")
            prior = greedy_prior(game)[None]
        logits, value = self.net.forward(observation["observation"][None],
                                         np.asarray(observation["action_mask"])[None], prior)
        return logits[0], float(value[0])

    def policy(self, observation: Observation,
               game: MoonRiverGame | None = None) -> tuple[np.ndarray, float]:
        """Probabilities over the 2710 ids (0 where illegal) and the value (+1 win, -1 loss)."""
        log_p, value = self.log_policy(observation, game)
        return np.exp(log_p), value

    def log_policy(self, observation: Observation,
                   game: MoonRiverGame | None = None) -> tuple[np.ndarray, float]:
        """Log-probabilities over the 2710 ids (finite where legal) and the value, as ``policy``."""
        logits, value = self._logits(game, observation)
        top = logits.max()
        return logits - top - np.log(np.exp(logits - top).sum()), value

    def act(self, game: MoonRiverGame, observation: Observation) -> int:
        """The most likely legal action."""
        return int(np.argmax(self._logits(game, observation)[0]))

    @property
    def uses_prior(self) -> bool:
        """Whether ``policy`` needs the game (the network adds Greedy's one-ply values)."""
        return self.net.uses_prior


def pretrained_from_spec(spec: str, seed: int | None = None) -> PretrainedAgent:
    """``pretrained:VARIANT`` (shipped PPO weights) or ``pretrained:PATH.npz`` (exported ones)."""
    return PretrainedAgent(spec.partition(":")[2], name=spec)
