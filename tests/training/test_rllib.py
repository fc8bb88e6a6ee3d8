"""RLlib self-play training: masking module, env adapter, CLI errors, train/resume/evaluate."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
torch = pytest.importorskip("torch")

from moonriver_env.training import evaluate  # noqa: E402
from moonriver_env.training.rllib import train as rllib_train  # noqa: E402
from moonriver_env.training.rllib.env import (  # noqa: E402
    BatchedEnvRunner,
    BatchedMoonRiverEnv,
    SeatedOpponents,
    make_rllib_env,
)

from moonriver_env import moonriver_v0  # noqa: E402
from tests.helpers import HANG_GUARD, ctrl_c_as_in_a_terminal  # noqa: E402

CLI = [sys.executable, "-m", "moonriver_env.training.rllib.train"]
TINY = ["--train-batch-size", "128", "--minibatch-size", "64", "--num-epochs", "1",
        "--net-arch", "32", "--eval-every", "0", "--num-env-runners", "1"]


@pytest.fixture(autouse=True)
def _one_torch_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def _run(cmd: list[str], timeout: float, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                          **kwargs)


def _module(num_players: int = 3):
    from moonriver_env.training.rllib.module import MaskedPPOTorchRLModule
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    env = moonriver_v0.env(num_players=num_players)
    spec = RLModuleSpec(module_class=MaskedPPOTorchRLModule,
                        observation_space=env.observation_space("player_0"),
                        action_space=env.action_space("player_0"),
                        model_config=DefaultModelConfig(fcnet_hiddens=[32]))
    return spec.build()


def test_masking_module_never_samples_an_illegal_action():
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import (
        DefaultPPOTorchRLModule,
    )
    from ray.rllib.core.columns import Columns

    torch.manual_seed(0)
    module = _module()
    last = [m for m in module.pi.modules() if isinstance(m, torch.nn.Linear)][-1]
    with torch.no_grad():  # peaked logits on arbitrary actions: unmasked, mostly illegal
        last.bias.copy_(torch.randn(last.bias.shape) * 20)
    dist_cls = module.get_exploration_action_dist_cls()
    env = make_rllib_env({"num_players": 3})
    obs, _ = env.reset(seed=0)
    steps = unmasked_illegal = 0
    while steps < 1500:
        (agent, o), = obs.items()
        legal = o["action_mask"].astype(bool)
        batch = {Columns.OBS: {k: torch.tensor(v)[None] for k, v in o.items()}}
        with torch.no_grad():
            logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
            raw = DefaultPPOTorchRLModule._forward(  # the same module without its mask
                module, {Columns.OBS: torch.tensor(o["observation"])[None]}
            )[Columns.ACTION_DIST_INPUTS]
        actions = dist_cls.from_logits(logits).sample(sample_shape=(8,)).flatten().numpy()
        assert legal[actions].all(), f"illegal action sampled at step {steps}"
        unmasked_illegal += int(not legal[int(raw.argmax())])
        obs, _, term, _, _ = env.step({agent: int(actions[0])})
        steps += 1
        if term["__all__"]:
            obs, _ = env.reset()
    assert unmasked_illegal > 0.9 * steps  # without the mask the module would play illegally


def test_env_runner_samples_only_legal_actions_through_rllib():
    """RLlib's own sampling path (connectors, module, action sampling) on an env that raises."""
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.tune.registry import register_env

    register_env("moonriver_strict",
                 lambda c: PettingZooEnv(moonriver_v0.raw_env(num_players=c["num_players"])))
    cfg = rllib_train.RLlibTrainConfig(num_players=2, num_env_runners=0, net_arch=(32,),
                                       num_envs_per_env_runner=4, env_backend="pettingzoo",
                                       eval_every=0)
    config = rllib_train.build_config(cfg).environment(
        "moonriver_strict", env_config={"num_players": 2}, disable_env_checking=True)
    runner = MultiAgentEnvRunner(config=config)
    episodes = runner.sample(num_timesteps=1000, random_actions=False)
    assert sum(len(e) for e in episodes) >= 1000  # raw_env raises on any illegal action
    assert any(e.is_done for e in episodes)
    runner.stop()


