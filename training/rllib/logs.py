"""Quiet RLlib's notices about its own defaults, which say nothing about a run.

It drops three messages and nothing else (see ``NOISE`` and ``REREGISTERED``)."""

from __future__ import annotations

import logging
import warnings

NOISE = ("You are running PPO on the new API stack",
         "`RLModule(config=[RLModuleConfig object])` has been deprecated")
LOGGERS = ("ray.rllib.algorithms.algorithm_config", "ray._common.deprecation")
# RLlib's MultiAgentEnvRunner.make_env registers this id anew for every runner it builds.
REREGISTERED = r".*Overriding environment rllib-multi-agent-env-v0 already in registry"


class QuietRLlib(logging.Filter):
    """Drops the records whose message holds one of ``NOISE``; every other record passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        """False for RLlib's notices about its own defaults."""
        message = record.getMessage()
        return not any(text in message for text in NOISE)


def quiet_rllib_logs() -> None:
    """Filter ``NOISE`` out of RLlib's loggers and ignore Gymnasium's re-registration warning."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, QuietRLlib) for f in logger.filters):
            logger.addFilter(QuietRLlib())
    warnings.filterwarnings("ignore", message=REREGISTERED, category=UserWarning)
