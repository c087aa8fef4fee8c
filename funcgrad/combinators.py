"""Function transformations: vjp, grad, jvp, Jacobians, Hessians (layer 6).

Each is a few lines over two helpers of its own: ``_trace`` (run a function
on fresh leaves of a new graph) and the two folds.  Every call opens a graph of
its own, so nested calls never confuse their levels: an inner gradient is
recorded on every outer graph and stays differentiable there.

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
from .backend import WEAK_TYPES, as_array, namespace
from .backprop import gradients
from .backprop_utils import check_like, owned, seed
from .batching import batched, is_batched
from .errors import BatchedValueError, FuncgradTypeError, FuncgradValueError
from .forward import forward
from .node import (
    BackpropId,
    Node,
    PassThrough,
    float_array,
    make_node,
    recording,
    require_grad,
    value_of,
)
from .numpy import reshape, stack, zeros, zeros_like
from .vectorize import vmap

_STRIP = PassThrough("identity")


def _array(x: Any) -> Any:
    """NumPy scalars (what ufuncs return for 0-d arrays) as 0-d arrays: results are arrays."""
    return as_array(x)


def _lower(x: Any, bp: BackpropId) -> Any:
    """``x`` without graph ``bp``: a raw array, or a Node on its other graphs."""
    if type(x) is not Node:
        return _array(x)
    if bp not in x.graphs:
        return x
    rest = x.graphs - {bp}
    if not rest:
        return _array(x.value)
    return make_node(x.value, rest, _STRIP, (x,), None, x.rank + 1)


def stack_rows(rows: list, like: Any) -> Any:
    """``stack(rows)``, or an empty ``(0,) + like.shape`` array of ``like``'s dtype and
    device when there are no rows."""
    if rows:
        return stack(rows)
    v = value_of(like)
    return zeros((0,) + tuple(getattr(v, "shape", ())), getattr(v, "dtype", float), like=v)


def _as_primal(x: Any, where: str) -> Any:
    if type(x) is Node:
        return x
    if isinstance(x, (int, float)) and not isinstance(x, bool) or type(x) in WEAK_TYPES:
        return float_array(x, where)
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        raise FuncgradTypeError(f"{where} must be an array or a number, got {type(x).__name__}")
    return x


def _is_float(x: Any) -> bool:
    """Whether ``x`` (a Node, array or number) is real floating or complex: what carries a
    gradient."""
    v = value_of(x)
    if isinstance(v, (float, complex)):
        return True
    dtype = getattr(v, "dtype", None)
    return dtype is not None and numpy.dtype(dtype).kind in "fc"


def _kind(x: Any) -> str:
    """``'c'`` for a complex value, ``'f'`` for a real float, else the dtype's kind."""
    v = value_of(x)
    if isinstance(v, complex):
        return "c"
    if isinstance(v, (float, int)) and not isinstance(v, bool):
        return "f"
    dtype = getattr(v, "dtype", None)
    return "" if dtype is None else numpy.dtype(dtype).kind


def _dtype_name(x: Any) -> str:
    v = value_of(x)
    return str(getattr(v, "dtype", type(v).__name__))


def check_complex(name: str, leaves: list, holomorphic: bool, what: str) -> None:
    """JAX's dtype rules for ``holomorphic``: ``what`` (``'inputs'`` or ``'outputs'``) of
    ``name`` must be real without it (only where ``name`` needs that: see the callers) and
    complex with it; else ``TypeError`` naming the leaf, its dtype and ``holomorphic=True``."""
    for k, x in enumerate(leaves):
        kind = _kind(x)
        if holomorphic and kind != "c" and kind in "fiub":
            raise FuncgradTypeError(
                f"{name} with holomorphic=True needs complex {what}, but {what[:-1]} leaf {k} "
                f"has dtype {_dtype_name(x)} (cast it to complex, or drop holomorphic=True)"
            )
        if not holomorphic and kind == "c":
            raise FuncgradTypeError(
                f"{name} needs real {what}, but {what[:-1]} leaf {k} has dtype "
                f"{_dtype_name(x)}: for the complex derivative f'(z) of a holomorphic "
                f"function pass holomorphic=True; for a non-holomorphic one, differentiate a "
                f"real function of it (fnp.real, fnp.abs ...) or use fg.vjp / fg.jvp directly"
            )


def _is_data(leaf: Any) -> bool:
    """Integer or boolean data (labels, indices, counts): never a graph input."""
    if type(leaf) is Node:
        return False
    if isinstance(leaf, (bool, int)):
        return True
    dtype = getattr(leaf, "dtype", None)
    return dtype is not None and numpy.dtype(dtype).kind in "biu"