def test_batched_env_plays_the_core_games_of_its_seeds():
    """Every env of the batch is the core game of its seed: the same observations, masks and
    shaped rewards (each seat's rewards sum to shaping x score change / 100 plus its final
    reward), the mover's view of the ended game, then the next seed's game."""
    from moonriver_env.moonriver.aec_env import final_rewards
    from moonriver_env.moonriver.backend import Encoder
    from moonriver_env.moonriver.core import Game as CoreGame
    from moonriver_env.moonriver.rules import GameConfig

    n, shaping = 3, 0.5
    env = BatchedMoonRiverEnv(5, {"num_players": n, "reward": "rank", "shaping": shaping,
                                  "seed": 7})
    config, encoder, ids = GameConfig(num_players=n), Encoder(), env.agent_ids
    obs, _ = env.reset(seed=11)
    games = [CoreGame(config, env.episode_seed(i)) for i in range(env.num_envs)]
    start = [[s.total for s in g.running_scores()] for g in games]
    got = np.zeros((env.num_envs, n))  # rewards handed to each seat this game
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(700):
        actions, movers = [], []
        for i, game in enumerate(games):
            (aid, o), = obs[i].items()
            p = game.current_player
            movers.append(p)
            assert aid == ids[p]
            np.testing.assert_array_equal(o["observation"], encoder.encode(game, p))
            np.testing.assert_array_equal(o["action_mask"], game.legal_mask())
            action = int(rng.choice(np.flatnonzero(game.legal_mask())))
            game.apply(action)
            actions.append({aid: action})
        obs, rewards, term, trunc, _ = env.step(actions)
        for i, game in enumerate(games):
            for aid, r in rewards[i].items():
                got[i, ids.index(aid)] += r
            assert not trunc[i]["__all__"]
            if not game.is_over:
                assert not term[i]["__all__"] and list(obs[i]) == [ids[game.current_player]]
                continue
            ended += 1
            assert term[i]["__all__"] and set(rewards[i]) == set(ids)
            final = [s.total for s in game.scores()]
            expected = [shaping * (final[q] - start[i][q]) / 100 + r
                        for q, r in enumerate(final_rewards(game, "rank"))]
            np.testing.assert_allclose(got[i], expected, atol=1e-9)
            views = [obs[i][a]["observation"] for a in ids]
            assert all(not o["action_mask"].any() for o in obs[i].values())
            assert [q for q, v in enumerate(views) if v.any()] == [movers[i]]
            np.testing.assert_array_equal(views[movers[i]], encoder.encode(game, movers[i]))
            seed = env.episode_seed(i)
            assert seed == games[i].seed + env.num_envs  # game g's next episode
            games[i] = CoreGame(config, seed)
            start[i] = [s.total for s in games[i].running_scores()]
            got[i] = 0.0
            obs[i] = env.take_reset(i)
            assert env.take_reset(i) is None
    assert ended >= 10


def test_batched_env_seats_core_opponents_per_slot():
    env = BatchedMoonRiverEnv(6, {"num_players": 4, "opponents": ["greedy", "random"],
                                  "opponent_prob": 1.0, "seed": 1})
    assert all(sorted(s).count("learner") == 1 for s in env.seats)  # one learner per slot
    learner = [env.agent_ids[s.index("learner")] for s in env.seats]
    obs, _ = env.reset(seed=0)
    finished = 0
    for _ in range(400):
        assert [next(iter(o)) for o in obs] == learner
        actions = [{a: int(np.flatnonzero(o[a]["action_mask"])[0])} for a, o in
                   zip(learner, obs, strict=True)]
        obs, rewards, term, _, _ = env.step(actions)
        for i in range(env.num_envs):
            if term[i]["__all__"]:
                finished += 1
                assert rewards[i][learner[i]] in (-1.0, 1.0)
                obs[i] = env.take_reset(i)
    assert finished >= 1
    with pytest.raises(ValueError, match=r"'mcts:5'.*pettingzoo"):
        BatchedMoonRiverEnv(2, {"num_players": 2, "opponents": ["mcts:5"]})


