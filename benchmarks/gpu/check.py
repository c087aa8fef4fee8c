"""Check funcgrad on a GPU in one run, and write the report: ``python -m benchmarks.gpu.check``.

Stages, each in its own process so that a crash or a hang in one leaves the others' results:

1. ``env``: the device, the drivers and every library's version;
2. ``mlp``: MLP value_and_grad timed beside hand-written CuPy and PyTorch CUDA, alone on
   the machine (``benchmarks/gpu/mlp.py``);
3. ``table``, in ``--shards`` processes (6), beside ``pytest``: the primitive table on the GPU
   against the CPU (``benchmarks/gpu/table.py``), and the test suite with CuPy present.

Everything lands in ``--out``: ``check.log`` (written by check.sh), ``mlp.log``,
``table.log``, ``pytest.log``, ``results.json`` (every figure and every failing case) and
``RESULTS-gpu.md``, a fragment for ``benchmarks/RESULTS.md``. The report is rewritten after
every stage, so a run cut short still reports what it did; a stage past the deadline is
stopped and says so. ``--cpu-dry-run`` runs the same code on the CPU, the test suite's
strict stand-in device (or NumPy) standing in for CuPy and PyTorch on its CPU, at small
sizes.

    python -m benchmarks.gpu.check --out /tmp/gpu            # on a machine with a GPU
    python -m benchmarks.gpu.check --cpu-dry-run --out /tmp/dry --rows sin,matmul
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
STAGES = ('env', 'mlp', 'table', 'pytest')


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog='python -m benchmarks.gpu.check',
                                     description=__doc__.split('\n\n')[0])
    parser.add_argument('--cpu-dry-run', action='store_true',
                        help='a stand-in for CuPy on the CPU, PyTorch on the CPU, small sizes')
    parser.add_argument('--dry-device', choices=('standin', 'numpy'), default='standin',
                        help="the dry run's device: the strict stand-in of tests/standin.py "
                             '(default) or plain NumPy')
    parser.add_argument('--out', type=pathlib.Path, default=None,
                        help='where the logs and the report go (default $OUT, else ./gpu-out)')
    parser.add_argument('--stages', default=','.join(STAGES),
                        help=f'comma-separated stages to run (default all: {",".join(STAGES)})')
    parser.add_argument('--deadline-s', type=float, default=420.0,
                        help='wall-clock budget of the whole check; stages still running '
                             'then are stopped (default 420)')
    parser.add_argument('--mlp-budget-s', type=float, default=150.0,
                        help='most seconds for the MLP timings (default 150)')
    parser.add_argument('--shards', type=int, default=6,
                        help='processes sharing the primitive table, beside pytest '
                             '(default 6: CuPy compiles each new kernel on the CPU)')
    parser.add_argument('--rows', default='',
                        help='comma-separated row names (or name-id) of the table to check '
                             '(default every row)')
    parser.add_argument('--reps', type=int, default=None,
                        help='interleaved samples per MLP system (default 21, dry run 3)')
    parser.add_argument('--pytest-args', default='',
                        help='arguments for the pytest stage, split on spaces '
                             '(default: the whole suite)')
    # Internal: one stage, run by the orchestrator in a child process.
    parser.add_argument('--stage', choices=('env', 'mlp', 'table'), help=argparse.SUPPRESS)
    parser.add_argument('--work', type=pathlib.Path, help=argparse.SUPPRESS)
    parser.add_argument('--shard', type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument('--until', type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    stages = [s.strip() for s in args.stages.split(',') if s.strip()]
    bad = [s for s in stages if s not in STAGES]
    if bad:
        parser.error(f'unknown stage(s) {bad}; choose from {list(STAGES)}')
    args.stages = stages
    args.rows = [r.strip() for r in args.rows.split(',') if r.strip()]
    if args.out is None:
        args.out = pathlib.Path(os.environ.get('OUT') or ROOT / 'gpu-out')
    return args


# ---------------------------------------------------------------------------- child stages


def _stage(args: argparse.Namespace) -> int:
    from benchmarks.gpu import backend as backends

    work: pathlib.Path = args.work
    if args.stage == 'table':
        from benchmarks.gpu import table

        device = backends.get(args.cpu_dry_run, args.dry_device)
        count = table.run_shard(device, work / f'table-{args.shard}.jsonl', args.shard,
                                args.shards, args.rows, args.until)
        print(f'shard {args.shard}/{args.shards}: {count} cases', flush=True)
        return 0
    device = backends.get(args.cpu_dry_run, args.dry_device)
    if args.stage == 'env':
        result: Any = backends.describe(device)
    else:
        from benchmarks.gpu import mlp

        reps = args.reps or (3 if args.cpu_dry_run else 21)
        result = mlp.run(device, reps=reps, min_sample_s=0.002 if args.cpu_dry_run else 0.05)
        for size, entry in result.items():
            for system, row in entry['systems'].items():
                median = row['median_s']
                shown = f'{median * 1e3:.3f} ms' if median is not None else row['status']
                print(f'{size}: {system}: {shown}', flush=True)
            for failure in entry['failures']:
                print(f'{size}: {failure["system"]} failed:\n{failure["traceback"]}', flush=True)
    (work / f'{args.stage}.json').write_text(json.dumps(result, indent=1), encoding='utf-8')
    return 0


# ---------------------------------------------------------------------------- orchestrator


class Runner:
    """Starts the stages as child processes, under one deadline, and keeps their logs."""

    def __init__(self, args: argparse.Namespace, work: pathlib.Path):
        self.args, self.work, self.out = args, work, args.out
        self.start = time.time()
        self.deadline = self.start + args.deadline_s
        self.status: dict[str, str] = {}

    def left(self) -> float:
        return self.deadline - time.time()

    def child(self, stage: str, log: pathlib.Path, extra: Sequence[str] = ()) -> subprocess.Popen:
        cmd = [sys.executable, '-m', 'benchmarks.gpu.check', '--stage', stage,
               '--work', str(self.work), '--shards', str(self.args.shards),
               '--rows', ','.join(self.args.rows), *extra]
        if self.args.reps:
            cmd += ['--reps', str(self.args.reps)]
        if self.args.cpu_dry_run:
            cmd += ['--cpu-dry-run', '--dry-device', self.args.dry_device]
        return self._popen(cmd, log)

    def _popen(self, cmd: list[str], log: pathlib.Path) -> subprocess.Popen:
        sink = log.open('a', encoding='utf-8')
        sink.write(f'$ {" ".join(cmd)}\n')
        sink.flush()
        env = dict(os.environ, PYTHONUNBUFFERED='1')
        return subprocess.Popen(cmd, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)

    def wait(self, procs: dict[str, subprocess.Popen], budget: float) -> None:
        """Wait for every process, at most ``budget`` seconds (and never past the deadline);
        stop the rest and record each one's fate in ``self.status``."""
        until = min(time.time() + budget, self.deadline)
        for name, proc in procs.items():
            try:
                code = proc.wait(timeout=max(0.0, until - time.time()))
                self.status[name] = 'done' if code == 0 else f'exited with status {code}'
            except subprocess.TimeoutExpired:
                _stop(proc)
                self.status[name] = f'stopped at its time budget ({budget:.0f} s)'
            log(f'{name}: {self.status[name]} ({time.time() - self.start:.0f} s into the check)')


