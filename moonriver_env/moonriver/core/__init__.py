"""The compiled core: Moon River's rules, masks and observations in C++17 (nanobind).

``Game`` keeps the contract of :class:`moonriver_env.moonriver.rules.Game`. See docs/core.md.
"""

from __future__ import annotations

from .game import Game, random_play_counts, random_playouts

__all__ = ["Game", "random_play_counts", "random_playouts"]
