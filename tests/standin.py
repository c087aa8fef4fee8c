"""A strict stand-in device, so that CI walks the paths of a GPU without one.

``StrictArray`` wraps a NumPy array the way a CuPy array wraps device memory,
and its namespace ``xp`` (registered with funcgrad like CuPy) computes with
NumPy underneath.  It is stricter than CuPy on purpose:

- it refuses funcgrad Nodes anywhere in the arguments of any function or
  operator (a Node leaking into raw code is a bug in funcgrad),
- it refuses plain NumPy arrays (0-d ones too) beside its own arrays (mixing
  devices), in functions, operators and assignments -- index arrays in
  ``x[i] = v`` included, which funcgrad must move to the device itself,
- it refuses Python lists and tuples of floats used as arrays (CuPy's
  functions take only its arrays), except where data is copied to the
  device: ``xp.asarray``, ``xp.array``,
- it has no ``__array__``: NumPy cannot silently convert it, and NumPy
  functions given one fail instead of quietly computing on the host,
- results are always StrictArrays (never NumPy scalars), as CuPy's are.

Python numbers, NumPy scalars and dtypes pass, as they do in CuPy, and so do
integer and boolean NumPy arrays as indices in ``x[i]`` (CuPy takes those
too, and user code writes them).  Copies to and from the host are explicit:
``fg.to_device(x, 'cpu')``, ``.get()``, ``xp.asarray(numpy_array)``,
``standin.put(numpy_array)``.

Use :func:`registered` (a context manager) or the ``standin`` fixture of
``conftest.py``; ``put`` and ``get`` move data.
"""

from __future__ import annotations

import contextlib
import operator
import types

import numpy as np

from funcgrad import backend
from funcgrad.node import Node

DEVICE = "strict:0"


class StrictnessError(TypeError):
    """The stand-in device saw a Node or a NumPy array where a device array belongs."""


def _unwrap(obj, where, data=False, inside=False):
    """``obj`` with StrictArrays opened, refusing Nodes and NumPy arrays (recursively), and
    Python floats inside lists and tuples -- sequences of numbers as arrays, which CuPy
    takes only where data is copied to the device (``data``)."""
    t = type(obj)
    if t is StrictArray:
        return obj._a
    if t is Node:
        raise StrictnessError(f"{where}: a funcgrad Node reached raw array code")
    if t is np.ndarray or isinstance(obj, np.ndarray):
        raise StrictnessError(f"{where}: a NumPy array (host memory) was mixed with {DEVICE} "
                              f"arrays (shape {obj.shape}, dtype {obj.dtype})")
    if t is list or t is tuple:
        return t(_unwrap(o, where, data, True) for o in obj)
    if t is dict:
        return {k: _unwrap(v, where, data) for k, v in obj.items()}
    if t is float and inside and not data:
        raise StrictnessError(f"{where}: a Python sequence of numbers used as an array; "
                              f"make it one on {DEVICE} first (xp.asarray)")
    return obj


def _unwrap_args(args, where):
    return tuple(_unwrap(a, where) for a in args)


def _host_indices(index):
    """Integer and boolean NumPy index arrays, which CuPy takes too, as device arrays."""
    if isinstance(index, tuple):
        return tuple(_host_indices(i) for i in index)
    if isinstance(index, np.ndarray) and index.dtype.kind in "iub":
        return StrictArray(index)
    return index


def _wrap(obj):
    """NumPy results as StrictArrays (scalars as 0-d arrays, as CuPy returns them)."""
    if isinstance(obj, np.ndarray):
        return StrictArray(obj)
    if isinstance(obj, np.generic) and not isinstance(obj, (np.str_, np.bytes_)):
        return StrictArray(np.asarray(obj))
    if type(obj) is tuple or type(obj) is list:
        return type(obj)(_wrap(o) for o in obj)
    if hasattr(obj, "_fields") and isinstance(obj, tuple):  # NumPy's named results (eigh...)
        return type(obj)(*(_wrap(o) for o in obj))
    return obj


