"""Jacobians and Hessians: VJPs and JVPs mapped over a basis (layer 6).

``jacobian`` pulls back every unit vector of each output, ``jacfwd`` pushes
forward every unit vector of each input, both at once with :func:`~funcgrad.vmap`
(one at a time where a rule cannot take a batch).  ``hessian`` and ``hvp``
compose them.

>>> import numpy, funcgrad as fg
>>> fg.jacobian(lambda x: x[::-1])(numpy.ones(2))
array([[0., 1.],
       [1., 0.]])
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy

from . import tree
from .arguments import argnum_tuple, as_primal, check_complex, partial_at
from .backend import namespace
from .combinators import grad, jvp, linearize_call, vjp
from .errors import BatchedValueError, FuncgradTypeError
from .node import float_array, value_of
from .numpy import reshape, stack, zeros, zeros_like
from .vectorize import vmap


def stack_rows(rows: list, like: Any) -> Any:
    """``stack(rows)``, or an empty ``(0,) + like.shape`` array of ``like``'s dtype and
    device when there are no rows."""
    if rows:
        return stack(rows)
    v = value_of(like)
    return zeros((0,) + tuple(getattr(v, "shape", ())), getattr(v, "dtype", float), like=v)


def _shape(x: Any) -> tuple:
    return tuple(numpy.shape(value_of(x)))


def _one_hot(leaves: list, k: int, e: Any) -> list:
    """``e`` in slot ``k``, zeros shaped like the other leaves."""
    return [e if j == k else zeros_like(value_of(q)) for j, q in enumerate(leaves)]


def _nest(out_def: Any, in_def: Any, blocks: list, single: bool) -> Any:
    """Jacobian blocks ``blocks[out_leaf][in_leaf]`` as a tree of output trees of input trees."""
    per_out = [tree.unflatten(in_def, row) for row in blocks]
    return tree.unflatten(out_def, [b[0] if single else b for b in per_out])


def _basis_stack(x: Any) -> Any:
    """The unit vectors of ``x``'s shape and dtype, stacked: ``(x.size,) + x.shape``."""
    v = value_of(x)
    if getattr(v, "dtype", None) is None:  # a Python number: a constant output
        v = float_array(v, "jacobian: output")
    xp = namespace(v)
    return xp.reshape(xp.eye(v.size, dtype=v.dtype), (v.size,) + tuple(v.shape))


def _mapped(fun: Callable, basis: Any, chunk_size: int | None, axis: int) -> tuple:
    """``fun`` over the basis vectors, vectorized; one at a time where a derivative rule
    cannot take a batch (a raw library call, a solver that looks for Nodes: they raise
    BatchedValueError), so that a Jacobian is never refused where the loop works."""
    try:
        return vmap(fun, out_axes=axis, chunk_size=chunk_size)(basis)
    except BatchedValueError:
        rows = [fun(basis[k]) for k in range(len(basis))]
        return tuple(stack([r[j] for r in rows], axis=axis) for j in range(len(rows[0])))


def _inputs(args: tuple, argnums: Any, name: str) -> tuple:
    """The differentiated arguments' leaves (numbers made arrays), their treedef and
    positions."""
    nums = argnum_tuple(argnums, len(args), name)
    leaves, in_def = tree.flatten(tuple(args[i] for i in nums))
    return [as_primal(x, "argument leaf") for x in leaves], in_def, nums


def _leaf_function(fn: Callable, leaves: list, treedef: Any, k: int) -> Callable:
    """``e -> the leaves of fn(the tree of leaves, e in slot k, zeros elsewhere)``."""
    def along(e):
        return tuple(tree.flatten(fn(tree.unflatten(treedef, _one_hot(leaves, k, e))))[0])

    return along


