"""AZNet: RanchNet's trunk and policy heads with a value per seat, for every variant.

Seats are relative to the player to move (0: the mover). See docs/training.md."""

from __future__ import annotations

import json
import zipfile
from dataclasses import asdict, fields, replace
from typing import Any

import numpy as np
import torch
from moonriver_env.agents.az import AZ_FORMAT, SEATS, core_net
from moonriver_env.agents.pretrained import ADAPTED, ADAPTERS, read_npz, variant_layers
from moonriver_env.training.atomic import atomic_save
from moonriver_env.training.policy_net import MASKED, NetConfig, RanchNet, _linear, read_checkpoint
from moonriver_env.training.variants import variant_config
from torch import nn

from moonriver_env.moonriver.observation import MODE_ONEHOT

MARGIN_SCALE = 20.0  # score margins are predicted in units of this many points
EXPORT_SKIP = ("margin_head.",)  # training-only heads, left out of the agents' file
VALUE_LAYERS = ("value_hidden.", "value_head.", "margin_head.")  # the value's own layers


class AZNet(RanchNet):
    """Policy logits over the 2710 ids, a win-share logit per relative seat and a margin."""

    def __init__(self, config: NetConfig | None = None, value_hidden: int = 0) -> None:
        super().__init__(config)
        hidden = self.config.hidden
        self.value_hidden: nn.Linear | None = None
        if value_hidden:  # a layer of the value's own (RanchNet.value_input)
            self.value_hidden = nn.Linear(self.value_inputs, value_hidden)
            hidden = value_hidden
        self.value_head = nn.Linear(hidden, SEATS)
        self.margin_head = nn.Linear(hidden, SEATS)

    def heads(self, obs: torch.Tensor, mask: torch.Tensor, num_players: torch.Tensor,
              prior: torch.Tensor | None = None,
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Masked log-policy (B, 2710), log win shares (B, 4) and margins (B, 4)."""
        scores, state, trunk_in = self._features(obs)
        logits = self._logits(scores.index_select(1, self.get_buffer("index")), mask, prior)
        seats = (torch.arange(SEATS, device=num_players.device)
                 < num_players.reshape(-1, 1)).to(obs.device)  # as seat_mask, no device sync
        if self.value_hidden is not None:
            state = _linear(self.value_hidden, self.value_input(obs, trunk_in, state)).relu()
        value = _linear(self.value_head, state).masked_fill(~seats, MASKED)
        return (torch.log_softmax(logits, dim=1), torch.log_softmax(value, dim=1),
                _linear(self.margin_head, state))


# the variant adapters' arrays indexed (code, unit of the layer's output, ...)
ADAPTER_OUTPUTS = tuple(f"{name}.{part}" for name in ADAPTERS.values() for part in ("up", "bias"))


def widen_hidden(net: AZNet, hidden: int) -> AZNet:
    """``net`` with rest and trunk layers ``hidden`` wide, computing the same function."""
    h = net.config.hidden
    if hidden < h:
        raise ValueError(f"widen_hidden: {hidden} units is narrower than the network's {h}")
    value = 0 if net.value_hidden is None else net.value_hidden.out_features
    wide = AZNet(replace(net.config, hidden=hidden), value_hidden=value)
    old, new = net.state_dict(), wide.state_dict()
    pooled = old["trunk.0.weight"].shape[1] - h  # the trunk reads (rest, pooled ranches)
    readers = ("dense_head.weight", "viewer_film.weight", "thief_film.weight") + (
        () if value else ("value_head.weight", "margin_head.weight"))  # they read the state
    with torch.no_grad():
        for name, w in new.items():
            o = old[name]
            if name in ("rest.0.weight", "rest.0.bias", "trunk.0.bias"):
                w[:h] = o  # new units: as drawn
            elif name == "trunk.0.weight":  # the old units read the new rest units with 0
                w[:h, :h], w[:h, h:hidden], w[:h, hidden:] = o[:, :h], 0.0, o[:, h:]
            elif name == "variant_film.weight":  # (scales, shifts): the new units' are 0
                w.zero_()
                w[:h], w[hidden:hidden + h] = o[:h], o[h:]
            elif name == "variant_trunk.down":  # reads (rest, new rest units, pooled)
                w.zero_()
                w[:, :, :h], w[:, :, hidden:] = o[:, :, :h], o[:, :, h:]
            elif name in readers + ADAPTER_OUTPUTS:  # new units: read with 0, no adapter change
                w.zero_()
                w[:, :h] = o
            elif name == "value_hidden.weight":  # (obs after the ranches, trunk input, state)
                rest = o.shape[1] - 2 * h - pooled
                w.zero_()
                w[:, :rest + h] = o[:, :rest + h]
                w[:, rest + hidden:rest + hidden + pooled] = o[:, rest + h:rest + h + pooled]
                w[:, rest + hidden + pooled:rest + hidden + pooled + h] = o[:, rest + h + pooled:]
            else:
                w.copy_(o)
    wide.load_state_dict(new)
    return wide


def code_of_variant(variant: str) -> int:
    """A variant's code among the 15 (players x mode, as ``observation.variant_code`` reads)."""
    config = variant_config(variant)
    mode = (config.scenario or 0) if config.mode == "legends" else 0  # 0: base, else scenario
    return (config.num_players - 2) * (MODE_ONEHOT.stop - MODE_ONEHOT.start) + mode


def specialist_adapters(base: AZNet, specialists: dict[str, AZNet], rank: int) -> AZNet:
    """``base`` with rank-``rank`` adapters giving each named variant its specialist's layers."""
    if base.config.variant_rank or base.config.variant_film:
        raise ValueError("specialist_adapters: the base network has variant layers already")
    with torch.random.fork_rng(devices=[]):  # the untaught codes' down maps: one fixed draw
        torch.manual_seed(0)
        net = AZNet(replace(base.config, variant_rank=rank),
                    value_hidden=0 if base.value_hidden is None else base.value_hidden.out_features)
    net.load_state_dict(base.state_dict(), strict=False)
    own = base.state_dict()
    most = min(min(own[f"{layer}.weight"].shape) for layer in ADAPTED)
    if not 1 <= rank <= most:
        raise ValueError(f"specialist_adapters: rank {rank}; these layers allow 1 to {most}")
    with torch.no_grad():
        for variant, specialist in specialists.items():
            theirs, code = specialist.state_dict(), code_of_variant(variant)
            for layer in ADAPTED:
                adapter = getattr(net, ADAPTERS[layer])
                change = theirs[f"{layer}.weight"] - own[f"{layer}.weight"]
                u, s, vt = torch.linalg.svd(change, full_matrices=False)  # the best rank-r fit
                root = s[:rank].sqrt()
                adapter.down[code] = root[:, None] * vt[:rank]
                adapter.up[code] = u[:, :rank] * root
                adapter.bias[code] = theirs[f"{layer}.bias"] - own[f"{layer}.bias"]
    return net.eval()


def export_arrays(net: AZNet) -> dict[str, np.ndarray]:
    """The float32 arrays the numpy agents read (training-only heads left out)."""
    return {k: v.detach().cpu().float().numpy() for k, v in net.state_dict().items()
            if not k.startswith(EXPORT_SKIP)}


def core_network(net: AZNet) -> Any:
    """A C++ copy of ``net``'s current weights (``_core.AzNet``, docs/core.md)."""
    return core_net(export_arrays(net))


def export_npz(net: AZNet, path: str, meta: dict[str, Any] | None = None) -> str:
    """Write the agents' ``.npz`` (arrays plus a JSON ``__meta__``) atomically."""
    info = {"format": AZ_FORMAT, "net": asdict(net.config),
            "value": "win share per seat, relative to the player to move"} | dict(meta or {})
    arrays = export_arrays(net) | {"__meta__": np.array(json.dumps(info))}
    savez: Any = np.savez  # numpy's stub types the keyword arrays as its allow_pickle flag
    return atomic_save(path, lambda fh: savez(fh, **arrays))


def warm_start(net: AZNet, source: str) -> list[str]:
    """Copy the weights of ``source`` (.pt, .npz, az.npz) that fit ``net``; returns their names."""
    from moonriver_env.training.policy_net import load_net  # either file: a .pt or an .npz

    if is_az_file(source):
        arrays = {k: torch.from_numpy(v) for k, v in read_npz(source)[0].items()}
    else:
        arrays = load_net(source)[0].state_dict()
    own = net.state_dict()
    dropped = [k for k in arrays if k.startswith("variant_") and k not in own]
    if dropped:
        raise ValueError(f"warm start {source!r}: it has variant layers ({dropped[0]}); set "
                         f"variant_film and variant_rank as in its recipe to continue them")
    wrong = [k for k, v in arrays.items() if k in own and own[k].shape != v.shape
             and not k.startswith(VALUE_LAYERS)]
    if wrong:
        raise ValueError(f"warm start {source!r}: its sizes differ from this network's at "
                         f"{', '.join(wrong[:3])} (set channels, opponent_channels and hidden "
                         f"as in its recipe)")
    # the value layers are copied whole or not at all
    exported = VALUE_LAYERS[:2]
    mine = {k: tuple(v.shape) for k, v in own.items() if k.startswith(exported)}
    theirs = {k: tuple(v.shape) for k, v in arrays.items() if k.startswith(exported)}
    if mine != theirs:
        arrays = {k: v for k, v in arrays.items() if not k.startswith(VALUE_LAYERS)}
    copied = [k for k, v in arrays.items() if k in own and own[k].shape == v.shape]
    net.load_state_dict({k: arrays[k] for k in copied}, strict=False)
    return copied


def load_az_net(path: str) -> AZNet:
    """An ``az.npz`` as a torch ``AZNet`` (the margin head, not exported, starts anew)."""
    arrays, meta = read_npz(path)
    names = {f.name for f in fields(NetConfig)}
    sizes = {k: v for k, v in meta["net"].items() if k in names}
    net = AZNet(NetConfig(**sizes | variant_layers(arrays)),
                value_hidden=value_hidden_size(arrays))
    try:
        net.load_state_dict({k: torch.from_numpy(v) for k, v in arrays.items()}, strict=False)
    except RuntimeError as exc:  # an array of another shape than its sizes give
        raise ValueError(f"{path}: the weights do not fit the sizes it names: "
                         f"{str(exc).splitlines()[-1].strip()}") from None
    return net


def value_hidden_size(arrays: dict[str, Any]) -> int:
    """The width of a network's own value layer (0: its value head reads the trunk's state)."""
    weight = arrays.get("value_hidden.weight")
    return 0 if weight is None else int(weight.shape[0])


def is_az_file(source: str) -> bool:
    """Whether ``source`` is a readable ``.npz`` whose metadata names ``AZ_FORMAT``."""
    try:
        return source.endswith(".npz") and read_npz(source)[1].get("format") == AZ_FORMAT
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, AttributeError):
        return False


def source_sizes(source: str) -> dict[str, int | bool]:
    """A warm-start source's sizes (channels, opponent_channels, hidden, prior, variant layers)."""
    if source.endswith(".npz"):
        arrays, meta = read_npz(source)
        net, variant = meta.get("net", {}), variant_layers(arrays)
    else:
        blob = read_checkpoint(source)
        net, variant = blob["config"], variant_layers(blob["state_dict"])
    sizes = {k: int(net[k]) for k in ("channels", "opponent_channels", "hidden") if k in net}
    return (sizes | ({"prior": bool(net["use_prior"])} if "use_prior" in net else {})
            | {k: v for k, v in variant.items() if v})  # its variant layers are continued
