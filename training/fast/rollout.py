"""Batched play on the engine: many games at once, one network forward per decision wave.
A seat's role: ``"greedy"``, ``"random"``, ``"learner"`` (recorded) or another network's name."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from moonriver_env.agents.greedy import GreedyAgent
from moonriver_env.agents.pretrained import MASKED, SHAPE_WEIGHT, greedy_prior
from moonriver_env.training.policy_net import RanchNet, legal_lists

from moonriver_env.common.view import Encoder as ViewEncoder
from moonriver_env.moonriver.aec_env import final_rewards
from moonriver_env.moonriver.backend import DEFAULT_BACKEND, Encoder, make_game
from moonriver_env.moonriver.contract import MoonRiverGame
from moonriver_env.moonriver.observation import OBSERVATION_SIZE, SCORE_SCALE
from moonriver_env.moonriver.rules import NUM_ACTIONS, GameConfig

if TYPE_CHECKING:
    from moonriver_env.moonriver.batch.games import BatchedGames

GREEDY = "greedy"
LEARNER = "learner"
RANDOM = "random"  # a uniform random seat (played in the core by ``play_batched``)
TRAINING_SEEDS = 10**9  # training games draw seeds below this; evaluate with seeds above it
# A network whose decisions are not recorded (a snapshot, an evaluation opponent) plays waves
# of up to this many rows with its numpy twin.
TWIN_ROWS = 4


Rows = Any  # a list of rows, or the rows stacked in one array (a merge extends either)


@dataclass
class Batch:
    """Recorded decisions of one play-out (numpy arrays once ``finish`` ran)."""

    obs: Rows = field(default_factory=list)
    masks: Rows = field(default_factory=list)
    actions: Rows = field(default_factory=list)  # played ids (learner) or greedy ties mask
    logps: Rows = field(default_factory=list)
    values: Rows = field(default_factory=list)
    priors: Rows = field(default_factory=list)  # greedy_prior rows (networks that use them)
    keys: list[tuple[int, int]] = field(default_factory=list)  # (game, seat) of each decision
    returns: dict[tuple[int, int], float] = field(default_factory=dict)  # (game, seat) -> reward
    # how many leading rows have their obs, masks and priors here (None: all; the others stay
    # in the play processes that recorded them, for a split update)
    local: int | None = None

    def __len__(self) -> int:
        return len(self.keys)


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
    """Fresh games of the ``backend`` implementation (seeds from ``game_seeds`` unless given)."""
    config = GameConfig(num_players=num_players, mode=mode)
    if seeds is None:
        seeds = game_seeds(count, rng)
    return [make_game(config, s, backend=backend) for s in seeds]


class _GameList:
    """A list of ``Game`` objects seen as the loop sees a ``BatchedGames`` (inline seats played)."""

    def __init__(self, games: list[MoonRiverGame], kinds: list[list[str]],
                 encoder: ViewEncoder[MoonRiverGame], greedy: GreedyAgent,
                 random_rng: np.random.Generator) -> None:
        self.games, self._kinds, self._encoder = games, kinds, encoder
        self._greedy, self._random = greedy, random_rng
        self.player = np.full(len(games), -1, np.int64)
        self.obs = np.zeros((len(games), OBSERVATION_SIZE), np.float32)
        self.mask = np.zeros((len(games), NUM_ACTIONS), np.int8)
        self._advance(range(len(games)))

    def _advance(self, ids: Iterable[int]) -> None:
        """Play the inline seats of games ``ids`` up to a seat the loop decides (or the end)."""
        for g in ids:
            game = self.games[g]
            while not game.is_over and self._kinds[g][game.current_player] != LEARNER:
                if self._kinds[g][game.current_player] == GREEDY:
                    game.apply(self._greedy.act(game, {}))
                else:
                    legal = game.legal_action_ids()
                    game.apply(int(legal[self._random.integers(legal.size)]))
            self.player[g] = -1 if game.is_over else game.current_player
            if not game.is_over:
                self.obs[g] = self._encoder.encode(game, game.current_player)
                self.mask[g] = game.legal_mask()

    def greedy_prior(self, active: np.ndarray, out: np.ndarray, shape_weight: float) -> np.ndarray:
        """Greedy's prior (``agents.pretrained.greedy_prior``) of each listed game, by row."""
        assert shape_weight == SHAPE_WEIGHT  # the weight greedy_prior applies
        for r, g in enumerate(active.tolist()):
            out[r] = greedy_prior(self.games[g])
        return out[:len(active)]

    def step(self, actions: np.ndarray) -> None:
        """Apply each waiting game's action, then play on to the next decision."""
        waiting = np.flatnonzero(self.player >= 0).tolist()
        for g in waiting:
            self.games[g].apply(int(actions[g]))
        self._advance(waiting)

    def game(self, g: int) -> MoonRiverGame:
        """Game ``g`` (the very object handed in)."""
        return self.games[g]