def test_batched_env_runner_samples_whole_games():
    """RLlib's sampling loop on the batched env: every game gets an action at every step
    (the core raises on anything illegal), ended games come back as done episodes."""
    cfg = rllib_train.RLlibTrainConfig(num_players=2, num_env_runners=0, net_arch=(32,),
                                       num_envs_per_env_runner=4, eval_every=0)
    runner = BatchedEnvRunner(config=rllib_train.build_config(cfg))
    episodes = []
    for _ in range(3):
        episodes += runner.sample(num_timesteps=600, random_actions=False)
    done = [e for e in episodes if e.is_done]
    assert sum(e.env_steps() for e in episodes) >= 1800 and len(done) >= 4
    for episode in done:
        returns = episode.get_return(), {a: sum(sa.get_rewards()) for a, sa in
                                         episode.agent_episodes.items()}
        assert sorted(returns[1]) == ["player_0", "player_1"]
        assert set(returns[1].values()) <= {-1.0, 1.0} and 1.0 in returns[1].values()
    runner.stop()


def test_batched_env_runner_counts_steps_as_rllib_does():
    """The runner sums its step counters over a sample() call; RLlib's own per-step logging
    gives the same totals on the same (seeded) sampling."""
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
    from ray.rllib.utils import metrics as m

    class PerStep(BatchedEnvRunner):
        _sample = MultiAgentEnvRunner._sample
        _increase_sampled_metrics = MultiAgentEnvRunner._increase_sampled_metrics

    keys = (m.NUM_ENV_STEPS_SAMPLED, m.NUM_ENV_STEPS_SAMPLED_LIFETIME, m.NUM_EPISODES,
            m.NUM_EPISODES_LIFETIME, m.NUM_AGENT_STEPS_SAMPLED,
            m.NUM_AGENT_STEPS_SAMPLED_LIFETIME, m.NUM_MODULE_STEPS_SAMPLED,
            m.NUM_MODULE_STEPS_SAMPLED_LIFETIME)
    cfg = rllib_train.RLlibTrainConfig(num_players=2, num_env_runners=0, net_arch=(32,),
                                       num_envs_per_env_runner=4, eval_every=0)
    totals = []
    for cls in (BatchedEnvRunner, PerStep):
        runner = cls(config=rllib_train.build_config(cfg))
        for _ in range(2):
            runner.sample(num_timesteps=500, random_actions=False)
        totals.append({k: runner.metrics.peek(k) for k in keys})
        runner.stop()
    assert totals[0][m.NUM_EPISODES_LIFETIME] >= 1
    assert totals[0] == totals[1]


def test_seated_opponents_hide_their_seats_and_play_them():
    env = make_rllib_env({"num_players": 4, "opponents": ["greedy", "random"],
                          "opponent_prob": 1.0, "seed": 3})
    assert env.possible_agents == [f"player_{p}" for p in range(4)]
    assert set(env.observation_spaces) == set(env.possible_agents)
    for game in range(3):
        obs, _ = env.reset(seed=game)
        seated = env.env.seated
        assert len(seated) == 3  # every seat but one, even with opponent_prob 1
        learner = next(a for a in env.possible_agents if a not in seated)
        while True:
            assert list(obs) == [learner]
            legal = np.flatnonzero(obs[learner]["action_mask"])
            obs, rewards, term, _, _ = env.step({learner: int(legal[0])})
            if term["__all__"]:
                assert list(rewards) == [learner] and rewards[learner] in (-1.0, 1.0)
                break
        assert env.env.unwrapped.game.is_over


def test_seated_opponents_draws_come_from_the_seed():
    def draws(seed: int) -> list[list[str]]:
        env = SeatedOpponents(moonriver_v0.env(num_players=4), ["greedy"], 0.5, seed=seed)
        out = []
        for game in range(6):
            env.reset(seed=seed * 100 + game)
            out.append(sorted(env.seated))
        return out

    assert draws(1) == draws(1)
    assert draws(1) != draws(2)


