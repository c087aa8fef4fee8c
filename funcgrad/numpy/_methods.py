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

import sys
from numbers import Number
from types import FunctionType

import numpy

from ..errors import FuncgradTypeError, NodeConversionError
from ..node import Node, conversion_error
from ..translation import guarded
from . import elementwise as _e
from . import more as _more
from . import products as _p
from . import reductions as _r
from . import shape as _s
from .comparison import equal, greater, greater_equal, less, less_equal, not_equal


def _array(self, dtype=None, copy=None):
    raise conversion_error(self, "a NumPy array")


# ``numpy_array + node`` reaches Node.__array_ufunc__ as ``numpy.add(array, node)``:
# the ufuncs behind Python's operators compute with their fnp twins; any other
# NumPy function called on a Node is the commonest mistake, and says what to use.
def _operator_ufuncs() -> dict:
    return {
        "add": _e.add, "subtract": _e.subtract, "multiply": _e.multiply,
        "divide": _e.divide, "true_divide": _e.divide, "power": _e.power,
        "matmul": _p.matmul, "negative": _e.negative, "absolute": _e.absolute,
        "less": less, "less_equal": less_equal, "greater": greater,
        "greater_equal": greater_equal, "equal": equal, "not_equal": not_equal,
        "remainder": _more.remainder, "floor_divide": _more.floor_divide,
        "divmod": lambda x, y: (_more.floor_divide(x, y), _more.remainder(x, y)),
    }


OPERATOR_UFUNCS = _operator_ufuncs()


_FNP: list = [{}]  # funcgrad.numpy's namespace (its globals), handed over by install()


def _fnp_name(name: str) -> str:
    fnp = _FNP[0]
    linalg = getattr(fnp.get("linalg"), "__dict__", {})
    for space, prefix in ((fnp, "fnp."), (linalg, "fnp.linalg.")):
        if callable(space.get(name)):
            return f"{prefix}{name}"
    return ""


def _numpy_call_error(what: str, name: str) -> NodeConversionError:
    use = _fnp_name(name)
    hint = (f"use {use}(...) instead, which is differentiable" if use else
            f"funcgrad.numpy has no {name!r}: compose it from fnp functions, make it a "
            "primitive with fg.primitive and fg.defvjp, or read the value with fg.value_of(x) "
            "(no gradient flows through it)")
    return NodeConversionError(
        f"{what} was called on a funcgrad Node inside a differentiated function: {hint}"
    )


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    name = ufunc.__name__
    op = OPERATOR_UFUNCS.get(name)
    if op is not None and method == "__call__" and not kwargs:
        return op(*inputs)
    if name in ("equal", "not_equal") and method == "__call__":
        raise NodeConversionError(
            f"numpy.{name} (or ==, != with a NumPy array on the left) was called on a "
            f"funcgrad Node: == and != between Nodes compare identity; for elementwise "
            f"comparison use fnp.{name}(a, b)"
        )
    home = _ufunc_home(ufunc)
    what = f"{home}.{name}" if method == "__call__" else f"{home}.{name}.{method}"
    if home != "numpy":
        raise _scipy_call_error(what, name)
    raise _numpy_call_error(what, name)


def _ufunc_home(ufunc) -> str:
    """Where a ufunc lives, for messages: ``numpy``, ``scipy.special``, or its own name."""
    name = ufunc.__name__
    if getattr(numpy, name, None) is ufunc:
        return "numpy"
    special = sys.modules.get("scipy.special")  # a SciPy ufunc was imported from there
    if special is not None and getattr(special, name, None) is ufunc:
        return "scipy.special"
    return "the ufunc"


# SciPy special functions that fg.nn already has, under its own names.
_NN_TWINS = {"expit": "fg.nn.sigmoid(x)", "log_expit": "-fg.nn.softplus(-x)"}


def _scipy_call_error(what: str, name: str) -> NodeConversionError:
    twin = _NN_TWINS.get(name)
    special = f"funcgrad.scipy.special.{name}"
    hint = (f"use {twin} (or {special}) instead, which is differentiable" if twin else
            f"use {special}(...) where funcgrad has it (funcgrad.scipy.special: SciPy's "
            f"special functions, differentiable), compose it from fnp functions, or make it "
            f"a primitive with fg.primitive and fg.defvjp")
    return NodeConversionError(
        f"{what} was called on a funcgrad Node inside a differentiated function: {hint}"
    )


# NumPy functions that read only a Node's metadata, never its numbers: allowed.
_METADATA = {numpy.shape, numpy.ndim, numpy.size, numpy.result_type, numpy.iscomplexobj,
             numpy.isrealobj}


def _metadata_args(obj):
    if type(obj) is Node:
        return obj.value
    if type(obj) in (list, tuple):
        return type(obj)(_metadata_args(o) for o in obj)
    return obj


def _array_function(self, func, types, args, kwargs):
    if func in _METADATA:
        return func(*_metadata_args(args), **kwargs)
    module = getattr(func, "__module__", "numpy") or "numpy"
    module = "numpy" if module.startswith("numpy") and ".linalg" not in module else module
    return _raise(_numpy_call_error(f"{module}.{func.__name__}", func.__name__))


