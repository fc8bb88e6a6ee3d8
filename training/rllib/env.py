"""Moon River for RLlib: a batch of games in the compiled core per env runner, or PettingZoo.

See docs/rllib.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from moonriver_env.training.rllib import BATCHED_OPPONENTS
from pettingzoo.utils import BaseWrapper
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.env.vector.vector_multi_agent_env import VectorMultiAgentEnv

from moonriver_env import moonriver_v0
from moonriver_env.moonriver.observation import LazyObservation

ENV_NAME = "moonriver_v0"
ENV_KEYS = ("num_players", "mode", "reward", "shaping", "auto_forced")


class SeatedOpponents(BaseWrapper):
    """An AEC wrapper in which fixed opponents play some seats; only the other seats are agents."""

    def __init__(self, env: Any, opponents: Sequence[str], opponent_prob: float = 0.5,
                 seed: int | None = None) -> None:
        from moonriver_env.agents.registry import make_agent

        super().__init__(env)
        if not opponents:
            raise ValueError("SeatedOpponents needs at least one opponent spec")
        if not 0.0 <= opponent_prob <= 1.0:
            raise ValueError(f"opponent_prob must be in [0, 1], got {opponent_prob!r}")
        self.specs = list(opponents)
        self.opponent_prob = float(opponent_prob)
        self.rng = np.random.default_rng(seed)
        seats = len(env.possible_agents)
        self.pool = {(spec, s): make_agent(spec) for spec in self.specs for s in range(seats)}
        self.seated: dict[str, Any] = {}  # agent id -> opponent playing that seat this game

    @property
    def agents(self) -> list[str]:
        """Learning seats still in the game (opponent seats are hidden)."""
        return [a for a in self.env.agents if a not in self.seated]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game: draw the opponent seats, then play until a learning seat is to act."""
        if seed is not None:
            self.rng = np.random.default_rng([seed, 1])
        self.env.reset(seed=seed, options=options)
        ids = list(self.env.possible_agents)
        chosen = [a for a in ids if self.rng.random() < self.opponent_prob]
        if len(chosen) == len(ids):
            chosen.pop(int(self.rng.integers(len(chosen))))
        self.seated = {}
        for a in chosen:
            spec = self.specs[int(self.rng.integers(len(self.specs)))]
            agent = self.pool[(spec, ids.index(a))]
            agent.reset(int(self.rng.integers(2**31)))
            self.seated[a] = agent
        self._play_opponents()

    def step(self, action: Any) -> None:
        """Play a learning seat's action, then every opponent move up to the next learning seat."""
        self.env.step(action)
        self._play_opponents()

    def _play_opponents(self) -> None:
        raw = self.env.unwrapped
        while self.env.agents and self.env.agent_selection in self.seated:
            agent_id = self.env.agent_selection
            if self.env.terminations[agent_id] or self.env.truncations[agent_id]:
                self.env.step(None)
                continue
            game = raw.game
            observation = LazyObservation(raw.encoder, game, raw.agent_ids[agent_id])
            self.env.step(self.seated[agent_id].act(game, observation))


def make_aec_env(env_config: Mapping[str, Any]) -> Any:
    """The PettingZoo AEC env for an RLlib env config, with fixed opponents when asked for."""
    kwargs = {k: env_config[k] for k in ENV_KEYS if k in env_config}
    aec = moonriver_v0.env(**kwargs)
    opponents = list(env_config.get("opponents", ()))
    if not opponents:
        return aec
    worker = int(getattr(env_config, "worker_index", 0))
    vector = int(getattr(env_config, "vector_index", 0))
    seed = [int(env_config.get("seed", 0)), worker, vector]
    return SeatedOpponents(aec, opponents, float(env_config.get("opponent_prob", 0.5)),
                           seed=np.random.SeedSequence(seed).generate_state(1)[0])


