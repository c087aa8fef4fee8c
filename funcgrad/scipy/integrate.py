"""``funcgrad.scipy.integrate``: ``odeint`` with adjoint gradients, and ``trapezoid`` (layer 7).

:func:`odeint` integrates ``dy/dt = func(y, t, *args)`` with an adaptive
Dormand–Prince 5(4) method on raw arrays: solving records one node, not
one per step.  Its gradient in ``y0``, every entry of ``t`` and ``args``
comes from the adjoint ODE solved backwards in time (Chen et al. 2018,
appendix C) -- itself an :func:`odeint` call, with the same ``rtol`` and
``atol``, of dynamics written in funcgrad's differentiable functions -- so
higher orders work too, and the memory of a gradient does not grow with the
number of steps the solver takes.

>>> import numpy, funcgrad as fg
>>> from funcgrad.scipy.integrate import odeint
>>> decay = lambda y, t, k: -k * y
>>> t = numpy.array([0.0, 1.0])
>>> bool(abs(odeint(decay, 1.0, t, 0.5)[-1] - numpy.exp(-0.5)) < 1e-7)
True
>>> g = fg.grad(lambda k: odeint(decay, 1.0, t, k)[-1])(0.5)   # d/dk exp(-k) = -exp(-k)
>>> bool(abs(g + numpy.exp(-0.5)) < 1e-7)
True
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from fractions import Fraction as _F
from typing import Any

import numpy

from .. import numpy as fnp
from .. import tree
from ..backend import to_device
from ..batching import NOT_MAPPED as _NOT_MAPPED
from ..batching import per_example as _per_example
from ..combinators import vjp as _vjp
from ..custom import custom_vjp
from ..errors import FuncgradError, FuncgradTypeError, FuncgradValueError
from ..node import Node, value_of
from ..numpy._core import xp_of

__all__ = ["odeint", "trapezoid"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


# -- Dormand–Prince 5(4) -------------------------------------------------------------------

_A = [
    [],
    [_F(1, 5)],
    [_F(3, 40), _F(9, 40)],
    [_F(44, 45), _F(-56, 15), _F(32, 9)],
    [_F(19372, 6561), _F(-25360, 2187), _F(64448, 6561), _F(-212, 729)],
    [_F(9017, 3168), _F(-355, 33), _F(46732, 5247), _F(49, 176), _F(-5103, 18656)],
]
_C = [_F(0), _F(1, 5), _F(3, 10), _F(4, 5), _F(8, 9), _F(1)]
_B = [_F(35, 384), _F(0), _F(500, 1113), _F(125, 192), _F(-2187, 6784), _F(11, 84), _F(0)]
_B4 = [_F(5179, 57600), _F(0), _F(7571, 16695), _F(393, 640), _F(-92097, 339200),
       _F(187, 2100), _F(1, 40)]
_E = [float(b - b4) for b, b4 in zip(_B, _B4, strict=True)]
_A = [[float(a) for a in row] for row in _A]
_C = [float(c) for c in _C]
_B = [float(b) for b in _B]


def _rms(x: Any, xp: Any) -> float:
    return math.sqrt(float(xp.mean(x * x))) if getattr(x, "size", 1) else 0.0


def _call(fun, y, t):
    out = fun(y, t)
    if type(out) is Node:
        raise FuncgradError(
            "odeint: func returned a traced value for untraced y, t and args: it closes over "
            "a traced value (a Node); pass that value to odeint in args instead"
        )
    return out


class _Stats:
    """What :func:`odeint`'s ``full_output`` reports, gathered by one solve."""

    def __init__(self) -> None:
        self.hu: list = []
        self.tcur: list = []
        self.nst: list = []
        self.nfe: list = []
        self.steps = 0
        self.evals = 0

    def reached(self, t: float, h: float) -> None:
        self.hu.append(h)
        self.tcur.append(t)
        self.nst.append(self.steps)
        self.nfe.append(self.evals)


# The collector of the odeint call being made with full_output (None otherwise).
_STATS: ContextVar[_Stats | None] = ContextVar("funcgrad_odeint_stats", default=None)


def _first_step(fun, y, t, f, span: float, opts: dict, xp: Any) -> float:
    """The first step's size: ``h0`` if given, else from the scaled sizes of ``y`` and
    ``f`` (Hairer, Nørsett and Wanner's heuristic, simplified)."""
    if opts["h0"]:
        return min(abs(opts["h0"]), span)
    scale = opts["atol"] + opts["rtol"] * xp.abs(y)
    d0, d1 = _rms(y / scale, xp), _rms(f / scale, xp)
    h = 0.01 * d0 / d1 if d0 > 1e-5 and d1 > 1e-5 else 1e-6
    return min(h, span) if span > 0 else 0.0


