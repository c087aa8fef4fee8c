"""The primitive table on complex inputs: which rows, and their inputs.

Every row of ``rows_*.py`` whose name is in :data:`COMPLEX` runs in complex128
and complex64.  The other names of the table are :data:`REAL_ONLY` (functions
NumPy defines on real numbers only, or that order or round them),
:data:`OTHER_TESTS` (tested on complex inputs of their own, below, because the
table's inputs do not suit them), or newer than issue 19's sweep: a function
whose rules are right for complex numbers joins :data:`COMPLEX` with its row.  Inputs
are the row's real inputs plus ``0.3j`` times a standard normal sample: near
the real axis, so each row's domain (off branch cuts, away from kinks) still
holds.

:data:`EXTRA` adds complex-only cases: Hermitian matrices for ``eigh`` and
``cholesky``, gauge-invariant functions of complex singular vectors and QR
factors, the sign of a complex determinant.
"""

from __future__ import annotations

import zlib

import numpy as np
from table import Row, load_rows

import funcgrad.numpy as fnp

la = fnp.linalg

# The names whose rows run on complex inputs (issue 19: every primitive of the table then).
COMPLEX = {
    "abs", "absolute", "add", "angle", "arccos", "arccosh", "arcsin", "arcsinh", "arctan",
    "arctanh", "astype", "atleast_1d", "broadcast_to", "concatenate", "conj", "conjugate",
    "cos", "cosh", "cross", "cumprod", "cumsum", "diag", "diagonal", "divide", "dot", "einsum",
    "exp", "exp2", "expand_dims", "expm1", "flip", "getitem", "hstack", "imag", "inner",
    "linalg.det", "linalg.inv", "linalg.norm", "linalg.qr", "linalg.slogdet", "linalg.solve",
    "linalg.svd", "log", "log10", "log1p", "log2", "matmul", "mean", "meshgrid", "moveaxis",
    "multiply", "negative", "outer", "pad", "power", "prod", "ravel", "real", "reciprocal",
    "repeat", "reshape", "roll", "sin", "sinh", "split", "sqrt", "square", "squeeze", "stack",
    "std", "subtract", "sum", "swapaxes", "take", "tan", "tanh", "tensordot", "tile", "trace",
    "transpose", "tril", "triu", "true_divide", "var", "vstack",
}
# Functions of real numbers only: NumPy raises for complex input, or orders or rounds
# complex numbers lexicographically (a function with no derivative that JAX shares).
REAL_ONLY = {
    "arctan2", "logaddexp", "floor", "ceil", "round", "clip", "maximum", "minimum",
    "max", "min", "amax", "amin", "sort", "where",
    "nn.sigmoid", "nn.relu", "nn.softplus", "nn.logsumexp", "nn.softmax", "nn.log_softmax",
    "nn.softmax_cross_entropy",
}
# (name, id) of rows that compare or order their input itself.
REAL_ONLY_IDS = {("getitem", "value-mask")}
# Rows tested on complex inputs of their own (EXTRA): the table's real symmetric inputs
# plus imaginary noise are not Hermitian, and NumPy (one triangle) and jax.numpy
# (symmetrized) then compute different functions; squares of singular vectors depend on
# their complex phases, which LAPACK picks, and q2 @ q2.T of a complement's basis on
# its rotation (q2 @ q2^H does not: EXTRA tests that).
OTHER_TESTS = {"linalg.eigh", "linalg.cholesky"}
OTHER_TEST_IDS = {("linalg.svd", "vector-squares"), ("linalg.svd", "full-one-more"),
                  ("linalg.svd", "full-complement"), ("linalg.qr", "complete")}


def complex_rows(rows=None) -> list:
    """The rows of the table that run on complex inputs."""
    rows = load_rows() if rows is None else rows
    return [r for r in rows if r.name in COMPLEX and r.name not in REAL_ONLY | OTHER_TESTS
            and (r.name, r.id) not in REAL_ONLY_IDS | OTHER_TEST_IDS]


def shapes_of(row) -> tuple:
    """One set of shapes per row: the first without size-0 or size-1 arguments."""
    return next((s for s in row.shapes if all(np.prod(x) > 1 for x in s)), row.shapes[0])


def inputs(row, dtype: str, shapes=None) -> tuple:
    """The row's real inputs plus 0.3j times noise, in ``dtype`` (complex128/complex64)."""
    shapes = shapes_of(row) if shapes is None else shapes
    rng = np.random.default_rng(abs(zlib.crc32(f"{row.name}{row.id}{shapes}".encode())) % 2**32)
    args = row.inputs(rng, "float64", shapes)
    return tuple((a + 0.3j * rng.standard_normal(np.shape(a))).astype(dtype) for a in args)


def label(row) -> str:
    return f"{row.name}{('-' + row.id) if row.id else ''}"


# -- complex-only cases ---------------------------------------------------------------


def _H(a, ns=fnp):
    return ns.conj(ns.swapaxes(a, -1, -2))


