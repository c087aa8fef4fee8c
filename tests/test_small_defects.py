"""Issue 16's defects outside replay: ``x.at[()]`` on 0-d arrays, ``.add``'s errors, a
stable ``sort``, sizes too large to allocate, and no reference cycle per call.

Each test failed before its fix.  References: closed forms (``(2x)^2``), NumPy's
stable argsort, and the cycle collector itself (``gc.collect()``'s count with
the collector disabled between calls).
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import FuncgradIndexError

# -- x.at[()], x.at[...], x.at[None] of a 0-d x ---------------------------------------


@pytest.mark.parametrize("index", [(), Ellipsis, None], ids=["()", "...", "None"])
def test_at_set_of_a_0d_array_differentiates_at_every_order_in_both_modes(index):
    def f(x):
        return x.at[index].set(x * 2) ** 2  # (2x)^2

    x = 3.0
    assert fg.grad(f)(x) == 24.0  # 8x
    assert fg.hessian(f)(x) == 8.0
    assert fg.grad(fg.grad(fg.grad(f)))(x) == 0.0
    value, tangent = fg.jvp(f, (x,), (1.0,))
    assert value == 36.0 and tangent == 24.0
    assert fg.jacfwd(fg.jacfwd(f))(x) == 8.0
    assert fg.jacrev(fg.jacfwd(f))(x) == 8.0

    def g(x, v):  # the gradient into x (overwritten: none) and into v
        return (fnp.index_update(x, index, v) * x) ** 2  # x.at[index].set(v): (v x)^2

    gx, gv = fg.grad(g, argnums=(0, 1))(2.0, 5.0)
    assert gx == 2 * 25.0 * 2.0 and gv == 2 * 4.0 * 5.0
    fg.check_grads(g, (2.0, 5.0), order=2, modes=("rev", "fwd"))
    h = fg.value_and_grad(lambda x: fnp.sum(x.at[index].add(x) ** 2))
    assert h(np.array(1.5)) == (9.0, 12.0)


def test_at_add_with_a_bad_index_raises_what_at_set_raises():
    x = np.ones(3)
    with pytest.raises(FuncgradIndexError, match="out of bounds") as set_error:
        fg.grad(lambda x: fnp.sum(x.at[5].set(1.0)))(x)
    with pytest.raises(FuncgradIndexError, match="out of bounds") as add_error:
        fg.grad(lambda x: fnp.sum(x.at[5].add(1.0)))(x)
    assert str(set_error.value).split(" (")[0] == str(add_error.value).split(" (")[0]
    with pytest.raises(FuncgradIndexError):
        fnp.index_update(x, 5, 1.0, add=True)


# -- sort: stable --------------------------------------------------------------------


@pytest.mark.parametrize("kind", [None, "quicksort", "stable"])
def test_sort_is_stable_so_tied_values_keep_their_gradients(kind):
    rs = np.random.RandomState(0)
    x = rs.randint(0, 3, 40).astype(float)  # many ties, 40 elements (> 16)
    w = np.arange(40.0)
    g = fg.grad(lambda x: fnp.sum(fnp.sort(x, kind=kind) * w))(x)
    expected = np.empty(40)
    expected[np.argsort(x, kind="stable")] = w  # element i goes to its stable place
    assert (g == expected).all()
    m = rs.randint(0, 2, (3, 20)).astype(float)
    gm = fg.grad(lambda m: fnp.sum(fnp.sort(m, axis=1) * w[:20]))(m)
    em = np.empty_like(m)
    for r in range(3):
        em[r, np.argsort(m[r], kind="stable")] = w[:20]
    assert (gm == em).all()
    _, tangent = fg.jvp(lambda x: fnp.sort(x), (x,), (w,))
    assert (tangent == w[np.argsort(x, kind="stable")]).all()


# -- sizes too large: a ValueError naming the size, not a MemoryError --------------------

HUGE = np.broadcast_to(1.0, (10**7,))  # a 10^7 x 10^7 result: 800 TB


@pytest.mark.parametrize("call, name", [
    (lambda: fnp.diag(HUGE), "diag"),
    (lambda: fnp.triu(HUGE), "triu"),
    (lambda: fnp.tril(HUGE), "tril"),
    (lambda: fnp.linalg.eigh(np.broadcast_to(np.eye(3), (10**12, 3, 3))), "eigh"),
])
def test_a_result_too_large_raises_a_value_error_naming_its_size(call, name):
    with pytest.raises(ValueError, match=name) as info:
        call()
    assert isinstance(info.value, fg.FuncgradError)
    assert not isinstance(info.value, MemoryError)
    assert "10000000" in str(info.value) or "1000000000000" in str(info.value)


# -- no reference cycle per call ------------------------------------------------------


def _cyclic_garbage(call, calls=5) -> int:
    call()  # warm: caches, lazy imports
    gc.collect()
    gc.disable()
    try:
        for _ in range(calls):
            call()
        return gc.collect()
    finally:
        gc.enable()


X = np.array([0.5, -1.0, 2.0])


@pytest.mark.parametrize("call", [
    lambda: fg.value_and_grad(lambda x: fnp.sum(fnp.sin(x) ** 2))(X),
    lambda: fg.grad(lambda x: fnp.sum(fnp.tanh(x) * x))(X),
    lambda: fg.hessian(lambda x: fnp.sum(fnp.sin(x) ** 3))(X),
    lambda: fg.jvp(lambda x: fnp.sum(fnp.exp(x)), (X,), (X,)),
    lambda: fg.jacobian(lambda x: fnp.sin(x) * x)(X),
], ids=["value_and_grad", "grad", "hessian", "jvp", "jacobian"])
def test_a_call_leaves_no_cyclic_garbage(call):
    assert _cyclic_garbage(call) == 0
