"""``fnp.fft`` against ``jax.numpy.fft``: values and gradients of every transform, with
``n``/``s``, ``axis``/``axes`` and ``norm``, at first and second order.

JAX follows the same complex convention (a VJP is the plain transpose of the
JVP), so its gradients of a real loss of a complex spectrum are the reference.
Complex inputs are built from two real arguments, so that each transform is
differentiated in both the real and the imaginary direction.  The table rows
(``rows_fft.py``) check the same functions against finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.numpy.fft import _complex_of, _re

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)

CASES = [
    ("fft", {}), ("fft", {"n": 7}), ("fft", {"n": 3, "axis": 0, "norm": "ortho"}),
    ("ifft", {"n": 4, "norm": "forward"}), ("ifft", {}),
    ("fftn", {}), ("fftn", {"s": (2, 6)}), ("ifftn", {"axes": (0,), "norm": "ortho"}),
    ("fft2", {"s": (5, 2)}), ("ifft2", {"s": (4, 3), "norm": "ortho"}),
    ("rfft", {}), ("rfft", {"n": 8}), ("rfft", {"n": 3, "axis": 0}),
    ("rfftn", {}), ("rfft2", {"s": (4, 4), "norm": "ortho"}), ("rfftn", {"s": (2, 3)}),
    ("irfft", {}), ("irfft", {"n": 7}), ("irfft", {"n": 10, "norm": "ortho"}),
    ("irfft", {"n": 2, "axis": 0, "norm": "forward"}),
    ("irfftn", {}), ("irfftn", {"s": (4, 5)}), ("irfft2", {"s": (2, 9), "norm": "forward"}),
    ("fftshift", {}), ("ifftshift", {"axes": 1}),
]


def _losses(name, kw):
    real_in = name.startswith("rfft") or name.endswith("shift")

    def weights(shape):
        return np.cos(np.arange(int(np.prod(shape)))).reshape(shape)

    def ours(a, b):
        z = a if real_in else _complex_of(a) + _complex_of(b) * 1j
        out = getattr(fnp.fft, name)(z, **kw)
        w = weights(out.shape)
        return fnp.sum(_re(out * (w + 0.5j))) if out.dtype.kind == "c" else fnp.sum(out * w)

    def theirs(a, b):
        z = a if real_in else a + 1j * b
        out = getattr(jnp.fft, name)(z, **kw)
        w = weights(out.shape)
        return jnp.sum(jnp.real(out * (w + 0.5j))) if jnp.iscomplexobj(out) else jnp.sum(out * w)

    return ours, theirs


@pytest.mark.parametrize("name, kw", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_values_and_gradients_match_jax(name, kw):
    rng = np.random.default_rng(len(name) + len(kw))
    x, y = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    ours, theirs = _losses(name, kw)
    np.testing.assert_allclose(ours(x, y), theirs(x, y), rtol=1e-12, atol=1e-12)
    for got, want in zip(fg.grad(ours, argnums=(0, 1))(x, y),
                         jax.grad(theirs, argnums=(0, 1))(x, y), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    if kw:  # second order once per transform (the table checks every case against FD)
        return
    # second order: the Hessian-vector product of a loss with a nonlinearity after the fft
    v = rng.standard_normal((3, 5))

    def sq(f, lib):
        return lambda a: lib.sin(f(a, y)) * f(a, y)

    _, hv = fg.jvp(fg.grad(sq(ours, fnp)), (x,), (v,))
    _, jhv = jax.jvp(jax.grad(sq(theirs, jnp)), (x,), (v,))
    np.testing.assert_allclose(hv, jhv, rtol=1e-10, atol=1e-10)


def test_values_are_numpys_and_keep_single_precision():
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    for name in ("fft", "rfft", "fft2", "rfftn", "ifftn"):
        got = getattr(fnp.fft, name)(fg.require_grad(x)).value
        want = getattr(np.fft, name)(x)
        assert got.dtype == want.dtype == np.complex64
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(fnp.fft.fftfreq(5, 0.1), np.fft.fftfreq(5, 0.1))
    np.testing.assert_array_equal(fnp.fft.rfftfreq(6), np.fft.rfftfreq(6))


def test_gradient_of_a_real_signal_is_real_and_of_its_dtype():
    x = np.arange(5.0, dtype=np.float32)
    g = fg.grad(lambda x: fnp.sum(_re(fnp.fft.fft(x) * (1 + 2j))))(x)
    assert g.dtype == np.float32
    # d/dx_j sum_k Re((1+2i) X_k) = sum_k Re((1+2i) e^{-2 pi i jk/5}) = 5 at j=0, else 0
    np.testing.assert_allclose(g, [5, 0, 0, 0, 0], atol=1e-5)


@pytest.mark.parametrize("call, match", [
    (lambda x: fnp.fft.fft(x, norm="bad"), "norm"),
    (lambda x: fnp.fft.fft(x, axis=3), "axis 3"),
    (lambda x: fnp.fft.fftn(x, s=(2, 2, 2), axes=(0, 1)), "3 lengths for 2 axes"),
    (lambda x: fnp.fft.fft(x, n=0), "invalid number"),
    (lambda x: fnp.fft.rfft(x * 1j), "real input"),
    (lambda x: fnp.fft.fft2(x, axes=(0, 0)), "repeated"),
])
def test_bad_arguments_raise_errors_naming_them(call, match):
    with pytest.raises((TypeError, ValueError), match=match) as info:
        call(fg.require_grad(np.ones((3, 4))))
    assert isinstance(info.value, fg.FuncgradError)
