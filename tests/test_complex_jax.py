"""Complex numbers against ``jax.numpy``: the primitive table in complex128 and complex64.

Each row of the table (``rows_*.py``, less :data:`complex_table.REAL_ONLY` and the rows
with complex cases of their own, ``complex_table.extra_rows``) runs twice: as written,
on funcgrad, and with the same source executed against ``jax.numpy`` (the rows'
``fnp`` is ``jax.numpy`` there).  On complex inputs the two must agree on

- the values;
- ``grad`` of a real-valued function of every output (``real(c * y) + |y|^2``);
- JVPs and VJPs in random complex directions;
- second order: the JVP of that gradient (a Hessian-vector product);
- for the holomorphic rows, ``jacfwd`` and ``jacobian`` with ``holomorphic=True``.

JAX is an independent implementation of the same convention (the VJP is the plain
transpose of the JVP), so a conjugation error, a dropped imaginary part or a wrong
non-holomorphic rule shows up as a mismatch.  Skipped when JAX is not installed.

JAX's per-call cost (it compiles every operation for every new shape and dtype)
dominates the time: by default one row per function name runs in complex128, with
one complex-only case per kind and one name in eight in complex64 as well, and the
second-order check for one name in four;
``FUNCGRAD_JAX_FULL=1`` runs every row and every complex-only shape in both dtypes
(about 450 cases, four times as long; all pass).  :data:`JAX_DIFFERS` lists the rows where JAX
itself cannot serve as the reference, with the reason; ``test_complex.py`` checks
those against finite differences.
"""

from __future__ import annotations

import builtins
import os
import pathlib
import sys
import types

import numpy as np
import pytest

# JAX's reference for astype's complex -> real round trip warns that it will refuse
# the cast one day (NumPy's ComplexWarning, in JAX's words); funcgrad takes the real part.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Casting from complex to real dtypes will soon raise:DeprecationWarning")

# XLA's compile time dominates; these cases need no optimized code (no effect if JAX's
# backend is already up).
os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import complex_table as ct

import funcgrad as fg
import funcgrad.numpy as fnp

# Rows that are holomorphic functions of their inputs: their complex derivative exists.
HOLOMORPHIC = {
    "add", "subtract", "multiply", "divide", "true_divide", "negative", "power", "square",
    "reciprocal", "sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin",
    "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh", "sum", "mean", "prod", "cumsum", "cumprod", "dot", "matmul",
    "tensordot", "einsum", "outer", "inner", "trace", "linalg.inv", "linalg.det",
    "linalg.solve", "reshape", "transpose", "moveaxis", "swapaxes", "squeeze",
    "expand_dims", "broadcast_to", "concatenate", "stack", "split", "flip", "tile", "repeat",
    "ravel", "atleast_1d", "take", "getitem", "diag", "diagonal", "vstack", "hstack",
    "triu", "tril", "pad", "roll", "meshgrid", "cross",
}
HOLOMORPHIC_IDS = {("power", "int-exponents-at-0")}  # checked, on reals, elsewhere
NOT_HOLOMORPHIC_IDS = {("astype", "round-trip"), ("pad", "")}  # real part; pad's constants

# (name, id): why JAX is no reference there.
JAX_DIFFERS = {
    ("std", "one-element"): "JAX's derivative is NaN where funcgrad's documented one is 0",
    ("std", "axis-of-one"): "JAX's derivative is NaN where funcgrad's documented one is 0",
    ("getitem", "int-2d"): "jax.numpy refuses a nested list as an index",
    ("getitem", "empty-list"): "jax.numpy refuses a list as an index",
    ("linalg.svd", "full"): "JAX has no derivative of the full SVD",
    ("linalg.svd", "complex-projectors"): "JAX has no derivative of the full SVD",
}
FULL = os.environ.get("FUNCGRAD_JAX_FULL", "") not in ("", "0")


# -- the table against jax.numpy ---------------------------------------------------------


class _Space:
    """``fnp``'s names answered by ``jax.numpy`` (with the few spellings that differ)."""

    def __init__(self, base, **over):
        self._base, self._over = base, over

    def __getattr__(self, name):
        if name in self._over:
            return self._over[name]
        return getattr(self._base, name)


