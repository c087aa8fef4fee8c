"""API.md §7, Dask: lazy dispatch, Dask's quirks, gradients without a compute.

Every test skips without Dask (``pip install funcgrad[dask]``).  A *counting
scheduler* (a ``dask.config.set(scheduler=...)`` callable that counts its calls
before running the graph synchronously) proves that nothing computes while
funcgrad builds a gradient: the count must stay 0 until ``.compute()``.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="Dask is optional: pip install funcgrad[dask]")
import dask
from lazy import chunked, counting

import funcgrad as fg
import funcgrad.numpy as fnp


def computed(tree):
    """A pytree of Dask arrays computed (in one go), as NumPy arrays."""
    leaves, treedef = fg.tree.flatten(tree)
    values = dask.compute(*leaves)
    return fg.tree.unflatten(treedef, [np.asarray(v) for v in values])


def close(got, want, tol=1e-12):
    for g, w in zip(fg.tree.flatten(got)[0], fg.tree.flatten(want)[0], strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)


# --- registration -----------------------------------------------------------------------


def test_import_funcgrad_does_not_import_dask():
    code = ("import sys, funcgrad, funcgrad.numpy; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_a_dask_array_reaching_a_primitive_registers_the_dask_namespace():
    code = (
        "import sys, numpy, funcgrad.numpy as fnp, funcgrad.backend as b\n"
        "import dask.array as da\n"
        "assert 'funcgrad.backends.dask' not in sys.modules\n"
        "y = fnp.sin(da.ones(3, chunks=2))\n"
        "assert type(y) is da.Array, type(y)\n"
        "assert b.namespace(y) is sys.modules['funcgrad.backends.dask'].xp\n"
        "assert b.is_lazy(b.namespace(y))\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.stdout.strip() == "ok", out.stderr


def test_device_of_reports_what_the_chunks_hold():
    x = da.ones((4, 2), chunks=2)
    assert fg.device_of(x) == "cpu"
    assert fg.require_grad(x).device == "cpu"
    host = fg.to_device(x, "cpu")
    assert type(host) is np.ndarray
    np.testing.assert_array_equal(host, np.ones((4, 2)))


def test_numpy_data_is_absorbed_into_dask():
    out = fnp.add(np.ones(3), da.ones(3, chunks=2))
    assert isinstance(out, da.Array)
    g = fg.grad(lambda w: fnp.sum(fnp.where(np.array([True, False, True]), w, 0.0)
                                  * da.arange(3.0, chunks=2)))(np.ones(3))
    assert isinstance(g, da.Array)
    np.testing.assert_array_equal(g.compute(), [0.0, 0.0, 2.0])


def test_cupy_and_dask_together_raise_device_mismatch():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        gpu = fg.to_device(np.ones(3), "cuda:0")
    except Exception as exc:  # noqa: BLE001 - no device
        pytest.skip(f"no GPU: {exc}")
    assert isinstance(gpu, cupy.ndarray)
    with pytest.raises(fg.DeviceMismatchError) as info:
        fnp.add(gpu, da.ones(3, chunks=2))
    assert "cuda:0" in str(info.value) and "cpu" in str(info.value)
    on_gpu = da.from_array(gpu, chunks=2)
    assert fg.device_of(on_gpu) == "cuda:0"
    with pytest.raises(fg.DeviceMismatchError):
        fnp.add(np.ones(3), on_gpu)  # NumPy beside CuPy chunks is not absorbed


# --- Dask's quirks --------------------------------------------------------------------


def test_creation_functions_take_their_dtype_positionally():
    from funcgrad import backend

    xp = backend.namespace(da.ones(2, chunks=1))
    assert xp.zeros((2,), "float32").dtype == np.float32
    assert xp.ones((2,), np.float32).dtype == np.float32
    assert xp.full((2,), 1.0, "float32").dtype == np.float32
    assert xp.eye(3, None, 1, "float32").dtype == np.float32
    np.testing.assert_array_equal(xp.eye(3, None, 1).compute(), np.eye(3, k=1))
    assert xp.asarray(np.ones(2), "float32").dtype == np.float32
    a32 = da.ones(3, chunks=2, dtype="float32")
    g = fg.grad(lambda v: fnp.sum(fnp.sin(v)))(a32)
    assert g.dtype == np.float32


def test_cholesky_is_the_lower_factor():
    a = np.array([[4.0, 2.0], [2.0, 3.0]])
    got = fnp.linalg.cholesky(chunked(a, 1)).compute()
    np.testing.assert_allclose(got, np.linalg.cholesky(a), rtol=1e-14)
    assert got[0, 1] == 0.0


def test_det_and_slogdet_are_per_matrix():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 3, 3))
    x = chunked(a, (2, 3, 3))
    np.testing.assert_allclose(fnp.linalg.det(x).compute(), np.linalg.det(a), rtol=1e-12)
    sign, logdet = fnp.linalg.slogdet(x)
    ref = np.linalg.slogdet(a)
    np.testing.assert_array_equal(sign.compute(), ref[0])
    np.testing.assert_allclose(logdet.compute(), ref[1], rtol=1e-12)
    with counting() as c:
        g = fg.grad(lambda m: fnp.sum(fnp.linalg.slogdet(m)[1]))(x)
    assert c.calls == 0
    np.testing.assert_allclose(g.compute(), np.linalg.inv(a).transpose(0, 2, 1), rtol=1e-10)


# --- no compute inside any combinator ---------------------------------------------------

RNG = np.random.default_rng(7)
X = RNG.standard_normal((12, 4))
Y = RNG.standard_normal(12)
W = RNG.standard_normal(4) * 0.5


def loss(w, x, y):
    return fnp.sum(fnp.tanh(x @ w) * y) + fnp.sum(w ** 3) / 3 + fnp.mean(x * x) * fnp.sum(w)


def lazy_args():
    return chunked(W, 2), chunked(X, (4, 2)), chunked(Y, 5)


def test_grad_of_every_argument_computes_nothing():
    with counting() as c:
        g = fg.grad(loss, argnums=(0, 1, 2))(*lazy_args())
    assert c.calls == 0
    assert all(isinstance(gi, da.Array) for gi in g)
    close(computed(g), fg.grad(loss, argnums=(0, 1, 2))(W, X, Y))


def test_vjp_with_a_dask_cotangent_computes_nothing():
    f = lambda w, x: fnp.tanh(x @ w) * 2.0
    with counting() as c:
        out, vjp_fn = fg.vjp(f, chunked(W, 2), chunked(X, (4, 2)))
        grads = vjp_fn(chunked(Y, 5))
    assert c.calls == 0
    _, ref_fn = fg.vjp(f, W, X)
    close(computed((out, grads)), (f(W, X), ref_fn(Y)))


def test_jvp_with_dask_tangents_computes_nothing():
    tangents = (RNG.standard_normal(4), RNG.standard_normal((12, 4)), RNG.standard_normal(12))
    with counting() as c:
        out, t = fg.jvp(loss, lazy_args(), tuple(chunked(v, 3) for v in tangents))
    assert c.calls == 0
    close(computed((out, t)), fg.jvp(loss, (W, X, Y), tangents))


def test_hessian_computes_nothing():
    with counting() as c:
        h = fg.hessian(loss)(*lazy_args())
    assert c.calls == 0
    close(computed(h), fg.hessian(loss)(W, X, Y))


def test_checkpoint_computes_nothing():
    inner = fg.checkpoint(lambda w, x: fnp.exp(fnp.sin(x @ w)))
    f = lambda w, x, y: fnp.sum(inner(w, x) * y)
    with counting() as c:
        g = fg.grad(f, argnums=(0, 1, 2))(*lazy_args())
        gg = fg.grad(lambda w, x, y: fnp.sum(fg.grad(f)(w, x, y) ** 2))(*lazy_args())
    assert c.calls == 0
    close(computed((g, gg)), (fg.grad(f, argnums=(0, 1, 2))(W, X, Y),
                              fg.grad(lambda w, x, y: fnp.sum(fg.grad(f)(w, x, y) ** 2))(W, X, Y)))


@fg.custom_vjp
def scaled_softplus(x, s):
    return fnp.logaddexp(x * s, 0.0)


def _softplus_fwd(x, s):
    return fnp.logaddexp(x * s, 0.0), (x, s)


def _softplus_bwd(res, g):
    x, s = res
    sig = 1 / (1 + fnp.exp(-x * s))
    return g * sig * s, fnp.sum(g * sig * x)


scaled_softplus.defvjp(_softplus_fwd, _softplus_bwd)


def test_custom_vjp_computes_nothing():
    f = lambda w, x, y: fnp.sum(scaled_softplus(x @ w, fnp.sum(y) * 0.1))
    with counting() as c:
        g = fg.grad(f, argnums=(0, 1, 2))(*lazy_args())
        _, t = fg.jvp(f, lazy_args(), tuple(chunked(np.ones_like(v), 3) for v in (W, X, Y)))
    assert c.calls == 0
    ref = (fg.grad(f, argnums=(0, 1, 2))(W, X, Y),
           fg.jvp(f, (W, X, Y), tuple(np.ones_like(v) for v in (W, X, Y)))[1])
    close(computed((g, t)), ref)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_debug_nans_checks_when_computed_not_before():
    x = chunked(np.array([1.0, 0.0, 2.0]), 2)
    with counting() as c, fg.debug_nans():
        g = fg.grad(lambda v: fnp.sum(fnp.sqrt(v)))(x)  # 1 / (2 sqrt(0)) is inf
        assert c.calls == 0
        with pytest.raises(FloatingPointError, match="sqrt"):
            g.compute()
    with fg.debug_nans():
        fine = fg.grad(lambda v: fnp.sum(fnp.sqrt(v)))(chunked(np.array([1.0, 4.0]), 1))
    np.testing.assert_allclose(fine.compute(), [0.5, 0.25])


# --- unknown chunk sizes ---------------------------------------------------------------


def test_gradients_through_a_boolean_mask_of_unknown_size():
    x = chunked(X, (5, 4))
    w = chunked(W, 2)

    def f(w, x):
        rows = x[x[:, 0] > 0]  # a selection whose length is unknown until computed
        return fnp.mean(fnp.tanh(rows @ w) ** 2) + fnp.sum(rows * rows) * 0.01

    with counting() as c:
        out = f(w, x)
        assert np.isnan(x[x[:, 0] > 0].shape[0])
        g = fg.grad(f, argnums=(0, 1))(w, x)
        _, t = fg.jvp(f, (w, x), (chunked(np.ones(4), 2), chunked(np.ones((12, 4)), 5)))
    assert c.calls == 0
    ref = fg.grad(f, argnums=(0, 1))(W, X)
    close(computed((out, g, t)), (f(W, X), ref, fg.jvp(f, (W, X), (np.ones(4), np.ones((12, 4))))[1]))


def test_a_seed_of_unknown_length_is_accepted():
    x = chunked(X[:, 0], 5)
    rows = lambda v: v[v > 0] * 2.0
    out, vjp_fn = fg.vjp(rows, x)
    (g,) = vjp_fn(fnp.ones_like(out))
    np.testing.assert_array_equal(g.compute(), np.where(X[:, 0] > 0, 2.0, 0.0))


# --- no large constant in the graph -------------------------------------------------------


def _largest_task_bytes(array):
    cloudpickle = pytest.importorskip("cloudpickle")
    return max(len(cloudpickle.dumps(t)) for t in dict(array.__dask_graph__()).values())


def test_no_numpy_constant_larger_than_a_chunk_is_embedded_in_the_graph():
    rows, cols, chunk_rows = 100_000, 20, 10_000
    chunk = chunk_rows * cols * 8
    x = da.random.default_rng(0).standard_normal((rows, cols), chunks=(chunk_rows, cols))
    y = da.random.default_rng(1).random(rows, chunks=chunk_rows)
    every_7th = np.arange(0, rows, 7)  # host index data, larger than a task should carry

    def loss(w, x, y):
        z = x @ w
        return (fnp.mean(fg.nn.softplus(z) - y * z) + fnp.mean(x[every_7th] ** 2)
                + fnp.sum(fnp.where(x > 2.0, x, 0.0)) * 1e-3)

    with counting() as c:
        gw, gx = fg.grad(loss, argnums=(0, 1))(np.zeros(cols), x, y)
        # a NumPy cotangent for a Dask output: split as the output is
        _, vjp_fn = fg.vjp(lambda v: fnp.tanh(v) * 2.0, x)
        (gv,) = vjp_fn(np.ones((rows, cols)))
    assert c.calls == 0
    assert _largest_task_bytes(gw) < chunk / 100  # no data at all: the graph reads none
    assert _largest_task_bytes(gx) < chunk  # (Dask itself may put the index in one task)
    assert _largest_task_bytes(gv) < 1.1 * chunk
    np.testing.assert_allclose(gv[:3].compute(), 2 * (1 - np.tanh(x[:3].compute()) ** 2))


def test_a_dask_condition_keeps_the_graph_in_where_relu_and_sigmoid():
    # The spike of issue 11: a Dask condition beside a NumPy Node lost the graph.
    x = np.array([-1.5, -0.2, 0.3, 2.0])
    cond = chunked(x > 0, 2)
    with counting() as c:
        g_where = fg.grad(lambda v: fnp.sum(fnp.where(cond, v * v, -v)))(x)
        g_relu = fg.grad(lambda v: fnp.sum(fg.nn.relu(v * chunked(np.ones(4), 2))))(x)
        g_sigmoid = fg.grad(lambda v: fnp.sum(fg.nn.sigmoid(v + chunked(np.zeros(4), 2))))(x)
    assert c.calls == 0
    assert all(isinstance(g, da.Array) for g in (g_where, g_relu, g_sigmoid))
    s = 1 / (1 + np.exp(-x))
    close(computed((g_where, g_relu, g_sigmoid)),
          (np.where(x > 0, 2 * x, -1.0), (x > 0).astype(float), s * (1 - s)))


def test_jacobians_and_hvp_compute_nothing():
    f = lambda w, x: fnp.tanh(x @ w)
    scalar = lambda w, x: fnp.sum(f(w, x) ** 2)
    v = RNG.standard_normal(4)
    with counting() as c:
        jr = fg.jacobian(f)(chunked(W, 2), chunked(X, (4, 2)))
        jf = fg.jacfwd(f)(chunked(W, 2), chunked(X, (4, 2)))
        h = fg.hvp(lambda w: scalar(w, chunked(X, (4, 2))), (chunked(W, 2),), (chunked(v, 2),))
    assert c.calls == 0
    want = fg.jacobian(f)(W, X)
    close(computed((jr, jf, h)), (want, want, fg.hvp(lambda w: scalar(w, X), (W,), (v,))))
