"""An action-masking PPO RLModule for RLlib's new API stack, reading the env's ``action_mask``.

The pattern of RLlib's ``examples/rl_modules/classes/action_masking_rlm.py``."""

from __future__ import annotations

from typing import Any

import gymnasium
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import (
    DefaultPPOTorchRLModule as PPOTorchRLModule,
)
from ray.rllib.core.columns import Columns
from ray.rllib.utils.torch_utils import FLOAT_MIN

OBS_KEY = "observation"
MASK_KEY = "action_mask"


class MaskedPPOTorchRLModule(PPOTorchRLModule):
    """PPO's default torch module whose action logits are masked by the observation's mask."""

    def __init__(self, *, observation_space: gymnasium.Space[object] | None = None,
                 **kwargs: Any) -> None:
        if not (isinstance(observation_space, gymnasium.spaces.Dict)
                and {OBS_KEY, MASK_KEY} <= set(observation_space.spaces)):
            raise ValueError(f"MaskedPPOTorchRLModule needs a Dict observation space with "
                             f"{OBS_KEY!r} and {MASK_KEY!r}, got {observation_space!r}")
        self.observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space[OBS_KEY], **kwargs)

    def setup(self) -> None:
        """Build PPO's networks on the observation vector, then expose the full Dict space."""
        super().setup()
        self.observation_space = self.observation_space_with_mask

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask = self._split_mask(batch)
        return self._mask_logits(super()._forward_inference(batch, **kwargs), mask)

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask = self._split_mask(batch)
        return self._mask_logits(super()._forward_exploration(batch, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask = self._split_mask(batch)
        return self._mask_logits(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        """Values of the observation vectors (the mask plays no part in the value)."""
        self._split_mask(batch)
        return super().compute_values(batch, embeddings)

    @staticmethod
    def _split_mask(batch: dict[str, Any]) -> Any:
        """Replace the Dict observation by its vector; keep the mask in the batch."""
        obs = batch[Columns.OBS]
        if isinstance(obs, dict):
            if MASK_KEY not in obs or OBS_KEY not in obs:
                raise ValueError(f"the observation must hold {OBS_KEY!r} and {MASK_KEY!r}, "
                                 f"got keys {sorted(obs)}")
            batch[MASK_KEY] = obs[MASK_KEY]
            batch[Columns.OBS] = obs[OBS_KEY]
        return batch[MASK_KEY]

    @staticmethod
    def _mask_logits(outs: dict[str, Any], mask: Any) -> dict[str, Any]:
        inf_mask = torch.clamp(torch.log(mask.float()), min=FLOAT_MIN)
        outs[Columns.ACTION_DIST_INPUTS] = outs[Columns.ACTION_DIST_INPUTS] + inf_mask
        return outs