def _stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=10)
    except (subprocess.TimeoutExpired, ProcessLookupError, PermissionError):
        try:
            os.killpg(proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()


def log(message: str) -> None:
    print(f'[check {datetime.datetime.now().strftime("%H:%M:%S")}] {message}', flush=True)


def _nvidia_smi() -> str:
    if shutil.which('nvidia-smi') is None:
        return 'nvidia-smi: not found'
    try:
        done = subprocess.run(['nvidia-smi'], capture_output=True, text=True, timeout=30,
                              check=False)
        return done.stdout + done.stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f'nvidia-smi: {exc}'


def _revision() -> str:
    try:
        head = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT,
                              capture_output=True, text=True, check=False, timeout=10)
        if head.returncode == 0:
            dirty = subprocess.run(['git', 'status', '--porcelain'], cwd=ROOT,
                                   capture_output=True, text=True, check=False, timeout=10)
            return head.stdout.strip() + (' (with uncommitted changes)'
                                          if dirty.stdout.strip() else '')
    except (OSError, subprocess.TimeoutExpired):
        pass
    recorded = ROOT / '.whl' / 'revision.txt'  # written by fetch_wheels.sh, where git is
    if recorded.exists():
        return recorded.read_text(encoding='utf-8').strip() + ' (recorded by fetch_wheels.sh)'
    return 'unknown'


