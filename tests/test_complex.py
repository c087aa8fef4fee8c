"""Complex numbers: JAX's convention, holomorphic=, the dtype checks, and finite
differences in complex directions over the primitive table.

The convention (API.md §3): the VJP is the plain transpose of the JVP, so the
gradient of a real function of ``z = x + iy`` is ``df/dx - i df/dy``.
``test_complex_jax.py`` compares the same table with ``jax.numpy``.
"""

from __future__ import annotations

import pathlib
import sys
import warnings

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import complex_table as ct

import funcgrad as fg
import funcgrad.numpy as fnp

# -- the convention -----------------------------------------------------------------------


def test_grad_of_abs_squared_is_the_conjugate_direction():
    assert fg.grad(lambda z: fnp.abs(z) ** 2)(3 + 4j) == 6 - 8j
    # df/dx - i df/dy by finite differences, for a non-holomorphic real function
    f = lambda z: fnp.real(z * z * fnp.conj(z)) + fnp.imag(z) ** 3
    z, h = 0.7 - 0.4j, 1e-6
    fx = (float(f(z + h)) - float(f(z - h))) / (2 * h)
    fy = (float(f(z + 1j * h)) - float(f(z - 1j * h))) / (2 * h)
    np.testing.assert_allclose(fg.grad(f)(z), fx - 1j * fy, rtol=1e-7)


