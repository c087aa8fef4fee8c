"""``funcgrad.scipy.signal``: convolutions and correlations, differentiable (layer 7).

Every function is one full convolution -- a primitive computing SciPy's
``convolve`` (direct or by FFT) on the device of its inputs -- and a slice
of it for the ``valid`` and ``same`` modes.  The convolution's derivative
rules are convolutions again (with a flipped input, then sliced), so every
order works in both modes.

>>> import numpy, funcgrad as fg
>>> from funcgrad.scipy import signal
>>> signal.convolve(numpy.array([1.0, 2.0, 3.0]), numpy.array([0.0, 1.0, 0.5]))
array([0. , 1. , 2.5, 4. , 1.5])
>>> fg.grad(lambda a: signal.convolve(a, numpy.array([1.0, 1.0]), "valid").sum())(numpy.ones(3))
array([1., 2., 1.])
"""

from __future__ import annotations

from typing import Any

import numpy

from .. import numpy as fnp
from ..errors import FuncgradTypeError, FuncgradValueError
from ..node import Node
from ..numpy._core import raw
from ..primitive import defjvp, defvjp
from ..primitive import primitive as _make_primitive
from ..translation import guarded
from . import _backend

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "fftconvolve"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def _full(a, b, method="direct"):
    return _backend.fit(_backend.call("signal", "convolve", (a, b),
                                      {"mode": "full", "method": method}), (a, b))


_full = _make_primitive(_full)  # named as it is found: pickles by reference
_full.library = True
_full.name = "convolve"


def _flip(x):
    return fnp.flip(x, axis=tuple(range(len(x.shape))))


def _window(x, starts, sizes):
    return x[tuple(slice(s, s + n) for s, n in zip(starts, sizes, strict=True))]


def _adjoint(g, other, own_shape, method):
    """The gradient of one input of a full convolution: ``g`` correlated with the other."""
    starts = [n - 1 for n in other.shape]
    return _window(_full(g, _flip(other), method=method), starts, own_shape)


defvjp(
    _full,
    lambda g, ans, a, b, method="direct": _adjoint(g, b, a.shape, method),
    lambda g, ans, a, b, method="direct": _adjoint(g, a, b.shape, method),
)
defjvp(
    _full,
    lambda t, ans, a, b, method="direct": _full(t, b, method=method),
    lambda t, ans, a, b, method="direct": _full(a, t, method=method),
)


def _arrays(in1, in2, name):
    in1 = fnp.asarray(in1) if isinstance(in1, (list, tuple)) else in1
    in2 = fnp.asarray(in2) if isinstance(in2, (list, tuple)) else in2
    s1, s2 = getattr(in1, "shape", ()), getattr(in2, "shape", ())
    if len(s1) != len(s2):
        raise FuncgradValueError(f"{name}: in1 and in2 must have the same number of dimensions, "
                                 f"got shapes {s1} and {s2}")
    if 0 in s1 or 0 in s2:
        raise FuncgradValueError(f"{name}: empty inputs (shapes {s1} and {s2})")
    return in1, in2


