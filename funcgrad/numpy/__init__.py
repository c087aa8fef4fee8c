"""``funcgrad.numpy`` (``fnp``): NumPy-named, differentiable, device-dispatched functions.

Each function runs in the namespace of its inputs (NumPy or CuPy), follows
NumPy's semantics and broadcasting, and is differentiable to any order in
reverse and forward mode.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda x: fnp.sum(fnp.exp(x)))(numpy.zeros(2))
array([1., 1.])

The constants ``pi``, ``e``, ``inf``, ``nan`` and ``newaxis`` are NumPy's:
plain Python values (``newaxis`` is ``None``).

>>> fnp.pi == numpy.pi and fnp.newaxis is None
True
"""

from math import e, inf, nan, pi
from types import ModuleType as _ModuleType

from . import fft, linalg, random
from .comparison import (
    all,
    any,
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
    angle,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    ceil,
    clip,
    conj,
    conjugate,
    cos,
    cosh,
    divide,
    exp,
    exp2,
    expm1,
    floor,
    imag,
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
    real,
    reciprocal,
    round,
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
from .more import (  # issue 19: the rest of NumPy
    acos,
    acosh,
    allclose,
    append,
    argpartition,
    argsort,
    argwhere,
    array_equal,
    array_split,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    atleast_2d,
    atleast_3d,
    average,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    bool_,
    c_,
    cbrt,
    column_stack,
    complex64,
    complex128,
    complexfloating,
    convolve,
    corrcoef,
    correlate,
    count_nonzero,
    cov,
    deg2rad,
    degrees,
    diff,
    double,
    dsplit,
    dstack,
    dtype,
    empty,
    empty_like,
    fabs,
    finfo,
    fix,
    flatnonzero,
    fliplr,
    flipud,
    float16,
    float32,
    float64,
    floating,
    floor_divide,
    fmax,
    fmin,
    fmod,
    gradient,
    hsplit,
    hypot,
    identity,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    int_,
    integer,
    interp,
    intp,
    invert,
    isclose,
    iscomplex,
    iscomplexobj,
    isneginf,
    isposinf,
    isreal,
    isrealobj,
    kron,
    logaddexp2,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    logspace,
    longlong,
    median,
    mod,
    nan_to_num,
    nanargmax,
    nanargmin,
    nancumprod,
    nancumsum,
    nanmax,
    nanmean,
    nanmin,
    nanprod,
    nanstd,
    nansum,
    nanvar,
    ndim,
    nonzero,
    number,
    partition,
    percentile,
    permute_dims,
    polyval,
    pow,
    ptp,
    quantile,
    r_,
    rad2deg,
    radians,
    real_if_close,
    remainder,
    rint,
    rollaxis,
    rot90,
    row_stack,
    searchsorted,
    select,
    signbit,
    sinc,
    single,
    size,
    take_along_axis,
    trapezoid,
    trunc,
    uint,
    uint8,
    uint16,
    uint32,
    uint64,
    unique,
    vander,
    vsplit,
)
from .products import cross, dot, einsum, inner, matmul, outer, tensordot, trace
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
    diag,
    diagonal,
    expand_dims,
    flip,
    getitem,
    hstack,
    index_add,
    index_update,
    meshgrid,
    moveaxis,
    pad,
    ravel,
    repeat,
    reshape,
    roll,
    sort,
    split,
    squeeze,
    stack,
    swapaxes,
    take,
    tile,
    transpose,
    tril,
    triu,
    vstack,
)
from .updates import at

# isort: split
# Installed after every function above exists: Node's operators call them.
from ..arrays import register_array_like
from ..primitive import Primitive as _Primitive
from ..translation import guarded as _guarded
from . import _batching, _methods

# The public functions that are not primitives raise only documented errors, as
# primitives do (see funcgrad.translation); aliases share one guard.
_guards: dict = {}
for _name, _value in list(globals().items()):
    if (not _name.startswith("_") and callable(_value)
            and not isinstance(_value, (_Primitive, type, _ModuleType))):
        if id(_value) not in _guards:
            _guards[id(_value)] = _guarded(_value, _name)
        globals()[_name] = _guards[id(_value)]
for _name in linalg.__all__:
    _value = getattr(linalg, _name)
    if not isinstance(_value, _Primitive):
        setattr(linalg, _name, _guarded(_value, f"linalg.{_name}"))
del _guards, _name, _value

_methods.install(globals())  # Node's operators, methods and NumPy hooks
_batching.install()  # fg.vmap's rules for the primitives above
register_array_like(array)  # lists and tuples holding Nodes are arrays, as in NumPy
del _methods, _batching, register_array_like

newaxis = None


# The public surface is every name imported or defined above, less the family
# modules it is gathered from (importable, e.g. ``funcgrad.numpy.shape``, but
# not part of ``fnp``'s face) and private names.
__all__ = [
    _name for _name, _value in sorted(globals().items())
    if not _name.startswith("_") and (_name in ("linalg", "random", "fft")
                                     or not isinstance(_value, _ModuleType))
]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]
