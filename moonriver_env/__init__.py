"""moonriver-env: the Moon River board game as a rules engine and RL environments.

Registers the Gymnasium ids ``MoonRiver-v0`` and ``CirclesFarWest-v0``. See docs/guide.md."""

from importlib.metadata import PackageNotFoundError as _NotInstalled
from importlib.metadata import version as _version

try:
    __version__ = _version("moonriver-env")  # pyproject.toml's, as installed: the one version
except _NotInstalled:  # a source tree put on sys.path by hand
    __version__ = "0+unknown"


def _own_folders(paths: list[str]) -> list[str]:
    """This package's folders among ``paths``: none above it, such as the repository root."""
    import os

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [p for p in paths if os.path.basename(os.path.normpath(p)) == "moonriver_env"
            and os.path.normpath(os.path.abspath(p)) != root]


# An editable install's hook (scikit-build-core) lists the repository root among our folders (it
# maps agents/ and training/ itself); the root would make tests/ importable as moonriver_env.tests.
__path__[:] = _own_folders(__path__)
_resource_paths = getattr(__spec__.loader, "paths", None)  # the hook's resource reader's
if isinstance(_resource_paths, list):
    _resource_paths[:] = _own_folders(_resource_paths)
del _NotInstalled, _version, _own_folders, _resource_paths

from moonriver_env.common.lazy import lazy_exports as _lazy_exports  # noqa: E402  (after __path__)

# Public names -> the submodule that defines them (imported on first use, so that
# ``import moonriver_env`` stays light); the two environment modules are themselves.
_EXPORTS = {
    "circles_far_west_v0": "circles_far_west_v0", "moonriver_v0": "moonriver_v0",
    "make_game": "moonriver.backend", "GameConfig": "moonriver.rules",
    "ActionCodec": "moonriver.rules", "IllegalActionError": "common.errors",
    "BatchedGames": "moonriver.batch.games", "MoonRiverVectorEnv": "moonriver.batch.vector_env",
    "CirclesConfig": "circles", "CirclesGame": "circles",
}
__all__ = ["__version__", *_EXPORTS]
__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, __all__)


try:
    import gymnasium as _gymnasium
except ImportError:  # installed without its dependencies: the engine needs only numpy
    pass
else:
    if "MoonRiver-v0" not in _gymnasium.registry:
        # No OrderEnforcing wrapper: the environment enforces reset-before-step itself, and
        # gymnasium.make then returns it unwrapped, with action_masks() in reach.
        _gymnasium.register(id="MoonRiver-v0",
                            entry_point="moonriver_env.agents.gym_entry:moonriver_gym_env",
                            vector_entry_point="moonriver_env.agents.gym_entry:"
                                               "moonriver_vector_env",
                            disable_env_checker=True, order_enforce=False)
    if "CirclesFarWest-v0" not in _gymnasium.registry:
        _gymnasium.register(id="CirclesFarWest-v0",
                            entry_point="moonriver_env.agents.gym_entry:circles_gym_env",
                            disable_env_checker=True)