def parse_junit(path: pathlib.Path) -> dict:
    """Counts, failures and the device tests' outcomes from pytest's JUnit XML."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == 'testsuite' else list(root.iter('testsuite'))
    counts = {'tests': 0, 'failures': 0, 'errors': 0, 'skipped': 0}
    seconds = 0.0
    for suite in suites:
        for key in counts:
            counts[key] += int(suite.get(key, 0))
        seconds += float(suite.get('time', 0.0))
    counts['passed'] = counts['tests'] - counts['failures'] - counts['errors'] - counts['skipped']
    failures, devices = [], []
    for case in root.iter('testcase'):
        test_id = f'{case.get("classname", "")}::{case.get("name", "")}'
        outcome, message = 'passed', ''
        for tag in ('failure', 'error', 'skipped'):
            node = case.find(tag)
            if node is not None:
                outcome = {'failure': 'failed', 'error': 'error', 'skipped': 'skipped'}[tag]
                message = (node.get('message') or node.text or '').strip().splitlines()
                message = message[0][:300] if message else ''
                break
        if outcome in ('failed', 'error'):
            failures.append({'test': test_id, 'outcome': outcome, 'message': message})
        if 'test_devices' in test_id:
            devices.append({'test': test_id, 'outcome': outcome, 'message': message})
    return {'counts': counts, 'seconds': seconds, 'failures': failures, 'devices': devices}


def _read_jsonl(paths: Sequence[pathlib.Path]) -> list[dict]:
    results = []
    for path in paths:
        if path.exists():
            for line in path.read_text(encoding='utf-8').splitlines():
                try:
                    results.append(json.loads(line))
                except json.JSONDecodeError:  # a shard stopped mid-line
                    pass
    return results


def collect(runner: Runner, info: dict) -> dict:
    """Everything measured so far, as one JSON-able dict."""
    from benchmarks.gpu import table

    work = runner.work
    data: dict[str, Any] = {'info': info, 'stages': dict(runner.status),
                            'dry_run': runner.args.cpu_dry_run,
                            'elapsed_s': round(time.time() - runner.start, 1)}
    for stage in ('env', 'mlp'):
        path = work / f'{stage}.json'
        if path.exists():
            data[stage] = json.loads(path.read_text(encoding='utf-8'))
    shards = sorted(work.glob('table-*.jsonl'))
    if shards:
        results = _read_jsonl(shards)
        expected = len(table.cases(table.load_rows(), runner.args.rows))
        data['table'] = {'summary': table.summarise(results), 'expected_cases': expected,
                         'cases': [r for r in results if r['status'] != 'agree']}
    xml = work / 'pytest.xml'
    if xml.exists():
        try:
            data['pytest'] = parse_junit(xml)
        except ET.ParseError as exc:
            data['pytest'] = {'error': f'unreadable JUnit XML: {exc}'}
    return data


# ---------------------------------------------------------------------------- the report


def _ms(seconds: float | None) -> str:
    return '-' if seconds is None else f'{seconds * 1e3:.3g} ms'


def _ratio(value: float | None) -> str:
    return '-' if value is None else f'{value:.2f}x'


def render(data: dict) -> str:
    """The markdown fragment for ``benchmarks/RESULTS.md``."""
    env = data.get('env', {})
    device = env.get('device', 'device unknown (the env stage did not finish)')
    lines = [f'## GPU check: {device} (`benchmarks/gpu/check.sh`)', '']
    if data.get('dry_run'):
        lines += [(f'**CPU dry run**: {env.get("backend", "a stand-in")}; PyTorch ran on the '
                   'CPU, at small sizes. These figures say nothing about a GPU.'), '']
    info = dict(data.get('info', {}))
    info.update({k: v for k, v in env.items() if k != 'device'})
    lines += ['| | |', '|---|---|']
    lines += [f'| {key} | {value} |' for key, value in info.items()]
    lines += [f'| stages | {", ".join(f"{k}: {v}" for k, v in data.get("stages", {}).items())} |',
              f'| wall time | {data.get("elapsed_s", 0):.0f} s |', '']
    lines += _render_pytest(data.get('pytest')) + _render_table(data.get('table'))
    lines += _render_mlp(data.get('mlp'), data.get('dry_run', False))
    return '\n'.join(lines) + '\n'


def _render_pytest(pytest: dict | None) -> list[str]:
    lines = ['### Test suite with CuPy present', '']
    if not pytest:
        return lines + ['Not run, or it left no results (see pytest.log).', '']
    if 'error' in pytest:
        return lines + [pytest['error'], '']
    c = pytest['counts']
    lines.append(f'{c["passed"]} passed, {c["failures"]} failed, {c["errors"]} errors, '
                 f'{c["skipped"]} skipped, in {pytest["seconds"]:.0f} s.')
    devices = pytest['devices']
    if devices:
        by = {}
        for d in devices:
            by[d['outcome']] = by.get(d['outcome'], 0) + 1
        lines.append('`tests/test_devices.py`: '
                     + ', '.join(f'{n} {outcome}' for outcome, n in sorted(by.items())) + '.')
        skipped = [d for d in devices if d['outcome'] == 'skipped']
        if skipped:
            lines.append('Skipped there: ' + '; '.join(
                f'`{d["test"].split("::")[-1]}` ({d["message"]})' for d in skipped[:10]) + '.')
    lines.append('')
    if pytest['failures']:
        lines += ['| test | outcome | message |', '|---|---|---|']
        lines += [f'| `{f["test"]}` | {f["outcome"]} | {_cell(f["message"])} |'
                  for f in pytest['failures'][:60]]
        if len(pytest['failures']) > 60:
            lines.append(f'| ... {len(pytest["failures"]) - 60} more in pytest.log | | |')
        lines.append('')
    return lines


def _cell(text: str) -> str:
    return text.replace('|', '\\|').replace('\n', ' ')


def _render_table(table: dict | None) -> list[str]:
    lines = ['### Primitive table, GPU against CPU', '']
    if not table:
        return lines + ['Not run, or it left no results (see table.log).', '']
    s = table['summary']
    cc, rc = s['case_counts'], s['row_counts']
    missing = table['expected_cases'] - s['cases']
    lines.append(
        f'{cc.get("agree", 0)} of {table["expected_cases"]} cases agree '
        f'({rc.get("agree", 0)} of {s["rows"]} rows); {cc.get("disagree", 0)} cases disagree, '
        f'{cc.get("raise", 0)} raise, {cc.get("cpu-error", 0)} fail on NumPy itself, '
        f'{cc.get("not run", 0) + missing} not run.')
    lines += [('A case is one row at one shape and dtype: the value, a VJP, a JVP and two '
               'second-order derivatives (reverse over reverse, forward over reverse) from '
               'device inputs must be device arrays equal to NumPy\'s within rounding '
               '(float64: rtol 1e-7; float32: rtol 2e-3).'), '']
    if s['failing_rows']:
        lines += ['| row | status | cases | first failing check | error | example |',
                  '|---|---|---|---|---|---|']
        for f in s['failing_rows']:
            lines.append(f'| `{f["row"]}` | {f["status"]} | {f["cases"]} of {f["of"]} | '
                         f'{f["check"]} | {_cell(f["error"])} | `{f["example"]}` |')
        lines.append('')
    return lines


def _render_mlp(mlp_results: dict | None, dry_run: bool) -> list[str]:
    from benchmarks.gpu import mlp

    lines = ['### MLP value_and_grad', '']
    if not mlp_results:
        return lines + ['Not run, or it left no results (see mlp.log).', '']
    first = next(iter(mlp_results.values()))
    systems = list(first['systems'])
    labels = [first['systems'][s]['label'] for s in systems]
    header = ['size', *labels, *(f'{lab} / hand' for lab, s in zip(labels, systems, strict=True)
                                 if s != 'hand'), 'target (funcgrad / hand)']
    lines += ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    for size, entry in mlp_results.items():
        layers = '-'.join(map(str, entry['layers']))
        cells = [f'{layers}, {size}, {entry["dtype"]}']
        for s in systems:
            row = entry['systems'][s]
            cells.append(_ms(row['median_s']) if row['status'] == 'ok' else _cell(row['status']))
        cells += [_ratio(entry['systems'][s]['ratio_to_hand']) for s in systems if s != 'hand']
        target = mlp.TARGETS.get(size)
        funcgrad = entry['systems'].get('funcgrad', {}).get('ratio_to_hand')
        verdict = ('' if target is None or funcgrad is None
                   else (' met' if funcgrad <= target else ' **missed**'))
        cells.append(f'≤ {target}x{verdict}' if target else '-')
        lines.append('| ' + ' | '.join(cells) + ' |')
    reps = first['reps']
    sync = ('' if dry_run else ' every sample ends with a device synchronisation '
            '(cudaDeviceSynchronize) inside the timed region;')
    lines += ['', f'Medians of {reps} samples per system, taken interleaved in a shuffled order, '
              f'each after a warm-up call;{sync} float32, no TF32 (CuPy and PyTorch defaults). '
              'Results checked against '
              + '; '.join(f'{size}: {e["reference"]}' for size, e in mlp_results.items()) + '.']
    if not dry_run:
        ref = '; '.join(f'{size}: hand-written CuPy {_ms(h)}, PyTorch CUDA {_ms(t)}'
                        for size, (h, t) in mlp.REFERENCE_H200.items())
        lines.append(f'For reference, issue 7 measured on an H200: {ref}.')
    failures = [(size, f) for size, e in mlp_results.items() for f in e['failures']]
    if failures:
        lines += ['', 'Errors (tracebacks in mlp.log and results.json):']
        for size, f in failures:
            last = f['traceback'].strip().splitlines()[-1] if f['traceback'].strip() else ''
            lines.append(f'- {size}, {f["system"]}: `{_cell(last)}`')
    return lines + ['']


def write_report(runner: Runner, info: dict) -> str:
    data = collect(runner, info)
    (runner.out / 'results.json').write_text(json.dumps(data, indent=1), encoding='utf-8')
    fragment = render(data)
    (runner.out / 'RESULTS-gpu.md').write_text(fragment, encoding='utf-8')
    return fragment


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.stage:
        return _stage(args)
    args.out.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix='funcgrad-gpu-check-'))
    runner = Runner(args, work)
    info = {'date': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
            'funcgrad revision': _revision()}
    log(f'stages {",".join(args.stages)}; out {args.out}; work {work}; '
        f'deadline {args.deadline_s:.0f} s' + ('; CPU dry run' if args.cpu_dry_run else ''))
    if not args.cpu_dry_run:
        print(_nvidia_smi(), flush=True)
    try:
        if 'env' in args.stages:
            runner.wait({'env': runner.child('env', args.out / 'check-env.log')}, 60.0)
            env_log = args.out / 'check-env.log'  # folded into check.log (stdout)
            print(env_log.read_text(encoding='utf-8'), end='', flush=True)
            env_log.unlink()
            write_report(runner, info)
        if 'mlp' in args.stages:
            runner.wait({'mlp': runner.child('mlp', args.out / 'mlp.log')},
                        min(args.mlp_budget_s, runner.left() - 30.0))
            write_report(runner, info)
        procs = {}
        if 'table' in args.stages:
            for shard in range(args.shards):
                procs[f'table shard {shard}'] = runner.child(
                    'table', work / f'table-{shard}.log',
                    ['--shard', str(shard), '--until', str(runner.deadline - 20.0)])
        if 'pytest' in args.stages:
            cmd = [sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '-rfE',
                   '--junitxml', str(work / 'pytest.xml'), *args.pytest_args.split()]
            procs['pytest'] = runner._popen(cmd, args.out / 'pytest.log')
        if procs:
            runner.wait(procs, runner.left() - 10.0)
        logs = sorted(work.glob('table-*.log'))
        if logs:
            with (args.out / 'table.log').open('w', encoding='utf-8') as sink:
                for path in logs:
                    sink.write(path.read_text(encoding='utf-8'))
    finally:
        fragment = write_report(runner, info)
        shutil.rmtree(work, ignore_errors=True)
    print('\n' + fragment, flush=True)
    log(f'wrote {args.out / "RESULTS-gpu.md"} and results.json '
        f'({time.time() - runner.start:.0f} s)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
