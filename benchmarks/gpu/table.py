"""The primitive table on the device against the CPU.

Every row of ``tests/rows_*.py`` (loaded the way ``tests/test_primitives.py`` loads them),
for each of its shapes and dtypes: the value, a VJP, a JVP and two second-order
derivatives (reverse over reverse, forward over reverse, of a random projection of the
output) are computed once from NumPy inputs and once from the same inputs on the device.
A case *agrees* when every device result is an array of the device's type with NumPy's
dtype and shape and NumPy's values within rounding; it *disagrees* otherwise; it *raises*
when the device run raises (the error is kept). Nothing here stops at a failure.

>>> from benchmarks.gpu.backend import numpy_backend
>>> rows = [row for row in load_rows() if row.name == 'sin']
>>> check_case(rows[0], rows[0].shapes[1], 'float64', numpy_backend())['status']
'agree'
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys
import time
import traceback
import zlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

TESTS = pathlib.Path(__file__).resolve().parents[2] / 'tests'

# |device - cpu| <= rtol |cpu| + atol_frac max|cpu|, per leaf: reduction order, the
# device's libm and its BLAS/LAPACK differ from the CPU's within rounding of each dtype.
TOLERANCES = {'float64': (1e-7, 1e-9), 'float32': (2e-3, 2e-4), 'float16': (2e-2, 2e-2)}
QUANTITIES = ('value', 'vjp', 'jvp', 'rev-rev', 'fwd-rev')


def load_rows(tests: pathlib.Path = TESTS) -> list:
    """Every ``Row`` of ``tests/rows_*.py``, in file order, as test_primitives loads them."""
    rows = []
    for path in sorted(tests.glob('rows_*.py')):
        spec = importlib.util.spec_from_file_location(f'_rows_{path.stem}', path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        rows.extend(module.ROWS)
    return rows


def row_label(row: Any) -> str:
    """``name`` or ``name-id``, as the table's test ids name a row."""
    return f'{row.name}-{row.id}' if row.id else row.name


def cases(rows: Iterable, only: Sequence[str] = ()) -> list[tuple[Any, tuple, str, str]]:
    """(row, shapes, dtype, case id) for every case; ``only`` keeps rows by name or label."""
    out = []
    for row in rows:
        if only and row.name not in only and row_label(row) not in only:
            continue
        for shapes in row.shapes:
            for dtype in row.dtypes:
                out.append((row, shapes, dtype, f'{row_label(row)}-{shapes}-{dtype}'))
    return out


def _leaves(tree: Any) -> list:
    import funcgrad as fg

    return fg.tree.flatten(tree)[0]


def _quantities(fun: Callable, args: tuple, extra: dict) -> dict[str, Callable[[], Any]]:
    """The five computations of one case, as thunks over ``args`` (all on one device)."""
    import funcgrad as fg
    import funcgrad.numpy as fnp

    argnums = tuple(range(len(args)))

    def projected(*a):  # a scalar of the output: <fun(a), c>
        return sum(fnp.sum(leaf * c) for leaf, c in zip(_leaves(fun(*a)), extra['c'],
                                                          strict=True))

    def grad_dot_v(*a):  # <grad <fun(a), c>, v>: its gradient is a Hessian-vector product
        grads = fg.grad(projected, argnums=argnums)(*a)
        return sum(fnp.sum(g * v) for g, v in zip(grads, extra['v'], strict=True))

    return {
        'value': lambda: fun(*args),
        'vjp': lambda: fg.vjp(fun, *args)[1](extra['ct']),
        'jvp': lambda: fg.jvp(fun, args, extra['t'])[1],
        'rev-rev': lambda: fg.grad(grad_dot_v, argnums=argnums)(*args),
        'fwd-rev': lambda: fg.jvp(fg.grad(projected, argnums=argnums), args, extra['v'])[1],
    }


def _extras(rng: np.random.Generator, args: tuple, out: Any, dtype: str) -> dict:
    """Random cotangent, tangents and projection vectors, NumPy, of the inputs' dtype."""
    import funcgrad as fg

    def like(a):
        a = np.asarray(a)
        return rng.standard_normal(a.shape).astype(a.dtype)

    return {'ct': fg.tree.tree_map(like, out), 't': tuple(like(a) for a in args),
            'c': [like(leaf) for leaf in _leaves(out)], 'v': tuple(like(a) for a in args)}


def _move(extra: dict, to_device: Callable) -> dict:
    import funcgrad as fg

    return {key: fg.tree.tree_map(to_device, value) for key, value in extra.items()}


def compare(got: Any, want: Any, backend: Any, dtype: str) -> str | None:
    """None when the device result ``got`` matches NumPy's ``want``, else why not."""
    got_leaves, want_leaves = _leaves(got), _leaves(want)
    if len(got_leaves) != len(want_leaves):
        return f'{len(got_leaves)} result leaves, NumPy gives {len(want_leaves)}'
    rtol, atol_frac = TOLERANCES.get(dtype, TOLERANCES['float32'])
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves, strict=True)):
        where = f' (leaf {i})' if len(want_leaves) > 1 else ''
        w = np.asarray(w)
        if not backend.on_device(g):
            kinds = ' or '.join(f'{t.__module__}.{t.__qualname__}' for t in backend.array_types)
            return (f'result{where} is {type(g).__module__}.{type(g).__qualname__}, '
                    f'not on the device ({kinds})')
        h = backend.to_host(g)
        if h.dtype != w.dtype:
            return f'dtype {h.dtype}{where}, NumPy gives {w.dtype}'
        if h.shape != w.shape:
            return f'shape {h.shape}{where}, NumPy gives {w.shape}'
        if not h.size:
            continue
        h64, w64 = h.astype(np.float64), w.astype(np.float64)
        if not np.array_equal(np.isnan(h64), np.isnan(w64)):
            return f'NaN where NumPy has none, or the reverse{where}'
        finite = np.isfinite(w64)
        if not np.array_equal(h64[~finite], w64[~finite], equal_nan=True):
            return f'infinities differ from NumPy{where}'
        hf, wf = h64[finite], w64[finite]
        if not hf.size:
            continue
        err = np.abs(hf - wf)
        bound = rtol * np.abs(wf) + atol_frac * float(np.max(np.abs(wf)))
        if np.any(err > bound):
            k = int(np.argmax(err - bound))
            return (f'max error {float(err[k]):.3g} at value {float(wf[k]):.6g} '
                    f'(rtol {rtol:g}){where}')
    return None


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ''
    text = f'{type(exc).__name__}: {text}' if text else type(exc).__name__
    return text if len(text) <= 300 else text[:297] + '...'


