"""Comparisons and other data-only functions: plain arrays out, no gradient (layer 4).

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fnp.less(fg.require_grad(numpy.array([1.0, 3.0])), 2.0)
array([ True, False])
"""

from __future__ import annotations

from typing import Any

from ._core import raw, xp_of


def _data_only(name: str):
    def fun(*args: Any, **kwargs: Any) -> Any:
        vals = [raw(a) for a in args]
        return getattr(xp_of(*vals), name)(*vals, **kwargs)

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = f"``numpy.{name}`` on the values of its arguments (no gradient)."
    return fun


equal = _data_only("equal")
not_equal = _data_only("not_equal")
less = _data_only("less")
less_equal = _data_only("less_equal")
greater = _data_only("greater")
greater_equal = _data_only("greater_equal")
isfinite = _data_only("isfinite")
isnan = _data_only("isnan")
isinf = _data_only("isinf")
argmax = _data_only("argmax")
argmin = _data_only("argmin")
sign = _data_only("sign")


def all(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.all``: whether every element (over ``axis``) is true; plain data.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.all(fg.require_grad(numpy.array([[1.0, 0.0], [2.0, 3.0]])) > 0, axis=1)
    array([False,  True])
    """
    v = raw(a)
    return xp_of(v).all(v, axis=axis, keepdims=keepdims)


def any(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.any``: whether some element (over ``axis``) is true; plain data.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.any(fg.require_grad(numpy.array([0.0, 2.0])))
    np.True_
    """
    v = raw(a)
    return xp_of(v).any(v, axis=axis, keepdims=keepdims)
