"""Function transformations: vjp, grad, jvp (layer 6); Jacobians are in ``jacobians``.

Each is a few lines over ``trace_call`` (run a function on fresh leaves of a
new graph) and the two folds.  Every call opens a graph of its own, so nested
calls never confuse their levels: an inner gradient is recorded on every outer
graph and stays differentiable there.  ``argnums`` and the dtype rules are
lifted in ``funcgrad.arguments``.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda x: x * fg.grad(lambda y: x + y)(1.0))(1.0)
array(1.)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy

from . import tree
from .arguments import (
    argnum_tuple,
    as_primal,
    check_complex,
    is_data,
    is_float,
    partial_at,
    scalar_seed,
)
from .backend import as_array
from .backprop import gradients
from .backprop_utils import check_like, owned, seed
from .batching import batched, is_batched
from .errors import FuncgradTypeError, FuncgradValueError
from .forward import forward
from .node import BackpropId, Node, PassThrough, make_node, recording, require_grad, value_of
from .numpy import zeros_like

_STRIP = PassThrough("identity")
# Arguments of these exact types are leaves: a tuple of them needs no tree walk.
_LEAVES = frozenset((float, int, complex, numpy.ndarray, numpy.float64, Node))


def off_graph(x: Any, bp: BackpropId) -> Any:
    """``x`` without graph ``bp``: a raw array, or a Node on its other graphs."""
    if type(x) is not Node:
        return as_array(x)
    if bp not in x.graphs:
        return x
    rest = x.graphs - {bp}
    if not rest:
        return as_array(x.value)
    return make_node(x.value, rest, _STRIP, (x,), None, x.rank + 1)


@functools.cache
def _tuple_def(n: int) -> Any:
    return tree.flatten((0,) * n)[1]


def trace_call(fun: Callable, primals: Any, name: str, has_aux: bool = False,
               data: bool = False):
    """Run ``fun`` on leaves of a fresh graph: (graph, leaves, treedef, out, aux).

    With ``data``, integer and boolean leaves pass to ``fun`` unchanged (and
    stand in ``leaves`` as they are); otherwise they raise ``TypeError``.
    """
    bp = BackpropId(name)
    primals = tuple(primals)
    flat = all(type(p) in _LEAVES for p in primals)
    leaves, treedef = (list(primals), _tuple_def(len(primals))) if flat else tree.flatten(primals)
    # The user's function runs with the cycle collector as the user left it
    # (only the folds pause it): it may make cyclic garbage of its own.
    with recording(bp):
        nodes = []
        for i, leaf in enumerate(leaves):
            if data and is_data(leaf):
                nodes.append(leaf)
                continue
            try:
                nodes.append(require_grad(leaf, bp))
            except TypeError as exc:
                raise type(exc)(f"{name}: argument leaf {i}: {exc}") from None
        out = fun(*nodes) if flat else fun(*tree.unflatten(treedef, nodes))
    aux = None
    if has_aux:
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise FuncgradTypeError(f"{name} with has_aux=True needs fun to return (out, aux)")
        out, aux = out
        aux = tree.tree_map(lambda a: off_graph(a, bp), aux)
    return bp, nodes, treedef, out, aux


def zeros_of(leaf: Any) -> Any:
    """Zeros like ``leaf`` (a Node, an array or a number)."""
    return zeros_like(leaf) if type(leaf) is Node else zeros_like(as_primal(leaf, "primal"))


def _pull(bp: BackpropId, nodes: list, outs: list, seeds: list, given: list) -> list:
    """The gradients of ``nodes`` from ``seeds`` at ``outs``, as arrays the caller owns:
    none aliases a primal or an array in ``given``."""
    found = gradients(outs, seeds, nodes, bp) if outs else [None] * len(nodes)
    grads = [zeros_like(n.value) if g is None else as_array(g)
             for n, g in zip(nodes, found, strict=True)]
    return owned(grads, [n.value for n in nodes] + given)


def vjp(fun: Callable, *primals: Any, has_aux: bool = False):
    """``(out, vjp_fn)``, or ``(out, vjp_fn, aux)``: ``vjp_fn(ct)`` is a tuple, one per primal.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> out, f_vjp = fg.vjp(fnp.sin, numpy.array(0.0))
    >>> f_vjp(numpy.array(1.0))
    (array(1.),)
    """
    bp, nodes, treedef, out, aux = trace_call(fun, primals, "vjp", has_aux)
    out_leaves, out_def = tree.flatten(out)

    def vjp_fn(cotangent: Any) -> tuple:
        ct_leaves = tree.flatten_up_to(out_def, cotangent)
        outs, seeds = [], []
        for k, (o, c) in enumerate(zip(out_leaves, ct_leaves, strict=True)):
            if c is None:  # no cotangent: this output contributes nothing
                continue
            if type(o) is Node and bp in o.graphs:
                outs.append(o)
                seeds.append(seed(o, c, k, "vjp: cotangent leaf {i}"))
            elif is_float(o):  # a constant output: its cotangent is checked all the same
                check_like(c, as_primal(value_of(o), "output"), f"vjp: cotangent leaf {k}",
                           f"output leaf {k}")
        return tuple(tree.unflatten(treedef, _pull(bp, nodes, outs, seeds, ct_leaves)))

    lowered = tree.unflatten(out_def, [off_graph(o, bp) for o in out_leaves])
    return (lowered, vjp_fn, aux) if has_aux else (lowered, vjp_fn)


def value_and_grad(fun: Callable, argnums: Any = 0, has_aux: bool = False,
                   holomorphic: bool = False) -> Callable:
    """A function giving ``(value, grad)`` (``((value, aux), grad)`` with ``has_aux``).

    ``holomorphic``: as in :func:`grad`.

    >>> import numpy, funcgrad as fg
    >>> fg.value_and_grad(lambda x: (x * x).sum())(numpy.array([1.0, 2.0]))
    (array(5.), array([2., 4.]))
    """

    @functools.wraps(fun)
    def value_and_grad_fun(*args, **kwargs):
        nums = argnum_tuple(argnums, len(args), "grad")
        f = partial_at(functools.partial(fun, **kwargs) if kwargs else fun, args, nums)
        dyn = [args[i] for i in nums]
        if holomorphic:
            check_complex("grad", tree.flatten(tuple(dyn))[0], True, "inputs")
        bp, nodes, treedef, out, aux = trace_call(f, dyn, "vjp", has_aux)
        value = off_graph(out, bp)  # a container fails the scalar check below, as it should
        ones = scalar_seed(value_of(value), "grad", holomorphic)
        live = [out] if type(out) is Node and bp in out.graphs else []
        g = tree.unflatten(treedef, _pull(bp, nodes, live, [ones] * len(live), [ones]))
        g = g[0] if isinstance(argnums, int) else tuple(g)
        return ((value, aux), g) if has_aux else (value, g)

    return value_and_grad_fun


def grad(fun: Callable, argnums: Any = 0, has_aux: bool = False,
         holomorphic: bool = False) -> Callable:
    """The gradient of scalar-valued ``fun`` with respect to argument(s) ``argnums``.

    Returns a function taking the same arguments as ``fun`` and returning the
    gradient: NumPy (or CuPy) arrays of the arguments' shapes and dtypes.

    - ``fun`` must return a scalar (an array of size 1); anything else raises
      ``ValueError`` naming the shape; a boolean or integer one, ``TypeError``.
    - ``argnums``: the position of the argument to differentiate, or a tuple of
      distinct positions; with a tuple, the result is a tuple of gradients, one
      per position.  The other arguments are constants; keyword arguments
      always are.
    - ``has_aux``: ``fun`` returns ``(value, aux)``, and the gradient function
      returns ``(gradient, aux)``, ``aux`` holding arrays, not Nodes.
    - Pytrees: an argument may be a nested ``tuple``, ``list``, ``dict``,
      namedtuple or ``pyrsistent`` map or vector of arrays and numbers; its
      gradient has the same structure.  Integer and boolean leaves (labels,
      indices) are data: asking for their gradient raises ``TypeError``.
    - Nested calls (``grad(grad(f))``, ``grad`` of a function calling ``grad``)
      give higher derivatives and never mix up their levels.
    - Complex numbers (JAX's convention, see the guide's *Complex numbers*
      page): without ``holomorphic`` the output must be real (else
      ``TypeError``); a complex input ``z = x + iy`` then gets ``df/dx - i
      df/dy``.  With ``holomorphic=True`` inputs and output are complex and
      the result is the complex derivative ``f'(z)``.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(fg.grad(fg.grad(fnp.sin)))(numpy.array(0.0))
    array(-1.)
    >>> def loss(params, x, y):
    ...     pred = x @ params["w"] + params["b"]
    ...     return fnp.mean((pred - y) ** 2), pred
    >>> params = {"w": numpy.array([1.0, -1.0]), "b": numpy.array(0.5)}
    >>> x, y = numpy.array([[1.0, 2.0], [3.0, 1.0]]), numpy.array([0.0, 1.0])
    >>> g, pred = fg.grad(loss, has_aux=True)(params, x, y)
    >>> g["w"], g["b"], pred
    (array([4. , 0.5]), array(1.), array([-0.5,  2.5]))
    >>> gx, gy = fg.grad(lambda p, x, y: loss(p, x, y)[0], argnums=(1, 2))(params, x, y)
    >>> gy
    array([ 0.5, -1.5])
    >>> fg.grad(lambda z: fnp.abs(z) ** 2)(3 + 4j)
    array(6.-8.j)
    >>> fg.grad(lambda z: z ** 3, holomorphic=True)(1j)
    array(-3.+0.j)
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic)

    @functools.wraps(fun)
    def grad_fun(*args, **kwargs):
        (out, g) = vg(*args, **kwargs)
        return (g, out[1]) if has_aux else g

    return grad_fun


