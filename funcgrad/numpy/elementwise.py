"""Elementwise primitives and their rules (layer 4).

One VJP and one JVP rule per argument, each one line; gradients of broadcast
arguments are summed back with ``unbroadcast``, tangents are broadcast to the
output with ``bcast``.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda x: fnp.sin(x) * x)(numpy.array(0.0))
array(0.)
"""

from __future__ import annotations

from ._core import bcast, defjvp, defvjp, raw, ufunc, unbroadcast, xp_of

add = ufunc("add")
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
abs = absolute  # noqa: A001  (NumPy's name)
maximum = ufunc("maximum")
minimum = ufunc("minimum")
where = ufunc("where")

defvjp(add, lambda g, ans, x, y: unbroadcast(g, x.shape), lambda g, ans, x, y: unbroadcast(g, y.shape))
defjvp(add, lambda t, ans, x, y: bcast(t, ans), lambda t, ans, x, y: bcast(t, ans))
defvjp(subtract, lambda g, ans, x, y: unbroadcast(g, x.shape), lambda g, ans, x, y: unbroadcast(-g, y.shape))
defjvp(subtract, lambda t, ans, x, y: bcast(t, ans), lambda t, ans, x, y: bcast(-t, ans))
defvjp(multiply, lambda g, ans, x, y: unbroadcast(g * y, x.shape), lambda g, ans, x, y: unbroadcast(g * x, y.shape))
defjvp(multiply, lambda t, ans, x, y: bcast(t * y, ans), lambda t, ans, x, y: bcast(x * t, ans))
defvjp(divide, lambda g, ans, x, y: unbroadcast(g / y, x.shape), lambda g, ans, x, y: unbroadcast(-g * x / (y * y), y.shape))
defjvp(divide, lambda t, ans, x, y: bcast(t / y, ans), lambda t, ans, x, y: bcast(-t * x / (y * y), ans))
defvjp(negative, lambda g, ans, x: -g)
defjvp(negative, lambda t, ans, x: -t)


def _log_base(x):
    # log(x) where x > 0, else 0: d(x**y)/dy is x**y log x, which is 0 at x == 0.
    v = raw(x)
    xp = xp_of(v)
    return where(v > 0, log(where(v > 0, x, 1)), xp.zeros((), v.dtype))


def _power_dx(g, ans, x, y):
    return unbroadcast(g * y * power(x, y - 1), x.shape)


defvjp(power, _power_dx, lambda g, ans, x, y: unbroadcast(g * ans * _log_base(x), y.shape))
defjvp(
    power,
    lambda t, ans, x, y: bcast(t * y * power(x, y - 1), ans),
    lambda t, ans, x, y: bcast(t * ans * _log_base(x), ans),
)
defvjp(exp, lambda g, ans, x: g * ans)
defjvp(exp, lambda t, ans, x: t * ans)
defvjp(log, lambda g, ans, x: g / x)
defjvp(log, lambda t, ans, x: t / x)
defvjp(sin, lambda g, ans, x: g * cos(x))
defjvp(sin, lambda t, ans, x: t * cos(x))
defvjp(cos, lambda g, ans, x: -g * sin(x))
defjvp(cos, lambda t, ans, x: -t * sin(x))
defvjp(tanh, lambda g, ans, x: g * (1 - ans * ans))
defjvp(tanh, lambda t, ans, x: t * (1 - ans * ans))
defvjp(sqrt, lambda g, ans, x: g * 0.5 / ans)
defjvp(sqrt, lambda t, ans, x: t * 0.5 / ans)


def _sign(x):
    v = raw(x)
    return xp_of(v).sign(v)


defvjp(absolute, lambda g, ans, x: g * _sign(x))
defjvp(absolute, lambda t, ans, x: t * _sign(x))


def _pick(x, y, ans):
    """Where ``x`` is the winner of max/min: 1, or 1/2 on ties (split evenly)."""
    xv, yv, av = raw(x), raw(y), raw(ans)
    xp = xp_of(xv, yv)
    dtype = av.dtype
    return (xp.equal(xv, av).astype(dtype)) / (1 + xp.equal(xv, yv).astype(dtype))


defvjp(
    maximum,
    lambda g, ans, x, y: unbroadcast(g * _pick(x, y, ans), x.shape),
    lambda g, ans, x, y: unbroadcast(g * _pick(y, x, ans), y.shape),
)
defjvp(
    maximum,
    lambda t, ans, x, y: bcast(t * _pick(x, y, ans), ans),
    lambda t, ans, x, y: bcast(t * _pick(y, x, ans), ans),
)
defvjp(
    minimum,
    lambda g, ans, x, y: unbroadcast(g * _pick(x, y, ans), x.shape),
    lambda g, ans, x, y: unbroadcast(g * _pick(y, x, ans), y.shape),
)
defjvp(
    minimum,
    lambda t, ans, x, y: bcast(t * _pick(x, y, ans), ans),
    lambda t, ans, x, y: bcast(t * _pick(y, x, ans), ans),
)


def _zero_where(c, g, keep):
    v = raw(g)
    zero = xp_of(v).zeros((), v.dtype)
    return where(c, g, zero) if keep else where(c, zero, g)


defvjp(
    where,
    None,
    lambda g, ans, c, x, y: unbroadcast(_zero_where(c, g, True), x.shape),
    lambda g, ans, c, x, y: unbroadcast(_zero_where(c, g, False), y.shape),
)
defjvp(
    where,
    None,
    lambda t, ans, c, x, y: bcast(_zero_where(c, bcast(t, ans), True), ans),
    lambda t, ans, c, x, y: bcast(_zero_where(c, bcast(t, ans), False), ans),
)