def _asarray(a, dtype=None, like=None):
    return jnp.asarray(a, dtype=dtype)


def _lists_as_arrays(fun):  # jax.numpy takes no Python lists as index data
    def call(a, *args, **kwargs):
        return fun(a, *(jnp.asarray(x) if isinstance(x, list) else x for x in args), **kwargs)
    return call


JNP = _Space(jnp, asarray=_asarray, linalg=_Space(jnp.linalg), conj=jnp.conj,
             conjugate=jnp.conjugate, take=_lists_as_arrays(jnp.take),
             repeat=_lists_as_arrays(jnp.repeat))


def _jax_rows(path: pathlib.Path) -> list:
    """The rows of ``path``, its source executed with ``funcgrad.numpy`` as ``jax.numpy``."""
    real_import = builtins.__import__
    fake_fg = types.SimpleNamespace(numpy=JNP, nn=fg.nn, tree=fg.tree)

    def fake_import(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "funcgrad.numpy" and fromlist:
            return JNP
        if name in ("funcgrad", "funcgrad.numpy"):
            return fake_fg
        return real_import(name, globals, locals, fromlist, level)

    env = {"__name__": f"_jax_{path.stem}", "__file__": str(path),
           "__builtins__": dict(vars(builtins), __import__=fake_import)}
    exec(compile(path.read_text(), str(path), "exec"), env)  # noqa: S102 (our rows files)
    return env["ROWS"]


def _pairs() -> list:
    """(funcgrad row, the same row on jax.numpy) for every complex row of the table."""
    out = []
    for path in sorted(pathlib.Path(__file__).parent.glob("rows_*.py")):
        ours = _load_ours(path)
        keep = {id(r) for r in ct.complex_rows(ours)}
        if not keep:  # no complex rows (SciPy's...): not run on jax.numpy at all
            continue
        theirs = _jax_rows(path)
        out += [(a, b) for a, b in zip(ours, theirs, strict=True) if id(a) in keep]
    out += list(zip(ct.extra_rows(fnp), ct.extra_rows(JNP), strict=True))
    return out


def _load_ours(path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_rows_cx_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ROWS


PAIRS = _pairs()
TOL = {"complex128": (1e-7, 1e-9), "complex64": (2e-3, 2e-4)}


def _host(x):
    return np.asarray(x)


def _close(ours, theirs, dtype, what):
    a, b = fg.tree.flatten(ours)[0], fg.tree.flatten(jax.tree_util.tree_leaves(theirs))[0]
    assert len(a) == len(b), f"{what}: {len(a)} leaves, JAX has {len(b)}"
    rtol, atol = TOL[dtype]
    for k, (x, y) in enumerate(zip(a, b, strict=True)):
        x, y = _host(x), _host(y)
        assert x.shape == y.shape, f"{what}, leaf {k}: shape {x.shape}, JAX {y.shape}"
        scale = max(1.0, float(np.max(np.abs(y), initial=0.0)))
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol * scale,
                                   err_msg=f"{what}, leaf {k}")


def _weights(out, rng):
    """Random complex weights, one per output leaf."""
    return [rng.standard_normal(np.shape(o)) + 1j * rng.standard_normal(np.shape(o))
            for o in fg.tree.flatten(out)[0]]


def _loss(fun, ns, weights):
    """A real-valued function of every output: sum(real(c * y) + real(y * conj(y)) / 2)."""

    def loss(*args):
        leaves = jax.tree_util.tree_leaves(fun(*args)) if ns is jnp else fg.tree.flatten(
            fun(*args))[0]
        total = 0.0
        for c, y in zip(weights, leaves, strict=True):
            c = ns.asarray(c.astype(np.result_type(np.asarray(c).dtype, np.complex64)))
            total = total + ns.sum(ns.real(c * y) + ns.real(y * ns.conj(y)) / 2)
        return total

    return loss


def _directions(args, rng):
    return tuple((rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)).astype(
        a.dtype) for a in args)


