"""RanchNet: a compact actor-critic for every variant, with a spatial head over the 10x5 grid.

See docs/training.md ("The network and the recipe")."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np
import torch
from moonriver_env.agents import pretrained
from moonriver_env.agents.az import core_net
from moonriver_env.agents.pretrained import (
    MASKED,
    MAX_VALUE_WIDTH,
    MAX_VARIANT_RANK,
    OPPONENTS,
    action_index,
)
from moonriver_env.training.atomic import ChecksumError, atomic_save, first_line, load_checked
from torch import nn
from torch.nn import functional as F

from moonriver_env.moonriver.observation import (
    NUM_VARIANT_CODES,
    OBSERVATION_SIZE,
    VIEWS,
    variant_code,
)

__all__ = ["MASKED", "LegalRows", "NetConfig", "RanchNet", "action_index", "cell_max",
           "legal_lists", "load_net", "save_net", "with_critic"]


@dataclass(frozen=True)
class NetConfig:
    """Sizes of a RanchNet (saved with its weights)."""

    channels: int = 32  # viewer cell features
    opponent_channels: int = 16  # opponents' cell features
    hidden: int = 192
    use_prior: bool = False  # add a learned multiple of agents.pretrained.greedy_prior
    prior_init: float = 3.0  # its starting weight (logits per point)
    critic_hidden: int = 0  # units of the value's own layer (0: a linear head on the state)
    variant_film: bool = False  # a scale and shift of the trunk's units per variant
    variant_rank: int = 0  # per variant, a rank-r change of the rest and trunk layers (0: none)

    def __post_init__(self) -> None:
        """Sizes read from a file are checked: a ValueError names the one that is wrong."""
        for name, low, high in (("channels", 1, None), ("opponent_channels", 1, None),
                                ("hidden", 1, None), ("critic_hidden", 0, MAX_VALUE_WIDTH),
                                ("variant_rank", 0, MAX_VARIANT_RANK)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low or (
                    high is not None and value > high):
                span = f"{low}..{high}" if high is not None else f">= {low}"
                raise ValueError(f"network size {name} must be an integer {span}, got {value!r}")
        for flag in ("use_prior", "variant_film"):
            if not isinstance(getattr(self, flag), bool):
                raise ValueError(f"{flag} must be true or false, got {getattr(self, flag)!r}")


class RanchNet(nn.Module):
    """Actor-critic over flat observations: masked action logits and a state value."""

    index: torch.Tensor  # a buffer: network output -> action id

    def __init__(self, config: NetConfig | None = None) -> None:
        super().__init__()
        self.config = config or NetConfig()
        c, o, h = self.config.channels, self.config.opponent_channels, self.config.hidden
        view = VIEWS["ranches"]
        self.players, self.planes, self.rows, self.cols = view.shape
        self.ranch_size = self.planes * self.rows * self.cols
        self.ranch_stop = view.stop
        rest = OBSERVATION_SIZE - view.stop
        self.viewer_conv = nn.Conv2d(self.planes, c, 3, padding=1)
        self.viewer_cells = nn.Sequential(nn.ReLU(), nn.Linear(c, c), nn.ReLU())
        self.opponent_cells = nn.Sequential(nn.Linear(self.planes, o), nn.ReLU())
        self.rest = nn.Sequential(nn.Linear(rest, h), nn.ReLU())
        trunk_in = h + 2 * c + 2 * o * OPPONENTS
        self.trunk = nn.Sequential(nn.Linear(trunk_in, h), nn.ReLU())
        self.value_inputs = rest + trunk_in + h  # a value layer's input (``value_input``)
        self.value_head = nn.Linear(h, 1)
        if self.config.critic_hidden:  # the value's own layer; its head starts at zero, so the
            # value starts as the linear head's
            self.critic_hidden = nn.Linear(self.value_inputs, self.config.critic_hidden)
            self.critic_head = nn.Linear(self.config.critic_hidden, 1)
            nn.init.zeros_(self.critic_head.weight)
            nn.init.zeros_(self.critic_head.bias)
        if self.config.variant_rank:  # zero at the start: the same function as without them
            self.variant_rest = VariantAdapter(rest, h, self.config.variant_rank)
            self.variant_trunk = VariantAdapter(trunk_in, h, self.config.variant_rank)
        if self.config.variant_film:  # zero at the start: the same function as without it
            self.variant_film = nn.Linear(NUM_VARIANT_CODES, 2 * h, bias=False)
            nn.init.zeros_(self.variant_film.weight)
        self.dense_head = nn.Linear(h, pretrained.DENSE_SCORES)
        self.viewer_film = nn.Linear(h, c)
        # scored per cell; ``index`` puts the scores in action-id order (no 2710-wide layer)
        self.viewer_head = nn.Linear(c, pretrained.VIEWER_CHANNELS)
        self.thief_film = nn.Linear(h, o)
        self.thief_head = nn.Linear(o, 1)
        if self.config.use_prior:
            self.prior_weight = nn.Parameter(torch.tensor(float(self.config.prior_init)))
        self.register_buffer("index", torch.from_numpy(action_index()), persistent=False)
        self._twin: tuple[tuple[int, ...], pretrained.NumpyRanchNet] | None = None  # see numpy_twin
        self._core: tuple[tuple[int, ...], Any] | None = None  # see core_twin

    def _current(self, held: tuple[tuple[int, ...], Any] | None,
                 build: Any) -> tuple[tuple[int, ...], Any]:
        """``held`` (weights' key, twin) while the weights are those it was made of, else anew."""
        key = tuple(p._version for p in self.parameters())  # an in-place change bumps it
        if held is None or held[0] != key:
            held = (key, build({k: v.detach().numpy() for k, v in self.state_dict().items()}))
        return held

    def numpy_twin(self) -> pretrained.NumpyRanchNet:
        """The numpy forward (``agents.pretrained.NumpyRanchNet``) of the current weights."""
        self._twin = self._current(self._twin, pretrained.NumpyRanchNet)
        twin: pretrained.NumpyRanchNet = self._twin[1]
        return twin

    @property
    def core_scores(self) -> bool:
        """Whether ``core_twin`` gives this network's forward: one value, no layer of its own."""
        return self.value_head.out_features == 1 and not self.config.critic_hidden

    def core_twin(self) -> Any:
        """The compiled core's forward (``agents.az.core_net``) of the current weights."""
        if not self.core_scores:
            raise ValueError(f"the core's forward reads one value head and no value layer of its "
                             f"own: this network has {self.value_head.out_features} value "
                             f"output(s) and critic_hidden = {self.config.critic_hidden}")
        self._core = self._current(self._core, core_net)
        return self._core[1]

    def __getstate__(self) -> dict[str, Any]:
        """The module's state without its core twin (a compiled object that does not pickle)."""
        return {**super().__getstate__(), "_core": None}

    @property
    def uses_prior(self) -> bool:
        """Whether the logits add a learned multiple of the greedy prior."""
        return self.config.use_prior

    def forward(self, obs: torch.Tensor, mask: torch.Tensor,
                prior: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked log-probabilities (B, 2710) and values (B,) of a batch of observations."""
        scores, state, trunk_in = self._features(obs)
        logits = self._logits(scores.index_select(1, self.index), mask, prior)
        return torch.log_softmax(logits, dim=1), self._value(obs, state, trunk_in)

    def legal_forward(self, obs: torch.Tensor, legal: torch.Tensor, valid: torch.Tensor,
                      prior: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``forward``'s numbers at the ids ``legal`` (B, L) alone (padding where not ``valid``)."""
        scores, state, trunk_in = self._features(obs)
        logits = self._logits(scores.gather(1, self.index[legal]), valid, prior)
        return torch.log_softmax(logits, dim=1), self._value(obs, state, trunk_in)

    def _logits(self, logits: torch.Tensor, keep: torch.Tensor,
                prior: torch.Tensor | None) -> torch.Tensor:
        """``logits`` plus the learned multiple of the greedy prior, MASKED where not ``keep``."""
        if self.config.use_prior:
            if prior is None:
                raise ValueError("this network adds the greedy prior: pass prior=")
            logits = logits + self.prior_weight * prior
        return logits.masked_fill(~keep, MASKED)

    def _value(self, obs: torch.Tensor, state: torch.Tensor,
               trunk_in: torch.Tensor) -> torch.Tensor:
        """The values (B,): the linear head on the state, plus the value's own layer's."""
        value = _linear(self.value_head, state).squeeze(1)
        if not self.config.critic_hidden:
            return value
        own = _linear(self.critic_hidden, self.value_input(obs, trunk_in, state)).relu()
        return value + _linear(self.critic_head, own).squeeze(1)

    def value_input(self, obs: torch.Tensor, trunk_in: torch.Tensor,
                    state: torch.Tensor) -> torch.Tensor:
        """What a value layer of its own reads: the non-ranch observation, trunk input, state."""
        return torch.cat([obs[:, self.ranch_stop:], trunk_in, state], dim=1)

    def _features(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Every action's score in network order (dense, viewer cells, thief), state, trunk_in."""
        # The layers' functions on their parameters (not the modules' calls): the play runs
        # this on a few rows per decision wave, where per-call overhead is most of the cost.
        b, cells = obs.shape[0], self.rows * self.cols
        mine = obs[:, :self.ranch_size].reshape(b, self.planes, self.rows, self.cols)
        # channels-last: oneDNN's convolution (forward and backward) takes about half the
        # time on these 10 x 5 planes, and its output is already cell-major (b, cells, c)
        mine = mine.contiguous(memory_format=torch.channels_last)
        conv = F.conv2d(mine, self.viewer_conv.weight, self.viewer_conv.bias, padding=1)
        viewer = _linear(self.viewer_cells[1], conv.reshape(b, -1, cells).transpose(1, 2).relu())
        viewer = viewer.relu()  # (b, cells, c)
        theirs = obs[:, self.ranch_size:self.ranch_stop].reshape(b, OPPONENTS, self.planes,
                                                                  cells)
        others = _linear(self.opponent_cells[0], theirs.transpose(2, 3)).relu()
        pooled = torch.cat([viewer.mean(dim=1), viewer.amax(dim=1),
                            others.mean(dim=2).reshape(b, -1),
                            cell_max(others).reshape(b, -1)], dim=1)
        observed = obs[:, self.ranch_stop:]
        rest = _linear(self.rest[0], observed)
        adapted = self.config.variant_rank > 0
        if adapted or self.config.variant_film:
            code: torch.Tensor = variant_code(obs)
        if adapted:
            rest = rest + self.variant_rest(code, observed)
        trunk_in = torch.cat([rest.relu(), pooled], dim=1)
        state = _linear(self.trunk[0], trunk_in)
        if adapted:
            state = state + self.variant_trunk(code, trunk_in)
        if self.config.variant_film:  # the pre-activations scaled by 1 + and shifted by it
            scale, shift = _linear(self.variant_film, code).chunk(2, dim=1)
            state = state * (1.0 + scale) + shift
        state = state.relu()
        viewer = (viewer + _linear(self.viewer_film, state).unsqueeze(1)).relu()
        others = (others + _linear(self.thief_film, state)[:, None, None, :]).relu()
        scores = torch.cat([_linear(self.dense_head, state),
                            _linear(self.viewer_head, viewer).reshape(b, -1),
                            _linear(self.thief_head, others).reshape(b, -1)], dim=1)
        return scores, state, trunk_in



class VariantAdapter(nn.Module):
    """Per variant code, what a layer adds: ``up @ (down @ x) + bias`` (zero at the start)."""

    def __init__(self, inputs: int, outputs: int, rank: int) -> None:
        super().__init__()
        self.down = nn.Parameter(torch.randn(NUM_VARIANT_CODES, rank, inputs) * inputs ** -0.5)
        self.up = nn.Parameter(torch.zeros(NUM_VARIANT_CODES, outputs, rank))
        self.bias = nn.Parameter(torch.zeros(NUM_VARIANT_CODES, outputs))

    def forward(self, code: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """The change (B, outputs) of rows ``x`` whose variant codes are ``code`` (B, 15)."""
        low = torch.einsum("bk,vrk->bvr", x, self.down) * code[:, :, None]
        return torch.einsum("bvr,vor->bo", low, self.up) + code @ self.bias


class _CellMax(torch.autograd.Function):
    """``x.amax(-2)`` and its gradient, exactly, over channels read 2 cells at a time."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        """The maximum over cells (dim -2) of the cell-major ``x`` (..., cells, channels)."""
        *lead, cells, c = x.shape
        pairs = x.reshape(*lead, cells // 2, 2 * c).amax(-2)
        y = pairs.reshape(*lead, 2, c).amax(-2)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> torch.Tensor:
        """torch's amax gradient: the output's shared evenly among the cells that reach it."""
        x, y = ctx.saved_tensors
        *lead, cells, c = x.shape
        hit = x.reshape(*lead, cells // 2, 2 * c) == torch.cat([y, y], -1).unsqueeze(-2)
        share = grads[0] / hit.sum(-2).reshape(*lead, 2, c).sum(-2)
        grad: torch.Tensor = (torch.cat([share, share], -1).unsqueeze(-2) * hit).reshape(x.shape)
        return grad


def cell_max(x: torch.Tensor) -> torch.Tensor:
    """``x.amax(-2)`` with the same values and gradient, several times faster on narrow cells."""
    # torch's CPU reduction over dim -2 is slow when the last dim has under 32 floats (16 for
    # the opponents' cells: 2.7 against 0.18 ms on 512 rows); two cells side by side fill 32
    if x.shape[-2] % 2 or x.shape[-1] >= 32:
        return x.amax(-2)
    out: torch.Tensor = _CellMax.apply(x)
    return out


def _linear(layer: nn.Module, x: torch.Tensor) -> torch.Tensor:
    assert isinstance(layer, nn.Linear)  # a Sequential's linear entry
    return F.linear(x, layer.weight, layer.bias)


def legal_lists(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each mask row's legal ids as (B, L) int64 (padded with its first) and (B, L) real marks."""
    mask = np.asarray(mask).astype(bool, copy=False)
    rows, ids = np.nonzero(mask)
    counts = np.bincount(rows, minlength=mask.shape[0])
    if counts.size and counts.min() == 0:
        raise ValueError("every row of the mask needs a legal action")
    width = max(1, int(counts.max(initial=0)))
    starts = np.cumsum(counts) - counts
    legal = np.repeat(ids[starts][:, None] if ids.size else np.zeros((0, 1), np.int64),
                      width, axis=1).astype(np.int64)
    legal[rows, np.arange(ids.size) - np.repeat(starts, counts)] = ids
    valid = np.arange(width)[None, :] < counts[:, None]
    return legal, valid


class LegalRows:
    """Recorded decisions ready for ``RanchNet.legal_forward`` (legal ids, marks and priors)."""

    def __init__(self, obs: np.ndarray, masks: np.ndarray, priors: np.ndarray | None) -> None:
        self.obs = obs
        self.legal_np, valid = legal_lists(masks)
        self.legal, self.valid = torch.from_numpy(self.legal_np), torch.from_numpy(valid)
        self.priors = (None if priors is None or not len(priors)
                       else torch.from_numpy(np.take_along_axis(priors, self.legal_np, 1)))

    def __len__(self) -> int:
        return len(self.obs)

    def forward(self, net: RanchNet, idx: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """``net.legal_forward`` of the rows ``idx``."""
        t = torch.from_numpy(idx)
        # numpy's row gather: a few times faster than torch's indexing of (n, 4934) rows
        obs = torch.from_numpy(self.obs.take(idx, axis=0))
        return net.legal_forward(obs, self.legal[t], self.valid[t],
                                 None if self.priors is None else self.priors[t])


def with_critic(net: RanchNet, critic_hidden: int, source: str) -> RanchNet:
    """``net`` with a value layer of ``critic_hidden`` units (added at zero: the same values)."""
    have = net.config.critic_hidden
    if have == critic_hidden:
        return net
    if have:
        raise ValueError(f"{source}: its value layer has {have} units; set critic_hidden = "
                         f"{have} to continue it (asked: {critic_hidden})")
    grown = RanchNet(replace(net.config, critic_hidden=critic_hidden))
    grown.load_state_dict(net.state_dict(), strict=False)
    return grown.train(net.training)


def save_net(net: RanchNet, path: str, meta: dict[str, Any] | None = None) -> None:
    """Weights, sizes and free-form metadata (variant, recipe) in one .pt file, atomically."""
    blob = {"config": asdict(net.config), "state_dict": net.state_dict(),
            "meta": dict(meta or {})}
    atomic_save(path, lambda fh: torch.save(blob, fh))


def read_checkpoint(path: Any) -> dict[str, Any]:
    """The dict a ``save_net`` file holds (config, state_dict, meta), its checksums checked."""
    try:
        blob = load_checked(path)
    except (FileNotFoundError, IsADirectoryError, PermissionError, ChecksumError):
        raise
    except Exception as exc:  # torch.load fails on foreign bytes in many ways; none is a net
        raise ValueError(f"{path}: not a RanchNet checkpoint: not readable as torch's zip "
                         f"format, weights only ({type(exc).__name__}); expected a file written "
                         f"by save_net") from None
    if not isinstance(blob, dict) or not isinstance(blob.get("meta", {}), dict) or not all(
            isinstance(blob.get(key), dict) for key in ("config", "state_dict")):
        raise ValueError(f"{path}: not a RanchNet checkpoint (expected keys config, "
                         f"state_dict, meta)")
    return blob


def load_net(path: Any) -> tuple[RanchNet, dict[str, Any]]:
    """A RanchNet in eval mode and its metadata from a ``save_net`` file or an agents' ``.npz``."""
    if str(path).endswith(".npz"):
        return load_npz(str(path))
    blob = read_checkpoint(path)
    try:
        net = RanchNet(NetConfig(**blob["config"]))
        net.load_state_dict(blob["state_dict"])
    except (TypeError, RuntimeError) as exc:  # unknown sizes, or weights of other names/shapes
        raise ValueError(f"{path}: the weights do not fit the sizes it names: "
                         f"{first_line(exc)}") from None
    return net.eval(), dict(blob.get("meta", {}))


def load_npz(path: str) -> tuple[RanchNet, dict[str, Any]]:
    """A RanchNet in eval mode from an agents' ``.npz`` (a value head of other shape left fresh)."""
    found, meta = pretrained.read_npz(path)
    if not meta:
        raise ValueError(f"{path}: no __meta__ entry (not an exported agents' .npz)")
    arrays = {k: torch.from_numpy(v) for k, v in found.items()}
    sizes = meta.get("net", {})
    known = {f.name for f in fields(NetConfig)}
    variant = pretrained.variant_layers(arrays)  # the arrays say, not the metadata
    try:
        net = RanchNet(NetConfig(**{k: v for k, v in sizes.items() if k in known} | variant))
    except (TypeError, ValueError) as err:
        raise ValueError(f"{path}: its metadata's sizes: {err}") from None
    own = net.state_dict()
    fresh = [k for k in own if k not in arrays or arrays[k].shape != own[k].shape]
    # a critic layer the metadata's sizes do not name would be dropped without a word
    fresh += [k for k in arrays if k.startswith("critic_") and k not in own]
    if [k for k in fresh if not k.startswith("value_head.")]:
        raise ValueError(f"{path}: its weights do not fit a RanchNet of its sizes at "
                         f"{', '.join(fresh[:3])}")
    net.load_state_dict({k: v for k, v in arrays.items() if k in own and k not in fresh},
                        strict=False)
    return net.eval(), meta
