"""Checkpoints, snapshots and weights written whole or not at all, names that cannot collide, and
resumes that skip an unreadable newest file (issue 29, point 4): the shared helper, the fast
recipe, the SB3 recipe, RLlib's checkpoint folders and export_weights."""

from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from moonriver_env.training import atomic, export_weights  # noqa: E402
from moonriver_env.training.fast import train as fast  # noqa: E402
from moonriver_env.training.fast.train import Runner, load_resume  # noqa: E402
from moonriver_env.training.policy_net import NetConfig, RanchNet, load_net, save_net  # noqa: E402
from moonriver_env.training.rllib import paths as rllib_paths  # noqa: E402

from tests.helpers import HANG_GUARD  # noqa: E402
from tests.training.test_fast_training import _stop_after, _tiny  # noqa: E402

torch.set_num_threads(1)


class Crash(Exception):
    """The failure a test injects in the middle of a write."""


def _half_then_crash(*args, **kwargs) -> None:
    """A writer that puts some bytes in its file, then fails (a kill or a full disk)."""
    target = args[1] if len(args) > 1 else args[0]
    if isinstance(target, (str, os.PathLike)):  # a writer given the final name
        with open(target, "wb") as fh:
            fh.write(b"PK\x03\x04 half of a file")
    else:
        target.write(b"PK\x03\x04 half of a file")
    raise Crash("the write stopped midway")


def _leftovers(folder: Path) -> list[str]:
    """Temporary files or folders of an interrupted write anywhere under ``folder``."""
    return [str(p) for p in folder.rglob("*") if "partial" in p.name]


# -------------------------------------------------------------------------- the helper
def test_a_write_that_fails_midway_leaves_the_previous_file_and_nothing_else(tmp_path) -> None:
    path = tmp_path / "weights.bin"
    atomic.atomic_save(path, lambda fh: fh.write(b"the good bytes"))
    with pytest.raises(Crash), atomic.atomic_write(path) as fh:
        fh.write(b"new bytes, half")
        raise Crash
    assert path.read_bytes() == b"the good bytes"
    assert os.listdir(tmp_path) == ["weights.bin"]
    atomic.atomic_text(path, "replaced")
    assert path.read_text() == "replaced" and os.listdir(tmp_path) == ["weights.bin"]


class _FillsUp:
    """A file that takes ``room`` bytes, then fails as a full disk does."""

    def __init__(self, fh, room: int) -> None:
        self.fh, self.room = fh, room

    def write(self, data) -> int:
        if len(data) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return self.fh.write(data)

    def flush(self) -> None:
        self.fh.flush()


def test_a_full_disk_under_torch_save_is_one_clear_line(tmp_path) -> None:
    """torch.save's writer hides a full disk's OSError behind a RuntimeError (``unexpected
    pos``): it comes out as that OSError naming the file and the disk's free space, one CLI
    line; the previous file stays."""
    from moonriver_env.common.cli import describe

    path = tmp_path / "resume.pt"
    atomic.atomic_save(path, lambda fh: fh.write(b"the good bytes"))
    with pytest.raises(OSError) as caught:
        atomic.atomic_save(path, lambda fh: torch.save({"w": torch.zeros(10_000)},
                                                       _FillsUp(fh, 1000)))
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(path)
    assert isinstance(caught.value.__cause__, RuntimeError)  # torch's own error, kept
    message, status = describe(caught.value)
    assert status == 2 and "\n" not in message
    assert message.startswith(os.strerror(errno.ENOSPC)) and message.endswith(str(path))
    assert "MiB free on its disk" in message
    assert path.read_bytes() == b"the good bytes" and os.listdir(tmp_path) == ["resume.pt"]


@pytest.mark.parametrize("error", [RuntimeError("a bug in the state"),
                                   NotImplementedError("not written yet"),
                                   OSError(errno.EACCES, "denied", "other.file")])
def test_other_errors_in_a_writer_pass_through_unchanged(tmp_path, error) -> None:
    """Only an OSError that names no file is given the path: a writer's own bugs, and an
    OSError about another file, come out as they were raised."""
    def fail(fh) -> None:
        raise error

    with pytest.raises(type(error)) as caught:
        atomic.atomic_save(tmp_path / "x.pt", fail)
    assert caught.value is error and os.listdir(tmp_path) == []


def test_a_written_file_gets_the_usual_permissions(tmp_path) -> None:
    plain = tmp_path / "plain"
    plain.write_bytes(b"x")
    atomic.atomic_text(tmp_path / "atomic", "x")
    assert (tmp_path / "atomic").stat().st_mode == plain.stat().st_mode


