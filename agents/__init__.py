"""Agents that play Moon River (baselines, search and trained policies)."""

from moonriver_env.agents.base import Agent, CallableAgent, as_agent
from moonriver_env.agents.greedy import GreedyAgent
from moonriver_env.agents.mcts import MCTSAgent
from moonriver_env.agents.policy import PolicyAgent
from moonriver_env.agents.pretrained import PretrainedAgent
from moonriver_env.agents.puct import PUCTAgent
from moonriver_env.agents.random_agent import RandomAgent
from moonriver_env.agents.registry import make_agent

__all__ = ["Agent", "CallableAgent", "GreedyAgent", "MCTSAgent", "PUCTAgent", "PolicyAgent",
           "PretrainedAgent", "RandomAgent", "as_agent", "make_agent"]
