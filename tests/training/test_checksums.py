"""Checkpoints and weights files carry a checksum every read checks, and no partial file outlives
the write that made it: 64 flipped bytes inside a tensor of a saved ``.pt`` are refused by
``load_net``, the fast recipe's ``--init`` and ``--resume`` (which falls back to
``resume.prev.pt`` with one line), ``export_weights``, soup, the AZ recipe's resume and warm
start; a ``keep_copy`` onto a hard link of its source leaves no ``.partial``; a run's start
removes the ``.partial`` files a killed run left."""

from __future__ import annotations

import os
import pickle
import shutil
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from moonriver_env.agents.pretrained import read_npz  # noqa: E402
from moonriver_env.training import atomic, export_weights, soup  # noqa: E402
from moonriver_env.training.az import train as az_train  # noqa: E402
from moonriver_env.training.az.network import warm_start  # noqa: E402
from moonriver_env.training.fast import train as fast  # noqa: E402
from moonriver_env.training.fast.train import Runner, load_resume  # noqa: E402
from moonriver_env.training.policy_net import NetConfig, RanchNet, load_net, save_net  # noqa: E402

from tests.training.test_atomic_writes import SB3_TINY, sb3_run  # noqa: E402, F401
from tests.training.test_az_training import quiet, tiny, tiny_net  # noqa: E402
from tests.training.test_fast_training import _stop_after, _tiny  # noqa: E402

torch.set_num_threads(1)
FLIPPED = 64  # bytes flipped inside one tensor


def flip_tensor_bytes(path: str | Path, count: int = FLIPPED) -> None:
    """Invert ``count`` bytes in the middle of the largest stored member of a zip archive (a
    torch checkpoint's biggest tensor): the archive stays well formed, its contents change."""
    with zipfile.ZipFile(path) as archive:
        member = max(archive.infolist(), key=lambda info: info.file_size)
    assert member.compress_type == zipfile.ZIP_STORED and member.file_size >= 2 * count
    data = bytearray(Path(path).read_bytes())
    name_length, extra_length = struct.unpack("<HH", data[member.header_offset + 26:
                                                          member.header_offset + 30])
    start = member.header_offset + 30 + name_length + extra_length + member.file_size // 2
    data[start:start + count] = bytes(b ^ 0xFF for b in data[start:start + count])
    Path(path).write_bytes(bytes(data))


def _net_file(path: Path, seed: int = 0) -> str:
    torch.manual_seed(seed)
    net = RanchNet(NetConfig(channels=8, opponent_channels=4, hidden=16))
    save_net(net, str(path), {"num_players": 2, "mode": "base"})
    return str(path)


def _partials(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.rglob(f"*{atomic.PARTIAL}"))


def _one_error_line(capsys, prog: str) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{prog}: error: "), err
    return err[0]


# ---------------------------------------------------------------------- the checksum
def test_torch_writes_true_crcs_and_a_flip_inside_a_tensor_breaks_one(tmp_path) -> None:
    path = _net_file(tmp_path / "net.pt")
    atomic.check_archive(path)  # every member of a fresh torch.save passes
    flip_tensor_bytes(path)
    torch.load(path, weights_only=True)  # torch's reader does not check (why we do)
    with pytest.raises(atomic.ChecksumError, match=r"net\.pt.*fails its CRC-32") as info:
        atomic.check_archive(path)
    assert isinstance(info.value, ValueError) and "\n" not in str(info.value)
    again = pickle.loads(pickle.dumps(info.value))  # crosses a process boundary
    assert type(again) is atomic.ChecksumError and str(again) == str(info.value)


def test_load_net_refuses_a_checkpoint_with_flipped_bytes(tmp_path) -> None:
    path = _net_file(tmp_path / "net.pt")
    flip_tensor_bytes(path)
    with pytest.raises(ValueError, match=r"net\.pt.*checksum"):
        load_net(path)


def test_export_weights_refuses_a_damaged_checkpoint_in_one_line(tmp_path, capsys) -> None:
    path = _net_file(tmp_path / "final.pt")
    flip_tensor_bytes(path)
    with pytest.raises(SystemExit) as info:
        export_weights.main([path, str(tmp_path / "agent.npz")])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and path in err and "checksum" in err
    assert not (tmp_path / "agent.npz").exists()


def test_soup_refuses_a_damaged_source_in_one_line(tmp_path, capsys) -> None:
    first, second = _net_file(tmp_path / "a.pt", 0), _net_file(tmp_path / "b.pt", 1)
    flip_tensor_bytes(second)
    with pytest.raises(SystemExit) as info:
        soup.main([str(tmp_path / "soup.pt"), first, second])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and second in err and "checksum" in err


