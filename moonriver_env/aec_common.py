"""Kept so that old imports work: the AEC plumbing lives in :mod:`moonriver_env.common.aec`."""

from moonriver_env.common.aec import TableAECEnv

__all__ = ["TableAECEnv"]
