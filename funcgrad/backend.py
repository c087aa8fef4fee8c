"""Array namespaces and devices (layer 1).

Every primitive runs in the namespace of its inputs: NumPy for CPU arrays,
CuPy for GPU arrays, Dask for chunked arrays.  This module is the one place
that knows array types: one registry holds, per type, its namespace, its device
and, for arrays that run primitives themselves (fg.replay's, fg.vmap's), its
runner; a new array type is added by one :func:`register_namespace` call.  A
library funcgrad should not import before its arrays show up registers a provider
instead (:func:`register_provider`): ``funcgrad/backends/__init__.py`` does so for
Dask, whose namespace (``backends/dask.py``) is then imported the first time a
Dask array reaches funcgrad, so that ``import funcgrad`` never imports Dask.

>>> import numpy
>>> namespace(numpy.ones(3)) is numpy
True
>>> device_of(numpy.ones(3))
'cpu'
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy

from .errors import DeviceMismatchError, FuncgradTypeError, FuncgradValueError, describe


class Namespace:
    """What a registered array type computes with (see :func:`register_namespace`): its
    namespace and device, and its runner when its arrays run primitives themselves."""

    __slots__ = ("absorbs_numpy", "as_array", "batched", "device", "device_prefix", "from_host",
                 "lazy", "over", "run", "to_host", "weak", "xp")

    def __init__(self, xp, device, absorbs_numpy, device_prefix, to_host, from_host, lazy=False,
                 as_array=None, over=None, run=None, batched=False, weak=False):
        self.xp = xp
        self.device = device
        self.absorbs_numpy = absorbs_numpy
        self.device_prefix = device_prefix
        self.to_host = to_host
        self.from_host = from_host
        self.lazy = lazy
        self.as_array = as_array
        self.over = over  # the namespace this one wraps (vmap's batched values): it wins
        self.run = run  # run(prim, args, kwargs), called instead of the primitive's function
        self.batched = batched  # run is a batching rule (fg.vmap's): asked before the others
        self.weak = weak  # the type stands for a Python number (fg.replay's traced floats)


# The registry: array type -> Namespace.  Written by register_namespace and
# unregister_namespace alone, which keep the three indexes below in step with it.
_REGISTRY: dict[type, Namespace] = {}
# Indexes of the registry for the paths that read them on every call they concern: one
# dict or set lookup by exact type each (never written elsewhere; read, never rebound).
RUNNERS: dict[type, Callable] = {}  # type -> run, for types whose run is not batched
BATCHED: dict[type, Callable] = {}  # type -> run, for batched types (fg.vmap's values)
# Registered types that stand for Python numbers (fg.replay's traced floats): neutral
# beside arrays of another namespace, as a Python number is; their own namespace beside
# NumPy data or alone.
WEAK_TYPES: set[type] = set()


def _index(array_type: type, entry: Namespace | None) -> None:
    """Put ``array_type``'s ``entry`` (None: none) into the registry and its indexes."""
    RUNNERS.pop(array_type, None)
    BATCHED.pop(array_type, None)
    WEAK_TYPES.discard(array_type)
    if entry is None:
        _REGISTRY.pop(array_type, None)
    else:
        _REGISTRY[array_type] = entry
        if entry.run is not None:
            (BATCHED if entry.batched else RUNNERS)[array_type] = entry.run
        if entry.weak:
            WEAK_TYPES.add(array_type)
    lookup.cache_clear()
    _lazy_namespaces.cache_clear()


def _cpu(_: Any) -> str:
    return "cpu"


# top-level package name -> the provider that registers its array types (see
# register_provider): called the first time an unregistered type of it shows up.
_PROVIDERS: dict[str, Callable[[], Any]] = {}


@functools.cache
def lookup(t: type) -> Namespace | None:
    """The namespace of array type ``t``: its own registration, else its nearest base's.

    None for a type no namespace claims.  A type of a package with a provider
    (:func:`register_provider`) that is not registered yet has it called first.

    >>> lookup(numpy.ndarray).xp is numpy, lookup(dict)
    (True, None)
    """
    for base in t.__mro__:
        entry = _REGISTRY.get(base)
        if entry is not None:
            return entry
    if issubclass(t, numpy.generic):  # NumPy scalars (numpy.float64...)
        return _REGISTRY[numpy.ndarray]
    provide = _PROVIDERS.get(t.__module__.partition(".")[0])
    if provide is not None:
        before = len(_REGISTRY)
        provide()
        if len(_REGISTRY) > before:  # it registered something: look again
            return lookup(t)
    return None


