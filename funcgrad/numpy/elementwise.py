"""Elementwise primitives and their rules (layer 4).

One rule per argument, each one line: ``g`` times the partial derivative,
which ``defderiv`` makes both the VJP (summed back to the argument's shape with
``unbroadcast``) and the JVP (broadcast to the output with ``bcast``).  The
functions that are not holomorphic (``abs``, the complex parts) give their
VJP and JVP apart.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda x: fnp.sin(x) * x)(numpy.array(0.0))
array(0.)
"""

from __future__ import annotations

import cmath
import math
from typing import Any

import numpy

from ..primitive import UNIT_IDS
from ._core import defjvp, defvjp, defzero, document, primitive, raw, ufunc, xp_of, zeros_of
from ._core import namespace as _ns
from ._linear import add, as_complex, bcast, defderiv, is_complex, real, unbroadcast

subtract = ufunc("subtract")
multiply = ufunc("multiply")
divide = ufunc("divide")
true_divide = divide
negative = ufunc("negative")
power = ufunc("power")
exp = ufunc("exp")
log = ufunc("log")
sin = ufunc("sin")
cos = ufunc("cos")
tanh = ufunc("tanh")
sqrt = ufunc("sqrt")
absolute = ufunc("abs")
abs = absolute
maximum = ufunc("maximum")
minimum = ufunc("minimum")
where = ufunc("where")

# (``add`` and ``real`` are in ``_linear``: the rules of every family use them.)
defderiv(subtract, lambda g, ans, x, y: g, lambda g, ans, x, y: -g)
defderiv(multiply, lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x)
defderiv(divide, lambda g, ans, x, y: g / y,
         lambda g, ans, x, y: _safely(-g, lambda: x / (y * y)))
defderiv(negative, lambda g, ans, x: -g)

# A Node (of a NumPy scalar value) times one of grad's unit seeds, recorded without the
# arithmetic (primitive.UNIT_SEEDS): the same Node multiply would record, whose rules
# give ``g * one`` as multiply's do, skipping the product where it is ``g`` to the bit.
_times_unit = ufunc("multiply")
_times_unit.__qualname__ = "_times_unit"  # (pickles by reference, as itself)


def _times_one(g, ans, x, y):
    one = x if id(x) in UNIT_IDS else y
    return g if type(g) is one.dtype.type else multiply(g, one)


defvjp(_times_unit, _times_one, _times_one)
defjvp(_times_unit, *(lambda t, ans, x, y: bcast(_times_one(t, ans, x, y), ans),) * 2)
multiply.times_unit = _times_unit.times_unit = _times_unit


def _log_base(x, y):
    """``log x`` in ``d(x**y)/dy = x**y log x``, 0 where ``x == 0`` (where that
    derivative is 0).  When ``x**y`` is complex (either argument is), the
    principal complex log: a base with a negative real part, or a negative real
    base, has ``log|x| + i arg x``.  A negative real base with a real exponent
    has no real log: NaN, as in JAX and autograd (0 would be silently wrong)."""
    if type(x) in (int, float, complex) or isinstance(x, numpy.generic):
        # a constant base stays a constant of its kind (any device takes it)
        value = complex(x) if is_complex(y) or isinstance(x, complex) else x
        if value == 0:
            out = 0.0
        elif isinstance(value, complex) or numpy.iscomplexobj(value):
            out = cmath.log(value)
        else:
            out = math.log(value) if value > 0 else math.nan
        return x.dtype.type(out) if isinstance(x, numpy.generic) and not (
            isinstance(out, complex) and x.dtype.kind != "c") else out
    # Anything else -- a Node (whose value may be a NumPy scalar: numpy.float64
    # subclasses float, and is what a 0-d intermediate holds), an array -- goes
    # through ``log``, so a traced base stays traced.
    if is_complex(y) and not is_complex(x):
        x = as_complex(x, y)
    v = raw(x)
    nonzero = xp_of(v).not_equal(v, 0)
    return where(nonzero, log(where(nonzero, x, 1)), xp_of(v).zeros((), v.dtype))