def linearize_call(fun: Callable, primals: tuple):
    """``(out, jvp_fn)``: trace once, push any number of tangents through the graph."""
    bp, nodes, treedef, out, _ = trace_call(fun, primals, "jvp")
    out_leaves, out_def = tree.flatten(out)

    def jvp_fn(tangents: Any) -> Any:
        t_leaves = tree.flatten_up_to(treedef, tuple(tangents))
        t_leaves = [check_like(t, n, f"jvp: tangent leaf {i}", f"primal leaf {i}")
                    for i, (n, t) in enumerate(zip(nodes, t_leaves, strict=True))]
        live = [o for o in out_leaves if type(o) is Node and bp in o.graphs]
        ts = forward(live, nodes, list(t_leaves), bp) if live else []
        by_serial = {o.serial: t for o, t in zip(live, ts, strict=True)}
        res = []
        for o in out_leaves:
            t = by_serial.get(o.serial) if type(o) is Node else None
            res.append(zeros_of(value_of(o)) if t is None else as_array(t))
        caller = [value_of(n) for n in nodes] + list(t_leaves)  # no tangent may alias them
        return tree.unflatten(out_def, owned(res, caller))

    lowered = tree.unflatten(out_def, [off_graph(o, bp) for o in out_leaves])
    return lowered, jvp_fn