def _dp_step(fun, y, t: float, f, h: float):
    """One Dormand–Prince step of signed size ``h``: ``(y_new, f_new, error estimate)``."""
    ks = [f]
    for i in range(1, 6):
        yi = y
        for a, k in zip(_A[i], ks, strict=True):
            if a:
                yi = yi + (h * a) * k
        ks.append(_call(fun, yi, t + h * _C[i]))
    y_new = y
    for b, k in zip(_B, ks, strict=False):
        if b:
            y_new = y_new + (h * b) * k
    f_new = _call(fun, y_new, t + h)
    ks.append(f_new)
    err = 0
    for e, k in zip(_E, ks, strict=True):
        if e:
            err = err + (h * e) * k
    return y_new, f_new, err


def _advance(fun, state: list, target: float, sign: float, opts: dict, stats, xp: Any):
    """Steps ``state = [t, y, f, h]`` on to ``target`` (adaptively, landing on it)."""
    t, y, f, h = state
    steps, hmax, last = 0, opts["hmax"] or math.inf, 0.0
    while sign * (target - t) > 0:
        if steps >= opts["mxstep"]:
            raise FuncgradValueError(
                f"odeint: more than mxstep={opts['mxstep']} steps between t={t} and "
                f"{target}; raise mxstep or loosen rtol/atol"
            )
        step = min(h, hmax, sign * (target - t))
        y_new, f_new, err = _dp_step(fun, y, t, f, sign * step)
        scale = opts["atol"] + opts["rtol"] * xp.maximum(xp.abs(y), xp.abs(y_new))
        ratio = _rms(err / scale, xp)
        steps += 1
        if stats is not None:
            stats.evals += 6
        if ratio <= 1.0:
            t = target if step == sign * (target - t) else t + sign * step
            y, f, last = y_new, f_new, step
            if stats is not None:
                stats.steps += 1
        factor = 10.0 if ratio == 0.0 else min(10.0, max(0.2, 0.9 * ratio ** -0.2))
        h = step * factor if ratio <= 1.0 else step * min(1.0, factor)
    state[:] = [t, y, f, h]
    if stats is not None:
        stats.reached(t, last)
    return y


def _solve(fun, y0, ts, opts: dict) -> Any:
    """``y`` at every time of ``ts`` (raw arrays, ``ts`` monotonic), solving ``dy/dt =
    fun(y, t)`` from ``y(ts[0]) = y0`` with adaptive Dormand–Prince steps; ``opts``:
    ``rtol``, ``atol``, ``mxstep``, ``h0``, ``hmax`` as :func:`odeint` takes them."""
    xp = xp_of(y0)
    times = [float(v) for v in numpy.asarray(ts if isinstance(ts, numpy.ndarray)
                                             else _host(ts)).ravel()]
    out = [y0]
    if len(times) == 1:
        return xp.stack(out)
    stats = _STATS.get()
    sign = 1.0 if times[-1] >= times[0] else -1.0
    f = _call(fun, y0, times[0])
    if stats is not None:
        stats.evals += 1
    state = [times[0], y0, f, _first_step(fun, y0, times[0], f, abs(times[-1] - times[0]),
                                          opts, xp)]
    for target in times[1:]:
        out.append(_advance(fun, state, target, sign, opts, stats, xp))
    return xp.stack(out)


def _host(ts):

    return to_device(ts, "cpu")


# -- the differentiable solve ---------------------------------------------------------------


def _is_float(v: Any) -> bool:
    dt = getattr(value_of(v), "dtype", None)
    return isinstance(value_of(v), float) or (dt is not None and dt.kind == "f")


def _dtype(v: Any, like: Any) -> Any:
    dt = getattr(value_of(v), "dtype", None)
    return value_of(like).dtype if dt is None else dt


def _raw_solve(y0, t, *leaves, func, treedef, **opts):
    args = tree.unflatten(treedef, [value_of(v) for v in leaves])
    return _solve(lambda y, s: func(y, s, *args), value_of(y0), value_of(t), opts)


_odeint = custom_vjp(_raw_solve)


def _fwd(y0, t, *leaves, **kw):
    ys = _raw_solve(y0, t, *leaves, **kw)
    return ys, (y0, t, leaves, kw)


