"""Node's NumPy face: operators, methods and NumPy-protocol hooks (layer 4).

A :class:`~funcgrad.node.Node` knows nothing of arithmetic by itself (layer
2 cannot reach the primitives of layer 4).  When ``funcgrad.numpy`` is
imported, this module gives the class its Python operators (``+ - * / ** @``,
comparisons, indexing), its NumPy-style methods (``.sum()``, ``.reshape()``,
``.T``...) and the hooks through which NumPy meets it, as autograd's
``numpy_boxes`` does for its boxes.

>>> import numpy, funcgrad as fg
>>> x = fg.require_grad(numpy.array([1.0, 2.0]))
>>> (x * x).sum().primitive.name
'sum'
"""

from __future__ import annotations

from ..node import Node, _conversion_error
from . import elementwise as _e
from . import products as _p
from . import reductions as _r
from . import shape as _s
from .comparison import greater, greater_equal, less, less_equal


def _array(self, dtype=None, copy=None):
    raise _conversion_error(self, "a NumPy array")


def _iter(self):
    return (self[i] for i in range(len(self)))


def _reshape(self, *shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return _s.reshape(self, shape)


def _transpose(self, *axes):
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return _s.transpose(self, axes or None)


def _reduction(fun):
    def method(self, axis=None, keepdims=False):
        return fun(self, axis=axis, keepdims=keepdims)

    method.__doc__ = f"``fnp.{fun.name}(x, axis=None, keepdims=False)`` as a method."
    return method


def _moment(fun):
    def method(self, axis=None, ddof=0, keepdims=False):
        return fun(self, axis=axis, ddof=ddof, keepdims=keepdims)

    method.__doc__ = f"``fnp.{fun.__name__}(x, axis=None, ddof=0, keepdims=False)`` as a method."
    return method


METHODS = {
    # NumPy meets a Node: ``numpy_array + node`` defers to ``Node.__radd__``
    # (no __array_ufunc__ at all), and conversions are loud.
    "__array_ufunc__": None,
    "__array_priority__": 1000,
    "__array__": _array,
    "__iter__": _iter,
    # Python operators
    "__add__": lambda self, other: _e.add(self, other),
    "__radd__": lambda self, other: _e.add(other, self),
    "__sub__": lambda self, other: _e.subtract(self, other),
    "__rsub__": lambda self, other: _e.subtract(other, self),
    "__mul__": lambda self, other: _e.multiply(self, other),
    "__rmul__": lambda self, other: _e.multiply(other, self),
    "__truediv__": lambda self, other: _e.divide(self, other),
    "__rtruediv__": lambda self, other: _e.divide(other, self),
    "__pow__": lambda self, other: _e.power(self, other),
    "__rpow__": lambda self, other: _e.power(other, self),
    "__matmul__": lambda self, other: _p.matmul(self, other),
    "__rmatmul__": lambda self, other: _p.matmul(other, self),
    "__neg__": lambda self: _e.negative(self),
    "__pos__": lambda self: self,
    "__abs__": lambda self: _e.absolute(self),
    "__getitem__": lambda self, index: _s.getitem(self, index),
    # Comparisons give plain boolean arrays (no gradient); == and != stay
    # identity so that Nodes can key dicts, sets and pyrsistent maps.
    "__lt__": lambda self, other: less(self, other),
    "__le__": lambda self, other: less_equal(self, other),
    "__gt__": lambda self, other: greater(self, other),
    "__ge__": lambda self, other: greater_equal(self, other),
    # NumPy-style methods
    "T": property(lambda self: _s.transpose(self), doc="The transpose (axes reversed)."),
    "sum": _reduction(_r.sum),
    "mean": _reduction(_r.mean),
    "max": _reduction(_r.amax),
    "min": _reduction(_r.amin),
    "prod": _reduction(_r.prod),
    "var": _moment(_r.var),
    "std": _moment(_r.std),
    "reshape": _reshape,
    "transpose": _transpose,
    "astype": lambda self, dtype: _s.astype(self, dtype),
    "ravel": lambda self: _s.ravel(self),
    "flatten": lambda self: _s.ravel(self),
    "squeeze": lambda self, axis=None: _s.squeeze(self, axis),
    "dot": lambda self, other: _p.dot(self, other),
    "clip": lambda self, a_min=None, a_max=None: _e.clip(self, a_min, a_max),
    "cumsum": lambda self, axis=None: _r.cumsum(self, axis=axis),
}


def install() -> None:
    """Give :class:`Node` its operators and methods (once, at import of ``funcgrad.numpy``)."""
    for name, value in METHODS.items():
        setattr(Node, name, value)