def test_a_folder_that_fails_midway_leaves_the_previous_one(tmp_path) -> None:
    path = tmp_path / "iter_000001"
    with atomic.atomic_folder(str(path)) as partial:
        Path(partial, "a.pkl").write_bytes(b"good")
    with pytest.raises(Crash), atomic.atomic_folder(str(path)) as partial:
        Path(partial, "a.pkl").write_bytes(b"half")
        raise Crash
    assert (path / "a.pkl").read_bytes() == b"good" and os.listdir(tmp_path) == [path.name]


# ------------------------------------------------------------------------ the fast recipe
def test_checkpoints_in_the_same_second_all_exist(tmp_path, monkeypatch) -> None:
    """Checkpoints are named by iteration: five in one second are five files (they were named
    by whole seconds, and overwrote each other)."""
    monkeypatch.setattr(Runner, "elapsed", lambda self: 1.5)  # every iteration in second 1
    fast.train(_tiny(tmp_path, checkpoint_minutes=0), quiet=True)
    names = sorted(os.listdir(tmp_path / "checkpoints"))
    assert names == [f"net_it{i:06d}.pt" for i in range(1, 6)]
    assert all(load_net(str(tmp_path / "checkpoints" / n))[1]["samples"] > 0 for n in names)


def test_resume_drops_checkpoints_newer_than_the_saved_state(tmp_path) -> None:
    cfg = _tiny(tmp_path, checkpoint_minutes=0)
    with pytest.raises(KeyboardInterrupt):
        fast.train(cfg, quiet=True, on_iteration=_stop_after(3))
    folder = tmp_path / "checkpoints"
    for stale in ("net_it000004.pt", "net_99999s.pt"):  # a later iteration; an older name
        (folder / stale).write_bytes(b"x")
    Runner(cfg, load_resume(str(tmp_path))).close()
    assert sorted(os.listdir(folder)) == [f"net_it{i:06d}.pt" for i in (1, 2, 3)]


