"""Primitives: raw-array functions that know their derivatives (layer 3).

``primitive(fun)`` wraps a function of raw arrays.  Called with raw values it
*is* that function (no overhead beyond one type check per argument); called
with Nodes it computes on their values and records a new Node on every graph
its arguments are on.  ``defvjp`` / ``defjvp`` attach one derivative rule per
positional argument.  Rules receive the output gradient (or input tangent), the
output and the arguments, and are written with ``funcgrad.numpy`` so that they
are themselves differentiable -- which is all higher orders need.

>>> import numpy
>>> cube = primitive(lambda x: x ** 3)
>>> defvjp(cube, lambda g, ans, x: g * 3 * x ** 2)
>>> from funcgrad.node import require_grad
>>> cube(require_grad(numpy.array(2.0))).primitive.name
'<lambda>'
"""

from __future__ import annotations

import functools
from types import MappingProxyType
from typing import Any, Callable

from .errors import FuncgradError, FuncgradTypeError
from .node import _ACTIVE, Node, make_node

NO_KWARGS = MappingProxyType({})


class MissingRuleError(FuncgradError, NotImplementedError):
    """A primitive is differentiated with respect to an argument it has no rule for."""


class Primitive:
    """A named function of raw arrays plus its derivative rules."""

    __slots__ = ("name", "impl", "vjps", "jvps", "vjp_joint", "jvp_joint", "__wrapped__", "__dict__")

    def __init__(self, impl: Callable, name: str | None = None):
        self.impl = impl
        self.name = name or getattr(impl, "__name__", "primitive")
        self.vjps: tuple = ()
        self.jvps: tuple = ()
        # Optional rule giving every argument's gradient at once (custom_vjp,
        # checkpoint): (g, ans, args, kwargs, positions) -> gradients.
        self.vjp_joint: Callable | None = None
        # Optional rule giving the output tangent from all argument tangents:
        # (pairs of (position, tangent), ans, args, kwargs) -> tangent.
        self.jvp_joint: Callable | None = None
        self.__wrapped__ = impl
        self.__doc__ = getattr(impl, "__doc__", None)  # in __dict__: help() and Jupyter read it

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for a in args:
            if type(a) is Node:
                return bind(self, args, kwargs)
        return self.impl(*args, **kwargs)

    def has_rule(self, i: int) -> bool:
        """Whether argument ``i`` can be differentiated (by a VJP or a JVP rule)."""
        if self.vjp_joint is not None:
            return True
        return (i < len(self.vjps) and self.vjps[i] is not None) or (
            i < len(self.jvps) and self.jvps[i] is not None
        )

    def vjp(self, g: Any, ans: Any, args: tuple, kwargs: Any, positions: list[int]) -> list:
        """The gradients of the arguments at ``positions``, given output gradient ``g``."""
        if self.vjp_joint is not None:
            return self.vjp_joint(g, ans, args, kwargs, positions)
        vjps = self.vjps
        out = []
        for i in positions:
            rule = vjps[i] if i < len(vjps) else None
            if rule is None:
                raise MissingRuleError(
                    f"primitive {self.name!r} has no VJP rule for argument {i}"
                )
            out.append(rule(g, ans, *args, **kwargs))
        return out


def bind(prim: Primitive, args: tuple, kwargs: dict) -> Any:
    """Apply ``prim`` to arguments some of which are Nodes; record the result."""
    graphs = None
    rank = 0
    raw = list(args)
    for i, a in enumerate(args):
        if type(a) is Node:
            raw[i] = a.value
            g = a.graphs
            if graphs is None:
                graphs = g
            elif g is not graphs:
                graphs = graphs | g
            if a.rank >= rank:
                rank = a.rank + 1
    value = prim.impl(*raw, **kwargs)
    active = _ACTIVE.get()
    if not graphs <= active:  # some graph is finished, or being folded
        graphs = graphs & active
        if not graphs:
            return value
        # Keep no reference to Nodes that are constants here.
        args = tuple(
            r if type(a) is Node and a.graphs.isdisjoint(active) else a
            for a, r in zip(args, raw, strict=True)
        )
    for i, a in enumerate(args):
        if type(a) is Node and not prim.has_rule(i):
            raise MissingRuleError(
                f"primitive {prim.name!r} has no derivative rule for argument {i} "
                f"(a Node on graph {a.backprop_id.name!r}); give one with fg.defvjp"
            )
    return make_node(value, graphs, prim, args, kwargs or NO_KWARGS, rank)


def primitive(fun: Callable) -> Primitive:
    """Make ``fun`` (a function of raw arrays) a differentiable primitive.

    Give it rules with :func:`defvjp` (and optionally :func:`defjvp`).

    >>> import numpy
    >>> log1p_sq = primitive(lambda x: numpy.log1p(x * x))
    >>> log1p_sq(numpy.array(0.0))
    np.float64(0.0)
    """
    if isinstance(fun, Primitive):
        return fun
    if not callable(fun):
        raise FuncgradTypeError(f"primitive() needs a callable, got {type(fun).__name__}")
    prim = Primitive(fun)
    functools.update_wrapper(prim, fun, assigned=("__module__", "__qualname__"), updated=())
    return prim


def _check_rules(prim: Any, rules: tuple, what: str) -> tuple:
    if not isinstance(prim, Primitive):
        raise FuncgradTypeError(f"{what} needs a primitive (from fg.primitive), got {prim!r}")
    for i, r in enumerate(rules):
        if r is not None and not callable(r):
            raise FuncgradTypeError(
                f"{what}: rule for argument {i} of {prim.name!r} must be callable or None"
            )
    return tuple(rules)


def defvjp(prim: Primitive, *rules: Callable | None) -> None:
    """Give ``prim`` one VJP rule per positional argument (None: not differentiable).

    A rule is ``rule(g, ans, *args, **kwargs)`` and returns the gradient of that
    argument, of the argument's shape.
    """
    prim.vjps = _check_rules(prim, rules, "defvjp")


def defjvp(prim: Primitive, *rules: Callable | None) -> None:
    """Give ``prim`` one JVP rule per positional argument (None: not differentiable).

    A rule is ``rule(t, ans, *args, **kwargs)`` and returns the output tangent
    caused by tangent ``t`` of that argument.  Without JVP rules, forward mode
    derives them from the VJP rules.
    """
    prim.jvps = _check_rules(prim, rules, "defjvp")
