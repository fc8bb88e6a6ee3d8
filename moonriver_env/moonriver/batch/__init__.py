"""Many Moon River games a call on the compiled core, one module per job. See docs/vector.md.

The public names are re-exported here, each module imported on first use (``batch.seats``
alone stays light); the batch imports no agent (network seats come built).
"""

from typing import TYPE_CHECKING

# Public names -> the module that defines them.
_EXPORTS = {
    "AsyncBatchedGames": "async_env", "BatchState": "multiagent", "MultiAgentGames": "multiagent",
    "COMPACT_SIZE": "compact", "expand_observation": "compact",
    "BatchedGames": "games", "BatchIllegalActionError": "games", "SEARCH_STREAM": "games",
    "BuiltinSeat": "seats", "NetworkSeat": "seats", "seat_kind": "seats",
    "MoonRiverVectorEnv": "vector_env", "ROW_ATTRIBUTES": "vector_env",
    "SETTABLE_ROW_ATTRIBUTES": "vector_env", "make_sb3_vec_env": "sb3_env",
    "SingleGameEnv": "single_env",
}
__all__ = ["COMPACT_SIZE", "ROW_ATTRIBUTES", "SEARCH_STREAM", "SETTABLE_ROW_ATTRIBUTES",
           "AsyncBatchedGames", "BatchIllegalActionError", "BatchState", "BatchedGames",
           "BuiltinSeat", "MoonRiverVectorEnv", "MultiAgentGames", "NetworkSeat",
           "SingleGameEnv", "expand_observation", "make_sb3_vec_env", "seat_kind"]

if TYPE_CHECKING:  # the names as the type checker sees them
    from moonriver_env.moonriver.batch.async_env import AsyncBatchedGames
    from moonriver_env.moonriver.batch.compact import COMPACT_SIZE, expand_observation
    from moonriver_env.moonriver.batch.games import (
        SEARCH_STREAM,
        BatchedGames,
        BatchIllegalActionError,
    )
    from moonriver_env.moonriver.batch.multiagent import BatchState, MultiAgentGames
    from moonriver_env.moonriver.batch.sb3_env import make_sb3_vec_env
    from moonriver_env.moonriver.batch.seats import BuiltinSeat, NetworkSeat, seat_kind
    from moonriver_env.moonriver.batch.single_env import SingleGameEnv
    from moonriver_env.moonriver.batch.vector_env import (
        ROW_ATTRIBUTES,
        SETTABLE_ROW_ATTRIBUTES,
        MoonRiverVectorEnv,
    )


def __getattr__(name: str) -> object:
    """A public name of ``_EXPORTS``, its module imported on use."""
    import importlib

    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The package's public names."""
    return sorted(__all__)
