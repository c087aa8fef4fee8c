"""``funcgrad.numpy`` (``fnp``): NumPy-named, differentiable, device-dispatched functions.

Each function runs in the namespace of its inputs (NumPy or CuPy), follows
NumPy's semantics and broadcasting, and is differentiable to any order in
reverse and forward mode.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda x: fnp.sum(fnp.exp(x)))(numpy.zeros(2))
array([1., 1.])
"""

from . import linalg
from .comparison import (
    argmax,
    argmin,
    equal,
    greater,
    greater_equal,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    not_equal,
    sign,
)
from .creation import (
    arange,
    array,
    asarray,
    eye,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from .elementwise import (
    abs,
    absolute,
    add,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    clip,
    cos,
    cosh,
    divide,
    exp,
    exp2,
    expm1,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    maximum,
    minimum,
    multiply,
    negative,
    power,
    reciprocal,
    sin,
    sinh,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    true_divide,
    where,
)
from .products import dot, einsum, inner, matmul, outer, tensordot, trace
from .reductions import (
    amax,
    amin,
    cumprod,
    cumsum,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    var,
)
from .shape import (
    astype,
    atleast_1d,
    broadcast_to,
    concatenate,
    expand_dims,
    flip,
    getitem,
    index_add,
    index_update,
    moveaxis,
    ravel,
    repeat,
    reshape,
    split,
    squeeze,
    stack,
    swapaxes,
    take,
    tile,
    transpose,
)

from . import _methods
from ..primitive import register_array_like

_methods.install()  # Node's operators, methods and NumPy hooks
register_array_like(array)  # lists and tuples holding Nodes are arrays, as in NumPy
del _methods, register_array_like
