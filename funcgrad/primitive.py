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
import sys
from collections.abc import Callable
from typing import Any

import numpy

from .backend import NUMPY_TYPES
from .errors import (
    FuncgradError,
    FuncgradIndexError,
    FuncgradTypeError,
    FuncgradValueError,
    MissingRuleError,
    NodeConversionError,
    describe_arguments,
)
from .node import ACTIVE, Node, make_node

# Errors an array library raises that funcgrad does not document (an index out of
# range, a huge Python int, an object array's missing method, nesting too deep, a
# date NumPy cannot read):
# raised by one of funcgrad's own primitives, each becomes the documented error
# that fits, naming the primitive and describing its arguments.  A user
# primitive's errors are the user's own and pass unchanged.
# MemoryError too: a result too large to allocate is a ValueError naming its size.
_FOREIGN = (AttributeError, LookupError, ArithmeticError, RuntimeError, MemoryError,
            numpy.ma.MAError)


def translated(name: str, exc: BaseException, args: tuple, kwargs: dict | None) -> Any:
    """The documented error standing for ``exc``, raised by funcgrad's ``name`` called
    with ``args``; None when ``exc`` is documented already."""
    if isinstance(exc, (FuncgradError, FloatingPointError)) or not isinstance(exc, _FOREIGN):
        return None
    text = f"{name}: {exc} ({describe_arguments(args, kwargs)})"
    if isinstance(exc, IndexError):
        return FuncgradIndexError(text)
    if isinstance(exc, (AttributeError, KeyError, NotImplementedError)):
        return FuncgradTypeError(text)
    return FuncgradValueError(text)


def _reraise(prim: Any, exc: BaseException, args: tuple, kwargs: dict | None) -> None:
    err = translated(prim.name, exc, args, kwargs) if prim.library else None
    if err is None:
        raise exc
    raise err from exc


def guarded(fun: Callable, name: str) -> Callable:
    """``fun`` (one of funcgrad's own functions) raising only documented errors.

    The errors of :func:`translated` become documented ones, as primitives'
    do; for the public functions of ``funcgrad.numpy`` and ``funcgrad.nn`` that
    are not primitives themselves.
    """

    @functools.wraps(fun)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fun(*args, **kwargs)
        except _FOREIGN as exc:
            err = translated(name, exc, args, kwargs)
            if err is None:
                raise
            raise err from exc

    return call


_EVERY_POSITION = range(sys.maxsize)  # "differentiable in every argument"
_RULE_FIELDS = frozenset({"vjps", "jvps", "vjp_joint", "jvp_joint"})


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

    __slots__ = (
        "__dict__",
        "__wrapped__",
        "differentiable",
        "impl",
        "jvp_joint",
        "jvps",
        "library",
        "name",
        "numpy_impl",
        "vjp_joint",
        "vjps",
    )

    def __init__(self, impl: Callable, name: str | None = None, numpy_impl: Callable | None = None):
        # ``impl`` finds the namespace of its arguments itself; ``numpy_impl``,
        # when given, is called directly when every argument is NumPy data or a
        # Python number -- the common case, spared one call and one dispatch.
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
        # Whether the rules are funcgrad's own (the funcgrad.numpy families): a
        # fold runs them with the cycle collector paused, and any other rule --
        # user code -- with the collector as the user left it.
        self.library = False
        self.__wrapped__ = impl
        self.__doc__ = getattr(impl, "__doc__", None)  # in __dict__: help() and Jupyter read it

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name in _RULE_FIELDS:  # keep the positions with a rule at hand for bind
            object.__setattr__(self, "differentiable", self._positions_with_rules())

    def _positions_with_rules(self):
        if getattr(self, "vjp_joint", None) is not None or getattr(self, "jvp_joint", None):
            return _EVERY_POSITION
        rules = (getattr(self, "vjps", ()), getattr(self, "jvps", ()))
        return frozenset(i for r in rules for i, f in enumerate(r) if f is not None)

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"

    def __reduce__(self) -> tuple:
        # A primitive found under its module and name (every primitive of funcgrad,
        # and users' module-level ones) pickles by reference, as functions do: the
        # worker that unpickles it gets that very object, rules included.  Others
        # (made in a function, or in __main__) pickle by value, for cloudpickle.
        found = _named(self)
        if found is not None:
            return _by_reference, found
        state = {k: v for k, v in self.__dict__.items()}
        for field in ("vjps", "jvps", "vjp_joint", "jvp_joint"):
            state[field] = getattr(self, field)
        return _by_value, (type(self), self.impl, self.name, self.numpy_impl, state)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for a in args:
            if type(a) not in NUMPY_TYPES:
                return self._dispatch(args, kwargs)
        try:
            return self.numpy_impl(*args, **kwargs)
        except TypeError:  # a list or tuple argument holds Nodes (or device arrays)
            converted = array_likes(args)
            if converted is None:
                return _batched_inside(self, args, kwargs)
            return self(*converted, **kwargs)
        except _FOREIGN as exc:
            _reraise(self, exc, args, kwargs)

    def _dispatch(self, args: tuple, kwargs: dict) -> Any:
        """Arguments that are not all NumPy data: record if any is a Node, whatever its
        position; else compute in the namespace of the raw arrays."""
        for a in args:
            if type(a) is Node:
                return bind(self, args, kwargs)
        converted = array_likes(args)
        if converted is not None:
            return self(*converted, **kwargs)
        try:
            return foreign(self, args, kwargs)
        except _FOREIGN as exc:
            _reraise(self, exc, args, kwargs)

    def vjp(self, g: Any, ans: Any, args: tuple, kwargs: dict | None, parents: list) -> list:
        """The gradients of the arguments in ``parents`` (``(position, Node)`` pairs)."""
        if self.vjp_joint is not None:
            return self.vjp_joint(g, ans, args, kwargs or {}, [i for i, _ in parents])
        vjps = self.vjps
        out = []
        for i, _ in parents:
            rule = vjps[i] if i < len(vjps) else None
            if rule is None:
                raise MissingRuleError(f"primitive {self.name!r} has no VJP rule for argument {i}")
            out.append(rule(g, ans, *args, **kwargs) if kwargs else rule(g, ans, *args))
        return out


