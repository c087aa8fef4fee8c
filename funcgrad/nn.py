"""Neural-network functions, numerically stable (layer 7).

Each is a composition of ``funcgrad.numpy`` primitives, so it is
differentiable to any order, in reverse and forward mode, on any device.
Nothing overflows: exponentials only ever see arguments <= 0, so inputs of
±1000 give finite values and finite gradients.

>>> import numpy, funcgrad as fg
>>> fg.nn.softmax(numpy.array([0.0, 1000.0]))
array([0., 1.])
"""

from __future__ import annotations

import functools
from typing import Any

import numpy

from . import numpy as fnp
from .backend import is_lazy, namespace
from .errors import FuncgradTypeError, FuncgradValueError
from .numpy._core import index_data, raw, xp_of
from .numpy.reductions import keepdims_shape, normalize_axes
from .primitive import Primitive
from .translation import guarded

__all__ = [
    "log_softmax", "logsumexp", "relu", "sigmoid", "softmax", "softmax_cross_entropy",
    "softplus",
]


def __dir__() -> list:  # the public names only, not the helpers and imports
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def _zero(x: Any) -> Any:
    """A raw 0-d zero of ``x``'s dtype and device."""
    v = fnp.asarray(x)
    return fnp.zeros((), v.dtype, like=v)


def sigmoid(x: Any) -> Any:
    """The logistic function ``1 / (1 + exp(-x))``.

    Computed as ``1 / (1 + e)`` for ``x >= 0`` and ``e / (1 + e)`` below, with
    ``e = exp(-|x|) <= 1``: no overflow, full relative precision in both tails.

    >>> import numpy, funcgrad as fg
    >>> fg.nn.sigmoid(numpy.array([-1000.0, 0.0, 1000.0]))
    array([0. , 0.5, 1. ])
    """
    up = fnp.greater_equal(x, 0)
    e = fnp.exp(fnp.where(up, fnp.negative(x), x))  # exp(-|x|), smooth on each side
    return fnp.where(up, 1 / (1 + e), e / (1 + e))


def relu(x: Any) -> Any:
    """``max(x, 0)``; its gradient is 0 at ``x == 0`` (as in JAX and PyTorch).

    >>> import numpy, funcgrad as fg
    >>> fg.grad(lambda x: fg.nn.relu(x).sum())(numpy.array([-1.0, 0.0, 2.0]))
    array([0., 0., 1.])
    """
    return fnp.where(fnp.greater(x, 0), x, _zero(x))


def softplus(x: Any) -> Any:
    """``log(1 + exp(x))``, as ``logaddexp(x, 0)``; its derivative is :func:`sigmoid`.

    >>> import numpy, funcgrad as fg
    >>> fg.nn.softplus(numpy.array([-1000.0, 0.0, 1000.0]))
    array([0.00000000e+00, 6.93147181e-01, 1.00000000e+03])
    """
    return fnp.logaddexp(x, _zero(x))


def _shift(x: Any, axes: tuple) -> Any:
    """The max of ``x`` over ``axes`` (kept as 1s), as a raw constant; 0 where not finite.

    Subtracting a constant leaves log-sum-exp's gradient unchanged, so the
    shift carries no gradient; a slice of ``-inf`` (or an empty slice) is
    shifted by 0 rather than by ``-inf``, which would give NaN.
    """
    v = fnp.asarray(x)
    shape = keepdims_shape(v.shape, axes)
    if v.size == 0 or 0 in (v.shape[a] for a in axes):
        return fnp.zeros(shape, v.dtype, like=v)
    m = fnp.asarray(v.max(axis=axes, keepdims=True))
    return fnp.where(fnp.isfinite(m), m, fnp.zeros((), m.dtype, like=m))


