"""Instructions per call, two checkouts side by side: ``python -m benchmarks.instructions``.

    python -m benchmarks.instructions --base 3a9a579 --only call,nth_derivative
    python -m benchmarks.instructions --base main --only first_call --systems replay

Time on a shared two-core machine swings by 10-30% from one run to the next; the
number of instructions a call executes does not. Each row runs in a child process under
``valgrind --tool=cachegrind --cache-sim=no`` twice, once making ``--lo`` calls and once
``--hi`` calls after the same build and warm-up, so that importing and building cancel
out: instructions per call = (Ir(hi) - Ir(lo)) / (hi - lo). Hash seeds are fixed, so the
two children run the same program. Instructions are not time (a page fault, a cache miss
or a memory copy costs far more than its count says): confirm a change with
``benchmarks.ab`` on a quiet machine, and read this where time is too noisy to read.

Rows are named as in ``benchmarks.ab`` (``workload/label``); ``--only`` takes workloads
(``call`` is the fixed cost of ``fg.grad(lambda x: fnp.sin(x) * fnp.exp(x))(0.7)``),
``--systems`` the systems whose rows count, ``--quick`` the workloads' quick sizes.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

if __package__ in (None, ''):  # `python benchmarks/instructions.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.ab import _SINGLE, CALL, _cases, _checkout

_ROOT = Path(__file__).resolve().parent.parent
_IR = re.compile(r'I\s+refs:\s+([\d,]+)')


def child(tree: str, key: str, calls: int, quick: bool) -> None:
    """Build the row ``key`` from ``tree``'s funcgrad, warm it up, make ``calls`` calls."""
    sys.path.insert(0, tree)
    import gc

    from benchmarks import harness

    workload, label = key.split('/', 1)
    cfg = harness.Config(quick=quick, reps=1, min_sample_s=0.0, systems=('funcgrad', 'replay'))
    case = next(c for c in _cases(workload, cfg) if c.label == label)
    thunk = case.build()
    wrong = case.check(thunk())
    if wrong is not None:
        raise SystemExit(f'{key}: WRONG: {wrong}')
    for _ in range(2):
        thunk()
    gc.collect()
    for _ in range(calls):
        thunk()


def rows_of(only: Sequence[str], systems: Sequence[str], quick: bool) -> list[str]:
    """The row keys of ``only`` whose system is one of ``systems``."""
    from benchmarks import harness

    cfg = harness.Config(quick=quick, reps=1, min_sample_s=0.0, systems=tuple(systems))
    keys = []
    for workload in only:
        keys += [f'{workload}/{c.label}' for c in _cases(workload, cfg)
                 if c.system in systems or workload == CALL]
    return keys


def count(tree: Path, key: str, calls: int, quick: bool, python: str) -> int:
    """Instructions of one child making ``calls`` calls of row ``key``."""
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'} | _SINGLE
    env['PYTHONHASHSEED'] = '0'
    cmd = ['valgrind', '--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=/dev/null',
           python, '-m', 'benchmarks.instructions', '--child', str(tree), '--row', key,
           '--calls', str(calls)] + (['--quick'] if quick else [])
    done = subprocess.run(cmd, check=False, cwd=_ROOT, env=env, capture_output=True, text=True)
    found = _IR.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f'{key} in {tree}: exit {done.returncode}\n{done.stderr[-2000:]}')
    return int(found.group(1).replace(',', ''))


def per_call(tree: Path, key: str, lo: int, hi: int, quick: bool, python: str) -> float:
    with ThreadPoolExecutor(2) as pool:  # the two children side by side
        a, b = pool.map(lambda n: count(tree, key, n, quick, python), (lo, hi))
    return (b - a) / (hi - lo)


def _fmt(ir: float) -> str:
    return f'{ir / 1e6:.3f}M' if ir >= 1e5 else f'{ir / 1e3:.1f}k'


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m benchmarks.instructions',
                                     description=__doc__.split('\n\n')[0])
    parser.add_argument('--child', help=argparse.SUPPRESS)
    parser.add_argument('--row', help=argparse.SUPPRESS)
    parser.add_argument('--calls', type=int, help=argparse.SUPPRESS)
    parser.add_argument('--base', help='a checkout to compare against (directory or revision)')
    parser.add_argument('--head', default=str(_ROOT), help='the new checkout (default: this one)')
    parser.add_argument('--only', action='append', default=[],
                        help=f'workloads (comma-separated or repeated); default {CALL},'
                             'nth_derivative')
    parser.add_argument('--systems', default='funcgrad', help='default funcgrad')
    parser.add_argument('--lo', type=int, default=2, help='calls of the short child (2)')
    parser.add_argument('--hi', type=int, default=12, help='calls of the long child (12)')
    parser.add_argument('--quick', action='store_true', help="the workloads' quick sizes")
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.row, args.calls, args.quick)
        return 0
    if shutil.which('valgrind') is None:
        parser.error('valgrind is not installed (apt-get install valgrind)')
    only = [n.strip() for item in args.only for n in item.split(',') if n.strip()]
    only = only or [CALL, 'nth_derivative']
    systems = [s.strip() for s in args.systems.split(',') if s.strip()]
    made: list[Path] = []
    try:
        head = _checkout(args.head, made)
        base = _checkout(args.base, made) if args.base else None
        keys = rows_of(only, systems, args.quick)
        print('| row | base | head | head/base |\n|---|---|---|---|' if base else
              '| row | instructions per call |\n|---|---|')
        for key in keys:
            h = per_call(head, key, args.lo, args.hi, args.quick, sys.executable)
            if base is None:
                print(f'| {key} | {_fmt(h)} |', flush=True)
                continue
            b = per_call(base, key, args.lo, args.hi, args.quick, sys.executable)
            print(f'| {key} | {_fmt(b)} | {_fmt(h)} | {h / b:.3f} |', flush=True)
    finally:
        for where in made:
            subprocess.run(['git', 'worktree', 'remove', '--force', str(where)], cwd=_ROOT,
                           check=False, capture_output=True)
            shutil.rmtree(where.parent, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
