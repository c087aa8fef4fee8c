"""Out of core: a gradient over a memory-mapped file never holds the data whole.

A 10⁶ × 20 float64 file (153 MiB) is read as a Dask array in 10⁵-row chunks
(15 MiB each); the gradient of a logistic loss over it grows the peak of the
memory Python and NumPy allocate (``tracemalloc``, which NumPy reports to) by
less than four chunks while it is computed -- where holding the data would
take ten.  Each measurement runs in a fresh interpreter, so that nothing else
counts, and its result equals NumPy funcgrad's on the whole array.

The second test checks what ``docs/dask.md`` says of reverse mode: a global
reduction (a mean over all rows) before the per-chunk work holds every chunk,
and computing it first (two passes: ``persist``, or ``stats=`` of
``fg.dask.data_parallel_grad``) does not.
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


CHUNK_BYTES = CHUNK * COLS * 8


@pytest.fixture(scope="module")
def on_disk(tmp_path_factory):
    import numpy as np

    path = tmp_path_factory.mktemp("ooc") / "X.npy"
    out = np.lib.format.open_memmap(path, mode="w+", dtype="float64", shape=(ROWS, COLS))
    rng = np.random.default_rng(0)
    for i in range(0, ROWS, CHUNK):  # written a chunk at a time: never whole in memory
        out[i:i + CHUNK] = rng.standard_normal((min(CHUNK, ROWS - i), COLS))
    out.flush()
    del out
    return path


def _run(script, path, *extra):
    run = subprocess.run(
        [sys.executable, "-c", script, str(path), str(ROWS), str(COLS), str(CHUNK), *extra],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_gradient_over_a_memory_mapped_file_grows_memory_by_less_than_four_chunks(on_disk):
    result = _run(SCRIPT, on_disk)
    chunk_bytes = CHUNK_BYTES
    assert result["lazy"]
    assert result["growth"] < 4 * chunk_bytes, (
        f"peak grew by {result['growth'] / chunk_bytes:.2f} chunks of {chunk_bytes / 2**20:.1f} MiB"
    )
    assert result["error"] < 1e-12


TWO_PASS = """
import json, sys, tracemalloc
import numpy as np, dask.array as da
import funcgrad as fg, funcgrad.numpy as fnp

path, rows, cols, chunk = sys.argv[1], *map(int, sys.argv[2:5])

def loss(w, X, y, mu):  # rows centred by the mean over *all* rows
    z = (X - mu) @ w
    return fnp.mean(fg.nn.softplus(z) - y * z)

w = np.linspace(-0.5, 0.5, cols)
growth, grads = {}, {}
for way in ("one pass", "persisted", "data-parallel stats"):
    # chunks that are computed (read and scaled), as a decoded file's would be
    X = da.from_array(np.load(path, mmap_mode="r"), chunks=(chunk, cols)) * 0.5
    y = (X[:, 0] > 0).astype("float64")
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    if way == "data-parallel stats":
        g = fg.dask.data_parallel_grad(loss, w, X, y, stats=lambda X, y: X.mean(axis=0))
    else:
        mu = X.mean(axis=0)
        g = fg.grad(loss)(w, X, y, mu.persist() if way == "persisted" else mu)
    grads[way] = g.compute()
    growth[way] = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
spread = max(float(np.abs(g - grads["one pass"]).max()) for g in grads.values())
print(json.dumps({"growth": growth, "spread": spread}))
"""


def test_a_global_reduction_first_holds_every_chunk_unless_computed_first(on_disk):
    result = _run(TWO_PASS, on_disk)
    chunks = {way: g / CHUNK_BYTES for way, g in result["growth"].items()}
    assert chunks["one pass"] > 8, chunks  # every chunk waits for the mean (10 in all)
    assert chunks["persisted"] < 6, chunks  # the mean first: each chunk read, used, freed
    assert chunks["data-parallel stats"] < 6, chunks
    assert result["spread"] < 1e-12
