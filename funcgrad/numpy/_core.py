"""Shared helpers of the ``funcgrad.numpy`` rule families (layer 4).

``raw`` reads a value without a gradient, ``xp_of`` finds the namespace of
values, ``ufunc`` and ``primitive`` make the families' primitives.  Nothing
here imports a family: they all import this (``unbroadcast`` and ``bcast``,
which need primitives, are in ``_linear``).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy

from ..backend import (
    NUMPY_TYPES,
    absorbs_numpy,
    device_of,
    is_lazy,
    known_shape,
    namespace,
    same_shape,
)
from ..errors import DeviceMismatchError
from ..node import Node, value_of
from ..primitive import BinaryPrimitive, Primitive, UnaryPrimitive, defjvp, defvjp
from ..primitive import primitive as _primitive

__all__ = [
    "Node",
    "Primitive",
    "defjvp",
    "defvjp",
    "defzero",
    "document",
    "index_data",
    "known_shape",
    "lazy",
    "namespace",
    "primitive",
    "raw",
    "same_shape",
    "shape_of",
    "ufunc",
    "xp_of",
    "zeros_of",
]

raw = value_of


def shape_of(x: Any) -> tuple:
    """The shape of an array, Node or Python number."""
    return getattr(x, "shape", ())


def zeros_of(x: Any) -> Any:
    """Raw zeros of the shape, dtype and device of ``x`` (an array, Node or number)."""
    v = value_of(x)
    xp = xp_of(v)
    if is_lazy(xp):  # chunked as ``x`` is, lengths unknown yet included
        return xp.zeros_like(v)
    return xp.zeros(getattr(v, "shape", ()), getattr(v, "dtype", float))


def xp_of(*xs: Any):
    """The array namespace of the raw values of ``xs``."""
    return namespace(*(value_of(x) for x in xs))


def primitive(fun) -> Primitive:
    """``fg.primitive`` for funcgrad's own functions: rules that folds may trust.

    A fold runs library rules with the cycle collector paused (they make no
    reference cycles); rules of users' primitives run with it as users left it.
    """
    prim = _primitive(fun)
    prim.library = True
    return prim


def lazy(*xs: Any) -> bool:
    """Whether ``xs`` compute in a lazy namespace (Dask), whose data a rule must never
    read into Python (``bool()``, ``int()``, ``float()``): such a rule takes another path."""
    for x in xs:  # the NumPy path first: nothing to look up
        if type(value_of(x)) not in NUMPY_TYPES:
            return is_lazy(xp_of(*xs))
    return False


def ufunc(name: str) -> Primitive:
    """A primitive calling ``xp.<name>`` in its inputs' namespace."""

    def impl(*args, **kwargs):
        return getattr(namespace(*args), name)(*args, **kwargs)

    impl.__name__ = impl.__qualname__ = name
    numpy_fun = getattr(numpy, name)
    kind = {1: UnaryPrimitive, 2: BinaryPrimitive}.get(getattr(numpy_fun, "nin", None), Primitive)
    prim = kind(impl, name, numpy_impl=numpy_fun)
    prim.library = True
    prim.__doc__ = f"``{name}`` in the namespace of the inputs, differentiable."
    # Named where it is defined, so that it pickles by reference (Dask's workers).
    prim.__module__ = sys._getframe(1).f_globals.get("__name__", __name__)
    prim.__qualname__ = name
    prim.elementwise = True  # fg.vmap: every ufunc broadcasts over the batch
    return prim


def defzero(prim: Primitive, nargs: int = 1) -> None:
    """Give piecewise constant ``prim`` (of ``nargs`` positional arguments) zero rules:
    the gradient of each argument is zeros of its shape, the tangent zeros of the
    output's (at the jumps too, as in JAX and PyTorch).

    >>> import funcgrad as fg
    >>> step = primitive(lambda x: numpy.floor(x))
    >>> defzero(step)
    >>> fg.grad(step)(1.5)
    array(0.)
    """
    defvjp(prim, *(_zeros_of_argument(i) for i in range(nargs)))
    defjvp(prim, *(_zeros_of_output,) * nargs)


def _zeros_of_argument(i: int):
    return lambda g, ans, *args, **kwargs: zeros_of(args[i])


def _zeros_of_output(t, ans, *args, **kwargs):
    return zeros_of(ans)


def document(rows: list) -> None:
    """Give ufunc primitives their docstrings (help(), Jupyter and the reference read
    them: a ufunc has no function body to carry one).  A row: the primitive, what it
    computes, its derivative, an example call and the example's output.
    """
    for prim, what, rule, call, out in rows:
        prim.__doc__ = (
            f"``numpy.{prim.name}``, differentiable: {what}.\n\n"
            f"Derivative: {rule}.\n\n"
            ">>> import numpy, funcgrad as fg, funcgrad.numpy as fnp\n"
            f">>> {call}\n{out}\n"
        )


def index_data(p: Any, x: Any, xp: Any = None) -> Any:
    """Integer or boolean data ``p`` (indices, masks, class labels) on the device of ``x``.

    Lists, and NumPy arrays beside a device array, move to ``x``'s device, as
    CuPy takes them; a NumPy float array there, or an array of another device,
    raises :class:`~funcgrad.DeviceMismatchError` naming both devices.  Scalars,
    slices and None pass unchanged.  (``xp``: ``x``'s namespace, when known.)

    >>> index_data([0, 2], numpy.ones(3))
    array([0, 2])
    """
    p, v = value_of(p), value_of(x)
    xp = xp_of(v) if xp is None else xp
    if type(p) is list:
        return xp.asarray(p)
    if type(p) is numpy.ndarray:
        if absorbs_numpy(xp):  # NumPy itself, or a namespace that takes NumPy data (Dask)
            return p
        if p.dtype.kind not in "iub":
            raise DeviceMismatchError(
                f"inputs on different devices: cpu (a NumPy array of dtype {p.dtype}, used as "
                f"index data) and {device_of(v)}; only integer and boolean index data moves "
                "to the device"
            )
        return xp.asarray(p)
    if hasattr(p, "dtype") and not isinstance(p, numpy.generic):
        namespace(v, p)  # index data on another device than x: DeviceMismatchError
    return p
