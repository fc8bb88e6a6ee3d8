"""What a benchmark ran on: CPU, load and torch's threading and math libraries.

Every script in benchmarks/ puts ``machine()`` under the key ``"machine"`` of its final JSON
line, so two figures can be compared only when they come from comparable machines.

    python benchmarks/machine.py   # the same summary on its own
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
from typing import Any


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux), else the machine type."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_vendor() -> str:
    """The CPU vendor id (``GenuineIntel``, ``AuthenticAMD``, ...) or ``"unknown"``."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def torch_settings() -> dict[str, Any] | None:
    """torch's threads, parallel backend, BLAS, oneDNN and vector ISA (None without torch)."""
    try:
        import torch
    except ImportError:
        return None
    config = torch.__config__.show()
    parallel = torch.__config__.parallel_info()

    def setting(name: str) -> str | None:
        found = re.search(rf"\b{name}=([^,\s]+)", config)
        return found.group(1) if found else None

    backend = re.search(r"ATen parallel backend: (.+)", parallel)
    onednn = re.search(r"MKL-DNN (v[\d.]+)", config)
    return {
        "version": torch.__version__,
        "num_threads": torch.get_num_threads(),
        "num_interop_threads": torch.get_num_interop_threads(),
        "parallel_backend": backend.group(1).strip() if backend else None,
        "blas": setting("BLAS_INFO"),
        "mkl": torch.backends.mkl.is_available(),
        "onednn": onednn.group(1) if onednn and torch.backends.mkldnn.is_available() else None,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "MKL_NUM_THREADS": os.environ.get("MKL_NUM_THREADS"),
    }


def machine() -> dict[str, Any]:
    """The machine summary for a benchmark's JSON line.

    ``torch_used`` says whether the benchmark itself had imported torch; the settings are
    reported either way (torch is imported here, after the measurement, when it is installed).
    """
    torch_used = "torch" in sys.modules
    return {
        "cpu_model": cpu_model(), "cpu_vendor": cpu_vendor(), "cpus": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "python": sys.version.split()[0], "torch_used": torch_used, "torch": torch_settings(),
    }


if __name__ == "__main__":
    print(json.dumps(machine()))
