"""Batched play on the engine: many games at once, one network forward per decision wave.

Every seat of every game has a role: ``"greedy"`` (GreedyAgent, acting inline), ``"learner"``
(the network being trained; its decisions are recorded) or the name of another network
(a frozen snapshot, or the learner's opponent in an evaluation). Decisions of the networks are
batched across games: each wave encodes the observation of every game whose player to act is
a network seat, runs one forward pass per network and applies the sampled (or most likely)
actions. Game seeds and sampling draws come from one ``numpy.random.Generator``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from moonriver_env.agents.greedy import GreedyAgent
from moonriver_env.agents.pretrained import greedy_prior

from moonriver_env.backend import DEFAULT_BACKEND, Encoder, make_game
from moonriver_env.engine import Game, GameConfig
from moonriver_env.moonriver_v0 import final_rewards
from moonriver_env.observation import SCORE_SCALE, ObservationEncoder

GREEDY = "greedy"
LEARNER = "learner"
TRAINING_SEEDS = 10**9  # training games draw seeds below this; evaluate with seeds above it


@dataclass
class Batch:
    """Recorded decisions of one play-out (numpy arrays once ``finish`` ran)."""

    obs: list = field(default_factory=list)
    masks: list = field(default_factory=list)
    actions: list = field(default_factory=list)  # played ids (learner) or greedy ties mask
    logps: list = field(default_factory=list)
    values: list = field(default_factory=list)
    priors: list = field(default_factory=list)  # greedy_prior rows (networks that use them)
    keys: list = field(default_factory=list)  # (game, seat) of each decision
    returns: dict = field(default_factory=dict)  # (game, seat) -> final reward

    def __len__(self) -> int:
        return len(self.obs)


def sample_actions(logp: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row drawn from exp(logp) with the generator's uniforms."""
    cdf = np.cumsum(np.exp(logp, dtype=np.float64), axis=1)
    u = rng.random(len(logp)) * cdf[:, -1]
    actions = (cdf < u[:, None]).sum(axis=1)
    return np.minimum(actions, logp.shape[1] - 1)


def seat_reward(game: Game, seat: int, margin_coef: float) -> float:
    """Final reward of a seat: +1 win / -1 loss plus ``margin_coef`` x score margin / 100."""
    reward = final_rewards(game, "win")[seat]
    if margin_coef:
        totals = [s.total for s in game.scores()]
        best_other = max(t for p, t in enumerate(totals) if p != seat)
        reward += margin_coef * (totals[seat] - best_other) / SCORE_SCALE
    return reward


def game_seeds(count: int, rng: np.random.Generator) -> list[int]:
    """Seeds of ``count`` training games, drawn from the generator below TRAINING_SEEDS."""
    return [int(s) for s in rng.integers(TRAINING_SEEDS, size=count)]


def new_games(count: int, num_players: int, mode: str, rng: np.random.Generator,
              seeds: list[int] | None = None, backend: str = DEFAULT_BACKEND) -> list[Game]:
    """Fresh games (seeds from ``game_seeds`` unless given) of the ``backend``
    implementation (both play the same games)."""
    config = GameConfig(num_players=num_players, mode=mode)
    if seeds is None:
        seeds = game_seeds(count, rng)
    return [make_game(config, s, backend=backend) for s in seeds]