def check_case(row: Any, shapes: tuple, dtype: str, backend: Any) -> dict:
    """One case: ``status`` is 'agree', 'disagree', 'raise' or 'cpu-error' (NumPy itself
    failed: a fault of the table, not of the device), with the first failing ``check``
    and the ``error``; ``checks`` gives the verdict of each quantity."""
    seed = abs(zlib.crc32(f'{row.name}{row.id}{shapes}'.encode())) % 2**32  # as the test
    rng = np.random.default_rng(seed)
    result = {'row': row_label(row), 'shapes': repr(shapes), 'dtype': dtype,
              'status': 'agree', 'check': '', 'error': '', 'checks': {}}
    try:
        args = row.inputs(rng, dtype, shapes)
        cpu = _quantities(row.fun, args, {})
        out = cpu['value']()
        extra = _extras(np.random.default_rng(seed + 1), args, out, dtype)
        cpu = _quantities(row.fun, args, extra)
        want = {name: thunk() for name, thunk in cpu.items()}
    except Exception as exc:  # noqa: BLE001
        result.update(status='cpu-error', check='numpy', error=_short(exc),
                      traceback=traceback.format_exc(limit=-4))
        return result
    try:
        dev_args = tuple(backend.to_device(a) for a in args)
        dev_extra = _move(extra, backend.to_device)
    except Exception as exc:  # noqa: BLE001
        result.update(status='raise', check='to_device', error=_short(exc))
        return result
    for name, thunk in _quantities(row.fun, dev_args, dev_extra).items():
        try:
            why = compare(thunk(), want[name], backend, dtype)
        except Exception as exc:  # noqa: BLE001 - a raising row is a finding, not a crash
            result['checks'][name] = 'raise'
            if result['status'] != 'raise':
                result.update(status='raise', check=name, error=_short(exc),
                              traceback=traceback.format_exc(limit=-4))
            continue
        result['checks'][name] = 'agree' if why is None else 'disagree'
        if why is not None and result['status'] == 'agree':
            result.update(status='disagree', check=name, error=why)
    return result


def run_shard(backend: Any, out_path: pathlib.Path, shard: int = 0, shards: int = 1,
              only: Sequence[str] = (), deadline: float | None = None) -> int:
    """Check the ``shard``-th of ``shards`` consecutive slices of the cases, one JSON line
    per case appended to ``out_path`` as it finishes (a killed shard keeps what it did);
    cases left when the wall clock passes ``deadline`` are written as 'not run'. Returns
    the cases written. (Consecutive cases share functions: each process then compiles
    mostly its own CuPy kernels, not all of them.)"""
    every = cases(load_rows(), only)
    chosen = every[len(every) * shard // shards:len(every) * (shard + 1) // shards]
    written = 0
    with out_path.open('a', encoding='utf-8') as sink:
        for row, shapes, dtype, case_id in chosen:
            if deadline is not None and time.time() > deadline:
                result = {'row': row_label(row), 'shapes': repr(shapes), 'dtype': dtype,
                          'status': 'not run', 'check': '', 'error': 'time budget spent',
                          'checks': {}}
            else:
                began = time.perf_counter()
                result = check_case(row, shapes, dtype, backend)
                result['seconds'] = round(time.perf_counter() - began, 4)
            result['id'] = case_id
            sink.write(json.dumps(result) + '\n')
            sink.flush()
            written += 1
            if result['status'] not in ('agree', 'not run'):
                print(f'{case_id}: {result["status"]} in {result["check"]}: {result["error"]}',
                      file=sys.stderr, flush=True)
    return written


def summarise(results: list[dict]) -> dict:
    """Counts by case and by row (a row agrees when all its cases do; otherwise it takes
    its worst status: raise > disagree > cpu-error > not run), and the failing rows."""
    counts: dict[str, int] = {}
    by_row: dict[str, list[dict]] = {}
    for result in results:
        counts[result['status']] = counts.get(result['status'], 0) + 1
        by_row.setdefault(result['row'], []).append(result)
    rank = ['raise', 'disagree', 'cpu-error', 'not run', 'agree']
    row_status = {row: min((r['status'] for r in rs), key=rank.index)
                  for row, rs in by_row.items()}
    row_counts: dict[str, int] = {}
    for status in row_status.values():
        row_counts[status] = row_counts.get(status, 0) + 1
    failing = []
    for row, status in row_status.items():
        if status == 'agree':
            continue
        bad = [r for r in by_row[row] if r['status'] == status]
        first = bad[0]
        failing.append({'row': row, 'status': status, 'cases': len(bad),
                        'of': len(by_row[row]), 'check': first['check'],
                        'error': first['error'], 'example': first['id']})
    return {'cases': len(results), 'case_counts': counts, 'rows': len(by_row),
            'row_counts': row_counts, 'failing_rows': failing}
