"""The core under AddressSanitizer and UBSan (issue 29, point 5): a slow test.

It builds the extension out of tree with ``-DMOONRIVER_SANITIZE=ON`` (cmake directly, into a
temporary folder: the venv's install is untouched), then runs, in child processes with libasan
and libstdc++ preloaded and the sanitized modules loaded first (a ``sitecustomize`` on
PYTHONPATH): a sample of the differential games, the differential suite's short tests, the
vector tests, the byte-state and binding tests and the corruption fuzz (crafted pieces
included). Any sanitizer finding aborts the child; the test asserts each child passed with no
finding in its output.

``pytest -m slow tests/core/test_sanitizers.py``; ``MOONRIVER_SANITIZE_BUILD=folder`` keeps the
build in that folder between runs (cmake rebuilds only what changed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
FINDINGS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer",
            "SUMMARY: UndefinedBehaviorSanitizer")

SITECUSTOMIZE = '''"""Import the core's extensions from MOONRIVER_SANITIZED (the first finder)."""
import glob
import importlib.util
import os
import sys

_FOLDER = os.environ["MOONRIVER_SANITIZED"]


class _SanitizedCore:
    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if fullname != "moonriver_env.moonriver.core._core":
            return None
        name = fullname.rsplit(".", 1)[1]
        (found,) = glob.glob(os.path.join(_FOLDER, name + ".*.so"))
        return importlib.util.spec_from_file_location(fullname, found)


sys.meta_path.insert(0, _SanitizedCore)
'''

# 300 games of the differential suite's schedule (every variant and policy, one in 24 compared
# at every decision), from seeds the default suite does not play.
DIFFERENTIAL_SAMPLE = '''
import sys, tempfile
from pathlib import Path
import moonriver_env.moonriver.core._core as c
assert c.__file__.startswith(sys.argv[1]), c.__file__
from tests.core.test_core_differential import POLICIES, _custom_data, lockstep, schedule, variants
configs = variants(_custom_data(Path(tempfile.mkdtemp())))
games = 0
for config, seed, policy, full, record in schedule(configs, 300, 24, first_seed=20_000):
    lockstep(config, seed, POLICIES[policy], full, record)
    games += 1
print("differential games", games)
'''


def _runtime(name: str) -> str:
    """The path of a compiler runtime library (libasan.so, libstdc++.so), or skip."""
    try:
        path = subprocess.run(["g++", f"-print-file-name={name}"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("g++ is needed for the sanitizer build")
    if not os.path.isabs(path) or not os.path.exists(path):
        pytest.skip(f"{name} not found (g++ -print-file-name={name})")
    return os.path.realpath(path)


@pytest.fixture(scope="module")
def sanitized(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Build the sanitized extension; the environment that runs Python on it."""
    if shutil.which("cmake") is None:
        pytest.skip("cmake is needed for the sanitizer build")
    preload = f"{_runtime('libasan.so')} {_runtime('libstdc++.so')}"
    build = Path(os.environ.get("MOONRIVER_SANITIZE_BUILD")
                 or tmp_path_factory.mktemp("asan-build"))
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), *generator,
                    "-DMOONRIVER_SANITIZE=ON", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                    f"-DPython_EXECUTABLE={sys.executable}"],
                   check=True, capture_output=True, timeout=600)
    subprocess.run(["cmake", "--build", str(build), "-j", str(os.cpu_count() or 2)],
                   check=True, capture_output=True, timeout=3600)
    for name in ("_core",):  # the option took: the module is instrumented
        (module,) = build.glob(f"{name}.*.so")
        assert b"__asan_report" in module.read_bytes() and b"__ubsan_handle" in \
            module.read_bytes(), f"{module} was built without the sanitizers"
    site = tmp_path_factory.mktemp("asan-site")
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = dict(os.environ)
    env.update({"LD_PRELOAD": preload, "MOONRIVER_SANITIZED": str(build),
                "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
                "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0:exitcode=99",
                "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
                "MOONRIVER_BACKEND": "core"})
    return env


def _clean_run(env: dict[str, str], *args: str) -> str:
    """Run Python with ``args`` under the sanitizers; assert success and no finding."""
    run = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=3600)
    output = run.stdout + run.stderr
    found = [f for f in FINDINGS if f in output]
    assert run.returncode == 0 and not found, f"{args}: rc {run.returncode} {found}\n" \
                                              f"{output[-6000:]}"
    return output


def test_differential_games_run_clean(sanitized: dict[str, str]) -> None:
    out = _clean_run(sanitized, "-c", DIFFERENTIAL_SAMPLE, sanitized["MOONRIVER_SANITIZED"])
    assert "differential games 300" in out


def test_core_and_vector_tests_run_clean(sanitized: dict[str, str]) -> None:
    """The differential suite's short tests (not its 5,040 games), the byte-state, binding,
    vector (network and search seats included), batched-search and C++ network tests."""
    out = _clean_run(sanitized, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:cacheprovider",
                     "tests/core/test_core_differential.py", "-k", "not five_thousand",
                     "tests/core/test_core_state.py", "tests/core/test_core_bindings.py",
                     "tests/core/test_binding_ints.py", "tests/core/test_time_limit.py",
                     "tests/core/test_vector.py", "tests/core/test_vector_seats.py",
                     "tests/core/test_vector_net_seats.py",
                     "tests/core/test_vector_search_seats.py", "tests/core/test_az_search.py",
                     "tests/agents/test_az_core_net.py")
    assert " passed" in out and " failed" not in out


def test_corruption_fuzz_runs_clean(sanitized: dict[str, str]) -> None:
    out = _clean_run(sanitized, "-m", "tests.core.state_fuzz", "300")
    assert int(out.split("refused ")[1].split()[0]) > 15 * 5000


def test_crafted_state_fuzz_runs_clean(sanitized: dict[str, str]) -> None:
    """Bytes changed under a valid checksum, and pieces removed, doubled or swapped (counts and
    checksum made to fit), refused or played on, with no sanitizer finding."""
    out = _clean_run(sanitized, "-m", "tests.core.crafted_state_fuzz", "0", "14")
    refused, accepted, played = map(int, out.split("crafted states ")[1].split()[1:6:2])
    assert refused > 5_000 and accepted and played > 50
    refused, played = map(int, out.split("piece states ")[1].split()[1:4:2])
    assert refused > 200 and played >= 2
