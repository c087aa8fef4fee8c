"""Run the benchmark suite: ``python -m benchmarks.run [--quick] [--only WORKLOAD ...]``.

Prints a markdown report (machine info, then one table per workload) and writes it to
``benchmarks/RESULTS.md`` when the run is full (every workload, every system, the default
repetitions); a quick or partial run writes ``benchmarks/RESULTS-scratch.md`` instead, which
git ignores, so that the committed figures only ever come from a full run. Every installed
system runs in the same process, timed interleaved (``benchmarks/harness.py``); peers that
are not installed show as "not installed", failures as "error: ..." (tracebacks at the
end), results that disagree with the NumPy reference as "WRONG: ...".

    python -m benchmarks.run --quick                # < 1 minute
    python -m benchmarks.run --only mlp --only hvp  # a subset
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ''):  # `python benchmarks/run.py`: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import systems
from benchmarks.harness import Config, Section
from benchmarks.workloads import WORKLOADS

_HERE = Path(__file__).resolve().parent
FULL_REPS, QUICK_REPS = 11, 3
_ENV_VARS = ('OPENBLAS_CORETYPE', 'OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS',
             'XLA_FLAGS', 'PYTHONPATH')


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog='python -m benchmarks.run', description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--quick', action='store_true',
                        help='few repetitions and smaller sizes (under a minute)')
    parser.add_argument('--only', action='append', metavar='WORKLOAD', default=[],
                        help=f'run only this workload (repeatable, or comma-separated): '
                             f'{", ".join(WORKLOADS)}')
    parser.add_argument('--systems', default=','.join(systems.SYSTEMS),
                        help='comma-separated systems to run (default: all): '
                             f'{",".join(systems.SYSTEMS)}')
    parser.add_argument('--reps', type=int, default=None,
                        help='repetitions per system (default 11, --quick 3)')
    parser.add_argument('--output', type=Path, default=None,
                        help='where to write the report (default: benchmarks/RESULTS.md for '
                             'a full run, benchmarks/RESULTS-scratch.md for a quick or '
                             'partial one)')
    parser.add_argument('--verbose', action='store_true', help='progress per case on stderr')
    parser.add_argument('--no-write', action='store_true', help='print only, write no file')
    args = parser.parse_args(argv)
    only = [name.strip() for item in args.only for name in item.split(',') if name.strip()]
    unknown = [name for name in only if name not in WORKLOADS]
    if unknown:
        parser.error(f'unknown workload(s) {unknown}; choose from {list(WORKLOADS)}')
    chosen = tuple(s.strip() for s in args.systems.split(',') if s.strip())
    bad = [s for s in chosen if s not in systems.SYSTEMS]
    if bad:
        parser.error(f'unknown system(s) {bad}; choose from {list(systems.SYSTEMS)}')
    if 'numpy' not in chosen:
        chosen = ('numpy', *chosen)  # the reference every ratio needs
    args.only = only or list(WORKLOADS)
    args.systems = tuple(s for s in systems.SYSTEMS if s in chosen)
    if args.output is None:
        args.output = default_output(args)
    return args


FULL_OUTPUT = _HERE / 'RESULTS.md'
SCRATCH_OUTPUT = _HERE / 'RESULTS-scratch.md'


def default_output(args: argparse.Namespace) -> Path:
    """RESULTS.md for a full run only; anything less goes to the ignored scratch file.

    >>> default_output(parse_args([])).name, default_output(parse_args(['--quick'])).name
    ('RESULTS.md', 'RESULTS-scratch.md')
    >>> default_output(parse_args(['--only', 'mlp'])).name
    'RESULTS-scratch.md'
    """
    full = (not args.quick and args.reps in (None, FULL_REPS)
            and list(args.only) == list(WORKLOADS) and tuple(args.systems) == systems.SYSTEMS)
    return FULL_OUTPUT if full else SCRATCH_OUTPUT


def _cpu_model() -> str:
    try:
        with open('/proc/cpuinfo', encoding='utf-8', errors='replace') as cpuinfo:
            for line in cpuinfo:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or 'unknown'


def _mem_total() -> str:
    try:
        with open('/proc/meminfo', encoding='ascii') as meminfo:
            kib = int(meminfo.readline().split()[1])
        return f'{kib / 2**20:.1f} GiB'
    except (OSError, ValueError, IndexError):
        return 'unknown'


def _numpy_blas() -> str:
    import numpy as np

    try:
        blas = np.show_config(mode='dicts')['Build Dependencies']['blas']
        return f'{blas.get("name", "?")} {blas.get("version", "")}'.strip()
    except Exception:  # noqa: BLE001 - older NumPy has no dict mode; this is only a label
        return 'unknown'


def _git_revision() -> str:
    try:
        head = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=_HERE.parent,
                              capture_output=True, text=True, check=False)
        if head.returncode != 0:
            return 'no commits yet'
        dirty = subprocess.run(['git', 'status', '--porcelain'], cwd=_HERE.parent,
                               capture_output=True, text=True, check=False).stdout.strip()
        return head.stdout.strip() + (' (with uncommitted changes)' if dirty else '')
    except OSError:
        return 'unknown'


def _funcgrad_version() -> str:
    try:
        fg = systems.load('funcgrad').fg
    except systems.NotInstalled:
        return 'not installed'
    except Exception as exc:  # noqa: BLE001
        return f'import failed: {type(exc).__name__}: {exc}'
    version = systems.version('funcgrad')
    if version == 'not installed':  # imported from the source tree, not installed
        version = getattr(fg, '__version__', 'source tree')
        return f'{version} (from {Path(fg.__file__).parent})'
    return version


def _torch_threads(chosen: Sequence[str]) -> str:
    if 'torch' not in chosen:
        return ''
    try:
        return f', {systems.load("torch").get_num_threads()} threads'
    except Exception:  # noqa: BLE001 - not installed or broken: shown in the tables
        return ''


def machine_info(args: argparse.Namespace) -> list[tuple[str, str]]:
    import numpy as np

    affinity = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else '?'
    return [
        ('date', datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')),
        ('mode', ('quick' if args.quick else 'full') + f', {args.reps} repetitions, '
                 f'workloads: {", ".join(args.only)}'),
        ('CPU', _cpu_model()),
        ('cores', f'{os.cpu_count()} logical, {affinity} usable'),
        ('memory', _mem_total()),
        ('OS', platform.platform()),
        ('Python', f'{platform.python_implementation()} {platform.python_version()} '
                   + f'({sys.executable})'),
        ('numpy', f'{np.__version__} ({_numpy_blas()})'),
        ('funcgrad', _funcgrad_version()),
        ('autograd', systems.version('autograd')),
        ('torch', systems.version('torch') + _torch_threads(args.systems)),
        ('jax / jaxlib', f'{systems.version("jax")} / {systems.version("jaxlib")}'),
        ('git', _git_revision()),
        *((name, os.environ.get(name, 'unset')) for name in _ENV_VARS),
    ]


def render(info: list[tuple[str, str]], sections: list[Section],
           failures: list[tuple[str, str, str]], elapsed: float) -> str:
    intro = ('Generated by `python -m benchmarks.run`; see `benchmarks/README.md`. Times are '
             'medians over repetitions taken round-robin across systems.')
    parts = ['# funcgrad benchmark results', '', intro, '',
             '| | |', '|---|---|']
    parts += [f'| {key} | {value} |' for key, value in info]
    parts += [f'| wall time | {elapsed:.0f} s |', '']
    parts += [section.markdown() for section in sections]
    if failures:
        parts += ['## Failures', '']
        for workload, label, text in failures:
            parts += [f'### {workload}: {label}', '', '```', text.rstrip(), '```', '']
    return '\n'.join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    args.reps = args.reps or (QUICK_REPS if args.quick else FULL_REPS)
    cfg = Config(quick=args.quick, reps=args.reps,
                 min_sample_s=0.01 if args.quick else 0.05, systems=args.systems,
                 python=sys.executable, child_timeout_s=150.0 if args.quick else 600.0,
                 verbose=args.verbose)
    start = time.perf_counter()
    info = machine_info(args)
    print('\n'.join(f'{key}: {value}' for key, value in info), end='\n\n', flush=True)
    sections = []
    for name in args.only:
        began = time.perf_counter()
        section = WORKLOADS[name].run(cfg)
        sections.append(section)
        print(section.markdown(), flush=True)
        print(f'({name}: {time.perf_counter() - began:.1f} s)\n', file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - start
    report = render(info, sections, cfg.failures, elapsed)
    if cfg.failures:
        print('## Failures\n', flush=True)
        for workload, label, text in cfg.failures:
            last = text.rstrip().splitlines()[-1] if text.strip() else ''
            print(f'- {workload}: {label}: {last}')
        print(f'\n(full tracebacks in {args.output})' if not args.no_write else '')
    if not args.no_write:
        args.output.write_text(report, encoding='utf-8')
        print(f'\nwrote {args.output} ({elapsed:.0f} s)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
