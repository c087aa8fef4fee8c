"""Out of core: a gradient over a memory-mapped file never holds the data whole.

A 10⁶ × 20 float64 file (153 MiB) is read as a Dask array in 10⁵-row chunks
(15 MiB each); the gradient of a logistic loss over it grows the peak of the
memory Python and NumPy allocate (``tracemalloc``, which NumPy reports to) by
less than four chunks while it is computed -- where holding the data would
take ten.  It runs in a fresh interpreter, so that nothing else counts, and its
result equals NumPy funcgrad's on the whole array.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("dask.array", reason="Dask is optional: pip install funcgrad[dask]")

ROWS, COLS, CHUNK = 10**6, 20, 10**5

SCRIPT = """
import json, sys, tracemalloc
import numpy as np, dask.array as da
import funcgrad as fg, funcgrad.numpy as fnp

path, rows, cols, chunk = sys.argv[1], *map(int, sys.argv[2:])
out = np.lib.format.open_memmap(path, mode="w+", dtype="float64", shape=(rows, cols))
rng = np.random.default_rng(0)
for i in range(0, rows, chunk):  # written a chunk at a time: never whole in memory
    out[i:i + chunk] = rng.standard_normal((min(chunk, rows - i), cols))
out.flush()
del out

def loss(w, X, y):
    z = X @ w
    return fnp.mean(fg.nn.softplus(z) - y * z)

X = da.from_array(np.load(path, mmap_mode="r"), chunks=(chunk, cols))
y = (X[:, 0] > 0).astype("float64")
w = np.linspace(-0.5, 0.5, cols)
tracemalloc.start()
g = fg.grad(loss)(w, X, y)
before = tracemalloc.get_traced_memory()[0]
tracemalloc.reset_peak()
got = g.compute()
growth = tracemalloc.get_traced_memory()[1] - before
tracemalloc.stop()
whole = np.load(path)  # the reference, after the measurement
want = fg.grad(loss)(w, whole, (whole[:, 0] > 0).astype("float64"))
print(json.dumps({"growth": growth, "error": float(np.abs(got - want).max()),
                  "lazy": type(g).__module__.startswith("dask")}))
"""


def test_a_gradient_over_a_memory_mapped_file_grows_memory_by_less_than_four_chunks(tmp_path):
    path = tmp_path / "X.npy"
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(path), str(ROWS), str(COLS), str(CHUNK)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    chunk_bytes = CHUNK * COLS * 8
    assert result["lazy"]
    assert result["growth"] < 4 * chunk_bytes, (
        f"peak grew by {result['growth'] / chunk_bytes:.2f} chunks of {chunk_bytes / 2**20:.1f} MiB"
    )
    assert result["error"] < 1e-12
