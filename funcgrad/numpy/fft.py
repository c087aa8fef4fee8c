"""``funcgrad.numpy.fft`` (``fnp.fft``): NumPy's discrete Fourier transforms, differentiable
(layer 4).

Every transform is one of three linear primitives -- complex to complex
(``fftn``/``ifftn``), real to complex (``rfftn``) and complex to real
(``irfftn``) -- over normalized lengths ``s`` and ``axes``, in the namespace of
its input (``xp.fft``: NumPy, CuPy, Dask).  The one-axis and two-axis forms
(``fft``, ``rfft2``...) call them.  Lengths other than the input's are a
``_fit`` (truncate or zero-pad) before the transform, as NumPy does.

The rules follow the complex convention (JAX's and autograd's): a JVP is the
transform of the tangent, and a VJP is the plain transpose of the JVP, with no
conjugation.  The DFT matrix is symmetric, so the transpose of ``fftn`` is
``fftn`` itself (scaled the same by ``norm``) followed by the transpose of the
fit; ``rfftn``'s is the real part of ``fftn`` of the cotangent zero-padded to the
full length; ``irfftn`` reads only the non-negative half of the spectrum and
counts the bins strictly between 0 and the Nyquist frequency twice, so its
transpose is ``ifftn`` of the cotangent, cut to that half and those bins
doubled.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> x = numpy.array([1.0, 2.0, 0.0, -1.0])
>>> fg.grad(lambda x: fnp.sum(fnp.fft.irfft(fnp.fft.rfft(x) * 2.0)))(x)
array([2., 2., 2., 2.])
"""

from __future__ import annotations

import operator
from typing import Any

import numpy

from ..errors import FuncgradTypeError, FuncgradValueError
from ..translation import guarded
from ._core import defjvp, defvjp, primitive, raw, shape_of, xp_of
from ._core import namespace as _ns
from ._linear import is_complex
from .shape import as_arrays, astype, roll

__all__ = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "ifft", "ifft2", "ifftn", "ifftshift",
    "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn",
]


def __dir__() -> list:  # the public names only, not the helpers and imports
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


_NORMS = (None, "backward", "ortho", "forward")


# -- the real part and the embedding of reals into complex numbers -------------------
# A closed pair: each one's VJP and JVP is the other or itself, so every order works.
# (The complex branch's ``fnp.real`` does the same job in the fold itself.)


@primitive
def _re(x):
    return _ns(x).real(x)


@primitive
def _to_complex(x, dtype):
    return _ns(x).asarray(x).astype(dtype)


defvjp(_re, lambda g, ans, x: _to_complex(g, raw(x).dtype))
defjvp(_re, lambda t, ans, x: _re(t))
defvjp(_to_complex, lambda g, ans, x, dtype: _re(g), None)
defjvp(_to_complex, lambda t, ans, x, dtype: _to_complex(t, dtype), None)


def _like(g: Any, x: Any) -> Any:
    """Gradient ``g`` for argument ``x``: its real part when ``x`` is real."""
    return _re(g) if is_complex(g) and not is_complex(x) else g


def _complex_of(x: Any) -> Any:
    """``x`` (real data given to a transform of complex input) as complex."""
    if is_complex(x):
        return x
    dt = raw(x).dtype
    return _to_complex(x, numpy.result_type(dt if dt.kind == "f" and dt.itemsize >= 4
                                            else numpy.float32, numpy.complex64))


# -- truncating or zero-padding along axes --------------------------------------------


@primitive
def _fit(x, s, axes):
    """``x`` cut or zero-padded to lengths ``s`` along ``axes``."""
    xp = _ns(x)
    shape = list(x.shape)
    cut = [slice(None)] * x.ndim
    for n, ax in zip(s, axes, strict=True):
        cut[ax] = slice(0, min(n, shape[ax]))
        shape[ax] = n
    out = x[tuple(cut)]
    if tuple(out.shape) == tuple(shape):
        return out.copy()
    widths = [(0, n - m) for n, m in zip(shape, out.shape, strict=True)]
    return xp.pad(out, widths)


def _lengths(x: Any, axes: tuple) -> tuple:
    shape = shape_of(x)
    return tuple(shape[a] for a in axes)


defvjp(_fit, lambda g, ans, x, s, axes: _fit(g, _lengths(x, axes), axes))
defjvp(_fit, lambda t, ans, x, s, axes: _fit(t, s, axes))


