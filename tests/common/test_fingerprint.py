"""Behaviour fingerprint: 200 seeded games of every variant of both games hash as recorded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_observations_masks_rewards_and_records_match_the_recorded_fingerprint() -> None:
    """A layout change must not change behaviour; a rule change updates the file on purpose
    (``python scripts/fingerprint.py --games 200 > scripts/fingerprint_200.json``)."""
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "fingerprint.py"), "--games",
                           "200", "--check", str(ROOT / "scripts" / "fingerprint_200.json")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