def make_rllib_env(env_config: Mapping[str, Any]) -> Any:
    """RLlib's PettingZooEnv around the Moon River AEC env (the env creator RLlib calls)."""
    import torch
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    # RLlib calls this in every env runner: set its torch threads there
    torch.set_num_threads(int(env_config.get("torch_threads", 1)))
    aec = make_aec_env(env_config)
    env = PettingZooEnv(aec)
    # PettingZooEnv reads the seats from the first game's agents; with fixed opponents those
    # are only that game's learning seats, so declare every seat (any may learn next game).
    env.possible_agents = list(aec.possible_agents)
    observation_spaces = {a: aec.observation_space(a) for a in aec.possible_agents}
    action_spaces = {a: aec.action_space(a) for a in aec.possible_agents}
    env.observation_spaces = {**observation_spaces}
    env.action_spaces = {**action_spaces}
    env.observation_space = gymnasium.spaces.Dict(observation_spaces)
    env.action_space = gymnasium.spaces.Dict(action_spaces)
    return env


def register() -> None:
    """Register the env creator with Ray Tune's registry under ``moonriver_v0``."""
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_rllib_env)


# ----------------------------------------------------------------------------- batched core
def draw_seats(num_envs: int, num_players: int, opponents: Sequence[str],
               opponent_prob: float, rng: np.random.Generator) -> list[tuple[str, ...]]:
    """Each game slot's seat kinds, drawn as :class:`SeatedOpponents` draws a game's (kept)."""
    out = []
    for _ in range(num_envs):
        seats = ["learner"] * num_players
        if opponents:
            chosen = [p for p in range(num_players) if rng.random() < opponent_prob]
            if len(chosen) == num_players:
                chosen.pop(int(rng.integers(len(chosen))))
            for p in chosen:
                seats[p] = opponents[int(rng.integers(len(opponents)))]
        out.append(tuple(seats))
    return out


