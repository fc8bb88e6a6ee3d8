"""Agents that play Moon River (baselines, search and trained policies)."""
