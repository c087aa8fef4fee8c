"""Nodes: the vertices of the graphs (layer 2).

A :class:`Node` is one immutable vertex of a computation graph: a value, the
primitive that made it, the arguments it was made from, and the set of graphs
(:class:`~funcgrad.context.BackpropId`) it belongs to.  One value can sit on several graphs at
once -- ChainerX's *multiple graphs* -- and a backward pass on one of them
records its own arithmetic on all the others, which is what makes gradients
differentiable again.

>>> import numpy
>>> x = require_grad(numpy.array([1.0, 2.0]))
>>> y = x * x
>>> y.primitive.name, y.rank, is_grad_required(y)
('multiply', 1, True)
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy

from . import backend
from .backend import float_array

# Graph identities and the recording context live in funcgrad.context (layer 0);
# node re-exports the names the layers above have always imported from it.
from .context import (  # noqa: F401
    ACTIVE,
    DEFAULT_BACKPROP_ID,
    BackpropId,
    backprop_scope,
    check_id,
    collector_paused,
    next_ordinal,
    recording,
    user_code,
)
from .errors import (
    BackpropError,
    FrozenNodeError,
    FuncgradTypeError,
    NodeConversionError,
)

_serials = itertools.count()


def conversion_error(node: Node, what: str) -> NodeConversionError:
    """The error for a Node converted to ``what`` (a Python float, an index...) by accident."""
    return NodeConversionError(
        f"cannot convert a funcgrad Node (shape {node.shape}, dtype {node.dtype}) to {what} "
        "inside a differentiated function: read its value with fg.value_of(x) (no gradient "
        "flows through it), or keep differentiating with funcgrad.numpy (fnp) functions"
    )


def _refusal(what: str):
    """A conversion method of Node that refuses: Nodes never become Python values."""

    def convert(self):
        raise conversion_error(self, what)

    return convert


def _summary(value: Any, width: int = 60) -> str:
    """A short look at an array's numbers: a few at each end, on one line."""
    if isinstance(value, (numpy.ndarray, numpy.generic)):
        text = numpy.array2string(numpy.asarray(value), threshold=8, edgeitems=2, precision=4,
                                  max_line_width=10**6, separator=" ")
    else:  # another namespace: its own repr (lazy arrays stay lazy)
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


class _NodeSlots:
    # __weakref__: caches and user code may watch Nodes without keeping them alive.
    __slots__ = ("__weakref__", "args", "graphs", "kwargs", "primitive", "rank", "serial", "value")


class _NodeUnderConstruction(_NodeSlots):
    # Filled by plain slot assignment, then turned into a (frozen) Node by
    # swapping its class: three times cheaper than a frozen class's __init__,
    # and a node is built for every primitive applied to a Node.  Calling the
    # class returns the Node (type() calls __init__ before looking at the class).
    __slots__ = ()

    def __init__(self, value, graphs, primitive, args, kwargs, rank):
        self.value = value
        self.graphs = graphs
        self.primitive = primitive
        self.args = args
        self.kwargs = kwargs
        self.rank = rank
        self.serial = next(_serials)
        _set_class(self, "__class__", Node)