def _y_x_to_y_minus_1(x, y):
    """``y * x ** (y - 1)``, which is 0 where ``y == 0`` (``0 * 0 ** -1`` would be NaN).

    With ``y`` a Python int ``k``, the k+1-th derivative of ``x ** k`` reaches
    ``y == 0``: its derivative is 0 there, so every order stays finite at 0.
    """
    if type(y) in (int, float) or isinstance(y, numpy.generic):  # a constant exponent
        return y * power(x, y - 1) if y != 0 else zeros_of(x)
    yv = raw(y)
    return y * power(x, where(xp_of(yv).equal(yv, 0), 1, y - 1))


defderiv(power, lambda g, ans, x, y: _safely(g, lambda: _y_x_to_y_minus_1(x, y)),
         lambda g, ans, x, y: g * ans * _log_base(x, y))
defderiv(exp, lambda g, ans, x: g * ans)
defderiv(log, lambda g, ans, x: _safely(g, lambda: 1 / x))
defderiv(sin, lambda g, ans, x: g * cos(x))
defderiv(cos, lambda g, ans, x: -g * sin(x))
defderiv(tanh, lambda g, ans, x: g * (1 - ans * ans))
defderiv(sqrt, lambda g, ans, x: _safely(g, lambda: 0.5 / ans))


def sign_of(x):
    """The sign of ``x``'s value, as data: the derivative of ``|x|`` for real ``x``."""
    v = raw(x)
    return xp_of(v).sign(v)


def _times_unit_conj(g, x, ans):
    """``g * conj(x) / |x|``, 0 where ``x == 0``: ``|x|``'s derivative for complex ``x``."""
    a = raw(ans)
    xp = xp_of(a)
    return g * conjugate(x) / where(xp.equal(a, 0), xp.ones((), a.dtype), ans)


def _abs_vjp(g, ans, x):
    if not is_complex(x):
        return g * sign_of(x)
    return _times_unit_conj(g, x, ans)


def _abs_jvp(t, ans, x):
    if not is_complex(x):
        return t * sign_of(x)
    return real(_times_unit_conj(t, x, ans))


defvjp(absolute, _abs_vjp)
defjvp(absolute, _abs_jvp)


def _pick(x, y, ans):
    """Where ``x`` is the winner of max/min: 1, or 1/2 on ties (split evenly)."""
    xv, yv, av = raw(x), raw(y), raw(ans)
    xp = xp_of(xv, yv)
    dtype = av.dtype
    return (xp.equal(xv, av).astype(dtype)) / (1 + xp.equal(xv, yv).astype(dtype))


# The rules of max and min (fmax and fmin too): the gradient goes to the winner.
PICK_RULES = (lambda g, ans, x, y: g * _pick(x, y, ans), lambda g, ans, x, y: g * _pick(y, x, ans))
defderiv(maximum, *PICK_RULES)
defderiv(minimum, *PICK_RULES)


def _zero_where(c, g, keep):
    v = raw(g)
    zero = xp_of(v).zeros((), v.dtype)
    return where(c, g, zero) if keep else where(c, zero, g)


defderiv(
    where,
    None,
    lambda g, ans, c, x, y: _zero_where(c, g, True),
    lambda g, ans, c, x, y: _zero_where(c, g, False),
)


# -- powers, exponentials and logarithms -------------------------------------
# Constants are Python floats: a NumPy float64 constant would promote a float32
# gradient (NEP 50 treats only Python scalars as weak).
_LN2 = 0.6931471805599453
_LN10 = 2.302585092994046

square = ufunc("square")
reciprocal = ufunc("reciprocal")
exp2 = ufunc("exp2")
expm1 = ufunc("expm1")
log2 = ufunc("log2")
log10 = ufunc("log10")
log1p = ufunc("log1p")

defderiv(square, lambda g, ans, x: g * 2 * x)
defderiv(reciprocal, lambda g, ans, x: _safely(-g, lambda: 1 / (x * x)))
defderiv(exp2, lambda g, ans, x: g * ans * _LN2)
defderiv(expm1, lambda g, ans, x: g * (ans + 1))
defderiv(log2, lambda g, ans, x: _safely(g, lambda: 1 / (x * _LN2)))
defderiv(log10, lambda g, ans, x: _safely(g, lambda: 1 / (x * _LN10)))
defderiv(log1p, lambda g, ans, x: _safely(g, lambda: 1 / (x + 1)))