def register_provider(package: str, provide: Callable[[], Any]) -> None:
    """Call ``provide()`` the first time an array type of the top-level package
    ``package`` reaches funcgrad unregistered; it registers the package's
    namespaces (:func:`register_namespace`), which funcgrad then uses.

    So a library is imported only once its arrays show up: Dask's namespace
    (``funcgrad/backends/dask.py``) is provided that way.

    >>> Lazy = type('Array', (), {'__module__': 'lazylib.core'})   # a library's array type
    >>> register_provider('lazylib', lambda: register_namespace(Lazy, numpy))
    >>> lookup(Lazy).xp is numpy
    True
    >>> unregister_namespace(Lazy); _ = _PROVIDERS.pop('lazylib')
    """
    _PROVIDERS[package] = provide
    lookup.cache_clear()


def register_namespace(
    array_type: type,
    xp: ModuleType,
    device=_cpu,
    *,
    absorbs_numpy: bool = False,
    device_prefix: str | None = None,
    to_host: Any = None,
    from_host: Any = None,
    lazy: bool = False,
    as_array: Any = None,
    over: Any = None,
    run: Callable | None = None,
    batched: bool = False,
    weak: bool = False,
) -> None:
    """Make ``array_type`` dispatch to the array namespace ``xp``.

    ``device(array)`` names the array's device (``'cpu'`` by default).  A
    namespace that can compute with plain NumPy arrays mixed into its own
    (Dask can) says ``absorbs_numpy=True``; otherwise NumPy arrays beside its
    arrays raise :class:`~funcgrad.DeviceMismatchError` (as CuPy's would).
    For :func:`to_device`: ``to_host(array)`` copies an array to a NumPy
    array, and ``from_host(numpy_array, device)`` copies one to the device
    named ``'<device_prefix>:N'``.

    A ``lazy`` namespace (Dask) builds a graph instead of computing: funcgrad
    then never reads its data into Python (no ``bool()``, ``int()`` or
    ``float()`` of an array) and it must provide, besides NumPy's functions,
    ``index_add(g, index, shape)`` (zeros of ``shape`` with ``g`` added at
    ``index``, repeated indices accumulating: the gradient of indexing) and
    ``checked(x, predicate, error)`` (``x``, raising ``error`` when it is
    computed if ``predicate(chunk)`` is false for a chunk).  A type that wraps
    other arrays (fg.replay's recording arrays) may give ``as_array(x)``, its
    own :func:`as_array`.  A type whose arrays wrap those of the namespace ``over``
    (fg.vmap's batched values) computes beside them in its own namespace.

    A type whose arrays run primitives themselves gives ``run(prim, args, kwargs)``,
    called instead of a primitive's function when an argument is of exactly
    ``array_type`` (fg.replay's traced arrays record the call); ``batched=True`` makes it
    a batching rule, asked before any other runner (fg.vmap's values: their arrays have
    a ``level`` with an ``ordinal``).  A ``weak`` type stands for a Python number
    (fg.replay's traced floats): neutral beside arrays of another namespace, its own
    namespace beside NumPy data or alone.

    >>> class Loud(float): pass
    >>> register_namespace(Loud, numpy, run=lambda prim, args, kwargs: f"{prim.name} ran")
    >>> import funcgrad.numpy as fnp
    >>> lookup(Loud).xp is numpy, fnp.sin(Loud(1.0))
    (True, 'sin ran')
    >>> unregister_namespace(Loud)
    >>> fnp.sin(Loud(0.0))
    np.float64(0.0)
    """
    _index(array_type, Namespace(xp, device, absorbs_numpy, device_prefix, to_host, from_host,
                                 lazy, as_array, over, run, batched, weak))


def register_runner(array_type: type, run: Callable, *, batched: bool = False) -> None:
    """Give the registered ``array_type`` the runner ``run`` (and ``batched``): what
    :func:`register_namespace`'s ``run=`` and ``batched=`` do, later.

    >>> class Loud(float): pass
    >>> register_namespace(Loud, numpy)
    >>> register_runner(Loud, lambda prim, args, kwargs: "ran")
    >>> lookup(Loud).run(None, (), {})
    'ran'
    >>> unregister_namespace(Loud)
    """
    entry = _REGISTRY.get(array_type)
    if entry is None:
        raise FuncgradTypeError(
            f"cannot give {array_type.__qualname__} a runner: it has no namespace; register "
            "both with one register_namespace(array_type, xp, run=...) call"
        )
    entry.run, entry.batched = run, batched
    _index(array_type, entry)


