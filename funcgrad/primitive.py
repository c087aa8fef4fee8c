"""Primitives: raw-array functions that know their derivatives (layer 3).

``primitive(fun)`` wraps a function of raw arrays.  Called with raw values it
*is* that function (no overhead beyond one type check per argument); called
with Nodes it computes on their values and records a new Node on every graph
its arguments are on.  ``defvjp`` / ``defjvp`` attach one derivative rule per
positional argument.  Rules receive the output gradient (or input tangent), the
output and the arguments, and are written with ``funcgrad.numpy`` so that they
are themselves differentiable -- which is all higher orders need.

One way in: :func:`bind` is the general entry of every call.  It unwraps
Nodes and records the result, makes array-likes arrays, hands arrays that run
primitives themselves (fg.replay's, fg.vmap's: :mod:`funcgrad.arrays`) to
their runners, and through :func:`failed` turns other libraries' errors into
documented ones.  ``Primitive.__call__`` and the unary and binary doors are
fast paths for NumPy data and Nodes of it, and give everything else to
``bind``: a new kind of argument (batching, complex dispatch) extends it alone.

>>> import numpy
>>> cube = primitive(lambda x: x ** 3)
>>> defvjp(cube, lambda g, ans, x: g * 3 * x ** 2)
>>> from funcgrad.node import require_grad
>>> cube(require_grad(numpy.array(2.0))).primitive.name
'<lambda>'
"""

from __future__ import annotations

import functools
import operator
import sys
from collections.abc import Callable
from typing import Any

import numpy

from .arrays import SEQUENCES, UNRUN, foreign, mend, run_first
from .backend import NUMPY_TYPES
from .errors import FuncgradTypeError, MissingRuleError
from .node import ACTIVE, Node, new_node, raw_args
from .pickling import by_reference, importable_name

_by_reference = by_reference  # the name pickles made before funcgrad.pickling existed call
from .translation import documented

_EVERY_POSITION = range(sys.maxsize)  # "differentiable in every argument"
_RULE_FIELDS = frozenset({"vjps", "jvps", "vjp_joint", "jvp_joint"})
_PLAIN_FIELDS = frozenset({"library", "vjp_joint"})
# Ufuncs whose Python operator computes the same on two float64 scalars, through NumPy's
# scalar math (errstate included): several times cheaper than the ufunc's call there, and
# a higher derivative of a scalar function makes nothing but such calls.
_SCALAR_MATH = ((numpy.add, operator.add), (numpy.subtract, operator.sub),
                (numpy.multiply, operator.mul))
_F64 = numpy.float64


def _frozen_one(dtype: Any) -> numpy.ndarray:
    """A 0-d array holding one, whose memory is a bytes object: no one can write to it."""
    return numpy.frombuffer(numpy.ones((), dtype).tobytes(), dtype).reshape(())


# The seeds of ``grad``'s folds (a real 0-d output's gradient with respect to itself):
# one array per dtype, the same every call, which cannot change, so that a multiply knows
# them by identity.  A higher derivative's folds multiply Nodes by them over and over
# (the seed passes unchanged through sums); times one, a NumPy scalar of the seed's dtype
# is itself to the bit, so such a product is recorded without being computed, as a Node
# of ``times_unit`` (a multiply whose rules skip the arithmetic the seed makes void: see
# ``funcgrad.numpy.elementwise``).  The graph keeps its shape -- a Node for every
# product, at the same rank -- so every later sum runs in the same order, to the bit.
UNIT_SEEDS = {numpy.dtype(t): _frozen_one(t)
              for t in (numpy.float16, numpy.float32, numpy.float64, numpy.longdouble)}
UNIT_IDS = frozenset(map(id, UNIT_SEEDS.values()))