def _refit(g: Any, x: Any, s: tuple, axes: tuple) -> Any:
    """``g`` (of lengths ``s``) fitted back to ``x``'s lengths: the transpose of the fit."""
    back = _lengths(x, axes)
    return g if back == tuple(s) else _fit(g, back, axes)


# -- the three transforms ---------------------------------------------------------------


@primitive
def _c2c(x, s, axes, norm, inverse):
    f = _ns(x).fft
    return (f.ifftn if inverse else f.fftn)(x, s=s, axes=axes, norm=norm)


@primitive
def _r2c(x, s, axes, norm):
    return _ns(x).fft.rfftn(x, s=s, axes=axes, norm=norm)


@primitive
def _c2r(x, s, axes, norm):
    return _ns(x).fft.irfftn(x, s=s, axes=axes, norm=norm)


def _half(s: tuple) -> tuple:
    return s[:-1] + (s[-1] // 2 + 1,)


def _doubled(g: Any, n: int, axis: int) -> Any:
    """``g`` (the non-negative half of a length-``n`` spectrum along ``axis``) with the
    bins strictly between 0 and ``n / 2`` doubled: irfft counts them twice."""
    v = raw(g)
    xp = xp_of(v)
    m = n // 2 + 1
    w = numpy.full(m, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    w = xp.asarray(w.reshape((m,) + (1,) * (v.ndim - 1 - axis)), dtype=numpy.finfo(v.dtype).dtype)
    return g * w


def _c2c_vjp(g, ans, x, s, axes, norm, inverse):
    return _like(_refit(_c2c(g, s, axes, norm, inverse), x, s, axes), x)


def _r2c_vjp(g, ans, x, s, axes, norm):
    full = _fit(g, s, axes)  # the negative frequencies, which rfftn drops: zeros
    return _like(_refit(_c2c(full, s, axes, norm, False), x, s, axes), x)


def _c2r_vjp(g, ans, x, s, axes, norm):
    spec = _fit(_c2c(g, s, axes, norm, True), _half(s), axes)
    return _like(_refit(_doubled(spec, s[-1], axes[-1]), x, _half(s), axes), x)


defvjp(_c2c, _c2c_vjp)
defjvp(_c2c, lambda t, ans, x, s, axes, norm, inverse: _c2c(t, s, axes, norm, inverse))
defvjp(_r2c, _r2c_vjp)
defjvp(_r2c, lambda t, ans, x, s, axes, norm: _r2c(t, s, axes, norm))
defvjp(_c2r, _c2r_vjp)
defjvp(_c2r, lambda t, ans, x, s, axes, norm: _c2r(t, s, axes, norm))


# -- argument normalization -------------------------------------------------------------


def _int(v: Any, what: str, name: str) -> int:
    try:
        return operator.index(v)
    except TypeError:
        raise FuncgradTypeError(f"fft.{name}: {what} must be an int, got {v!r}") from None


def _norm(norm: Any, name: str) -> Any:
    if norm not in _NORMS:
        raise FuncgradValueError(
            f"fft.{name}: norm must be 'backward', 'ortho', 'forward' or None, got {norm!r}"
        )
    return norm


def _axes_and_lengths(a: Any, s: Any, axes: Any, name: str, real_out: bool = False):
    """Normalized ``(s, axes)`` for an n-dimensional transform of ``a``."""
    shape = tuple(shape_of(a))
    nd = len(shape)
    if axes is None:
        axes = tuple(range(nd - len(s), nd)) if s is not None else tuple(range(nd))
    else:
        axes = (axes,) if isinstance(axes, int) else tuple(axes)
    norm_axes = []
    for ax in axes:
        ax = _int(ax, "an axis", name)
        if not -nd <= ax < nd:
            raise FuncgradValueError(
                f"fft.{name}: axis {ax} is out of bounds for an array of {nd} dimensions"
            )
        norm_axes.append(ax % nd)
    axes = tuple(norm_axes)
    if len(set(axes)) != len(axes):
        raise FuncgradValueError(f"fft.{name}: repeated axes {axes}")
    if not axes:
        raise FuncgradValueError(f"fft.{name}: no axes to transform")
    if s is None:
        s = [shape[ax] for ax in axes]
        if real_out:  # irfft's default length: the even one its half spectrum gives
            s[-1] = 2 * (s[-1] - 1)
    else:
        s = [_int(n, "a length in s", name) for n in ((s,) if isinstance(s, int) else s)]
        if len(s) != len(axes):
            raise FuncgradValueError(
                f"fft.{name}: s has {len(s)} lengths for {len(axes)} axes"
            )
    s = tuple(s)
    if any(n < 1 for n in s):
        raise FuncgradValueError(f"fft.{name}: invalid number of data points {s}")
    return s, axes


def _prep(a: Any, name: str) -> Any:
    (a,) = as_arrays(a)
    if getattr(raw(a), "dtype", numpy.dtype(float)).kind not in "fcbiu":
        raise FuncgradTypeError(f"fft.{name}: needs numbers, got dtype {raw(a).dtype}")
    return a


def _complex_transform(a, s, axes, norm, inverse, name):
    a = _prep(a, name)
    s, axes = _axes_and_lengths(a, s, axes, name)
    return _c2c(_floats(a), s, axes, _norm(norm, name), inverse)


def _floats(a: Any) -> Any:
    """Integer and boolean data as float64, which the transforms' rules need."""
    if raw(a).dtype.kind in "biu":
        return astype(a, numpy.float64)
    return a


def _one_axis(n: Any, axis: Any) -> tuple:
    return (None if n is None else (n,)), (axis,)


# -- the public transforms --------------------------------------------------------------


def fft(a: Any, n: Any = None, axis: int = -1, norm: Any = None) -> Any:
    """``numpy.fft.fft``: the one-dimensional discrete Fourier transform along ``axis``,
    of length ``n`` (``a`` truncated or zero-padded to it), scaled by ``norm``.

    Differentiable in ``a``; its VJP is ``fft`` of the cotangent (the DFT matrix is
    symmetric), fitted back to ``a``'s length.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.fft.fft(numpy.array([1.0, 0.0, 0.0, 0.0]))
    array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    s, axes = _one_axis(n, axis)
    return _complex_transform(a, s, axes, norm, False, "fft")


def ifft(a: Any, n: Any = None, axis: int = -1, norm: Any = None) -> Any:
    """``numpy.fft.ifft``: the inverse of :func:`fft` along ``axis``.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.fft.ifft(numpy.array([4.0, 0.0, 0.0, 0.0]))
    array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    s, axes = _one_axis(n, axis)
    return _complex_transform(a, s, axes, norm, True, "ifft")


def fftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None) -> Any:
    """``numpy.fft.fftn``: the discrete Fourier transform over ``axes`` (all of them when
    None, the last ``len(s)`` when only ``s`` is given), of lengths ``s``.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.fft.fftn(numpy.ones((2, 2))).real
    array([[4., 0.],
           [0., 0.]])
    """
    return _complex_transform(a, s, axes, norm, False, "fftn")


def ifftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None) -> Any:
    """``numpy.fft.ifftn``: the inverse of :func:`fftn`.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.fft.ifftn(numpy.array([[4.0, 0.0], [0.0, 0.0]])).real
    array([[1., 1.],
           [1., 1.]])
    """
    return _complex_transform(a, s, axes, norm, True, "ifftn")