# -- trigonometric and hyperbolic functions and their inverses ----------------
tan = ufunc("tan")
arcsin = ufunc("arcsin")
arccos = ufunc("arccos")
arctan = ufunc("arctan")
arctan2 = ufunc("arctan2")
sinh = ufunc("sinh")
cosh = ufunc("cosh")
arcsinh = ufunc("arcsinh")
arccosh = ufunc("arccosh")
arctanh = ufunc("arctanh")

defderiv(tan, lambda g, ans, x: g * (1 + ans * ans))
defderiv(arcsin, lambda g, ans, x: _safely(g, lambda: 1 / sqrt(1 - x * x)))
defderiv(arccos, lambda g, ans, x: _safely(-g, lambda: 1 / sqrt(1 - x * x)))
defderiv(arctan, lambda g, ans, x: g / (1 + x * x))
defderiv(sinh, lambda g, ans, x: g * cosh(x))
defderiv(cosh, lambda g, ans, x: g * sinh(x))
defderiv(arcsinh, lambda g, ans, x: g / sqrt(x * x + 1))
defderiv(arccosh, lambda g, ans, x: _safely(g, lambda: 1 / sqrt(x * x - 1)))
defderiv(arctanh, lambda g, ans, x: _safely(g, lambda: 1 / (1 - x * x)))


# arctan2(y, x) is the angle of the point (x, y): d/dy = x / r², d/dx = -y / r².
def _r2(y, x):
    return x * x + y * y


defderiv(arctan2, lambda g, ans, y, x: g * x / _r2(y, x), lambda g, ans, y, x: -g * y / _r2(y, x))

# -- logaddexp: log(exp(x1) + exp(x2)) without overflow -----------------------
# NumPy computes the value stably; the weights exp(x - ans) are <= 1, so the
# rules never overflow either (they are the softmax of the two arguments).
logaddexp = ufunc("logaddexp")

defderiv(logaddexp, lambda g, ans, x, y: g * exp(x - ans), lambda g, ans, x, y: g * exp(y - ans))


# -- clip ---------------------------------------------------------------------
@primitive
def _clip(x, a_min=None, a_max=None):
    xp = xp_of(x, a_min, a_max)
    if a_min is None and a_max is None:  # NumPy 2.1+ allows it; CuPy may not
        return xp.array(x, copy=True)
    return xp.clip(x, a_min, a_max)


_clip.name = "clip"


def _inside(ans, x, a_min, a_max):
    """1 where ``a_min < x < a_max`` (the gradient passes), else 0; output-shaped data."""
    xv, av = raw(x), raw(ans)
    xp = xp_of(xv)
    keep = xp.ones(av.shape, bool)
    if a_min is not None:
        keep = keep & (xv > a_min)
    if a_max is not None:
        keep = keep & (xv < a_max)
    return keep.astype(av.dtype)


defvjp(
    _clip,
    lambda g, ans, x, a_min=None, a_max=None: unbroadcast(
        g * _inside(ans, x, a_min, a_max), x.shape
    ),
)
defjvp(
    _clip,
    lambda t, ans, x, a_min=None, a_max=None: bcast(t, ans) * _inside(ans, x, a_min, a_max),
)


def clip(x, a_min=None, a_max=None):
    """``numpy.clip``: ``x`` limited to ``[a_min, a_max]`` (either bound may be None).

    The gradient is 1 where ``a_min < x < a_max`` strictly and 0 elsewhere, on
    the bounds included.  The bounds are data: they get no gradient (a Node
    given as a bound is read with ``fg.value_of``).

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.clip(x, -1.0, 1.0).sum())(numpy.array([-2.0, 0.5, 3.0]))
    array([0., 1., 0.])
    """
    return _clip(x, a_min=raw(a_min), a_max=raw(a_max))


# -- rounding: piecewise constant, so every derivative is zero --------------------
# Zero rather than "undefined" at the jumps too, as in JAX and PyTorch: the
# gradient is raw zeros of the input's shape and dtype, the tangent zeros of
# the output's.
floor = ufunc("floor")
ceil = ufunc("ceil")

floor.__doc__ = """``numpy.floor``: the largest integer ``<= x``, elementwise; derivative zero.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fnp.floor(numpy.array([-0.5, 1.5]))
array([-1.,  1.])
>>> fg.grad(lambda x: (fnp.floor(x) * x).sum())(numpy.array([-0.5, 1.5]))
array([-1.,  1.])
"""
ceil.__doc__ = """``numpy.ceil``: the smallest integer ``>= x``, elementwise; derivative zero.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fnp.ceil(numpy.array([-0.5, 1.5]))
array([-0.,  2.])
>>> fg.grad(lambda x: fnp.ceil(x).sum())(numpy.array([-0.5, 1.5]))
array([0., 0.])
"""

