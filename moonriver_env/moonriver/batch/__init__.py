"""Many Moon River games a call on the compiled core, one module per job. See docs/vector.md.

The public names are re-exported here, each module imported on first use (``batch.seats``
alone stays light); the batch imports no agent (network seats come built).
"""

from typing import TYPE_CHECKING

from moonriver_env.common.lazy import lazy_exports as _lazy_exports

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
    from .async_env import AsyncBatchedGames
    from .compact import COMPACT_SIZE, expand_observation
    from .games import SEARCH_STREAM, BatchedGames, BatchIllegalActionError
    from .multiagent import BatchState, MultiAgentGames
    from .sb3_env import make_sb3_vec_env
    from .seats import BuiltinSeat, NetworkSeat, seat_kind
    from .single_env import SingleGameEnv
    from .vector_env import ROW_ATTRIBUTES, SETTABLE_ROW_ATTRIBUTES, MoonRiverVectorEnv

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, __all__)
