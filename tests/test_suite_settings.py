"""The suite's own settings (tests/conftest.py) keep results independent of machine speed."""

from __future__ import annotations

import os


def test_property_tests_have_no_time_limit_per_example() -> None:
    from hypothesis import settings

    assert settings.default.deadline is None


def test_one_openmp_thread_unless_the_environment_chose() -> None:
    assert os.environ.get("OMP_NUM_THREADS")
