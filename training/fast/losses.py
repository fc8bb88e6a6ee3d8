"""The clipped PPO loss over the decisions one process holds (a shard of an iteration's batch).

An iteration's decisions can live in several processes (each play process keeps the
observations it recorded, see ``parallel_play``). Each minibatch's loss is a sum over its
rows divided by its size, so every process computes its rows' part (``Shard.loss``), the
gradients of the parts add up to the gradient of the whole minibatch, and one optimiser step
follows. The advantages are normalised with the whole minibatch's mean and standard deviation
(``minibatch_norm``), as a single process would.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from moonriver_env.training.policy_net import LegalRows, RanchNet

STATS = ("policy_loss", "value_loss", "entropy", "clip_frac", "approx_kl")


@dataclass(frozen=True)
class LossWeights:
    """The clip range and the loss terms' weights."""

    clip: float
    vf_coef: float
    ent_coef: float


def minibatch_norm(adv: torch.Tensor) -> tuple[float, float]:
    """The mean and (unbiased) standard deviation that normalise a minibatch's advantages."""
    return float(adv.mean()), float(adv.std())


class Shard(LegalRows):
    """Rows of an iteration's decisions held by one process, ready for the loss."""

    def __init__(self, obs: np.ndarray, masks: np.ndarray, priors: np.ndarray | None,
                 taken: np.ndarray, old_logp: np.ndarray, adv: np.ndarray,
                 returns: np.ndarray) -> None:
        super().__init__(obs, masks, priors)
        self.actions = torch.from_numpy(((self.legal_np == taken[:, None])
                                         & self.valid.numpy()).argmax(axis=1))
        self.old_logp = torch.from_numpy(np.asarray(old_logp, np.float32))
        self.adv = torch.from_numpy(np.asarray(adv, np.float32))
        self.returns = torch.from_numpy(np.asarray(returns, np.float32))

    def loss(self, net: RanchNet, idx: np.ndarray, norm: tuple[float, float], size: int,
             weights: LossWeights) -> tuple[torch.Tensor | None, dict[str, float]]:
        """This shard's part of a minibatch of ``size`` rows (its rows ``idx``): the loss (sums
        over the rows, divided by ``size``; None without rows) and its statistics' sums."""
        if idx.size == 0:
            return None, dict.fromkeys(STATS, 0.0)
        t = torch.from_numpy(idx)
        logp_all, value = self.forward(net, idx)
        logp = logp_all.gather(1, self.actions[t, None]).squeeze(1)
        a = (self.adv[t] - norm[0]) / (norm[1] + 1e-8)
        ratio = torch.exp(logp - self.old_logp[t])
        policy = -torch.min(ratio * a, ratio.clamp(1 - weights.clip, 1 + weights.clip) * a).sum()
        value_sq = (value - self.returns[t]).pow(2).sum()
        entropy = -torch.where(self.valid[t], logp_all.exp() * logp_all, 0.0).sum()
        loss = (policy + weights.vf_coef * value_sq - weights.ent_coef * entropy) / size
        with torch.no_grad():
            sums = {"policy_loss": policy.item(), "value_loss": value_sq.item(),
                    "entropy": entropy.item(),
                    "clip_frac": ((ratio - 1).abs() > weights.clip).sum().item(),
                    "approx_kl": (self.old_logp[t] - logp).sum().item()}
        return loss, sums


def flat_grads(net: torch.nn.Module) -> np.ndarray:
    """Every parameter's gradient in one float32 vector (zeros where there is none)."""
    return torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1)
                      for p in net.parameters()]).numpy()


def add_grads(net: torch.nn.Module, flat: np.ndarray) -> None:
    """Add a ``flat_grads`` vector to the network's gradients."""
    offset = 0
    for p in net.parameters():
        part = torch.from_numpy(flat[offset:offset + p.numel()]).view_as(p)
        p.grad = part.clone() if p.grad is None else p.grad.add_(part)
        offset += p.numel()


def flat_params(net: torch.nn.Module) -> np.ndarray:
    """Every parameter in one float32 vector (a copy)."""
    return torch.nn.utils.parameters_to_vector(net.parameters()).detach().numpy().copy()


def set_params(net: torch.nn.Module, flat: np.ndarray) -> None:
    """Load a ``flat_params`` vector into the network."""
    with torch.no_grad():
        torch.nn.utils.vector_to_parameters(torch.from_numpy(flat), net.parameters())