def jvp(fun: Callable, primals: Any, tangents: Any):
    """``(out, tangent_out)``: forward-mode derivative of ``fun`` at ``primals`` along ``tangents``.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.jvp(fnp.exp, (numpy.array(0.0),), (numpy.array(3.0),))
    (array(1.), array(3.))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise FuncgradTypeError("jvp: primals and tangents must be tuples (one entry per argument)")
    if len(primals) != len(tangents):
        raise FuncgradValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    out, jvp_fn = linearize_call(fun, tuple(primals))
    return out, jvp_fn(tuple(tangents))


def stop_gradient(x: Any) -> Any:
    """``x`` cut from every graph: raw values, leafwise over a pytree.

    >>> import numpy, funcgrad as fg
    >>> fg.grad(lambda x: x * fg.stop_gradient(x))(numpy.array(3.0))
    array(3.)
    """
    return tree.tree_map(_raw, x)


def _raw(x: Any) -> Any:
    while type(x) is Node:  # a Node whose value is itself a Node (a user primitive's)
        x = x.value
    if is_batched(x):  # fg.vmap's: the examples, each cut from every graph
        return batched(_raw(x.value), x.axis, x.level)
    return x


# The Jacobian family lives in funcgrad.jacobians (it imports this module).
__all__ = ["grad", "jvp", "stop_gradient", "value_and_grad", "vjp"]
