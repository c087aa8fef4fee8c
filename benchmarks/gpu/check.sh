#!/usr/bin/env bash
# The GPU check, in one command on a machine with a GPU (see benchmarks/README.md):
# the test suite with CuPy present, the primitive table on the GPU against the CPU, and
# MLP timings beside hand-written CuPy and PyTorch CUDA. Everything goes to $OUT
# (default ./gpu-out): check.log, mlp.log, table.log, pytest.log, results.json and
# RESULTS-gpu.md, a fragment for benchmarks/RESULTS.md. Extra arguments go to
# `python -m benchmarks.gpu.check` (--deadline-s, --stages, --rows, --shards...).
#
# Where the machine has no network, first run benchmarks/gpu/fetch_wheels.sh here and
# carry .whl/ along: the wheels there are installed into /tmp/site before anything runs.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/gpu-out}
export OUT
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
# JAX is never under test here: keep it on the CPU, so that a test importing it cannot
# take three quarters of the GPU's memory from CuPy and PyTorch.
export JAX_PLATFORMS=cpu XLA_PYTHON_CLIENT_PREALLOCATE=false
PY=${PYTHON:-python3}
site=
if compgen -G '.whl/*.whl' >/dev/null; then
    site=/tmp/funcgrad-site
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$site" .whl/*.whl || { echo "check.sh: installing .whl/*.whl failed"; exit 3; }
fi
# funcgrad from this tree, not installed; the carried wheels before it.
export PYTHONPATH="${site:+$site:}$PWD${PYTHONPATH:+:$PYTHONPATH}"
# Everything funcgrad needs must import before a minute of GPU time is spent.
"$PY" -c 'import numpy, attrs, pyrsistent, optree, funcgrad' || {
    echo "check.sh: funcgrad's dependencies do not import (see above); add the missing" \
         "package to benchmarks/gpu/fetch_wheels.sh and carry .whl"
    exit 4
}
# check.py keeps its own deadline (420 s by default) and stops the stages still running
# then; this outer limit is only a safety net.
timeout --kill-after=15 "${CHECK_TIMEOUT_S:-450}" \
    "$PY" -m benchmarks.gpu.check --out "$OUT" "$@" 2>&1 | tee "$OUT/check.log"
status=${PIPESTATUS[0]}
echo "check.sh: exit status $status; files in $OUT:"
ls -l "$OUT"
exit "$status"