def _hermitian(rng, dtype, shapes):
    """Hermitian matrices with well-separated eigenvalues: q diag(w) q^H, q unitary."""
    (s,) = shapes
    n = s[-1]
    m = rng.standard_normal(s) + 1j * rng.standard_normal(s)
    q, _ = np.linalg.qr(m)
    w = np.arange(n) * 1.5 - n + 0.1 * rng.standard_normal(s[:-1])
    return ((q * w[..., None, :]) @ np.conj(np.swapaxes(q, -1, -2)),)


def _general(rng, dtype, shapes):
    """Complex matrices with singular values >= 0.5 apart and away from 0."""
    out = []
    for s in shapes:
        m, n = s[-2:]
        k = min(m, n)
        u, _ = np.linalg.qr(rng.standard_normal(s[:-2] + (m, m)) + 1j * rng.standard_normal(
            s[:-2] + (m, m)))
        v, _ = np.linalg.qr(rng.standard_normal(s[:-2] + (n, n)) + 1j * rng.standard_normal(
            s[:-2] + (n, n)))
        sv = 1.0 + 0.7 * np.arange(k)[::-1]
        out.append((u[..., :, :k] * sv) @ np.conj(np.swapaxes(v[..., :, :k], -1, -2)))
    return tuple(out)


def _hpd(ns):
    def f(a):
        return a @ _H(a, ns) + 3.0 * ns.eye(a.shape[-1], dtype=a.dtype)
    return f


def extra_rows(ns=fnp):
    """Complex-only rows, written against the namespace ``ns`` (``fnp`` or ``jax.numpy``)."""
    lin = ns.linalg

    def herm(a):  # (a + a^H) / 2: a Hermitian function of any a
        return (a + _H(a, ns)) / 2

    def eigh_function(a):
        w, v = lin.eigh(herm(a))
        return (v * ns.exp(w / 4)[..., None, :]) @ _H(v, ns)

    def svd_function(a):
        u, s, vh = lin.svd(a, full_matrices=False)
        return (u * ns.sin(s)[..., None, :]) @ vh

    def svd_projectors(a):
        u, s, vh = lin.svd(a, full_matrices=True)
        return ns.concatenate([ns.ravel(u @ _H(u, ns)), ns.ravel(_H(vh, ns) @ vh), s])

    def phases_free(a):  # |u_ij|^2 and |v_ij|^2 do not depend on the pairs' phases
        u, _, vh = lin.svd(a, full_matrices=False)
        return ns.concatenate([ns.ravel(ns.abs(u) ** 2), ns.ravel(ns.abs(vh) ** 2)])

    def qr_both(a):
        q, r = lin.qr(a)
        return ns.concatenate([ns.ravel(q), ns.ravel(r)])

    def qr_complete(a):
        q, r = lin.qr(a, mode="complete")
        return ns.concatenate([ns.ravel(q @ _H(q, ns)), ns.ravel(r)])

    sq = [((3, 3),), ((2, 3, 3),)]
    return [
        Row("linalg.eigh", lambda a: lin.eigh(herm(a))[0], id="hermitian-values",
            make=_hermitian, shapes=sq),
        Row("linalg.eigh", eigh_function, id="hermitian-function", make=_hermitian, shapes=sq),
        Row("linalg.eigh", eigh_function, id="of-any", make=_general, shapes=sq),
        Row("linalg.eigh", lambda a: ns.abs(lin.eigh(herm(a))[1]) ** 2, id="vector-moduli",
            make=_general, shapes=sq),
        Row("linalg.cholesky", lambda a: lin.cholesky(_hpd(ns)(a)), id="hermitian",
            make=_general, shapes=sq),
        Row("linalg.svd", svd_function, id="complex-function", make=_general,
            shapes=[((3, 3),), ((4, 2),), ((2, 4),)]),
        Row("linalg.svd", svd_projectors, id="complex-projectors", make=_general,
            shapes=[((4, 2),), ((2, 4),)]),
        Row("linalg.svd", phases_free, id="complex-moduli", make=_general,
            shapes=[((3, 3),), ((4, 2),), ((2, 4),)]),
        Row("linalg.svd", lambda a: lin.svd(a, compute_uv=False), id="complex-values",
            make=_general, shapes=[((3, 3),), ((2, 4),)]),
        Row("linalg.qr", qr_both, id="complex", make=_general,
            shapes=[((3, 3),), ((4, 2),), ((2, 4),)]),
        Row("linalg.qr", qr_complete, id="complex-complete", make=_general,
            shapes=[((4, 2),)]),
        Row("linalg.slogdet", lambda a: lin.slogdet(a)[0], id="complex-sign", make=_general,
            shapes=sq),
        Row("linalg.norm", lambda a: lin.norm(a, 2), id="complex-spectral", make=_general,
            shapes=[((3, 3),)]),
        Row("linalg.norm", lambda a: lin.norm(a, "nuc"), id="complex-nuc", make=_general,
            shapes=[((2, 4),)]),
    ]


def extra_inputs(row, dtype: str, shapes) -> tuple:
    rng = np.random.default_rng(abs(zlib.crc32(f"{row.name}{row.id}{shapes}".encode())) % 2**32)
    return tuple(np.asarray(a).astype(dtype) for a in row.make(rng, dtype, shapes))