def _cotangents(out, rng):
    cts = []
    for o in fg.tree.flatten(out)[0]:
        o = np.asarray(o)
        c = rng.standard_normal(o.shape)
        if o.dtype.kind == "c":
            c = c + 1j * rng.standard_normal(o.shape)
        cts.append(c.astype(o.dtype))
    return cts


def _extra(row) -> bool:
    return row.make is not None and row.make.__module__ == ct.__name__


def _cases() -> list:
    """(pair, shapes, dtype): one set of shapes per table row, every set for the
    complex-only rows (by default: one row per name, see the module's notes)."""
    out, names = [], set()
    for pair in PAIRS:
        row = pair[0]
        if (row.name, row.id) in JAX_DIFFERS:
            continue
        if not FULL and not _extra(row) and row.name in names:
            continue
        names.add(row.name)
        sets = row.shapes if _extra(row) else [ct.shapes_of(row)]
        for shapes in (sets if FULL else sets[:1]):
            for dtype in ("complex128", "complex64"):
                # by default complex64 for one table name in eight (a fixed choice)
                if FULL or dtype == "complex128" or (not _extra(row) and len(names) % 8 == 1):
                    # second order against JAX: always in FULL, else for one name in four
                    # in complex128 (test_complex.py checks it for every row by finite
                    # differences)
                    second = FULL or (dtype == "complex128" and len(names) % 4 == 0)
                    out.append(pytest.param(pair, shapes, dtype, second,
                                            id=f"{ct.label(row)}-{shapes}-{dtype}"))
    return out


def _args(row, dtype, shapes):
    if _extra(row):
        return ct.extra_inputs(row, dtype, shapes)
    return ct.inputs(row, dtype, shapes)


def _pair_real(xs, ys) -> float:
    """The pairing real(sum(x * y)) over two lists of leaves."""
    return float(sum(np.sum(np.asarray(x) * np.asarray(y)).real
                     for x, y in zip(xs, ys, strict=True)))


def _holomorphic(row) -> bool:
    return (row.name in HOLOMORPHIC or (row.name, row.id) in HOLOMORPHIC_IDS) and (
        row.name, row.id) not in NOT_HOLOMORPHIC_IDS


@pytest.mark.parametrize("pair, shapes, dtype, second", _cases())
def test_row_matches_jax(pair, shapes, dtype, second):
    """Two JAX calls per case (JAX's per-call overhead dominates the test's time): the
    JVP of the function (values, JVPs) and the JVP of the gradient of a real function of
    its outputs (the gradient, and a Hessian-vector product: second order).  VJPs in
    random directions and the holomorphic Jacobians are checked against JAX's JVP."""
    ours, theirs = pair
    args = _args(ours, dtype, shapes)
    jargs = tuple(jnp.asarray(a) for a in args)
    rng = np.random.default_rng(7)
    nums = tuple(range(len(args)))
    ts = _directions(args, rng)
    jts = tuple(jnp.asarray(t) for t in ts)
    # values and JVPs in complex directions
    out, t_out = fg.jvp(ours.fun, args, ts)
    try:
        jout, jt_out = jax.jvp(theirs.fun, jargs, jts)
    except NotImplementedError as exc:  # older JAX (0.6 on Python 3.10): complete QR
        pytest.skip(f"JAX {jax.__version__} cannot serve as the reference here: {exc}")
    _close(out, jout, dtype, "values")
    _close(t_out, jt_out, dtype, "jvp")
    # VJPs in random directions: <vjp(u), t> == <u, J t>, J t from JAX
    cts = _cotangents(out, rng)
    _, f_vjp = fg.vjp(ours.fun, *args)
    back = f_vjp(fg.tree.unflatten(fg.tree.flatten(out)[1], cts))
    lhs, rhs = _pair_real(back, ts), _pair_real(cts, jax.tree_util.tree_leaves(jt_out))
    rtol = TOL[dtype][0] * 100
    scale = max(1.0, _pair_real([np.abs(c) for c in cts],
                                [np.abs(np.asarray(t)) for t in jax.tree_util.tree_leaves(jt_out)]))
    assert abs(lhs - rhs) <= rtol * scale, f"vjp: <vjp(u), t> = {lhs}, <u, J t> = {rhs} (JAX)"
    # grad of a real-valued function of every output, and its JVP (second order)
    w = _weights(out, rng)
    loss, jloss = _loss(ours.fun, fnp, w), _loss(theirs.fun, jnp, w)
    if second:
        g, g_dot = fg.jvp(fg.grad(loss, argnums=nums), args, ts)
        jg, jg_dot = jax.jvp(jax.grad(jloss, argnums=nums), jargs, jts)
        _close(g_dot, jg_dot, dtype, "jvp of grad")
    else:
        g, jg = fg.grad(loss, argnums=nums)(*args), jax.grad(jloss, argnums=nums)(*jargs)
    _close(g, jg, dtype, "grad")
    # the complex derivative of a holomorphic function, both modes: J t is JAX's JVP
    if _holomorphic(ours) and dtype == "complex128":
        t_leaves = list(ts)
        for name, jac in (("jacfwd", fg.jacfwd), ("jacobian", fg.jacobian)):
            blocks = jac(ours.fun, argnums=nums, holomorphic=True)(*args)
            per_out = fg.tree.flatten_up_to(fg.tree.flatten(out)[1], blocks)
            got = [sum(np.tensordot(np.asarray(b), t, axes=t.ndim) for b, t in
                       zip(row, t_leaves, strict=True))
                   for row in per_out]
            _close(got, jt_out, dtype, f"{name}(holomorphic=True) @ t")


