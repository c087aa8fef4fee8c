"""Two checkouts of funcgrad timed side by side, interleaved: ``python -m benchmarks.ab``.

    python -m benchmarks.ab --base 5ddca74 --only overhead,fanin,nth_derivative
    python -m benchmarks.ab --base /tmp/old --head . --only call --reps 21

Each checkout runs in a worker process of its own, which imports *its* funcgrad and
this checkout's workloads (the same math on both sides). The workers build and check
every row the workloads time (``harness.time_cases``: memory rows are not compared), then
the driver asks them for samples in turn: every repetition takes one sample of every row
from both checkouts, in a shuffled (seeded) order, the checkout that goes first
alternating, so that drift of the machine hits both alike. Per row it prints the median
of each side and the median of the paired ratios head/base with their interquartile range:
a row is within noise when that range holds 1. The workers run with one BLAS and one
OpenMP thread: a pool left spinning by one worker would otherwise slow the other. On a
loaded machine ``--clock cpu`` times the main thread's CPU time instead of wall time.

``--base`` and ``--head`` are directories holding a ``funcgrad/`` package, or git
revisions of this repository, checked out for the run in a temporary worktree.
``--only call`` times the fixed cost of one combinator call,
``fg.grad(lambda x: fnp.sin(x) * fnp.exp(x))(0.7)``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ''):  # `python benchmarks/ab.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

_ROOT = Path(__file__).resolve().parent.parent
_SINGLE = {name: '1' for name in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS',
                                  'NUMEXPR_NUM_THREADS')}
CALL = 'call'  # the pseudo-workload of the fixed cost per combinator call


class _Captured(Exception):
    """Raised in a worker by the stand-in ``time_cases``: the cases are built, stop there."""


# -- the worker: one checkout's funcgrad, this checkout's workloads ---------------------


def _call_cases(cfg) -> list:
    import numpy

    from benchmarks import harness
    from benchmarks.systems import load

    def build():
        fg, fnp = load('funcgrad').fg, load('funcgrad').fnp
        g = fg.grad(lambda x: fnp.sin(x) * fnp.exp(x))
        return lambda: g(0.7)

    want = numpy.exp(0.7) * (numpy.cos(0.7) + numpy.sin(0.7))
    return [harness.Case('funcgrad', 'funcgrad', build, harness.checker(want, rtol=1e-12))]


def _cases(workload: str, cfg) -> list:
    """The cases ``workload`` hands to ``harness.time_cases`` (its first call)."""
    if workload == CALL:
        return _call_cases(cfg)
    from benchmarks import harness
    from benchmarks.workloads import WORKLOADS

    captured: list = []

    def capture(cases, cfg, name=''):
        captured.extend(cases)
        raise _Captured

    real, harness.time_cases = harness.time_cases, capture
    try:
        WORKLOADS[workload].run(cfg)
    except _Captured:
        pass
    finally:
        harness.time_cases = real
    return captured


def _sample(ready, clock: str) -> float:
    """One sample of a prepared row: the harness's (wall time), or the main thread's CPU
    time over the same calls (``clock='cpu'``: blind to other processes' load)."""
    if clock == 'wall':
        return ready.sample()
    import gc
    import time

    gc.collect()
    for _ in range(ready.warmup):
        ready.thunk()
    start = time.thread_time()
    for _ in range(ready.number):
        ready.thunk()
    return (time.thread_time() - start) / ready.number


def worker(tree: str) -> None:
    """Serve one checkout: read JSON commands on stdin, answer one JSON line each."""
    sys.path.insert(0, tree)  # before this checkout's own funcgrad
    import gc

    from benchmarks import harness

    ready: dict = {}
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd['op'] == 'prepare':
            cfg = harness.Config(quick=cmd['quick'], reps=1, min_sample_s=cmd['min_sample_s'],
                                 systems=tuple(cmd['systems']))
            rows = []
            for workload in cmd['only']:
                for case in _cases(workload, cfg):
                    key = f'{workload}/{case.label}'
                    try:
                        got = harness._prepare(case, cfg)
                        status = got if isinstance(got, str) else 'ok'
                    except Exception as exc:  # noqa: BLE001 - a cell, never a crash
                        status = harness.error_cell(exc)
                    if status == 'ok':
                        ready[key] = got
                    rows.append([key, status])
            gc.collect()
            gc.freeze()  # what exists now (imports, built functions) costs no collection
            answer = {'rows': rows, 'funcgrad': sys.modules['funcgrad'].__file__}
        elif cmd['op'] == 'sample':
            answer = {'seconds': _sample(ready[cmd['key']], cmd['clock'])}
        else:
            return
        print(json.dumps(answer), flush=True)


# -- the driver -------------------------------------------------------------------------


class _Worker:
    def __init__(self, tree: Path, python: str):
        env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'} | _SINGLE
        self.proc = subprocess.Popen(
            [python, '-m', 'benchmarks.ab', '--worker', str(tree)], cwd=_ROOT, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, **cmd) -> dict:
        self.proc.stdin.write(json.dumps(cmd) + '\n')
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f'benchmark worker exited with {self.proc.wait()}')
        return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


def _checkout(spec: str, stack: list) -> Path:
    """A directory holding ``funcgrad/``: ``spec`` itself, or a worktree of revision ``spec``."""
    path = Path(spec).expanduser()
    if (path / 'funcgrad').is_dir():
        return path.resolve()
    where = Path(tempfile.mkdtemp(prefix='funcgrad-ab-')) / 'tree'
    subprocess.run(['git', 'worktree', 'add', '--detach', str(where), spec], cwd=_ROOT,
                   check=True, capture_output=True)
    stack.append(where)
    return where


