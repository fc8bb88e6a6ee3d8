"""RLlibAgent: the RLModule of an RLlib checkpoint playing through the Agent protocol.

Only the module is loaded (no Ray cluster); Ray is imported when the agent is built.
"""

from __future__ import annotations

import logging

import numpy as np
from moonriver_env.agents.base import Observation, SeededAgent

from moonriver_env.moonriver.contract import MoonRiverGame


class RLlibAgent(SeededAgent):
    """Plays the most likely legal action of a trained RLModule (or samples one)."""

    def __init__(self, path: str, deterministic: bool = True, module_id: str = "shared",
                 seed: int | None = None, name: str = "rllib") -> None:
        from moonriver_env.training.rllib.logs import quiet_rllib_logs
        from moonriver_env.training.rllib.paths import module_checkpoint

        directory = module_checkpoint(path, module_id)  # a bad path fails before the imports
        import torch
        from ray.rllib.core.rl_module.rl_module import RLModule
        from ray.rllib.core.rl_module.torch import TorchRLModule

        torch.set_num_threads(1)  # one observation at a time: more threads only contend
        rllib_log = logging.getLogger("ray.rllib")
        level = rllib_log.level
        rllib_log.setLevel(logging.ERROR)  # RLlib warns about its own stored constructor args
        quiet_rllib_logs()  # ... through a logger outside ray.rllib too
        try:
            module = RLModule.from_checkpoint(directory)
        finally:
            rllib_log.setLevel(level)
        if not isinstance(module, TorchRLModule):  # this project trains torch modules only
            raise ValueError(f"{path}: the checkpoint holds a {type(module).__name__}, not a "
                             f"torch RLModule (moonriver-train-rllib's kind)")
        self.module = module
        self.module.eval()
        self.deterministic = deterministic
        super().__init__(seed, name)

    def action_logits(self, observation: Observation) -> np.ndarray:
        """The module's masked action logits for one observation (float64, one per action)."""
        import torch
        from ray.rllib.core.columns import Columns

        obs = {"observation": torch.tensor(observation["observation"])[None],
               "action_mask": torch.tensor(observation["action_mask"])[None]}
        with torch.no_grad():
            out = self.module.forward_inference({Columns.OBS: obs})
        logits: np.ndarray = out[Columns.ACTION_DIST_INPUTS][0].double().numpy()
        return logits

    def act(self, game: MoonRiverGame, observation: Observation) -> int:
        """The chosen action id, always one that ``observation["action_mask"]`` allows."""
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("RLlibAgent asked to act with no legal action in the mask")
        logits = self.action_logits(observation)[legal]
        if self.deterministic:
            return int(legal[int(np.argmax(logits))])
        probs = np.exp(logits - logits.max())
        return int(legal[self.rng.choice(legal.size, p=probs / probs.sum())])


def rllib_from_spec(spec: str, seed: int | None = None) -> RLlibAgent:
    """``rllib:PATH`` (the most likely action) or ``rllib-sample:PATH`` (sampled)."""
    kind, _, path = spec.partition(":")
    if not path:
        raise ValueError(f"agent spec {spec!r}: expected {kind}:PATH (an RLlib run folder or "
                         f"checkpoint)")
    return RLlibAgent(path, deterministic=kind == "rllib", seed=seed, name=spec)
