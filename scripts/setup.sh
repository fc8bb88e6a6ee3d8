#!/usr/bin/env bash
# Sets up everything the project and its tests need on a fresh Debian 12 machine with Python 3.11:
# Debian's Chromium (browser tests), a C++ compiler, python3-venv and python3-dev where missing,
# then a project
# virtual environment in .venv holding the package with every extra. torch is the CPU build:
# pinned by constraints.txt, and taken from PyTorch's CPU wheel index when the machine has no
# NVIDIA GPU and that index answers. Re-running it is safe. Activate the venv afterwards with
#   source .venv/bin/activate
# (or call .venv/bin/python directly, as .ci/run does).
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-python3}"
VENV="${VENV:-.venv}"
TORCH_CPU_INDEX="https://download.pytorch.org/whl/cpu"

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# Debian packages: only those that are missing, so a machine that has them needs no root.
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
if ! "$PY" -c "import ensurepip, venv" >/dev/null 2>&1; then missing+=(python3-venv); fi
# The compiled core's build needs Python's headers (Debian's python3-dev).
if ! "$PY" -c "import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))" \
    >/dev/null 2>&1; then missing+=(python3-dev); fi
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating the virtual environment $VENV"
    "$PY" -m venv "$VENV"
fi
VPY="$VENV/bin/python"
"$VPY" -m pip install -q --upgrade pip

# torch: the CPU build. Without an NVIDIA GPU, ask PyTorch's CPU index first (a short timeout, so
# a machine that cannot reach it goes on at once with its own registry, which must then serve a
# CPU build, as the project's machines do).
if ! "$VPY" -c "import torch" >/dev/null 2>&1; then
    torch_pin="$(grep -E '^torch==' constraints.txt)"
    if ! command -v nvidia-smi >/dev/null 2>&1 \
        && timeout 20 "$VPY" -c "import urllib.request as u; u.urlopen('$TORCH_CPU_INDEX/torch/', timeout=5)" \
            >/dev/null 2>&1; then
        echo "setup: installing $torch_pin from PyTorch's CPU wheel index"
        "$VPY" -m pip install -q --index-url "$TORCH_CPU_INDEX" "$torch_pin"
    else
        echo "setup: installing $torch_pin from the configured package index"
        "$VPY" -m pip install -q -c constraints.txt "$torch_pin"
    fi
fi

echo "setup: installing moonriver-env with every extra into $VENV"
"$VPY" -m pip install -q -c constraints.txt -e ".[dev]"
echo "setup: done. Activate with: source $VENV/bin/activate"