def test_real_function_with_complex_intermediates_the_issue_example():
    """jacfwd and jacobian of real(exp(ix) x): right, and no ComplexWarning."""
    x = np.array([0.3, 1.2])
    want = np.diag(np.real(np.exp(1j * x) * (1 + 1j * x)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = lambda x: fnp.real(fnp.exp(1j * x) * x)
        np.testing.assert_allclose(fg.jacfwd(f)(x), want, rtol=1e-12)
        np.testing.assert_allclose(fg.jacobian(f)(x), want, rtol=1e-12)
        g = fg.grad(lambda x: fnp.sum(fnp.abs(fnp.exp(1j * x) * x) ** 2))(x)
        np.testing.assert_allclose(g, 2 * x, rtol=1e-12)
        assert g.dtype == np.float64  # a real input gets the real part


def test_real_input_of_a_complex_op_gets_the_real_part_of_its_cotangent():
    x = np.array([0.5, -1.0])
    c = np.array([1 + 2j, 3 - 1j])
    _, f_vjp = fg.vjp(lambda x: x * c, x)
    u = np.array([0.5 - 1j, 2 + 0.25j])
    (g,) = f_vjp(u)
    np.testing.assert_allclose(g, np.real(u * c))
    assert g.dtype == np.float64
    # float32 stays float32 through complex64
    (g32,) = fg.vjp(lambda x: x * c.astype(np.complex64), x.astype(np.float32))[1](
        u.astype(np.complex64))
    assert g32.dtype == np.float32


def test_astype_to_complex_and_back_is_differentiable():
    x = np.array([0.5, 2.0])
    f = lambda x: fnp.sum(fnp.astype(fnp.astype(x, "complex128") * (1 + 1j), "float64"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning
        np.testing.assert_allclose(fg.grad(f)(x), [1.0, 1.0])
        fg.check_grads(lambda z: fnp.astype(z * z, "float64"), (np.array([1 + 1j, 2 - 1j]),),
                       order=2)


# -- holomorphic= ----------------------------------------------------------------------


def test_holomorphic_derivatives():
    z = np.array(0.3 + 0.8j)
    np.testing.assert_allclose(fg.grad(lambda z: z ** 3, holomorphic=True)(z), 3 * z ** 2)
    v, g = fg.value_and_grad(fnp.exp, holomorphic=True)(z)
    np.testing.assert_allclose((v, g), (np.exp(z), np.exp(z)))
    zs = np.array([0.3 + 0.8j, -1 + 0.1j])
    want = np.diag(np.cos(zs))
    for jac in (fg.jacfwd, fg.jacobian, fg.jacrev):
        np.testing.assert_allclose(jac(fnp.sin, holomorphic=True)(zs), want)
    np.testing.assert_allclose(fg.hessian(lambda z: fnp.sum(z ** 4), holomorphic=True)(zs),
                               np.diag(12 * zs ** 2))
    assert fg.grad(lambda z: z * z, holomorphic=True)(1j).dtype == np.complex128
    g64 = fg.grad(lambda z: z * z, holomorphic=True)(np.complex64(1 + 1j))
    assert g64.dtype == np.complex64


@pytest.mark.parametrize("call, what", [
    (lambda: fg.grad(lambda z: z * z)(1j), "grad needs real outputs"),
    (lambda: fg.value_and_grad(lambda z: z * 2.0)(np.array(1 + 1j)), "grad needs real outputs"),
    (lambda: fg.grad(lambda x: x * 1j)(1.0), "grad needs real outputs"),
    (lambda: fg.jacobian(fnp.sin)(np.array([1j])), "jacobian needs real outputs"),
    (lambda: fg.jacfwd(fnp.real)(np.array([1j])), "jacfwd needs real inputs"),
    (lambda: fg.grad(fnp.sin, holomorphic=True)(1.0), "needs complex inputs"),
    (lambda: fg.grad(fnp.abs, holomorphic=True)(1j), "needs complex outputs"),
    (lambda: fg.jacfwd(fnp.sin, holomorphic=True)(np.ones(2)), "needs complex inputs"),
    (lambda: fg.jacobian(fnp.abs, holomorphic=True)(np.ones(2, complex)),
     "needs complex outputs"),
    (lambda: fg.jacfwd(fnp.abs, holomorphic=True)(np.ones(2, complex)),
     "needs complex outputs"),
])
def test_holomorphic_rules_refuse_with_a_clear_type_error(call, what):
    with pytest.raises(TypeError, match=what) as info:
        call()
    assert isinstance(info.value, fg.FuncgradError)
    if "real" in what:
        assert "holomorphic=True" in str(info.value)


def test_jacfwd_of_a_real_input_may_have_complex_outputs():
    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(fg.jacfwd(lambda x: fnp.exp(1j * x))(x),
                               np.diag(1j * np.exp(1j * x)))


# -- seeds, tangents and cotangents ------------------------------------------------------


def test_complex_tangents_and_cotangents_are_checked_and_cast():
    z = np.array([1 + 1j, 2 - 1j])
    _, f_vjp = fg.vjp(fnp.sin, z)
    (g,) = f_vjp(np.ones(2, np.complex64))  # another precision of the same kind: cast
    assert g.dtype == np.complex128
    np.testing.assert_allclose(g, np.cos(z))
    (g,) = fg.vjp(fnp.sin, np.array(1j))[1](1.0)  # a Python number: cast
    np.testing.assert_allclose(g, np.cos(1j))
    _, t = fg.jvp(fnp.sin, (z,), (np.array([1j, 1.0 + 0j]),))
    np.testing.assert_allclose(t, np.cos(z) * [1j, 1])
    with pytest.raises(TypeError, match=r"cotangent leaf 0 .*complex"):
        f_vjp(np.ones(2))  # a real cotangent for a complex output
    with pytest.raises(TypeError, match=r"cotangent leaf 0 .*real"):
        fg.vjp(fnp.sin, np.ones(2))[1](np.ones(2, complex))
    with pytest.raises(TypeError, match=r"tangent leaf 0 .*complex"):
        fg.jvp(fnp.sin, (z,), (np.ones(2),))
    with pytest.raises(TypeError, match=r"tangent leaf 0 .*real"):
        fg.jvp(fnp.sin, (np.ones(2),), (np.ones(2, complex),))
    with pytest.raises(ValueError, match="shape"):
        f_vjp(np.ones(3, complex))


def test_gradients_keep_the_complex_dtype_and_alias_nothing():
    z = np.array([1 + 1j, 2 - 1j], np.complex64)
    g = fg.grad(lambda z: fnp.sum(fnp.abs(z) ** 2))(z)
    assert g.dtype == np.complex64 and g.flags.writeable
    np.testing.assert_allclose(g, 2 * np.conj(z))
    g = fg.grad(lambda z: fnp.sum(fnp.real(z)))(z)  # real's gradient: ones, not z itself
    assert g.dtype == np.complex64 and not np.shares_memory(g, z)


def test_checkpoint_and_custom_vjp_take_complex_arguments():
    z = np.array([0.5 + 1j, -1 + 0.2j])
    f = lambda z: fnp.sum(fnp.abs(fnp.sin(z) * z) ** 2)
    np.testing.assert_allclose(fg.grad(fg.checkpoint(f))(z), fg.grad(f)(z))

    @fg.custom_vjp
    def double(z):
        return 2 * z

    double.defvjp(lambda z: (2 * z, None), lambda res, g: (2 * g,))
    np.testing.assert_allclose(fg.grad(lambda z: fnp.sum(fnp.abs(double(z)) ** 2))(z),
                               8 * np.conj(z))


# -- check_grads in complex directions ---------------------------------------------------


def test_check_grads_catches_a_planted_conjugation_error():
    @fg.primitive
    def cube(z):
        return z ** 3

    fg.defjvp(cube, lambda t, ans, z: t * 3 * z * z)
    fg.defvjp(cube, lambda g, ans, z: g * 3 * fnp.conj(z * z))  # conjugated: wrong
    z = np.array([0.5 + 1j, -1 + 0.2j])
    fg.check_grads(cube, (z,), modes=("fwd",))
    with pytest.raises(AssertionError, match="reverse mode"):
        fg.check_grads(cube, (z,), modes=("rev",))
    with pytest.raises(AssertionError):
        fg.check_grads(lambda z: fnp.abs(cube(z)), (z,), modes=("rev",))


def test_check_grads_catches_a_dropped_imaginary_part():
    @fg.primitive
    def square(z):
        return z * z

    fg.defjvp(square, lambda t, ans, z: t * 2 * fnp.real(z))  # drops imag(z): wrong
    with pytest.raises(AssertionError, match="forward mode"):
        fg.check_grads(square, (np.array([0.5 + 1j]),), modes=("fwd",))


ROWS = ct.complex_rows()


def _table_cases():
    for row in ROWS:
        yield pytest.param(row, ct.shapes_of(row), id=ct.label(row))
    for row in ct.extra_rows():
        for shapes in row.shapes:
            yield pytest.param(row, shapes, id=f"{ct.label(row)}-{shapes}")


@pytest.mark.parametrize("row, shapes", list(_table_cases()))
def test_table_row_in_complex_directions(row, shapes):
    """Every complex row of the table at order 2, both modes, complex128, against
    central differences in complex directions."""
    if row.make is not None and row.make.__module__ == ct.__name__:
        args = ct.extra_inputs(row, "complex128", shapes)
    else:
        args = ct.inputs(row, "complex128", shapes)
    out = row.fun(*args)
    for leaf in fg.tree.flatten(out)[0]:  # complex in, complex or real (abs, norm...) out
        assert np.asarray(leaf).dtype.kind in "cf"
    fg.check_grads(row.fun, args, order=2, modes=row.modes)
    _, f_vjp = fg.vjp(row.fun, *args)
    cts = fg.tree.tree_map(np.ones_like, out)
    for a, g in zip(args, f_vjp(cts), strict=True):
        assert g.dtype == a.dtype and g.shape == a.shape


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_of_a_complex_matrix_follows_the_hermitian_convention(uplo):
    """NumPy's eigh reads the UPLO triangle; the derivatives are JAX's: a tangent acts
    through its Hermitian part, and the gradient is Hermitian."""
    rng = np.random.default_rng(5)
    (a,) = ct._hermitian(rng, "complex128", ((3, 3),))
    noise = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    b = a + (np.triu(noise, 1) if uplo == "L" else np.tril(noise, -1))  # in the unread half
    w = fnp.linalg.eigh(b, UPLO=uplo)[0]
    assert w.dtype == np.float64
    np.testing.assert_allclose(w, np.linalg.eigh(a)[0])
    c = np.array([0.3, -1.0, 2.0])
    g = fg.grad(lambda m: fnp.sum(fnp.linalg.eigh(m, UPLO=uplo)[0] * c))(a)
    np.testing.assert_allclose(g, np.conj(g.T), atol=1e-12)
    herm = lambda m: (m + fnp.conj(fnp.swapaxes(m, -1, -2))) / 2
    np.testing.assert_allclose(
        g, fg.grad(lambda m: fnp.sum(fnp.linalg.eigh(herm(m), UPLO=uplo)[0] * c))(a),
        atol=1e-12)
    fg.check_grads(lambda m: fnp.linalg.eigh(herm(m), UPLO=uplo)[0], (a,), order=2)


def test_complex64_table_subset():
    """A few rows in complex64: dtypes kept, derivatives within float32's tolerance."""
    names = {"multiply", "divide", "exp", "log", "abs", "angle", "sum", "prod", "matmul",
             "linalg.inv", "linalg.norm", "real", "imag", "conj"}
    seen = set()
    for row in ROWS:
        if row.name in names and row.name not in seen:
            seen.add(row.name)
            args = ct.inputs(row, "complex64")
            fg.check_grads(row.fun, args, order=2)
            _, f_vjp = fg.vjp(row.fun, *args)
            out = row.fun(*args)
            for a, g in zip(args, f_vjp(fg.tree.tree_map(np.ones_like, out)), strict=True):
                assert g.dtype == np.complex64
    assert seen == names


# -- optimization with a complex parameter -------------------------------------------


def test_gradient_descent_on_a_complex_parameter_conjugates_the_gradient():
    target = np.array([1 + 2j, -0.5 + 0.25j])
    loss = lambda z: fnp.sum(fnp.abs(z - target) ** 2)
    z = np.zeros(2, complex)
    for _ in range(100):
        z = z - 0.1 * np.conj(fg.grad(loss)(z))  # steepest descent: conj(df/dx - i df/dy)
    np.testing.assert_allclose(z, target, atol=1e-8)
    # without the conjugate the imaginary part climbs instead
    w = np.zeros(2, complex)
    for _ in range(20):
        w = w - 0.1 * fg.grad(loss)(w)
    assert float(loss(w)) > float(loss(np.zeros(2, complex)))