def jacobian(fun: Callable, argnums: Any = 0, chunk_size: int | None = None,
             holomorphic: bool = False) -> Callable:
    """Reverse-mode Jacobian: of shape ``out.shape + in.shape``.

    One VJP per output element, all at once: the VJP is mapped with
    :func:`~funcgrad.vmap` over the standard basis (``chunk_size`` of them at a
    time, when given, to bound memory).  Pytrees nest as JAX nests them: the
    output's structure outside, the arguments' inside.  Outputs must be real,
    unless ``holomorphic=True``: then inputs and outputs are complex and the
    result holds ``d out / d z``.

    >>> import numpy, funcgrad as fg
    >>> fg.jacobian(lambda x: 2 * x)(numpy.ones(2))
    array([[2., 0.],
           [0., 2.]])
    """

    @functools.wraps(fun)
    def jac_fun(*args):
        in_leaves, in_def, nums = _inputs(args, argnums, "jacobian")
        if holomorphic:
            check_complex("jacobian", in_leaves, True, "inputs")
        out, fn = vjp(partial_at(fun, args, nums), *tree.unflatten(in_def, in_leaves))
        out_leaves, out_def = tree.flatten(out)
        check_complex("jacobian", out_leaves, holomorphic, "outputs")
        blocks = []
        for k, o in enumerate(out_leaves):
            if math.prod(_shape(o)) == 0:
                rows = [stack_rows([], x) for x in in_leaves]
            else:
                pull = _leaf_function(fn, out_leaves, out_def, k)
                rows = _mapped(pull, _basis_stack(o), chunk_size, 0)
            blocks.append([reshape(r, _shape(o) + _shape(x))
                           for r, x in zip(rows, in_leaves, strict=True)])
        return _nest(out_def, in_def, blocks, isinstance(argnums, int))

    return jac_fun


jacrev = jacobian


def jacfwd(fun: Callable, argnums: Any = 0, chunk_size: int | None = None,
           holomorphic: bool = False) -> Callable:
    """Forward-mode Jacobian: of shape ``out.shape + in.shape``.

    One JVP per input element, all at once (mapped with :func:`~funcgrad.vmap`
    over the standard basis, ``chunk_size`` at a time when given).

    Inputs must be real, unless ``holomorphic=True``: then inputs and outputs
    are complex and the result holds ``d out / d z``.

    >>> import numpy, funcgrad as fg
    >>> fg.jacfwd(lambda x: x * x)(numpy.array([1.0, 3.0]))
    array([[2., 0.],
           [0., 6.]])
    """

    @functools.wraps(fun)
    def jac_fun(*args):
        in_leaves, in_def, nums = _inputs(args, argnums, "jacfwd")
        check_complex("jacfwd", in_leaves, holomorphic, "inputs")
        out, fn = linearize_call(partial_at(fun, args, nums), tree.unflatten(in_def, in_leaves))
        out_leaves, out_def = tree.flatten(out)
        if holomorphic:
            check_complex("jacfwd", out_leaves, True, "outputs")
        cols = []  # cols[j][k]: d out_k / d in_j, of shape out_k.shape + (in_j.size,)
        for j, x in enumerate(in_leaves):
            if math.prod(_shape(x)) == 0:
                cols.append([zeros(_shape(o) + (0,), getattr(value_of(o), "dtype", float),
                                   like=value_of(x)) for o in out_leaves])
            else:
                push = _leaf_function(fn, in_leaves, in_def, j)
                cols.append(list(_mapped(push, _basis_stack(x), chunk_size, -1)))
        blocks = [[reshape(cols[j][k], _shape(o) + _shape(x)) for j, x in enumerate(in_leaves)]
                  for k, o in enumerate(out_leaves)]
        return _nest(out_def, in_def, blocks, isinstance(argnums, int))

    return jac_fun


def hessian(fun: Callable, argnums: Any = 0, chunk_size: int | None = None,
            holomorphic: bool = False) -> Callable:
    """The Hessian of scalar ``fun``: ``jacfwd(jacrev(fun))``, each vectorized
    (``chunk_size``: at most that many basis vectors at a time; ``holomorphic``
    passed to both).

    >>> import numpy, funcgrad as fg
    >>> fg.hessian(lambda x: (x ** 3).sum())(numpy.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    return jacfwd(jacobian(fun, argnums, chunk_size, holomorphic), argnums, chunk_size,
                  holomorphic)


def hvp(fun: Callable, primals: Any, tangents: Any) -> Any:
    """Hessian-vector product of scalar ``fun`` at ``primals`` along ``tangents``.

    Reverse over forward: the gradient of the directional derivative
    ``<grad fun, v>``, so the Hessian is never formed, and, unlike forward over
    reverse, no work goes into the gradient itself, which ``hvp`` does not
    return.  Returns one array per primal (a single array when there is one).

    >>> import numpy, funcgrad as fg
    >>> fg.hvp(lambda x: (x ** 3).sum(), (numpy.array([1.0, 2.0]),), (numpy.ones(2),))
    array([ 6., 12.])
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise FuncgradTypeError("hvp: primals and tangents must be tuples (one entry per argument)")
    n = len(primals)

    def directional(*xs):
        return jvp(fun, xs, tuple(tangents))[1]

    h = grad(directional, argnums=tuple(range(n)))(*primals)
    return h[0] if n == 1 else h


__all__ = ["hessian", "hvp", "jacfwd", "jacobian", "jacrev"]