def fft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None) -> Any:
    """``numpy.fft.fft2``: :func:`fftn` over the last two axes (or ``axes``).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.fft.fft2(numpy.eye(2)).real
    array([[2., 0.],
           [0., 2.]])
    """
    return _complex_transform(a, s, axes, norm, False, "fft2")


def ifft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None) -> Any:
    """``numpy.fft.ifft2``: :func:`ifftn` over the last two axes (or ``axes``).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.fft.ifft2(numpy.array([[2.0, 0.0], [0.0, 2.0]])).real
    array([[1., 0.],
           [0., 1.]])
    """
    return _complex_transform(a, s, axes, norm, True, "ifft2")


def _real_transform(a, s, axes, norm, name):
    a = _prep(a, name)
    if is_complex(a):
        raise FuncgradTypeError(f"fft.{name}: needs real input, got dtype {raw(a).dtype}")
    s, axes = _axes_and_lengths(a, s, axes, name)
    return _r2c(_floats(a), s, axes, _norm(norm, name))


def _inverse_real_transform(a, s, axes, norm, name):
    a = _prep(a, name)
    s, axes = _axes_and_lengths(a, s, axes, name, real_out=True)
    return _c2r(_complex_of(_floats(a)), s, axes, _norm(norm, name))


def rfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None) -> Any:
    """``numpy.fft.rfft``: the transform of real ``a`` along ``axis``, the ``n // 2 + 1``
    non-negative frequencies only.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.fft.rfft(numpy.array([1.0, 1.0, 1.0, 1.0]))
    array([4.+0.j, 0.+0.j, 0.+0.j])
    """
    s, axes = _one_axis(n, axis)
    return _real_transform(a, s, axes, norm, "rfft")


def irfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None) -> Any:
    """``numpy.fft.irfft``: the real signal of length ``n`` (default ``2 * (m - 1)``) whose
    :func:`rfft` is ``a``; the imaginary parts of the 0 and Nyquist bins are ignored.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.fft.irfft(numpy.array([4.0, 0.0, 0.0]))
    array([1., 1., 1., 1.])
    """
    s, axes = _one_axis(n, axis)
    return _inverse_real_transform(a, s, axes, norm, "irfft")


def rfftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None) -> Any:
    """``numpy.fft.rfftn``: :func:`fftn` of real ``a``, halved along the last axis.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.fft.rfftn(numpy.ones((2, 2))).real
    array([[4., 0.],
           [0., 0.]])
    """
    return _real_transform(a, s, axes, norm, "rfftn")


def irfftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None) -> Any:
    """``numpy.fft.irfftn``: the inverse of :func:`rfftn`, of lengths ``s``.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.fft.irfftn(numpy.array([[4.0, 0.0], [0.0, 0.0]]), s=(2, 2))
    array([[1., 1.],
           [1., 1.]])
    """
    return _inverse_real_transform(a, s, axes, norm, "irfftn")


def rfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None) -> Any:
    """``numpy.fft.rfft2``: :func:`rfftn` over the last two axes (or ``axes``).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.fft.rfft2(numpy.ones((2, 2))).real
    array([[4., 0.],
           [0., 0.]])
    """
    return _real_transform(a, s, axes, norm, "rfft2")


def irfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None) -> Any:
    """``numpy.fft.irfft2``: :func:`irfftn` over the last two axes (or ``axes``).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.fft.irfft2(numpy.array([[4.0, 0.0], [0.0, 0.0]]), s=(2, 2))
    array([[1., 1.],
           [1., 1.]])
    """
    return _inverse_real_transform(a, s, axes, norm, "irfft2")


# -- shifts and frequencies -------------------------------------------------------------


def _shift(x: Any, axes: Any, sign: int, name: str) -> Any:
    (x,) = as_arrays(x)
    shape = tuple(shape_of(x))
    if axes is None:
        axes = tuple(range(len(shape)))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(_int(a, "an axis", name) for a in axes)
    if not axes:
        return x
    return roll(x, tuple(sign * (shape[a] // 2) for a in axes), axis=axes)


def fftshift(x: Any, axes: Any = None) -> Any:
    """``numpy.fft.fftshift``: the zero frequency moved to the middle (a roll by half of
    each axis in ``axes``, all when None); differentiable.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.fft.fftshift(numpy.array([0.0, 1.0, 2.0, -2.0, -1.0]))
    array([-2., -1.,  0.,  1.,  2.])
    """
    return _shift(x, axes, 1, "fftshift")


def ifftshift(x: Any, axes: Any = None) -> Any:
    """``numpy.fft.ifftshift``: the inverse of :func:`fftshift`; differentiable.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.fft.ifftshift(numpy.array([-2.0, -1.0, 0.0, 1.0, 2.0]))
    array([ 0.,  1.,  2., -2., -1.])
    """
    return _shift(x, axes, -1, "ifftshift")


def _freq_xp(d: Any, device: Any):
    v = raw(d)
    if hasattr(v, "shape") and not isinstance(v, numpy.generic):
        return xp_of(v), v
    return numpy, v


def fftfreq(n: int, d: Any = 1.0, device: Any = None) -> Any:
    """``numpy.fft.fftfreq``: the sample frequencies of a length-``n`` transform with
    sample spacing ``d`` (data: no gradient).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.fft.fftfreq(4, 0.5)
    array([ 0. ,  0.5, -1. , -0.5])
    """
    n = _int(n, "n", "fftfreq")
    xp, d = _freq_xp(d, device)
    return xp.fft.fftfreq(n, d)


def rfftfreq(n: int, d: Any = 1.0, device: Any = None) -> Any:
    """``numpy.fft.rfftfreq``: the non-negative sample frequencies of :func:`rfft` of
    length ``n`` (data: no gradient).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.fft.rfftfreq(4, 0.5)
    array([0. , 0.5, 1. ])
    """
    n = _int(n, "n", "rfftfreq")
    xp, d = _freq_xp(d, device)
    return xp.fft.rfftfreq(n, d)


# The public functions raise only documented errors, as the primitives do.
for _name in __all__:
    globals()[_name] = guarded(globals()[_name], f"fft.{_name}")
del _name
