#!/usr/bin/env bash
# Fetch, here, the wheels the GPU machine lacks: it has no network, and its image
# (Python 3.12, x86-64) carries every funcgrad dependency except these two.
# They land in .whl/ at the repository root (git-ignored), which the device run carries
# (`carry: [".whl"]`); check.sh installs them there. The versions are the ones installed
# here (the tests here ran against them), else the newest. .whl/revision.txt records the
# commit, so that the report can name it (the device gets the files, not .git).
#
#   bash benchmarks/gpu/fetch_wheels.sh          # PYTHON=... to read versions elsewhere
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-}
if [ -z "$PY" ]; then
    if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
PACKAGES="pyrsistent optree"
pins=$("$PY" - $PACKAGES <<'PYEOF'
import importlib.metadata as md
import sys

for name in sys.argv[1:]:
    try:
        print(f'{name}=={md.version(name)}')
    except md.PackageNotFoundError:
        print(name)
PYEOF
)
rm -rf .whl
mkdir -p .whl
# shellcheck disable=SC2086  # one argument per pin
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux1_x86_64 -d .whl $pins
{
    git rev-parse --short HEAD 2>/dev/null || echo unknown
    if [ -n "$(git status --porcelain 2>/dev/null)" ]; then echo '(with uncommitted changes)'; fi
} | paste -sd' ' > .whl/revision.txt
echo "wheels for the GPU machine, in $(pwd)/.whl:"
ls -l .whl
du -sh .whl
