"""Families of distributions that share their formulas (layer 7): the functions of a
distribution module written once from a few of its own.

- :func:`symmetric`: a location-scale family whose standard density is even
  (``norm``, ``logistic``), from the standard ``logpdf``, ``cdf``, ``logcdf``
  and ``ppf``: ``sf(x) = cdf(-z)``, ``isf(q) = loc - scale ppf(q)``...
- :func:`mirror`: the distribution of ``-X`` (``gumbel_l`` from ``gumbel_r``),
  its ``cdf`` the other's ``sf`` at ``-x``.
- :func:`discrete`: ``pmf``, ``logcdf``, ``logsf`` and the step-function
  ``ppf`` of a discrete distribution from its ``logpmf``, ``cdf`` and ``sf``
  (``poisson``, ``binom``, ``nbinom``).

Each returns plain functions, named and with signatures as if the module
defined them (``namespace`` is the module's ``globals()``), for the module to
assign before its ``document`` and ``public`` calls.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ... import numpy as fnp
from ._util import promote, step_ppf, step_ppf_doc


def _put(namespace: dict, name: str, fun: Callable, like: Callable | None = None) -> Callable:
    fun.__name__ = fun.__qualname__ = name
    fun.__module__ = namespace["__name__"]  # pickles by reference, as a def would
    if like is not None:
        fun.__signature__ = inspect.signature(like)
    return fun


def symmetric(namespace: dict, logpdf0: Callable, cdf0: Callable, logcdf0: Callable,
              ppf0: Callable) -> tuple:
    """``(logpdf, pdf, cdf, logcdf, sf, logsf, ppf, isf)`` of ``loc + scale Z``, with
    ``Z``'s density even, from ``Z``'s ``logpdf0``, ``cdf0``, ``logcdf0`` and ``ppf0``."""

    def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        x, loc, scale = promote(x, loc, scale)
        return logpdf0((x - loc) / scale) - fnp.log(scale)

    def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return fnp.exp(namespace["logpdf"](x, loc, scale))

    def _at(standard: Callable, sign: int) -> Callable:
        def fun(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
            x, loc, scale = promote(x, loc, scale)
            return standard((x - loc) / scale if sign > 0 else (loc - x) / scale)

        return fun

    def _quantile(sign: int) -> Callable:
        def fun(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
            q, loc, scale = promote(q, loc, scale)
            return loc + scale * ppf0(q) if sign > 0 else loc - scale * ppf0(q)

        return fun

    return tuple(_put(namespace, name, fun) for name, fun in (
        ("logpdf", logpdf), ("pdf", pdf), ("cdf", _at(cdf0, 1)), ("logcdf", _at(logcdf0, 1)),
        ("sf", _at(cdf0, -1)), ("logsf", _at(logcdf0, -1)), ("ppf", _quantile(1)),
        ("isf", _quantile(-1))))


# the function of X that each function of -X is, at -x
_MIRRORED = {"logpdf": "logpdf", "pdf": "pdf", "cdf": "sf", "logcdf": "logsf", "sf": "cdf",
             "logsf": "logcdf"}


def mirror(namespace: dict, base: Any) -> tuple:
    """``(logpdf, pdf, cdf, logcdf, sf, logsf, ppf, isf)`` of ``-X`` for ``X`` distributed
    as module ``base``: ``cdf(x; loc) = base.sf(-x; -loc)``..., ``ppf(q; loc) =
    -base.isf(q; -loc)``."""

    def at(other: str) -> Callable:
        def fun(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
            x, loc, scale = promote(x, loc, scale)
            return getattr(base, other)(-x, -loc, scale)

        return fun

    def quantile(other: str) -> Callable:
        def fun(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
            q, loc, scale = promote(q, loc, scale)
            return -getattr(base, other)(q, -loc, scale)

        return fun

    return (*(_put(namespace, name, at(other)) for name, other in _MIRRORED.items()),
            _put(namespace, "ppf", quantile("isf")), _put(namespace, "isf", quantile("ppf")))


def discrete(namespace: dict, dist: str, example: str) -> tuple:
    """``(pmf, logcdf, logsf, ppf, steps)``: the first three from the module's ``logpmf``, ``cdf`` and ``sf``
    (called through the namespace, as the module's own functions), and ``ppf(q, *params,
    loc=0)``, SciPy's quantile: a step function of ``q`` and the parameters (derivatives
    refused), a shift in ``loc``, on the primitive ``steps`` (the module's ``_ppf``, by
    which it pickles).  ``example``: the arguments of ``ppf``'s doctest."""
    like = namespace["logpmf"]
    params = list(inspect.signature(like).parameters)[1:-1]  # between k and loc

    def derived(outer: Callable, inner: str) -> Callable:
        def fun(*args: Any, **kwargs: Any) -> Any:
            return outer(namespace[inner](*args, **kwargs))

        return fun

    made = [_put(namespace, name, derived(outer, inner), like) for name, outer, inner in
            (("pmf", fnp.exp, "logpmf"), ("logcdf", fnp.log, "cdf"), ("logsf", fnp.log, "sf"))]
    steps = step_ppf(dist, ("q", *params))
    signature = inspect.signature(like)
    first = next(iter(signature.parameters.values())).replace(name="q")
    signature = signature.replace(parameters=[first, *list(signature.parameters.values())[1:]])

    def ppf(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        *values, loc = promote(*bound.arguments.values())
        return steps(*values) + loc

    _put(namespace, "ppf", ppf)
    ppf.__signature__ = signature
    ppf.__doc__ = step_ppf_doc(dist, example, " and ".join(f"``{p}``" for p in params))
    return (*made, ppf, steps)
