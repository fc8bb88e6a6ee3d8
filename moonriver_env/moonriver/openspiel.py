"""Moon River as an OpenSpiel game, ``python_moonriver``, with every draw a chance node.

    import pyspiel
    import moonriver_env.moonriver.openspiel  # registers python_moonriver
    game = pyspiel.load_game("python_moonriver(players=2,mode=legends,scenario=3)")

- Install: `pip install "moonriver-env[openspiel]"` (OpenSpiel's `open-spiel` wheel).
- Parameters: `players` 2-4 (default 4); `mode` "base" (default) or "legends"; `scenario` 0
  (default; legends: drawn by chance) or 1-4 (legends only).
- Type: sequential, explicit chance, perfect information, general sum, terminal rewards.
- Players: OpenSpiel player `p` is engine player `p` (`player_p` of `moonriver_v0`).
- Actions: 2710 distinct ids, the engine's enumeration (docs/actions.md); action strings are
  the engine's action texts.
- Tensors: the observation and the information state are the engine's 4934-value
  observation of the player (`moonriver_env.moonriver.observation`), one named tensor per view.
- Returns: the `win` reward of `moonriver_v0` at the end: +1 to each winner (a shared victory
  too), -1 to the others.
- Chance: the setup's nodes in order: scenario (legends with `scenario=0`: ids 1-4), each legend
  board (ids index the sorted legend boards), setup order (player ids; a last single outcome is
  skipped), the first saloon (token ids), the first column (plot ids, in draw order). A decision
  that draws is carried out after one uniform node per plot, then per partner, that it draws.
- Records: ``engine_game(state).to_record()`` replays its chosen draws (docs/game-record.md).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pyspiel

from moonriver_env.moonriver.observation import OBSERVATION_SIZE, VIEWS, ObservationEncoder
from moonriver_env.moonriver.rules import NUM_ACTIONS, ActionCodec, Game, GameConfig, Phase
from moonriver_env.moonriver.rules.actions import SALOON_SLOTS
from moonriver_env.moonriver.rules.components import COLUMN_SIZE
from moonriver_env.moonriver.rules.config import MODES
from moonriver_env.moonriver.rules.game import win_returns
from moonriver_env.moonriver.rules.scenarios import SCENARIOS

__all__ = ["GAME_NAME", "MAX_GAME_LENGTH", "MoonRiverGame", "MoonRiverObserver", "MoonRiverState",
           "engine_game"]

GAME_NAME = "python_moonriver"
DEFAULTS: dict[str, Any] = {"players": 4, "mode": "base", "scenario": 0}

# Decisions of one game at most (OpenSpiel's max_game_length counts decisions, not chance).
# A column of 4 plots per round and 96 plots make at most 24 rounds of at most 4 turns. A turn
# is a selection, a pass and at most 2 builds; a build is one decision plus at most 2 droughts
# (a skull per plot) and 2 recruits, each followed by at most 4 partner decisions (3 cowboy
# moves and a pass): 13. Emptying the reserves at the end: at most 2 builds per player; the
# 2-player bonus tile: once per player, with its own symbols. Setup: 4 placements.
_TURN = 1 + 1 + 2 * (1 + 2 + 2 * (1 + 4))
MAX_GAME_LENGTH = 4 + 24 * 4 * _TURN + 4 * 2 * 13 + 2 * (1 + 1 + 5)
WIN, LOSS = 1.0, -1.0

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Moon River",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULTS,
)


class _Tables:
    """What every state of one game shares: configs, legend boards, seeds per setup order."""

    def __init__(self, players: int, mode: str, scenario: int) -> None:
        self.players, self.mode, self.scenario = players, mode, scenario
        self.data = data = GameConfig(num_players=players, mode=mode).data
        self.legends = sorted(k for k, b in data.boards.items() if b.side == "legend")
        self.num_plots, self.num_partners = data.num_plots, data.num_partners
        self._configs: dict[tuple[int | None, tuple[str, ...] | None], GameConfig] = {}
        self._seeds: dict[tuple[int, ...], int] = {}

    def __deepcopy__(self, memo: dict[int, object]) -> _Tables:
        return self  # OpenSpiel clones a state by deep-copying its attributes: share this one

    def __reduce__(self) -> tuple[type[_Tables], tuple[object, ...]]:
        return _Tables, (self.players, self.mode, self.scenario)

    def config(self, scenario: int | None, boards: tuple[str, ...] | None) -> GameConfig:
        """The engine config of one deal (made once: a config validates its data)."""
        key = (scenario, boards)
        if key not in self._configs:
            self._configs[key] = GameConfig(num_players=self.players, mode=self.mode,
                                            scenario=scenario, boards=boards)
        return self._configs[key]

    def seed_for(self, order: tuple[int, ...], config: GameConfig) -> int:
        """A seed whose engine game places rancheros in ``order`` (searched once, checked)."""
        if not self._seeds:
            wanted = math.factorial(self.players)
            for seed in itertools.count():
                first = tuple(Game(config, seed).setup_order[:self.players])
                self._seeds.setdefault(first, seed)
                if len(self._seeds) == wanted:
                    break
        return self._seeds[order]


def _tables(params: dict[str, Any]) -> _Tables:
    """Validated parameters; a bad one raises ValueError saying what is allowed."""
    unknown = sorted(set(params) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"{GAME_NAME}: unknown parameters {unknown}; allowed: {sorted(DEFAULTS)}")
    players, mode, scenario = (params.get(k, DEFAULTS[k]) for k in ("players", "mode", "scenario"))
    if type(players) is not int or players not in (2, 3, 4):
        raise ValueError(f"{GAME_NAME}: players must be 2, 3 or 4, got {players!r}")
    if mode not in MODES:
        raise ValueError(f"{GAME_NAME}: mode must be one of {MODES}, got {mode!r}")
    if type(scenario) is not int or scenario not in (0, *SCENARIOS):
        raise ValueError(f"{GAME_NAME}: scenario must be 0 (drawn by chance) or one of "
                         f"{sorted(SCENARIOS)}, got {scenario!r}")
    if scenario and mode != "legends":
        raise ValueError(f"{GAME_NAME}: scenario applies only to mode=legends; leave it 0")
    return _Tables(players, mode, scenario)


class MoonRiverGame(pyspiel.Game):
    """The OpenSpiel game ``python_moonriver``; see the module docstring."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**DEFAULTS, **(params or {})}
        t = self.tables = _tables(params)
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=max(t.num_plots, t.num_partners, len(t.legends),
                                    max(SCENARIOS) + 1, t.players),
            num_players=t.players, min_utility=LOSS, max_utility=WIN, utility_sum=None,
            max_game_length=MAX_GAME_LENGTH)
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> MoonRiverState:
        """The state before the setup's chance nodes."""
        return MoonRiverState(self)

    def max_chance_nodes_in_history(self) -> int:
        """Scenario, boards and setup order, then one node per plot and per partner at most."""
        t = self.tables
        return 1 + 2 * t.players + t.num_plots + t.num_partners

    def make_py_observer(self, iig_obs_type: Any = None,
                         params: dict[str, Any] | None = None) -> MoonRiverObserver:
        """The observer of tensors and strings (both kinds give the engine's observation)."""
        return MoonRiverObserver(iig_obs_type, params)


