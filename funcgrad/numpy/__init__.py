"""``funcgrad.numpy`` (``fnp``): NumPy-named, differentiable, device-dispatched functions.

Each function runs in the namespace of its inputs (NumPy or CuPy), follows
NumPy's semantics and broadcasting, and is differentiable to any order in
reverse and forward mode.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda x: fnp.sum(fnp.exp(x)))(numpy.zeros(2))
array([1., 1.])
"""

from .comparison import (
    argmax, argmin, equal, greater, greater_equal, isfinite, isinf, isnan, less,
    less_equal, not_equal, sign,
)
from .creation import (
    arange, array, asarray, eye, full, full_like, linspace, ones, ones_like, zeros,
    zeros_like,
)
from .elementwise import (
    abs, absolute, add, cos, divide, exp, log, maximum, minimum, multiply, negative,
    power, sin, sqrt, subtract, tanh, true_divide, where,
)
from .products import dot, matmul
from .reductions import amax, amin, max, mean, min, sum
from .shape import (
    astype, broadcast_to, expand_dims, getitem, index_add, reshape, squeeze, stack, transpose,
)
