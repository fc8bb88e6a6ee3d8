"""Agents that play Moon River (baselines, search and trained policies)."""

from agents.base import Agent, CallableAgent, as_agent
from agents.random_agent import RandomAgent

__all__ = ["Agent", "CallableAgent", "RandomAgent", "as_agent"]