def test_unknown_opponent_is_refused_before_ray_starts(tmp_path):
    out = tmp_path / "run"
    code = ("import sys; from moonriver_env.training.rllib.train import main; "
            f"rc = main(['--opponents', 'greedy', 'bogus', '--out', {str(out)!r}]); "
            "print('ray imported' if 'ray' in sys.modules else 'no ray', rc)")
    proc = _run([sys.executable, "-c", code], timeout=HANG_GUARD)
    assert proc.stdout.split() == ["no", "ray", "2"]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "'bogus'" in lines[0] and "greedy" in lines[0]
    assert not out.exists()


def test_unreachable_address_is_refused_before_ray_starts(tmp_path):
    """Nothing listening at --address: one line from a socket probe, before Ray is imported
    (Ray's own connection attempts would retry for a minute or more)."""
    with socket.socket() as s:  # bound, never listening: refused, and no one else takes it
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        code = ("import sys; from moonriver_env.training.rllib.train import main; "
                f"rc = main(['--address', '127.0.0.1:{port}', '--out', "
                f"{str(tmp_path / 'run')!r}]); "
                "print('ray imported' if 'ray' in sys.modules else 'no ray', rc)")
        proc = _run([sys.executable, "-c", code], timeout=HANG_GUARD)
    assert proc.stdout.split() == ["no", "ray", "2"], proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("moonriver-train-rllib: error: no Ray cluster reachable at "
                               f"127.0.0.1:{port}")
    assert not (tmp_path / "run").exists()


def test_bad_settings_are_one_line_errors(tmp_path):
    for flags, words in ((["--num-players", "5"], "num_players"),
                         (["--minibatch-size", "0"], "minibatch_size"),
                         (["--train-batch-size", "64", "--minibatch-size", "32"],
                          "train_batch_size must exceed"),
                         (["--address", "nonsense"], "HOST:PORT"),
                         (["--opponents", "mcts:5"], "env_backend 'pettingzoo'"),
                         (["--env-backend", "gym"], "env_backend must be one of"),
                         (["--resume", str(tmp_path)], "no RLlib checkpoint")):
        proc = _run([*CLI, *flags, "--out", str(tmp_path / "run")], timeout=HANG_GUARD)
        assert proc.returncode == 2, flags
        assert len(proc.stderr.strip().splitlines()) == 1 and words in proc.stderr, proc.stderr