def play(games: list[Game], roles: list[list[str]], nets: dict[str, torch.nn.Module],
         rng: np.random.Generator, encoder: ObservationEncoder, *,
         greedy: GreedyAgent | None = None, record: str | None = LEARNER,
         label_greedy: bool = False, argmax: frozenset[str] = frozenset(),
         margin_coef: float = 0.0) -> Batch:
    """Play every game to its end; record the decisions of role ``record`` (sampled from its
    network) or, with ``label_greedy``, every non-forced greedy decision and its tied-best set.
    Roles in ``argmax`` take their network's most likely action instead of sampling."""
    greedy = greedy or GreedyAgent(int(rng.integers(2**31)))
    batch = Batch()
    pending = [i for i, g in enumerate(games) if not g.is_over]
    while pending:
        waves: dict[str, list[int]] = {}
        for i in pending:
            game = games[i]
            while not game.is_over:
                seat = game.current_player
                role = roles[i][seat]
                if role != GREEDY:
                    waves.setdefault(role, []).append(i)
                    break
                if not label_greedy:
                    game.apply(greedy.act(game, None))
                    continue
                mask = game.legal_mask()
                legal = mask.nonzero()[0]
                if legal.size == 1:
                    game.apply(int(legal[0]))
                    continue
                prior = greedy_prior(game)  # Greedy's own ranking of its choices
                tied = legal[prior[legal] == prior[legal].max()]
                ties = np.zeros(mask.shape, dtype=bool)
                ties[tied] = True
                batch.obs.append(encoder.encode(game, seat))
                batch.masks.append(mask)
                batch.actions.append(ties)
                batch.priors.append(prior)
                batch.keys.append((i, seat))
                game.apply(int(tied[greedy.rng.integers(tied.size)]))
        for role, idx in waves.items():
            seats = [games[i].current_player for i in idx]
            obs = np.stack([encoder.encode(games[i], s) for i, s in zip(idx, seats, strict=True)])
            masks = np.stack([games[i].legal_mask() for i in idx]).view(np.bool_)
            priors = (np.stack([greedy_prior(games[i]) for i in idx])
                      if getattr(nets[role], "uses_prior", False) else None)
            with torch.no_grad():
                logp, value = nets[role](torch.from_numpy(obs), torch.from_numpy(masks),
                                         None if priors is None else torch.from_numpy(priors))
            logp_np = logp.numpy()
            actions = (logp_np.argmax(axis=1) if role in argmax
                       else sample_actions(logp_np, rng))
            for k, (i, seat, a) in enumerate(zip(idx, seats, actions, strict=True)):
                if not masks[k, a]:  # a draw on a zero-probability boundary: take the mode
                    a = actions[k] = int(logp_np[k].argmax())
                if role == record:
                    batch.obs.append(obs[k])
                    batch.masks.append(masks[k])
                    batch.actions.append(int(a))
                    batch.logps.append(float(logp_np[k, a]))
                    batch.values.append(float(value[k]))
                    batch.keys.append((i, seat))
                    if priors is not None:
                        batch.priors.append(priors[k])
                games[i].apply(int(a))
        pending = [i for i in pending if not games[i].is_over]
    for i, seat in set(batch.keys):
        batch.returns[(i, seat)] = seat_reward(games[i], seat, margin_coef)
    return batch


def win_shares(games: list[Game], seats: list[int]) -> np.ndarray:
    """Each game's share of the win for the given seat (a shared win splits)."""
    out = np.zeros(len(games))
    for k, (game, seat) in enumerate(zip(games, seats, strict=True)):
        winners = game.winners()
        if seat in winners:
            out[k] = 1.0 / len(winners)
    return out


def evaluate(net: torch.nn.Module, num_players: int, mode: str, games: int,
             opponent: str = GREEDY, seed: int = TRAINING_SEEDS, batch: int = 50,
             backend: str = DEFAULT_BACKEND) -> float:
    """Win share of the network (most likely action) against ``opponent`` in every other seat,
    seats rotated (game k: seat k mod players), game seeds ``seed + k``, games of the
    ``backend`` implementation."""
    encoder = Encoder()
    rng = np.random.default_rng(seed)
    shares = []
    for start in range(0, games, batch):
        count = min(batch, games - start)
        table = new_games(count, num_players, mode, rng,
                          seeds=list(range(seed + start, seed + start + count)),
                          backend=backend)
        seats = [(start + k) % num_players for k in range(count)]
        roles = [[LEARNER if p == s else opponent for p in range(num_players)] for s in seats]
        nets = {LEARNER: net}
        if opponent == "random":
            nets["random"] = _Uniform()
        play(table, roles, nets, rng, encoder, record=None, argmax=frozenset([LEARNER]),
             greedy=GreedyAgent(seed + start))
        shares.extend(win_shares(table, seats))
    return float(np.mean(shares))


class _Uniform(torch.nn.Module):
    """Uniform over the legal actions (for evaluations against random play)."""

    def forward(self, obs: torch.Tensor, mask: torch.Tensor,
                prior: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Log-probabilities uniform over the mask; zero values."""
        logits = torch.zeros(mask.shape).masked_fill(~mask, -1e9)
        return torch.log_softmax(logits, dim=1), torch.zeros(mask.shape[0])
