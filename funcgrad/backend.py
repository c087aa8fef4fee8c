"""Array namespaces and devices (layer 1).

Every primitive runs in the namespace of its inputs: NumPy for CPU arrays,
CuPy for GPU arrays.  This module is the one place that knows array types; a
new array library is added by one :func:`register_namespace` call.

>>> import numpy
>>> namespace(numpy.ones(3)) is numpy
True
>>> device_of(numpy.ones(3))
'cpu'
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy

from .errors import DeviceMismatchError, FuncgradValueError

# type -> (namespace, device function)
_REGISTRY: dict[type, tuple[ModuleType, Any]] = {}


def _cpu(_: Any) -> str:
    return "cpu"


def register_namespace(array_type: type, xp: ModuleType, device=_cpu) -> None:
    """Make ``array_type`` dispatch to the array namespace ``xp``."""
    _REGISTRY[array_type] = (xp, device)


register_namespace(numpy.ndarray, numpy)

try:  # CuPy is optional: pip install funcgrad[cuda]
    import cupy  # type: ignore[import-not-found]

    register_namespace(cupy.ndarray, cupy, lambda a: f"cuda:{a.device.id}")
except Exception:  # noqa: BLE001  (ImportError, or a CuPy without a usable CUDA runtime)
    cupy = None


def _lookup(x: Any) -> tuple[ModuleType, Any] | None:
    entry = _REGISTRY.get(type(x))
    if entry is None and isinstance(x, numpy.generic):
        entry = _REGISTRY[numpy.ndarray]  # NumPy scalars (numpy.float64...)
    return entry


# Values that say nothing about the namespace: Python numbers, None, and the
# shapes, axes, indices and names that primitives take as data.
_NEUTRAL = frozenset(
    {int, float, bool, type(None), tuple, list, str, slice, type(Ellipsis), numpy.dtype}
)
# Types that mean NumPy: arrays and NumPy scalars (what ufuncs return for 0-d).
_NUMPY = frozenset(
    {numpy.ndarray} | {t for t in numpy.sctypeDict.values() if issubclass(t, numpy.generic)}
)
NUMPY_TYPES = _NEUTRAL | _NUMPY  # everything that computes in NumPy


def namespace(*values: Any) -> ModuleType:
    """The array namespace shared by ``values`` (NumPy when none is an array).

    Python scalars and None are neutral; arrays on two devices raise
    :class:`~funcgrad.DeviceMismatchError` naming both.
    """
    for v in values:  # fast path: NumPy arrays and plain numbers only
        if type(v) not in NUMPY_TYPES:
            return _namespace_of_mixed(values)
    return numpy


def _namespace_of_mixed(values: tuple) -> ModuleType:
    found = None
    first = None
    for v in values:
        if type(v) in _NEUTRAL:
            continue
        entry = _lookup(v)
        if entry is None:
            continue
        if found is None:
            found, first = entry, v
        elif entry is not found or (found[0] is not numpy and device_of(v) != device_of(first)):
            raise DeviceMismatchError(
                f"inputs on different devices: {device_of(first)} and {device_of(v)}"
            )
    return numpy if found is None else found[0]


def device_of(x: Any) -> str:
    """``'cpu'`` or ``'cuda:N'``: where the raw array ``x`` lives."""
    entry = _lookup(x)
    return "cpu" if entry is None else entry[1](x)


def to_device(x: Any, device: str) -> Any:
    """A copy of the raw array ``x`` on ``device`` (``'cpu'`` or ``'cuda:N'``)."""
    if device == "cpu":
        if cupy is not None and isinstance(x, cupy.ndarray):
            return cupy.asnumpy(x)
        return numpy.asarray(x)
    if device.startswith("cuda"):
        if cupy is None:
            raise FuncgradValueError(f"device {device!r} needs CuPy and a GPU")
        index = int(device.partition(":")[2] or 0)
        with cupy.cuda.Device(index):
            return cupy.asarray(x)
    raise FuncgradValueError(f"unknown device {device!r}; expected 'cpu' or 'cuda:N'")


def is_float_dtype(dtype: Any) -> bool:
    """Whether ``dtype`` is a real floating dtype (the differentiable ones)."""
    return numpy.dtype(dtype).kind == "f"
