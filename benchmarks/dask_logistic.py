"""Logistic regression out of core on Dask: funcgrad against a hand-written Dask gradient.

The data are float64 files: ``X``, ``rows x 20`` (10⁷ rows by default: 1.6 GB),
and the labels ``y`` (0 or 1, drawn from a logistic model), read as Dask
arrays in chunks of 10⁶ rows by plain file reads (no memory map, whose touched
pages would count in the resident set).  The gradient of
the mean logistic loss at a fixed ``w`` is computed by

- ``funcgrad``: ``fg.grad(loss)(w, X, y)`` on the Dask arrays, then ``.compute()``;
- ``dask``: the hand-written gradient ``X.T @ (sigmoid(X @ w) - y) / n``.

Each measurement is a fresh child process (``--child``), the systems
alternating run by run, so that both see the same machine.  Time runs and
memory runs are separate (``tracemalloc`` slows Python down): the time covers
building the graph and computing it on Dask's threaded scheduler; the memory
is the peak resident set (``VmHWM``, reset first) and the peak growth of what
Python and NumPy allocate (``tracemalloc``) during the compute.  The result of
each run is checked against the other system's (1e-10).  Targets (issue 11):
funcgrad at most 1.3x the hand-written time and 1.5x its peak memory.

    python -m benchmarks.dask_logistic                  # 10^7 rows, 3 runs each
    python -m benchmarks.dask_logistic --rows 1000000 --chunk 100000 --reps 5

The file is written once (``--file``, default in the temporary directory) and
reused.  Time only a quiet machine: on two cores another process's load swings
every figure; the ratios of interleaved runs are the robust part.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

COLS = 20


class RowReader:
    """A raw float64 file of ``shape``, read on demand by blocks of rows (what
    ``da.from_array`` slices)."""

    def __init__(self, path: str, shape: tuple):
        import numpy as np

        self.path, self.shape, self.dtype, self.ndim = path, shape, np.dtype("float64"), len(shape)

    def __getitem__(self, index):
        import numpy as np

        index = index if isinstance(index, tuple) else (index,)
        start, stop, step = index[0].indices(self.shape[0])
        assert step == 1, "rows are read in contiguous blocks"
        width = self.shape[1] if self.ndim == 2 else 1
        with open(self.path, "rb") as f:
            f.seek(start * width * 8)
            block = np.fromfile(f, dtype=self.dtype, count=(stop - start) * width)
        return block.reshape((stop - start,) + self.shape[1:])[(slice(None),) + index[1:]]


def write_files(x_path: Path, y_path: Path, rows: int, chunk: int) -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    w_true = np.linspace(-1.0, 1.0, COLS)
    with open(x_path, "wb") as fx, open(y_path, "wb") as fy:
        for start in range(0, rows, chunk):
            block = rng.standard_normal((min(chunk, rows - start), COLS))
            p = 1.0 / (1.0 + np.exp(-(block @ w_true)))
            block.tofile(fx)
            (rng.random(len(block)) < p).astype("float64").tofile(fy)


def _status_kib(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(field)


def child(system: str, mode: str, path: str, rows: int, chunk: int) -> dict:
    import dask
    import dask.array as da
    import numpy as np

    import funcgrad as fg
    import funcgrad.numpy as fnp

    X = da.from_array(RowReader(path, (rows, COLS)), chunks=(chunk, COLS), asarray=True)
    y = da.from_array(RowReader(path + ".y", (rows,)), chunks=chunk, asarray=True)
    w = np.linspace(-0.5, 0.5, COLS)

    def loss(w, X, y):
        z = X @ w
        return fnp.mean(fg.nn.softplus(z) - y * z)

    def funcgrad():
        return fg.grad(loss)(w, X, y)

    def hand_written():
        p = 1.0 / (1.0 + da.exp(-(X @ w)))
        return X.T @ (p - y) / X.shape[0]

    build = {"funcgrad": funcgrad, "dask": hand_written}[system]
    with open("/proc/self/clear_refs", "w") as f:  # VmHWM from here on
        f.write("5")
    rss_before = _status_kib("VmRSS")
    if mode == "memory":
        tracemalloc.start()
    start = time.perf_counter()
    with dask.config.set(scheduler="threads"):
        g = build().compute()
    elapsed = time.perf_counter() - start
    out = {"system": system, "mode": mode, "time": elapsed, "grad": g.tolist(),
           "peak_rss_mb": _status_kib("VmHWM") / 1024,
           "rss_growth_mb": (_status_kib("VmHWM") - rss_before) / 1024}
    if mode == "memory":
        out["traced_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return out


def run_child(system: str, mode: str, args) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.dask_logistic", "--child", system, "--mode", mode,
           "--file", str(args.file), "--rows", str(args.rows), "--chunk", str(args.chunk)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parent.parent)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10**7)
    parser.add_argument("--chunk", type=int, default=10**6)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--file", type=Path, default=None)
    parser.add_argument("--child", choices=["funcgrad", "dask"])
    parser.add_argument("--mode", choices=["time", "memory"], default="time")
    args = parser.parse_args(argv)
    if args.file is None:
        args.file = Path(tempfile.gettempdir()) / f"funcgrad-logistic-{args.rows}x{COLS}.f64"
    if args.child:
        print(json.dumps(child(args.child, args.mode, str(args.file), args.rows, args.chunk)))
        return
    y_file = Path(str(args.file) + ".y")
    if not (args.file.exists() and args.file.stat().st_size == args.rows * COLS * 8
            and y_file.exists() and y_file.stat().st_size == args.rows * 8):
        print(f"writing {args.file} ({args.rows * COLS * 8 / 1e9:.2f} GB)...", file=sys.stderr)
        write_files(args.file, y_file, args.rows, args.chunk)
    runs = {"funcgrad": [], "dask": []}
    for rep in range(args.reps):
        order = ["funcgrad", "dask"] if rep % 2 == 0 else ["dask", "funcgrad"]
        for mode in ("time", "memory"):
            for system in order:
                runs[system].append(run_child(system, mode, args))
                print(f"rep {rep} {mode:6} {system:8} {runs[system][-1]['time']:.2f} s",
                      file=sys.stderr)
    import numpy as np

    ref = np.asarray(runs["dask"][0]["grad"])
    for r in runs["funcgrad"] + runs["dask"]:
        err = float(np.abs(np.asarray(r["grad"]) - ref).max() / np.abs(ref).max())
        assert err < 1e-10, f"{r['system']} disagrees: relative error {err:.1e}"

    def med(system, mode, key):
        return statistics.median(r[key] for r in runs[system] if r["mode"] == mode)

    rows = [("time (s)", "time", "time"), ("peak RSS (MB)", "memory", "peak_rss_mb"),
            ("RSS growth (MB)", "memory", "rss_growth_mb"),
            ("traced peak (MB)", "memory", "traced_peak_mb")]
    print(f"\nLogistic regression gradient, X of {args.rows:,} x {COLS} float64 and labels, "
          f"chunks of {args.chunk:,} rows, {args.reps} interleaved runs each (medians); "
          f"{os.cpu_count()} cores, machine possibly shared.\n")
    print("| measure | funcgrad | hand-written Dask | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for label, mode, key in rows:
        a, b = med("funcgrad", mode, key), med("dask", mode, key)
        print(f"| {label} | {a:.2f} | {b:.2f} | {a / b:.2f}x |")
    per_run = [f["time"] / d["time"] for f, d in zip(
        [r for r in runs["funcgrad"] if r["mode"] == "time"],
        [r for r in runs["dask"] if r["mode"] == "time"], strict=True)]
    print(f"\ntime ratio of each interleaved pair: {', '.join(f'{x:.2f}' for x in per_run)}")


if __name__ == "__main__":
    main()
