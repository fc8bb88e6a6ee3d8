"""The fast recipe's settings (``FastConfig``), their help (``SETTINGS``) and their checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from moonriver_env.agents.pretrained import MAX_VALUE_WIDTH
from moonriver_env.training.fast.parallel_play import check_workers
from moonriver_env.training.settings import load_settings
from moonriver_env.training.variants import variant_list

from moonriver_env.moonriver.backend import DEFAULT_BACKEND, check_backend
from moonriver_env.moonriver.rules import GameConfig

# Settings that fix the network or the run's draws: a resumed run must keep them.
LOCKED_ON_RESUME = ("num_players", "mode", "variants", "seed", "channels", "opponent_channels",
                    "hidden", "use_prior", "prior_init", "critic_hidden", "init", "league",
                    "p_league")
PLAY_SPLITS = ("games", "variants")  # how the play processes share a PPO iteration's games
PLAY_FORWARDS = ("torch", "core")  # what computes the networks' forwards in the PPO games
# Limits and counts where 0 means none (no time limit, no evaluation, every iteration).
AT_LEAST_0 = ("minutes", "bc_minutes", "bc_iterations", "ppo_iterations", "eval_games",
              "eval_every", "checkpoint_minutes")
# Sizes and counts that need one at least.
AT_LEAST_1 = ("bc_games", "bc_epochs", "games", "variants_per_iteration", "epochs", "minibatch",
              "snapshot_every", "max_snapshots", "channels", "opponent_channels", "hidden",
              "torch_threads")


@dataclass
class FastConfig:
    """Every setting of a fast-recipe run (the defaults are training/configs/fast_4p_base.toml)."""

    num_players: int = 4
    mode: str = "base"
    # one variant per iteration, drawn from this list (empty: num_players and mode)
    variants: tuple[str, ...] = ()
    variants_per_iteration: int = 1  # PPO: this many variants drawn, `games` games of each
    seed: int = 0
    out: str = "runs/fast_4p_base"
    # The budgets in iterations (a run's result does not depend on the machine): those of a
    # 30-minute run (5 of imitation) on the idle 2-core machine.
    minutes: float = 0.0  # total wall-clock budget, imitation included (0: none)
    bc_minutes: float = 0.0  # imitation's wall-clock limit (0: none)
    bc_iterations: int = 659  # imitation's iteration limit (0: none; both 0: no imitation)
    bc_games: int = 16
    bc_epochs: int = 2
    bc_lr: float = 1e-3
    ppo_iterations: int = 1911  # PPO's iteration limit (0: none, ``minutes`` ends it)
    games: int = 32  # games per PPO iteration
    learning_rate: float = 1e-3
    epochs: int = 2
    minibatch: int = 1024
    clip: float = 0.2
    ent_coef: float = 0.003
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    gae_lambda: float = 0.95
    margin_coef: float = 0.5
    p_greedy: float = 0.5
    p_self: float = 0.3
    league: tuple[str, ...] = ()  # agents' .npz files of fixed networks (see p_league)
    p_league: float = 0.0
    snapshot_every: int = 10
    max_snapshots: int = 5
    checkpoint_minutes: float = 2.5
    eval_games: int = 200  # evaluation against Greedy at the end (0: none)
    eval_every: int = 0  # PPO iterations between evaluations during training (0: none)
    channels: int = 32
    opponent_channels: int = 16
    hidden: int = 128
    use_prior: bool = True  # logits add a learned multiple of Greedy's one-ply values
    prior_init: float = 3.0
    critic_hidden: int = 0  # units of the value's own layer (0: a linear head on the state)
    init: str = ""  # start from these weights (a .pt of save_net or an agents' .npz)
    torch_threads: int = 1
    update_threads: int = 0  # torch threads of the updates in the main process
    # (0: max(torch_threads, workers); a split PPO update runs on torch_threads)
    workers: int = 2  # processes that play the games (1: all in the main process)
    split_updates: bool = True  # PPO updates: each play process computes its rows' gradient
    play_split: str = "games"  # PPO: "games" of each variant, or whole "variants", per process
    play_forward: str = "torch"  # PPO games: the networks' forwards in "torch" or the "core"
    backend: str = DEFAULT_BACKEND  # implementation that plays the games: core or python

    @classmethod
    def load(cls, path: str | None, overrides: dict[str, Any],
             base: dict[str, Any] | None = None) -> FastConfig:
        """``base`` (else the defaults), then a TOML file, then explicit overrides."""
        values = load_settings(cls, path, overrides, base,
                               unchecked=("workers", "update_threads"))  # validate() words them
        cfg = cls(**values)
        cfg.validate()
        return cfg

    @property
    def whole_variants(self) -> bool:
        """Whether each play process plays whole variants of a PPO iteration (``play_split``)."""
        return self.workers > 1 and self.play_split == "variants"

    @property
    def core_forward(self) -> bool:
        """Whether the PPO games' network forwards run in the compiled core (``play_forward``)."""
        return self.play_forward == "core"

    @property
    def splits_updates(self) -> bool:
        """Whether each PPO update is split over the play processes (each one's own rows)."""
        return (self.workers > 1 and self.split_updates
                and (self.variants_per_iteration == 1 or self.whole_variants))

    def validate(self) -> None:
        """Refuse settings that cannot run; the message says what is allowed."""
        GameConfig(num_players=self.num_players, mode=self.mode)  # its own clear errors
        if self.variants:
            variant_list(self.variants)  # its own clear errors
        check_backend(self.backend)
        check_workers(self.workers)
        if isinstance(self.update_threads, bool) or not isinstance(self.update_threads, int) \
                or self.update_threads < 0:
            raise ValueError(f"update_threads must be an integer >= 0 (0: one per play "
                             f"process), got {self.update_threads!r}")
        if self.play_split not in PLAY_SPLITS:
            raise ValueError(f"play_split must be one of {', '.join(PLAY_SPLITS)}, got "
                             f"{self.play_split!r}")
        if self.play_forward not in PLAY_FORWARDS:
            raise ValueError(f"play_forward must be one of {', '.join(PLAY_FORWARDS)}, got "
                             f"{self.play_forward!r}")
        if self.play_forward == "core" and self.critic_hidden:
            raise ValueError("play_forward = 'core' reads no value layer of its own: it needs "
                             f"critic_hidden = 0, got {self.critic_hidden}")
        if self.play_split == "variants" and self.variants_per_iteration < self.workers:
            raise ValueError(f"play_split = 'variants' gives each play process whole variants: "
                             f"it needs variants_per_iteration >= workers (got "
                             f"{self.variants_per_iteration} and {self.workers}); 'games' "
                             f"splits each variant's games over the processes")
        # the seat draws' chances: Greedy, the learner again, the league
        if not 0 <= self.p_greedy + self.p_self <= 1 or min(self.p_greedy, self.p_self) < 0:
            raise ValueError("p_greedy and p_self must be >= 0 with p_greedy + p_self <= 1")
        if not 0 <= self.p_league <= 1 or (self.p_league and not self.league):
            raise ValueError(f"p_league must be in [0, 1] and above 0 only with league files, "
                             f"got {self.p_league!r} with league {list(self.league)!r}")
        for name in AT_LEAST_0:
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0 (0: none), got {getattr(self, name)}")
        self._check_budgets()
        if self.eval_every and not self.eval_games:
            raise ValueError("eval_every needs eval_games >= 1")
        for name in AT_LEAST_1:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 0 <= self.critic_hidden <= MAX_VALUE_WIDTH:
            raise ValueError(f"critic_hidden must be in 0..{MAX_VALUE_WIDTH} (0: none), got "
                             f"{self.critic_hidden}")

    def _check_budgets(self) -> None:
        """Refuse budgets under which a phase could never run (or the run never end)."""
        if not self.minutes and not self.ppo_iterations:
            raise ValueError("set minutes or ppo_iterations (both 0 would never stop)")
        if self.minutes and self.bc_minutes >= self.minutes:
            raise ValueError(f"bc_minutes ({self.bc_minutes:g}) must be below minutes "
                             f"({self.minutes:g}): imitation would take the whole run and PPO "
                             f"never run")
        if self.minutes and self.bc_iterations and not self.bc_minutes:
            # how long the iterations take depends on the machine
            raise ValueError(f"minutes ({self.minutes:g}) with imitation capped by "
                             f"bc_iterations ({self.bc_iterations}) alone: imitation could take "
                             f"the whole run and PPO never run; set bc_minutes below minutes "
                             f"too, or minutes 0 (iteration budgets alone)")
        if self.eval_every and self.ppo_iterations and self.eval_every > self.ppo_iterations:
            raise ValueError(f"eval_every ({self.eval_every}) is above ppo_iterations "
                             f"({self.ppo_iterations}): no evaluation would run during "
                             f"training; lower it, or 0 for the evaluation at the end alone")


