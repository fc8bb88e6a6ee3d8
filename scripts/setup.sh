#!/usr/bin/env bash
# Sets up everything the project and its tests need on a fresh Debian machine with Python 3.11:
# Debian's Chromium (browser tests), then the package with every extra, torch pinned to the
# CPU build by constraints.txt. Re-running it is safe.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if ! command -v chromium >/dev/null 2>&1; then
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium
fi

python3 -m pip install -c constraints.txt -e ".[dev]"
