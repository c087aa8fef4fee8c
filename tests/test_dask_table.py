"""The primitive table (``tests/rows_*.py``) on chunked Dask arrays.

Each row runs once on its first non-empty shapes, in float64, every array
split into two chunks along its first axis.  Traced by funcgrad, its value,
its VJP (ones as cotangent) and its JVP (ones as tangents) -- and, where it is
cheap, for the main row (no ``id``) of each elementwise, reduction and ``nn``
function (``rows_elementwise.py``), a second-order derivative (forward over
reverse) -- are built with no compute
(a counting scheduler sees none), then computed at once and compared with
NumPy funcgrad's to 1e-12.

Called *untraced* on raw Dask arrays, a row is Dask's own business where it
uses Python's operators (``x[i]``); :data:`DASK_CANNOT` lists the rows Dask
itself cannot do, with Dask's reason.  Traced, funcgrad does them all.
"""

from __future__ import annotations

import importlib.util
import pathlib
import zlib

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="Dask is optional: pip install funcgrad[dask]")
import dask
from lazy import counting

import funcgrad as fg

HERE = pathlib.Path(__file__).parent


def _load_rows() -> list:
    """``(row, family)`` for every row, loaded as ``test_primitives.py`` loads them."""
    rows = []
    for path in sorted(HERE.glob("rows_*.py")):
        spec = importlib.util.spec_from_file_location(f"_rows_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        rows.extend((row, path.stem) for row in module.ROWS)
    return rows


ROWS = _load_rows()
SECOND_ORDER = {"rows_elementwise"}

# Rows Dask itself cannot do on its own arrays (untraced), with Dask's reason.
DASK_CANNOT = {
    "getitem-int-mixed": (NotImplementedError, (
        "Dask: \"Don't yet support nd fancy indexing\": x[a, :, b] indexes with two "
        "integer arrays")),
    "getitem-int-2d": ((ValueError, TypeError), (
        "Dask takes the nested list of x[[[0, 0], [1, 0]]] for one index per axis and fails: "
        "'The truth value of an array with more than one element is ambiguous' (Dask 2024.8: "
        "\"'>=' not supported between instances of 'list' and 'int'\")")),
}

# Rows funcgrad refuses on Dask with a FuncgradTypeError naming what Dask lacks.
FUNCGRAD_REFUSES = {
    label: "dask.array.linalg has no pinv: linalg.pinv and lstsq raise a FuncgradTypeError "
           "naming it"
    for label in ("linalg.pinv", "linalg.lstsq", "linalg.lstsq-residuals")
}
FUNCGRAD_REFUSES.update({
    label: "dask.array.linalg has no eig: linalg.eig raises a FuncgradTypeError naming it"
    for label in ("linalg.eig-function", "linalg.eigvals")
})


def _label(row) -> str:
    return f"{row.name}-{row.id}" if row.id else row.name


def _shapes(row):
    for shapes in row.shapes:
        if all(np.prod(s) > 0 for s in shapes) and any(len(s) for s in shapes):
            return shapes
    return row.shapes[0]


def _inputs(row):
    rng = np.random.default_rng(zlib.crc32(_label(row).encode()))
    args = row.inputs(rng, "float64", _shapes(row))
    chunked = tuple(da.from_array(a, chunks=tuple(max(1, (n + 1) // 2) if i == 0 else n
                                                  for i, n in enumerate(a.shape)))
                    for a in args)
    return args, chunked


def _close(got, want, what):
    got_leaves, want_leaves = fg.tree.flatten(got)[0], fg.tree.flatten(want)[0]
    assert len(got_leaves) == len(want_leaves), what
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (what, g.shape, w.shape, g.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, err_msg=what)


def _derivatives(fun, args, ones_like, second):
    out, vjp_fn = fg.vjp(fun, *args)
    ct = fg.tree.tree_map(ones_like, out)
    grads = vjp_fn(ct)
    tangents = tuple(ones_like(a) for a in args)
    _, tan = fg.jvp(fun, args, tangents)
    results = {"value": out, "vjp": grads, "jvp": tan}
    if second:
        results["order 2"] = fg.jvp(lambda *a: fg.vjp(fun, *a)[1](ct), args, tangents)[1]
    return results


def _refused(row):
    label = _label(row)
    if label in FUNCGRAD_REFUSES:
        from funcgrad.errors import FuncgradTypeError

        return [pytest.mark.xfail(raises=FuncgradTypeError, strict=True,
                                  reason=FUNCGRAD_REFUSES[label])]
    return []


@pytest.mark.parametrize("row, family", [pytest.param(r, f, id=_label(r), marks=_refused(r))
                                         for r, f in ROWS])
def test_row_traced_on_dask_arrays(row, family):
    args, chunked = _inputs(row)
    second = family in SECOND_ORDER and not row.id
    with counting() as c:
        lazy = _derivatives(row.fun, chunked, da.ones_like, second)
    assert c.calls == 0, f"{_label(row)}: {c.calls} computes while building derivatives"
    leaves, treedef = fg.tree.flatten(lazy)
    assert all(isinstance(v, da.Array) for v in leaves if hasattr(v, "shape")), _label(row)
    got = fg.tree.unflatten(treedef, list(dask.compute(*leaves)))
    want = _derivatives(row.fun, args, np.ones_like, second)
    for key in want:
        _close(got[key], want[key], f"{_label(row)} {key}")


def _raw_case(row):
    label = _label(row)
    if label in DASK_CANNOT:
        error, reason = DASK_CANNOT[label]
        return pytest.param(row, id=label, marks=pytest.mark.xfail(raises=error, strict=True,
                                                                   reason=reason))
    return pytest.param(row, id=label, marks=_refused(row))


@pytest.mark.parametrize("row", [_raw_case(r) for r, _ in ROWS])
def test_row_untraced_on_raw_dask_arrays(row):
    args, chunked = _inputs(row)
    with counting() as c:
        out = row.fun(*chunked)
    assert c.calls == 0
    leaves, treedef = fg.tree.flatten(out)
    _close(fg.tree.unflatten(treedef, list(dask.compute(*leaves))), row.fun(*args), _label(row))


def test_every_row_is_covered_and_the_exceptions_are_rows():
    labels = {_label(r) for r, _ in ROWS}
    assert set(DASK_CANNOT) <= labels
    assert len(ROWS) > 200
