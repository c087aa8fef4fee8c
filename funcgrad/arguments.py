"""What the combinators check and lift in their arguments, in one place (layer 6).

``argnums`` is lifted here (:func:`argnum_tuple`, :func:`partial_at`), and
here are the dtype rules of ``holomorphic`` (:func:`check_complex`) and the
checks that turn numbers into arrays of a primal or a scalar seed.

>>> from funcgrad.arguments import argnum_tuple
>>> argnum_tuple(-1, 3, 'grad')
(2,)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

from .backend import WEAK_TYPES, namespace
from .errors import FuncgradTypeError, FuncgradValueError
from .node import Node, float_array, value_of
from .primitive import UNIT_SEEDS


def argnum_tuple(argnums: Any, nargs: int, name: str) -> tuple[int, ...]:
    """``argnums`` (an int or a sequence of them) as distinct positions in ``range(nargs)``."""
    if type(argnums) is int and 0 <= argnums < nargs:  # the usual case, checked at once
        return (argnums,)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not isinstance(a, int) or not -nargs <= a < nargs:
            raise FuncgradValueError(f"{name}: argnums {argnums!r} out of range for {nargs} arguments")
    nums = tuple(a % nargs for a in nums)
    if len(set(nums)) != len(nums):  # one argument twice would get its gradient once
        raise FuncgradValueError(f"{name}: argnums {argnums!r} names an argument twice")
    return nums


def partial_at(fun: Callable, args: tuple, nums: tuple[int, ...]) -> Callable:
    """``fun`` of the arguments at ``nums`` only, the others fixed to ``args``'s."""
    if nums == tuple(range(len(args))):  # every argument, in order: fun itself
        return fun

    def partial(*dyn):
        full = list(args)
        for i, a in zip(nums, dyn, strict=True):
            full[i] = a
        return fun(*full)

    return partial


def as_primal(x: Any, where: str) -> Any:
    """A Node or array as it is, a Python number as a float64 0-d array; else ``TypeError``."""
    if type(x) is Node:
        return x
    if isinstance(x, (int, float)) and not isinstance(x, bool) or type(x) in WEAK_TYPES:
        return float_array(x, where)
    if getattr(x, "dtype", None) is None:
        raise FuncgradTypeError(f"{where} must be an array or a number, got {type(x).__name__}")
    return x


def is_float(x: Any) -> bool:
    """Whether ``x`` (a Node, array or number) is real floating or complex: what carries a
    gradient."""
    v = value_of(x)
    if isinstance(v, (float, complex)):
        return True
    dtype = getattr(v, "dtype", None)
    return dtype is not None and numpy.dtype(dtype).kind in "fc"


def _kind(x: Any) -> str:
    """``'c'`` for a complex value, ``'f'`` for a real float, else the dtype's kind."""
    v = value_of(x)
    if isinstance(v, complex):
        return "c"
    if isinstance(v, (float, int)) and not isinstance(v, bool):
        return "f"
    dtype = getattr(v, "dtype", None)
    return "" if dtype is None else numpy.dtype(dtype).kind


def _dtype_name(x: Any) -> str:
    v = value_of(x)
    return str(getattr(v, "dtype", type(v).__name__))


def check_complex(name: str, leaves: list, holomorphic: bool, what: str) -> None:
    """JAX's dtype rules for ``holomorphic``: ``what`` (``'inputs'`` or ``'outputs'``) of
    ``name`` must be real without it (only where ``name`` needs that: see the callers) and
    complex with it; else ``TypeError`` naming the leaf, its dtype and ``holomorphic=True``."""
    for k, x in enumerate(leaves):
        kind = "b" if isinstance(value_of(x), bool) else _kind(x)
        if what == "outputs" and kind in ("b", "i", "u"):  # "" (no dtype) is not "b"
            raise FuncgradTypeError(
                f"{name} needs a float (or complex) output, but output leaf {k} has dtype "
                f"{_dtype_name(x)}: a boolean or integer result (a comparison, fnp.argmax, "
                f"a count) is not differentiable; fg.vjp of it gives zero cotangents"
            )
        if holomorphic and kind != "c" and kind in "fiub":
            dtype = _dtype_name(x)
            raise FuncgradTypeError(
                f"{name} with holomorphic=True needs complex {what}, but {what[:-1]} leaf {k} "
                f"has dtype {dtype} (cast it to complex, or drop holomorphic=True)"
            )
        if not holomorphic and kind == "c":
            dtype = _dtype_name(x)
            raise FuncgradTypeError(
                f"{name} needs real {what}, but {what[:-1]} leaf {k} has dtype "
                f"{dtype}: for the complex derivative f'(z) of a holomorphic "
                f"function pass holomorphic=True; for a non-holomorphic one, differentiate a "
                f"real function of it (fnp.real, fnp.abs ...) or use fg.vjp / fg.jvp directly"
            )


def is_data(leaf: Any) -> bool:
    """Integer or boolean data (labels, indices, counts): never a graph input."""
    if type(leaf) is Node:
        return False
    if isinstance(leaf, (bool, int)):
        return True
    dtype = getattr(leaf, "dtype", None)
    return dtype is not None and numpy.dtype(dtype).kind in "biu"


def scalar_seed(v: Any, name: str, holomorphic: bool = False) -> Any:
    """Ones like the raw scalar output ``v`` of ``name`` (of size 1, real unless
    ``holomorphic``); else ``ValueError`` naming the shape, or ``check_complex``'s error."""
    if (type(v) is numpy.ndarray or type(v) is numpy.float64) and v.size == 1 and (
            v.dtype.kind == "f" and not holomorphic):  # (float64: a ufunc's 0-d result)
        unit = UNIT_SEEDS.get(v.dtype) if v.shape == () else None
        return numpy.ones(v.shape, v.dtype) if unit is None else unit
    check_complex(name, [v], holomorphic, "outputs")
    if isinstance(v, complex):  # a constant function (complex: holomorphic=True)
        v = numpy.asarray(v)
    elif isinstance(v, (int, float)) or type(v) in WEAK_TYPES:  # a constant function
        v = float_array(v, name)
    if getattr(v, "size", None) != 1:
        shape = getattr(v, "shape", type(v).__name__)
        raise FuncgradValueError(f"{name} needs a scalar (size-1) output, got shape {shape}")
    return namespace(v).ones(v.shape, v.dtype)
