"""PolicyAgent: a saved MaskablePPO model (sb3-contrib) playing through the Agent protocol."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from moonriver_env.agents.base import Observation

from moonriver_env.moonriver.contract import MoonRiverGame


class PolicyAgent:
    """Plays the action a MaskablePPO policy predicts for its own observation and mask."""

    def __init__(self, model: Any, deterministic: bool = True, name: str = "policy") -> None:
        if isinstance(model, str):
            from moonriver_env.training.atomic import check_archive
            from sb3_contrib import MaskablePPO

            check_archive(model)  # SB3 would report a damaged member as "not a zip-file"
            model = MaskablePPO.load(model, device="cpu")
        self.model = model
        self.deterministic = deterministic
        self.name = name

    def reset(self, seed: int | None = None) -> None:
        """Seed torch's sampling when the policy is stochastic."""
        if seed is not None and not self.deterministic:
            import torch

            torch.manual_seed(seed)

    def act(self, game: MoonRiverGame, observation: Observation) -> int:
        """The policy's action for this observation, restricted to the legal mask."""
        mask = np.asarray(observation["action_mask"], dtype=bool)
        action, _ = self.model.predict(observation["observation"], action_masks=mask,
                                       deterministic=self.deterministic)
        return int(action)


def policy_from_spec(spec: str, seed: int | None = None) -> PolicyAgent:
    """``policy:PATH`` (the most likely action) or ``policy-sample:PATH`` (sampled)."""
    kind, _, path = spec.partition(":")
    if not path:
        raise ValueError(f"agent spec {spec!r}: expected {kind}:PATH (a saved MaskablePPO "
                         f"model)")
    if not os.path.isfile(path):  # checked here: the loader would look for PATH.zip.zip
        raise FileNotFoundError(2, "policy checkpoint not found", path)
    try:
        return PolicyAgent(path, deterministic=kind == "policy", name=spec)
    except (ValueError, KeyError, EOFError, AssertionError) as exc:  # not an SB3 .zip
        raise ValueError(f"agent spec {spec!r}: cannot load the checkpoint "
                         f"({str(exc).removeprefix('Error: ')})") from None
