"""fg.vmap over the primitives that the table (test_vmap.py) does not reach: SciPy's matrix
functions and convolutions (one call per example, on purpose), nn's erf, the sparse
operator's matrix-vector product, and lstsq's rank and residuals: each against the loop
``stack([f(x) for x in X])``, with no fallback warning, values and per-example gradients.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import nn
from funcgrad.scipy import linalg as sla
from funcgrad.scipy import signal
from funcgrad.scipy.sparse import linalg as spla

B = 3
RNG = np.random.default_rng(7)


def _well(n=3):
    return np.eye(n) * 2.0 + 0.3 * RNG.standard_normal((n, n))


def _spd(n=3):
    m = RNG.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


SPARSE = scipy.sparse.csr_matrix(_spd(4))

CASES = [
    ("solve_triangular", lambda a, b: sla.solve_triangular(a, b, lower=True),
     [np.tril(_well()) for _ in range(B)], [RNG.standard_normal(3) for _ in range(B)]),
    ("solve_triangular.T", lambda a, b: sla.solve_triangular(a, b, trans=1),
     [np.triu(_well()) for _ in range(B)], [RNG.standard_normal((3, 2)) for _ in range(B)]),
    ("expm", lambda a: sla.expm(0.5 * a), [RNG.standard_normal((3, 3)) for _ in range(B)]),
    ("sqrtm", sla.sqrtm, [_spd() for _ in range(B)]),
    ("solve_sylvester", sla.solve_sylvester, [_spd() for _ in range(B)],
     [_spd() for _ in range(B)], [RNG.standard_normal((3, 3)) for _ in range(B)]),
    ("lu_factor", lambda a: sla.lu_factor(a)[0], [_well() for _ in range(B)]),
    ("convolve", signal.convolve, [RNG.standard_normal(5) for _ in range(B)],
     [RNG.standard_normal(3) for _ in range(B)]),
    ("convolve2d", lambda a, b: signal.convolve2d(a, b, mode="same"),
     [RNG.standard_normal((4, 4)) for _ in range(B)],
     [RNG.standard_normal((2, 2)) for _ in range(B)]),
    ("gelu", lambda x: nn.gelu(x, approximate=False),
     [RNG.standard_normal(4) for _ in range(B)]),
    ("cg(sparse)", lambda b: spla.cg(SPARSE, b)[0], [RNG.standard_normal(4) for _ in range(B)]),
]


def _mapped(f, examples, axis):
    args = [np.stack(e, axis=axis) for e in examples]
    with warnings.catch_warnings():
        warnings.simplefilter("error", fg.VmapFallbackWarning)
        return fg.vmap(f, in_axes=axis)(*args)


@pytest.mark.parametrize("name,f,examples", [(c[0], c[1], c[2:]) for c in CASES],
                         ids=[c[0] for c in CASES])
def test_vmap_of_scipy_primitives_matches_the_loop(name, f, examples):
    want = np.stack([np.asarray(f(*ex)) for ex in zip(*examples, strict=True)])
    for axis in (0, -1):
        got = _mapped(f, examples, axis)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name,f,examples", [(c[0], c[1], c[2:]) for c in CASES
                                             if c[0] not in ("lu_factor", "cg(sparse)")],
                         ids=[c[0] for c in CASES if c[0] not in ("lu_factor", "cg(sparse)")])
def test_per_example_gradients_of_scipy_primitives_match_the_loop(name, f, examples):
    n = len(examples)
    g = fg.grad(lambda *a: fnp.sum(fnp.sin(f(*a))), argnums=tuple(range(n)))
    want = [np.stack(w) for w in zip(*[g(*ex) for ex in zip(*examples, strict=True)],
                                     strict=True)]
    got = _mapped(g, examples, 0)
    for a, w in zip(got, want, strict=True):
        np.testing.assert_allclose(a, w, rtol=1e-8, atol=1e-10)


def test_lstsq_under_vmap_gives_one_rank_per_example_and_refuses_mixed_residuals():
    a = RNG.standard_normal((B, 4, 2))
    b = RNG.standard_normal((B, 4))
    out = _mapped(lambda a, b: fnp.linalg.lstsq(a, b), [list(a), list(b)], 0)
    for k in range(B):
        x, res, rank, s = np.linalg.lstsq(a[k], b[k], rcond=None)
        np.testing.assert_allclose(out.x[k], x, rtol=1e-10)
        np.testing.assert_allclose(out.residuals[k], res, rtol=1e-10)
        np.testing.assert_allclose(out.s[k], s, rtol=1e-10)
        assert out.rank[k] == rank
    assert isinstance(fnp.linalg.lstsq(a[0], b[0]).rank, int)  # outside vmap: an int
    a[1, :, 1] = a[1, :, 0]  # rank 1: no residuals for this example, two for the others
    with pytest.raises(fg.FuncgradValueError, match="lstsq's residuals have different"):
        fg.vmap(lambda a, b: fnp.linalg.lstsq(a, b).residuals)(a, b)
    x = fg.vmap(lambda a, b: fnp.linalg.pinv(a) @ b)(a, b)  # what the message offers
    np.testing.assert_allclose(x[1], np.linalg.lstsq(a[1], b[1], rcond=None)[0], atol=1e-10)


def test_the_sparse_operator_product_maps_as_one_matrix_product():
    from funcgrad.scipy.sparse.linalg import _operator_matvec

    v = RNG.standard_normal((B, 4))
    dense = SPARSE.toarray()
    for axis, vs in ((0, v), (1, v.T)):
        got = _mapped(lambda x: _operator_matvec(x, SPARSE), [list(vs.T if axis else vs)],
                      axis)
        np.testing.assert_allclose(got, v @ dense.T, rtol=1e-12)
    g = fg.grad(lambda x: fnp.sum(fnp.sin(_operator_matvec(x, SPARSE))))
    got = _mapped(g, [list(v)], 0)
    np.testing.assert_allclose(got, np.stack([dense.T @ np.cos(dense @ x) for x in v]),
                               rtol=1e-10)


def test_odeint_and_stats_under_vmap_match_the_loop():
    from funcgrad.scipy import integrate, stats

    t = np.linspace(0.0, 1.0, 4)
    y0s = RNG.standard_normal((B, 2))
    ks = np.array([0.5, 1.0, 2.0])
    solve = lambda y0, k: integrate.odeint(lambda y, t, k: -k * y, y0, t, k)
    want = np.stack([solve(y, k) for y, k in zip(y0s, ks, strict=True)])
    np.testing.assert_allclose(_mapped(solve, [list(y0s), list(ks)], 0), want, rtol=1e-12)
    # per-example gradients (the adjoint ODE of each example), as the loop gives them
    loss = lambda y0, k: fnp.sum(solve(y0, k))
    np.testing.assert_allclose(fg.vmap(fg.grad(loss))(y0s, ks),
                               np.stack([fg.grad(loss)(y, k) for y, k in zip(y0s, ks)]),
                               rtol=1e-12)
    np.testing.assert_allclose(fg.vmap(fg.grad(loss, argnums=1))(y0s, ks),
                               [fg.grad(loss, argnums=1)(y, k) for y, k in zip(y0s, ks)],
                               rtol=1e-12)
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    logpdf = lambda x: stats.multivariate_normal.logpdf(x, np.zeros(2), cov)
    xs = RNG.standard_normal((B, 2))
    np.testing.assert_allclose(_mapped(logpdf, [list(xs)], 0),
                               [logpdf(x) for x in xs], rtol=1e-12)
    np.testing.assert_allclose(_mapped(fg.grad(logpdf), [list(xs)], 0),
                               np.stack([fg.grad(logpdf)(x) for x in xs]), rtol=1e-12)
    alpha = np.array([1.5, 2.0, 3.0])
    ps = RNG.dirichlet(np.ones(3), B)
    dlog = lambda p: stats.dirichlet.logpdf(p, alpha)
    np.testing.assert_allclose(_mapped(dlog, [list(ps)], 0), [dlog(p) for p in ps],
                               rtol=1e-12)
