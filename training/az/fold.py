"""Fold networks taught on one variant each into one network, as rank-r variant adapters.

See docs/research-log.md ("Specialists folded into one network")."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from moonriver_env.agents.pretrained import MAX_VARIANT_RANK, read_npz
from moonriver_env.training.az.network import (
    export_npz,
    is_az_file,
    load_az_net,
    specialist_adapters,
)


def specialist_variant(path: str) -> str:
    """The one variant an ``az.npz`` was taught on (its recipe's ``variants``), else ValueError."""
    if not is_az_file(path):
        raise ValueError(f"{path}: not an az.npz written by moonriver-train-az")
    variants = read_npz(path)[1].get("recipe", {}).get("variants")
    if not isinstance(variants, list) or len(variants) != 1 or variants == ["all"]:
        raise ValueError(f"{path}: its recipe names the variants {variants!r}; a specialist "
                         f"is taught on exactly one")
    return str(variants[0])


def fold(base: str, sources: list[str], rank: int) -> tuple[Any, dict[str, Any]]:
    """``base`` with each source's variant given its rest and trunk layers (rank ``rank``)."""
    taught: dict[str, str] = {}
    for path in sources:
        variant = specialist_variant(path)
        if variant in taught:
            raise ValueError(f"{path} and {taught[variant]} are both taught on {variant}")
        taught[variant] = path
    if not is_az_file(base):
        raise ValueError(f"{base}: not an az.npz written by moonriver-train-az (the base network "
                         f"the specialists were taught from)")
    net = load_az_net(base)
    specialists = {}
    for variant, path in taught.items():
        specialist = load_az_net(path)
        if specialist.config != net.config:
            raise ValueError(f"{path}: sizes {specialist.config} differ from {base}'s "
                             f"{net.config}; specialists are taught from the base network")
        specialists[variant] = specialist
    folded = specialist_adapters(net, specialists, rank)
    return folded, {"folded": {"base": base, "rank": rank, "specialists": taught}}


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", help="the az.npz to write")
    parser.add_argument("base", help="the network the specialists were taught from (az.npz)")
    parser.add_argument("sources", nargs="+", help="specialists' az.npz, one per variant")
    parser.add_argument("--rank", type=int, default=4,
                        help=f"each adapter's rank, 1 to {MAX_VARIANT_RANK} (default 4)")
    args = parser.parse_args(argv)
    if not 1 <= args.rank <= MAX_VARIANT_RANK:
        parser.error(f"--rank must be 1 to {MAX_VARIANT_RANK}, got {args.rank}")
    try:
        net, meta = fold(args.base, args.sources, args.rank)
    except (OSError, ValueError) as exc:
        parser.exit(2, f"moonriver fold: {exc}\n")
    os.makedirs(os.path.dirname(args.dest) or ".", exist_ok=True)
    export_npz(net, args.dest, meta)
    print(json.dumps({"dest": args.dest} | meta["folded"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
