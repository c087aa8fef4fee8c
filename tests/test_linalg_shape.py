"""Products, ``fnp.linalg``, shape and indexing: what the finite-difference table
cannot see -- values equal to NumPy's, deterministic scatter-adds, the norm's
gradient at zero, float16 through LAPACK.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

rng = np.random.default_rng(0)
X = rng.standard_normal((2, 3, 4))
M = rng.standard_normal((2, 3, 3)) + 4 * np.eye(3)

SAME_AS_NUMPY = [
    ("dot", lambda m: m.dot(X, rng.standard_normal((5, 4, 2)))),
    ("dot-vector", lambda m: m.dot(X, np.arange(4.0))),
    ("tensordot", lambda m: m.tensordot(X, X, axes=([1, 2], [1, 2]))),
    ("inner", lambda m: m.inner(X, X[0])),
    ("outer", lambda m: m.outer(X[0], X[1, 0])),
    ("trace", lambda m: m.trace(X, 1, 2, 0)),
    ("einsum-ellipsis", lambda m: m.einsum("...ij,jk", X, X[0].T)),
    ("einsum-implicit", lambda m: m.einsum("bA", X[0])),
    ("einsum-diagonal", lambda m: m.einsum("jii->ij", M)),
    ("einsum-interleaved", lambda m: m.einsum(X, [0, 1, 2], X[0], [1, 2], [0])),
    ("einsum-interleaved-implicit", lambda m: m.einsum(X, [40, 1, 2], X[0], [1, 3])),
    ("einsum-interleaved-ellipsis", lambda m: m.einsum(X, [..., 1], X[0].T, [1, 5])),
    ("einsum-interleaved-ellipsis-out", lambda m: m.einsum(M, [..., 7, 7], [7, ...])),
    ("einsum-interleaved-three", lambda m: m.einsum(X[0], [0, 1], X[1].T, [1, 2], X[0, :, :3],
                                                     [2, 0], [])),
    ("moveaxis", lambda m: m.moveaxis(X, [0, 1], [-1, 0])),
    ("swapaxes", lambda m: m.swapaxes(X, 0, 2)),
    ("concatenate-none", lambda m: m.concatenate([X, X[0]], axis=None)),
    ("flip", lambda m: m.flip(X, (0, 2))),
    ("tile", lambda m: m.tile(X[0], (2, 1, 2))),
    ("repeat", lambda m: m.repeat(X, [1, 0, 2], axis=1)),
    ("take-wrap", lambda m: m.take(X, [7, -9], axis=1, mode="wrap")),
    ("inv", lambda m: m.linalg.inv(M)),
    ("det", lambda m: m.linalg.det(M)),
    ("solve-vector", lambda m: m.linalg.solve(M, np.arange(3.0))),
    ("solve-batch", lambda m: m.linalg.solve(M, rng.standard_normal((4, 1, 3, 2)))),
    ("norm-matrix-1", lambda m: m.linalg.norm(X, 1, axis=(2, 0), keepdims=True)),
    ("norm-inf", lambda m: m.linalg.norm(X[0, 0], np.inf)),
]


@pytest.mark.parametrize("name, fun", SAME_AS_NUMPY, ids=[n for n, _ in SAME_AS_NUMPY])
def test_values_match_numpy(name, fun):
    state = rng.bit_generator.state
    want = fun(np)
    rng.bit_generator.state = state  # the same random arguments for both
    got = fun(fnp)
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_einsum_interleaved_differentiates_like_the_string_form():
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    f = lambda a, b: fnp.sum(fnp.sin(fnp.einsum(a, [0, 1], b, [1, 2], [0, 2])))
    g = lambda a, b: fnp.sum(fnp.sin(fnp.einsum("ij,jk->ik", a, b)))
    # d/da sum(sin(a b)) = cos(a b) b^T
    np.testing.assert_allclose(fg.grad(f)(a, b), np.cos(a @ b) @ b.T, rtol=1e-14)
    for d in (fg.grad, fg.hessian):
        got = fg.tree.flatten(d(f, argnums=(0, 1))(a, b))[0]
        want = fg.tree.flatten(d(g, argnums=(0, 1))(a, b))[0]
        assert len(got) == len(want) == (2 if d is fg.grad else 4)
        for x, y in zip(got, want, strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-14, atol=1e-15)
    ta = rng.standard_normal((2, 3))
    np.testing.assert_allclose(fg.jvp(lambda a: f(a, b), (a,), (ta,))[1],
                               np.sum(np.cos(a @ b) * (ta @ b)), rtol=1e-14)


@pytest.mark.parametrize("args, what", [
    ((X[0], [0, 52]), "holds 52"),
    ((X[0], [0, -1]), "holds -1"),
    ((X[0], "ij"), "list of integer labels"),
    ((X[0], [0, True]), "holds True"),
    ((X[0], [0, 1], [2]), "output label"),
    ((X[0],), "one argument"),
])
def test_einsum_interleaved_errors_name_the_label(args, what):
    with pytest.raises(ValueError, match=what) as info:
        fnp.einsum(*args)
    assert isinstance(info.value, fg.FuncgradError)


INDICES = [
    np.array([3, 3, -1, 0, 3]),
    (slice(None), np.array([[0, -1], [3, 0]])),
    (np.array([0, 0, 1]), slice(None), np.array([2, 2, 2])),
    (Ellipsis, [1, 1]),
    (np.array([1, 1, 3]), np.array([True, False, True, True, False])),
]


@pytest.mark.parametrize("index", INDICES, ids=range(len(INDICES)))
def test_index_gradient_accumulates_repeats_deterministically(index):
    x = rng.standard_normal((4, 5, 3)).astype(np.float32)
    g = rng.standard_normal(x[index].shape).astype(np.float32)
    grad = fg.grad(lambda x: fnp.sum(x[index] * g))
    first = grad(x)
    want = np.zeros(x.shape); np.add.at(want, index, g.astype(np.float64))
    np.testing.assert_allclose(first, want, rtol=1e-5, atol=1e-5)
    assert first.dtype == np.float32
    assert np.array_equal(grad(x), first)  # bit-identical


def test_heavily_repeated_take_sums_exactly():
    ids = np.zeros(1000, dtype=int)
    g = fg.grad(lambda x: fnp.sum(fnp.take(x, ids)))(np.ones(3, np.float32))
    np.testing.assert_array_equal(g, [1000.0, 0.0, 0.0])


@pytest.mark.parametrize("f", [
    fnp.linalg.norm,
    lambda x: fnp.linalg.norm(x, 2, axis=-1).sum(),
    lambda x: fnp.linalg.norm(fnp.reshape(x, (2, 2)), "fro"),
], ids=["default", "ord2-axis", "fro"])
def test_norm_gradient_at_zero_is_zero(f):
    z = np.zeros(4)
    np.testing.assert_array_equal(fg.grad(f)(z), np.zeros(4))
    assert np.all(np.isfinite(fg.hessian(f)(z)))
    assert np.isfinite(fg.jvp(f, (z,), (np.ones(4),))[1])


def test_slogdet_sign_is_data_and_logabsdet_differentiable():
    a = M[0] * np.array([[-1.0], [1.0], [1.0]])
    sign, logdet = fnp.linalg.slogdet(a)
    assert sign == -1.0 and np.isclose(logdet, np.log(abs(np.linalg.det(a))))
    np.testing.assert_allclose(fg.grad(lambda a: fnp.linalg.slogdet(a)[1])(a),
                               np.linalg.inv(a).T)


def test_float16_goes_through_linalg_and_keeps_its_dtype():
    a = M.astype(np.float16)
    for f in (fnp.linalg.inv, fnp.linalg.det, lambda a: fnp.linalg.solve(a, a[0, 0])):
        assert f(a).dtype == np.float16
        g = fg.vjp(f, a)[1](np.ones(f(a).shape, np.float16))[0]
        assert g.dtype == np.float16


def test_cholesky_gradient_is_symmetric():
    s = M[0] @ M[0].T
    w = np.arange(9.0).reshape(3, 3)
    g = fg.grad(lambda s: fnp.sum(fnp.linalg.cholesky(s) * w))(s)
    np.testing.assert_allclose(g, g.T)


def test_split_returns_a_list_and_sections_must_divide():
    parts = fnp.split(fg.require_grad(np.ones(6)), 3)
    assert isinstance(parts, list) and [p.shape for p in parts] == [(2,)] * 3
    with pytest.raises(ValueError):
        fnp.split(np.ones(5), 2)