def unregister_namespace(array_type: type) -> None:
    """Undo :func:`register_namespace` (for tests and plug-ins that unload): the type's
    namespace and runner both go."""
    _index(array_type, None)


@functools.cache
def _lazy_namespaces() -> tuple:
    return tuple(e.xp for e in _REGISTRY.values() if e.lazy)


def is_lazy(xp: Any) -> bool:
    """Whether the namespace ``xp`` was registered as lazy (it builds graphs: Dask).

    >>> is_lazy(numpy)
    False
    """
    return xp is not numpy and any(xp is lazy for lazy in _lazy_namespaces())


def absorbs_numpy(xp: Any) -> bool:
    """Whether the namespace ``xp`` takes NumPy data beside its own arrays (Dask does).

    >>> absorbs_numpy(numpy)
    True
    """
    return xp is numpy or any(xp is e.xp and e.absorbs_numpy for e in _REGISTRY.values())


def same_shape(a: tuple, b: tuple) -> bool:
    """Whether shapes ``a`` and ``b`` agree, an unknown length (NaN, in Dask's arrays
    after boolean indexing) agreeing with any other.

    >>> same_shape((2, 3), (2, 3)), same_shape((float("nan"), 3), (5, 3))
    (True, True)
    """
    if a == b:
        return True
    if len(a) != len(b):
        return False
    return all(m == n or _unknown(m) or _unknown(n) for m, n in zip(a, b))


def known_shape(shape: tuple) -> bool:
    """Whether every length of ``shape`` is known (no NaN).

    >>> known_shape((2, 3)), known_shape((float("nan"), 3))
    (True, False)
    """
    for n in shape:  # (a loop: this runs in rules, on the NumPy path too)
        if type(n) is float and math.isnan(n):
            return False
    return True


def _unknown(n: Any) -> bool:
    return isinstance(n, float) and math.isnan(n)


register_namespace(numpy.ndarray, numpy)

try:  # CuPy is optional: pip install funcgrad[cuda]
    import cupy  # type: ignore[import-not-found]

    def _to_cuda(host: Any, device: str) -> Any:
        with cupy.cuda.Device(int(device.partition(":")[2] or 0)):
            return cupy.asarray(host)

    register_namespace(cupy.ndarray, cupy, lambda a: f"cuda:{a.device.id}", device_prefix="cuda",
                       to_host=cupy.asnumpy, from_host=_to_cuda)
except Exception:  # noqa: BLE001  (ImportError, or a CuPy without a usable CUDA runtime)
    cupy = None


# Values that say nothing about the namespace: Python numbers, None, and the
# shapes, axes, indices and names that primitives take as data.
_NEUTRAL = frozenset(
    {int, float, bool, type(None), tuple, list, str, slice, type(Ellipsis), numpy.dtype}
)
# Types that mean NumPy: arrays and NumPy scalars (what ufuncs return for 0-d).
NUMPY_ARRAY_TYPES = frozenset(
    {numpy.ndarray} | {t for t in numpy.sctypeDict.values() if issubclass(t, numpy.generic)}
)
NUMPY_TYPES = _NEUTRAL | NUMPY_ARRAY_TYPES  # everything that computes in NumPy


def namespace(*values: Any) -> ModuleType:
    """The array namespace shared by ``values`` (NumPy when none is an array).

    Python numbers, NumPy scalars and None are neutral; arrays of two
    namespaces, or on two devices, raise :class:`~funcgrad.DeviceMismatchError`
    naming both, except that a namespace declared to absorb NumPy data (Dask)
    takes NumPy arrays beside its own.
    """
    for v in values:  # fast path: NumPy arrays and plain numbers only
        if type(v) not in NUMPY_TYPES:
            return _namespace_of_mixed(values)
    return numpy


def _namespace_of_mixed(values: tuple) -> ModuleType:
    found: Namespace | None = None
    first = weak = numpy_array = None  # numpy_array: a NumPy array seen (scalars are neutral)
    for v in values:
        t = type(v)
        if t in _NEUTRAL:
            continue
        if t in WEAK_TYPES:
            weak = weak or lookup(t)
            continue
        if t in NUMPY_ARRAY_TYPES:
            if t is numpy.ndarray and numpy_array is None:
                numpy_array = v
            continue
        entry = lookup(t)
        if entry is None:
            continue
        if entry.xp is numpy:
            if numpy_array is None and not issubclass(t, numpy.generic):
                numpy_array = v
            continue
        found, first = _joined(found, first, entry, v)
    if found is None:
        return numpy if weak is None else weak.xp
    # Dask takes NumPy data beside its arrays, but only beside arrays whose chunks
    # are NumPy arrays too (chunks on a GPU are CuPy's, which refuses them).
    if numpy_array is not None and not (found.absorbs_numpy and found.device(first) == "cpu"):
        raise DeviceMismatchError(
            f"inputs on different devices: {device_of(numpy_array)} (a NumPy array) and "
            f"{device_of(first)} ({type(first).__module__}.{type(first).__name__}); move one "
            "with fg.to_device"
        )
    return found.xp


