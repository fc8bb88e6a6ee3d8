"""Average the weights of RanchNets that share their sizes (a model soup) into one .pt file.

See docs/research-log.md ("A soup of two runs")."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from moonriver_env.training.policy_net import RanchNet, load_net, save_net
from torch.optim.swa_utils import AveragedModel


def soup(sources: list[str]) -> tuple[RanchNet, dict[str, Any]]:
    """The mean of the networks in ``sources`` (two or more, equal sizes) and its metadata."""
    if len(sources) < 2:
        raise ValueError(f"a soup needs two or more networks, got {len(sources)}")
    first, meta = load_net(sources[0])
    mean = AveragedModel(first)
    mean.update_parameters(first)  # the first update copies; later ones keep a running mean
    variants: set[str] = set(meta.get("variants", []))
    samples = int(meta.get("samples", 0))
    for path in sources[1:]:
        net, other = load_net(path)
        if net.config != first.config:
            raise ValueError(f"{path}: sizes {net.config} differ from {sources[0]}'s "
                             f"{first.config}; a soup averages networks of equal sizes")
        if _games(other) != _games(meta):
            raise ValueError(f"{path} was trained for other games than {sources[0]}; a soup "
                             f"averages networks of one recipe (both name variants, or the "
                             f"same num_players and mode)")
        variants |= set(other.get("variants", []))
        samples += int(other.get("samples", 0))
        mean.update_parameters(net)
    averaged = mean.module
    assert isinstance(averaged, RanchNet)  # AveragedModel holds a deep copy of ``first``
    played = ({"variants": sorted(variants)} if "variants" in meta
              else {"num_players": meta.get("num_players"), "mode": meta.get("mode")})
    return averaged, played | {"samples": samples, "soup": list(sources),
                               "config": meta.get("config", {})}


def _games(meta: dict[str, Any]) -> tuple[Any, ...]:
    """What a run's metadata says it played: variants (any list), or one table size and mode."""
    return ("variants",) if "variants" in meta else (meta.get("num_players"), meta.get("mode"))


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", help="the .pt file to write (e.g. runs/soup/final.pt)")
    parser.add_argument("sources", nargs="+", help="two or more .pt files (a run's final.pt)")
    args = parser.parse_args(argv)
    try:
        net, meta = soup(args.sources)
    except (OSError, ValueError) as exc:
        parser.exit(2, f"moonriver soup: {exc}\n")
    os.makedirs(os.path.dirname(args.dest) or ".", exist_ok=True)
    save_net(net, args.dest, meta)
    print(json.dumps({"dest": args.dest, "soup": args.sources, "samples": meta["samples"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
