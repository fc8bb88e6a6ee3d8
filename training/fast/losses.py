"""The fast recipe's updates: imitation of Greedy, GAE and the clipped PPO loss, which may be
split over the play processes (each computes its rows' part of a minibatch's gradient)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from moonriver_env.training.fast.rollout import Batch
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
        """This shard's part (rows ``idx``) of a minibatch of ``size`` rows, and its stats' sums."""
        # sums over the rows divided by the whole minibatch's size, so that the processes'
        # gradients add up to the minibatch's; the advantages use the whole minibatch's norm
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


def as_array(rows: Any) -> np.ndarray:
    """A batch field as one array (the batched play stores arrays, ``play`` lists of rows)."""
    return rows if isinstance(rows, np.ndarray) else np.stack(rows)


def imitation_step(net: RanchNet, opt: torch.optim.Optimizer, batch: Batch, epochs: int,
                   minibatch: int, rng: np.random.Generator) -> dict[str, float]:
    """Cross-entropy on Greedy's tied-best set and value regression on the final reward."""
    rows = LegalRows(as_array(batch.obs), as_array(batch.masks),
                     as_array(batch.priors) if len(batch.priors) else None)
    valid = rows.valid
    ties = torch.from_numpy(np.take_along_axis(as_array(batch.actions), rows.legal_np, 1)) & valid
    targets = torch.tensor([batch.returns[k] for k in batch.keys], dtype=torch.float32)
    n, stats = len(batch), {}
    for _ in range(epochs):
        for idx in np.array_split(rng.permutation(n), max(1, n // minibatch)):
            t = torch.from_numpy(idx)
            logp, value = rows.forward(net, idx)
            policy_loss = -torch.logsumexp(logp.masked_fill(~ties[t], -1e9), dim=1).mean()
            value_loss = (value - targets[t]).pow(2).mean()
            opt.zero_grad()
            (policy_loss + 0.5 * value_loss).backward()
            opt.step()
            top = logp.argmax(dim=1)
            with torch.no_grad():
                entropy = -torch.where(valid[t], logp.exp() * logp, 0.0).sum(dim=1).mean()
            stats = {"bc_loss": policy_loss.item(), "bc_value_loss": value_loss.item(),
                     "bc_entropy": entropy.item(),
                     "bc_top1_in_ties": ties[t].gather(1, top[:, None]).float().mean().item()}
    return stats


def advantages(batch: Batch, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """GAE (gamma 1) over each seat's decisions in order; the reward comes at its last one."""
    values = np.asarray(batch.values, dtype=np.float32)
    adv = np.zeros_like(values)
    trajectories: dict[tuple[int, int], list[int]] = {}
    for k, key in enumerate(batch.keys):
        trajectories.setdefault(key, []).append(k)
    for key, steps in trajectories.items():
        next_value, running = 0.0, 0.0
        reward = batch.returns[key]
        for j, k in enumerate(reversed(steps)):
            delta = (reward if j == 0 else 0.0) + next_value - values[k]
            running = delta + lam * running
            adv[k] = running
            next_value = values[k]
    return adv, adv + values
