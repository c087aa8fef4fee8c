"""``check_grads``: derivatives against finite differences, to any order (layer 6).

Each check draws a random direction ``v`` for the inputs and compares the
directional derivative computed by forward mode (``jvp``) and by reverse mode
(``<vjp(u), v>`` against ``<u, J v>`` for a random output direction ``u``) with
central finite differences.

For ``order > 1`` the same checks run, recursively, on the derivative
functions themselves, *as functions of every argument they take*:
``(x, v) -> jvp(f, x, v)`` in both ``x`` and the tangent ``v``, and
``(x, u) -> vjp(f, x)(u)`` in both ``x`` and the cotangent ``u`` (HIPS
autograd's checker does the same).  Holding ``v`` or ``u`` fixed would let a
rule that mishandles a traced tangent or cotangent -- reads it as data, say --
pass at every order.

Complex inputs vary in complex directions (``v`` with random real and
imaginary parts) and complex outputs get complex cotangents; the pairing is
``real(sum(a * b))``, so ``<vjp(u), v> == <u, J v>`` holds exactly when the
VJP is the plain transpose of the JVP (JAX's convention), and a conjugated
rule fails.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.check_grads(fnp.sin, (numpy.array([0.1, 0.7]),), order=2)
>>> fg.check_grads(lambda x, p: x ** p["k"], (1.5, {"k": 2.5}), order=2)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

from . import tree
from .backend import is_inexact_dtype, namespace
from .combinators import jvp, vjp
from .errors import FuncgradValueError, describe
from .node import Node, float_array, value_of

_DEFAULTS = {  # dtype -> (eps, rtol, atol) for central differences
    numpy.dtype("float64"): (1e-6, 1e-5, 1e-6),
    numpy.dtype("float32"): (1e-2, 2e-2, 2e-2),
    numpy.dtype("float16"): (5e-2, 1e-1, 1e-1),
    numpy.dtype("complex128"): (1e-6, 1e-5, 1e-6),
    numpy.dtype("complex64"): (1e-2, 2e-2, 2e-2),
}


def _host(x: Any) -> numpy.ndarray:
    v = value_of(x)
    get = getattr(v, "get", None)  # CuPy arrays copy to the host with .get()
    kind = getattr(getattr(v, "dtype", None), "kind", "c" if isinstance(v, complex) else "f")
    return numpy.asarray(get() if callable(get) and not isinstance(v, numpy.ndarray) else v,
                         dtype=numpy.complex128 if kind == "c" else numpy.float64)


def _as_array(x: Any) -> Any:
    """A leaf as an array: Python numbers become float64 0-d arrays, NumPy scalars 0-d arrays."""
    if type(x) is Node:
        return x
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float_array(x, "check_grads: argument")
    if isinstance(x, complex):
        return numpy.asarray(x)
    if isinstance(x, numpy.generic):
        return numpy.asarray(x)
    return x


def _is_float(x: Any) -> bool:
    dtype = getattr(value_of(x), "dtype", None)
    return dtype is not None and is_inexact_dtype(dtype)


def _like(x: Any, host: numpy.ndarray) -> Any:
    """``host`` (a NumPy array) on the device and dtype of ``x`` (float64 for non-floats)."""
    v = _as_array(value_of(x))
    dtype = v.dtype if _is_float(v) else numpy.float64
    return namespace(v).asarray(host, dtype=dtype)


def _random_like(rng: numpy.random.Generator, x: Any) -> Any:
    shape = numpy.shape(value_of(x))
    host = rng.standard_normal(shape)
    if _as_array(value_of(x)).dtype.kind == "c":  # a complex direction
        host = host + 1j * rng.standard_normal(shape)
    return _like(x, host)


def _dot(xs: list, ys: list) -> float:
    """``real(sum(a * b))`` over the pairs: the pairing under which a VJP is the transpose
    of its JVP (no conjugation)."""
    return float(sum(numpy.sum(_host(a) * _host(b)).real for a, b in zip(xs, ys, strict=True)))


def _tolerances(leaves: list, eps, rtol, atol):
    dtypes = [value_of(x).dtype for x in leaves]
    worst = min(dtypes, key=lambda d: d.itemsize) if dtypes else numpy.dtype("float64")
    native = numpy.dtype(worst).newbyteorder("=")  # a big-endian float32 is a float32
    d_eps, d_rtol, d_atol = _DEFAULTS.get(native, _DEFAULTS[numpy.dtype("float64")])
    return (eps or d_eps, rtol or d_rtol, atol or d_atol)


def _outputs(out: Any) -> list:
    """The float output leaves of a result, on the host in float64 (other leaves are data)."""
    return [_host(o) for o in tree.flatten(out)[0] if _is_float(_as_array(o))]


def _numeric_jvp(fun: Callable, xs: tuple, vs: tuple, eps: float) -> list:
    """Central difference of ``fun`` along ``vs``, evaluated in float64 on the host."""

    def shifted(sign: float) -> list:
        moved = [_like(x, _host(x) + sign * eps * _host(v)) for x, v in zip(xs, vs, strict=True)]
        return _outputs(fun(*moved))

    plus, minus = shifted(1.0), shifted(-1.0)
    return [(p - m) / (2 * eps) for p, m in zip(plus, minus, strict=True)]


def _report(what: str, expected: numpy.ndarray, got: numpy.ndarray, rtol: float, atol: float):
    expected, got = numpy.atleast_1d(expected), numpy.atleast_1d(got)
    if expected.shape != got.shape:
        raise AssertionError(f"{what}: shape {got.shape}, finite differences give {expected.shape}")
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


def _check_fwd(fun, xs, rng, eps, rtol, atol, label):
    vs = tuple(_random_like(rng, x) for x in xs)
    _, t_out = jvp(fun, xs, vs)
    numeric = _numeric_jvp(fun, xs, vs, eps)
    got = _outputs(t_out)
    if len(got) != len(numeric):
        raise AssertionError(f"{label} forward mode: {len(got)} tangents for "
                             f"{len(numeric)} float outputs")
    for k, (n, g) in enumerate(zip(numeric, got, strict=True)):
        _report(f"{label} forward mode (jvp), output leaf {k}", n, g, rtol, atol)


def _cotangent(rng: numpy.random.Generator, out: Any) -> tuple[list, Any]:
    """Random cotangent leaves for ``out`` (None for leaves that are not floats) and its treedef."""
    leaves, treedef = tree.flatten(out)
    return [_random_like(rng, o) if _is_float(_as_array(o)) else None for o in leaves], treedef


def _check_rev(fun, xs, rng, eps, rtol, atol, label):
    out, vjp_fn = vjp(fun, *xs)
    us, out_def = _cotangent(rng, out)
    vs = tuple(_random_like(rng, x) for x in xs)
    got = _dot(list(vjp_fn(tree.unflatten(out_def, us))), list(vs))
    numeric = _dot([u for u in us if u is not None], _numeric_jvp(fun, xs, vs, eps))
    _report(f"{label} reverse mode (<vjp(u), v> vs <u, J v>)", numpy.array(numeric),
            numpy.array(got), rtol, atol)


MAX_ORDER = 8


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

    ``args`` is a tuple of arguments (anything else is taken as one argument);
    each may be an array, a Python number, a NumPy scalar or a pytree of them.
    Every float leaf is varied; other leaves (integer or boolean arrays, such
    as indices) are held fixed as data.  ``modes`` picks reverse (``'rev'``)
    and/or forward (``'fwd'``) mode.  At ``order`` k > 1 the derivative
    functions ``(x, v) -> jvp(fun, x, v)`` and ``(x, u) -> vjp(fun, x)(u)`` are
    checked at order k - 1 in both of their arguments.  Raises
    ``AssertionError`` showing the worst mismatch: where, expected, got.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.check_grads(lambda x, y: fnp.sin(x) * y, (0.5, numpy.ones(2)), order=3)
    """
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    for m in modes:
        if m not in ("rev", "fwd"):
            raise FuncgradValueError(
                f"check_grads: unknown mode {describe(m)}; expected 'rev' or 'fwd'"
            )
    if not isinstance(order, int) or isinstance(order, bool) or not 1 <= order <= MAX_ORDER:
        # each order doubles the work (both modes at every level): a bound, not a hang
        raise FuncgradValueError(
            f"check_grads: order must be an int from 1 to {MAX_ORDER}, got {describe(order)}"
        )
    leaves, treedef = tree.flatten(args)
    leaves = [_as_array(x) for x in leaves]
    vary = [i for i, x in enumerate(leaves) if _is_float(x)]

    def flat_fun(*xs):
        full = list(leaves)
        for i, x in zip(vary, xs, strict=True):
            full[i] = x
        return fun(*tree.unflatten(treedef, full))

    xs = tuple(leaves[i] for i in vary)
    rng = numpy.random.default_rng(seed)
    eps, rtol, atol = _tolerances(list(xs), eps, rtol, atol)
    _check_order(flat_fun, xs, order, tuple(modes), rng, eps, rtol, atol, 1)