def _axes(x: Any, axis: Any) -> tuple:
    return normalize_axes(axis, len(fnp.asarray(x).shape))


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``log(sum(exp(x), axis))`` without overflow (``axis`` int, tuple or None).

    >>> import numpy, funcgrad as fg
    >>> float(fg.nn.logsumexp(numpy.array([1000.0, 1000.0])))
    1000.6931471805599
    """
    axes = _axes(x, axis)
    m = _shift(x, axes)
    s = fnp.sum(fnp.exp(x - m), axis=axes, keepdims=keepdims)
    if not keepdims:
        m = m.reshape(s.shape)
    return fnp.log(s) + m


def log_softmax(x: Any, axis: Any = -1) -> Any:
    """``x - logsumexp(x, axis, keepdims=True)``: log-probabilities along ``axis``.

    >>> import numpy, funcgrad as fg
    >>> fg.nn.log_softmax(numpy.array([0.0, 1000.0]))
    array([-1000.,     0.])
    """
    axes = _axes(x, axis)
    z = x - _shift(x, axes)
    return z - fnp.log(fnp.sum(fnp.exp(z), axis=axes, keepdims=True))


def softmax(x: Any, axis: Any = -1) -> Any:
    """``exp(x) / sum(exp(x), axis)``: probabilities along ``axis`` (summing to 1).

    >>> import numpy, funcgrad as fg
    >>> fg.nn.softmax(numpy.array([0.0, 0.0]))
    array([0.5, 0.5])
    """
    axes = _axes(x, axis)
    e = fnp.exp(x - _shift(x, axes))
    return e / fnp.sum(e, axis=axes, keepdims=True)


def _one_hot(labels: Any, shape: tuple, axis: int, dtype: Any, like: Any) -> Any:
    """Raw one-hot array of ``shape`` from integer class indices along ``axis``."""
    lab = fnp.asarray(index_data(labels, like), like=like)  # on the logits' device
    n = shape[axis]
    xp = namespace(lab)
    if is_lazy(xp):  # reading the labels now would compute them: checked when computed
        lab = xp.checked(lab, functools.partial(_labels_within, n=n), FuncgradValueError(
            f"softmax_cross_entropy: labels must lie in [0, {n}) for {n} classes along "
            f"axis {axis}"))
    elif lab.size and (int(lab.min()) < 0 or int(lab.max()) >= n):
        raise FuncgradValueError(
            f"softmax_cross_entropy: labels must lie in [0, {n}) for {n} classes along "
            f"axis {axis}, got values in [{int(lab.min())}, {int(lab.max())}]"
        )
    classes = fnp.arange(n, like=like).reshape((n,) + (1,) * (len(shape) - 1 - axis))
    return fnp.equal(fnp.expand_dims(lab, axis), classes).astype(dtype)


def _labels_within(chunk: Any, n: int) -> bool:
    """Whether a computed chunk of labels lies in ``[0, n)``."""
    return chunk.size == 0 or bool((chunk.min() >= 0) & (chunk.max() < n))


def softmax_cross_entropy(logits: Any, labels: Any, axis: int = -1) -> Any:
    """The cross-entropy of ``softmax(logits, axis)`` against ``labels``, **averaged**.

    ``labels`` are either integer class indices, of ``logits``' shape without
    ``axis``, or target probabilities (one-hot or soft) of ``logits``' shape.
    The result is the mean, over every position other than the class axis, of
    ``-sum(labels * log_softmax(logits, axis), axis)`` -- a scalar.  Soft
    labels given as Nodes are differentiated too; integer labels are data.

    >>> import numpy, funcgrad as fg
    >>> logits = numpy.array([[0.0, 0.0], [1000.0, 0.0]])
    >>> float(fg.nn.softmax_cross_entropy(logits, numpy.array([0, 0])))
    0.34657359027997264
    """
    lv = fnp.asarray(logits)
    ndim = lv.ndim
    if ndim == 0:
        raise FuncgradValueError("softmax_cross_entropy: logits need a class axis, got a 0-d array")
    ax = normalize_axes(axis, ndim)[0]
    logp = log_softmax(logits, axis=ax)
    lab_shape = tuple(getattr(labels, "shape", numpy.shape(labels)))
    if len(lab_shape) == ndim:
        if lab_shape != lv.shape:
            raise FuncgradValueError(
                f"softmax_cross_entropy: probability labels of shape {lab_shape} do not "
                f"match logits of shape {lv.shape}"
            )
        target = labels
    elif len(lab_shape) == ndim - 1:
        dtype = fnp.asarray(labels).dtype
        if dtype.kind not in "iu":
            raise FuncgradTypeError(
                "softmax_cross_entropy: class-index labels must be integers, got dtype "
                f"{dtype} (pass probabilities with logits' shape instead)"
            )
        expected = lv.shape[:ax] + lv.shape[ax + 1:]
        if lab_shape != expected:
            raise FuncgradValueError(
                f"softmax_cross_entropy: class-index labels of shape {lab_shape} do not match "
                f"logits of shape {lv.shape} without axis {ax} ({expected})"
            )
        target = _one_hot(labels, lv.shape, ax, lv.dtype, lv)
    else:
        raise FuncgradValueError(
            f"softmax_cross_entropy: labels of shape {lab_shape} fit neither logits of shape "
            f"{lv.shape} (probabilities) nor that shape without axis {ax} (class indices)"
        )
    # fnp.multiply, not ``*``: raw labels on another device than raw logits raise
    # DeviceMismatchError there rather than the array library's own error.
    return fnp.mean(-fnp.sum(fnp.multiply(target, logp), axis=ax))


# -- issue 19: gelu silu elu leaky_relu log_sigmoid one_hot ------------------------------

__all__ += ["elu", "gelu", "leaky_relu", "log_sigmoid", "one_hot", "silu"]


def silu(x: Any) -> Any:
    """``x * sigmoid(x)`` (also called swish).

    >>> import numpy, funcgrad as fg
    >>> fg.grad(fg.nn.silu)(0.0)
    array(0.5)
    """
    return fnp.multiply(x, sigmoid(x))


def log_sigmoid(x: Any) -> Any:
    """``log(sigmoid(x)) = -softplus(-x)``, finite for every finite ``x``.

    >>> import numpy, funcgrad as fg
    >>> fg.nn.log_sigmoid(numpy.array([-1000.0, 0.0]))
    array([-1.00000000e+03, -6.93147181e-01])
    """
    return fnp.negative(softplus(fnp.negative(x)))


def leaky_relu(x: Any, negative_slope: float = 0.01) -> Any:
    """``x`` where ``x >= 0``, else ``negative_slope * x``.

    >>> import numpy, funcgrad as fg
    >>> fg.nn.leaky_relu(numpy.array([-2.0, 3.0]), 0.1)
    array([-0.2,  3. ])
    """
    return fnp.where(fnp.greater_equal(x, 0), x, fnp.multiply(x, negative_slope))


def elu(x: Any, alpha: float = 1.0) -> Any:
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)`` (``expm1`` of the negative
    part only, so that large ``x`` never overflows).

    >>> import numpy, funcgrad as fg
    >>> fg.nn.elu(numpy.array([-1000.0, 2.0]))
    array([-1.,  2.])
    """
    pos = fnp.greater(x, 0)
    neg = fnp.where(pos, _zero(x), x)
    return fnp.where(pos, x, fnp.multiply(fnp.expm1(neg), alpha))