def test_an_npz_with_flipped_bytes_is_refused(tmp_path) -> None:
    """The agents' .npz: its members' CRCs are checked before numpy reads them."""
    path = tmp_path / "agent.npz"
    arrays = {"w": np.arange(4096, dtype=np.float32), "__meta__": np.array("{}")}
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)  # stored, as the AZ recipe's az.npz is
    flip_tensor_bytes(path)
    with pytest.raises(ValueError, match=r"agent\.npz.*CRC-32"):
        read_npz(str(path))


# --------------------------------------------------------------------- the fast recipe
def test_fast_init_refuses_a_damaged_network_in_one_line(tmp_path, capsys) -> None:
    init = _net_file(tmp_path / "init.pt")
    flip_tensor_bytes(init)
    with pytest.raises(ValueError, match=r"init\.pt.*checksum"):
        Runner(_tiny(tmp_path / "api", init=init))
    status = fast.main(["--num-players", "2", "--workers", "1", "--out",
                        str(tmp_path / "run"), "--init", init, "--quiet"])
    assert status == 2
    line = _one_error_line(capsys, "moonriver-train-fast")
    assert init in line and "checksum" in line


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory) -> Path:
    """A tiny fast-recipe run stopped after iteration 3 (resume.prev.pt holds iteration 2)."""
    run = tmp_path_factory.mktemp("fast") / "run"
    with pytest.raises(KeyboardInterrupt):
        fast.train(_tiny(run), quiet=True, on_iteration=_stop_after(3))
    return run