class MoonRiverState(pyspiel.State):
    """A state of ``python_moonriver``: ``engine`` (read-only; None in setup) and pending chance."""

    def __init__(self, game: MoonRiverGame) -> None:
        super().__init__(game)
        t = self._tables = game.tables
        self.engine: Game | None = None
        # Chance nodes still to come, by kind, and the outcomes chosen since the last decision.
        self._queue: list[str] = (["scenario"] * (t.mode == "legends" and not t.scenario)
                                  + ["board"] * (t.players if t.mode == "legends" else 0)
                                  + ["seat"] * t.players
                                  + ["pile"] * SALOON_SLOTS + ["box"] * COLUMN_SIZE)
        self._drawn: list[tuple[str, int]] = []
        self._pending = -1  # the decision waiting for its draws
        self._skip_forced()

    def _dealt(self) -> Game:
        """The engine's game, once the set-up's chance nodes are all chosen."""
        if self.engine is None:
            raise RuntimeError("the set-up's chance outcomes are still to be chosen")
        return self.engine

    # ----------------------------------------------------------- OpenSpiel API
    def current_player(self) -> int:
        """The engine's player to act, CHANCE while draws are pending, TERMINAL at the end."""
        if self._queue:
            chance: int = pyspiel.PlayerId.CHANCE  # an IntEnum member
            return chance
        game = self._dealt()
        if game.is_over:
            terminal: int = pyspiel.PlayerId.TERMINAL
            return terminal
        return game.current_player

    def _legal_actions(self, player: int) -> list[int]:
        """The engine's legal action ids, ascending."""
        ids: list[int] = self._dealt().legal_action_ids().tolist()
        return ids

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """Each outcome of the next chance node with its probability (uniform)."""
        outcomes = self._outcomes(self._queue[0])
        p = 1.0 / len(outcomes)
        return [(o, p) for o in outcomes]

    def _apply_action(self, action: int) -> None:
        if self._queue:
            kind = self._queue[0]
            if action not in self._outcomes(kind):
                raise ValueError(f"chance outcome {action} is not possible now; possible: "
                                 f"{self._outcomes(kind)}")
            self._queue.pop(0)
            self._drawn.append((kind, int(action)))
            self._skip_forced()
            if not self._queue:
                self._deal() if self.engine is None else self._carry_out()
            return
        game = self._dealt()
        box, pile = len(game.box), len(game.pile)
        if not _may_draw(game):
            game.apply(int(action))  # raises IllegalActionError naming the legal actions
            if (len(game.box), len(game.pile)) != (box, pile):
                raise RuntimeError(f"{ActionCodec.to_text(int(action))} drew from the box or "
                                   "the pile, which only the end of a round or setup does")
            return
        probe = game.clone()  # how many plots and partners does this decision draw?
        probe.apply(int(action))
        plots, partners = box - len(probe.box), pile - len(probe.pile)
        if not plots and not partners:
            self.engine = probe
            return
        self._pending = int(action)
        self._queue = ["box"] * plots + ["pile"] * partners

    def _action_to_string(self, player: int, action: int) -> str:
        if player != pyspiel.PlayerId.CHANCE:
            return ActionCodec.to_text(int(action))
        kind = self._queue[0] if self._queue else None
        t = self._tables
        if kind == "scenario":
            return f"scenario {action}: {SCENARIOS[action].name}"
        if kind == "board":
            return f"player {len(self._chosen('board'))} plays {t.legends[action]}"
        if kind == "seat":
            return f"setup order {len(self._chosen('seat')) + 1}: player {action}"
        if kind == "pile":
            return f"partner {action} ({t.data.partner_specialists[action].name.lower()}) drawn"
        if kind == "box":
            plot_kind = t.data.kinds[int(t.data.plot_kind[action])]
            return f"plot {action} ({plot_kind.describe()} #{plot_kind.number}) drawn"
        return f"chance outcome {action}"

    def is_terminal(self) -> bool:
        """True once the engine game is over."""
        return not self._queue and self._dealt().is_over

    def returns(self) -> list[float]:
        """+1 to each winner and -1 to the others at the end (moonriver_v0's ``win``), else 0."""
        if not self.is_terminal():
            return [0.0] * self._tables.players
        return win_returns(self._dealt())

    def __str__(self) -> str:
        """The table (or the setup so far) and the chance outcomes pending."""
        lines = []
        if self.engine is not None:
            lines.append(self.engine.table_text())
        if self._pending >= 0:
            lines.append(f"drawing for: {ActionCodec.to_text(self._pending)}")
        if self._drawn or self._queue:
            lines.append("drawn: " + " ".join(f"{k}={o}" for k, o in self._drawn)
                         + " - to draw: " + " ".join(self._queue))
        return "\n".join(lines)

    # ---------------------------------------------------------------- chance
    def _chosen(self, kind: str) -> list[int]:
        return [o for k, o in self._drawn if k == kind]

    def _outcomes(self, kind: str) -> list[int]:
        """The possible outcomes of a chance node of this kind now, ascending."""
        t = self._tables
        if kind == "scenario":
            return sorted(SCENARIOS)
        if self.engine is None:  # the setup: the boards, seats, partners or plots not chosen
            sizes = {"board": len(t.legends), "seat": t.players, "pile": t.num_partners,
                     "box": t.num_plots}
            held: range | list[int] = range(sizes[kind])
        else:  # a decision's draws, from the pile or the box as it is
            held = self.engine.pile if kind == "pile" else self.engine.box
        return sorted(set(held) - set(self._chosen(kind)))

    def _skip_forced(self) -> None:
        """Take the single outcome of setup nodes that have one (last board, last seat)."""
        while self._queue and self._queue[0] in ("board", "seat"):
            left = self._outcomes(self._queue[0])
            if len(left) > 1:
                return
            self._drawn.append((self._queue.pop(0), left[0]))

    def _deal(self) -> None:
        """Set up the engine game from the setup's chance outcomes."""
        t = self._tables
        scenario = (self._chosen("scenario") or [t.scenario])[0] if t.mode == "legends" else None
        boards = tuple(t.legends[i] for i in self._chosen("board")) or None
        config = t.config(scenario, boards)
        first = tuple(self._chosen("seat"))
        order = [first[0], first[1], first[1], first[0]] if t.players == 2 else list(first)
        self.engine = Game(config, t.seed_for(first, config),
                           first_draws={"pile": self._chosen("pile"), "box": self._chosen("box")})
        if self.engine.setup_order != order:
            raise RuntimeError(f"the engine placed rancheros in order {self.engine.setup_order}, "
                               f"not the chosen {order}")
        self._drawn = []

    def _carry_out(self) -> None:
        """Apply the pending decision, its draws being the chosen outcomes."""
        game = self._dealt()
        plots, partners = self._chosen("box"), self._chosen("pile")
        box, pile = len(game.box), len(game.pile)
        game.set_next_draws("box", plots)
        game.set_next_draws("pile", partners)
        game.apply(self._pending)
        if (box - len(game.box), pile - len(game.pile)) != (len(plots), len(partners)):
            raise RuntimeError("the decision drew other plots or partners than its chance nodes")
        self._pending = -1
        self._drawn = []