SETTINGS: dict[str, str] = {
    "num_players": "players per game: 2, 3 or 4",
    "mode": "rules: base or legends",
    "variants": "one variant per iteration (imitation and PPO), drawn from this list: names "
                "such as 2p-base or 3p-legends-2, 'all' for the 15; a name listed twice is "
                "drawn twice as often (empty: every game is num_players and mode; the final "
                "evaluation plays num_players and mode either way)",
    "variants_per_iteration": "PPO: variants drawn for each iteration, games games of each, "
                              "their decisions updated together (above 1 the update runs in "
                              "the main process, not split, unless play_split is 'variants')",
    "seed": "seed of the run's generator (game seeds, seat roles, sampling, minibatches) and "
            "of the initial weights",
    "out": "run directory (a new run refuses one that already holds a run)",
    "minutes": "wall-clock budget of the whole run, imitation included (0: no time limit, "
               "ppo_iterations ends the run; a run ended by the clock depends on the "
               "machine's speed; with imitation, bc_minutes must be set below it)",
    "bc_minutes": "imitation ends after this many minutes of the run (0: no time limit; with "
                  "bc_iterations also 0, no imitation; below minutes when both are set)",
    "bc_iterations": "imitation ends after this many iterations (0: no iteration limit)",
    "bc_games": "imitation: all-Greedy games per iteration",
    "bc_epochs": "imitation: passes over each iteration's decisions",
    "bc_lr": "imitation: Adam learning rate",
    "ppo_iterations": "PPO ends after this many iterations (0: no iteration limit, minutes "
                      "ends it)",
    "games": "PPO: games per iteration",
    "learning_rate": "PPO: Adam learning rate",
    "epochs": "PPO: passes over each iteration's decisions",
    "minibatch": "decisions per minibatch (both phases)",
    "clip": "PPO: clip range of the probability ratio",
    "ent_coef": "PPO: entropy bonus coefficient",
    "vf_coef": "PPO: value loss coefficient",
    "max_grad_norm": "PPO: gradient norm clip",
    "gae_lambda": "GAE lambda (gamma is 1)",
    "margin_coef": "reward: weight of (own score - best other) / 100 added to +1 win / -1 loss",
    "p_greedy": "PPO: chance that a seat other than the learner's is Greedy",
    "p_self": "PPO: chance that a seat other than the learner's is the learner again "
              "(p_greedy + p_self <= 1; the rest are snapshots)",
    "league": "PPO: agents' .npz files of fixed networks (a past release, another run), "
              "seated only in games of a variant their weights were trained for",
    "p_league": "PPO: chance that a seat other than the learner's is a league network (one "
                "of those trained for the game's variant, uniformly), drawn before the "
                "p_greedy and p_self draw, which seats the rest (0: none)",
    "snapshot_every": "iterations (both phases counted) between frozen snapshots of the learner",
    "max_snapshots": "snapshots kept (the newest)",
    "checkpoint_minutes": "minutes between the weights saved in checkpoints/ for learning "
                          "curves (0: every iteration)",
    "eval_games": "games of the evaluation against Greedy at the end, and of each one during "
                  "training (0: none)",
    "eval_every": "PPO iterations between evaluations against Greedy during training, whose "
                  "latest the progress lines show; their time counts in minutes (0: only the "
                  "one at the end; at most ppo_iterations when that is set)",
    "channels": "network: viewer cell features",
    "opponent_channels": "network: opponents' cell features",
    "hidden": "network: trunk units",
    "use_prior": "network: the logits add a learned multiple of Greedy's one-ply values",
    "prior_init": "network: starting weight of that prior (logits per point)",
    "critic_hidden": "network: units of a hidden layer of the value's own (over the "
                     "observation after the ranches, the trunk's input and its state) whose "
                     "value adds to the linear head's; it starts at zero, so a network from "
                     "init without one keeps its values (0: the linear head alone)",
    "init": "start from these weights (a .pt of save_net or an exported .npz) instead of fresh "
            "ones (empty: fresh)",
    "torch_threads": "torch threads of each play process",
    "update_threads": "torch threads of the updates run in the main process alone "
                      "(0: one per play process)",
    "workers": "processes that play each batch's games (1: all in the main process)",
    "split_updates": "split each PPO update over the play processes, each computing its "
                     "own decisions' part of the gradient",
    "play_split": "PPO with workers above 1: 'games' splits each variant's games over the "
                  "play processes; 'variants' gives each process whole variants (at most "
                  "about twice as fast when variants_per_iteration >= workers, since a "
                  "wave's forward costs little more for twice the rows; other sampling "
                  "streams, so other weights than 'games')",
    "play_forward": "PPO games: what computes the networks' moves and the learner's "
                    "log-probabilities and values: 'torch' (the update's own forward) or "
                    "'core' (the compiled core's forward, agents.az.core_net, faster on a "
                    "wave's few rows; its floats round differently, so the recorded "
                    "log-probabilities differ from the update's by float rounding and the "
                    "run ends at other weights than 'torch'; needs critic_hidden = 0)",
    "backend": "implementation that plays the games: core (compiled: the games of a batch "
               "played together in the core) or python (the reference engine, one Game object "
               "per game, Greedy in Python); the two draw Greedy's ties from different "
               "generators, so their runs differ (default from $MOONRIVER_BACKEND when set)",
}
