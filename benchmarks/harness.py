"""Timing, correctness checks and report tables shared by every workload.

A workload describes one ``Case`` per row: how to build a zero-argument function (the
"thunk" that is timed) and how to check what it returns. ``time_cases`` builds and checks
every case, then times them interleaved, one sample per case per repetition in a shuffled
order, each sample after a warm-up call and from a quiet process, so that drift of the
machine (frequency, other load) hits every system alike and none gains or loses from the
system that ran before it; it reports medians.

>>> import numpy as np
>>> case = Case('numpy', 'numpy', lambda: (lambda: np.ones(3)), lambda out: None)
>>> cfg = Config(quick=True, reps=3, min_sample_s=0.001)
>>> time_cases([case], cfg)['numpy'].status
'ok'
"""

from __future__ import annotations

import gc
import math
import os
import random
import statistics
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchmarks.systems import NotInstalled

Thunk = Callable[[], Any]

# A first call this long sets one call per sample without a calibration call, unless the
# system compiles on its first call (then the first call says nothing about the second).
_LONG_CALL_S = 1.0
_COMPILING = ('jax.jit', 'replay')  # the first call compiles, or traces (fg.replay)


@dataclass
class Config:
    """What a run was asked to do; ``failures`` collects tracebacks for the report."""

    quick: bool
    reps: int
    min_sample_s: float
    systems: tuple[str, ...] = ()
    python: str = ''
    child_timeout_s: float = 600.0
    verbose: bool = False
    failures: list[tuple[str, str, str]] = field(default_factory=list)

    def log(self, message: str) -> None:
        """Progress for ``--verbose``, on stderr so the report on stdout stays clean."""
        if self.verbose:
            print(message, file=sys.stderr, flush=True)

    def record_failure(self, workload: str, label: str, exc: BaseException) -> str:
        """Keep the traceback for the report; return the short text for a table cell."""
        if isinstance(exc, NotInstalled):
            return 'not installed'
        text = ''.join(traceback.format_exception(exc))
        self.failures.append((workload, label, text))
        return error_cell(exc)


@dataclass(frozen=True)
class Case:
    """One row: ``build()`` returns the thunk to time, ``check(out)`` returns None or why
    the thunk's result is wrong. ``system`` is the key in ``systems.SYSTEMS``. ``sync``,
    for asynchronous devices, waits until the work queued so far is done; it is called
    inside the timed region, once per sample."""

    label: str
    system: str
    build: Callable[[], Thunk]
    check: Callable[[Any], str | None]
    sync: Callable[[], Any] | None = None