_SQRT_2_OVER_PI = 0.7978845608028654
_INV_SQRT_2 = 0.7071067811865476


def _erf_impl(x: Any) -> Any:
    xp = namespace(x)
    if xp is numpy:
        from scipy.special import erf

        out = erf(x)
        return out.astype(x.dtype) if getattr(out, "dtype", x.dtype) != x.dtype else out
    special = getattr(getattr(xp, "scipy", None), "special", None) or getattr(xp, "special", None)
    if special is None:
        raise FuncgradTypeError(
            f"gelu(approximate=False) needs erf, which {getattr(xp, '__name__', xp)} lacks; "
            "use approximate=True"
        )
    return special.erf(x)


from .numpy._core import defjvp as _defjvp
from .numpy._core import defvjp as _defvjp
from .numpy._core import primitive as _primitive

_erf = _primitive(_erf_impl)
_erf.name = "erf"
_erf.__qualname__ = "_erf"  # found where it is defined: it pickles by reference
_erf.elementwise = True  # fg.vmap: batched by broadcasting
_defvjp(_erf, lambda g, ans, x: g * 1.1283791670955126 * fnp.exp(-(x * x)))
_defjvp(_erf, lambda t, ans, x: t * 1.1283791670955126 * fnp.exp(-(x * x)))


def gelu(x: Any, approximate: bool = True) -> Any:
    """The Gaussian error linear unit ``x * Phi(x)``: with ``approximate=True`` (JAX's
    default) the tanh form ``x / 2 * (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))``,
    else exactly, with ``erf``.

    >>> import numpy, funcgrad as fg
    >>> fg.nn.gelu(numpy.array([-1000.0, 0.0, 1000.0]))
    array([  -0.,    0., 1000.])
    """
    if approximate:
        inner = fnp.multiply(x + 0.044715 * (x * x * x), _SQRT_2_OVER_PI)
        return fnp.multiply(x, 0.5) * (1 + fnp.tanh(inner))
    return fnp.multiply(x, 0.5) * (1 + _erf(fnp.multiply(x, _INV_SQRT_2)))


def one_hot(x: Any, num_classes: int, dtype: Any = numpy.float64, axis: int = -1) -> Any:
    """Integer class indices ``x`` as one-hot vectors of length ``num_classes`` along
    ``axis`` (data: rows of indices outside ``[0, num_classes)`` are all zeros, as in JAX).

    >>> import numpy, funcgrad as fg
    >>> fg.nn.one_hot(numpy.array([0, 2]), 3)
    array([[1., 0., 0.],
           [0., 0., 1.]])
    """
    v = fnp.asarray(x)

    v = raw(v)
    if v.dtype.kind not in "iub":
        raise FuncgradTypeError(f"one_hot: class indices must be integers, got dtype {v.dtype}")
    xp = xp_of(v)
    n = int(num_classes)
    nd = v.ndim + 1
    ax = normalize_axes(axis, nd)[0]
    classes = xp.arange(n).reshape((n,) + (1,) * (nd - 1 - ax))
    return xp.equal(xp.expand_dims(v, ax), classes).astype(dtype)


# Only documented errors, whatever the arguments (see funcgrad.translation.guarded).
for _name in __all__:
    if not isinstance(globals()[_name], Primitive):
        globals()[_name] = guarded(globals()[_name], _name)
del _name
