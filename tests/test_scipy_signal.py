"""funcgrad.scipy.signal: values against SciPy in every mode and size order, derivatives
by finite differences (order 2, both modes) and against JAX."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as ss

import funcgrad as fg
from funcgrad.scipy import signal

RNG = np.random.default_rng(0)
SHAPES = [((5,), (3,)), ((3,), (5,)), ((4,), (4,)), ((4, 5), (2, 3)), ((2, 3), (4, 5)),
          ((3, 4, 2), (2, 2, 2))]
MODES = ["full", "same", "valid"]
FUNS = ["convolve", "correlate", "fftconvolve"]


@pytest.mark.parametrize("s1, s2", SHAPES)
def test_values_match_scipy(s1, s2):
    a, b = RNG.standard_normal(s1), RNG.standard_normal(s2)
    for mode in MODES:
        for name in FUNS:
            np.testing.assert_allclose(getattr(signal, name)(a, b, mode),
                                       getattr(ss, name)(a, b, mode), atol=1e-12)
        if len(s1) == 2:
            for name in ("convolve2d", "correlate2d"):
                np.testing.assert_allclose(getattr(signal, name)(a, b, mode),
                                           getattr(ss, name)(a, b, mode), atol=1e-12)
    assert signal.convolve(a.astype(np.float32), b.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("name", FUNS + ["convolve2d", "correlate2d"])
def test_derivatives_by_finite_differences(name):
    s1, s2 = ((4, 3), (2, 3)) if name.endswith("2d") else ((5,), (3,))
    a, b = RNG.standard_normal(s1), RNG.standard_normal(s2)
    for mode in MODES:
        fg.check_grads(lambda a, b, mode=mode: getattr(signal, name)(a, b, mode), (a, b),
                       order=2, modes=("rev", "fwd"))


def test_n_dimensional_gradients():
    a, b = RNG.standard_normal((3, 4, 2)), RNG.standard_normal((2, 3, 2))
    for mode in MODES:
        fg.check_grads(lambda a, b, mode=mode: signal.convolve(a, b, mode), (a, b), order=1)


def test_gradients_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.signal as jss

    a, b = RNG.standard_normal((4, 5)), RNG.standard_normal((2, 3))
    for mode in ("same",):  # JAX compiles each mode: one
        got = fg.grad(lambda a, b, m=mode: (signal.correlate2d(a, b, m) ** 2).sum(), (0, 1))(a, b)
        want = jax.grad(lambda a, b, m=mode: jnp.sum(jss.correlate2d(a, b, m) ** 2), (0, 1))(a, b)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-10)


BOUNDARIES = [("fill", 0), ("fill", 1.5), ("wrap", 0), ("circular", 0), ("symm", 0),
              ("symmetric", 0), ("pad", -2.0)]


@pytest.mark.parametrize("s1, s2", [((4, 5), (2, 3)), ((2, 3), (4, 5)), ((3, 3), (3, 3)),
                                    ((5, 2), (2, 4))])
def test_2d_boundaries_match_scipy(s1, s2):
    a, b = RNG.standard_normal(s1), RNG.standard_normal(s2)
    for boundary, fill in BOUNDARIES:
        for mode in MODES:
            if mode == "valid" and s1 == (5, 2):
                continue  # neither is the larger in every dimension (refused, as SciPy)
            for name in ("convolve2d", "correlate2d"):
                np.testing.assert_allclose(
                    getattr(signal, name)(a, b, mode, boundary, fill),
                    getattr(ss, name)(a, b, mode, boundary, fill), atol=1e-12,
                    err_msg=f"{name} {mode} {boundary} {fill}")


@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
def test_2d_boundaries_derivatives_by_finite_differences(name):
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((2, 3))
    fun = getattr(signal, name)
    for boundary in ("wrap", "symm"):
        for mode in ("full", "same"):
            fg.check_grads(lambda a, b, m=mode, bd=boundary: fun(a, b, m, bd), (a, b),
                           order=2, modes=("rev", "fwd"))
    # differentiable in fillvalue too: the output is affine in it
    fg.check_grads(lambda a, b, f: fun(a, b, "same", "fill", f), (a, b, np.float64(0.7)),
                   order=2, modes=("rev", "fwd"))
    g = fg.grad(lambda f: fun(a, b, "full", "fill", f).sum())(0.7)
    # each of the 4 x 6 outputs weighs the kernel's entries outside a: in all, every entry of
    # b once per output less once per entry of a
    np.testing.assert_allclose(g, (4 * 6 - a.size) * b.sum())


def test_unsupported_arguments_are_refused():
    with pytest.raises(ValueError, match="boundary"):
        signal.convolve2d(np.ones((2, 2)), np.ones((2, 2)), boundary="reflect")
    with pytest.raises(ValueError, match="fillvalue"):
        signal.correlate2d(np.ones((2, 2)), np.ones((2, 2)), fillvalue=np.ones(2))
    with pytest.raises(ValueError, match="fillvalue"):
        signal.convolve2d(np.ones((2, 2)), np.ones((2, 2)), fillvalue=1j)
    with pytest.raises(ValueError, match="convolve2d: mode"):
        signal.convolve2d(np.ones((2, 2)), np.ones((2, 2)), "middle", boundary="wrap")
    with pytest.raises(ValueError, match="mode"):
        signal.convolve(np.ones(3), np.ones(2), "middle")
    with pytest.raises(ValueError, match="at least as large"):
        signal.convolve(np.ones((2, 3)), np.ones((3, 2)), "valid")
    with pytest.raises(ValueError, match="same number of dimensions"):
        signal.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(TypeError, match="complex"):
        signal.correlate(np.ones(3), np.ones(2) * 1j)


def test_on_the_standin_device(standin):
    a, b = RNG.standard_normal(5), RNG.standard_normal(3)
    got = fg.grad(lambda a: (signal.convolve(a, standin.put(b), "same") ** 2).sum())(
        standin.put(a))
    want = fg.grad(lambda a: (signal.convolve(a, b, "same") ** 2).sum())(a)
    assert type(got) is standin.StrictArray
    np.testing.assert_allclose(standin.get(got), want)