class MoonRiverObserver:
    """OpenSpiel observer: the engine's observation as named tensors (zeros during setup)."""

    def __init__(self, iig_obs_type: Any = None, params: dict[str, Any] | None = None) -> None:
        if params:
            raise ValueError(f"{GAME_NAME} observers take no parameters, got {params}")
        self.perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        self.tensor = np.zeros(OBSERVATION_SIZE, np.float32)
        self.dict = {name: self.tensor[v.start:v.stop].reshape(v.shape)
                     for name, v in sorted(VIEWS.items(), key=lambda kv: kv[1].start)}
        self._encoder = ObservationEncoder()

    def set_from(self, state: MoonRiverState, player: int) -> None:
        """Write ``player``'s observation of ``state`` into ``tensor``."""
        if state.engine is None:
            self.tensor.fill(0.0)
        else:
            self._encoder.encode(state.engine, player, out=self.tensor)

    def string_from(self, state: MoonRiverState, player: int) -> str:
        """The table (observation) or the history of actions (information state)."""
        if self.perfect_recall:  # with nothing hidden, the history is the information state
            return f"player {player}: " + " ".join(map(str, state.history()))
        return str(state)


def _may_draw(game: Game) -> bool:
    """Whether a decision now may draw plots or partners (setup, select, or the last round)."""
    return game.phase in (Phase.SETUP, Phase.SELECT) or (game.last_round and not game.emptying)


def engine_game(state: pyspiel.State) -> Game:
    """The engine game of a ``python_moonriver`` state (set up: not at a setup chance node)."""
    game = getattr(state, "engine", None)
    if not isinstance(game, Game):
        raise ValueError("not a python_moonriver state past its setup chance nodes")
    return game


pyspiel.register_game(_GAME_TYPE, MoonRiverGame)
