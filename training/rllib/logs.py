"""Quiet RLlib's notices about its own defaults, which say nothing about a run.

RLlib warns on every run that PPO uses its new API stack (the one this project uses on
purpose) and, when a module is rebuilt from a checkpoint, that the ``RLModuleConfig`` its own
checkpoint stored is deprecated; and each RLlib multi-agent env runner that a process builds
after its first re-registers the same Gymnasium env id, which Gymnasium warns about (a
PettingZoo-env run sampling in the driver that also evaluates there). ``quiet_rllib_logs``
drops those three messages and nothing else; ``start_ray`` runs it in every Ray worker of an
embedded cluster too. (Ray's C++ note about restartable env-runner actors is avoided instead:
an embedded run turns env-runner restarts off, see ``rllib_train.build_config``.)
"""

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
    """Put the ``QuietRLlib`` filter on the loggers that print ``NOISE`` (once each) and
    ignore Gymnasium's warning about RLlib's re-registered env id."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, QuietRLlib) for f in logger.filters):
            logger.addFilter(QuietRLlib())
    warnings.filterwarnings("ignore", message=REREGISTERED, category=UserWarning)