def _bwd(res, g):
    y0, t, leaves, kw = res
    func, treedef, rtol, atol = kw["func"], kw["treedef"], kw["rtol"], kw["atol"]
    ys = _odeint(y0, t, *leaves, **kw)  # recorded again: the gradient of the gradient
    floats = [i for i, v in enumerate(leaves) if _is_float(v)]
    args = tree.unflatten(treedef, list(leaves))
    shape = tuple(getattr(y0, "shape", ()))
    size = math.prod(shape)
    sizes = [math.prod(getattr(leaves[i], "shape", ())) for i in floats]
    shapes = [tuple(getattr(leaves[i], "shape", ())) for i in floats]

    def with_floats(vals):
        full = list(leaves)
        for i, v in zip(floats, vals, strict=True):
            full[i] = v
        return tree.unflatten(treedef, full)

    def unpack(state):
        y = fnp.reshape(state[:size], shape)
        y_bar = fnp.reshape(state[size:2 * size], shape)
        t_bar = state[2 * size]
        parts, start = [], 2 * size + 1
        for n, s in zip(sizes, shapes, strict=True):
            parts.append(fnp.reshape(state[start:start + n], s))
            start += n
        return y, y_bar, t_bar, parts

    def pack(y, y_bar, t_bar, parts):
        pieces = [fnp.ravel(y), fnp.ravel(y_bar), fnp.reshape(t_bar, (1,))]
        pieces += [fnp.ravel(p) for p in parts]
        return fnp.concatenate(pieces)

    def augmented(state, s, *aug_leaves):
        y, y_bar, _, _ = unpack(state)
        vals = [aug_leaves[i] for i in floats]

        def f(y, tt, *vals):
            return func(y, tt, *with_floats(vals))

        time = fnp.asarray(-s, dtype=value_of(state).dtype, like=state)  # on y's device
        y_dot, pullback = _vjp(f, y, time, *vals)
        grads = pullback(y_bar)
        return pack(-y_dot, grads[0], grads[1], list(grads[2:]))

    n = t.shape[0]
    y_bar = g[n - 1]
    zero = fnp.zeros((), dtype=value_of(ys).dtype, like=ys)
    t0_bar = zero
    args_bar = [fnp.zeros(shp, dtype=_dtype(leaves[i], ys), like=ys)  # on y's device
                for i, shp in zip(floats, shapes, strict=True)]
    t_bars = []
    for i in range(n - 1, 0, -1):
        t_bar = fnp.sum(func(ys[i], t[i], *args) * g[i])
        t_bars.append(t_bar)
        t0_bar = t0_bar - t_bar
        state = pack(ys[i], y_bar, t0_bar, args_bar)
        span = fnp.stack([-t[i], -t[i - 1]])
        back = odeint(augmented, state, span, *leaves, rtol=rtol, atol=atol, mxstep=kw["mxstep"],
                      hmax=kw["hmax"])
        _, y_bar, t0_bar, args_bar = unpack(back[1])
        y_bar = y_bar + g[i - 1]
    t_grad = fnp.stack([t0_bar] + t_bars[::-1]) if n > 1 else fnp.zeros_like(t)
    leaf_grads = [None] * len(leaves)
    for i, gr in zip(floats, args_bar, strict=True):
        leaf_grads[i] = gr
    return (y_bar, fnp.astype(t_grad, value_of(t).dtype), *leaf_grads)


_odeint.defvjp(_fwd, _bwd)


