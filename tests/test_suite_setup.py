"""The suite's own set-up (tests/conftest.py): what one test does cannot break the next."""

from __future__ import annotations

import logging.config

import pytest

absl_logging = pytest.importorskip("absl.logging")  # at collection, as ray.rllib imports it


def test_a_logging_dictconfig_under_capsys_leaves_absls_stream_open(capsys) -> None:
    stream = absl_logging.get_absl_handler().python_handler.stream
    logging.config.dictConfig({"version": 1, "disable_existing_loggers": False})
    assert not stream.closed