defzero(floor)
defzero(ceil)


def _round_impl(x, decimals=0):
    xp = _ns(x)
    fun = getattr(xp, "round", None) or xp.around  # older CuPy has only ``around``
    return fun(x, decimals=decimals)


_round = primitive(_round_impl)
_round.__qualname__ = "_round"  # where it is found: it pickles by reference
_round.name = "round"
defzero(_round)


def round(a: Any, decimals: int = 0) -> Any:
    """``numpy.round``: ``a`` rounded to ``decimals`` decimals, halves to even.

    Piecewise constant: its derivative is zero everywhere (at the jumps too).

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.round(numpy.array([0.5, 1.5, 2.26]), 1)
    array([0.5, 1.5, 2.3])
    >>> fg.grad(lambda x: (fnp.round(x) * x).sum())(numpy.array([0.4, 1.7]))
    array([0., 2.])
    """
    return _round(a, decimals=int(decimals))


# help(), Jupyter and the reference read these: ufunc primitives have no function body
# to carry a docstring.  Each entry: what it computes, its derivative, an example.
_DOCS = [
    (add, "``x1 + x2``", "1 in each argument",
     "fg.grad(fnp.add, argnums=(0, 1))(2.0, 3.0)", "(array(1.), array(1.))"),
    (subtract, "``x1 - x2``", "1 in ``x1``, -1 in ``x2``",
     "fg.grad(fnp.subtract, argnums=(0, 1))(2.0, 3.0)", "(array(1.), array(-1.))"),
    (multiply, "``x1 * x2``", "``x2`` in ``x1``, ``x1`` in ``x2``",
     "fg.grad(fnp.multiply, argnums=(0, 1))(2.0, 3.0)", "(array(3.), array(2.))"),
    (divide, "``x1 / x2`` (``true_divide`` is the same function)",
     "``1 / x2`` in ``x1``, ``-x1 / x2 ** 2`` in ``x2``",
     "fg.grad(fnp.divide, argnums=(0, 1))(1.0, 2.0)", "(array(0.5), array(-0.25))"),
    (negative, "``-x``", "-1", "fg.grad(fnp.negative)(3.0)", "array(-1.)"),
    (power, "``x1 ** x2``",
     ("``x2 * x1 ** (x2 - 1)`` in ``x1``; ``x1 ** x2 * log(x1)`` in ``x2``, taken as 0 where "
      "``x1 == 0``"),
     "fg.grad(fnp.power, argnums=(0, 1))(2.0, 3.0)", "(array(12.), array(5.54517744))"),
    (exp, "``e ** x``", "``exp(x)``", "fg.grad(fnp.exp)(0.0)", "array(1.)"),
    (log, "the natural logarithm", "``1 / x``", "fg.grad(fnp.log)(2.0)", "array(0.5)"),
    (sin, "the sine", "``cos(x)``", "fg.grad(fnp.sin)(0.0)", "array(1.)"),
    (cos, "the cosine", "``-sin(x)``", "fg.grad(fnp.cos)(numpy.pi / 2)", "array(-1.)"),
    (tanh, "the hyperbolic tangent", "``1 - tanh(x) ** 2``", "fg.grad(fnp.tanh)(0.0)",
     "array(1.)"),
    (sqrt, "the square root", "``0.5 / sqrt(x)`` (infinite at 0)", "fg.grad(fnp.sqrt)(4.0)",
     "array(0.25)"),
    (absolute, "``|x|`` (``abs`` is the same function)", "``sign(x)``, 0 at 0",
     "fg.grad(lambda x: fnp.sum(fnp.abs(x)))(numpy.array([-2.0, 0.0, 3.0]))",
     "array([-1.,  0.,  1.])"),
    (maximum, "the larger of ``x1`` and ``x2``, elementwise",
     "1 for the larger argument, 0 for the other; a tie splits the gradient evenly",
     "fg.grad(fnp.maximum, argnums=(0, 1))(2.0, 2.0)", "(array(0.5), array(0.5))"),
    (minimum, "the smaller of ``x1`` and ``x2``, elementwise",
     "1 for the smaller argument, 0 for the other; a tie splits the gradient evenly",
     "fg.grad(fnp.minimum, argnums=(0, 1))(1.0, 2.0)", "(array(1.), array(0.))"),
    (where, "``x`` where ``condition``, else ``y`` (the condition is data)",
     "1 in ``x`` where the condition holds and in ``y`` elsewhere, 0 otherwise",
     "fg.grad(lambda x: fnp.sum(fnp.where(x > 0, x, 0.0)))(numpy.array([-1.0, 2.0]))",
     "array([0., 1.])"),
    (square, "``x * x``", "``2 * x``", "fg.grad(fnp.square)(3.0)", "array(6.)"),
    (reciprocal, "``1 / x``", "``-1 / x ** 2``", "fg.grad(fnp.reciprocal)(2.0)", "array(-0.25)"),
    (exp2, "``2 ** x``", "``2 ** x * log(2)``", "fg.grad(fnp.exp2)(0.0)", "array(0.69314718)"),
    (expm1, "``exp(x) - 1``, accurate near 0", "``exp(x)``", "fg.grad(fnp.expm1)(0.0)",
     "array(1.)"),
    (log2, "the base-2 logarithm", "``1 / (x * log(2))``", "fg.grad(fnp.log2)(1.0)",
     "array(1.44269504)"),
    (log10, "the base-10 logarithm", "``1 / (x * log(10))``", "fg.grad(fnp.log10)(1.0)",
     "array(0.43429448)"),
    (log1p, "``log(1 + x)``, accurate near 0", "``1 / (1 + x)``", "fg.grad(fnp.log1p)(1.0)",
     "array(0.5)"),
    (tan, "the tangent", "``1 + tan(x) ** 2``", "fg.grad(fnp.tan)(0.0)", "array(1.)"),
    (arcsin, "the inverse sine", "``1 / sqrt(1 - x ** 2)`` (infinite at +-1)",
     "fg.grad(fnp.arcsin)(0.0)", "array(1.)"),
    (arccos, "the inverse cosine", "``-1 / sqrt(1 - x ** 2)`` (infinite at +-1)",
     "fg.grad(fnp.arccos)(0.0)", "array(-1.)"),
    (arctan, "the inverse tangent", "``1 / (1 + x ** 2)``", "fg.grad(fnp.arctan)(1.0)",
     "array(0.5)"),
    (arctan2, "the angle of the point ``(x2, x1)``: ``arctan(x1 / x2)`` by quadrant",
     ("``x2 / r2`` in ``x1`` and ``-x1 / r2`` in ``x2``, where ``r2 = x1 ** 2 + x2 ** 2`` "
      "(undefined at the origin)"),
     "fg.grad(fnp.arctan2, argnums=(0, 1))(1.0, 1.0)", "(array(0.5), array(-0.5))"),
    (sinh, "the hyperbolic sine", "``cosh(x)``", "fg.grad(fnp.sinh)(0.0)", "array(1.)"),
    (cosh, "the hyperbolic cosine", "``sinh(x)``", "fg.grad(fnp.cosh)(0.0)", "array(0.)"),
    (arcsinh, "the inverse hyperbolic sine", "``1 / sqrt(x ** 2 + 1)``",
     "fg.grad(fnp.arcsinh)(0.0)", "array(1.)"),
    (arccosh, "the inverse hyperbolic cosine", "``1 / sqrt(x ** 2 - 1)`` (infinite at 1)",
     "fg.grad(fnp.arccosh)(2.0)", "array(0.57735027)"),
    (arctanh, "the inverse hyperbolic tangent", "``1 / (1 - x ** 2)`` (infinite at +-1)",
     "fg.grad(fnp.arctanh)(0.5)", "array(1.33333333)"),
    (logaddexp, "``log(exp(x1) + exp(x2))``, without overflow",
     "the softmax weights ``exp(x1 - out)`` and ``exp(x2 - out)``",
     "fg.grad(fnp.logaddexp, argnums=(0, 1))(0.0, 0.0)", "(array(0.5), array(0.5))"),
]
document(_DOCS)
del _DOCS