@dataclass(frozen=True)
class Outcome:
    """The result of a row: ``status`` is 'ok', 'not installed', 'error: ...' or 'WRONG: ...';
    ``seconds`` is the median time of one call when ``status == 'ok'``."""

    status: str
    seconds: float | None = None
    samples: tuple[float, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == 'ok'


@dataclass
class Section:
    """One workload's part of the report: a markdown table plus notes under it."""

    name: str
    title: str
    what: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        lines = [f'## {self.title} (`--only {self.name}`)', '', self.what, '']
        lines.append('| ' + ' | '.join(self.header) + ' |')
        lines.append('|' + '|'.join('---' for _ in self.header) + '|')
        for row in self.rows:
            lines.append('| ' + ' | '.join(_escape(cell) for cell in row) + ' |')
        if self.notes:
            lines.append('')
            lines.extend(f'- {note}' for note in self.notes)
        return '\n'.join(lines) + '\n'


def _escape(cell: str) -> str:
    return cell.replace('|', '\\|').replace('\n', ' ')


def error_cell(exc: BaseException) -> str:
    """A one-line cell for an exception: ``error: TypeError: message`` (shortened)."""
    if isinstance(exc, NotInstalled):
        return 'not installed'
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ''
    text = f'error: {type(exc).__name__}: {message}' if message else f'error: {type(exc).__name__}'
    return text if len(text) <= 110 else text[:107] + '...'


def time_cases(cases: Sequence[Case], cfg: Config, workload: str = '') -> dict[str, Outcome]:
    """Build, check and calibrate every case, then time them interleaved; medians per label.

    A case that cannot be built or raises is an error; one whose result fails its check is
    WRONG and is not timed. Each sample repeats the thunk enough times to last at least
    ``cfg.min_sample_s`` (calibrated per case) and is divided by that count.

    Every repetition takes one sample of every case, in a freshly shuffled order, and each
    sample starts from the same state whoever ran before it: garbage collected, the process
    quiet (no thread pool of the previous system still spinning: OpenBLAS's workers spin
    for about 0.1 s after each call and take a core from whatever runs next), then one
    untimed warm-up call of the case itself, then the timed calls. Calibration and warm-up
    calls are never samples.
    """
    outcomes: dict[str, Outcome] = {}
    ready: dict[str, _Ready] = {}
    for case in cases:
        began = time.perf_counter()
        try:
            ready_case = _prepare(case, cfg)
            if isinstance(ready_case, str):
                outcomes[case.label] = Outcome(ready_case)
            else:
                ready[case.label] = ready_case
        except Exception as exc:  # noqa: BLE001 - every failure becomes a cell, never a crash
            outcomes[case.label] = Outcome(cfg.record_failure(workload, case.label, exc))
        cfg.log(f'{workload}/{case.label}: built and checked in {time.perf_counter() - began:.2f} s'
                f' ({outcomes[case.label].status if case.label in outcomes else "ok"})')
    samples: dict[str, list[float]] = {label: [] for label in ready}
    order = random.Random(f'{workload}:{",".join(ready)}')  # the same schedule every run
    # Collect before each sample so no system pays for another's garbage; freezing what
    # exists now (imports, built functions) keeps each of those collections cheap.
    gc.collect()
    gc.freeze()
    try:
        for _ in range(cfg.reps):
            labels = list(ready)
            order.shuffle(labels)
            for label in labels:
                if label not in ready:  # failed in an earlier repetition
                    continue
                try:
                    samples[label].append(ready[label].sample())
                except Exception as exc:  # noqa: BLE001
                    outcomes[label] = Outcome(cfg.record_failure(workload, label, exc))
                    del ready[label]
    finally:
        gc.unfreeze()
    for label in ready:
        outcomes[label] = Outcome('ok', statistics.median(samples[label]), tuple(samples[label]))
    return {case.label: outcomes[case.label] for case in cases}


@dataclass
class _Ready:
    """A built, checked and calibrated case: ``number`` timed calls per sample, after
    ``warmup`` untimed ones."""

    thunk: Thunk
    number: int
    warmup: int
    sync: Callable[[], Any] | None = None

    def sample(self) -> float:
        """One sample: collect, wait for a quiet process, warm up, time ``number`` calls."""
        gc.collect()
        quiesce()
        thunk, sync = self.thunk, self.sync
        for _ in range(self.warmup):
            thunk()
        if sync is not None:
            sync()
        start = time.perf_counter()
        for _ in range(self.number):
            thunk()
        if sync is not None:  # asynchronous devices: the work queued must be done
            sync()
        return (time.perf_counter() - start) / self.number


def _prepare(case: Case, cfg: Config) -> _Ready | str:
    """Build ``case``, check its first call, calibrate; a status string if it is WRONG."""
    thunk = case.build()
    start = time.perf_counter()
    wrong = case.check(thunk())  # first call: compiles (jit) and warms caches
    first = time.perf_counter() - start
    if wrong is not None:
        return f'WRONG: {wrong}'
    if first >= _LONG_CALL_S and case.system not in _COMPILING:
        return _Ready(thunk, 1, 0, case.sync)  # long enough to be its own sample, warm enough
    # Calibrate on the fastest of a few calls: one slow call (another process, a pool
    # waking up) must not shrink the samples.
    once = math.inf
    spent = 0.0
    for _ in range(3):
        start = time.perf_counter()
        thunk()
        if case.sync is not None:
            case.sync()
        took = time.perf_counter() - start
        once, spent = min(once, took), spent + took
        if spent >= max(cfg.min_sample_s, _LONG_CALL_S / 2):
            break
    number = max(1, min(10_000, math.ceil(cfg.min_sample_s / max(once, 1e-7))))
    return _Ready(thunk, number, 1 if once < _LONG_CALL_S else 0, case.sync)


def quiesce(limit_s: float = 0.5, window_s: float = 0.01) -> float:
    """Sleep until no other thread of this process is running (or ``limit_s`` has passed);
    return the seconds waited.

    Thread pools spin after their work before they sleep (OpenBLAS's workers for about
    0.1 s, PyTorch's OpenMP threads a few ms); on a machine with few cores a pool still
    spinning slows whichever system runs next, and only it. On Linux a thread's state says
    whether it is running or waiting to run, even while other processes keep it off the
    cores; elsewhere the process's CPU time is watched instead (twice in a row under a
    tenth of a core).

    >>> quiesce(limit_s=0.05) < 0.2
    True
    """
    began = time.perf_counter()
    quiet = 0
    while quiet < 2 and time.perf_counter() - began < limit_s:
        cpu, wall = time.process_time(), time.perf_counter()
        time.sleep(window_s)
        running = _running_threads()
        if running is None:  # no /proc: judge by the CPU the process used meanwhile
            running = (time.process_time() - cpu) / (time.perf_counter() - wall) >= 0.1
        quiet = 0 if running else quiet + 1
    return time.perf_counter() - began


def _running_threads() -> int | None:
    """How many threads of this process, the caller aside, are running or runnable (state
    R in /proc); None where there is no /proc."""
    try:
        tasks = os.listdir('/proc/self/task')
    except OSError:
        return None
    me = str(threading.get_native_id())
    running = 0
    for task in tasks:
        if task == me:
            continue
        try:
            with open(f'/proc/self/task/{task}/stat', encoding='ascii', errors='replace') as f:
                state = f.read().rpartition(')')[2].split()[0]
        except (OSError, IndexError):  # the thread ended meanwhile
            continue
        running += state == 'R'
    return running


# ---------------------------------------------------------------------------- correctness


def to_numpy(value: Any) -> np.ndarray:
    """A NumPy copy of a result leaf from any system (torch tensor, JAX array, scalar)."""
    if hasattr(value, 'detach') and hasattr(value, 'cpu'):  # torch.Tensor
        return value.detach().cpu().numpy()
    return np.asarray(value)


def leaves(tree: Any, path: str = '') -> Iterator[tuple[str, Any]]:
    """(path, leaf) pairs of a nested tuple/list/mapping result, in a stable order."""
    if isinstance(tree, Mapping):
        for key in sorted(tree, key=str):
            yield from leaves(tree[key], f'{path}[{key!r}]')
    elif isinstance(tree, (tuple, list)):
        for index, item in enumerate(tree):
            yield from leaves(item, f'{path}[{index}]')
    else:
        yield path or 'result', tree


def compare(got: Any, want: Any, rtol: float, atol_frac: float = 0.0) -> str | None:
    """None when ``got`` matches ``want`` leaf by leaf, else a short reason.

    A leaf passes when ``|got - want| <= rtol * |want| + atol_frac * max|want|`` everywhere
    (the second term forgives float32 round-off on entries near zero).

    >>> compare((1.0, [2.0]), (1.0, [2.0 + 1e-12]), rtol=1e-9) is None
    True
    >>> compare({'a': 1.0}, {'a': 1.5}, rtol=1e-9)
    "max error 0.5 (rel 0.33) in ['a']"
    """
    got_leaves, want_leaves = list(leaves(got)), list(leaves(want))
    if [p for p, _ in got_leaves] != [p for p, _ in want_leaves]:
        return (f'result structure {[p for p, _ in got_leaves]} '
                f'!= expected {[p for p, _ in want_leaves]}')
    worst: tuple[float, float, str] | None = None
    for (path, g), (_, w) in zip(got_leaves, want_leaves, strict=True):
        g_arr, w_arr = to_numpy(g).astype(np.float64), np.asarray(w, dtype=np.float64)
        if g_arr.size != w_arr.size:
            return f'shape {g_arr.shape} != expected {w_arr.shape} in {path}'
        g_arr = g_arr.reshape(w_arr.shape)
        if not np.all(np.isfinite(g_arr)):
            return f'non-finite values in {path}'
        scale = float(np.max(np.abs(w_arr))) if w_arr.size else 0.0
        err = np.abs(g_arr - w_arr)
        bound = rtol * np.abs(w_arr) + atol_frac * scale
        if np.any(err > bound):
            index = np.argmax(err - bound)
            abs_err = float(err.flat[index])
            rel = abs_err / max(float(abs(w_arr.flat[index])), 1e-300)
            if worst is None or abs_err > worst[0]:
                worst = (abs_err, rel, path)
    if worst is None:
        return None
    return f'max error {worst[0]:.2g} (rel {worst[1]:.2g}) in {worst[2]}'


def checker(want: Any, rtol: float, atol_frac: float = 0.0) -> Callable[[Any], str | None]:
    """``compare`` against a fixed reference, in the form ``Case.check`` takes."""
    return lambda got: compare(got, want, rtol, atol_frac)


# ---------------------------------------------------------------------------- formatting


def fmt_time(seconds: float) -> str:
    """Seconds in the unit that reads best.

    >>> fmt_time(0.0123), fmt_time(2.5e-5), fmt_time(3.2)
    ('12.3 ms', '25.0 µs', '3.20 s')
    """
    if seconds >= 1.0:
        return f'{seconds:.2f} s'
    if seconds >= 1e-3:
        return f'{seconds * 1e3:.3g} ms' if seconds < 0.1 else f'{seconds * 1e3:.0f} ms'
    return f'{seconds * 1e6:.1f} µs'


def fmt_ratio(value: float | None) -> str:
    """A ratio such as ``3.4x``; '-' when there is nothing to divide by.

    >>> fmt_ratio(3.4567), fmt_ratio(None), fmt_ratio(123.4)
    ('3.46x', '-', '123x')
    """
    if value is None or not math.isfinite(value):
        return '-'
    return f'{value:.3g}x'


def cell(outcome: Outcome, fmt: Callable[[float], str] = fmt_time) -> str:
    """The timing cell of an outcome: a formatted median, or the outcome's status."""
    return fmt(outcome.seconds) if outcome.ok and outcome.seconds is not None else outcome.status


def ratio(outcome: Outcome, reference: Outcome | None) -> float | None:
    """``outcome / reference`` of two medians, or None when either is missing."""
    if reference is None or not (outcome.ok and reference.ok):
        return None
    if not reference.seconds:
        return None
    return (outcome.seconds or 0.0) / reference.seconds


def standard_rows(outcomes: Mapping[str, Outcome], labels: Mapping[str, str],
                  fmt: Callable[[float], str] = fmt_time) -> list[list[str]]:
    """Rows ``[system, median, ratio to NumPy]`` for a plain timing workload."""
    reference = outcomes.get('numpy')
    return [[labels.get(key, key), cell(outcome, fmt), fmt_ratio(ratio(outcome, reference))]
            for key, outcome in outcomes.items()]



def make_cases(cfg: Config, builders: Mapping[str, Callable[[], Thunk]],
               check: Callable[[Any], str | None]) -> list[Case]:
    """One ``Case`` per selected system, labelled by its system key."""
    return [Case(key, key, build, check) for key, build in builders.items() if key in cfg.systems]
