"""Suite-wide settings.

One OpenMP thread per process unless the environment says otherwise: the suite's networks are
small, and on a busy machine a second torch thread spins while it waits for work, which made
a 2,048-step MaskablePPO test 3 times slower on 2 cores. Set before torch is first imported, so
torch, the notebooks' kernels and every subprocess a test starts read it; tests that measure
threads set them explicitly (torch.set_num_threads).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

try:  # no per-example time limit for property tests: their work is capped by max_examples
    from hypothesis import HealthCheck, settings
except ImportError:
    pass
else:
    settings.register_profile("suite", deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("suite")