# Doctest runs the examples of these primitives (instances, which it does not collect itself).
__test__ = {"floor": floor.__doc__, "ceil": ceil.__doc__}


# -- the product of a derivative and a cotangent or tangent, safe at singular points ------
# A zero cotangent (or tangent) times an infinite derivative is 0, not NaN: the rules of
# functions with singular edges (sqrt and x ** k at 0, log at 0, arcsin at +-1...) multiply
# with it, so that ``where(x > 0, sqrt(x), 0)`` has gradient 0 at 0 at every order (as
# JAX fixed in jax-ml/jax#383).  Its own rules are safe products too.
def _safe_mul_impl(x, y):
    xp = _ns(x, y)
    with numpy.errstate(invalid="ignore", over="ignore"):
        prod = xp.multiply(x, y)
    return xp.where(xp.equal(x, 0) | xp.equal(y, 0), xp.zeros((), prod.dtype), prod)


_safe_mul = primitive(_safe_mul_impl)


def _safely(g, derivative):
    """``g * derivative()``, 0 where ``g`` is 0; the derivative computed without NumPy's
    warnings (its infinities at the singular points are expected, and masked)."""
    with numpy.errstate(divide="ignore", invalid="ignore", over="ignore"):
        d = derivative()
    return _safe_mul(g, d)
