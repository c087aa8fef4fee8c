"""Where funcgrad.scipy's raw functions run: SciPy's, CuPy's, or the host's (layer 7).

A raw SciPy function (``scipy.special.gammaln``...) runs in the namespace of
its arguments: NumPy data in SciPy itself, CuPy arrays in ``cupyx.scipy``
where CuPy has the function, Dask arrays lazily (SciPy's ufuncs map over
their chunks).  Arrays of any other registered namespace -- and CuPy arrays
for a function ``cupyx.scipy`` lacks -- are copied to the host, computed
there and copied back (``fg.to_device``): right, if slower.  A namespace
with a module of its own registers it with :func:`register`.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy

from ..backend import device_of, is_lazy, namespace, to_device
from ..numpy._core import index_data

# (namespace, submodule) -> module of raw functions for that namespace's arrays
_REGISTERED: dict[tuple[int, str], Any] = {}


def register(xp: Any, submodule: str, module: Any) -> None:
    """Make ``module``'s functions compute ``scipy.<submodule>``'s for arrays of ``xp``."""
    _REGISTERED[(id(xp), submodule)] = module


def unregister(xp: Any, submodule: str) -> None:
    """Undo :func:`register`."""
    _REGISTERED.pop((id(xp), submodule), None)


def scipy_module(submodule: str) -> Any:
    """``scipy.<submodule>`` (imported on first use)."""
    return importlib.import_module(f"scipy.{submodule}")


def _cupy_module(xp: Any, submodule: str) -> Any:
    if getattr(xp, "__name__", "") != "cupy":
        return None
    try:
        return importlib.import_module(f"cupyx.scipy.{submodule}")
    except ImportError:
        return None


def _arrays(args: tuple) -> list:
    return [a for a in args if hasattr(a, "shape") and not isinstance(a, numpy.generic)]


def call(submodule: str, name: str, args: tuple, kwargs: dict | None = None) -> Any:
    """``scipy.<submodule>.<name>(*args)`` on the device of ``args``."""
    kwargs = kwargs or {}
    xp = namespace(*args)
    if xp is numpy:
        return getattr(scipy_module(submodule), name)(*args, **kwargs)
    module = _REGISTERED.get((id(xp), submodule)) or _cupy_module(xp, submodule)
    fun = getattr(module, name, None) if module is not None else None
    if fun is not None:
        return fun(*args, **kwargs)
    return on_host(getattr(scipy_module(submodule), name), args, kwargs)


def on_host(reference: Any, args: tuple, kwargs: dict | None = None) -> Any:
    """``reference(*args)``, a NumPy function, for arguments of any namespace: lazily mapped
    over Dask chunks, or on the host and back for any other device."""
    kwargs = kwargs or {}
    xp = namespace(*args)
    if xp is numpy:
        return reference(*args, **kwargs)
    if is_lazy(xp):
        return _lazily(xp, reference, args, kwargs)
    arrays = {id(a) for a in _arrays(args)}
    if not arrays:
        return reference(*args, **kwargs)
    device = device_of(next(a for a in args if id(a) in arrays))
    host = [to_device(a, "cpu") if id(a) in arrays else a for a in args]
    out = reference(*host, **kwargs)
    if isinstance(out, tuple):  # several results (lu_factor's lu and piv)
        return tuple(to_device(numpy.asarray(o), device) for o in out)
    return to_device(numpy.asarray(out), device)


def _lazily(xp: Any, reference: Any, args: tuple, kwargs: dict) -> Any:
    """``reference`` mapped over the chunks of lazy arrays, computing nothing now."""
    if isinstance(reference, numpy.ufunc):  # Dask maps SciPy's ufuncs itself
        return reference(*args, **kwargs)
    arrays = [xp.asarray(a) for a in args]
    sample = reference(*(numpy.ones((1,), a.dtype) for a in arrays), **kwargs)
    arrays = xp.broadcast_arrays(*arrays)
    return xp.map_blocks(lambda *blocks: reference(*blocks, **kwargs), *arrays,
                         dtype=numpy.asarray(sample).dtype)


def fit(out: Any, args: tuple) -> Any:
    """``out`` in the floating dtype of ``args`` (SciPy computes float16 in float32, and
    some functions, ``polygamma``, in float64)."""
    dt = getattr(out, "dtype", None)
    if dt is None or dt.kind not in "fc":
        return out
    want = None
    for a in args:
        adt = getattr(a, "dtype", None)
        if adt is not None and adt.kind in "fc":
            want = adt if want is None else numpy.promote_types(want, adt)
    if want is not None and want != dt and want.kind == dt.kind and want.itemsize < dt.itemsize:
        return out.astype(want)
    return out


def index_like(index: numpy.ndarray, x: Any) -> Any:
    """Integer index data ``index`` (NumPy) on the device of ``x`` (an array or Node)."""
    return index_data(index, x)
