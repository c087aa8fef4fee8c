"""Helpers shared by the distributions of ``funcgrad.scipy.stats`` (layer 7)."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy

from ... import numpy as fnp
from ...errors import FuncgradTypeError
from ...node import Node
from ...numpy._core import raw, xp_of
from ...primitive import Primitive, defjvp, defvjp
from ...translation import guarded
from .. import _backend

NEG_INF = -math.inf
LOG_2PI = math.log(2.0 * math.pi)
LOG_PI = math.log(math.pi)


def _is_number(v: Any) -> bool:
    return type(v) in (int, float, bool) or isinstance(v, numpy.generic)


def promote(*args: Any) -> tuple:
    """``args`` with Python numbers (and lists) made arrays of the common floating dtype,
    on the device of the arrays among them: no float64 constant widens float32 data."""
    like, dtypes = None, []
    for a in args:
        if type(a) is Node or hasattr(raw(a), "dtype") and not isinstance(a, numpy.generic):
            if like is None:
                like = a
            dt = raw(a).dtype
            dtypes.append(dt if dt.kind in "fc" else numpy.dtype(numpy.float64))
    dtype = numpy.result_type(*dtypes) if dtypes else numpy.dtype(numpy.float64)
    out = []
    for a in args:
        if a is None:
            out.append(a)
        elif _is_number(a):
            out.append(fnp.asarray(a, dtype, like=like) if like is not None
                       else numpy.asarray(a, dtype))
        elif isinstance(a, (list, tuple)):
            out.append(fnp.asarray(a) if like is None else fnp.asarray(fnp.asarray(a), dtype))
        elif raw(a).dtype.kind not in "fc":
            out.append(fnp.astype(a, dtype))
        else:
            out.append(a)
    return tuple(out)


def mask(c: Any) -> Any:
    """A raw boolean array (no gradient) from a comparison of values or Nodes."""
    return raw(c)


def where(c: Any, x: Any, y: Any) -> Any:
    return fnp.where(mask(c), x, y)


def safe(c: Any, x: Any, fill: float) -> Any:
    """``x`` where ``c``, else ``fill``: keeps a branch that is not taken finite, so that its
    derivative (multiplied by zero) gives no NaN."""
    return fnp.where(mask(c), x, fill)


def standardize(x: Any, loc: Any, scale: Any) -> Any:
    return (x - loc) / scale


def invalid(scale: Any, out: Any) -> Any:
    """``out``, NaN where ``scale <= 0`` (as SciPy's)."""
    s = raw(scale)
    bad = xp_of(s).less_equal(s, 0)
    return fnp.where(bad, math.nan, out)


def floor(k: Any) -> Any:
    v = raw(k)
    return xp_of(v).floor(v)


def public(namespace: dict, names: list) -> None:
    """Give each public function of a distribution module funcgrad's error translation, and
    SciPy's silence about ``log(0) = -inf`` (a log density outside the support)."""
    for name in names:
        fun = namespace[name]

        @functools.wraps(fun)
        def quiet(*args: Any, _fun: Any = fun, **kwargs: Any) -> Any:
            with numpy.errstate(divide="ignore"):
                return _fun(*args, **kwargs)

        namespace[name] = guarded(quiet, name)


def continuous_docs(at: str, quantile: str) -> dict:
    """:func:`document`'s summaries of a continuous distribution's eight functions, each
    example at the arguments ``at`` (``quantile`` for ``ppf`` and ``isf``)."""
    return {
        "logpdf": ("``log pdf(x)``: the log density.", at), "pdf": ("The density.", at),
        "cdf": ("The distribution function, ``P(X <= x)``.", at),
        "logcdf": ("``log cdf``.", at), "sf": ("The survival function, ``1 - cdf``.", at),
        "logsf": ("``log sf``.", at),
        "ppf": ("The quantile function, the inverse of :func:`cdf`.", quantile),
        "isf": ("The inverse of :func:`sf`.", quantile),
    }


def document(namespace: dict, dist: str, docs: dict) -> None:
    """Docstrings for a distribution module's functions: ``docs[name] = (summary, args)``,
    each with an example comparing the value with SciPy's for ``args``."""
    for name, (summary, args) in docs.items():
        scipy_name = name
        namespace[name].__doc__ = (
            f"{summary}\n\n"
            f"Differentiable in every float argument, to any order; the value is SciPy's\n"
            f"``scipy.stats.{dist}.{scipy_name}``.\n\n"
            f">>> import numpy, scipy.stats\n"
            f">>> from funcgrad.scipy.stats import {dist}\n"
            f">>> bool(numpy.allclose({dist}.{name}({args}), "
            f"scipy.stats.{dist}.{scipy_name}({args})))\n"
            f"True\n"
        )


def _refuse_step(dist: str, position: int, arg: str):
    def rule(*_args: Any, **_kwargs: Any) -> Any:
        raise FuncgradTypeError(
            f"funcgrad.scipy.stats.{dist}.ppf is not differentiable in its argument {arg!r} "
            f"(argument {position}): a discrete distribution's quantile is a step function "
            f"of it (integer values: zero derivative between the steps, none at them); "
            f"wrap the argument in fg.stop_gradient if the zero derivative is meant")

    return rule


def step_ppf(dist: str, names: tuple) -> Primitive:
    """``scipy.stats.<dist>.ppf(q, *parameters)`` (``loc`` 0) as a primitive on the device
    of its inputs: integer values, a step function of each argument, so each derivative
    (in ``names[i]``) raises ``TypeError`` naming the argument."""
    import scipy.stats

    reference = getattr(scipy.stats, dist).ppf

    def impl(*args: Any) -> Any:
        with numpy.errstate(invalid="ignore"):
            return _backend.fit(_backend.on_host(reference, args), args)

    impl.__name__ = impl.__qualname__ = f"{dist}_ppf"
    prim = Primitive(impl, f"{dist}.ppf", numpy_impl=impl)
    prim.library = True
    prim.elementwise = True  # broadcasts: batched by broadcasting
    prim.__module__ = f"funcgrad.scipy.stats.{dist}"  # pickles by reference
    prim.__qualname__ = "_ppf"
    rules = [_refuse_step(dist, i, name) for i, name in enumerate(names)]
    defvjp(prim, *rules)
    defjvp(prim, *rules)
    return prim


def step_ppf_doc(dist: str, args: str, names: str) -> str:
    return (
        f"The quantile function: the least ``k`` with ``cdf(k) >= q``.\n\n"
        f"SciPy's ``scipy.stats.{dist}.ppf``.  A step function of ``q`` and of {names}: a\n"
        f"derivative in one of them raises ``TypeError`` naming it; in ``loc`` it is 1.\n\n"
        f">>> import numpy, scipy.stats, funcgrad as fg\n"
        f">>> from funcgrad.scipy.stats import {dist}\n"
        f">>> bool(numpy.allclose({dist}.ppf({args}), scipy.stats.{dist}.ppf({args})))\n"
        f"True\n"
        f">>> float(fg.grad({dist}.ppf, {len(args.split(','))})({args}, 2.0))  # in loc\n"
        f"1.0\n"
    )