def _named(obj: Any) -> tuple[str, str] | None:
    """``(module, qualname)`` under which ``obj`` itself can be imported, or None."""
    module = obj.__dict__.get("__module__")
    qualname = obj.__dict__.get("__qualname__")
    if not module or not qualname or module == "__main__" or "<locals>" in qualname:
        return None
    try:
        return (module, qualname) if _by_reference(module, qualname) is obj else None
    except (ImportError, AttributeError):
        return None


def _by_reference(module: str, qualname: str) -> Any:
    """The object named ``qualname`` in ``module`` (what a pickled reference names)."""
    obj = sys.modules.get(module)
    if obj is None:
        import importlib

        obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


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
            except TypeError:  # a list or tuple holding Nodes (or device arrays)
                converted = array_likes((x,))
                if converted is None:
                    return _batched_inside(self, (x,), kwargs)
                return self(*converted, **kwargs)
            except _FOREIGN as exc:
                _reraise(self, exc, (x,), kwargs)
        if t is Node:
            graphs = x.graphs
            if 0 in self.differentiable and graphs <= ACTIVE.get():  # bind's common case
                v = x.value
                try:
                    if type(v) in NUMPY_TYPES:
                        value = self.numpy_impl(v, **kwargs) if kwargs else self.numpy_impl(v)
                    else:
                        value = foreign(self, (v,), kwargs)
                except _FOREIGN as exc:
                    _reraise(self, exc, (x,), kwargs)
                return make_node(value, graphs, self, (x,), kwargs or None, x.rank + 1)
            return bind(self, (x,), kwargs)
        try:
            return foreign(self, (x,), kwargs)
        except _FOREIGN as exc:
            _reraise(self, exc, (x,), kwargs)


class BinaryPrimitive(Primitive):
    """A primitive of two array arguments: the same, with a call spared its loop."""

    __slots__ = ()

    def __call__(self, x: Any, y: Any, **kwargs: Any) -> Any:
        tx, ty = type(x), type(y)
        if tx in NUMPY_TYPES and ty in NUMPY_TYPES:
            try:
                return self.numpy_impl(x, y, **kwargs) if kwargs else self.numpy_impl(x, y)
            except TypeError:  # a list or tuple holding Nodes (or device arrays)
                converted = array_likes((x, y))
                if converted is None:
                    return _batched_inside(self, (x, y), kwargs)
                return self(*converted, **kwargs)
            except _FOREIGN as exc:
                _reraise(self, exc, (x, y), kwargs)
        if tx is Node and ty in NUMPY_TYPES:  # bind's common cases: one Node, one constant
            node, i, xv, yv = x, 0, x.value, y
        elif ty is Node and tx in NUMPY_TYPES:
            node, i, xv, yv = y, 1, x, y.value
        else:
            return self._dispatch((x, y), kwargs)
        graphs = node.graphs
        if i not in self.differentiable or not graphs <= ACTIVE.get():
            return bind(self, (x, y), kwargs)
        try:
            if type(node.value) in NUMPY_TYPES:
                value = self.numpy_impl(xv, yv, **kwargs) if kwargs else self.numpy_impl(xv, yv)
            elif type(xv) in _SEQUENCES or type(yv) in _SEQUENCES:
                return bind(self, (x, y), kwargs)  # other namespaces may not raise on Nodes
            else:
                value = foreign(self, (xv, yv), kwargs)
        except NodeConversionError:  # the constant is a list or tuple holding Nodes
            converted = array_likes((x, y))
            if converted is None:
                raise
            return self(*converted, **kwargs)
        except _FOREIGN as exc:
            _reraise(self, exc, (x, y), kwargs)
        return make_node(value, graphs, self, (x, y), kwargs or None, node.rank + 1)