def test_train_interrupt_resume_and_evaluate(tmp_path):
    """Embedded Ray: Ctrl-C leaves a checkpoint, --resume continues, moonriver-eval plays it."""
    run = tmp_path / "run"
    train = subprocess.Popen(
        [*CLI, *TINY, "--num-players", "2", "--opponents", "greedy", "--iterations", "1000",
         "--checkpoint-every", "1000", "--out", str(run)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"}, preexec_fn=ctrl_c_as_in_a_terminal)
    lines = []
    for line in train.stdout:  # Ctrl-C once the second iteration is reported
        lines.append(line)
        if line.startswith("iteration=2 "):
            break
    train.send_signal(signal.SIGINT)
    rest, _ = train.communicate(timeout=HANG_GUARD)
    output = "".join(lines) + rest
    assert train.returncode == 0, output
    assert "new API stack" not in output and "RLModuleConfig" not in output  # RLlib's notices
    assert "max_restarts" not in output  # Ray's note on restartable actors: none locally
    saved = sorted(os.listdir(run / "checkpoints"))
    assert len(saved) == 1 and int(saved[0].removeprefix("iter_")) >= 2, output
    rows = [json.loads(r) for r in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == list(range(1, len(rows) + 1))
    assert all(r["env_steps"] >= 128 * r["iteration"] for r in rows)
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(run / "tb"))

    resumed = _run([*CLI, *TINY, "--num-players", "2", "--iterations", "1",
                    "--num-env-runners", "0",  # sampling in the driver: no actor to start
                    "--env-backend", "pettingzoo",  # the reference env resumes it too
                    "--eval-every", "1", "--eval-games", "1",  # a second runner in-process
                    "--resume", str(run), "--out", str(run)], timeout=HANG_GUARD)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert resumed.stderr == ""  # a local run prints nothing on stderr
    last = json.loads((run / "metrics.jsonl").read_text().splitlines()[-1])
    assert last["iteration"] == len(rows) + 1
    assert f"iter_{len(rows) + 1:06d}" in os.listdir(run / "checkpoints")

    results = []
    for name in ("eval_a", "eval_b"):  # moonriver-eval's entry point, in this process
        status = evaluate.main(["--agents", f"rllib:{run}", "greedy", "--players", "2",
                                "--games", "2", "--seed", "5", "--no-progress",
                                "--out", str(tmp_path / name)])
        assert status == 0
        results.append(json.loads((tmp_path / name / "results.json").read_text()))
    games = results[0]["games"]
    assert len(games) == 2 and all(len(g["scores"]) == 2 for g in games)
    assert results[0]["agents"][0]["name"] == f"rllib:{run}"
    assert results[0]["agents"][0]["games"] == 2
    assert games == results[1]["games"]  # seeded games and a deterministic agent: replayable

    from moonriver_env.agents.rllib_agent import RLlibAgent

    checkpoint = run / "checkpoints" / sorted(os.listdir(run / "checkpoints"))[-1]
    modules = checkpoint / "learner_group" / "learner" / "rl_module"
    env = moonriver_v0.env(num_players=2)
    env.reset(seed=3)
    obs = env.observe(env.agent_selection)
    logits = [RLlibAgent(str(p)).action_logits(obs)
              for p in (run, checkpoint, modules, modules / "shared")]
    for other in logits[1:]:  # every accepted path form loads the same module
        np.testing.assert_array_equal(other, logits[0])
    legal = obs["action_mask"].astype(bool)
    assert logits[0][legal].min() > logits[0][~legal].max() + 1e30


def test_missing_rllib_checkpoint_is_one_line_eval_error(tmp_path, capsys):
    status = evaluate.main(["--agents", f"rllib:{tmp_path}", "greedy", "--players", "2",
                            "--games", "1", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "no RLlib checkpoint" in err[0]


def test_config_file_loads_and_flags_override_it(tmp_path):
    import pathlib

    shipped = pathlib.Path(rllib_train.__file__).parents[1] / "configs" / "rllib_4p_base.toml"
    cfg = rllib_train.RLlibTrainConfig.load(str(shipped), {"num_env_runners": 2})
    assert (cfg.num_players, cfg.opponents, cfg.num_env_runners) == (4, ("greedy",), 2)
    env_config = cfg.env_config()
    assert env_config["opponents"] == ["greedy"] and env_config["opponent_prob"] == 0.25
    bad = tmp_path / "bad.toml"
    for text, words in (('num_players = "4"', "num_players must be an int"),
                        ('opponents = "greedy"', "opponents must be a list of strings"),
                        ("nope = 1", "unknown settings ['nope']"),
                        ("iterations = 0", "set iterations or max_minutes")):
        bad.write_text(text + "\n")
        with pytest.raises(rllib_train.UsageError, match=re.escape(words)):
            rllib_train.RLlibTrainConfig.load(str(bad), {})


def test_quiet_rllib_logs_drops_only_rllibs_notices_about_its_defaults():
    import logging

    from moonriver_env.training.rllib.logs import LOGGERS, quiet_rllib_logs

    quiet_rllib_logs()
    quiet_rllib_logs()  # idempotent: one filter per logger
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    for name in LOGGERS:
        logger = logging.getLogger(name)
        assert len(logger.filters) == 1
        handler = Keep()
        logger.addHandler(handler)
        try:
            logger.warning("You are running PPO on the new API stack! This is the new default")
            logger.warning("DeprecationWarning: `RLModule(config=[RLModuleConfig object])` "
                           "has been deprecated.")
            logger.warning("something else went wrong")
        finally:
            logger.removeHandler(handler)
    assert seen == ["something else went wrong"] * len(LOGGERS)

    import warnings

    import gymnasium

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        quiet_rllib_logs()  # after simplefilter: its filter comes first
        for name in ("rllib-multi-agent-env-v0", "other-env-v0"):
            for _ in range(2):
                gymnasium.register(name, entry_point=lambda: None)
    assert ["other-env-v0" in str(w.message) for w in caught] == [True]
