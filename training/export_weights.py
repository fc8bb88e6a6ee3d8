"""Export a trained RanchNet (.pt of ``save_net``) as the numpy .npz that PretrainedAgent loads."""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np
from moonriver_env.training.atomic import atomic_save
from moonriver_env.training.policy_net import load_net


def npz_path(dst: str) -> str:
    """The file ``export`` writes for ``dst`` (``.npz`` added when missing)."""
    return dst if dst.endswith(".npz") else dst + ".npz"


def export(src: str, dst: str, note: str = "") -> dict[str, Any]:
    """Write the float32 arrays of the network plus a JSON ``__meta__`` entry; returns meta."""
    net, meta = load_net(src)
    meta = {k: v for k, v in meta.items() if k != "config"} | {
        "net": dict(net.config.__dict__), "source": note or src,
        "recipe": meta.get("config", {})}
    arrays = {k: v.detach().numpy().astype(np.float32) for k, v in net.state_dict().items()}
    atomic_save(npz_path(dst), lambda fh: np.savez_compressed(
        fh, __meta__=np.array(json.dumps(meta)), **arrays))
    return meta


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help=".pt file written by the fast recipe (final.pt)")
    parser.add_argument("dest", help="the .npz to write (e.g. agents/weights/4p-base.npz)")
    parser.add_argument("--note", default="", help="free text stored in the metadata")
    args = parser.parse_args(argv)
    try:
        meta = export(args.source, args.dest, args.note)
    except (OSError, ValueError) as exc:
        parser.exit(2, f"moonriver export_weights: {exc}\n")
    print(json.dumps(meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