def bind(prim: Primitive, args: tuple, kwargs: dict) -> Any:
    """Apply ``prim`` to arguments some of which are Nodes; record the result."""
    graphs = None
    rank = 0
    raw = list(args)
    ruleless = None
    differentiable = prim.differentiable
    impl = prim.numpy_impl
    sequences = False
    for i, a in enumerate(args):
        t = type(a)
        if t is Node:
            raw[i] = v = a.value
            if type(v) not in NUMPY_TYPES:
                impl = None  # not NumPy: computed by foreign()
            g = a.graphs
            if graphs is None:
                graphs = g
            elif g is not graphs:
                graphs = graphs | g
            r = a.rank
            if r >= rank:
                rank = r + 1
            if i not in differentiable:
                ruleless = i
        elif t in _SEQUENCES:
            sequences = True
        elif t not in NUMPY_TYPES:
            impl = None
    if _BATCHED and (impl is None or sequences):  # vmap: a batched value of a newer level
        run = _batched_first(args, graphs)         # than every graph is unwrapped first
        if run is not None:
            return run(prim, args, kwargs)
    if sequences and (impl is None or impl is prim.impl):  # other namespaces may not raise
        converted = array_likes(args)                       # on Nodes in lists
        if converted is not None:
            return prim(*converted, **kwargs)
    try:
        if impl is None:
            value = foreign(prim, raw, kwargs)
        else:
            value = impl(*raw, **kwargs) if kwargs else impl(*raw)
    except NodeConversionError:  # another argument is a list or tuple holding Nodes
        converted = array_likes(args)
        if converted is None:
            raise
        return prim(*converted, **kwargs)
    except _FOREIGN as exc:
        _reraise(prim, exc, tuple(raw), kwargs)
    active = ACTIVE.get()
    if not graphs <= active:  # some graph is finished, or being folded
        graphs = graphs & active
        if not graphs:
            return value
        # Keep no reference to Nodes that are constants here.
        args = tuple([
            r if type(a) is Node and a.graphs.isdisjoint(active) else a
            for a, r in zip(args, raw, strict=True)
        ])
    if ruleless is not None:
        _check_rules_exist(prim, args)
    return make_node(value, graphs, prim, args, kwargs or None, rank)


# -- arrays that run primitives themselves --------------------------------------
# fg.replay traces a function with its arrays wrapped in recording types; such a
# type registers a runner, called instead of ``prim.impl`` when an argument is one
# of its arrays, which records the call as one step of a plan.  The NumPy fast
# path never looks here: only arguments of other namespaces do.

_RUNNERS: dict[type, Callable] = {}


def register_runner(array_type: type, run: Callable) -> None:
    """Make ``run(prim, args, kwargs)`` compute a primitive given an ``array_type`` argument."""
    _RUNNERS[array_type] = run


def foreign(prim: Primitive, args: Any, kwargs: dict) -> Any:
    """``prim`` on raw arguments that are not all NumPy data: by the runner of an
    argument's type when there is one, else by ``prim.impl`` in their namespace."""
    if _BATCHED:  # vmap's batched values first: their rules call the other runners
        run = _batched_first(args, None)
        if run is not None:
            return run(prim, tuple(args), kwargs)
    if _RUNNERS:
        for a in args:
            run = _RUNNERS.get(type(a))
            if run is not None:
                return run(prim, tuple(args), kwargs)
    return prim.impl(*args, **kwargs)