def test_resume_skips_an_unreadable_resume_file_with_one_line(tmp_path, capsys) -> None:
    cfg = _tiny(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        fast.train(cfg, quiet=True, on_iteration=_stop_after(3))
    resume = tmp_path / "resume.pt"
    assert load_resume(str(tmp_path))["iteration"] == 3
    resume.write_bytes(resume.read_bytes()[:1000])  # truncated: a damaged disk, a bad copy
    lines: list[str] = []
    state = load_resume(str(tmp_path), report=lines.append)
    assert state["iteration"] == 2  # the state written before it (the end of imitation)
    assert len(lines) == 1 and str(resume) in lines[0] and "resume.prev.pt" in lines[0]
    assert fast.main(["--resume", str(tmp_path), "--quiet"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("moonriver-train-fast: warning: skipped ")
    assert str(resume) in err[0]
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [line["iteration"] for line in log] == [1, 2, 3, 4, 5]


def test_no_readable_resume_file_is_one_clear_error(tmp_path) -> None:
    (tmp_path / "resume.pt").write_bytes(b"garbage")
    with pytest.raises(fast.CLIError, match="not a readable resume state"):
        load_resume(str(tmp_path), report=pytest.fail)


def test_a_crash_while_saving_leaves_the_previous_files_whole(tmp_path, monkeypatch) -> None:
    runner = Runner(_tiny(tmp_path))
    runner.imitation(iterations=1)
    runner.save(str(tmp_path / "final.pt"))
    runner.write_resume()
    before = {name: (tmp_path / name).read_bytes() for name in ("final.pt", "resume.pt")}
    runner.imitation(iterations=1)  # a newer state to save
    monkeypatch.setattr(torch, "save", _half_then_crash)
    with pytest.raises(Crash):
        runner.save(str(tmp_path / "final.pt"))
    with pytest.raises(Crash):
        runner.write_resume()
    monkeypatch.undo()
    runner.close()
    for name, data in before.items():
        assert (tmp_path / name).read_bytes() == data, name
    assert load_resume(str(tmp_path), report=pytest.fail)["iteration"] == 1
    assert load_net(str(tmp_path / "final.pt"))[1]["samples"] > 0
    assert _leftovers(tmp_path) == []


def test_save_net_and_export_write_atomically(tmp_path, monkeypatch) -> None:
    torch.manual_seed(0)
    net = RanchNet(NetConfig(channels=8, opponent_channels=4, hidden=16))
    save_net(net, str(tmp_path / "final.pt"), {"num_players": 2, "mode": "base"})
    export_weights.export(str(tmp_path / "final.pt"), str(tmp_path / "agent.npz"))
    good = (tmp_path / "agent.npz").read_bytes()
    monkeypatch.setattr(np, "savez_compressed", _half_then_crash)
    with pytest.raises(Crash):
        export_weights.export(str(tmp_path / "final.pt"), str(tmp_path / "agent.npz"))
    monkeypatch.undo()
    assert (tmp_path / "agent.npz").read_bytes() == good
    assert sorted(os.listdir(tmp_path)) == ["agent.npz", "final.pt"]
    assert export_weights.main([str(tmp_path / "final.pt"), str(tmp_path / "plain")]) == 0
    with np.load(tmp_path / "plain.npz") as arrays:  # the suffix numpy.savez would add
        assert json.loads(str(arrays["__meta__"]))["num_players"] == 2


# ------------------------------------------------------------------------- the SB3 recipe
SB3_TINY = ["--num-players", "2", "--n-envs", "1", "--n-steps", "32", "--batch-size", "32",
            "--n-epochs", "1", "--net-arch", "8", "--eval-every", "100000000",
            "--eval-games", "1", "--eval-opponents", "random", "--checkpoint-every", "32",
            "--no-progress"]


@pytest.fixture(scope="module")
def sb3_run(tmp_path_factory) -> Path:
    """A tiny moonriver-train run with checkpoints at 32, 64 and 96 timesteps."""
    pytest.importorskip("sb3_contrib")
    from moonriver_env.training.sb3 import train as sb3_train

    run = tmp_path_factory.mktemp("sb3") / "run"
    assert sb3_train.main([*SB3_TINY, "--timesteps", "96", "--out", str(run)]) == 0
    return run


def test_sb3_checkpoints_are_whole_and_resume_skips_a_truncated_newest(
        sb3_run, tmp_path, capsys) -> None:
    import shutil

    from moonriver_env.training.sb3 import train as sb3_train

    run = tmp_path / "run"
    shutil.copytree(sb3_run, run)
    names = sorted(os.listdir(run / "checkpoints"), key=lambda n: int(n.split("_")[1]))
    assert names == ["ppo_32_steps.zip", "ppo_64_steps.zip", "ppo_96_steps.zip"]
    assert all(sb3_train.checkpoint_problem(str(run / "checkpoints" / n)) is None
               for n in names)
    newest = run / "checkpoints" / "ppo_96_steps.zip"
    newest.write_bytes(newest.read_bytes()[:4000])  # what a kill during a write used to leave
    lines: list[str] = []
    assert sb3_train.resume_checkpoint(str(run), lines.append) == str(
        run / "checkpoints" / "ppo_64_steps.zip")
    assert len(lines) == 1 and str(newest) in lines[0]
    with pytest.raises(ValueError, match=r"cannot resume from .*ppo_96_steps\.zip: .*run "
                                         r"directory"):
        sb3_train.resume_checkpoint(str(newest))  # a file named on purpose is not skipped
    capsys.readouterr()
    assert sb3_train.main([*SB3_TINY, "--timesteps", "32", "--out", str(run),
                           "--resume", str(run)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("moonriver-train: warning: skipped ")
    assert str(newest) in err[0] and "ppo_64_steps.zip" in err[0]
    assert sb3_train.checkpoint_problem(str(newest)) is None  # saved again, whole


def test_a_crash_while_saving_an_sb3_model_leaves_the_previous_file(sb3_run, tmp_path,
                                                                    monkeypatch) -> None:
    from moonriver_env.training.sb3 import train as sb3_train
    from moonriver_env.training.sb3.callbacks import save_model
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common import save_util

    model = MaskablePPO.load(str(sb3_run / "final_model.zip"), device="cpu")
    path = tmp_path / "ppo_64_steps.zip"
    save_model(model, str(path))
    good = path.read_bytes()
    monkeypatch.setattr(save_util.th, "save", _half_then_crash)  # inside the zip's members
    with pytest.raises(Crash):
        save_model(model, str(path))
    monkeypatch.undo()
    assert path.read_bytes() == good and sb3_train.checkpoint_problem(str(path)) is None
    assert os.listdir(tmp_path) == [path.name]


KILLED_WRITER = """
import pathlib, sys, time
from sb3_contrib import MaskablePPO
from stable_baselines3.common import save_util
from moonriver_env.training.sb3.callbacks import save_model

model = MaskablePPO.load(sys.argv[1], device="cpu")
def half_then_wait(obj, fh):
    fh.write(b"half of a member")
    fh.flush()
    pathlib.Path(sys.argv[3]).touch()  # the write is under way: kill me now
    time.sleep(600)
save_util.th.save = half_then_wait
save_model(model, sys.argv[2])
"""


@pytest.mark.skipif(sys.platform == "win32", reason="kill -9 is POSIX")
def test_kill_9_during_an_sb3_checkpoint_write_leaves_no_file_under_its_name(
        sb3_run, tmp_path) -> None:
    """A real ``kill -9`` between the write and the rename (what left truncated .zip files
    that --resume refused): the final name stays absent and resume takes the newest whole
    checkpoint, ignoring the hidden leftover."""
    import shutil
    import signal
    import subprocess
    import time

    from moonriver_env.training.sb3 import train as sb3_train

    run = tmp_path / "run"
    shutil.copytree(sb3_run, run)
    target, marker = run / "checkpoints" / "ppo_128_steps.zip", tmp_path / "writing"
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(run / "final_model.zip"),
                             str(target), str(marker)])
    try:
        deadline = time.monotonic() + HANG_GUARD  # only stops a broken run hanging the tests
        while not marker.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the writer ended"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not target.exists()
    assert [Path(p).name.startswith(".ppo_128_steps.zip.") for p in _leftovers(run)] == [True]
    assert sb3_train.resume_checkpoint(str(run), report=pytest.fail) == str(
        run / "checkpoints" / "ppo_96_steps.zip")


# ------------------------------------------------------------------------- RLlib's folders
class FakeAlgo:
    """What save_checkpoint uses of an RLlib Algorithm: its iteration and save_to_path."""

    def __init__(self, iteration: int, fail: bool = False) -> None:
        self.iteration, self.fail = iteration, fail

    def save_to_path(self, path: str) -> None:
        for rel in ("rllib_checkpoint.json", "algorithm_state.pkl",
                    "learner_group/learner/rl_module/shared/module_state.pkl"):
            os.makedirs(os.path.join(path, os.path.dirname(rel)), exist_ok=True)
            Path(path, rel).write_bytes(f"{rel} at {self.iteration}".encode() * 10)
            if self.fail:
                raise Crash("killed while Ray wrote the checkpoint")


def _rllib_cfg(out: Path):
    pytest.importorskip("ray")  # training/rllib/train.py imports nothing of Ray at import
    from moonriver_env.training.rllib.train import RLlibTrainConfig

    return RLlibTrainConfig(out=str(out), keep_checkpoints=5)


def test_rllib_checkpoint_folders_are_whole_or_absent(tmp_path) -> None:
    from moonriver_env.training.rllib.train import save_checkpoint

    cfg = _rllib_cfg(tmp_path)
    first = save_checkpoint_of(1, cfg)
    assert rllib_paths.checkpoint_problem(first) is None
    assert os.path.isfile(os.path.join(first, rllib_paths.MANIFEST))
    with pytest.raises(Crash):
        save_checkpoint(FakeAlgo(2, fail=True), cfg)
    assert os.listdir(tmp_path / "checkpoints") == ["iter_000001"]
    assert rllib_paths.algorithm_checkpoint(str(tmp_path), report=pytest.fail) == first


def test_rllib_resume_skips_a_damaged_newest_checkpoint_with_one_line(tmp_path) -> None:
    cfg = _rllib_cfg(tmp_path)
    first, second = (save_checkpoint_of(i, cfg) for i in (1, 2))
    state = Path(second, "learner_group/learner/rl_module/shared/module_state.pkl")
    size = state.stat().st_size
    state.write_bytes(state.read_bytes()[:7])  # truncated
    lines: list[str] = []
    assert rllib_paths.algorithm_checkpoint(str(tmp_path), report=lines.append) == first
    assert len(lines) == 1 and second in lines[0] and "module_state.pkl" in lines[0]
    state.write_bytes(b"x" * size)  # the same size, other bytes
    assert "checksum" in rllib_paths.checkpoint_problem(second)
    with pytest.raises(ValueError, match=r"is damaged: .*module_state\.pkl"):
        rllib_paths.algorithm_checkpoint(second)
    Path(first, "algorithm_state.pkl").unlink()
    with pytest.raises(ValueError, match=r"no undamaged RLlib checkpoint .*2 damaged"):
        rllib_paths.algorithm_checkpoint(str(tmp_path), report=lines.append)


def test_rllib_cli_names_a_skipped_checkpoint_once_before_ray_starts(tmp_path, capsys) -> None:
    from moonriver_env.training.rllib import train as rllib_train

    cfg = _rllib_cfg(tmp_path)
    _, second = (save_checkpoint_of(i, cfg) for i in (1, 2))
    Path(second, "algorithm_state.pkl").write_bytes(b"")
    status = rllib_train.main(["--resume", str(tmp_path), "--address", "nonsense",
                               "--out", str(tmp_path / "next")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 2, err  # the skipped checkpoint, then the bad address
    assert err[0].startswith("moonriver-train-rllib: warning: skipped the damaged RLlib "
                             f"checkpoint {second}: algorithm_state.pkl has 0 bytes")
    assert "HOST:PORT" in err[1] and not (tmp_path / "next").exists()


def save_checkpoint_of(iteration: int, cfg) -> str:
    """A fake algorithm's checkpoint saved as moonriver-train-rllib saves one."""
    from moonriver_env.training.rllib.train import save_checkpoint

    return save_checkpoint(FakeAlgo(iteration), cfg)
