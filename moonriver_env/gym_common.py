"""Kept so old imports work: the Gymnasium plumbing lives in :mod:`moonriver_env.common.gym`."""

from moonriver_env.common.gym import (
    ILLEGAL_POLICIES,
    GameT,
    SeatGymEnv,
    TableGameMixin,
    UniformOpponent,
    check_illegal,
    check_seat,
)

__all__ = ["ILLEGAL_POLICIES", "GameT", "SeatGymEnv", "TableGameMixin", "UniformOpponent",
           "check_illegal", "check_seat"]