def test_fast_resume_falls_back_past_a_damaged_resume_file(fast_run, tmp_path,
                                                           capsys) -> None:
    run = tmp_path / "run"
    shutil.copytree(fast_run, run)
    resume = run / "resume.pt"
    flip_tensor_bytes(resume)
    lines: list[str] = []
    assert load_resume(str(run), report=lines.append)["iteration"] == 2
    assert len(lines) == 1 and str(resume) in lines[0] and "resume.prev.pt" in lines[0]
    assert "checksum" in lines[0]
    assert fast.main(["--resume", str(run), "--quiet"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("moonriver-train-fast: warning: skipped ")
    assert str(resume) in err[0] and "checksum" in err[0]


def test_fast_resume_with_both_files_damaged_is_one_error(fast_run, tmp_path, capsys) -> None:
    run = tmp_path / "run"
    shutil.copytree(fast_run, run)
    for name in ("resume.pt", "resume.prev.pt"):
        flip_tensor_bytes(run / name)
    assert fast.main(["--resume", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("moonriver-train-fast: error: ") and "checksum" in err[-1]


# ----------------------------------------------------------------------- the AZ recipe
@pytest.fixture(scope="module")
def az_run(tmp_path_factory) -> Path:
    """A tiny AZ run of two iterations (its end saves again: resume.prev.pt holds the
    second too)."""
    run = tmp_path_factory.mktemp("az") / "run"
    az_train.Run(tiny(run, iterations=2), report=quiet).train()
    return run


def test_az_resume_falls_back_past_a_damaged_resume_file(az_run, tmp_path) -> None:
    run = tmp_path / "run"
    shutil.copytree(az_run, run)
    flip_tensor_bytes(run / "resume.pt")
    lines: list[str] = []
    assert az_train.load_resume(str(run), report=lines.append)["iteration"] == 2
    assert len(lines) == 1 and str(run / "resume.pt") in lines[0] and "checksum" in lines[0]
    assert lines[0].endswith(f"resuming from {run / 'resume.prev.pt'}")
    flip_tensor_bytes(run / "resume.prev.pt")
    with pytest.raises(az_train.CLIError, match="checksum"):
        az_train.load_resume(str(run), report=pytest.fail)


def test_az_warm_start_refuses_a_damaged_network(tmp_path) -> None:
    path = tmp_path / "ppo.pt"
    torch.manual_seed(0)
    save_net(RanchNet(NetConfig(channels=4, opponent_channels=2, hidden=8)), str(path))
    flip_tensor_bytes(path)
    with pytest.raises(ValueError, match=r"ppo\.pt.*checksum"):
        warm_start(tiny_net(), str(path))


def test_a_damaged_az_npz_is_refused_by_the_agent_and_the_warm_start(az_run, tmp_path) -> None:
    from moonriver_env.agents.az import load_az

    path = tmp_path / "az.npz"
    shutil.copy(az_run / "az.npz", path)
    load_az(str(path))
    flip_tensor_bytes(path)
    with pytest.raises(ValueError, match=r"az\.npz.*CRC-32 checksum"):
        load_az(str(path))
    with pytest.raises(ValueError, match=r"az\.npz.*CRC-32 checksum"):
        warm_start(tiny_net(), str(path))


# ------------------------------------------------------------------------ partial files
def test_keep_copy_onto_a_hard_link_of_its_source_leaves_no_partial(tmp_path) -> None:
    """A kill between keep_copy and the next resume.pt leaves both names on one file; the
    next keep_copy renamed a third link onto its twin, which POSIX makes a no-op."""
    src, dst = tmp_path / "resume.pt", tmp_path / "resume.prev.pt"
    src.write_bytes(b"state")
    os.link(src, dst)
    atomic.keep_copy(str(src), str(dst))
    assert sorted(os.listdir(tmp_path)) == ["resume.prev.pt", "resume.pt"]
    assert dst.read_bytes() == b"state"


def test_remove_partials_takes_only_the_temporary_names(tmp_path) -> None:
    stale = atomic.partial_name(str(tmp_path / "resume.pt"))
    Path(stale).write_bytes(b"half")
    folder = atomic.partial_name(str(tmp_path / "iter_000001"))
    os.makedirs(os.path.join(folder, "inside"))
    keep = [tmp_path / name for name in ("notes.partial", ".hidden", "resume.pt")]
    for path in keep:
        path.write_bytes(b"mine")
    assert sorted(atomic.remove_partials(str(tmp_path))) == sorted([stale, folder])
    assert sorted(os.listdir(tmp_path)) == sorted(p.name for p in keep)
    assert atomic.remove_partials(str(tmp_path / "absent")) == []


def test_a_fast_run_removes_the_partials_a_killed_run_left(fast_run, tmp_path) -> None:
    run = tmp_path / "run"
    shutil.copytree(fast_run, run)
    os.remove(run / "resume.prev.pt")
    os.link(run / "resume.pt", run / "resume.prev.pt")  # killed between the two writes
    stale = [atomic.partial_name(str(run / "resume.pt")),
             atomic.partial_name(str(run / "checkpoints" / "net_it000004.pt"))]
    for path in stale:
        Path(path).write_bytes(b"half of a file")
    Runner(_tiny(run), load_resume(str(run), report=pytest.fail)).close()
    assert _partials(run) == []
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    Path(atomic.partial_name(str(fresh / "resume.pt"))).write_bytes(b"half")
    Runner(_tiny(fresh)).close()
    assert _partials(fresh) == []


def test_an_az_run_removes_the_partials_a_killed_run_left(az_run, tmp_path) -> None:
    run = tmp_path / "run"
    shutil.copytree(az_run, run)
    os.remove(run / "resume.prev.pt")
    os.link(run / "resume.pt", run / "resume.prev.pt")
    Path(atomic.partial_name(str(run / "az.npz"))).write_bytes(b"half")
    state = az_train.load_resume(str(run), report=pytest.fail)
    az_train.Run(tiny(run, iterations=3), state=state, report=quiet).train()
    assert _partials(run) == []


def test_an_sb3_run_removes_the_partials_a_killed_run_left(sb3_run, tmp_path) -> None:  # noqa: F811
    from moonriver_env.training.sb3 import train as sb3_train

    run = tmp_path / "run"
    shutil.copytree(sb3_run, run)
    for folder, name in (("checkpoints", "ppo_128_steps.zip"), ("snapshots", "snapshot_1.zip"),
                         ("", "final_model.zip")):
        os.makedirs(run / folder, exist_ok=True)
        Path(atomic.partial_name(str(run / folder / name))).write_bytes(b"half")
    assert sb3_train.main([*SB3_TINY, "--timesteps", "32", "--out", str(run),
                           "--resume", str(run)]) == 0
    assert _partials(run) == []


def test_an_sb3_snapshot_with_flipped_bytes_is_refused(sb3_run, tmp_path) -> None:  # noqa: F811
    from moonriver_env.agents.policy import PolicyAgent
    from moonriver_env.training.sb3 import selfplay

    path = tmp_path / "snapshot_32.zip"
    shutil.copy(sb3_run / "checkpoints" / "ppo_32_steps.zip", path)
    with zipfile.ZipFile(path) as archive:  # SB3's zip deflates; flip inside a stored copy
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    flip_tensor_bytes(path)
    with pytest.raises(ValueError, match=r"snapshot_32\.zip.*CRC-32"):
        selfplay._load(str(path))
    with pytest.raises(ValueError, match=r"snapshot_32\.zip.*CRC-32"):  # policy:PATH agents
        PolicyAgent(str(path))