def _joined(found: Namespace | None, first: Any, entry: Namespace, v: Any) -> tuple:
    """The namespace of the arrays so far (``found``, and its first array) with ``v``'s
    (``entry``) added: a wrapping namespace wins; two others must be one, on one device."""
    if found is None or entry is not found and _wraps(entry, found):
        return entry, v
    if entry is not found and _wraps(found, entry):
        return found, first
    if entry is not found or entry.device(v) != entry.device(first):
        raise DeviceMismatchError(
            f"inputs on different devices: {device_of(first)} and {device_of(v)}"
        )
    return found, first


def _wraps(outer: Namespace, inner: Namespace) -> bool:
    """Whether ``outer``'s arrays wrap ``inner``'s, directly or through other wrappers."""
    xp = outer.over
    while xp is not None:
        if xp is inner.xp:
            return True
        xp = getattr(xp, "over", None)
    return False


def float_array(x: float, where: str) -> numpy.ndarray:
    """The Python number ``x`` as a float64 0-d array; ``ValueError`` if it cannot be one.

    >>> float_array(2, 'grad')
    array(2.)
    """
    if type(x) in WEAK_TYPES:  # a traced Python float (fg.replay): recorded
        return namespace(x).asarray(x, dtype=numpy.float64)
    try:
        return numpy.asarray(x, dtype=numpy.float64)
    except OverflowError:
        raise FuncgradValueError(
            f"{where}: the Python int {describe(x)} is too large for a float64"
        ) from None


def device_of(x: Any) -> str:
    """``'cpu'`` or ``'cuda:N'``: where the raw array ``x`` lives."""
    entry = lookup(type(x))
    return "cpu" if entry is None else entry.device(x)


def to_device(x: Any, device: str) -> Any:
    """The raw array ``x`` on ``device`` (``'cpu'``, ``'cuda:N'``, or a registered
    namespace's device): a copy, or ``x`` itself when it is a NumPy array already
    on the CPU."""
    if not isinstance(device, str):
        raise FuncgradTypeError(
            f"device must be a str such as 'cpu' or 'cuda:0', got {describe(device)}"
        )
    src = lookup(type(x))
    host = src.to_host(x) if src is not None and src.to_host is not None else numpy.asarray(x)
    if device == "cpu":
        return host
    prefix = device.partition(":")[0]
    for entry in _REGISTRY.values():
        if entry.device_prefix == prefix and entry.from_host is not None:
            return entry.from_host(host, device)
    if prefix == "cuda":
        raise FuncgradValueError(f"device {describe(device)} needs CuPy and a GPU")
    raise FuncgradValueError(f"unknown device {describe(device)}; expected 'cpu' or 'cuda:N'")


def borrowed(x: Any) -> bool:
    """Whether the array ``x`` is a view or read-only: memory it does not own outright.

    >>> a = numpy.ones(3)
    >>> borrowed(a), borrowed(a[1:]), borrowed(numpy.broadcast_to(a, (2, 3)))
    (False, True, True)
    """
    flags = getattr(x, "flags", None)
    if flags is not None:  # NumPy's and CuPy's flags (CuPy's have no writeable)
        return not getattr(flags, "owndata", True) or not getattr(flags, "writeable", True)
    return getattr(x, "base", None) is not None


def as_array(x: Any) -> Any:
    """``x``, with a NumPy scalar (what NumPy returns for 0-d results) made a 0-d array.

    >>> as_array(numpy.float64(2.0))
    array(2.)
    """
    if isinstance(x, numpy.generic):
        return numpy.asarray(x)
    if type(x) is not numpy.ndarray:
        entry = lookup(type(x))
        if entry is not None and entry.as_array is not None:
            return entry.as_array(x)
    return x


def is_float_dtype(dtype: Any) -> bool:
    """Whether ``dtype`` is a real floating dtype."""
    return numpy.dtype(dtype).kind == "f"


def is_inexact_dtype(dtype: Any) -> bool:
    """Whether ``dtype`` is real floating or complex: the differentiable dtypes."""
    return numpy.dtype(dtype).kind in "fc"