# -- batched values (fg.vmap) --------------------------------------------------
# vmap maps a function over an axis by calling it once with batched values: a
# registered type holding (value, batch axis, level).  A primitive given one runs
# its batching rule (``defbatch``) instead of its function.  Levels and graphs
# share one order (creation): where a Node's graphs are all older than a batched
# argument's level, the batched value is unwrapped first and the Node is a
# constant of the rule; otherwise the Node is unwrapped first, as any Node is.

_BATCHED: dict[type, Callable] = {}


def register_batched(array_type: type, run: Callable) -> None:
    """Make ``run(prim, args, kwargs)`` compute ``prim`` given an ``array_type`` argument
    (one with a ``level`` attribute of an ``ordinal``), before any other runner."""
    _BATCHED[array_type] = run


def _batched_first(args: Any, graphs: Any) -> Callable | None:
    """The runner of the newest batched argument (also inside a list or tuple argument),
    when it is newer than every graph in ``graphs``; else None."""
    newest, run = -1, None
    for a in args:
        t = type(a)
        if t in _BATCHED:
            if a.level.ordinal > newest:
                newest, run = a.level.ordinal, _BATCHED[t]
        elif t is list or t is tuple:
            for b in a:
                if type(b) in _BATCHED and b.level.ordinal > newest:
                    newest, run = b.level.ordinal, _BATCHED[type(b)]
    if run is None:
        return None
    if graphs:  # graphs still recorded on (a finished graph's Nodes are constants)
        active = ACTIVE.get()
        live = [g.ordinal for g in graphs if g in active]
        if live and newest < max(live):
            return None
    return run


def _batched_inside(prim: Primitive, args: tuple, kwargs: dict) -> Any:
    """Within ``except TypeError``: a batched value inside a tuple argument (an index)
    reached raw code, which refused it: the call is batched instead; else re-raise."""
    run = _batched_first(args, None) if _BATCHED else None
    if run is None:
        raise  # noqa: PLE0704  (the TypeError being handled)
    return run(prim, args, kwargs)


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


# -- array-likes: lists and tuples that hold Nodes -------------------------------
# NumPy takes nested lists of numbers as arrays; so does funcgrad, when they
# hold Nodes too: such an argument becomes one Node (``fnp.array`` of it) and
# the gradient flows through every Node inside.  The converter lives a layer
# up and is registered when funcgrad.numpy is imported.

_to_array: list[Callable] = []
_SEQUENCES = (list, tuple)


def register_array_like(convert: Callable) -> None:
    """Set the function that turns a (nested) list holding Nodes into one Node."""
    _to_array[:] = [convert]


def _any_inside(obj: Any, kinds: tuple, found: Callable[[Any], bool]) -> bool:
    """Whether some item of ``obj``, a list or tuple, at any depth inside lists and tuples
    of ``kinds``, is ``found``.  Without recursion: any depth, and lists holding themselves."""
    stack, seen = [obj], set()
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        for item in o:
            if type(item) in kinds:
                stack.append(item)
            elif found(item):
                return True
    return False


def _is_node(x: Any) -> bool:
    return type(x) is Node


def holds_node(obj: Any) -> bool:
    """Whether ``obj`` is a Node, or a list or tuple holding one at any depth."""
    t = type(obj)
    if t is Node:
        return True
    return (t is list or t is tuple) and _any_inside(obj, _SEQUENCES, _is_node)


def _is_device_array(x: Any) -> bool:
    return type(x) not in NUMPY_TYPES and hasattr(x, "shape")


def _holds_device_array(obj: Any) -> bool:
    """Whether a list holds (at any depth) an array that is not NumPy's (CuPy, Dask...)."""
    return _any_inside(obj, (list,), _is_device_array)


def _is_array_like(a: Any) -> bool:
    # Tuples holding device arrays are left alone: they are indices (x[i, j]).
    t = type(a)
    return (t is list or t is tuple) and (holds_node(a) or t is list and _holds_device_array(a))


def array_likes(args: tuple) -> tuple | None:
    """``args`` with each list or tuple holding a Node -- or each list holding device
    arrays, which NumPy cannot take -- made one array; None if there is none."""
    if not _to_array or not any(_is_array_like(a) for a in args):
        return None
    convert = _to_array[0]
    return tuple(convert(a) if _is_array_like(a) else a for a in args)


def _check_rules_exist(prim: Primitive, args: tuple) -> None:
    for i, a in enumerate(args):
        if type(a) is Node and i not in prim.differentiable:
            raise MissingRuleError(
                f"primitive {prim.name!r} has no derivative rule for argument {i} "
                f"(a Node on graph {a.backprop_id.name!r}); give one with fg.defvjp"
            )


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