_safe_mul.__qualname__ = "_safe_mul"  # where it is found: it pickles by reference
_safe_mul.name = "safe_multiply"


defderiv(_safe_mul, lambda g, ans, x, y: _safe_mul(g, y), lambda g, ans, x, y: _safe_mul(g, x))


# -- complex parts: real, imag, conj, angle ---------------------------------------
# Not holomorphic: their rules follow from the pairing <a, b> = real(sum(a * b))
# (JAX's convention, CONTRIBUTING.md), the VJP being the transpose of the JVP.
# (``real``, whose VJP embeds a real gradient in the complex numbers, is in ``_linear``.)
imag = ufunc("imag")
conj = ufunc("conj")  # NumPy's conjugate; the name every namespace (Dask too) has
conjugate = conj


def _angle_impl(z, deg=False):
    return _ns(z).angle(z, deg=deg)


_angle = primitive(_angle_impl)
_angle.__qualname__ = "_angle"  # where it is found: it pickles by reference
_angle.name = "angle"

defvjp(imag, lambda g, ans, x: as_complex(g, x) * -1j if is_complex(x) else zeros_of(x))
defjvp(imag, lambda t, ans, x: imag(t) if is_complex(x) else zeros_of(ans))
defvjp(conjugate, lambda g, ans, x: conjugate(g))
defjvp(conjugate, lambda t, ans, x: conjugate(t))


def _deg(deg: bool) -> float:
    return 57.29577951308232 if deg else 1.0  # 180 / pi, a Python float (weak)


# d angle(z) = imag(dz / z): the VJP is -1j g / z.  A real input's angle is 0 or pi.
defvjp(_angle, lambda g, ans, z, deg=False: (
    as_complex(g, z) * (-1j * _deg(deg)) / z if is_complex(z) else zeros_of(z)))
defjvp(_angle, lambda t, ans, z, deg=False: (
    imag(t / z) * _deg(deg) if is_complex(z) else zeros_of(ans)))


def angle(z: Any, deg: bool = False) -> Any:
    """``numpy.angle``: the argument of complex ``z`` (radians, or degrees with ``deg``).

    Not holomorphic; its derivative is ``imag(dz / z)`` (undefined at 0).  A
    real input's angle is 0 or pi, with derivative 0.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.angle(numpy.array([1j, -1.0]))
    array([1.57079633, 3.14159265])
    >>> fg.grad(fnp.angle)(numpy.array(1j))  # -1j / z, in JAX's convention
    array(-1.-0.j)
    """
    return _angle(z, deg=bool(deg))


document([
    (real, "the real part", "``real(t)``; the gradient of a complex input is ``g`` as complex",
     "fg.grad(lambda z: fnp.real(z * z))(numpy.array(1 + 2j))", "array(2.+4.j)"),
    (imag, "the imaginary part", "``imag(t)``; the gradient of a complex input is ``-1j * g``",
     "fg.grad(fnp.imag)(numpy.array(1 + 2j))", "array(0.-1.j)"),
    (conj, "the complex conjugate (``conjugate`` is the same function)",
     "``conj(t)``, not holomorphic; the gradient is ``conj(g)``",
     "fg.vjp(fnp.conj, numpy.array(1 + 2j))[1](numpy.array(1j))[0]", "array(0.-1.j)"),
])