def check_batched(env_config: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` unless the batched core can play this env config."""
    bad = [s for s in env_config.get("opponents", ()) if s not in BATCHED_OPPONENTS]
    if bad:
        raise ValueError(f"the batched env plays only the core's built-in opponents "
                         f"{list(BATCHED_OPPONENTS)}, got {bad[0]!r} (env_backend "
                         f"'pettingzoo' plays any agent spec)")


def _obs(obs: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
    return {"observation": obs, "action_mask": mask}


class _SeatSpaces(MultiAgentEnv):
    """The agent ids and spaces of one game, for RLlib's per-env lookups (never stepped)."""

    def __init__(self, observation_space: gymnasium.Space[object],
                 action_space: gymnasium.Space[object],
                 agents: Sequence[str]) -> None:
        super().__init__()
        self.possible_agents = list(agents)
        self.agents = list(agents)
        self.observation_spaces = dict.fromkeys(agents, observation_space)
        self.action_spaces = dict.fromkeys(agents, action_space)


class BatchedMoonRiverEnv(VectorMultiAgentEnv):
    """``num_envs`` games of Moon River in the compiled core, as RLlib's vector multi-agent env."""

    def __init__(self, num_envs: int, env_config: Mapping[str, Any]) -> None:
        from moonriver_env.moonriver.batch.multiagent import MultiAgentGames
        from moonriver_env.moonriver.rules import GameConfig

        super().__init__()
        check_batched(env_config)
        kwargs = {k: env_config[k] for k in ENV_KEYS if k in env_config}
        probe = moonriver_v0.raw_env(**kwargs)  # validates the options, gives the spaces
        self.config = GameConfig(num_players=probe.config.num_players, mode=probe.config.mode,
                                 auto_forced=probe.config.auto_forced)
        n = self.config.num_players
        self.agent_ids = list(probe.possible_agents)
        self.shaping = float(kwargs.get("shaping", 0.0))
        self.reward_mode = kwargs.get("reward", "win")
        self.num_envs = int(num_envs)
        self.worker_index = int(getattr(env_config, "worker_index", 0) or 0)
        self.config_seed = int(env_config.get("seed", 0))
        obs_space = probe.observation_space(self.agent_ids[0])
        assert isinstance(obs_space, gymnasium.spaces.Dict)  # observation and action mask
        act_space = probe.action_space(self.agent_ids[0])
        self.single_observation_spaces = dict.fromkeys(self.agent_ids, obs_space)
        self.single_action_spaces = dict.fromkeys(self.agent_ids, act_space)
        self.single_observation_space = gymnasium.spaces.Dict(self.single_observation_spaces)
        self.single_action_space = gymnasium.spaces.Dict(self.single_action_spaces)
        self.envs = [_SeatSpaces(obs_space, act_space, self.agent_ids)] * self.num_envs
        self.metadata = {"autoreset_mode": "next_step"}  # as RLlib's runner sees it

        rng = np.random.default_rng([self.config_seed, self.worker_index, 1])
        self.seats = seats = draw_seats(self.num_envs, n, list(env_config.get("opponents", ())),
                                        float(env_config.get("opponent_prob", 0.5)), rng)
        # the batch's own arrays (copy=False): only what RLlib keeps is copied, per step
        self.games = MultiAgentGames(self.num_envs, self.config, self.reward_mode, copy=False)
        self._per_game_seats = None if all(k == "learner" for s in seats for k in s) else seats
        obs_shape, mask_shape = obs_space["observation"].shape, obs_space["action_mask"].shape
        assert obs_shape is not None and mask_shape is not None  # Box spaces
        self._zero_obs = np.zeros(obs_shape, np.float32)
        self._zero_mask = np.zeros(mask_shape, np.int8)
        for a in (self._zero_obs, self._zero_mask):
            a.flags.writeable = False
        self._acc = np.zeros((self.num_envs, n), np.float64)  # rewards not yet handed over
        self._scores = np.zeros((self.num_envs, n), np.int64)  # running scores (shaping)
        self._to_act = np.zeros(self.num_envs, np.int64)
        self._pending: list[dict[str, Any] | None] = [None] * self.num_envs
        self._resets = 0

    # ------------------------------------------------------------------ helpers
    def _abs_scores(self, obs: np.ndarray, viewer: np.ndarray) -> np.ndarray:
        """Every player's running score, by player id, from observations seen by ``viewer``."""
        from moonriver_env.moonriver.observation import SCORE_SCALE, VIEWS

        n = self.config.num_players
        start = VIEWS["scores"].start
        rel = np.rint(obs[:, start:start + n] * SCORE_SCALE).astype(np.int64)
        out = np.empty_like(rel)
        np.put_along_axis(out, (viewer[:, None] + np.arange(n)) % n, rel, axis=1)
        return out

    # ---------------------------------------------------------------------- API
    # RLlib's runner hands and takes one entry per env (its hints say one array).
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None  # type: ignore[override]
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Start a game in every slot."""
        super().reset(seed=seed)
        # one base seed from seed, the config's seed and the worker; slot g then plays the core
        # games base + g + num_envs * k (k = 0, 1, ...: episode_seed)
        key = [self.config_seed, self.worker_index,
               (2**32 + self._resets) if seed is None else int(seed)]
        self._resets += 1
        base = int(np.random.SeedSequence(key).generate_state(1, np.uint64)[0])
        state = self.games.reset(base >> 3, seats=self._per_game_seats)  # + g + n * k < 2**63
        player = state.current_player.astype(np.int64)
        obs, mask = state.observation.copy(), state.legal_action_mask.view(np.int8).copy()
        self._acc[:] = 0.0
        if self.shaping:
            self._scores = self._abs_scores(obs, player)
        self._to_act = player
        self._pending = [None] * self.num_envs
        ids = self.agent_ids
        return ([{ids[p]: _obs(obs[i], mask[i])}
                 for i, p in enumerate(player.tolist())], [{} for _ in range(self.num_envs)])

    def step(self, actions: list[dict[str, Any]]  # type: ignore[override]  # as reset's
             ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]],
                        list[dict[str, Any]], list[dict[str, Any]]]:
        """One decision per game: ``actions[i]`` is ``{agent_id: action id}`` for env i's mover."""
        if len(actions) != self.num_envs:
            raise ValueError(f"need {self.num_envs} action dicts, got {len(actions)}")
        ids = self.agent_ids
        acts = np.empty(self.num_envs, np.int64)
        for i, (action, p) in enumerate(zip(actions, self._to_act.tolist(), strict=True)):
            if len(action) != 1 or ids[p] not in action:
                raise ValueError(f"env {i}: expected an action of {ids[p]!r} only, got "
                                 f"{sorted(action)} (an ended game's next one must be taken "
                                 f"with take_reset, as BatchedEnvRunner does)")
            acts[i] = action[ids[p]]
        state = self.games.step(acts)
        mover = self._to_act
        player = state.current_player.astype(np.int64)
        obs, mask = state.observation.copy(), state.legal_action_mask.view(np.int8).copy()
        done = state.terminated
        step_rewards = state.rewards.astype(np.float64)
        ended = np.flatnonzero(done)
        final_obs = state.final_observation  # the batch's own: only ended rows are copied
        if self.shaping:
            now = self._abs_scores(obs, player)
            if ended.size:
                now[ended] = self._abs_scores(final_obs[ended], mover[ended])
            step_rewards += self.shaping * (now - self._scores) / 100.0
            if ended.size:
                now[ended] = self._abs_scores(obs[ended], player[ended])  # the new games
            self._scores = now
        self._acc += step_rewards
        self._to_act = player
        acc = self._acc
        out_obs: list[dict[str, Any]] = []
        out_rew: list[dict[str, float]] = []
        out_term: list[dict[str, bool]] = []
        out_info: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        done_list = done.tolist()
        for i, p in enumerate(player.tolist()):
            if not done_list[i]:
                aid = ids[p]
                out_obs.append({aid: _obs(obs[i], mask[i])})
                out_rew.append({aid: float(acc[i, p])})
                acc[i, p] = 0.0
                out_term.append({aid: False, "__all__": False})
                continue
            # only the mover's view of the ended game exists: the other seats' final obs are zeros
            m = int(mover[i])
            out_obs.append({a: {"observation": final_obs[i].copy() if q == m else self._zero_obs,
                                "action_mask": self._zero_mask} for q, a in enumerate(ids)})
            out_rew.append({a: float(acc[i, q]) for q, a in enumerate(ids)})
            acc[i] = 0.0
            out_term.append({**dict.fromkeys(ids, True), "__all__": True})
            self._pending[i] = {ids[p]: _obs(obs[i], mask[i])}
        out_trunc = [dict.fromkeys(term, False) for term in out_term]  # no game is cut short
        return out_obs, out_rew, out_term, out_trunc, out_info

    def take_reset(self, env_index: int) -> dict[str, Any] | None:
        """The first observation of the game that replaced env ``env_index``'s ended one, if any."""
        pending, self._pending[env_index] = self._pending[env_index], None
        return pending

    def episode_seed(self, env_index: int) -> int:
        """The core seed of the game env ``env_index`` is playing (``core.Game(config, s)``)."""
        if not 0 <= env_index < self.num_envs:
            raise ValueError(f"env_index must be in 0..{self.num_envs - 1}, got {env_index}")
        return self.games.episode_seed(env_index)


class BatchedEnvRunner(MultiAgentEnvRunner):
    """RLlib's ``MultiAgentEnvRunner`` on a :class:`BatchedMoonRiverEnv` (``env_runner_cls``)."""

    def make_env(self) -> None:
        """Build the batched env of this runner's games."""
        import torch
        from ray.rllib.callbacks.utils import make_callback
        from ray.rllib.env.env_context import EnvContext

        if self.env is not None:
            self.env.close()
        env_ctx = self.config.env_config
        if not isinstance(env_ctx, EnvContext):
            env_ctx = EnvContext(env_ctx, worker_index=self.worker_index,
                                 num_workers=self.config.num_env_runners)
        torch.set_num_threads(int(env_ctx.get("torch_threads", 1)))
        self.env = BatchedMoonRiverEnv(self.config.num_envs_per_env_runner, env_ctx)
        self.num_envs = self.env.num_envs
        self._needs_initial_reset = True
        make_callback("on_environment_created", callbacks_objects=self._callbacks,
                      callbacks_functions=self.config.callbacks_on_environment_created,
                      kwargs={"env_runner": self, "metrics_logger": self.metrics,
                              "env": self.env, "env_context": env_ctx})

    def _sample(self, **kwargs: Any) -> list[MultiAgentEpisode]:
        # RLlib logs six counters per env step; they are summed here and logged once per
        # sample() (the same totals: every one is a sum or a lifetime sum).
        self._step_counts: dict[Any, int] = {}
        try:
            return super()._sample(**kwargs)
        finally:
            self._log_step_counts()

    def _increase_sampled_metrics(self, num_steps: int, next_obs: Mapping[str, Any],
                                  episode: Any) -> int:
        counts = self._step_counts
        counts[None] = counts.get(None, 0) + num_steps
        if episode.is_done:
            counts[True] = counts.get(True, 0) + 1
        for aid in next_obs:
            key = (str(aid), episode.module_for(aid))
            counts[key] = counts.get(key, 0) + 1
        return num_steps

    def _log_step_counts(self) -> None:
        from ray.rllib.utils import metrics as M

        counts, self._step_counts = self._step_counts, {}
        log = self.metrics.log_value
        if counts.get(None):
            log(M.NUM_ENV_STEPS_SAMPLED, counts[None], reduce="sum")
            log(M.NUM_ENV_STEPS_SAMPLED_LIFETIME, counts[None], reduce="lifetime_sum",
                with_throughput=True)
        if counts.get(True):
            log(M.NUM_EPISODES, counts[True], reduce="sum")
            log(M.NUM_EPISODES_LIFETIME, counts[True], reduce="lifetime_sum")
        modules: dict[Any, int] = {}
        for key, count in counts.items():
            if isinstance(key, tuple):
                log((M.NUM_AGENT_STEPS_SAMPLED, key[0]), count, reduce="sum")
                log((M.NUM_AGENT_STEPS_SAMPLED_LIFETIME, key[0]), count, reduce="lifetime_sum")
                modules[key[1]] = modules.get(key[1], 0) + count
        for module, count in modules.items():
            log((M.NUM_MODULE_STEPS_SAMPLED, module), count, reduce="sum")
            log((M.NUM_MODULE_STEPS_SAMPLED_LIFETIME, module), count, reduce="lifetime_sum")

    def _reset_envs(self, episodes: list[MultiAgentEpisode | None], shared_data: Any,
                    explore: bool) -> None:
        env = self.env
        assert isinstance(env, BatchedMoonRiverEnv)  # this runner's env
        for i in range(self.num_envs):  # a full reset starts every game anew
            env.take_reset(i)
        super()._reset_envs(episodes, shared_data, explore)

    def _new_episode(self, env_index: int,
                     episodes: list[MultiAgentEpisode | None] | None = None) -> None:
        super()._new_episode(env_index, episodes)
        # the core replaced the ended game in the same step: start the episode with its first
        # observation at once, so that every game gets an action at every step
        # Any: RLlib's (untyped) _new_episode has just put a MultiAgentEpisode at env_index.
        ongoing: list[Any] = episodes if episodes is not None else self._ongoing_episodes
        env = self.env
        first = env.take_reset(env_index) if isinstance(env, BatchedMoonRiverEnv) else None
        if first is not None:
            ongoing[env_index].add_env_reset(observations=first, infos={})
            self._make_on_episode_callback("on_episode_start", env_index, ongoing)
