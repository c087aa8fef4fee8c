"""Comparisons and other data-only functions: plain arrays out, no gradient (layer 4).

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fnp.less(fg.require_grad(numpy.array([1.0, 3.0])), 2.0)
array([ True, False])
"""

from __future__ import annotations

from typing import Any

from ..errors import FuncgradTypeError
from ..translation import guarded
from ._core import raw, xp_of


def data_only(name: str, arity: int):
    """A function of the values of at most ``arity`` arguments: NumPy's ``name``, no gradient."""
    # At most ``arity`` positional arguments and no ``out=``: NumPy would write its
    # result into a further one, and funcgrad never writes into its caller's arrays.
    def fun(*args: Any, **kwargs: Any) -> Any:
        if len(args) > arity or "out" in kwargs:
            raise FuncgradTypeError(
                f"{name} takes at most {arity} positional argument"
                f"{'s' if arity > 1 else ''} and no out= (results are new arrays), got "
                f"{len(args)} positional and keywords {sorted(kwargs)}"
            )
        vals = [raw(a) for a in args]
        return getattr(xp_of(*vals), name)(*vals, **kwargs)

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = f"``numpy.{name}`` on the values of its arguments (no gradient)."
    return guarded(fun, name)


equal = data_only("equal", 2)
not_equal = data_only("not_equal", 2)
less = data_only("less", 2)
less_equal = data_only("less_equal", 2)
greater = data_only("greater", 2)
greater_equal = data_only("greater_equal", 2)
isfinite = data_only("isfinite", 1)
isnan = data_only("isnan", 1)
isinf = data_only("isinf", 1)
argmax = data_only("argmax", 2)
argmin = data_only("argmin", 2)
sign = data_only("sign", 1)

# Each function's own docstring (help(), Jupyter and the reference read them): what
# it computes on the values, and an example on a traced value.
_DOCS = [
    (equal, "``x1 == x2``, elementwise (``==`` on Nodes compares identity)",
     "fnp.equal(fg.require_grad(numpy.array([1.0, 2.0])), 2.0)", "array([False,  True])"),
    (not_equal, "``x1 != x2``, elementwise (``!=`` on Nodes compares identity)",
     "fnp.not_equal(fg.require_grad(numpy.array([1.0, 2.0])), 2.0)", "array([ True, False])"),
    (less, "``x1 < x2``, elementwise", "fnp.less(fg.require_grad(numpy.array([1.0, 3.0])), 2.0)",
     "array([ True, False])"),
    (less_equal, "``x1 <= x2``, elementwise",
     "fnp.less_equal(fg.require_grad(numpy.array([1.0, 2.0])), 1.0)", "array([ True, False])"),
    (greater, "``x1 > x2``, elementwise",
     "fnp.greater(fg.require_grad(numpy.array([1.0, 3.0])), 2.0)", "array([False,  True])"),
    (greater_equal, "``x1 >= x2``, elementwise",
     "fnp.greater_equal(fg.require_grad(numpy.array([1.0, 2.0])), 2.0)",
     "array([False,  True])"),
    (isfinite, "whether each element is finite (not infinite, not NaN)",
     "fnp.isfinite(numpy.array([1.0, numpy.inf, numpy.nan]))", "array([ True, False, False])"),
    (isnan, "whether each element is NaN",
     "fnp.isnan(numpy.array([1.0, numpy.inf, numpy.nan]))", "array([False, False,  True])"),
    (isinf, "whether each element is infinite",
     "fnp.isinf(numpy.array([1.0, -numpy.inf, numpy.nan]))", "array([False,  True, False])"),
    (argmax, "the index of the largest element (over ``axis``, or of the flattened array)",
     "fnp.argmax(fg.require_grad(numpy.array([[1.0, 5.0], [4.0, 2.0]])), axis=1)",
     "array([1, 0])"),
    (argmin, "the index of the smallest element (over ``axis``, or of the flattened array)",
     "fnp.argmin(fg.require_grad(numpy.array([3.0, -1.0, 2.0])))", "np.int64(1)"),
    (sign, "-1, 0 or 1 by the sign of each element; as data its derivative is zero",
     "fnp.sign(fg.require_grad(numpy.array([-2.0, 0.0, 3.0])))", "array([-1.,  0.,  1.])"),
]


def document_data(rows: list) -> None:
    """Give data-only functions their docstrings; a row: the function, what it computes
    on the values, an example call on a traced value and the example's output."""
    for fun, what, call, out in rows:
        fun.__doc__ = (
            f"``numpy.{fun.__name__}`` on the values of its arguments: {what}.\n\n"
            "The result is plain data, never a Node: no gradient flows through it.\n\n"
            ">>> import numpy, funcgrad as fg, funcgrad.numpy as fnp\n"
            f">>> {call}\n{out}\n"
        )


document_data(_DOCS)
del _DOCS


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
    >>> bool(fnp.any(fg.require_grad(numpy.array([0.0, 2.0]))))
    True
    """
    v = raw(a)
    return xp_of(v).any(v, axis=axis, keepdims=keepdims)
