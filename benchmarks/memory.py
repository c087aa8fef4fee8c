"""Memory measurement, each in a fresh child process so no run sees another's leftovers.

Two meters, chosen per system:

- ``tracemalloc``: Python's allocation tracer. It sees every Python object and every NumPy
  data buffer (NumPy reports its allocations to it), so it is exact for systems whose graph
  is Python objects holding NumPy arrays (hand-written NumPy, funcgrad, HIPS autograd). It
  does not see memory allocated in C++ by PyTorch or XLA.
- ``rss``: the process's resident set size from ``/proc/self/status`` (``VmRSS`` now,
  ``VmHWM`` for the peak, which writing ``5`` to ``/proc/self/clear_refs`` resets). It sees
  everything, at page granularity. The child runs with ``MALLOC_MMAP_THRESHOLD_`` fixed at
  64 KiB so that glibc hands large freed blocks straight back to the OS and RSS follows
  what is live rather than what the allocator keeps.

A workload module offers ``memory_probe(system, meter, params) -> dict``; the parent calls
``run_children`` and the child runs ``python -m benchmarks.memory WORKLOAD SYSTEM MODE PARAMS``
and prints one ``RESULT_JSON:`` line.

>>> meter = Meter('tracemalloc'); meter.start()
>>> before = meter.current()
>>> import numpy as np; block = np.ones(1000)
>>> meter.current() - before >= 8000
True
>>> meter.stop()
"""

from __future__ import annotations

import concurrent.futures
import gc
import importlib
import json
import os
import subprocess
import sys
import traceback
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MODES = ('tracemalloc', 'rss', 'none')
_RESULT = 'RESULT_JSON:'
_REPO_ROOT = Path(__file__).resolve().parent.parent


def _status_kib(field: str) -> int:
    with open('/proc/self/status', encoding='ascii') as status:
        for line in status:
            if line.startswith(field + ':'):
                return int(line.split()[1])
    raise OSError(f'{field} not found in /proc/self/status')


class Meter:
    """Bytes held now and at peak, by ``tracemalloc``, by ``rss``, or not at all (``none``)."""

    def __init__(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f'unknown memory mode {mode!r}; expected one of {MODES}')
        self.mode = mode

    def start(self) -> None:
        if self.mode == 'tracemalloc':
            tracemalloc.start()

    def stop(self) -> None:
        if self.mode == 'tracemalloc':
            tracemalloc.stop()

    def current(self) -> int:
        """Bytes held now (after collecting garbage, so only what is reachable counts)."""
        gc.collect()
        if self.mode == 'tracemalloc':
            return tracemalloc.get_traced_memory()[0]
        if self.mode == 'rss':
            return _status_kib('VmRSS') * 1024
        return 0

    def reset_peak(self) -> None:
        gc.collect()
        if self.mode == 'tracemalloc':
            tracemalloc.reset_peak()
        elif self.mode == 'rss':
            with open('/proc/self/clear_refs', 'w', encoding='ascii') as clear:
                clear.write('5')  # resets VmHWM to the current RSS

    def peak(self) -> int:
        """Peak bytes since the last ``reset_peak``."""
        if self.mode == 'tracemalloc':
            return tracemalloc.get_traced_memory()[1]
        if self.mode == 'rss':
            return _status_kib('VmHWM') * 1024
        return 0


# ---------------------------------------------------------------------------- parent side


def modes_for(python_graph: bool, quick: bool) -> tuple[str, ...]:
    """The meters to run for a system: tracemalloc is exact for Python-object graphs, RSS
    is the only view into C++ allocators; ``--quick`` skips the redundant RSS run.

    >>> modes_for(True, False), modes_for(True, True), modes_for(False, True)
    (('tracemalloc', 'rss'), ('tracemalloc',), ('rss',))
    """
    if not python_graph:
        return ('rss',)
    return ('tracemalloc',) if quick else ('tracemalloc', 'rss')


def child_env() -> dict[str, str]:
    """The environment of a child: ours, plus the repo on the path and a fixed mmap
    threshold (see the module docstring)."""
    env = dict(os.environ)
    env['MALLOC_MMAP_THRESHOLD_'] = '65536'
    paths = [str(_REPO_ROOT)] + [p for p in env.get('PYTHONPATH', '').split(os.pathsep) if p]
    env['PYTHONPATH'] = os.pathsep.join(paths)
    return env


def run_child(python: str, workload: str, system: str, mode: str, params: dict[str, Any],
              timeout_s: float) -> dict[str, Any]:
    """Run one probe in a fresh interpreter; its dict, or ``{'error': ..., 'traceback': ...}``."""
    command = [python, '-m', 'benchmarks.memory', workload, system, mode, json.dumps(params)]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                              env=child_env(), cwd=_REPO_ROOT, check=False)
    except subprocess.TimeoutExpired:
        return {'error': f'timeout after {timeout_s:.0f} s', 'traceback': ''}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(_RESULT):
            return json.loads(line[len(_RESULT):])
    tail = (proc.stderr.strip().splitlines() or ['(no output)'])[-1]
    return {'error': f'error: child exited with {proc.returncode}: {tail}'[:110],
            'traceback': proc.stderr[-4000:]}


def run_children(python: str, jobs: Sequence[tuple[str, str, str, dict[str, Any]]],
                 timeout_s: float, parallel: int = 2) -> list[dict[str, Any]]:
    """``run_child`` for every ``(workload, system, mode, params)``, ``parallel`` at a time
    (memory does not depend on what other processes do; time is never measured here)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=parallel) as pool:
        futures = [pool.submit(run_child, python, *job, timeout_s) for job in jobs]
        return [future.result() for future in futures]


# ---------------------------------------------------------------------------- child side


def main(argv: Sequence[str]) -> int:
    """Child entry point: run one workload's ``memory_probe`` and print its result."""
    workload, system, mode, params = argv[0], argv[1], argv[2], json.loads(argv[3])
    try:
        from benchmarks.harness import error_cell

        module = importlib.import_module(f'benchmarks.workloads.{workload}')
        result = module.memory_probe(system, Meter(mode), params)
    except Exception as exc:  # noqa: BLE001 - reported to the parent as a cell
        text = ''.join(traceback.format_exception(exc))
        print(text, file=sys.stderr)
        result = {'error': error_cell(exc), 'traceback': text}
    print(_RESULT + json.dumps(result), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
