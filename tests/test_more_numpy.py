"""The NumPy names of issue 10, beyond the finite-difference table: values equal to
NumPy's, closed-form derivatives of the decompositions and spectral norms, the
documented behaviour where derivatives are undefined, errors, and a strict
stand-in device on which every function computes without touching NumPy arrays.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

la = fnp.linalg
rng = np.random.default_rng(10)
X = rng.standard_normal((3, 4))
A = rng.standard_normal((2, 3, 4))
B = rng.standard_normal((4, 3, 2))
S = rng.standard_normal((2, 4, 4))
S = S + np.swapaxes(S, -1, -2)

SAME_AS_NUMPY = [
    ("floor", lambda m: m.floor(A)),
    ("ceil", lambda m: m.ceil(A)),
    ("round", lambda m: m.round(A * 10)),
    ("round-decimals", lambda m: m.round(A, 2)),
    ("round-half-even", lambda m: m.round(np.array([0.5, 1.5, 2.5, -0.5]))),
    ("all", lambda m: m.all(A > -1, axis=(0, 2), keepdims=True)),
    ("any", lambda m: m.any(A > 1, axis=1)),
    ("sort", lambda m: m.sort(A)),
    ("sort-axis0", lambda m: m.sort(A, axis=0)),
    ("sort-none", lambda m: m.sort(A, axis=None)),
    ("sort-nan", lambda m: m.sort(np.array([2.0, np.nan, -1.0, 0.0]))),
    ("sort-stable", lambda m: m.sort(A, kind="stable")),
    ("diag-vector", lambda m: m.diag(X[0], -2)),
    ("diag-matrix", lambda m: m.diag(X, 2)),
    ("diag-beyond", lambda m: m.diag(X, 7)),
    ("diagonal", lambda m: m.diagonal(A, -1, 2, 0)),
    ("vstack", lambda m: m.vstack([X, X[0], X[:1]])),
    ("vstack-scalars", lambda m: m.vstack([1.0, 2.0])),
    ("hstack", lambda m: m.hstack([X, X[:, :1]])),
    ("hstack-vectors", lambda m: m.hstack((X[0], X[1, :2]))),
    ("triu", lambda m: m.triu(A, 1)),
    ("tril", lambda m: m.tril(A, -2)),
    ("tril-vector", lambda m: m.tril(X[0])),
    ("triu-inf", lambda m: m.triu(np.full((3, 3), np.inf))),
    ("roll-flat", lambda m: m.roll(A, -5)),
    ("roll-axes", lambda m: m.roll(A, (1, 2, 3), (0, 2, 2))),
    ("cross", lambda m: m.cross(A[..., :3], B[:3, :, 0], axisb=-1)),
    ("cross-axes", lambda m: m.cross(B, B[::-1], axisa=1, axisb=1, axisc=0)),
    ("eigh", lambda m: tuple(m.linalg.eigh(S))),
    ("eigh-upper", lambda m: tuple(m.linalg.eigh(S + np.tril(S), UPLO="U"))),
    ("svd", lambda m: tuple(m.linalg.svd(A))),
    ("svd-reduced", lambda m: tuple(m.linalg.svd(B, full_matrices=False))),
    ("svd-values", lambda m: m.linalg.svd(A, compute_uv=False)),
    ("qr", lambda m: tuple(m.linalg.qr(B))),
    ("qr-wide", lambda m: tuple(m.linalg.qr(A))),
    ("qr-complete", lambda m: tuple(m.linalg.qr(B, mode="complete"))),
    ("qr-r", lambda m: m.linalg.qr(A, mode="r")),
    ("norm-2", lambda m: m.linalg.norm(A, 2, axis=(1, 2))),
    ("norm--2", lambda m: m.linalg.norm(A, -2, axis=(2, 0), keepdims=True)),
    ("norm-nuc", lambda m: m.linalg.norm(X, "nuc")),
]


def _leaves(x):
    return x if isinstance(x, tuple) else (x,)


@pytest.mark.parametrize("name, fun", SAME_AS_NUMPY, ids=[n for n, _ in SAME_AS_NUMPY])
def test_values_match_numpy(name, fun):
    want, got = _leaves(fun(np)), _leaves(fun(fnp))
    assert len(want) == len(got)
    for w, g in zip(want, got, strict=True):
        g = np.asarray(g)
        assert g.shape == np.shape(w) and g.dtype == np.asarray(w).dtype, name
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


PADS = [1, (2,), (1, 3), ((0, 5), (7, 2)), ((9, 1),), 0]


@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "reflect", "symmetric"])
@pytest.mark.parametrize("width", PADS, ids=str)
def test_pad_matches_numpy(mode, width):
    # wide pads on short axes: reflect and symmetric fold back more than once
    for x in (X, X[:1], X[:, :2]):
        kwargs = {"constant_values": ((1.0, 2.0), (3.0, 4.0))} if mode == "constant" else {}
        want = np.pad(x, width, mode=mode, **kwargs)
        np.testing.assert_array_equal(fnp.pad(x, width, mode=mode, **kwargs), want)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("count", [1, 2, 3])
def test_meshgrid_matches_numpy(indexing, sparse, count):
    args = [X[0], X[1, :3], A[0, 0, :2]][:count]
    want = np.meshgrid(*args, indexing=indexing, sparse=sparse)
    got = fnp.meshgrid(*args, indexing=indexing, sparse=sparse)
    assert type(got) is type(want) and len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_result_types_are_numpys_named_tuples():
    assert la.eigh(S).eigenvalues is not None and la.eigh(S)._fields == ("eigenvalues",
                                                                         "eigenvectors")
    assert la.svd(X)._fields == ("U", "S", "Vh") and la.qr(X)._fields == ("Q", "R")
    h, tau = la.qr(X, mode="raw")  # LAPACK's data, as NumPy gives it
    for g, want in zip((h, tau), np.linalg.qr(X, mode="raw"), strict=True):
        np.testing.assert_allclose(g, want)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_decompositions_keep_the_dtype(dtype):
    a = (S[0] + 8 * np.eye(4)).astype(dtype)
    for out in (la.eigh(a), la.svd(a), la.qr(a), (la.norm(a, "nuc"),)):
        for leaf in out:
            assert leaf.dtype == dtype
    g = fg.grad(lambda m: la.eigh(m)[0][-1] + la.norm(m, 2) + la.qr(m)[1][0, 0])(a)
    assert g.dtype == dtype


# -- closed forms ------------------------------------------------------------------------


def test_gradient_of_the_eigenvalue_sum_is_the_identity():
    # sum(w) = trace(a): the gradient is I at any matrix, repeated eigenvalues included
    for a in (S[0], np.eye(3), np.diag([1.0, 1.0, 2.0])):
        g = fg.grad(lambda m: la.eigh(m)[0].sum())(a)
        np.testing.assert_allclose(g, np.eye(len(a)), atol=1e-12)


def test_gradient_of_the_largest_eigenvalue_is_its_projector():
    # d w_max = <v v^T, da> for symmetric da: the gradient is the projector v v^T itself,
    # symmetric, whichever triangle is read (the convention of JAX and PyTorch).
    v = np.linalg.eigh(S[0])[1]
    p = np.outer(v[:, -1], v[:, -1])
    g = fg.grad(lambda m: la.eigh(m)[0][-1])(S[0])
    np.testing.assert_allclose(g, p, atol=1e-10)
    gu = fg.grad(lambda m: la.eigh(m, UPLO="U")[0][-1])(S[0])
    np.testing.assert_allclose(gu, p, atol=1e-10)


def test_spectral_functions_have_finite_gradients_at_repeated_eigenvalues():
    # ||a||_F^2 = sum(w^2): gradient 2a (on the lower triangle), defined at ties too
    a = np.diag([1.0, 1.0, 3.0]) + np.tril(np.full((3, 3), 0.0))
    g = fg.grad(lambda m: (la.eigh(m)[0] ** 2).sum())(a)
    np.testing.assert_allclose(g, 2 * a, atol=1e-12)
    # Through the eigenvectors at a tie the derivative does not exist; the documented
    # behaviour is a finite value (the tied pair's 1/gap taken as 0), never NaN.
    g = fg.grad(lambda m: (la.eigh(m)[1] ** 3).sum())(a)
    assert np.all(np.isfinite(g))


@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (2, 4, 3)])
def test_gradients_of_singular_values_and_norms(shape):
    a = rng.standard_normal(shape)
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    # d nuclear norm = U Vh; d sum(s) the same
    np.testing.assert_allclose(fg.grad(lambda m: la.norm(m, "nuc", axis=(-2, -1)).sum())(a),
                               u @ vh, atol=1e-10)
    np.testing.assert_allclose(fg.grad(lambda m: la.svd(m, compute_uv=False).sum())(a),
                               u @ vh, atol=1e-10)
    # d ||a||_2 = u1 v1^T, d ||a||_-2 = uk vk^T
    top = u[..., :, :1] @ vh[..., :1, :]
    bottom = u[..., :, -1:] @ vh[..., -1:, :]
    np.testing.assert_allclose(fg.grad(lambda m: la.norm(m, 2, axis=(-2, -1)).sum())(a), top,
                               atol=1e-10)
    np.testing.assert_allclose(fg.grad(lambda m: la.norm(m, -2, axis=(-2, -1)).sum())(a),
                               bottom, atol=1e-10)
    # forward mode: ds_i = u_i^T t v_i
    t = rng.standard_normal(shape)
    _, ds = fg.jvp(lambda m: la.svd(m, compute_uv=False), (a,), (t,))
    np.testing.assert_allclose(ds, np.einsum("...ik,...ij,...kj->...k", u, t, vh), atol=1e-10)


def test_qr_derivatives_keep_the_factors_orthonormal_and_triangular():
    a = rng.standard_normal((5, 3)) + 3 * np.eye(5, 3)
    t = rng.standard_normal((5, 3))
    (q, r), (dq, dr) = fg.jvp(lambda m: tuple(la.qr(m)), (a,), (t,))
    np.testing.assert_allclose(dq.T @ q + q.T @ dq, 0, atol=1e-12)  # d(Q^T Q) = 0
    np.testing.assert_allclose(np.tril(dr, -1), 0, atol=1e-12)  # R stays upper triangular
    np.testing.assert_allclose(dq @ r + q @ dr, t, atol=1e-12)  # d(QR) = da


def test_rounding_has_zero_derivatives_of_the_input_dtype():
    x = np.array([0.0, 1.0, 2.5, -1.5], np.float32)  # jumps included: zero there too
    for fun in (fnp.floor, fnp.ceil, fnp.round, lambda v: fnp.round(v, 1)):
        g = fg.grad(lambda v, fun=fun: fun(v).sum())(x)
        assert g.dtype == np.float32 and g.shape == x.shape and not g.any()
        _, t = fg.jvp(fun, (x,), (np.ones_like(x),))
        assert t.dtype == np.float32 and not t.any()
        np.testing.assert_array_equal(fg.grad(lambda v, fun=fun: (fun(v) * v).sum())(x),
                                      fun(x))


def test_sort_gives_tied_values_gradients_in_stable_order():
    g = fg.grad(lambda v: fnp.sort(v)[0] + 2 * fnp.sort(v)[1])(np.array([1.0, 1.0, 0.5]))
    np.testing.assert_array_equal(g, [2.0, 0.0, 1.0])


def test_all_and_any_are_data_even_on_nodes():
    def f(x):
        assert type(fnp.all(x > 0)) is not fg.Node and type(fnp.any(x, axis=0)) is not fg.Node
        return fnp.where(fnp.all(x > 0), x, -x).sum()

    np.testing.assert_array_equal(fg.grad(f)(np.ones(3)), np.ones(3))


# -- errors -----------------------------------------------------------------------------

BAD = [
    ("pad-mode", lambda: fnp.pad(X, 1, mode="mean"), "mean"),
    ("pad-width", lambda: fnp.pad(X, ((1, 2, 3),)), "pad_width"),
    ("pad-negative", lambda: fnp.pad(X, -1), "negative"),
    ("pad-empty-axis", lambda: fnp.pad(np.zeros((0, 2)), 1, mode="edge"), "empty axis 0"),
    ("diag-3d", lambda: fnp.diag(A), "1-d or 2-d"),
    ("diagonal-1d", lambda: fnp.diagonal(X[0]), "at least 2"),
    ("triu-0d", lambda: fnp.triu(np.float64(1.0)), "triu"),
    ("cross-sizes", lambda: fnp.cross(X, X), "3 components"),
    ("meshgrid-indexing", lambda: fnp.meshgrid(X[0], indexing="yx"), "indexing"),
    ("sort-axis", lambda: fnp.sort(X, axis=2), "axis 2"),
    ("eigh-uplo", lambda: la.eigh(S, UPLO="X"), "UPLO"),
    ("eigh-square", lambda: la.eigh(X), "square"),
    ("svd-hermitian", lambda: la.svd(S, hermitian=True), "eigh"),
    ("svd-1d", lambda: la.svd(X[0]), "matrices"),
    ("qr-mode", lambda: la.qr(X, mode="economic"), "economic"),
]


@pytest.mark.parametrize("name, call, words", BAD, ids=[b[0] for b in BAD])
def test_bad_arguments_raise_clear_errors(name, call, words):
    with pytest.raises(fg.FuncgradError, match=words) as info:
        call()
    assert isinstance(info.value, (ValueError, TypeError))


# -- the strict stand-in device -------------------------------------------------------
# tests/standin.py refuses NumPy arrays and Nodes in raw code: every function, its
# rules at second order and its forward mode compute in the device's namespace.

STRICT = [
    ("floor", lambda x: fnp.floor(x) * x),
    ("round", lambda x: fnp.round(x, 1) * x),
    ("sort", lambda x: fnp.sort(x, axis=0) * fnp.sort(x, axis=None)[:3]),
    ("diag", lambda x: fnp.diag(fnp.diag(x, 1), -1)),
    ("stack", lambda x: fnp.hstack([fnp.vstack([x, x[0]]), fnp.vstack([x, x[1]])])),
    ("triangles", lambda x: fnp.triu(x, 1) * fnp.tril(x)),
    ("pad", lambda x: fnp.pad(x, ((1, 2), (0, 1)), constant_values=2.0) ** 2),
    ("pad-reflect", lambda x: fnp.pad(x, 2, mode="reflect") ** 2),
    ("roll", lambda x: fnp.roll(x, (1, 2), (0, 1)) * x),
    ("meshgrid", lambda x: fnp.meshgrid(x[0], x[1])[1] * x[2]),
    ("cross", lambda x: fnp.cross(x, x[::-1])),
    ("eigh", lambda x: fnp.linalg.eigh(x + x.T)[0] ** 2),
    ("eigh-function", lambda x: _sin_of_symmetric(x + x.T)),
    ("svd", lambda x: fnp.matmul(fnp.linalg.svd(x)[0], fnp.linalg.svd(x)[2])),
    ("svd-full", lambda x: fnp.linalg.svd(x[:, :2])[0][:, 2] ** 2),
    ("qr", lambda x: fnp.linalg.qr(x)[1] ** 2),
    ("qr-wide", lambda x: fnp.linalg.qr(x[:2])[1] ** 2),
    ("norms", lambda x: fnp.linalg.norm(x, 2) * fnp.linalg.norm(x, "nuc")
     + fnp.linalg.norm(x, -2)),
]


def _sin_of_symmetric(a):
    w, v = fnp.linalg.eigh(a)
    return fnp.matmul(v * fnp.sin(w), fnp.swapaxes(v, -1, -2))


@pytest.mark.parametrize("name, fun", STRICT, ids=[s[0] for s in STRICT])
def test_functions_compute_on_the_strict_device(standin, name, fun):
    a = np.array([[3.1, 0.2, -0.7], [0.4, 2.2, 0.3], [-0.5, 0.6, 0.9]])
    t = np.array([[0.3, -0.1, 0.2], [0.5, 0.1, -0.4], [0.2, 0.7, 0.1]])

    def loss(v):
        return fnp.sum(fun(v) ** 2)

    def results(x, t):
        def grad_dot_t(v):  # a second derivative, in both modes below
            return fnp.sum(fg.grad(loss)(v) * t)

        return [fun(x), fg.grad(loss)(x), fg.jvp(fun, (x,), (t,))[1], fg.grad(grad_dot_t)(x),
                fg.jvp(grad_dot_t, (x,), (t,))[1]]

    want = results(a, t)
    got = results(standin.put(a), standin.put(t))
    for g, w in zip(got, want, strict=True):
        assert type(g) is standin.StrictArray, name
        np.testing.assert_allclose(standin.get(g), w, rtol=1e-9, atol=1e-12)
