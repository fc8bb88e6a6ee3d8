"""The 15 game variants by name (``2p-base`` to ``4p-legends-4``; ``all``: every one)."""

from __future__ import annotations

from collections.abc import Sequence

from moonriver_env.moonriver.rules import GameConfig

PLAYERS = (2, 3, 4)
SCENARIOS = (1, 2, 3, 4)
# name -> its game; GameConfig is frozen, so callers may share these
_CONFIGS: dict[str, GameConfig] = {
    **{f"{n}p-base": GameConfig(num_players=n, mode="base") for n in PLAYERS},
    **{f"{n}p-legends-{s}": GameConfig(num_players=n, mode="legends", scenario=s)
       for n in PLAYERS for s in SCENARIOS},
}
ALL_VARIANTS = tuple(_CONFIGS)


def variant_config(name: str) -> GameConfig:
    """The GameConfig of a variant name (``3p-base``, ``2p-legends-4``); others are refused."""
    if not isinstance(name, str) or name not in _CONFIGS:
        raise ValueError(f"unknown variant {name!r}; allowed: NP-base or NP-legends-S with N "
                         f"2-4 and S 1-4 (all 15: {', '.join(ALL_VARIANTS)}), or 'all'")
    return _CONFIGS[name]


def variant_list(names: Sequence[str]) -> tuple[str, ...]:
    """The variants a config names (``["all"]``: every one of the 15), each checked."""
    if list(names) == ["all"]:
        return ALL_VARIANTS
    if not names:
        raise ValueError("variants must name at least one variant (or 'all')")
    for name in names:
        variant_config(name)
    return tuple(names)
