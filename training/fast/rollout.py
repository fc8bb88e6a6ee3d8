"""Batched play on the engine: many games at once, one network forward per decision wave.

Every seat of every game has a role: ``"greedy"`` (GreedyAgent, acting inline), ``"learner"``
(the network being trained; its decisions are recorded) or the name of another network
(a frozen snapshot, or the learner's opponent in an evaluation). Decisions of the networks are
batched across games: each wave encodes the observation of every game whose player to act is
a network seat, runs one forward pass per network and applies the sampled (or most likely)
actions. Game seeds and sampling draws come from one ``numpy.random.Generator``.

Two ways to play a list of games:

- ``play_batched`` (the recipe on the compiled core): the games live in one
  ``moonriver_env.vector.BatchedGames`` (a fixed list, no autoreset). Greedy and random seats
  are played inside the core (GIL released, split over ``threads``); every network seat is a
  Python-facing seat, and each wave's rows go to the network of the role of their (game, seat).
  Greedy's prior of a wave is one batched core call; networks score only the legal actions
  (``RanchNet.legal_forward``). Greedy seats draw their ties from the core's per-game streams
  (seeded from the generator), so a batched play-out is a function of the generator's state,
  not the same play-out as ``play`` gives.
- ``play`` (the reference path, any backend): a list of per-game ``Game`` objects, Greedy seats
  played by ``GreedyAgent`` in Python, one full-width forward pass per network and wave.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from moonriver_env.agents.greedy import GreedyAgent
from moonriver_env.agents.pretrained import MASKED, SHAPE_WEIGHT, greedy_prior
from moonriver_env.training.policy_net import legal_lists

from moonriver_env.backend import DEFAULT_BACKEND, Encoder, make_game
from moonriver_env.common.contract import MoonRiverGame
from moonriver_env.engine import NUM_ACTIONS, GameConfig
from moonriver_env.moonriver.aec_env import final_rewards
from moonriver_env.moonriver.observation import OBSERVATION_SIZE, SCORE_SCALE, ObservationEncoder

GREEDY = "greedy"
LEARNER = "learner"
RANDOM = "random"  # a uniform random seat (played in the core by ``play_batched``)
TRAINING_SEEDS = 10**9  # training games draw seeds below this; evaluate with seeds above it
# A network whose decisions are not recorded (a snapshot, an evaluation opponent) plays waves
# of up to this many rows with its numpy twin.
TWIN_ROWS = 4


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
    # how many leading rows have their obs, masks and priors here (None: all; the others stay
    # in the play processes that recorded them, for a split update)
    local: int | None = None

    def __len__(self) -> int:
        return len(self.keys)


def sample_actions(logp: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row drawn from exp(logp) with the generator's uniforms."""
    cdf = np.cumsum(np.exp(logp, dtype=np.float64), axis=1)
    u = rng.random(len(logp)) * cdf[:, -1]
    actions = (cdf < u[:, None]).sum(axis=1)
    return np.minimum(actions, logp.shape[1] - 1)


def seat_reward(game: MoonRiverGame, seat: int, margin_coef: float) -> float:
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
              seeds: list[int] | None = None,
              backend: str = DEFAULT_BACKEND) -> list[MoonRiverGame]:
    """Fresh games (seeds from ``game_seeds`` unless given) of the ``backend``
    implementation (both play the same games)."""
    config = GameConfig(num_players=num_players, mode=mode)
    if seeds is None:
        seeds = game_seeds(count, rng)
    return [make_game(config, s, backend=backend) for s in seeds]


