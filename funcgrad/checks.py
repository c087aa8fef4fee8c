"""``check_grads``: derivatives against finite differences, to any order (layer 6).

Each check draws a random direction ``v`` for the inputs and compares the
directional derivative computed by forward mode (``jvp``) and by reverse mode
(``<vjp(u), v>`` against ``<u, J v>`` for a random output direction ``u``) with
central finite differences.  For ``order > 1`` the same checks are run on the
functions ``x, v -> jvp(f, x, v)`` and ``x, u -> vjp(f, x)(u)``, recursively.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.check_grads(fnp.sin, (numpy.array([0.1, 0.7]),), order=2)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

from . import tree
from .combinators import jvp, vjp
from .node import value_of

_DEFAULTS = {  # dtype -> (eps, rtol, atol) for central differences
    numpy.dtype("float64"): (1e-6, 1e-5, 1e-6),
    numpy.dtype("float32"): (1e-2, 2e-2, 2e-2),
    numpy.dtype("float16"): (5e-2, 1e-1, 1e-1),
}


def _host(x: Any) -> numpy.ndarray:
    v = value_of(x)
    get = getattr(v, "get", None)  # CuPy arrays copy to the host with .get()
    return numpy.asarray(get() if callable(get) and not isinstance(v, numpy.ndarray) else v,
                         dtype=numpy.float64)


def _like(x: Any, host: numpy.ndarray) -> Any:
    """``host`` (a NumPy array) on the device and dtype of ``x``."""
    from .backend import namespace

    v = value_of(x)
    return namespace(v).asarray(host, dtype=v.dtype)


def _random_like(rng: numpy.random.Generator, x: Any) -> Any:
    return _like(x, rng.standard_normal(numpy.shape(value_of(x))))


def _dot(xs: list, ys: list) -> float:
    return float(sum(numpy.sum(_host(a) * _host(b)) for a, b in zip(xs, ys, strict=True)))


def _tolerances(leaves: list, eps, rtol, atol):
    dtypes = [value_of(x).dtype for x in leaves if hasattr(value_of(x), "dtype")]
    worst = min(dtypes, key=lambda d: d.itemsize) if dtypes else numpy.dtype("float64")
    d_eps, d_rtol, d_atol = _DEFAULTS.get(numpy.dtype(worst), _DEFAULTS[numpy.dtype("float64")])
    return (eps or d_eps, rtol or d_rtol, atol or d_atol)


def _numeric_jvp(fun: Callable, args: tuple, tangents: tuple, eps: float) -> list:
    """Central difference of ``fun`` along ``tangents``, evaluated in float64 on the host."""
    def shifted(sign: float):
        moved = tree.tree_map(
            lambda x, t: _like(x, _host(x) + sign * eps * _host(t)), args, tangents
        )
        return [_host(o) for o in tree.flatten(fun(*moved))[0]]

    plus, minus = shifted(1.0), shifted(-1.0)
    return [(p - m) / (2 * eps) for p, m in zip(plus, minus, strict=True)]


def _report(what: str, expected: numpy.ndarray, got: numpy.ndarray, rtol: float, atol: float):
    expected, got = numpy.atleast_1d(expected), numpy.atleast_1d(got)
    err = numpy.abs(expected - got) - rtol * numpy.abs(expected)
    if expected.size == 0 or numpy.all(err <= atol):
        return
    where = numpy.unravel_index(int(numpy.nanargmax(numpy.where(numpy.isnan(err), numpy.inf, err))),
                                err.shape)
    raise AssertionError(
        f"{what}: worst mismatch at index {tuple(int(i) for i in where)}: expected "
        f"{expected[where]!r} (finite differences), got {got[where]!r} "
        f"(rtol={rtol}, atol={atol})"
    )


def _check_fwd(fun, args, rng, eps, rtol, atol, label):
    tangents = tree.tree_map(lambda x: _random_like(rng, x), args)
    _, t_out = jvp(fun, args, tangents)
    numeric = _numeric_jvp(fun, args, tangents, eps)
    got = [_host(t) for t in tree.flatten(t_out)[0]]
    for k, (n, g) in enumerate(zip(numeric, got, strict=True)):
        _report(f"{label} forward mode (jvp), output leaf {k}", n, g, rtol, atol)


def _check_rev(fun, args, rng, eps, rtol, atol, label):
    out, vjp_fn = vjp(fun, *args)
    u = tree.tree_map(lambda o: _random_like(rng, o), out)
    tangents = tree.tree_map(lambda x: _random_like(rng, x), args)
    grads = vjp_fn(u)
    got = _dot(tree.flatten(grads)[0], tree.flatten(tangents)[0])
    numeric = _dot(tree.flatten(u)[0], _numeric_jvp(fun, args, tangents, eps))
    _report(f"{label} reverse mode (<vjp(u), v> vs <u, J v>)", numpy.array(numeric),
            numpy.array(got), rtol, atol)


def check_grads(
    fun: Callable,
    args: Any,
    order: int = 1,
    modes: tuple = ("rev", "fwd"),
    eps: float | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    seed: int = 0,
) -> None:
    """Compare derivatives of ``fun`` at ``args`` up to ``order`` with finite differences.

    ``args`` is a tuple of arguments (an array alone is taken as one argument).
    ``modes`` picks reverse (``'rev'``) and/or forward (``'fwd'``) mode.  Raises
    ``AssertionError`` showing the worst mismatch: where, expected, got.
    """
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    for m in modes:
        if m not in ("rev", "fwd"):
            raise ValueError(f"check_grads: unknown mode {m!r}; expected 'rev' or 'fwd'")
    rng = numpy.random.default_rng(seed)
    eps, rtol, atol = _tolerances(tree.flatten(args)[0], eps, rtol, atol)
    _check_order(fun, args, order, modes, rng, eps, rtol, atol, 1)


def _check_order(fun, args, order, modes, rng, eps, rtol, atol, level):
    label = f"order {level}"
    if "fwd" in modes:
        _check_fwd(fun, args, rng, eps, rtol, atol, label)
    if "rev" in modes:
        _check_rev(fun, args, rng, eps, rtol, atol, label)
    if order <= 1:
        return
    if "fwd" in modes:
        v = tree.tree_map(lambda x: _random_like(rng, x), args)
        _check_order(lambda *a: jvp(fun, a, v)[1], args, order - 1, modes, rng,
                     eps, rtol, atol, level + 1)
    if "rev" in modes:
        out = fun(*args)
        u = tree.tree_map(lambda o: _random_like(rng, o), out)
        _check_order(lambda *a: vjp(fun, *a)[1](u), args, order - 1, modes, rng,
                     eps, rtol, atol, level + 1)