def _quantiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) < 2:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method='inclusive')
    return q1, q2, q3


def compare(samples: dict[str, dict[str, list[float]]]) -> list[list[str]]:
    """Rows ``[row, base, head, head/base (IQR)]`` from paired samples per row and side.

    >>> compare({'fanin/funcgrad': {'base': [2.0, 2.0, 2.0], 'head': [1.0, 1.0, 1.5]}})
    [['fanin/funcgrad', '2.00 s', '1.00 s', '0.50 (0.50-0.62)']]
    """
    from benchmarks.harness import fmt_time

    rows = []
    for key, sides in samples.items():
        base, head = sides['base'], sides['head']
        q1, q2, q3 = _quantiles([h / b for b, h in zip(base, head, strict=True)])
        rows.append([key, fmt_time(statistics.median(base)), fmt_time(statistics.median(head)),
                     f'{q2:.2f} ({q1:.2f}-{q3:.2f})'])
    return rows


def run(base: Path, head: Path, only: Sequence[str], systems: Sequence[str], reps: int,
        quick: bool, python: str, clock: str = 'wall') -> tuple[list[list[str]], dict]:
    """Time every row of ``only`` in both checkouts; the table rows and where each side's
    funcgrad came from."""
    workers = {'base': _Worker(base, python), 'head': _Worker(head, python)}
    try:
        prep = {'op': 'prepare', 'only': list(only), 'systems': list(systems), 'quick': quick,
                'min_sample_s': 0.01 if quick else 0.05}
        answers = {side: w.ask(**prep) for side, w in workers.items()}
        status = {side: dict(a['rows']) for side, a in answers.items()}
        keys = [k for k, s in answers['head']['rows'] if s == 'ok' and status['base'].get(k) == 'ok']
        samples = {k: {'base': [], 'head': []} for k in keys}
        order = random.Random(','.join(keys))
        for rep in range(reps):
            order.shuffle(keys)
            for key in keys:
                for side in (('base', 'head') if rep % 2 == 0 else ('head', 'base')):
                    samples[key][side].append(workers[side].ask(op='sample', key=key, clock=clock)['seconds'])
        rows = compare({k: samples[k] for k in sorted(samples)})
        for key in sorted(set(status['base']) | set(status['head'])):
            if key not in samples:
                rows.append([key, status['base'].get(key, '-'), status['head'].get(key, '-'), '-'])
        return rows, {side: a['funcgrad'] for side, a in answers.items()}
    finally:
        for w in workers.values():
            w.close()


def main(argv: Sequence[str] | None = None) -> int:
    from benchmarks import systems as known
    from benchmarks.workloads import WORKLOADS

    parser = argparse.ArgumentParser(prog='python -m benchmarks.ab',
                                     description=__doc__.split('\n\n')[0])
    parser.add_argument('--worker', help=argparse.SUPPRESS)
    parser.add_argument('--base', help='the checkout to compare against: a directory or a '
                                       'git revision')
    parser.add_argument('--head', default=str(_ROOT), help='the new checkout (default: this one)')
    parser.add_argument('--only', action='append', default=[],
                        help=f'workloads (repeatable or comma-separated): {CALL}, '
                             f'{", ".join(WORKLOADS)}; default: {CALL},overhead,fanin,'
                             'nth_derivative')
    parser.add_argument('--systems', default='funcgrad',
                        help='systems whose rows to compare (default funcgrad)')
    parser.add_argument('--reps', type=int, default=None, help='samples per row and side '
                                                               '(default 11, --quick 5)')
    parser.add_argument('--quick', action='store_true', help="the workloads' quick sizes")
    parser.add_argument('--clock', choices=('wall', 'cpu'), default='wall',
                        help="wall time (the harness's samples), or the main thread's CPU time "
                             '(steadier on a loaded machine; blind to waits and other threads)')
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return 0
    if not args.base:
        parser.error('--base is required')
    only = [n.strip() for item in args.only for n in item.split(',') if n.strip()]
    only = only or [CALL, 'overhead', 'fanin', 'nth_derivative']
    unknown = [n for n in only if n != CALL and n not in WORKLOADS]
    if unknown:
        parser.error(f'unknown workload(s) {unknown}')
    chosen = [s.strip() for s in args.systems.split(',') if s.strip()]
    bad = [s for s in chosen if s not in known.SYSTEMS]
    if bad:
        parser.error(f'unknown system(s) {bad}')
    made: list[Path] = []
    try:
        base, head = _checkout(args.base, made), _checkout(args.head, made)
        rows, origin = run(base, head, only, chosen, args.reps or (5 if args.quick else 11),
                           args.quick, sys.executable, args.clock)
    finally:
        for where in made:
            subprocess.run(['git', 'worktree', 'remove', '--force', str(where)], cwd=_ROOT,
                           check=False, capture_output=True)
            shutil.rmtree(where.parent, ignore_errors=True)
    print(f'base: {origin["base"]}\nhead: {origin["head"]}\n')
    print('| row | base | head | head/base (IQR) |\n|---|---|---|---|')
    for row in rows:
        print('| ' + ' | '.join(row) + ' |')
    return 0


if __name__ == '__main__':
    sys.exit(main())
