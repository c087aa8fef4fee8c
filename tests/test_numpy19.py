"""The rest of NumPy (issue 19): values against NumPy itself, the data-only functions,
``%`` and ``divmod`` on Nodes, ``r_``/``c_``, dtype names, the new ``fg.nn`` functions
and the errors.  The derivatives are checked by the primitive table
(``rows_numpy19.py``) against finite differences at order 2 in both modes.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

rng = np.random.default_rng(19)
A = rng.standard_normal((3, 4))
V = rng.standard_normal(5)
W = rng.standard_normal(3)
P = rng.random((4, 4)) + np.eye(4)
XP = np.array([-2.0, -0.5, 0.3, 1.7])

# (label, call on a module: fnp or numpy).  Each runs on NumPy data and on traced
# data (the Nodes' values must equal NumPy's).
CASES = [
    ("remainder", lambda m: m.remainder(A, 0.7)), ("mod", lambda m: m.mod(-A, 0.7)),
    ("fmod", lambda m: m.fmod(A, -0.7)), ("floor_divide", lambda m: m.floor_divide(A, 0.3)),
    ("hypot", lambda m: m.hypot(A, 2.0)), ("cbrt", lambda m: m.cbrt(A)),
    ("logaddexp2", lambda m: m.logaddexp2(A, 1.0)), ("deg2rad", lambda m: m.deg2rad(A)),
    ("rad2deg", lambda m: m.rad2deg(A)), ("sinc", lambda m: m.sinc(np.r_[0.0, V])),
    ("fabs", lambda m: m.fabs(A)), ("fmax", lambda m: m.fmax(A, np.nan)),
    ("fmin", lambda m: m.fmin(np.nan, A)), ("trunc", lambda m: m.trunc(A * 3)),
    ("rint", lambda m: m.rint(A * 3)),
    ("nan_to_num", lambda m: m.nan_to_num(np.array([np.nan, np.inf, -np.inf, 1.0]))),
    ("nan_to_num-values", lambda m: m.nan_to_num(np.array([np.nan, np.inf, -np.inf]),
                                                 nan=1.0, posinf=2.0, neginf=-3.0)),
    ("diff", lambda m: m.diff(A, n=2, axis=1)),
    ("diff-pend", lambda m: m.diff(V, prepend=1.0, append=np.array([2.0, 3.0]))),
    ("gradient", lambda m: m.gradient(V, 0.5)),
    ("gradient-2d", lambda m: m.gradient(A)[1]),
    ("nansum", lambda m: m.nansum(np.array([[1.0, np.nan], [2.0, 3.0]]), axis=0)),
    ("nanmean", lambda m: m.nanmean(np.array([[1.0, np.nan], [2.0, 3.0]]), axis=1)),
    ("nanvar", lambda m: m.nanvar(np.array([1.0, np.nan, 2.0, 5.0]), ddof=1)),
    ("nanstd", lambda m: m.nanstd(np.array([1.0, np.nan, 2.0, 5.0]))),
    ("nancumsum", lambda m: m.nancumsum(np.array([1.0, np.nan, 2.0]))),
    ("nanprod", lambda m: m.nanprod(np.array([2.0, np.nan, 2.0]))),
    ("nanmax", lambda m: m.nanmax(np.array([1.0, np.nan, 2.0]))),
    ("ptp", lambda m: m.ptp(A, axis=0)),
    ("median", lambda m: m.median(A)), ("median-axis", lambda m: m.median(A, axis=1)),
    ("median-keepdims", lambda m: m.median(A, axis=0, keepdims=True)),
    ("quantile", lambda m: m.quantile(A, [0.0, 0.3, 1.0], axis=1)),
    ("quantile-axes", lambda m: m.quantile(A[None], 0.4, axis=(0, 2))),
    ("percentile", lambda m: m.percentile(V, [10.0, 90.0])),
    ("percentile-keepdims", lambda m: m.percentile(A, 25.0, axis=1, keepdims=True)),
    ("average", lambda m: m.average(A, axis=1, weights=np.arange(1.0, 5.0))),
    ("average-returned", lambda m: m.average(A, axis=0, returned=True)[1]),
    ("cov", lambda m: m.cov(A)), ("cov-rowvar", lambda m: m.cov(A, rowvar=False, ddof=2)),
    ("cov-y", lambda m: m.cov(V, V ** 2)), ("corrcoef", lambda m: m.corrcoef(A)),
    ("trapezoid", lambda m: m.trapezoid(A, dx=0.5)),
    ("trapezoid-x", lambda m: m.trapezoid(A, np.array([0.0, 0.5, 2.0, 2.5]))),
    ("interp", lambda m: m.interp(np.linspace(-3, 3, 13), XP, XP ** 2)),
    ("interp-bounds", lambda m: m.interp(np.array([-9.0, 9.0, 0.0]), XP, XP, -5.0, 5.0)),
    ("polyval", lambda m: m.polyval(W, A)), ("vander", lambda m: m.vander(V, 4)),
    ("kron", lambda m: m.kron(A[:2, :2], P[:2])),
    ("take_along_axis", lambda m: m.take_along_axis(A, np.argsort(A, axis=1), axis=1)),
    ("partition", lambda m: m.partition(V, 2)[2]),
    ("atleast_2d", lambda m: m.atleast_2d(V)), ("atleast_3d", lambda m: m.atleast_3d(A)),
    ("fliplr", lambda m: m.fliplr(A)), ("flipud", lambda m: m.flipud(A)),
    ("rot90", lambda m: m.rot90(A)), ("rot90-3", lambda m: m.rot90(A, 3)),
    ("rollaxis", lambda m: m.rollaxis(np.zeros((2, 3, 4)) + A[0, 0], 1, 3)),
    ("array_split", lambda m: m.array_split(V, 3)[2]),
    ("hsplit", lambda m: m.hsplit(A, 2)[1]), ("vsplit", lambda m: m.vsplit(P, [1, 3])[1]),
    ("column_stack", lambda m: m.column_stack([V, V])),
    ("dstack", lambda m: m.dstack([A, A])), ("append", lambda m: m.append(A, V)),
    ("select", lambda m: m.select([A < 0, A < 1], [A, -A], 3.0)),
    ("logspace", lambda m: m.logspace(0.0, 3.0, 4, base=2.0)),
    ("logspace-noend", lambda m: m.logspace(1.0, 2.0, 3, endpoint=False)),
    ("identity", lambda m: m.identity(3)), ("empty", lambda m: m.empty((2, 2)) * 0),
]
for n in (1, 2, 3, 5):
    for k in (1, 2, 4):
        for mode in ("full", "same", "valid"):
            CASES.append((f"convolve-{n}-{k}-{mode}", lambda m, n=n, k=k, mode=mode:
                          m.convolve(V[:n], W[:3] if k == 3 else V[-k:] * 2, mode)))
            CASES.append((f"correlate-{n}-{k}-{mode}", lambda m, n=n, k=k, mode=mode:
                          m.correlate(V[:n], V[-k:] * 2, mode)))


@pytest.mark.parametrize("label, call", CASES, ids=[c[0] for c in CASES])
def test_values_are_numpys(label, call):
    want = call(np)
    got = call(fnp)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert np.asarray(got).dtype == np.asarray(want).dtype


def test_linalg_values_are_numpys():
    tall = A.T  # 4 x 3, full column rank
    np.testing.assert_allclose(fnp.linalg.pinv(tall), np.linalg.pinv(tall), atol=1e-12)
    np.testing.assert_allclose(fnp.linalg.eigvalsh(P + P.T), np.linalg.eigvalsh(P + P.T))
    np.testing.assert_allclose(fnp.linalg.svdvals(A), np.linalg.svd(A, compute_uv=False))
    for b in (V[:4], A.T[:, :2]):
        got, want = fnp.linalg.lstsq(tall, b), np.linalg.lstsq(tall, b, rcond=None)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, atol=1e-10)
    for n in (0, 1, 3, -2):
        np.testing.assert_allclose(fnp.linalg.matrix_power(P, n),
                                   np.linalg.matrix_power(P, n), rtol=1e-10)
    np.testing.assert_allclose(fnp.linalg.multi_dot([A, A.T, A]), A @ A.T @ A)
    assert fnp.linalg.matrix_rank(np.ones((3, 3))) == 1


DATA = [
    ("logical_and", (A > 0, A < 1)), ("logical_or", (A > 0, A < -1)),
    ("logical_xor", (A > 0, A < 1)), ("logical_not", (A > 0,)),
    ("bitwise_and", (np.arange(4), 3)), ("bitwise_or", (np.arange(4), 4)),
    ("bitwise_xor", (np.arange(4), 1)), ("bitwise_not", (np.arange(4),)),
    ("invert", (A > 0,)), ("isclose", (A, A + 1e-12)), ("allclose", (A, A + 1e-3)),
    ("array_equal", (A, A.copy())), ("isreal", (np.array([1, 1j]),)),
    ("iscomplex", (np.array([1, 1j]),)), ("isrealobj", (A,)), ("iscomplexobj", (A,)),
    ("isneginf", (np.array([-np.inf, np.inf]),)), ("isposinf", (np.array([-np.inf, np.inf]),)),
    ("signbit", (A,)), ("isinf", (np.array([1.0, np.inf]),)), ("argsort", (A,)),
    ("argpartition", (V, 2)), ("nonzero", (A > 0,)), ("flatnonzero", (A > 0,)),
    ("argwhere", (A > 0,)), ("count_nonzero", (A > 0,)), ("searchsorted", (np.sort(V), A)),
    ("unique", (np.round(A),)), ("nanargmax", (np.array([1.0, np.nan, 3.0]),)),
    ("nanargmin", (np.array([1.0, np.nan, 3.0]),)),
]


@pytest.mark.parametrize("name, args", DATA, ids=[d[0] for d in DATA])
def test_data_only_functions_give_numpys_values_on_nodes(name, args):
    traced = [fg.require_grad(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
              for a in args]
    got = getattr(fnp, name)(*traced)
    want = getattr(np, name)(*args)
    for g, w in zip(got if isinstance(want, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,), strict=True):
        assert not isinstance(g, fg.Node)
        np.testing.assert_array_equal(g, w)
    if name == "argpartition":
        return
    # inside a gradient, as data: the gradient flows around them
    g = fg.grad(lambda x: fnp.sum(fnp.where(fnp.logical_and(x > 0, x < 1), x, 0.0)))(A)
    np.testing.assert_array_equal(g, ((A > 0) & (A < 1)).astype(float))


def test_unique_takes_numpys_keywords():
    vals, idx, counts = fnp.unique(fg.require_grad(np.array([2.0, 1.0, 2.0])),
                                   return_index=True, return_counts=True)
    np.testing.assert_array_equal(vals, [1.0, 2.0])
    np.testing.assert_array_equal(counts, [1, 2])
    np.testing.assert_array_equal(idx, [1, 0])


def test_mod_and_divmod_operators_on_nodes():
    x, y = np.array([5.5, -7.25, 3.0]), np.array([2.0, 3.0, -1.25])
    for a, b in ((x, y), (x, 2.5), (4.5, y)):
        got = fg.grad(lambda a, b: fnp.sum(a % b), argnums=(0, 1))(a, b)
        np.testing.assert_allclose(got[0], np.ones_like(a) * np.ones(np.shape(b)) if
                                   np.ndim(a) else np.sum(np.ones_like(b)))
        np.testing.assert_allclose(got[1], -np.floor(a / b) if np.ndim(b) else
                                   -np.sum(np.floor(a / b)))
        q, r = fg.value_of(divmod(fg.require_grad(np.asarray(a)), b)[0]), None
        np.testing.assert_array_equal(q, np.floor_divide(a, b))
    # NumPy array on the left: numpy's operator hands over to fnp
    out = x % fg.require_grad(y)
    np.testing.assert_allclose(fg.value_of(out), np.mod(x, y))
    q, r = divmod(x, fg.require_grad(y))
    np.testing.assert_allclose(fg.value_of(r), np.mod(x, y))
    np.testing.assert_allclose(fg.value_of(x // fg.require_grad(y)), x // y)
    # second order: d^2/dx^2 (x mod c) = 0, d/dc (x mod c) = -floor(x/c)
    h = fg.hessian(lambda c: fnp.sum((x % c) ** 2))(2.0)
    np.testing.assert_allclose(h, 2 * np.sum(np.floor(x / 2.0) ** 2))


def test_r_and_c():
    x = fg.require_grad(np.array([1.0, 2.0]))
    out = fnp.r_[x, 3.0, 0:2, np.array([9.0])]
    np.testing.assert_array_equal(fg.value_of(out), np.r_[[1.0, 2.0], 3.0, 0:2, [9.0]])
    np.testing.assert_array_equal(fnp.c_[np.ones(2), np.zeros(2)], np.c_[np.ones(2), np.zeros(2)])
    g = fg.grad(lambda x: fnp.sum(fnp.r_[x, x * 2] ** 2))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, 10 * np.array([1.0, 2.0]))
    assert fnp.r_[np.ones(2, np.float32), 2.0].dtype == np.float32
    with pytest.raises(ValueError, match="string directives"):
        fnp.r_["0,2", np.ones(2)]


def test_dtype_names_work_as_numpys():
    assert fnp.zeros(2, fnp.float32).dtype == np.float32
    assert fnp.asarray([1, 2], fnp.int64).dtype == np.int64
    assert fnp.finfo(fnp.float64).eps == np.finfo(np.float64).eps
    assert np.issubdtype(fnp.float32, fnp.floating) and fnp.dtype("complex128") == np.complex128


def test_new_nn_functions():
    x = np.array([-3.0, -0.5, 0.0, 0.7, 4.0])
    from scipy.special import erf

    exact = 0.5 * x * (1 + erf(x / np.sqrt(2)))
    np.testing.assert_allclose(fg.nn.gelu(x, approximate=False), exact, rtol=1e-12)
    np.testing.assert_allclose(fg.nn.gelu(x), exact, atol=2e-3)  # tanh approximation
    fg.check_grads(lambda x: fg.nn.gelu(x, approximate=False), (x,), order=2)
    np.testing.assert_allclose(fg.nn.silu(x), x / (1 + np.exp(-x)))
    np.testing.assert_allclose(fg.nn.log_sigmoid(x), -np.log1p(np.exp(-x)))
    np.testing.assert_allclose(fg.nn.elu(x, 0.5), np.where(x > 0, x, 0.5 * np.expm1(x)))
    np.testing.assert_allclose(fg.nn.leaky_relu(x), np.where(x >= 0, x, 0.01 * x))
    big = np.array([-1e4, 1e4])
    for f in (fg.nn.gelu, fg.nn.silu, fg.nn.log_sigmoid, fg.nn.elu):
        assert np.all(np.isfinite(f(big))), f
        assert np.all(np.isfinite(fg.grad(lambda x, f=f: fnp.sum(f(x)))(big))), f
    hot = fg.nn.one_hot(np.array([[0, 2], [1, 5]]), 3)
    assert hot.shape == (2, 2, 3) and hot.dtype == np.float64
    np.testing.assert_array_equal(hot[1, 1], [0, 0, 0])  # out of range: all zeros (JAX)
    np.testing.assert_array_equal(hot[0, 1], [0, 0, 1])
    np.testing.assert_array_equal(fg.nn.one_hot(np.array([1]), 2, axis=0), [[0], [1]])
    with pytest.raises(TypeError, match="integers"):
        fg.nn.one_hot(np.array([0.5]), 2)


@pytest.mark.parametrize("call, match", [
    (lambda: fnp.diff(fg.require_grad(np.array(1.0))), "at least one dimensional"),
    (lambda: fnp.quantile(fg.require_grad(V), 1.5), r"\[0, 1\]"),
    (lambda: fnp.quantile(fg.require_grad(V), 0.5, method="nearest"), "linear"),
    (lambda: fnp.convolve(fg.require_grad(V), np.ones((2, 2))), "1-d"),
    (lambda: fnp.correlate(fg.require_grad(V), V, mode="bad"), "mode"),
    (lambda: fnp.cov(fg.require_grad(A), aweights=np.ones(4)), "aweights"),
    (lambda: fnp.interp(fg.require_grad(V), XP, XP[:2]), "same length"),
    (lambda: fnp.rot90(fg.require_grad(A), axes=(0, 0)), "differ"),
    (lambda: fnp.take_along_axis(fg.require_grad(A), np.array([0]), 1), "dimensions"),
    (lambda: fnp.linalg.pinv(fg.require_grad(V)), "matrices"),
    (lambda: fnp.linalg.matrix_power(fg.require_grad(A), 2), "square"),
    (lambda: fnp.linalg.lstsq(fg.require_grad(A), V), "incompatible"),
    (lambda: fnp.select([A > 0], []), "same length"),
    (lambda: fnp.gradient(fg.require_grad(V), edge_order=2), "edge_order"),
])
def test_bad_arguments_raise_documented_errors_naming_them(call, match):
    with pytest.raises((TypeError, ValueError), match=match) as info:
        call()
    assert isinstance(info.value, fg.FuncgradError)


Z = rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))
ZV = rng.standard_normal(3) + 1j * rng.standard_normal(3)
COMPLEX = [  # NumPy conjugates in cov, corrcoef, correlate and variances
    ("cov", lambda m: m.cov(Z)), ("corrcoef", lambda m: m.corrcoef(Z)),
    ("correlate", lambda m: m.correlate(Z[0], ZV, "full")),
    ("convolve", lambda m: m.convolve(Z[0], ZV)), ("nanvar", lambda m: m.nanvar(Z)),
    ("pinv", lambda m: m.linalg.pinv(Z)), ("kron", lambda m: m.kron(Z[:2, :2], ZV)),
    ("polyval", lambda m: m.polyval(ZV, Z)), ("sinc", lambda m: m.sinc(Z)),
    ("nan_to_num", lambda m: m.nan_to_num(Z)), ("diff", lambda m: m.diff(Z)),
    ("interp", lambda m: m.interp(np.array([0.1, 0.5]), XP, XP * (1 + 2j))),
    ("average", lambda m: m.average(Z, axis=0, weights=np.arange(1.0, 4.0))),
]


@pytest.mark.parametrize("label, call", COMPLEX, ids=[c[0] for c in COMPLEX])
def test_complex_values_are_numpys(label, call):
    want, got = call(np), call(fnp)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert np.asarray(got).dtype == np.asarray(want).dtype