def _mode(full, s1, s2, mode, name):
    if mode == "full":
        return full
    if mode == "same":
        return _window(full, [(n2 - 1) // 2 for n2 in s2], s1)
    if mode == "valid":
        if all(a >= b for a, b in zip(s1, s2, strict=True)):
            big, small = s1, s2
        elif all(b >= a for a, b in zip(s1, s2, strict=True)):
            big, small = s2, s1
        else:
            raise FuncgradValueError(f"{name}: for mode 'valid', one input must be at least as "
                                     f"large as the other in every dimension: {s1} and {s2}")
        return _window(full, [n - 1 for n in small], [b - s + 1 for b, s in zip(big, small,
                                                                               strict=True)])
    raise FuncgradValueError(f"{name}: mode must be 'full', 'valid' or 'same', got {mode!r}")


def _convolve(in1, in2, mode, method, name):
    in1, in2 = _arrays(in1, in2, name)
    if method not in ("auto", "direct", "fft"):
        raise FuncgradValueError(f"{name}: method must be 'auto', 'direct' or 'fft', got {method!r}")
    full = _full(in1, in2, method="fft" if method == "fft" else "direct")
    return _mode(full, in1.shape, in2.shape, mode, name)


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """The N-dimensional convolution of ``in1`` and ``in2`` (SciPy's), differentiable in both.

    >>> import numpy
    >>> from funcgrad.scipy import signal
    >>> signal.convolve(numpy.array([1.0, 2.0, 3.0]), numpy.array([1.0, 1.0]), "same")
    array([1., 3., 5.])
    """
    return _convolve(in1, in2, mode, method, "convolve")


def _reversed(in1, in2, name):
    in1, in2 = _arrays(in1, in2, name)
    if getattr(raw(in2), "dtype", None) is not None and raw(in2).dtype.kind == "c":
        raise FuncgradTypeError(f"{name}: complex in2 (correlation conjugates it) is not "
                                "supported")
    return in1, _flip(in2)


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """The N-dimensional cross-correlation of ``in1`` and ``in2`` (SciPy's), differentiable
    in both.

    >>> import numpy
    >>> from funcgrad.scipy import signal
    >>> signal.correlate(numpy.array([1.0, 2.0, 3.0]), numpy.array([0.0, 1.0]), "valid")
    array([2., 3.])
    """
    in1, flipped = _reversed(in1, in2, "correlate")
    s1, s2 = in1.shape, flipped.shape
    if mode == "valid" and not all(a >= b for a, b in zip(s1, s2, strict=True)):
        # SciPy swaps the inputs of a valid correlation when in2 is the larger, which
        # reverses the result
        return _flip(correlate(in2, in1, mode, method))
    return _convolve(in1, flipped, mode, method, "correlate")


def fftconvolve(in1: Any, in2: Any, mode: str = "full", axes: Any = None) -> Any:
    """:func:`convolve` computed by FFT (SciPy's ``fftconvolve``), over every axis.

    >>> import numpy
    >>> from funcgrad.scipy import signal
    >>> signal.fftconvolve(numpy.array([1.0, 2.0]), numpy.array([1.0, 1.0])).round(12)
    array([1., 3., 2.])
    """
    if axes is not None:
        raise FuncgradValueError("fftconvolve: axes other than None (every axis) are not "
                                 "supported")
    return _convolve(in1, in2, mode, "fft", "fftconvolve")


_BOUNDARY = {"fill": "fill", "pad": "fill", "wrap": "wrap", "circular": "wrap",
             "symm": "symmetric", "symmetric": "symmetric"}


def _two_d(in1, in2, boundary, fillvalue, name):
    if boundary not in _BOUNDARY:
        raise FuncgradValueError(f"{name}: boundary must be 'fill', 'wrap' (or 'circular') or "
                                 f"'symm' (or 'symmetric'), got {boundary!r}")
    if getattr(fillvalue, "shape", ()) != () or isinstance(raw(fillvalue), complex) or \
            getattr(raw(fillvalue), "dtype", numpy.dtype(float)).kind not in "biuf":
        raise FuncgradValueError(f"{name}: fillvalue must be a real scalar, got {fillvalue!r}")
    in1, in2 = _arrays(in1, in2, name)
    if len(in1.shape) != 2:
        raise FuncgradValueError(f"{name}: inputs must be 2-D, got shapes {in1.shape} and "
                                 f"{in2.shape}")
    return in1, in2


def _bounded(conv, in1, in2, mode, boundary, fillvalue, centre, name):
    """``conv(in1, in2, mode)`` with in1 extended past its edges as SciPy's 2-D functions
    extend it: ``fillvalue`` (the zero-filled convolution plus ``fillvalue`` times the
    kernel's weight outside in1, so that it is differentiable in ``fillvalue`` too), or
    in1 wrapped around or mirrored (a 'valid' convolution of in1 padded so).  ``centre``:
    where a 'same' result starts in the full one, per axis."""
    if mode not in ("full", "same", "valid"):
        raise FuncgradValueError(f"{name}: mode must be 'full', 'valid' or 'same', got "
                                 f"{mode!r}")
    kind = _BOUNDARY[boundary]
    zero_fill = kind == "fill" and type(fillvalue) is not Node and fillvalue == 0
    if mode == "valid" or zero_fill and mode == "full":  # the boundary plays no part
        return conv(in1, in2, mode)
    widths = [(n - 1, n - 1) for n in in2.shape]
    if kind == "fill":
        full = conv(in1, in2, "full")
        if not zero_fill:
            outside = fnp.pad(fnp.zeros_like(in1), widths, mode="constant", constant_values=1)
            full = full + fillvalue * conv(outside, in2, "valid")
    else:
        full = conv(fnp.pad(in1, widths, mode=kind), in2, "valid")
    return full if mode == "full" else _window(full, centre, in1.shape)


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
               fillvalue: float = 0) -> Any:
    """The 2-D convolution of SciPy's ``convolve2d``, with its boundaries: ``'fill'`` (with
    ``fillvalue``), ``'wrap'`` (circular) and ``'symm'`` (mirrored), differentiable in
    ``in1``, ``in2`` and ``fillvalue``.

    >>> import numpy
    >>> from funcgrad.scipy import signal
    >>> signal.convolve2d(numpy.ones((2, 2)), numpy.ones((2, 2)))
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]])
    >>> signal.convolve2d(numpy.eye(2), numpy.ones((2, 2)), "same", boundary="wrap")
    array([[2., 2.],
           [2., 2.]])
    """
    in1, in2 = _two_d(in1, in2, boundary, fillvalue, "convolve2d")

    def conv(a, b, m):
        return _convolve(a, b, m, "direct", "convolve2d")

    return _bounded(conv, in1, in2, mode, boundary, fillvalue,
                    [(n - 1) // 2 for n in in2.shape], "convolve2d")


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
                fillvalue: float = 0) -> Any:
    """The 2-D cross-correlation of SciPy's ``correlate2d``, with the boundaries of
    :func:`convolve2d`.

    >>> import numpy
    >>> from funcgrad.scipy import signal
    >>> signal.correlate2d(numpy.eye(2), numpy.array([[1.0, 2.0], [3.0, 4.0]]), "valid")
    array([[5.]])
    """
    in1, in2 = _two_d(in1, in2, boundary, fillvalue, "correlate2d")
    # 'same' centred as SciPy's correlate2d centres it (not as correlate does)
    return _bounded(correlate, in1, in2, mode, boundary, fillvalue, [n // 2 for n in in2.shape],
                    "correlate2d")


for _name in __all__:
    globals()[_name] = guarded(globals()[_name], _name)
del _name


# fg.vmap: SciPy's convolutions take one pair of arrays: one call per example.
from ..numpy._batching import per_example as _per_example

_full.batch = _per_example(_full)
