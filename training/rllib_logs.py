"""Quiet RLlib's notices about its own defaults, which say nothing about a run.

RLlib warns on every run that PPO uses its new API stack (the one this project uses on
purpose) and, when a module is rebuilt from a checkpoint, that the ``RLModuleConfig`` its own
checkpoint stored is deprecated. ``quiet_rllib_logs`` drops those two messages and nothing else;
``start_ray`` runs it in every Ray worker of an embedded cluster too.
"""

from __future__ import annotations

import logging

NOISE = ("You are running PPO on the new API stack",
         "`RLModule(config=[RLModuleConfig object])` has been deprecated")
LOGGERS = ("ray.rllib.algorithms.algorithm_config", "ray._common.deprecation")


class QuietRLlib(logging.Filter):
    """Drops the records whose message holds one of ``NOISE``; every other record passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        """False for RLlib's notices about its own defaults."""
        message = record.getMessage()
        return not any(text in message for text in NOISE)


def quiet_rllib_logs() -> None:
    """Put the ``QuietRLlib`` filter on the loggers that print ``NOISE`` (once each)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, QuietRLlib) for f in logger.filters):
            logger.addFilter(QuietRLlib())