class Primitive:
    """A named function of raw arrays plus its derivative rules.

    Made by :func:`primitive` (or for funcgrad's own functions, by the numpy
    layer).  Called with raw arrays it runs the function; called with a Node in
    any argument it computes on the values and records a Node.  ``name`` shows in
    graphs and messages; ``vjps`` and ``jvps`` hold the rules set by
    :func:`defvjp` and :func:`defjvp`.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> isinstance(fnp.sin, fg.Primitive), fnp.sin.name
    (True, 'sin')
    >>> fnp.sin(fg.require_grad(numpy.array(0.0))).primitive is fnp.sin
    True
    """

    __slots__ = ("__dict__", "__wrapped__", "differentiable", "impl", "jvp_joint", "jvps",
                 "library", "name", "numpy_impl", "plain", "scalar_impl", "times_unit",
                 "vjp_joint", "vjps")

    def __init__(self, impl: Callable, name: str | None = None, numpy_impl: Callable | None = None):
        # ``impl`` finds the namespace of its arguments itself; ``numpy_impl`` is called
        # directly on NumPy data and Python numbers: the common case, spared a dispatch.
        self.impl = impl
        self.numpy_impl = numpy_impl or impl
        self.name = name or getattr(impl, "__name__", "primitive")
        self.vjps: tuple = ()
        self.jvps: tuple = ()
        # Optional rule giving every argument's gradient at once (custom_vjp,
        # checkpoint, variadic primitives): (g, ans, args, kwargs, positions) -> gradients.
        self.vjp_joint: Callable | None = None
        # Optional rule giving the output tangent from all argument tangents:
        # (pairs of (position, tangent), ans, args, kwargs) -> tangent.
        self.jvp_joint: Callable | None = None
        # Whether the rules are funcgrad's own (funcgrad.numpy's): a fold runs them with
        # the cycle collector paused, user rules with the collector as the user left it.
        self.library = False
        # A multiply's: the primitive its products with a unit seed are recorded as.
        self.times_unit: Primitive | None = None
        self.__wrapped__ = impl
        self.__doc__ = getattr(impl, "__doc__", None)  # in __dict__: help() and Jupyter read it

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name == "numpy_impl":  # numpy_impl, or its operator for two float64 scalars
            ops = [op for ufunc, op in _SCALAR_MATH if value is ufunc]
            object.__setattr__(self, "scalar_impl", ops[0] if ops else value)
        if name in _RULE_FIELDS:  # keep the positions with a rule at hand for bind
            object.__setattr__(self, "differentiable", self._positions_with_rules())
        if name in _PLAIN_FIELDS:  # the fold calls plain rules itself: library, one per arg
            object.__setattr__(self, "plain", getattr(self, "library", False) and getattr(
                self, "vjp_joint", None) is None)

    def _positions_with_rules(self):
        if getattr(self, "vjp_joint", None) is not None or getattr(self, "jvp_joint", None):
            return _EVERY_POSITION
        rules = (getattr(self, "vjps", ()), getattr(self, "jvps", ()))
        return frozenset(i for r in rules for i, f in enumerate(r) if f is not None)

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"

    def __reduce__(self) -> tuple:
        # By reference where it is found under its module and name, as functions are
        # (funcgrad.pickling); else by value, for cloudpickle.
        found = importable_name(self)
        if found is not None:
            return by_reference, found
        state = dict(self.__dict__)
        for field in ("vjps", "jvps", "vjp_joint", "jvp_joint"):
            state[field] = getattr(self, field)
        return _by_value, (type(self), self.impl, self.name, self.numpy_impl, state)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for a in args:
            if type(a) not in NUMPY_TYPES:
                return bind(self, args, kwargs)
        try:
            return self.numpy_impl(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001  (failed re-raises what it cannot mend)
            return failed(self, exc, args, kwargs)

    def vjp(self, g: Any, ans: Any, args: tuple, kwargs: dict | None, parents: list) -> list:
        """The gradients of the arguments in ``parents`` (``(position, Node)`` pairs)."""
        if self.vjp_joint is not None:
            return self.vjp_joint(g, ans, args, kwargs or {}, [i for i, _ in parents])
        vjps = self.vjps
        if len(parents) == 1:  # one parent (a unary primitive's, mostly): no loop
            i = parents[0][0]
            rule = vjps[i] if i < len(vjps) else None
            if rule is not None:
                return [rule(g, ans, *args, **kwargs) if kwargs else rule(g, ans, *args)]
        out = []
        for i, _ in parents:
            rule = vjps[i] if i < len(vjps) else None
            if rule is None:
                raise MissingRuleError(f"primitive {self.name!r} has no VJP rule for argument {i}")
            out.append(rule(g, ans, *args, **kwargs) if kwargs else rule(g, ans, *args))
        return out


def _by_value(cls: type, impl: Callable, name: str, numpy_impl: Callable, state: dict) -> Any:
    prim = cls(impl, name, numpy_impl)
    for key, value in state.items():
        setattr(prim, key, value)
    return prim


class UnaryPrimitive(Primitive):
    """A primitive of one array argument: the same, with a call spared its loop."""

    __slots__ = ()

    def __call__(self, x: Any, **kwargs: Any) -> Any:
        t = type(x)
        if t in NUMPY_TYPES:
            try:
                return self.numpy_impl(x, **kwargs) if kwargs else self.numpy_impl(x)
            except Exception as exc:  # noqa: BLE001
                return failed(self, exc, (x,), kwargs)
        if t is Node and 0 in self.differentiable:
            graphs = x.graphs
            active = ACTIVE.get()
            if not graphs <= active:  # a graph is finished or folded (higher orders): x is
                graphs = graphs & active  # on the others only, or a constant (bind's)
                if not graphs:
                    return bind(self, (x,), kwargs)
            v = x.value
            try:
                if type(v) not in NUMPY_TYPES:
                    value = foreign(self, (v,), kwargs)
                else:
                    value = self.numpy_impl(v, **kwargs) if kwargs else self.numpy_impl(v)
            except Exception as exc:  # noqa: BLE001
                return failed(self, exc, (x,), kwargs)
            return new_node(value, graphs, self, (x,), kwargs or None, x.rank + 1)
        return bind(self, (x,), kwargs)


class BinaryPrimitive(Primitive):
    """A primitive of two array arguments: the same, with a call spared its loop."""

    __slots__ = ()

    def __call__(self, x: Any, y: Any, **kwargs: Any) -> Any:
        tx, ty = type(x), type(y)
        if tx in NUMPY_TYPES:
            if ty in NUMPY_TYPES:
                try:
                    if kwargs:
                        return self.numpy_impl(x, y, **kwargs)
                    return (self.scalar_impl if tx is ty is _F64 else self.numpy_impl)(x, y)
                except Exception as exc:  # noqa: BLE001
                    return failed(self, exc, (x, y), kwargs)
            if ty is not Node or 1 not in self.differentiable:
                return bind(self, (x, y), kwargs)
            node, xv, yv = y, x, y.value  # one Node, one constant: the common cases
        elif tx is not Node:
            return bind(self, (x, y), kwargs)
        elif ty is Node:
            return self._nodes(x, y, kwargs)
        elif ty in NUMPY_TYPES and 0 in self.differentiable:
            node, xv, yv = x, x.value, y
        else:
            return bind(self, (x, y), kwargs)
        return self._one_node(node, x, y, xv, yv, kwargs)

    def _one_node(self, node: Node, x: Any, y: Any, xv: Any, yv: Any, kwargs: dict) -> Any:
        """One Node (``node``, which is ``x`` or ``y``), one NumPy constant: values ``xv``,
        ``yv``."""
        graphs = node.graphs
        active = ACTIVE.get()
        if not graphs <= active:  # a graph is finished or folded (higher orders): the
            graphs = graphs & active  # Node is on the others only (none: bind's constant)
        if graphs:
            v = node.value
            try:
                if type(v) in NUMPY_TYPES:
                    if self.times_unit is not None and id(c := yv if node is x else xv) in (
                            UNIT_IDS) and type(v) is c.dtype.type and not kwargs:  # v * 1: v
                        return new_node(v, graphs, self.times_unit, (x, y), None, node.rank + 1)
                    impl = self.scalar_impl if type(xv) is type(yv) is _F64 else self.numpy_impl
                    value = self.numpy_impl(xv, yv, **kwargs) if kwargs else impl(xv, yv)
                    return new_node(value, graphs, self, (x, y), kwargs or None, node.rank + 1)
                # Else bind: other namespaces may not refuse Nodes in lists.
                if type(x) not in SEQUENCES and type(y) not in SEQUENCES:
                    value = foreign(self, (xv, yv), kwargs)
                    return new_node(value, graphs, self, (x, y), kwargs or None, node.rank + 1)
            except Exception as exc:  # noqa: BLE001
                return failed(self, exc, (x, y), kwargs)
        return bind(self, (x, y), kwargs)

    def _nodes(self, x: Node, y: Node, kwargs: dict) -> Any:
        """Two Nodes: the common case (NumPy data, rules for both, live graphs) spared
        bind's loop."""
        graphs = x.graphs if x.graphs is y.graphs else x.graphs | y.graphs
        xv, yv, differentiable = x.value, y.value, self.differentiable
        if (type(xv) in NUMPY_TYPES and type(yv) in NUMPY_TYPES and 0 in differentiable
                and 1 in differentiable and graphs <= ACTIVE.get()):
            impl = self.scalar_impl if type(xv) is type(yv) is _F64 else self.numpy_impl
            try:
                value = self.numpy_impl(xv, yv, **kwargs) if kwargs else impl(xv, yv)
            except Exception as exc:  # noqa: BLE001
                return failed(self, exc, (x, y), kwargs)
            rank = x.rank if x.rank > y.rank else y.rank  # noqa: FURB136  (max() costs a call)
            return new_node(value, graphs, self, (x, y), kwargs or None, rank + 1)
        return bind(self, (x, y), kwargs)


def bind(prim: Primitive, args: tuple, kwargs: dict) -> Any:
    """Apply ``prim`` to ``args``, whatever they are; record the result on the graphs
    of the Nodes among them.  The general entry of every primitive call."""
    graphs = None
    rank = 0
    raw = list(args)
    native = True  # every raw argument NumPy data: numpy_impl computes
    sequences = ruleless = False
    differentiable = prim.differentiable
    for i, a in enumerate(args):
        t = type(a)
        if t is Node:
            raw[i] = v = a.value
            if type(v) not in NUMPY_TYPES:
                native = False
            g = a.graphs
            if graphs is None:
                graphs = g
            elif g is not graphs:
                graphs = graphs | g
            if a.rank >= rank:
                rank = a.rank + 1
            if i not in differentiable:
                ruleless = True
        elif t in SEQUENCES:
            sequences = True
        elif t not in NUMPY_TYPES:
            native = False
    if sequences or not native:
        value = run_first(prim, args, kwargs, graphs, sequences, native)
        if value is not UNRUN:
            return value
    try:
        if not native:
            value = foreign(prim, raw, kwargs)
        else:
            value = prim.numpy_impl(*raw, **kwargs) if kwargs else prim.numpy_impl(*raw)
    except Exception as exc:  # noqa: BLE001
        return failed(prim, exc, args, kwargs, graphs)
    if graphs is None:  # no Node: nothing to record
        return value
    active = ACTIVE.get()
    if graphs <= active and not ruleless:
        return new_node(value, graphs, prim, args, kwargs or None, rank)
    return _record_partly(prim, value, graphs, active, args, raw, kwargs, rank, ruleless)


def _record_partly(prim: Primitive, value: Any, graphs: frozenset, active: frozenset,
                   args: tuple, raw: list, kwargs: dict, rank: int, ruleless: bool) -> Any:
    """bind's rarer end: record on the graphs still recorded on (not on finished ones,
    nor on one being folded), keeping no reference to the Nodes that are constants
    here; refuse a Node where ``prim`` has no rule."""
    graphs = graphs & active
    if not graphs:
        return value
    args = tuple([r if type(a) is Node and a.graphs.isdisjoint(active) else a
                  for a, r in zip(args, raw, strict=True)])
    for i, a in enumerate(args):
        if ruleless and type(a) is Node and i not in prim.differentiable:
            raise MissingRuleError(
                f"primitive {prim.name!r} has no derivative rule for argument {i} "
                f"(a Node on graph {a.backprop_id.name!r}); give one with fg.defvjp")
    return new_node(value, graphs, prim, args, kwargs or None, rank)


def failed(prim: Primitive, exc: Exception, args: tuple, kwargs: dict, graphs: Any = None) -> Any:
    """The one handler of a primitive's errors, called within ``except``: a
    ``TypeError`` from an array-like (a list holding Nodes or device arrays) or a
    batched value inside a tuple is mended by calling again without it; other
    libraries' errors from funcgrad's own primitives become documented ones
    (funcgrad.translation); anything else is raised unchanged."""
    if isinstance(exc, TypeError):
        value = mend(prim, args, kwargs, graphs)
        if value is UNRUN:
            raise exc
        return value
    if not prim.library:  # a user primitive's errors are the user's own
        raise exc
    documented(prim.name, exc, raw_args(args), kwargs)


def defbatch(prim: Primitive, rule: Callable) -> None:
    """Give ``prim`` a batching rule for :func:`fg.vmap <funcgrad.vmap>`.

    ``rule(args, axes, **kwargs) -> (out, out_axis)``: ``args`` are the
    primitive's positional arguments with the mapped one(s) holding every
    example, ``axes[i]`` the mapped axis of argument ``i`` (non-negative) or
    None where it is not mapped; it returns the batched result and its mapped
    axis (non-negative, or None for a result that is the same for every
    example).  Write it with ``funcgrad.numpy``: its arguments may be Nodes
    when the mapped call is differentiated.  Without a rule, ``vmap`` runs the
    primitive once per example (with a ``fg.VmapFallbackWarning``).

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> double = fg.primitive(lambda x: 2.0 * x)
    >>> fg.defbatch(double, lambda args, axes: (double(args[0]), axes[0]))
    >>> fg.vmap(double)(numpy.array([[1.0, 2.0], [3.0, 4.0]]))
    array([[2., 4.],
           [6., 8.]])
    """
    if not isinstance(prim, Primitive):
        raise FuncgradTypeError(f"defbatch needs a primitive (from fg.primitive), got {prim!r}")
    if not callable(rule):
        raise FuncgradTypeError(f"defbatch: the rule for {prim.name!r} must be callable")
    prim.batch = rule


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

    A rule is ``rule(g, ans, *args, **kwargs)`` -- the output's gradient, the
    output, and the primitive's arguments -- and returns the gradient of that
    argument, of the argument's shape.  Write rules with ``funcgrad.numpy``: at
    higher orders they receive Nodes and are differentiated in turn.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> cube = primitive(lambda x: x ** 3)                   # fg.primitive
    >>> defvjp(cube, lambda g, ans, x: g * 3.0 * x ** 2)      # fg.defvjp
    >>> fg.grad(cube)(2.0), fg.grad(fg.grad(cube))(2.0)
    (array(12.), array(12.))
    """
    prim.vjps = _check_rules(prim, rules, "defvjp")


def defjvp(prim: Primitive, *rules: Callable | None) -> None:
    """Give ``prim`` one JVP rule per positional argument (None: not differentiable).

    A rule is ``rule(t, ans, *args, **kwargs)`` and returns the output tangent
    caused by tangent ``t`` of that argument.  Without JVP rules, forward mode
    derives them from the VJP rules.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> scale = primitive(lambda x, k: k * x)                # fg.primitive
    >>> defjvp(scale, lambda t, ans, x, k: k * t, None)     # fg.defjvp; k: no derivative
    >>> fg.jvp(lambda x: scale(x, 3.0), (numpy.array(1.0),), (numpy.array(1.0),))
    (array(3.), array(3.))
    """
    prim.jvps = _check_rules(prim, rules, "defjvp")
