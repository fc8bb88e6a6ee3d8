"""The compiled core: Moon River's rules, masks and observations in C++17 (nanobind).

``moonriver_env.moonriver.core.Game`` keeps the contract of
:class:`moonriver_env.moonriver.rules.Game` (the
readable reference) and is proven identical to it by tests/core/test_core_differential.py: same
legal ids and masks, observations, scores, records and errors for the same config and seed.
See docs/core.md.
"""

from __future__ import annotations

from .game import Game, random_play_counts, random_playouts

__all__ = ["Game", "random_play_counts", "random_playouts"]