class Node(_NodeSlots):
    """An immutable graph node.  ``hash`` is by identity; ``==`` is elementwise.

    Built by primitives and :func:`require_grad`, never by hand.
    ``value`` is the raw array; ``inputs`` the Nodes it was computed from;
    ``rank`` is 0 for a leaf, else 1 + the highest rank of its inputs;
    ``graphs`` the frozenset of :class:`BackpropId` it is on; ``args`` and
    ``kwargs`` what its primitive was called with (Nodes included).

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> x = fg.require_grad(numpy.array([1.0, 2.0]))
    >>> y = fnp.sin(x) * 2.0
    >>> y.shape, y.dtype, y.primitive.name, y.rank, y.inputs[0].primitive.name
    ((2,), dtype('float64'), 'multiply', 2, 'sin')
    >>> y == fnp.sin(x) * 2.0, hash(y) == hash(fnp.sin(x) * 2.0)  # values, identity
    (array([ True,  True]), False)
    """

    __slots__ = ()

    def __init__(self, *args, **kwargs):
        raise FuncgradTypeError(
            "Nodes are made by primitives and fg.require_grad, not constructed directly"
        )

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenNodeError(f"Node is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenNodeError(f"Node is immutable: cannot delete {name!r}")

    def __copy__(self) -> Node:
        return self

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise FuncgradTypeError(
            f"cannot pickle a funcgrad Node (shape {self.shape}, dtype {self.dtype}): Nodes are "
            "local to the graph of the call that made them; ship raw arrays instead "
            "(fg.value_of(x), or the results of fg.grad and friends, which are raw arrays)"
        )

    def __deepcopy__(self, memo: dict) -> Node:
        return self

    # -- read-only views --------------------------------------------------
    @property
    def shape(self) -> tuple:
        """The shape of the value."""
        return self.value.shape

    @property
    def dtype(self) -> numpy.dtype:
        """The dtype of the value."""
        return self.value.dtype

    @property
    def ndim(self) -> int:
        """The number of dimensions of the value."""
        return self.value.ndim

    @property
    def size(self) -> int:
        """The number of elements of the value."""
        return self.value.size

    @property
    def device(self) -> str:
        """Where the value lives: ``'cpu'`` or ``'cuda:N'`` (see :func:`device_of`)."""
        return backend.device_of(self.value)

    @property
    def inputs(self) -> tuple:
        """The Nodes among this node's arguments, in argument order."""
        return tuple(a for a in self.args if type(a) is Node)

    @property
    def backprop_ids(self) -> tuple:
        """Every graph this node is on, oldest first."""
        return tuple(sorted(self.graphs, key=lambda b: b.ordinal))

    @property
    def backprop_id(self) -> BackpropId:
        """The newest graph this node is on (its only one, usually)."""
        return max(self.graphs, key=lambda b: b.ordinal)

    def __repr__(self) -> str:
        name = "leaf" if self.primitive is None else self.primitive.name
        graphs = ", ".join(b.name for b in self.backprop_ids)
        return (f"Node({name}, shape={self.shape}, dtype={self.dtype}, graphs=[{graphs}], "
                f"value={_summary(self.value)})")

    # -- accidental conversions are loud ----------------------------------
    __float__ = _refusal("a Python float")
    __int__ = _refusal("a Python int")
    __index__ = _refusal("an index")
    __complex__ = _refusal("a Python complex")
    __bool__ = _refusal("a truth value (if/while/and/or)")

    def __len__(self) -> int:
        if not self.shape:
            raise FuncgradTypeError("len() of a 0-d Node")
        return self.shape[0]


_set_class = object.__setattr__


def make_node(value, graphs, primitive, args, kwargs, rank) -> Node:
    """A new Node with the next serial number (creation order breaks rank ties)."""
    return _NodeUnderConstruction(value, graphs, primitive, args, kwargs, rank)


new_node = _NodeUnderConstruction  # make_node less a call: the primitives' hot paths


def serial_mark() -> int:
    """A number above every Node's serial so far and below every later Node's.

    Closure conversion (``checkpoint``, ``custom_vjp``) tells the Nodes a call
    made from those it was given or closed over by comparing with a mark.
    """
    return next(_serials)


def raw_args(args: tuple) -> tuple:
    """``args`` with each Node replaced by its value (unrolled for the usual arities)."""
    n = len(args)
    if n == 1:
        a = args[0]
        return (a.value if type(a) is Node else a,)
    if n == 2:
        a, b = args
        return (a.value if type(a) is Node else a, b.value if type(b) is Node else b)
    return tuple([a.value if type(a) is Node else a for a in args])


def value_of(x: Any) -> Any:
    """The raw array inside ``x`` (``x`` itself when it is not a Node).

    >>> value_of(require_grad(numpy.ones(2)))
    array([1., 1.])
    """
    return x.value if type(x) is Node else x


def device_of(x: Any) -> str:
    """``'cpu'`` or ``'cuda:N'``: where the array (or Node) ``x`` lives.

    >>> device_of(numpy.zeros(3))
    'cpu'
    """
    return backend.device_of(value_of(x))


def to_device(x: Any, device: str) -> Any:
    """A raw copy of ``x`` on ``device`` (a Node is read with :func:`value_of`).

    ``device`` is ``'cpu'``, ``'cuda:N'`` (with CuPy) or a registered namespace's
    device; a NumPy array asked for ``'cpu'`` is returned as it is.

    >>> to_device(require_grad(numpy.array([1.0, 2.0])), 'cpu')
    array([1., 2.])
    """
    return backend.to_device(value_of(x), device)


# fg.vmap's: a Node a new graph takes as a leaf inside a vmap newer than the Node's
# graphs becomes a constant of that vmap first, so that levels and graphs stay nested.
LIFT: list = []


def require_grad(x: Any, backprop_id: BackpropId | None = None) -> Node:
    """A leaf Node holding ``x`` on the graph ``backprop_id`` (default graph if None).

    ``x`` may be a raw array, a Python number, or a Node on other graphs, which
    then sits on both.  Integer and boolean data cannot require a gradient.

    >>> x = require_grad(numpy.array(2.0))
    >>> x.rank, x.primitive is None
    (0, True)
    """
    bp = backprop_id if type(backprop_id) is BackpropId else check_id(backprop_id)
    if bp not in ACTIVE.get() or bp.closed:
        raise BackpropError(
            f"graph {bp.name!r} is not open here: use its BackpropId inside its "
            "backprop_scope block"
        )
    if type(x) is Node and LIFT:  # inside a vmap newer than x's graphs: x is its constant
        x = LIFT[0](x)
    if type(x) is Node:
        if bp in x.graphs:
            raise BackpropError(f"this Node already requires grad on graph {bp.name!r}")
        # On bp it is a leaf; on x's own graphs it is x, passed through.
        return make_node(x.value, x.graphs | {bp}, _JOIN, (x,), None, x.rank + 1)
    if isinstance(x, (numpy.matrix, numpy.ma.MaskedArray)):
        # Their arithmetic is not an array's (a matrix's * is a matrix product, a
        # mask is dropped by most functions): gradients would be silently wrong.
        raise FuncgradTypeError(
            f"cannot differentiate with respect to a {type(x).__module__}.{type(x).__name__}: "
            "pass a plain array (numpy.asarray(m), or m.filled(value) for a masked array)"
        )
    if type(x) is float or (isinstance(x, int) and not isinstance(x, bool)) or (
            type(x) in backend.WEAK_TYPES):
        x = float_array(x, "require_grad")
    elif type(x) is complex:
        x = numpy.asarray(x)  # complex128
    elif isinstance(x, numpy.generic):  # a NumPy scalar: hold a 0-d array
        x = numpy.asarray(x)
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        raise FuncgradTypeError(
            f"require_grad needs an array or a number, got {type(x).__name__}"
        )
    if not backend.is_inexact_dtype(dtype):
        raise FuncgradTypeError(
            f"cannot differentiate with respect to an array of dtype {dtype}: only "
            "floating dtypes (float16, float32, float64, complex64, complex128) carry gradients"
        )
    return make_node(x, frozenset((bp,)), None, (), None, 0)


def is_grad_required(node: Any, backprop_id: BackpropId | None = None) -> bool:
    """Whether ``node`` is on the graph ``backprop_id`` (the default graph if None).

    False for anything that is not a Node.

    >>> with backprop_scope('bp') as bp:
    ...     x = require_grad(numpy.ones(2), bp)
    ...     is_grad_required(x, bp), is_grad_required(x * 2.0, bp), is_grad_required(x)
    (True, True, False)
    """
    bp = check_id(backprop_id)
    return type(node) is Node and bp in node.graphs


class PassThrough:
    """A pseudo-primitive whose output is its one argument, unchanged.

    ``require_grad`` uses it to put a Node on one more graph (on the new graph
    the result is a leaf; on the old ones, the argument passed through), and
    the combinators to take a Node off the graph of a call that has finished.
    """

    vjp_joint = None
    library = True
    plain = True  # the fold calls its one rule itself (primitive.Primitive.plain)
    vjps = (lambda g, ans, x: g,)

    def __init__(self, name: str):
        self.name = name

    def vjp(self, g, ans, args, kwargs, parents):
        return [g]

    @staticmethod
    def jvp_joint(tangents, ans, args, kwargs):
        return tangents[0][1]

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"


_JOIN = PassThrough("require_grad")
