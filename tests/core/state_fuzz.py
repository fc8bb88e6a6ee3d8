"""Corruption fuzz of the core's byte state (run in a subprocess by the tests: a crash fails
the test instead of killing pytest; tests/core/test_sanitizers.py runs it under ASan/UBSan).

``python -m tests.core.state_fuzz [patches]`` flips every byte of a mid-game state of each
variant (2-4 players, base and Legends scenarios 1-4), then writes ``patches`` random 8-byte
patches (seeded) into each; every damaged state must be refused with a ValueError. Prints one
line: the number of refusals.
"""

from __future__ import annotations

import struct
import sys

import numpy as np

from moonriver_env.moonriver import core
from moonriver_env.moonriver.core import game as core_game
from moonriver_env.moonriver.rules import GameConfig
from moonriver_env.moonriver.rules import actions as A

FNV_OFFSET, FNV_PRIME, MASK64 = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1
HEADER = 16  # magic (u32), format (u32), FNV-1a 64 of the rest (u64)
REFUSED = "moonriver core: state refused"


def variants() -> list[GameConfig]:
    """2-4 players of the base game and of each Legends scenario."""
    out = [GameConfig(num_players=n) for n in (2, 3, 4)]
    out += [GameConfig(num_players=n, mode="legends", scenario=s)
            for s in (1, 2, 3, 4) for n in (2, 3, 4)]
    return out


def fnv1a(data: bytes) -> int:
    """The 64-bit FNV-1a of ``data`` (docs/core.md: the state's checksum)."""
    h = FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & MASK64
    return h


def resealed(state: bytes | bytearray) -> bytes:
    """``state`` with its checksum recomputed over the payload (a crafted, 'valid' state)."""
    out = bytearray(state)
    out[8:HEADER] = struct.pack("<Q", fnv1a(bytes(out[HEADER:])))
    return bytes(out)


VECTORS = (("box", "h"), ("pile", "h"), ("removed", "h"), ("discarded", "h"), ("history", "i"))


def parts(state: bytes) -> tuple[bytearray, dict[str, list[int]]]:
    """A state's bytes up to its vectors (header and Fixed) and the vectors by name."""
    at = 16 + 4 + struct.unpack_from("<I", state, 16)[0]
    lists = {}
    for name, form in VECTORS:
        (count,) = struct.unpack_from("<I", state, at)
        lists[name] = list(struct.unpack_from(f"<{count}{form}", state, at + 4))
        at += 4 + count * struct.calcsize(form)
    return bytearray(state[:16 + 4 + struct.unpack_from("<I", state, 16)[0]]), lists


def joined(head: bytes | bytearray, lists: dict[str, list[int]]) -> bytes:
    """The state of ``parts`` (changed or not), its checksum recomputed: counts and checksum
    made to fit."""
    out = bytearray(head)
    for name, form in VECTORS:
        out += struct.pack(f"<I{len(lists[name])}{form}", len(lists[name]), *lists[name])
    return resealed(out)


def mid_game(config: GameConfig, seed: int, share: float = 0.5) -> core.Game:
    """A game played by a seeded policy that favours partners (recruits, their effects) for
    about ``share`` of its decisions."""
    game = core.Game(config, seed)
    rng = np.random.default_rng(seed)
    probe = core.Game(config, seed)
    length = 0
    while not probe.is_over:  # the game's length under the same policy
        probe.apply(_pick(probe, rng))
        length += 1
    rng = np.random.default_rng(seed)
    for _ in range(int(length * share)):
        game.apply(_pick(game, rng))
    return game


def _pick(game: core.Game, rng: np.random.Generator) -> int:
    ids = game.legal_action_ids()
    wanted = ids[(ids >= A.RECRUIT0) & (ids < A.BONUS0)]
    pool = wanted if len(wanted) and rng.random() < 0.9 else ids
    return int(pool[rng.integers(len(pool))])


def refuse_all(tables: object, states: list[bytes]) -> int:
    """Deserialize each damaged state; assert each raises ValueError. Returns the count."""
    for state in states:
        try:
            core_game._core.Game.deserialize(tables, state)
        except ValueError as exc:
            assert str(exc).startswith(REFUSED), str(exc)
            continue
        raise AssertionError(f"a damaged state was accepted ({len(state)} bytes)")
    return len(states)


def fuzz(game: core.Game, patches: int, seed: int) -> int:
    """Every byte flipped, then ``patches`` random 8-byte patches: all refused."""
    state = game._core.serialize()
    tables = core_game._tables(game.data)
    core_game._core.Game.deserialize(tables, state)  # the intact state reads back
    refused = 0
    work = bytearray(state)
    for i in range(len(state)):
        work[i] ^= 0xFF
        refused += refuse_all(tables, [bytes(work)])
        work[i] ^= 0xFF
    rng = np.random.default_rng(seed)
    for _ in range(patches):
        at = int(rng.integers(len(state) - 8))
        patch = rng.integers(0, 256, 8, dtype=np.uint8).tobytes()
        if patch == state[at:at + 8]:
            continue
        refused += refuse_all(tables, [state[:at] + patch + state[at + 8:]])
    refused += refuse_all(tables, [state[:cut] for cut in range(0, len(state), 97)])
    return refused


def main(patches: int = 2000) -> int:
    """Fuzz each variant's mid-game state; returns the number of refusals."""
    total = 0
    for k, config in enumerate(variants()):
        total += fuzz(mid_game(config, seed=100 + k), patches, seed=k)
    return total


if __name__ == "__main__":
    print(f"refused {main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)} damaged states")