def _trace(fun: Callable, primals: tuple, name: str, has_aux: bool = False,
           data: bool = False):
    """Run ``fun`` on leaves of a fresh graph: (graph, leaves, treedef, out, aux).

    With ``data``, integer and boolean leaves pass to ``fun`` unchanged (and
    stand in ``leaves`` as they are); otherwise they raise ``TypeError``.
    """
    bp = BackpropId(name)
    leaves, treedef = tree.flatten(tuple(primals))
    # The user's function runs with the cycle collector as the user left it
    # (only the folds pause it): it may make cyclic garbage of its own.
    with recording(bp):
        nodes = []
        for i, leaf in enumerate(leaves):
            if data and _is_data(leaf):
                nodes.append(leaf)
                continue
            try:
                nodes.append(require_grad(leaf, bp))
            except TypeError as exc:
                raise type(exc)(f"{name}: argument leaf {i}: {exc}") from None
        out = fun(*tree.unflatten(treedef, nodes))
    aux = None
    if has_aux:
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise FuncgradTypeError(f"{name} with has_aux=True needs fun to return (out, aux)")
        out, aux = out
        aux = tree.tree_map(lambda a: _lower(a, bp), aux)
    return bp, nodes, treedef, out, aux


def _zeros(leaf: Any) -> Any:
    return zeros_like(leaf) if type(leaf) is Node else zeros_like(_as_primal(leaf, "primal"))


def vjp(fun: Callable, *primals: Any, has_aux: bool = False):
    """``(out, vjp_fn)``, or ``(out, vjp_fn, aux)``: ``vjp_fn(ct)`` is a tuple, one per primal.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> out, f_vjp = fg.vjp(fnp.sin, numpy.array(0.0))
    >>> f_vjp(numpy.array(1.0))
    (array(1.),)
    """
    bp, nodes, treedef, out, aux = _trace(fun, primals, "vjp", has_aux)
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
            elif _is_float(o):  # a constant output: its cotangent is checked all the same
                check_like(c, _as_primal(value_of(o), "output"), f"vjp: cotangent leaf {k}",
                           f"output leaf {k}")
        found = gradients(outs, seeds, nodes, bp) if outs else [None] * len(nodes)
        grads = [
            zeros_like(n.value) if g is None else _array(g)
            for n, g in zip(nodes, found, strict=True)
        ]
        caller = [n.value for n in nodes] + ct_leaves  # no gradient may alias them
        return tuple(tree.unflatten(treedef, owned(grads, caller)))

    lowered = tree.unflatten(out_def, [_lower(o, bp) for o in out_leaves])
    return (lowered, vjp_fn, aux) if has_aux else (lowered, vjp_fn)


