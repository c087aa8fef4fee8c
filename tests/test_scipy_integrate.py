"""funcgrad.scipy.integrate: odeint against SciPy and closed forms (exponential decay, a
damped oscillator), adjoint gradients in y0, t and args at first and second order in both
modes, tolerances honoured, memory that does not grow with the solver's steps; trapezoid."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.integrate as si

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy.integrate import odeint, trapezoid

T = np.array([0.0, 0.4, 1.1, 2.0])
W = np.array([[1.0], [-2.0], [0.5], [3.0]])  # weights of the outputs: a scalar loss


def decay(y, t, k):
    return -k * y


def decay_loss(y0, t, k):
    return fnp.sum(odeint(decay, y0, t, k) * W)


def decay_closed(y0, t, k):
    return fnp.sum(fnp.exp(-k * (t - t[0]))[:, None] * y0 * W)


def oscillator(y, t, omega, zeta):
    x, v = y[0], y[1]
    return fnp.stack([v, -2 * zeta * omega * v - omega ** 2 * x])


def oscillator_closed(omega, zeta, t):
    # x(0) = 1, v(0) = 0, underdamped
    wd = omega * fnp.sqrt(1 - zeta ** 2)
    return fnp.exp(-zeta * omega * t) * (fnp.cos(wd * t) + zeta * omega / wd * fnp.sin(wd * t))


Y0 = np.array([1.0, 2.0])


def test_values_match_scipy_and_closed_forms():
    ys = odeint(decay, Y0, T, 0.7)
    np.testing.assert_allclose(ys, np.exp(-0.7 * T)[:, None] * Y0, rtol=1e-7)
    np.testing.assert_allclose(ys, si.odeint(lambda y, t: -0.7 * y, Y0, T), rtol=1e-6)
    t = np.linspace(0.0, 6.0, 13)
    xs = odeint(oscillator, np.array([1.0, 0.0]), t, 1.5, 0.2)[:, 0]
    np.testing.assert_allclose(xs, oscillator_closed(1.5, 0.2, t), atol=1e-7)
    assert odeint(decay, 1.0, [0.0, 1.0], 1.0).shape == (2,)
    back = odeint(decay, Y0, T[::-1], 0.7)  # decreasing times
    np.testing.assert_allclose(back, np.exp(-0.7 * (T[::-1] - T[-1]))[:, None] * Y0, rtol=1e-7)


def test_gradients_in_y0_every_time_and_args_match_the_closed_form():
    got = fg.grad(decay_loss, (0, 1, 2))(Y0, T, 0.7)
    want = fg.grad(decay_closed, (0, 1, 2))(Y0, T, 0.7)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


def test_second_order_in_both_modes():
    h = fg.hessian(lambda k: decay_loss(Y0, T, k))(0.7)
    np.testing.assert_allclose(h, fg.hessian(lambda k: decay_closed(Y0, T, k))(0.7), rtol=1e-6)
    hy = fg.hessian(lambda y0, k: decay_loss(y0, T, k), (0, 1))(Y0, 0.7)
    want = fg.hessian(lambda y0, k: decay_closed(y0, T, k), (0, 1))(Y0, 0.7)
    np.testing.assert_allclose(np.asarray(hy[0][1]), np.asarray(want[0][1]), rtol=1e-6)
    _, t = fg.jvp(fg.grad(lambda k: decay_loss(Y0, T, k)), (0.7,), (1.0,))
    np.testing.assert_allclose(t, h, rtol=1e-6)


def test_forward_mode():
    _, t = fg.jvp(lambda y0, k: decay_loss(y0, T, k), (Y0, 0.7), (np.ones(2), 1.0))
    _, want = fg.jvp(lambda y0, k: decay_closed(y0, T, k), (Y0, 0.7), (np.ones(2), 1.0))
    np.testing.assert_allclose(t, want, rtol=1e-6)


def test_the_damped_oscillator_gradient_in_its_parameters():
    t = np.linspace(0.0, 4.0, 9)

    def loss(params):
        xs = odeint(oscillator, np.array([1.0, 0.0]), t, params[0], params[1])[:, 0]
        return fnp.sum(xs ** 2)

    def closed(params):
        return fnp.sum(oscillator_closed(params[0], params[1], t) ** 2)

    p = np.array([1.5, 0.2])
    np.testing.assert_allclose(fg.grad(loss)(p), fg.grad(closed)(p), rtol=1e-6)


def test_args_may_be_pytrees_and_hold_integers():
    def f(y, t, params):
        return -params["k"] * y ** params["n"]

    params = {"k": 0.7, "n": 1}
    g = fg.grad(lambda p: fnp.sum(odeint(f, Y0, T, p)[-1]))(params)
    np.testing.assert_allclose(g["k"], -(T[-1]) * np.exp(-0.7 * T[-1]) * Y0.sum(), rtol=1e-6)


def test_tolerances_are_honoured_both_ways():
    k = 3.0
    errors = []
    for tol in (1e-4, 1e-10):
        y = odeint(decay, Y0, T, k, rtol=tol, atol=tol)
        gv = fg.grad(lambda k, tol=tol: fnp.sum(odeint(decay, Y0, T, k, rtol=tol, atol=tol) * W))(k)
        errors.append((np.abs(y - np.exp(-k * T)[:, None] * Y0).max(),
                       abs(gv - fg.grad(lambda k: decay_closed(Y0, T, k))(k))))
    (y_loose, g_loose), (y_tight, g_tight) = errors
    assert y_tight < 1e-8 and g_tight < 1e-7
    assert y_loose > 10 * y_tight and g_loose > 10 * g_tight


def _steps(tol):
    count = [0]

    def f(y, t, k):
        count[0] += 1
        return -k * fnp.sin(y) - 0.1 * y

    fg.grad(lambda k: fnp.sum(odeint(f, Y0, np.array([0.0, 20.0]), k, rtol=tol, atol=tol)))(2.0)
    return count[0], f


def test_the_gradient_does_not_grow_with_the_solver_steps():
    calls_loose, f = _steps(1e-4)
    calls_tight, _ = _steps(1e-11)
    assert calls_tight > 8 * calls_loose  # the solver works much harder...
    sizes = []
    for tol in (1e-4, 1e-11):
        graph = fg.trace(lambda k, tol=tol: odeint(f, Y0, np.array([0.0, 20.0]), k, rtol=tol,
                                                   atol=tol), 2.0)
        sizes.append(len(graph))
        tracemalloc.start()
        fg.grad(lambda k, tol=tol: fnp.sum(odeint(f, Y0, np.array([0.0, 20.0]), k, rtol=tol,
                                                  atol=tol)))(2.0)
        sizes.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert sizes[0] == sizes[2] <= 3  # ...the recorded graph is one node whatever the steps
    assert sizes[3] < 2 * sizes[1]  # and the peak memory of the gradient stays the same
    # unrolled differentiation of explicit Euler steps records a node per operation per step
    def euler(k, n):
        y = Y0
        for _ in range(n):
            y = y + (20.0 / n) * f(y, 0.0, k)
        return y

    assert len(fg.trace(lambda k: euler(k, 200), 2.0)) > 100 * sizes[0]


def test_a_closed_over_traced_value_is_refused():
    def loss(k):
        return fnp.sum(odeint(lambda y, t: -k * y, Y0, T))

    with pytest.raises(fg.FuncgradError, match="closes over"):
        fg.grad(loss)(0.7)


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="1-D"):
        odeint(decay, Y0, np.ones((2, 2)), 0.7)
    with pytest.raises(ValueError, match="mxstep"):
        odeint(decay, Y0, np.array([0.0, 100.0]), 50.0, mxstep=5)


def test_trapezoid():
    rng = np.random.default_rng(0)
    y, x = rng.standard_normal((3, 5)), np.sort(rng.uniform(0, 2, 5))
    np.testing.assert_allclose(trapezoid(y, x), si.trapezoid(y, x))
    np.testing.assert_allclose(trapezoid(y, dx=0.3, axis=0), si.trapezoid(y, dx=0.3, axis=0))
    fg.check_grads(trapezoid, (y, x), order=2)


def test_on_the_standin_device(standin):
    y0 = standin.put(Y0)
    got = fg.grad(lambda y0, k: fnp.sum(odeint(decay, y0, standin.put(T), k)[-1]), (0, 1))(
        y0, standin.put(0.7))
    want = fg.grad(lambda y0, k: fnp.sum(odeint(decay, y0, T, k)[-1]), (0, 1))(Y0, 0.7)
    assert type(got[0]) is standin.StrictArray
    np.testing.assert_allclose(standin.get(got[0]), want[0], rtol=1e-12)
    np.testing.assert_allclose(float(standin.get(got[1])), want[1], rtol=1e-12)
    # a Python float argument is made a device scalar
    got = fg.grad(lambda y0: fnp.sum(odeint(decay, y0, standin.put(T), 0.7)[-1]))(y0)
    np.testing.assert_allclose(standin.get(got), want[0], rtol=1e-12)


def _counting(fun):
    calls = [0]

    def counted(y, t, *args):
        calls[0] += 1
        return fun(y, t, *args)

    return counted, calls


def test_hmax_bounds_every_step_in_both_directions():
    t = np.array([0.0, 1.0, 3.0])
    loose = odeint(decay, Y0, t, 0.7, rtol=1e-5, atol=1e-5, full_output=True)[1]
    ys, info = odeint(decay, Y0, t, 0.7, rtol=1e-5, atol=1e-5, hmax=0.05, full_output=True)
    assert loose["hu"].max() > 0.2  # the bound binds
    assert info["hu"].max() <= 0.05 and info["nst"][-1] >= 60
    np.testing.assert_allclose(ys, si.odeint(lambda y, t: -0.7 * y, Y0, t, hmax=0.05),
                               rtol=1e-5)
    np.testing.assert_allclose(ys, np.exp(-0.7 * t)[:, None] * Y0, rtol=1e-6)
    # the adjoint keeps the bound: the backward solve takes steps of 0.05 at most too
    f, calls = _counting(decay)
    _, vjp_fn = fg.vjp(lambda k: odeint(f, Y0, t, k, rtol=1e-5, atol=1e-5, hmax=0.05), 0.7)
    forward = calls[0]
    g = vjp_fn(W[:3] * np.ones((3, 2)))[0]
    assert calls[0] - forward >= 6 * 60
    want = np.sum(-t[:, None] * np.exp(-0.7 * t)[:, None] * Y0 * W[:3])  # d/dk, closed form
    np.testing.assert_allclose(g, want, rtol=1e-5)
    # first order in both modes by finite differences, second against the closed form
    def loss(k):
        return fnp.sum(odeint(decay, Y0, t[:2], k, hmax=0.4) * W[:2])

    fg.check_grads(loss, (np.float64(0.7),), order=1, modes=("rev", "fwd"))
    second = np.sum(t[:2, None] ** 2 * np.exp(-0.7 * t[:2])[:, None] * Y0 * W[:2])
    np.testing.assert_allclose(fg.hessian(loss)(0.7), second, rtol=1e-7)
    np.testing.assert_allclose(fg.jvp(fg.grad(loss), (0.7,), (1.0,))[1], second, rtol=1e-7)


def test_h0_is_the_first_step():
    _, info = odeint(decay, Y0, np.array([0.0, 0.25]), 0.7, rtol=1e-3, atol=1e-3, h0=0.25,
                     full_output=True)
    np.testing.assert_array_equal(info["nst"], [1])
    np.testing.assert_array_equal(info["hu"], [0.25])


def test_full_output_counts_what_the_forward_solve_did():
    f, calls = _counting(oscillator)
    t = np.linspace(0.0, 4.0, 5)
    ys, info = odeint(f, np.array([1.0, 0.0]), t, 1.5, 0.2, full_output=True)
    np.testing.assert_allclose(ys[:, 0], oscillator_closed(1.5, 0.2, t), atol=1e-7)
    ref = si.odeint(lambda y, t: [y[1], -0.6 * y[1] - 2.25 * y[0]], [1.0, 0.0], t,
                    full_output=True)[1]
    for key in ("hu", "tcur", "nst", "nfe", "nje", "nqu", "message"):
        assert key in ref  # SciPy's names
        assert np.shape(info[key]) == np.shape(ref[key]), key
    np.testing.assert_array_equal(info["tcur"], t[1:])
    assert info["nfe"][-1] == calls[0]
    assert np.all(np.diff(info["nst"]) > 0) and np.all(np.diff(info["nfe"]) > 0)
    np.testing.assert_array_equal(info["nje"], 0)
    # the result stays differentiable; the counts are those of the forward solve
    g_full = fg.grad(lambda k: fnp.sum(odeint(decay, Y0, T, k, full_output=True)[0] * W))(0.7)
    g = fg.grad(lambda k: fnp.sum(odeint(decay, Y0, T, k) * W))(0.7)
    np.testing.assert_allclose(g_full, g, rtol=1e-12)


def test_scipy_options_it_cannot_honour_are_refused():
    for kwargs, what in (({"hmin": 1e-3}, "hmin"), ({"tcrit": [1.0]}, "tcrit"),
                         ({"hmax": -1.0}, "hmax"), ({"h0": -0.1}, "h0")):
        with pytest.raises(ValueError, match=what):
            odeint(decay, Y0, T, 0.7, **kwargs)
    with pytest.raises(ValueError, match="full_output"):
        fg.vmap(lambda y0: odeint(decay, y0, T, 0.7, full_output=True)[0])(np.ones((3, 2)))


def test_non_monotonic_times_are_refused_as_scipy_refuses_them():
    import scipy.integrate

    t = np.array([0.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="monotonically"):
        scipy.integrate.odeint(lambda y, s: -y, [1.0], t)
    with pytest.raises(fg.FuncgradValueError, match=r"odeint: the values in t must be mono"):
        odeint(lambda y, s: -y, np.array([1.0]), t)  # was: y(1) = y(2), stale, no word
    with pytest.raises(fg.FuncgradValueError, match="monotonically"):
        fg.grad(lambda t: odeint(lambda y, s: -y, np.array([1.0]), t)[-1].sum())(t)
    for ok in ([0.0, 1.0, 1.0, 2.0], [0.0, -1.0, -2.0]):  # repeats, and backwards, are fine
        np.testing.assert_allclose(odeint(lambda y, s: -y, np.array([1.0]), np.array(ok))[:, 0],
                                   scipy.integrate.odeint(lambda y, s: -y, [1.0], ok)[:, 0],
                                   rtol=1e-6)


def test_a_complex_state_is_refused_by_name():
    with pytest.raises(fg.FuncgradTypeError, match=r"odeint: y0 is complex \(complex128\)"):
        odeint(lambda y, s: -1j * y, np.array([1.0 + 0.0j]), np.linspace(0.0, 1.0, 3))
    with pytest.raises(fg.FuncgradTypeError, match="odeint: y0 is complex"):
        fg.vmap(lambda y0: odeint(lambda y, s: -y, y0, np.linspace(0.0, 1.0, 3)))(
            np.ones((2, 1), complex))
