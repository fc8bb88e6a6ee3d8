"""Suite-wide settings.

One OpenMP thread per process unless the environment says otherwise: the suite's networks are
small, and on a busy machine a second torch thread spins while it waits for work, which made
a 2,048-step MaskablePPO test 3 times slower on 2 cores. Set before torch is first imported, so
torch, the notebooks' kernels and every subprocess a test starts read it; tests that measure
threads set them explicitly (torch.set_num_threads).
"""

from __future__ import annotations

import os
import sys

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

try:  # no per-example time limit for property tests: their work is capped by max_examples
    from hypothesis import HealthCheck, settings
except ImportError:
    pass
else:
    settings.register_profile("suite", deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("suite")


@pytest.fixture(autouse=True)
def _absl_leaves_pytest_capture_open() -> None:
    """absl's log handler never closes pytest's capture file."""
    # Importing ray.rllib (tests/training/test_rllib.py, at collection) imports absl.logging,
    # whose handler keeps the sys.stderr of that moment: pytest's capture file. The next
    # logging.config.dictConfig (uvicorn.Config, when a test starts the play server) closes
    # every handler's stream but the current sys.stderr, so under capsys it closed the capture
    # file and every later test on that xdist worker failed. The real stderr it leaves open.
    absl_logging = sys.modules.get("absl.logging")
    if absl_logging is not None:
        absl_logging.get_absl_handler().python_handler.stream = sys.__stderr__