def _check_order(fun, xs, order, modes, rng, eps, rtol, atol, level, what=""):
    label = f"order {level}{what}"
    if "fwd" in modes:
        _check_fwd(fun, xs, rng, eps, rtol, atol, label)
    if "rev" in modes:
        _check_rev(fun, xs, rng, eps, rtol, atol, label)
    if order <= 1:
        return
    n = len(xs)
    if "fwd" in modes:
        # (x, v) -> J(x) v as a function of both: its derivative in v checks
        # that the JVP rules treat a traced tangent right.
        vs = tuple(_random_like(rng, x) for x in xs)

        def jvp_fun(*xv):
            return jvp(fun, xv[:n], xv[n:])[1]

        _check_order(jvp_fun, xs + vs, order - 1, modes, rng, eps, rtol, atol, level + 1,
                     f" (of the jvp{what})")
    if "rev" in modes:
        us, out_def = _cotangent(rng, fun(*xs))
        slots = [k for k, u in enumerate(us) if u is not None]

        def vjp_fun(*xu):
            ct = list(us)
            for k, u in zip(slots, xu[n:], strict=True):
                ct[k] = u
            return vjp(fun, *xu[:n])[1](tree.unflatten(out_def, ct))

        _check_order(vjp_fun, xs + tuple(us[k] for k in slots), order - 1, modes, rng,
                     eps, rtol, atol, level + 1, f" (of the vjp{what})")