class StrictArray:
    """A NumPy array on the stand-in device: no implicit conversion, no mixing."""

    __slots__ = ("_a",)
    __array_ufunc__ = None  # NumPy refuses to compute with it (binops defer to us)

    def __init__(self, a):
        if not isinstance(a, np.ndarray):
            raise TypeError(f"StrictArray wraps NumPy arrays, got {type(a).__name__}")
        self._a = a

    def __array__(self, *args, **kwargs):
        raise StrictnessError(f"implicit conversion of a {DEVICE} array to NumPy: use .get()")

    # -- attributes --------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)
    T = property(lambda self: StrictArray(self._a.T))

    @property
    def device(self):
        return DEVICE

    def get(self):
        """A NumPy copy on the host (CuPy's name for it)."""
        return self._a.copy()

    def __repr__(self):
        return f"StrictArray({self._a!r})"

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (StrictArray(np.asarray(v)) for v in self._a)

    def __bool__(self):
        return bool(self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __index__(self):
        return operator.index(self._a)

    def __getitem__(self, index):
        return _wrap(self._a[_unwrap(_host_indices(index), "indexing a StrictArray")])

    def __setitem__(self, index, value):
        self._a[_unwrap(index, "indexing a StrictArray")] = _unwrap(value, "assigning into a StrictArray")

    def __copy__(self):
        return StrictArray(self._a.copy())

    def __deepcopy__(self, memo):
        return StrictArray(self._a.copy())

    def __reduce__(self):
        return (StrictArray, (self._a,))


def _method(name):
    def method(self, *args, **kwargs):
        out = getattr(self._a, name)(*_unwrap_args(args, f"StrictArray.{name}"),
                                     **_unwrap(kwargs, f"StrictArray.{name}"))
        return _wrap(out)

    method.__name__ = name
    return method


for _name in ["astype", "reshape", "transpose", "sum", "mean", "max", "min", "prod", "any",
              "all", "argmax", "argmin", "cumsum", "cumprod", "ravel", "flatten", "copy",
              "squeeze", "swapaxes", "clip", "dot", "item", "tolist", "fill", "nonzero",
              "std", "var", "round", "conj", "diagonal", "trace", "view", "sort", "argsort",
              "repeat", "take"]:
    setattr(StrictArray, _name, _method(_name))


def _defers_to(other):
    """Whether ``other`` outranks a device array in an operator, as CuPy decides: by a
    higher ``__array_priority__`` (fg.vmap's batched values)."""
    priority = getattr(other, "__array_priority__", 0)
    return isinstance(priority, (int, float)) and priority > 100


def _binary(name, reflected=False):
    op = getattr(operator, name)

    def method(self, other):
        if type(other) is Node or _defers_to(other):  # let the Node's operator record it
            return NotImplemented
        other = _unwrap(other, f"StrictArray.__{name}__")
        return _wrap(op(other, self._a) if reflected else op(self._a, other))

    return method


for _name in ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_",
              "xor", "lt", "le", "gt", "ge", "eq", "ne", "lshift", "rshift"]:
    dunder = _name.rstrip("_")
    setattr(StrictArray, f"__{dunder}__", _binary(_name))
    if _name not in ("lt", "le", "gt", "ge", "eq", "ne"):
        setattr(StrictArray, f"__r{dunder}__", _binary(_name, reflected=True))


def _unary(op):
    return lambda self: _wrap(op(self._a))


for _name in ["neg", "pos", "abs", "invert"]:
    setattr(StrictArray, f"__{_name}__", _unary(getattr(operator, _name)))
StrictArray.__hash__ = None  # arrays are unhashable, as NumPy's and CuPy's are


def _in_place(name):
    op = getattr(operator, f"i{name}")

    def method(self, other):
        if type(other) is Node or _defers_to(other):
            return NotImplemented
        self._a = op(self._a, _unwrap(other, f"StrictArray.__i{name}__"))
        return self

    return method


for _name in ["add", "sub", "mul", "truediv", "and", "or"]:
    setattr(StrictArray, f"__i{_name}__", _in_place(_name))


class _Namespace(types.SimpleNamespace):
    """NumPy's functions, over StrictArrays only; its ``linalg`` likewise."""

    def __init__(self, source, name):
        super().__init__()
        object.__setattr__(self, "_source", source)
        object.__setattr__(self, "__name__", name)
        self.calls = []

    def __getattr__(self, name):
        value = getattr(self._source, name)
        if isinstance(value, types.ModuleType):
            sub = _Namespace(value, f"{self.__name__}.{name}")
            sub.calls = self.calls
            object.__setattr__(self, name, sub)
            return sub
        if isinstance(value, type) or not callable(value):
            return value  # dtypes, constants (float32, pi, inf, newaxis...)

        def call(*args, **kwargs):
            self.calls.append(name)
            where = f"{self.__name__}.{name}"
            if name in _TRANSFERS and args:  # an explicit copy to the device, as CuPy's
                first = args[0]
                first = first.copy() if isinstance(first, np.ndarray) else _unwrap(
                    first, where, data=True)
                args = (first,) + _unwrap_args(args[1:], where)
            else:
                args = _unwrap_args(args, where)
            return _wrap(value(*args, **_unwrap(kwargs, where)))

        call.__name__ = name
        object.__setattr__(self, name, call)  # found directly from now on
        return call


# ``xp.asarray(numpy_array)`` is how data moves to the device (as in CuPy): allowed.
_TRANSFERS = frozenset({"asarray", "array", "asanyarray"})

xp = _Namespace(np, "standin")


def _from_host(host, device):
    if device != DEVICE:
        raise ValueError(f"the stand-in has one device, {DEVICE}; got {device!r}")
    return StrictArray(np.array(host))


def put(a, dtype=None):
    """A copy of ``a`` (a NumPy array or number) on the stand-in device."""
    return StrictArray(np.array(a, dtype=dtype))


def get(a):
    """A NumPy copy of ``a`` (a StrictArray; NumPy data passes through)."""
    return a.get() if type(a) is StrictArray else np.asarray(a)


def register():
    xp.calls.clear()
    backend.register_namespace(StrictArray, xp, lambda a: DEVICE, device_prefix="strict",
                               to_host=get, from_host=_from_host)


def unregister():
    backend.unregister_namespace(StrictArray)


@contextlib.contextmanager
def registered():
    """The stand-in device, registered with funcgrad inside the block."""
    register()
    try:
        yield xp
    finally:
        unregister()