def _argnums(argnums: Any, nargs: int, name: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not isinstance(a, int) or not -nargs <= a < nargs:
            raise FuncgradValueError(f"{name}: argnums {argnums!r} out of range for {nargs} arguments")
    nums = tuple(a % nargs for a in nums)
    if len(set(nums)) != len(nums):  # one argument twice would get its gradient once
        raise FuncgradValueError(f"{name}: argnums {argnums!r} names an argument twice")
    return nums


def _partial(fun: Callable, args: tuple, nums: tuple[int, ...]) -> Callable:
    def partial(*dyn):
        full = list(args)
        for i, a in zip(nums, dyn, strict=True):
            full[i] = a
        return fun(*full)

    return partial


def _scalar_seed(out: Any, name: str, holomorphic: bool = False) -> Any:
    check_complex(name, [out], holomorphic, "outputs")
    v = value_of(out)
    if isinstance(v, complex):  # a constant function (complex: holomorphic=True)
        v = numpy.asarray(v)
    elif isinstance(v, (int, float)) or type(v) in WEAK_TYPES:  # a constant function
        v = float_array(v, name)
    if getattr(v, "size", None) != 1:
        shape = getattr(v, "shape", type(v).__name__)
        raise FuncgradValueError(f"{name} needs a scalar (size-1) output, got shape {shape}")
    return namespace(v).ones(v.shape, v.dtype)


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
        nums = _argnums(argnums, len(args), "grad")
        f = _partial(functools.partial(fun, **kwargs) if kwargs else fun, args, nums)
        if holomorphic:
            check_complex("grad", tree.flatten(tuple(args[i] for i in nums))[0], True, "inputs")
        res = vjp(f, *(args[i] for i in nums), has_aux=has_aux)
        out, fn = res[0], res[1]
        g = fn(_scalar_seed(out, "grad", holomorphic))
        g = g[0] if isinstance(argnums, int) else g
        return ((out, res[2]), g) if has_aux else (out, g)

    return value_and_grad_fun


def grad(fun: Callable, argnums: Any = 0, has_aux: bool = False,
         holomorphic: bool = False) -> Callable:
    """The gradient of scalar-valued ``fun`` with respect to argument(s) ``argnums``.

    Returns a function taking the same arguments as ``fun`` and returning the
    gradient: NumPy (or CuPy) arrays of the arguments' shapes and dtypes.

    - ``fun`` must return a scalar (an array of size 1); anything else raises
      ``ValueError`` naming the shape.
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


def _linearize(fun: Callable, primals: tuple):
    """``(out, jvp_fn)``: trace once, push any number of tangents through the graph."""
    bp, nodes, treedef, out, _ = _trace(fun, primals, "jvp")
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
            res.append(_zeros(value_of(o)) if t is None else _array(t))
        caller = [value_of(n) for n in nodes] + list(t_leaves)  # no tangent may alias them
        return tree.unflatten(out_def, owned(res, caller))

    lowered = tree.unflatten(out_def, [_lower(o, bp) for o in out_leaves])
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
        raise FuncgradValueError(
            f"jvp: {len(primals)} primals but {len(tangents)} tangents"
        )
    out, jvp_fn = _linearize(fun, tuple(primals))
    return out, jvp_fn(tuple(tangents))


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


def _size(x: Any) -> int:
    n = 1
    for k in _shape(x):
        n *= k
    return n


def _mapped(fun: Callable, basis: Any, chunk_size: int | None, axis: int) -> tuple:
    """``fun`` over the basis vectors, vectorized; one at a time where a derivative rule
    cannot take a batch (a raw library call, a solver that looks for Nodes: they raise
    BatchedValueError), so that a Jacobian is never refused where the loop works."""
    try:
        return vmap(fun, out_axes=axis, chunk_size=chunk_size)(basis)
    except BatchedValueError:
        rows = [fun(basis[k]) for k in range(len(basis))]
        return tuple(stack([r[j] for r in rows], axis=axis) for j in range(len(rows[0])))


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
        nums = _argnums(argnums, len(args), "jacobian")
        in_leaves, in_def = tree.flatten(tuple(args[i] for i in nums))
        in_leaves = [_as_primal(x, "argument leaf") for x in in_leaves]
        if holomorphic:
            check_complex("jacobian", in_leaves, True, "inputs")
        out, fn = vjp(_partial(fun, args, nums), *tree.unflatten(in_def, in_leaves))
        out_leaves, out_def = tree.flatten(out)
        check_complex("jacobian", out_leaves, holomorphic, "outputs")
        blocks = []
        for k, o in enumerate(out_leaves):
            if _size(o) == 0:
                blocks.append([reshape(stack_rows([], x), _shape(o) + _shape(x))
                               for x in in_leaves])
                continue

            def pull(e, k=k):
                return tuple(tree.flatten(fn(tree.unflatten(out_def,
                                                            _one_hot(out_leaves, k, e))))[0])

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
        nums = _argnums(argnums, len(args), "jacfwd")
        in_leaves, in_def = tree.flatten(tuple(args[i] for i in nums))
        in_leaves = [_as_primal(x, "argument leaf") for x in in_leaves]
        check_complex("jacfwd", in_leaves, holomorphic, "inputs")
        dyn = tree.unflatten(in_def, in_leaves)
        out, fn = _linearize(_partial(fun, args, nums), dyn)
        out_leaves, out_def = tree.flatten(out)
        if holomorphic:
            check_complex("jacfwd", out_leaves, True, "outputs")
        # cols[j][k]: d out_k / d in_j, of shape out_k.shape + (in_j.size,)
        cols = []
        for j, x in enumerate(in_leaves):
            if _size(x) == 0:
                cols.append([zeros(_shape(o) + (0,), value_of(o).dtype
                                   if hasattr(value_of(o), "dtype") else float, like=value_of(x))
                             for o in out_leaves])
                continue

            def push(e, j=j):
                return tuple(tree.flatten(fn(tree.unflatten(in_def,
                                                            _one_hot(in_leaves, j, e))))[0])

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


__all__ = [
    "grad",
    "hessian",
    "hvp",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jvp",
    "stop_gradient",
    "value_and_grad",
    "vjp",
]
