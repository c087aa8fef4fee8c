"""Matrix and tensor products (layer 4).

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> a = numpy.eye(2)
>>> fg.grad(lambda x: fnp.matmul(a, x).sum())(numpy.ones(2))
array([1., 1.])
"""

from __future__ import annotations

from ._core import bcast, defjvp, defvjp, primitive, unbroadcast
from ._core import namespace as _ns
from .shape import reshape, transpose


@primitive
def matmul(x, y):
    return _ns(x, y).matmul(x, y)


def _t(a):
    n = len(a.shape)
    return transpose(a, tuple(range(n - 2)) + (n - 1, n - 2))


def _matmul_dx(g, ans, x, y):
    if len(y.shape) == 1:  # (..., k) @ (k,) -> (...): outer product with y
        gx = reshape(g, g.shape + (1,)) * y
    elif len(x.shape) == 1:  # (k,) @ (..., k, m) -> (..., m)
        gx = matmul(reshape(g, g.shape[:-1] + (1, g.shape[-1])), _t(y))
        gx = reshape(gx, gx.shape[:-2] + (gx.shape[-1],))
    else:
        gx = matmul(g, _t(y))
    return unbroadcast(gx, x.shape)


def _matmul_dy(g, ans, x, y):
    if len(x.shape) == 1 and len(y.shape) == 1:
        gy = g * x
    elif len(x.shape) == 1:  # (k,) @ (..., k, m)
        gy = reshape(x, (x.shape[0], 1)) * reshape(g, g.shape[:-1] + (1, g.shape[-1]))
    elif len(y.shape) == 1:  # (..., n, k) @ (k,) -> (..., n)
        gy = matmul(reshape(g, g.shape[:-1] + (1, g.shape[-1])), x)
        gy = reshape(gy, gy.shape[:-2] + (gy.shape[-1],))
    else:
        gy = matmul(_t(x), g)
    return unbroadcast(gy, y.shape)


defvjp(matmul, _matmul_dx, _matmul_dy)
defjvp(matmul, lambda t, ans, x, y: bcast(matmul(t, y), ans), lambda t, ans, x, y: bcast(matmul(x, t), ans))


def dot(x, y):
    """``numpy.dot``: matmul for 1-d and 2-d arrays, a product with a scalar."""
    from .elementwise import multiply  # noqa: PLC0415

    if len(getattr(x, "shape", ())) == 0 or len(getattr(y, "shape", ())) == 0:
        return multiply(x, y)
    if len(y.shape) <= 2:
        return matmul(x, y)
    from . import tensordot  # noqa: PLC0415

    return tensordot(x, y, axes=([len(x.shape) - 1], [len(y.shape) - 2]))


__all__ = ["matmul", "dot"]