def play(games: list[MoonRiverGame], roles: list[list[str]], nets: dict[str, torch.nn.Module],
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


def _legal_scores(net: torch.nn.Module, obs: np.ndarray, mask: np.ndarray, legal: np.ndarray,
                  valid: np.ndarray, prior: np.ndarray | None,
                  prior_legal: np.ndarray | None,
                  twin_rows: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Log-probabilities (k, L) at the legal ids and values (k,) of one network's rows; up to
    ``twin_rows`` rows go through its numpy twin (``RanchNet.numpy_twin``: on a row or two a
    forward costs half of torch's, whose per-call overhead dominates there)."""
    if len(obs) <= twin_rows and hasattr(net, "numpy_twin"):
        logits, value = net.numpy_twin().forward(obs, mask, prior)
        scores = np.where(valid, np.take_along_axis(logits, legal, 1), -np.inf)
        top = scores.max(axis=1, keepdims=True)
        logp = scores - (top + np.log(np.exp(scores - top).sum(axis=1, keepdims=True)))
        return np.where(valid, logp, MASKED).astype(np.float32), value
    with torch.inference_mode():
        if hasattr(net, "legal_forward"):
            logp, value = net.legal_forward(
                torch.from_numpy(obs), torch.from_numpy(legal), torch.from_numpy(valid),
                None if prior_legal is None else torch.from_numpy(prior_legal))
            return logp.numpy(), value.numpy()
        logp, value = net(torch.from_numpy(obs), torch.from_numpy(mask),
                          None if prior is None else torch.from_numpy(prior))
    return np.take_along_axis(logp.numpy(), legal, 1), value.numpy()


def _draw(logp: np.ndarray, valid: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Positions drawn from exp(logp) over each row's valid entries (one uniform per row)."""
    cdf = np.cumsum(np.where(valid, np.exp(logp, dtype=np.float64), 0.0), axis=1)
    u = rng.random(len(logp)) * cdf[:, -1]
    pos = np.minimum((cdf < u[:, None]).sum(axis=1), valid.sum(axis=1) - 1)
    return pos


def _stack_rows(chunks: list[np.ndarray], width: int | None = None,
                dtype: type | None = None) -> np.ndarray:
    if not chunks:
        return np.zeros((0,) if width is None else (0, width), dtype or np.float32)
    return np.concatenate(chunks)


def play_batched(seeds: list[int], roles: list[list[str]], nets: dict[str, torch.nn.Module],
                 rng: np.random.Generator, config: GameConfig, *, threads: int = 1,
                 record: str | None = LEARNER, label_greedy: bool = False,
                 argmax: frozenset[str] = frozenset(),
                 margin_coef: float = 0.0) -> tuple[Batch, list]:
    """Play the games of ``seeds`` (seat ``roles``) to their end in one ``BatchedGames``;
    record what ``play`` records (same fields, stacked arrays) and return it with the
    finished games (core Games). Roles: ``"greedy"``, ``"random"`` (played in the core) or a
    key of ``nets``; with ``label_greedy`` the Greedy seats are Python-facing, every
    non-forced Greedy decision is recorded with its tied-best set, and the move is drawn
    among the ties from ``rng``. The generator gives the core's seed, then one uniform per
    sampled decision."""
    from moonriver_env.vector import BatchedGames

    if len(seeds) != len(roles):
        raise ValueError(f"{len(seeds)} game seeds but {len(roles)} role lists")
    if not seeds:
        return Batch(), []
    players = config.num_players
    names = sorted({r for row in roles for r in row})
    for name in names:
        if name not in nets and name not in (GREEDY, RANDOM):
            raise ValueError(f"role {name!r} names no network (networks: {sorted(nets)})")
    python_facing = {n for n in names if n in nets or (label_greedy and n == GREEDY)}
    code = {name: k for k, name in enumerate(names)}
    role_code = np.array([[code[r] for r in row] for row in roles], dtype=np.int64)
    kinds = [[("learner" if r in python_facing else r) for r in row] for row in roles]
    games = BatchedGames(len(seeds), config, ("learner",) * players, threads=threads,
                         autoreset=False)
    games.reset(int(rng.integers(2**62)), seeds=seeds, seats=kinds)
    wants_prior = label_greedy or any(getattr(nets[n], "uses_prior", False)
                                      for n in python_facing if n in nets)
    prior_buf = np.empty((len(seeds), NUM_ACTIONS), np.float32) if wants_prior else None
    chunks: dict[str, list] = {k: [] for k in ("obs", "masks", "actions", "logps", "values",
                                                 "priors")}
    keys: list[tuple[int, int]] = []
    actions = np.zeros(len(seeds), np.int64)
    while True:
        active = np.flatnonzero(games.player >= 0)
        if active.size == 0:
            break
        seat = games.player[active].astype(np.int64)
        codes = role_code[active, seat]
        obs = games.obs[active]
        mask = games.mask[active].view(np.bool_)
        legal, valid = legal_lists(mask)
        prior = prior_legal = None
        if prior_buf is not None:
            prior = games.greedy_prior(active, prior_buf, SHAPE_WEIGHT)
            prior_legal = np.take_along_axis(prior, legal, 1)
        for name in names:
            if name not in python_facing:
                continue
            rows = np.flatnonzero(codes == code[name])
            if rows.size == 0:
                continue
            if name == GREEDY:  # label_greedy: Greedy's own ranking of its choices
                counts = valid[rows].sum(axis=1)
                values = np.where(valid[rows], prior_legal[rows], -np.inf)
                tied = valid[rows] & (values == values.max(axis=1, keepdims=True))
                ntied = tied.sum(axis=1)
                draw = rng.integers(ntied)  # the k-th tied entry of each row
                pos = np.argmax(np.cumsum(tied, axis=1) > draw[:, None], axis=1)
                actions[active[rows]] = legal[rows, pos]
                kept = rows[counts > 1]
                if kept.size:
                    ties = np.zeros((kept.size, NUM_ACTIONS), np.bool_)
                    sub = tied[counts > 1]
                    r_idx, c_idx = np.nonzero(sub)
                    ties[r_idx, legal[kept][r_idx, c_idx]] = True
                    chunks["obs"].append(obs[kept])
                    chunks["masks"].append(mask[kept])
                    chunks["actions"].append(ties)
                    chunks["priors"].append(prior[kept])
                    keys.extend(zip(active[kept].tolist(), seat[kept].tolist(), strict=True))
                continue
            net = nets[name]
            uses = getattr(net, "uses_prior", False)
            logp, value = _legal_scores(net, obs[rows], mask[rows], legal[rows], valid[rows],
                                        prior[rows] if uses else None,
                                        prior_legal[rows] if uses else None,
                                        0 if name == record else TWIN_ROWS)
            pos = (np.argmax(np.where(valid[rows], logp, -np.inf), axis=1) if name in argmax
                   else _draw(logp, valid[rows], rng))
            actions[active[rows]] = legal[rows, pos]
            if name == record:
                chunks["obs"].append(obs[rows])
                chunks["masks"].append(mask[rows])
                chunks["actions"].append(legal[rows, pos])
                chunks["logps"].append(logp[np.arange(rows.size), pos].astype(np.float64))
                chunks["values"].append(value.astype(np.float64))
                if uses:
                    chunks["priors"].append(prior[rows])
                keys.extend(zip(active[rows].tolist(), seat[rows].tolist(), strict=True))
        games.step(actions)
    finished = [games.game(g) for g in range(len(seeds))]
    batch = Batch(keys=keys)
    batch.obs = _stack_rows(chunks["obs"], OBSERVATION_SIZE)
    batch.masks = _stack_rows(chunks["masks"], NUM_ACTIONS, np.bool_)
    batch.actions = (_stack_rows(chunks["actions"], NUM_ACTIONS, np.bool_) if label_greedy
                     else _stack_rows(chunks["actions"], dtype=np.int64))
    batch.logps = _stack_rows(chunks["logps"], dtype=np.float64)
    batch.values = _stack_rows(chunks["values"], dtype=np.float64)
    batch.priors = _stack_rows(chunks["priors"], NUM_ACTIONS) if chunks["priors"] else []
    for i, s in set(keys):
        batch.returns[(i, s)] = seat_reward(finished[i], s, margin_coef)
    return batch, finished


def win_shares(games: list[MoonRiverGame], seats: list[int]) -> np.ndarray:
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
