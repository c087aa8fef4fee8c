"""Other libraries' errors as documented ones (layer 1).

Raised by one of funcgrad's own functions, an error funcgrad does not document
(an index out of range, an object array's missing method...) becomes the
documented error that fits, naming the function and describing its arguments:
the primitives do it in :func:`funcgrad.primitive.failed`, the public
functions that are not primitives through :func:`guarded`.

>>> err = translated("fnp.take", IndexError("index 5 is out of bounds"), ([1, 2], 5), None)
>>> type(err).__name__, str(err)
('FuncgradIndexError', 'fnp.take: index 5 is out of bounds (argument 0: a list of 2 items, argument 1: 5)')
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy

from .errors import (
    FuncgradError,
    FuncgradIndexError,
    FuncgradTypeError,
    FuncgradValueError,
    describe_arguments,
)

# Errors an array library raises that funcgrad does not document (an index out of
# range, a huge Python int, an object array's missing method, nesting too deep, a
# date NumPy cannot read):
# raised by one of funcgrad's own primitives, each becomes the documented error
# that fits, naming the primitive and describing its arguments.  A user
# primitive's errors are the user's own and pass unchanged.
# MemoryError too: a result too large to allocate is a ValueError naming its size.
FOREIGN = (AttributeError, LookupError, ArithmeticError, RuntimeError, MemoryError,
            numpy.ma.MAError)


def translated(name: str, exc: BaseException, args: tuple, kwargs: dict | None) -> Any:
    """The documented error standing for ``exc``, raised by funcgrad's ``name`` called
    with ``args``; None when ``exc`` is documented already."""
    if isinstance(exc, (FuncgradError, FloatingPointError)) or not isinstance(exc, FOREIGN):
        return None
    text = f"{name}: {exc} ({describe_arguments(args, kwargs)})"
    if isinstance(exc, IndexError):
        return FuncgradIndexError(text)
    if isinstance(exc, (AttributeError, KeyError, NotImplementedError)):
        return FuncgradTypeError(text)
    return FuncgradValueError(text)


def documented(name: str, exc: BaseException, args: tuple, kwargs: dict | None) -> None:
    """Raise the documented error standing for ``exc`` (:func:`translated`), else ``exc``."""
    err = translated(name, exc, args, kwargs)
    if err is None:
        raise exc
    raise err from exc


def guarded(fun: Callable, name: str) -> Callable:
    """``fun`` (one of funcgrad's own functions) raising only documented errors.

    The errors of :func:`translated` become documented ones, as primitives'
    do; for the public functions of ``funcgrad.numpy`` and ``funcgrad.nn`` that
    are not primitives themselves.
    """

    @functools.wraps(fun)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fun(*args, **kwargs)
        except FOREIGN as exc:
            documented(name, exc, args, kwargs)

    return call
