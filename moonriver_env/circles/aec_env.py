"""Circles: Far West as a PettingZoo AEC environment (``circles_far_west_v0``).

| | |
|---|---|
| Import | `from moonriver_env import circles_far_west_v0` |
| Agents | `player_0 .. player_{n-1}` (n = 2 to 5) |
| Actions | `Discrete(87)` for the Far West ring, for every player count (docs/circles.md) |
| Observations | `Dict(observation=Box(0, 4, (368,), f32), action_mask=Box(0, 1, (87,), i8))` |
| State | `state()`: the observation of player_0 (absolute frame), same shape |

**Agents and seats.** `player_i` is engine player `i`; the first player is drawn from the
seeded generator and turns go clockwise (player ids ascending). A turn is one or more steps of
its owner (flick, train tickets, the space's choice); a saloon bet adds steps of other players
(stake or fold, contest throws), so ``agent_selection`` is whoever decides now.

**Observation.** A flat float32 vector of named views (`env.observation_views`,
docs/circles_observation.md), players relative to the viewer. `action_mask` opens the legal
actions of the agent to act; it is all zeros for every other agent and once the game is over.

**Rewards**, when the game ends: +1 to a sole winner (the ranch buyer, or the richest in money
plus deposit at the turn cap), -1 to every other player; a shared win (turn cap, equal wealth)
gives its winners 0 and the others -1.

**Illegal actions.** `raw_env` raises `IllegalActionError` (state unchanged). `env()` wraps it
the PettingZoo way: `TerminateIllegalWrapper` (the offender gets -1, the game ends),
`AssertOutOfBoundsWrapper`, `OrderEnforcingWrapper`.

**Options.** `num_players` (2-5), every other `CirclesConfig` field (layout, skill model,
starting capital, turn cap, ...), `render_mode` ("ansi", "rgb_array", "human": prints the ansi
text). `env.game_record()` is the engine's JSON record of the game; while it runs the seed is
left out (it would foretell the chance to come) unless `game_record(include_seed=True)`.

Version history: v0 (0.1.0) first release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from moonriver_env.circles import CirclesConfig, CirclesGame
from moonriver_env.circles.observation import ObservationEncoder
from moonriver_env.common.aec import TableAECEnv
from moonriver_env.common.validate import action_id, check_seed
from moonriver_env.common.wrappers import stock_chain

ILLEGAL_REWARD = -1.0
RENDER_MODES = ["ansi", "rgb_array", "human"]


def env(**kwargs: Any) -> AECEnv:
    """The environment with PettingZoo's standard wrappers (an illegal move ends the game)."""
    try:
        aec = raw_env(**kwargs)
    except (ValueError, TypeError) as exc:  # a bad argument: raised from the caller's call
        raise exc.with_traceback(None) from None
    return stock_chain(aec, ILLEGAL_REWARD)


class raw_env(TableAECEnv[CirclesGame]):  # lower-case name: the PettingZoo convention
    """Circles: Far West AEC environment without wrappers; see the module docstring."""

    metadata = {"name": "circles_far_west_v0", "render_modes": RENDER_MODES,
                "is_parallelizable": False, "render_fps": 2}

    def __init__(self, num_players: int = 4, render_mode: str | None = None,
                 **config: Any) -> None:
        super().__init__()
        try:  # a bad argument is raised from here, the caller's own call
            self.config = CirclesConfig(num_players=num_players, **config)
        except (ValueError, TypeError) as exc:
            raise exc.with_traceback(None) from None
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or one of {RENDER_MODES}, "
                             f"got {render_mode!r}")
        self.render_mode = render_mode
        self.encoder = ObservationEncoder(self.config)
        probe = CirclesGame(self.config, seed=0)
        self.num_actions = probe.num_actions
        self.codec = probe.codec
        self._init_table(num_players, self.encoder.views, self.encoder.size,
                         self.encoder.high, self.num_actions)
        self._no_moves = np.zeros(self.num_actions, dtype=np.int8)
        self._no_moves.flags.writeable = False
        self.game: CirclesGame | None = None

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game; a seed reseeds the env's generator, which seeds every game."""
        seed = check_seed(seed)
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self._start_episode(
            CirclesGame(self.config, seed=int(self.np_random.integers(2**63 - 1))))

    def step(self, action: int | None) -> None:
        """Play the selected agent's action (None for an agent that is done)."""
        game = self._deciding_game(action)
        if game is None:
            return
        agent = self.agent_selection
        self._cumulative_rewards[agent] = 0.0
        # a value that is not an integer id raises IllegalActionError, state unchanged
        game.apply(action_id(action, self.num_actions))
        for a in self.agents:
            self.rewards[a] = 0.0
        if game.is_over:
            for p, r in enumerate(game.returns()):
                self.rewards[self.possible_agents[p]] = r
            self.terminations = dict.fromkeys(self.agents, True)
            winners = [self.possible_agents[w] for w in game.winners()]
            self.infos = {a: {"wealth": game.wealth(self.agent_ids[a]), "winners": winners,
                              "end_reason": game.end_reason} for a in self.agents}
        else:
            self.agent_selection = self.possible_agents[game.current_player]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _table_image(self, game: CirclesGame) -> np.ndarray:
        from moonriver_env.circles.image import table_image

        return table_image(game)
