"""The cluster recipe of docs/rllib.md, run as written: a head and a second node on this machine.

The recipe's block is read from the docs and run step by step, each step in its node's shell
(its own HOME, so the second node has no token file and needs the head's token, as on another
machine). What one machine needs on top is added to the recipe's commands: 127.0.0.1 for
HEAD_IP, free ports and a temp dir per node, one CPU per node (so the two env runners must go
one to each node) and a one-iteration training. Only the processes this test started are
stopped: each carries a marker in its environment (never ``ray stop``, which stops every Ray
process of the user).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytest.importorskip("ray.rllib")
psutil = pytest.importorskip("psutil")

from tests.helpers import HANG_GUARD  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "rllib.md"
MARK = "<!-- cluster-recipe:"
MARKER_VAR = "MOONRIVER_TEST_CLUSTER"
TINY_TRAINING = ["--iterations", "1", "--num-envs-per-env-runner", "4", "--train-batch-size",
                 "256", "--minibatch-size", "64", "--num-epochs", "1", "--net-arch", "32",
                 "--eval-every", "0"]


@dataclass
class Step:
    """One numbered step of the recipe: the node it runs on and its command lines."""

    number: int
    head: bool
    lines: list[str] = field(default_factory=list)


def recipe_steps(text: str) -> list[Step]:
    """The numbered steps of the fenced block after the cluster-recipe marker."""
    block = text.split(MARK, 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    steps: list[Step] = []
    for line in block.splitlines():
        header = re.match(r"# (\d+)\. on (the head node|each other node)", line)
        if header:
            steps.append(Step(int(header[1]), header[2] == "the head node"))
        elif line.strip() and not line.lstrip().startswith("#"):
            steps[-1].lines.append(line)
    return steps


def free_ports(count: int) -> list[int]:
    """Ports free now on 127.0.0.1 (held open together, so distinct)."""
    socks = [socket.socket() for _ in range(count)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def node_flags(temp_dir: Path, head: bool) -> list[str]:
    """What a second Ray node on the same machine needs: its own ports and temp dir."""
    ports = free_ports(6)
    low = 20000 + (os.getpid() * 7 + (0 if head else 400)) % 30000
    flags = ["--num-cpus", "1", "--temp-dir", str(temp_dir), "--disable-usage-stats",
             "--node-manager-port", str(ports[0]), "--object-manager-port", str(ports[1]),
             "--metrics-export-port", str(ports[2]), "--dashboard-agent-listen-port",
             str(ports[3]), "--dashboard-agent-grpc-port", str(ports[4]),
             "--runtime-env-agent-port", str(ports[5]), "--min-worker-port", str(low),
             "--max-worker-port", str(low + 199), "--object-store-memory", str(200 << 20)]
    if head:
        flags += ["--include-dashboard", "false", "--ray-client-server-port",
                  str(free_ports(1)[0])]
    return flags


class Cluster:
    """The shells of the two nodes and what the recipe's commands get on one machine."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_ports(1)[0]
        self.marker = uuid.uuid4().hex
        self.token = ""
        self.logs: list[str] = []
        bin_dir = str(Path(sys.executable).parent)
        self.env = {}
        for name in ("head", "node"):
            (root / name / "home").mkdir(parents=True)
            env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
            env.update(HOME=str(root / name / "home"), OMP_NUM_THREADS="1",
                       PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
                       **{MARKER_VAR: self.marker})
            self.env[name] = env

    def command(self, line: str, head: bool) -> list[str]:
        """One recipe line as this machine runs it."""
        line = line.replace("HEAD_IP", "127.0.0.1").replace(":6379", f":{self.port}")
        line = re.sub(r"\bTOKEN\b", self.token, line.replace("--port 6379", f"--port {self.port}"))
        argv = shlex.split(line, comments=True)
        if argv[:2] == ["ray", "start"]:
            argv += node_flags(self.root / ("head" if head else "node") / "ray", head)
        elif argv[0] == "moonriver-train-rllib":
            argv[argv.index("--num-env-runners") + 1] = "2"
            argv[argv.index("--out") + 1] = str(self.root / "run")
            argv += TINY_TRAINING
        return argv

    def run(self, step: Step) -> None:
        """Run a step's lines in its node's shell (``export`` sets that shell's variables)."""
        env = self.env["head" if step.head else "node"]
        for line in step.lines:
            argv = self.command(line, step.head)
            if argv[0] == "export":
                env.update(item.split("=", 1) for item in argv[1:])
                continue
            done = subprocess.run(argv, env=env, capture_output=True, text=True,
                                  timeout=HANG_GUARD)
            self.logs.append(f"$ {shlex.join(argv)}\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
            assert done.returncode == 0, "\n".join(self.logs)
            if argv[:2] == ["ray", "get-auth-token"]:
                self.token = done.stdout.strip()

    def ours(self) -> list[psutil.Process]:
        """This cluster's processes: those with its marker in their environment or its temp
        dir in their command line, and their descendants (Ray's workers and agents retitle
        themselves, which may overwrite what /proc shows of their environment)."""
        found: dict[int, psutil.Process] = {}
        for proc in psutil.process_iter():
            try:
                if proc.environ().get(MARKER_VAR) == self.marker or \
                        str(self.root) in " ".join(proc.cmdline()):
                    found.update((p.pid, p) for p in [proc, *proc.children(recursive=True)])
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
        return list(found.values())

    def stop(self) -> None:
        """Stop this cluster's processes (and only them): SIGTERM, then SIGKILL."""
        procs = self.ours()
        for proc in procs:
            try:
                proc.send_signal(signal.SIGTERM)
            except psutil.NoSuchProcess:
                continue
        _, alive = psutil.wait_procs(procs, timeout=15)
        for proc in alive:
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                continue
        psutil.wait_procs(alive, timeout=15)


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    root = Path(tempfile.mkdtemp(prefix="mr-ray-", dir="/tmp"))  # short: Ray's socket paths
    made = Cluster(root)
    try:
        yield made
    finally:
        made.stop()
        shutil.rmtree(root, ignore_errors=True)


ACTORS = """
import json, sys, ray
import ray._private.state as state
ray.init(address=sys.argv[1], logging_level="ERROR")
nodes = [n["NodeID"] for n in ray.nodes() if n["Alive"]]
runners = [a["Address"]["NodeID"] for a in state.actors().values()
           if a["ActorClassName"] == "BatchedEnvRunner"]
print(json.dumps({"nodes": nodes, "runners": runners}))
"""


def test_the_cluster_recipe_of_the_docs_runs_as_written(cluster: Cluster) -> None:
    steps = recipe_steps(DOC.read_text())
    assert [(s.number, s.head) for s in steps] == [(1, True), (2, False), (3, True)]
    for step in steps:
        cluster.run(step)
        if step.number == 1:
            assert re.fullmatch(r"[0-9a-f]{32,}", cluster.token), cluster.logs[-2:]
    assert "iteration=1 " in cluster.logs[-1]
    assert (cluster.root / "run" / "checkpoints" / "iter_000001").is_dir()
    placed = subprocess.run([sys.executable, "-c", ACTORS, f"127.0.0.1:{cluster.port}"],
                            env=cluster.env["head"], capture_output=True, text=True,
                            timeout=HANG_GUARD)
    assert placed.returncode == 0, placed.stderr[-3000:]
    seen = json.loads(placed.stdout.strip().splitlines()[-1])
    assert len(seen["nodes"]) == 2  # the head and the second node
    assert sorted(set(seen["runners"])) == sorted(seen["nodes"]), seen  # a runner on each
    assert len(cluster.ours()) > 0  # the cluster is still up until the fixture stops it


def test_the_second_node_needs_the_token(cluster: Cluster) -> None:
    steps = recipe_steps(DOC.read_text())
    cluster.run(steps[0])
    cluster.token = "0" * 32  # not the head's token
    with pytest.raises(AssertionError):
        cluster.run(steps[1])