def test_the_table_is_covered():
    """Every row runs on complex inputs unless it is listed, with its reason, in
    complex_table (real-only functions, or complex cases of its own)."""
    names = {p.values[0][0].name for p in _cases()}
    for required in ("add", "power", "log", "arcsin", "abs", "real", "imag", "conj", "angle",
                     "var", "std", "prod", "cumprod", "linalg.inv", "linalg.det",
                     "linalg.slogdet", "linalg.solve", "linalg.cholesky", "linalg.norm",
                     "linalg.eigh", "linalg.svd", "linalg.qr", "einsum", "getitem", "take"):
        assert required in names, required
    assert len(PAIRS) > 200
    assert {k[0] for k in JAX_DIFFERS} <= {p[0].name for p in PAIRS}


def test_second_order_holomorphic_matches_jax():
    """grad of grad with holomorphic=True: f''(z), reverse over reverse and forward."""
    z = np.array(0.3 + 0.4j)
    f = lambda z: fnp.sin(z) * fnp.exp(z) / (1 + z * z)
    jf = lambda z: jnp.sin(z) * jnp.exp(z) / (1 + z * z)
    want = jax.grad(jax.grad(jf, holomorphic=True), holomorphic=True)(jnp.asarray(z))
    got = fg.grad(fg.grad(f, holomorphic=True), holomorphic=True)(z)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    got_fwd = fg.jacfwd(fg.grad(f, holomorphic=True), holomorphic=True)(z)
    np.testing.assert_allclose(got_fwd, want, rtol=1e-12)


def test_hessian_of_a_real_function_of_complex_input_matches_jax():
    """A Hessian-vector product of a real function of complex z, in every composition."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    z = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    v = rng.standard_normal(3) + 1j * rng.standard_normal(3)

    def f(z, ns):
        y = ns.tanh(a @ z) * ns.conj(z)
        return ns.sum(ns.abs(y) ** 2) + ns.real(ns.sum(ns.log(1 + z * z)))

    want = jax.jvp(jax.grad(lambda z: f(z, jnp)), (z,), (v,))[1]
    np.testing.assert_allclose(fg.jvp(fg.grad(lambda z: f(z, fnp)), (z,), (v,))[1], want,
                               rtol=1e-10)
    np.testing.assert_allclose(fg.hvp(lambda z: f(z, fnp), (z,), (v,)), want, rtol=1e-10)
    # reverse over reverse: the gradient of <grad f, v> (pairing real(sum(a * b)))
    rr = fg.grad(lambda z: fnp.sum(fnp.real(fg.grad(lambda w: f(w, fnp))(z) * v)))(z)
    jrr = jax.grad(lambda z: jnp.sum(jnp.real(jax.grad(lambda w: f(w, jnp))(z) * v)))(z)
    np.testing.assert_allclose(rr, jrr, rtol=1e-10)
