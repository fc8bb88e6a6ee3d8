"""Agents that play Moon River (baselines, search and trained policies)."""

from agents.base import Agent, CallableAgent, as_agent
from agents.greedy import GreedyAgent
from agents.mcts import MCTSAgent
from agents.random_agent import RandomAgent
from agents.registry import make_agent

__all__ = ["Agent", "CallableAgent", "GreedyAgent", "MCTSAgent", "RandomAgent", "as_agent",
           "make_agent"]