def _raise(exc):
    raise exc


def _setitem(self, index, value):
    raise FuncgradTypeError(
        "funcgrad Nodes are immutable: x[i] = v is not allowed inside a differentiated "
        "function; write x = x.at[i].set(v) (or x.at[i].add(v)), which is differentiable "
        "in both x and v"
    )


def _item(self, *args):
    raise conversion_error(self, "a Python number (.item())")


def _tolist(self):
    raise conversion_error(self, "a Python list (.tolist())")


class _At:
    """``x.at[index]``: functional updates, as JAX writes them (see :func:`index_update`)."""

    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, index):
        return _AtIndex(self.x, index)


class _AtIndex:
    __slots__ = ("index", "x")

    def __init__(self, x, index):
        self.x, self.index = x, index

    def set(self, v):
        """A copy of ``x`` with ``x[index] = v``: differentiable in ``x`` and ``v``."""
        return _s.index_update(self.x, self.index, v)

    def add(self, v):
        """A copy of ``x`` with ``v`` added at ``index`` (repeated indices accumulate)."""
        return _s.index_update(self.x, self.index, v, add=True)

    def get(self):
        """``x[index]``."""
        return _s.getitem(self.x, self.index)

    def __repr__(self):
        return f"<x.at[{self.index!r}]: .set(v), .add(v), .get()>"


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
    # NumPy meets a Node: operators with a NumPy array on the left compute,
    # NumPy functions and conversions raise NodeConversionError naming fnp's.
    "__array_ufunc__": _array_ufunc,
    "__array_function__": _array_function,
    "__array_priority__": 1000,
    "__array__": _array,
    "__iter__": _iter,
    "__setitem__": _setitem,
    "item": _item,
    "tolist": _tolist,
    "at": property(_At, doc="Functional updates: ``x.at[i].set(v)``, ``x.at[i].add(v)``."),
    # Python operators
    "__add__": lambda self, other: _e.add(self, other),
    "__radd__": lambda self, other: _e.add(other, self),
    "__sub__": lambda self, other: _e.subtract(self, other),
    "__rsub__": lambda self, other: _e.subtract(other, self),
    "__mul__": lambda self, other: _e.multiply(self, other),
    "__rmul__": lambda self, other: _e.multiply(other, self),
    "__truediv__": lambda self, other: _e.divide(self, other),
    "__rtruediv__": lambda self, other: _e.divide(other, self),
    "__mod__": lambda self, other: _more.remainder(self, other),
    "__rmod__": lambda self, other: _more.remainder(other, self),
    "__floordiv__": lambda self, other: _more.floor_divide(self, other),
    "__rfloordiv__": lambda self, other: _more.floor_divide(other, self),
    "__divmod__": lambda self, other: (_more.floor_divide(self, other),
                                       _more.remainder(self, other)),
    "__rdivmod__": lambda self, other: (_more.floor_divide(other, self),
                                        _more.remainder(other, self)),
    "__pow__": lambda self, other: _e.power(self, other),
    "__rpow__": lambda self, other: _e.power(other, self),
    "__matmul__": lambda self, other: _p.matmul(self, other),
    "__rmatmul__": lambda self, other: _p.matmul(other, self),
    "__neg__": lambda self: _e.negative(self),
    "__pos__": lambda self: self,
    "__abs__": lambda self: _e.absolute(self),
    "__getitem__": lambda self, index: _s.getitem(self, index),
    # Comparisons give plain boolean arrays (no gradient), == and != too, as in
    # NumPy; hash stays identity (see funcgrad.backprop_utils.GradientMap).
    "__eq__": lambda self, other: _compare(equal, self, other),
    "__ne__": lambda self, other: _compare(not_equal, self, other),
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
    # complex parts, as NumPy's arrays have them
    "real": property(lambda self: _e.real(self), doc="The real part (``fnp.real``)."),
    "imag": property(lambda self: _e.imag(self), doc="The imaginary part (``fnp.imag``)."),
    "conj": lambda self: _e.conjugate(self),
    "conjugate": lambda self: _e.conjugate(self),
}


def install(namespace: dict) -> None:
    """Give :class:`Node` its operators and methods (once, at import of ``funcgrad.numpy``,
    whose ``namespace`` the error messages search for the functions to use instead)."""
    _FNP[0] = namespace
    for name, value in METHODS.items():
        if isinstance(value, FunctionType) and (not name.startswith("__") or name in _GUARDED):
            value = guarded(value, f"Node.{name}")  # only documented errors, as fnp's
        setattr(Node, name, value)


# Dunders whose work is not one primitive (those translate their own errors).
_GUARDED = {"__getitem__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"}


def _comparable(other) -> bool:
    """Whether NumPy would compare a Node's value with ``other`` elementwise."""
    if isinstance(other, (Node, Number, numpy.generic, list, tuple)):
        return True
    return hasattr(other, "shape") and hasattr(other, "dtype")  # arrays of any device


def _compare(fun, self, other):
    # None, strings and other objects NumPy would not compare: Python's identity
    # fallback (x == None is False, x != None True), never an error.
    return fun(self, other) if _comparable(other) else NotImplemented