def play(games: list[MoonRiverGame], roles: list[list[str]], nets: Mapping[str, torch.nn.Module],
         rng: np.random.Generator, encoder: ViewEncoder[MoonRiverGame], *,
         greedy: GreedyAgent | None = None, record: str | None = LEARNER,
         label_greedy: bool = False, argmax: frozenset[str] = frozenset(),
         margin_coef: float = 0.0, core: bool = False) -> Batch:
    """Play every game (either backend; in place) to its end with ``play_batched``'s loop."""
    greedy = greedy or GreedyAgent(int(rng.integers(2**31)))
    if len(games) != len(roles):
        raise ValueError(f"{len(games)} games but {len(roles)} role lists")
    names, python_facing, kinds = _roles(roles, nets, label_greedy)
    table = _GameList(games, kinds, encoder, greedy, np.random.default_rng(rng.integers(2**62)))
    return _play_table(table, roles, names, python_facing, nets, rng, record=record,
                       label_greedy=label_greedy, argmax=argmax, margin_coef=margin_coef,
                       core=core)


def core_forward(net: torch.nn.Module) -> Any:
    """``net``'s forward in the compiled core, or None where only torch's fits it."""
    return net.core_twin() if isinstance(net, RanchNet) and net.core_scores else None


def _legal_logp(logits: np.ndarray, legal: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Log-probabilities (k, L) at the legal ids of full logit rows (MASKED where not valid)."""
    scores = np.where(valid, np.take_along_axis(logits, legal, 1), -np.inf)
    top = scores.max(axis=1, keepdims=True)
    logp = scores - (top + np.log(np.exp(scores - top).sum(axis=1, keepdims=True)))
    return np.where(valid, logp, MASKED).astype(np.float32)


def _legal_scores(net: torch.nn.Module, obs: np.ndarray, mask: np.ndarray, legal: np.ndarray,
                  valid: np.ndarray, prior: np.ndarray | None,
                  prior_legal: np.ndarray | None,
                  twin_rows: int = 0, core_net: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Log-probabilities (k, L) at the legal ids and values (k,) of one network's rows.

    ``core_net``: the network's forward in the compiled core (``core_forward``), used if given."""
    if core_net is not None:
        # one value per row (column 0); the table size only weighs seats' values, unused here
        logits, values = core_net.evaluate(obs, mask.view(np.int8),
                                           np.full(len(obs), 2, np.int32), prior)
        return _legal_logp(logits, legal, valid), values[:, 0].copy()
    # on a row or two the numpy twin costs half of torch's forward (its per-call overhead)
    if len(obs) <= twin_rows and isinstance(net, RanchNet):
        logits, value = net.numpy_twin().forward(obs, mask, prior)
        return _legal_logp(logits, legal, valid), value
    with torch.inference_mode():
        if isinstance(net, RanchNet):
            legal_logp, legal_value = net.legal_forward(
                torch.from_numpy(obs), torch.from_numpy(legal), torch.from_numpy(valid),
                None if prior_legal is None else torch.from_numpy(prior_legal))
            return legal_logp.numpy(), legal_value.numpy()
        full_logp, full_value = net(torch.from_numpy(obs), torch.from_numpy(mask),
                                    None if prior is None else torch.from_numpy(prior))
    return np.take_along_axis(full_logp.numpy(), legal, 1), full_value.numpy()


def _draw(logp: np.ndarray, valid: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Positions drawn from exp(logp) over each row's valid entries (one uniform per row)."""
    cdf = np.cumsum(np.where(valid, np.exp(logp, dtype=np.float64), 0.0), axis=1)
    u = rng.random(len(logp)) * cdf[:, -1]
    pos: np.ndarray = np.minimum((cdf < u[:, None]).sum(axis=1), valid.sum(axis=1) - 1)
    return pos


def _stack_rows(chunks: list[np.ndarray], width: int | None = None,
                dtype: type | None = None) -> np.ndarray:
    if not chunks:
        return np.zeros((0,) if width is None else (0, width), dtype or np.float32)
    return np.concatenate(chunks)


def play_batched(seeds: list[int], roles: list[list[str]], nets: Mapping[str, torch.nn.Module],
                 rng: np.random.Generator, config: GameConfig, *, threads: int = 1,
                 record: str | None = LEARNER, label_greedy: bool = False,
                 argmax: frozenset[str] = frozenset(), margin_coef: float = 0.0,
                 core: bool = False) -> tuple[Batch, list[MoonRiverGame]]:
    """Play the games of ``seeds`` in one ``BatchedGames``: the record and the finished games.

    ``core``: the networks' forwards in the compiled core (``core_forward``), not torch."""
    from moonriver_env.moonriver.batch.games import BatchedGames

    if len(seeds) != len(roles):
        raise ValueError(f"{len(seeds)} game seeds but {len(roles)} role lists")
    if not seeds:
        return Batch(), []
    names, python_facing, kinds = _roles(roles, nets, label_greedy)
    games = BatchedGames(len(seeds), config, (LEARNER,) * config.num_players, threads=threads,
                         autoreset=False)
    games.reset(int(rng.integers(2**62)), seeds=seeds, seats=kinds)
    batch = _play_table(games, roles, names, python_facing, nets, rng, record=record,
                        label_greedy=label_greedy, argmax=argmax, margin_coef=margin_coef,
                        core=core)
    return batch, [games.game(g) for g in range(len(seeds))]


def _roles(roles: list[list[str]], nets: Mapping[str, torch.nn.Module],
           label_greedy: bool) -> tuple[list[str], set[str], list[list[str]]]:
    """Role names (sorted), those the loop decides (networks; Greedy if labelled), seat kinds."""
    names = sorted({r for row in roles for r in row})
    for name in names:
        if name not in nets and name not in (GREEDY, RANDOM):
            raise ValueError(f"role {name!r} names no network (networks: {sorted(nets)})")
    deciders = {n for n in names if n in nets or (label_greedy and n == GREEDY)}
    return names, deciders, [[(LEARNER if r in deciders else r) for r in row] for row in roles]


def _play_table(games: BatchedGames | _GameList, roles: list[list[str]], names: list[str],
                python_facing: set[str], nets: Mapping[str, torch.nn.Module],
                rng: np.random.Generator, *, record: str | None, label_greedy: bool,
                argmax: frozenset[str], margin_coef: float, core: bool = False) -> Batch:
    """The one play loop: each wave's rows decided by the network of their role."""
    count = len(roles)
    code = {name: k for k, name in enumerate(names)}
    role_code = np.array([[code[r] for r in row] for row in roles], dtype=np.int64)
    wants_prior = label_greedy or any(getattr(nets[n], "uses_prior", False)
                                      for n in python_facing if n in nets)
    prior_buf = np.empty((count, NUM_ACTIONS), np.float32) if wants_prior else None
    chunks: dict[str, list[np.ndarray]] = {k: [] for k in ("obs", "masks", "actions", "logps",
                                                           "values", "priors")}
    keys: list[tuple[int, int]] = []
    actions = np.zeros(count, np.int64)
    # the networks do not change during a play: each one's core forward made once
    cores = {name: core_forward(nets[name]) for name in python_facing if core and name in nets}
    while (active := np.flatnonzero(games.player >= 0)).size:
        seat = games.player[active].astype(np.int64)
        codes = role_code[active, seat]
        obs = games.obs[active]
        mask = games.mask[active].view(np.bool_)
        legal, valid = legal_lists(mask)
        prior: np.ndarray | None = None
        prior_legal: np.ndarray | None = None
        if prior_buf is not None:
            prior = games.greedy_prior(active, prior_buf, SHAPE_WEIGHT)
            prior_legal = np.take_along_axis(prior, legal, 1)
        for name in sorted(python_facing):  # in the order of ``names``
            rows = np.flatnonzero(codes == code[name])
            if rows.size == 0:
                continue
            if name == GREEDY:  # label_greedy: Greedy's own ranking of its choices
                assert prior is not None and prior_legal is not None  # label_greedy wants it
                counts = valid[rows].sum(axis=1)
                values = np.where(valid[rows], prior_legal[rows], -np.inf)
                tied = valid[rows] & (values == values.max(axis=1, keepdims=True))
                draw = rng.integers(tied.sum(axis=1))  # the k-th tied entry of each row
                pos = np.argmax(np.cumsum(tied, axis=1) > draw[:, None], axis=1)
                actions[active[rows]] = legal[rows, pos]
                kept = rows[counts > 1]
                if kept.size:
                    ties = np.zeros((kept.size, NUM_ACTIONS), np.bool_)
                    r_idx, c_idx = np.nonzero(tied[counts > 1])
                    ties[r_idx, legal[kept][r_idx, c_idx]] = True
                    chunks["obs"].append(obs[kept])
                    chunks["masks"].append(mask[kept])
                    chunks["actions"].append(ties)
                    chunks["priors"].append(prior[kept])
                    keys.extend(zip(active[kept].tolist(), seat[kept].tolist(), strict=True))
                continue
            net = nets[name]
            uses = getattr(net, "uses_prior", False)  # then the wave has Greedy's prior
            net_prior = prior[rows] if uses and prior is not None else None
            net_prior_legal = prior_legal[rows] if uses and prior_legal is not None else None
            logp, value = _legal_scores(net, obs[rows], mask[rows], legal[rows], valid[rows],
                                        net_prior, net_prior_legal,
                                        0 if name == record else TWIN_ROWS, cores.get(name))
            pos = (np.argmax(np.where(valid[rows], logp, -np.inf), axis=1) if name in argmax
                   else _draw(logp, valid[rows], rng))
            actions[active[rows]] = legal[rows, pos]
            if name == record:
                chunks["obs"].append(obs[rows])
                chunks["masks"].append(mask[rows])
                chunks["actions"].append(legal[rows, pos])
                chunks["logps"].append(logp[np.arange(rows.size), pos].astype(np.float64))
                chunks["values"].append(value.astype(np.float64))
                if net_prior is not None:
                    chunks["priors"].append(net_prior)
                keys.extend(zip(active[rows].tolist(), seat[rows].tolist(), strict=True))
        games.step(actions)
    finished = [games.game(g) for g in range(count)]
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
    return batch


def win_shares(games: list[MoonRiverGame], seats: list[int]) -> np.ndarray:
    """Each game's share of the win for the given seat (a shared win splits)."""
    winners = [game.winners() for game in games]
    return np.array([1.0 / len(w) if seat in w else 0.0
                     for w, seat in zip(winners, seats, strict=True)])


def evaluate(net: torch.nn.Module, num_players: int, mode: str, games: int,
             opponent: str = GREEDY, seed: int = TRAINING_SEEDS, batch: int = 50,
             backend: str = DEFAULT_BACKEND) -> float:
    """Win share of the network (most likely action) against ``opponent``, seats rotated."""
    encoder = Encoder()
    rng = np.random.default_rng(seed)
    shares: list[float] = []
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
