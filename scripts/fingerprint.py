"""A fingerprint of both games' behaviour: hashes of observations, masks, rewards and records.

Plays ``--games`` seeded games of every variant of Moon River (2-4 players, base and each
*Legends of the West* scenario, both backends) and of Circles (2-5 players) through their
PettingZoo AEC envs, choosing each action with a generator seeded per game, and hashes every
observation, mask, reward, termination and the final game record. Run it before and after a
change that must not change behaviour and compare the printed JSON line (``--check FILE``
compares with a saved one and exits 1 on any difference).

    python scripts/fingerprint.py --games 200 --check scripts/fingerprint_200.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np


def _variants() -> Iterator[tuple[str, dict[str, Any]]]:
    for backend in ("python", "core"):
        for players in (2, 3, 4):
            yield f"moonriver/{backend}/{players}p/base", dict(
                game="moonriver", num_players=players, mode="base", backend=backend)
            for scenario in (1, 2, 3, 4):
                yield f"moonriver/{backend}/{players}p/legend{scenario}", dict(
                    game="moonriver", num_players=players, mode="legends", scenario=scenario,
                    backend=backend)
    for players in (2, 3, 4, 5):
        yield f"circles/{players}p", dict(game="circles", num_players=players)


def _make(spec: dict[str, Any]) -> Any:
    spec = dict(spec)
    if spec.pop("game") == "moonriver":
        from moonriver_env import moonriver_v0

        return moonriver_v0.raw_env(**spec)
    from moonriver_env import circles_far_west_v0

    return circles_far_west_v0.raw_env(**spec)


def _feed(h: Any, value: Any) -> None:
    if isinstance(value, np.ndarray):
        h.update(str(value.dtype).encode() + str(value.shape).encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, dict):
        for key in sorted(value):
            h.update(str(key).encode())
            _feed(h, value[key])
    else:
        h.update(json.dumps(value, sort_keys=True, default=str).encode())


def fingerprint(spec: dict[str, Any], games: int) -> dict[str, str]:
    """Hashes of the env stream (observations, masks, rewards, flags) and of the records."""
    stream, records = hashlib.sha256(), hashlib.sha256()
    env = _make(spec)
    for g in range(games):
        env.reset(seed=g)
        rng = np.random.default_rng(10_000 + g)
        for agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            _feed(stream, {"agent": agent, "obs": obs, "reward": float(reward),
                           "term": bool(term), "trunc": bool(trunc)})
            if term or trunc:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
            env.step(action)
        _feed(stream, {a: float(r) for a, r in env._cumulative_rewards.items()})
        _feed(records, env.game.to_record(include_seed=True))
    return {"stream": stream.hexdigest()[:16], "records": records.hexdigest()[:16]}


def main(argv: list[str] | None = None) -> int:
    """Print the fingerprint as one JSON line, or compare it with a saved one."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games per variant (default 200)")
    parser.add_argument("--only", default="", help="run only variants whose name contains this")
    parser.add_argument("--check", metavar="FILE", help="compare with a saved fingerprint")
    args = parser.parse_args(argv)
    result = {"games": args.games}
    for name, spec in _variants():
        if args.only in name:
            result[name] = fingerprint(spec, args.games)
            print(name, result[name], file=sys.stderr, flush=True)
    if args.check:
        with open(args.check, encoding="utf-8") as f:
            saved = json.loads(f.read().strip().splitlines()[-1])
        differ = sorted(k for k in result if k != "games" and saved.get(k) != result[k])
        if saved.get("games") != args.games or differ:
            print(f"fingerprint differs: {differ or 'games count'}", file=sys.stderr)
            return 1
        print("fingerprint identical", file=sys.stderr)
        return 0
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