def odeint(func: Any, y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: int = 10000, h0: float = 0.0, hmax: float = 0.0,
           full_output: bool = False, **unused: Any) -> Any:
    """Solve ``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0``: ``y`` at every time of ``t``.

    As SciPy's ``odeint`` (``func(y, t, *args)``, results of shape
    ``(len(t),) + y0.shape``), adaptive (Dormand–Prince 5(4), local error
    below ``atol + rtol * |y|``), and differentiable in ``y0``, each entry of
    ``t`` and ``args`` (any pytree) by the adjoint ODE solved backwards with
    the same tolerances -- not by differentiating the solver's steps.
    ``func`` is written with ``funcgrad.numpy``; it must not close over a
    traced value (pass such values in ``args``: a ``FuncgradError`` says so).
    ``t`` is monotonic (repeats allowed; else, as SciPy, ``ValueError``); the state
    is real (a complex ``y0``: ``TypeError``); ``mxstep`` bounds the steps between two times.

    ``h0`` is the first step's size and ``hmax`` the largest step's (0: the
    solver's choice and no bound, as SciPy's); the adjoint solve keeps
    ``hmax``.  With ``full_output=True`` the result is ``(y, infodict)`` as
    SciPy's, the forward solve's counts per output time after the first:
    ``hu`` (the last step's size), ``tcur`` (the time reached), ``nst`` and
    ``nfe`` (cumulative steps taken and evaluations of ``func``), ``nje``
    (0: no Jacobian is used), ``nqu`` (the method's order, 5) and
    ``message``; LSODA's own entries (``tolsf``, ``tsw``, ``mused``...) are absent.
    SciPy's other options (``Dfun``, ``tcrit``, ``hmin``...) are refused.

    >>> import numpy, funcgrad as fg
    >>> from funcgrad.scipy.integrate import odeint
    >>> t = numpy.linspace(0.0, 2.0, 3)
    >>> ys = odeint(lambda y, t: -y, numpy.array([1.0, 2.0]), t)
    >>> bool(numpy.allclose(ys, numpy.exp(-t)[:, None] * [1.0, 2.0]))
    True
    >>> g = fg.grad(lambda y0: odeint(lambda y, t: -y, y0, t)[-1].sum())(numpy.ones(2))
    >>> bool(numpy.allclose(g, numpy.exp(-2.0)))
    True
    >>> ys, info = odeint(lambda y, t: -y, 1.0, t, hmax=0.1, full_output=True)
    >>> bool(info["hu"].max() <= 0.1), bool(info["nst"][-1] >= 20), info["message"]
    (True, True, 'Integration successful.')
    """
    if unused:
        raise FuncgradValueError(
            f"odeint: {sorted(unused)} not supported (funcgrad's odeint takes rtol, atol, "
            f"mxstep, h0, hmax and full_output)")
    for name, value in (("h0", h0), ("hmax", hmax)):
        if not value >= 0:
            raise FuncgradValueError(f"odeint: {name} must be >= 0 (0: no bound), got {value!r}")
    if isinstance(y0, (int, float)):
        y0 = numpy.asarray(y0, dtype=float)
    t = fnp.asarray(t) if isinstance(t, (list, tuple)) else t
    opts = {"rtol": float(rtol), "atol": float(atol), "mxstep": int(mxstep), "h0": float(h0),
            "hmax": float(hmax)}
    # fg.vmap: each example its own adaptive steps (the solver's callbacks see plain arrays)
    out = _per_example(lambda p: odeint(func, p[0], p[1], *p[2], **opts), (y0, t, args),
                       "odeint")
    if out is not _NOT_MAPPED:
        if full_output:
            raise FuncgradValueError("odeint: full_output=True under fg.vmap (each example "
                                     "takes steps of its own): call it per example")
        return out
    if len(getattr(t, "shape", ())) != 1:
        raise FuncgradValueError(f"odeint: t must be a 1-D array of times, got shape "
                                 f"{getattr(t, 'shape', ())}")
    _check_times_and_state(t, y0)
    leaves, treedef = tree.flatten(args)
    dtype = getattr(value_of(y0), "dtype", numpy.float64)
    leaves = [fnp.asarray(v, dtype=dtype, like=y0) if type(v) is float else v for v in leaves]
    stats = _Stats() if full_output else None
    token = _STATS.set(stats)  # None: a solve made inside func gathers nothing here
    try:
        ys = _odeint(y0, t, *leaves, func=func, treedef=treedef, **opts)
    finally:
        _STATS.reset(token)
    if not full_output:
        return ys
    n = len(stats.nst)
    return ys, {"hu": numpy.asarray(stats.hu, float), "tcur": numpy.asarray(stats.tcur, float),
                "nst": numpy.asarray(stats.nst, int), "nfe": numpy.asarray(stats.nfe, int),
                "nje": numpy.zeros(n, int), "nqu": numpy.full(n, 5),
                "message": "Integration successful."}


def _check_times_and_state(t: Any, y0: Any) -> None:
    """SciPy's rule for ``t`` (monotonic, repeats allowed), and a real state."""
    steps = numpy.diff(numpy.asarray(to_device(value_of(t), "cpu"), dtype=float))
    if (steps > 0).any() and (steps < 0).any():
        raise FuncgradValueError(
            "odeint: the values in t must be monotonically increasing or monotonically "
            f"decreasing (repeated values are allowed), got t = {value_of(t)!r}")
    if numpy.dtype(getattr(value_of(y0), "dtype", float)).kind == "c":
        raise FuncgradTypeError(
            f"odeint: y0 is complex ({value_of(y0).dtype}), which odeint does not integrate "
            "(SciPy's neither): stack its real and imaginary parts into a real state, "
            "fnp.concatenate([fnp.real(y), fnp.imag(y)]), and write func for that")


def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Any:
    """The integral of ``y`` along ``axis`` by the trapezoidal rule (SciPy's), differentiable
    in ``y`` and ``x``.

    >>> import numpy
    >>> from funcgrad.scipy.integrate import trapezoid
    >>> float(trapezoid(numpy.array([1.0, 2.0, 3.0]), dx=0.5))
    2.0
    """
    y = fnp.moveaxis(y, axis, -1)
    mid = (y[..., 1:] + y[..., :-1]) * 0.5
    if x is None:
        return fnp.sum(mid, axis=-1) * dx
    x = fnp.asarray(x) if isinstance(x, (list, tuple)) else x
    d = (x[..., 1:] - x[..., :-1]) if len(x.shape) == 1 else fnp.moveaxis(x, axis, -1)
    if len(x.shape) != 1:
        d = d[..., 1:] - d[..., :-1]
    return fnp.sum(mid * d, axis=-1)
