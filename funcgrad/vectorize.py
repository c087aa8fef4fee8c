"""``vmap``: a function mapped over an axis of its arguments, vectorized (layer 6).

The function runs once, on batched values (:mod:`funcgrad.batching`) that
stand for every example at once; each primitive it calls runs its batching
rule, so the whole map is one call per primitive, not a Python loop.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.vmap(lambda x: fnp.sum(x ** 2))(numpy.array([[1.0, 2.0], [3.0, 4.0]]))
array([ 5., 25.])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy
import optree

from . import tree
from .backend import as_array, borrowed
from .batching import (Level, LoopNeeded, at_axis, batched, is_batched, running, unbatched,
                       under_nodes)
from .errors import FuncgradTypeError, FuncgradValueError
from .node import Node
from .numpy import shape as _s


def _spec_leaves(spec: Any) -> tuple[list, Any]:
    """The leaves of an axes spec, None included, and its structure."""
    return optree.tree_flatten(spec, none_is_leaf=True, namespace=tree.NAMESPACE)


def _check_spec(spec: Any, what: str) -> None:
    for leaf in _spec_leaves(spec)[0]:
        if leaf is not None and (not isinstance(leaf, int) or isinstance(leaf, bool)):
            raise FuncgradTypeError(
                f"vmap: {what} must be an int, None or a pytree of those, got {leaf!r}"
            )


def _axes_for(spec: Any, value: Any, where: str) -> list:
    """One axis (or None) per leaf of ``value``, from ``spec``, a prefix of its structure."""
    if spec is None or isinstance(spec, int):
        return [spec] * len(tree.flatten(value)[0])
    spec_leaves, spec_def = _spec_leaves(spec)
    try:
        parts = spec_def.flatten_up_to(value)
    except (ValueError, TypeError) as exc:
        raise FuncgradValueError(
            f"vmap: the axes {spec!r} given for {where} do not match its structure ({exc})"
        ) from None
    out = []
    for s, part in zip(spec_leaves, parts, strict=True):
        out.extend([s] * len(tree.flatten(part)[0]))
    return out


def _ndim(x: Any) -> int:
    return len(getattr(x, "shape", ()))


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_size: int | None = None,
         chunk_size: int | None = None) -> Callable:
    """``fun`` mapped over an axis of its arguments, vectorized (JAX's ``vmap``).

    - ``in_axes``: for each positional argument, the axis it is mapped along
      (an int, negative counting from the end) or None (not mapped: the same
      for every example); an int or None for all of them, a tuple with one
      entry per argument, or a pytree prefix of the arguments.  Keyword
      arguments are mapped along axis 0.
    - ``out_axes``: where the mapped axis goes in each result (an int, None
      for a result that is the same for every example, or a pytree prefix).
    - ``axis_size``: the number of examples, needed only when no argument is
      mapped.
    - ``chunk_size``: map at most this many examples at once (bounding the
      memory of large maps); the results are concatenated.

    Composes with every combinator, in any order: ``vmap(grad(loss))`` gives
    per-example gradients, ``vmap(vmap(f))`` maps twice.  Python control flow
    on a mapped value raises :class:`~funcgrad.BatchedValueError`: use
    ``fnp.where``.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> w = numpy.array([1.0, -1.0])
    >>> loss = lambda w, x: fnp.sum(w * x) ** 2
    >>> xs = numpy.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
    >>> fg.vmap(fg.grad(loss), in_axes=(None, 0))(w, xs)       # per-example gradients
    array([[ 2.,  0.],
           [ 0.,  0.],
           [-0., -8.]])
    >>> fg.vmap(fnp.outer, in_axes=(0, None), out_axes=1)(numpy.ones((2, 3)), w).shape
    (3, 2, 2)
    """
    _check_spec(in_axes, "in_axes")
    _check_spec(out_axes, "out_axes")
    if isinstance(in_axes, list):  # as JAX: a list is a pytree, in_axes for all args a tuple
        in_axes = tuple(in_axes)
    if axis_size is not None and (not isinstance(axis_size, int) or axis_size < 0):
        raise FuncgradValueError(f"vmap: axis_size must be a non-negative int, got {axis_size!r}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise FuncgradValueError(f"vmap: chunk_size must be a positive int, got {chunk_size!r}")

    @functools.wraps(fun)
    def mapped(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_axes, tuple):
            if len(in_axes) != len(args):
                raise FuncgradValueError(
                    f"vmap: in_axes has {len(in_axes)} entries for {len(args)} positional "
                    "arguments"
                )
            specs = in_axes
        else:
            specs = (in_axes,) * len(args)
        leaves, treedef = tree.flatten((args, kwargs))
        axes = []
        for i, (a, spec) in enumerate(zip(args, specs, strict=True)):
            axes.extend(_axes_for(spec, a, f"argument {i}"))
        axes.extend([0] * (len(leaves) - len(axes)))  # keyword arguments: axis 0
        names = _leaf_names(args, kwargs)
        size = _size(leaves, axes, names, axis_size)
        axes = [None if ax is None else ax % _ndim(x) for x, ax in zip(leaves, axes,
                                                                         strict=True)]
        if chunk_size is None or chunk_size >= size or size == 0:
            return _map(fun, leaves, axes, treedef, size, out_axes)
        pieces = []
        for start in range(0, size, chunk_size):
            stop = min(start + chunk_size, size)
            part = [x if ax is None else at_axis(x, ax, slice(start, stop))
                    for x, ax in zip(leaves, axes, strict=True)]
            pieces.append(_map(fun, part, axes, treedef, stop - start, out_axes))
        return _concat(pieces, out_axes)

    return mapped


def _leaf_names(args: tuple, kwargs: dict) -> list:
    names = []
    for i, a in enumerate(args):
        n = len(tree.flatten(a)[0])
        names.extend([f"argument {i}" if n == 1 else f"argument {i} (leaf {k})"
                      for k in range(n)])
    for key in sorted(kwargs):
        n = len(tree.flatten(kwargs[key])[0])
        names.extend([f"keyword argument {key!r}"] * n)
    return names


def _size(leaves: list, axes: list, names: list, axis_size: int | None) -> int:
    sizes = {}
    for k, (x, ax) in enumerate(zip(leaves, axes, strict=True)):
        if ax is None:
            continue
        name = names[k] if k < len(names) else f"leaf {k}"
        nd = _ndim(x)
        if not hasattr(x, "shape"):
            raise FuncgradValueError(
                f"vmap: {name} is mapped along axis {ax} but is a {type(x).__name__}, not an "
                "array; give it in_axes None"
            )
        if not -nd <= ax < nd:
            raise FuncgradValueError(
                f"vmap: {name} is mapped along axis {ax}, but has only {nd} dimension(s) "
                f"(shape {tuple(x.shape)})"
            )
        sizes[name] = x.shape[ax]
    if not sizes:
        if axis_size is None:
            raise FuncgradValueError(
                "vmap: no argument is mapped (every in_axes is None): give axis_size"
            )
        return axis_size
    distinct = set(sizes.values())
    if len(distinct) > 1:
        listing = ", ".join(f"{n}: {s}" for n, s in sizes.items())
        raise FuncgradValueError(f"vmap: mapped axes of different sizes ({listing})")
    size = distinct.pop()
    if axis_size is not None and axis_size != size:
        raise FuncgradValueError(
            f"vmap: axis_size is {axis_size} but the mapped axes have size {size}"
        )
    return size


def _map(fun: Callable, leaves: list, axes: list, treedef: Any, size: int, out_axes: Any):
    level = Level(size)
    with running(level):
        ins = [x if ax is None else batched(_as_input(x), ax, level)
               for x, ax in zip(leaves, axes, strict=True)]
        args, kwargs = tree.unflatten(treedef, ins)
        try:
            out = fun(*args, **kwargs)
        except LoopNeeded as need:
            if need.level is not level:
                raise
            out = None
    if out is None and size:  # what cannot be vectorized: one example at a time
        return _loop(fun, leaves, axes, treedef, size, out_axes)
    out_leaves, out_def = tree.flatten(out)
    specs = _axes_for(out_axes, out, "the results")
    res = [_unmap(o, spec, level, k) for k, (o, spec) in
           enumerate(zip(out_leaves, specs, strict=True))]
    caller = {id(x) for x in leaves}
    res = [r.copy() if _is_raw(r) and hasattr(r, "copy") and (id(r) in caller or borrowed(r))
           else r for r in res]
    return tree.unflatten(out_def, res)


def _loop(fun: Callable, leaves: list, axes: list, treedef: Any, size: int, out_axes: Any):
    """``fun`` called on each example in turn, its results stacked at ``out_axes``: the
    map of a function with a part that cannot be vectorized (a solver's raw callbacks
    under a gradient, ...). As exact as the vectorized map, one call per example."""
    outs = []
    for b in range(size):
        part = [x if ax is None else at_axis(x, ax, b) for x, ax in zip(leaves, axes,
                                                                        strict=True)]
        args, kwargs = tree.unflatten(treedef, part)
        outs.append(fun(*args, **kwargs))
    firsts, out_def = tree.flatten(outs[0])
    specs = _axes_for(out_axes, outs[0], "the results")
    cols = [tree.flatten(o)[0] for o in outs]
    res = [firsts[k] if spec is None else
           _as_result(_s.stack([c[k] for c in cols], axis=spec % (_ndim(firsts[k]) + 1)))
           for k, spec in enumerate(specs)]
    return tree.unflatten(out_def, res)


def _is_raw(x: Any) -> bool:
    """Neither a Node nor a batched value."""
    return type(x) is not Node and not is_batched(x)


def _as_input(x: Any) -> Any:
    if not _is_raw(x):
        return x
    return as_array(x) if not isinstance(x, (int, float)) else numpy.asarray(x)


def _as_result(x: Any) -> Any:
    return as_array(x) if _is_raw(x) else x


def _unmap(o: Any, spec: Any, level: Level, k: int) -> Any:
    """Result leaf ``o`` of the mapped call with its mapped axis at ``spec``."""
    v, ax = unbatched(o, level)
    if type(v) is Node and _holds_level(v, level):
        raise FuncgradValueError(
            f"vmap: result leaf {k} mixes the levels of nested transformations (a Node of an "
            "outer graph holding values mapped here); pass the outer value as an argument"
        )
    if ax is None:
        if spec is None:
            return _as_result(v)
        v = o if not is_batched(o) else v
        nd = _ndim(v) + 1
        e = _s.expand_dims(v, spec % nd)
        shape = list(getattr(e, "shape", ()))
        shape[spec % nd] = level.size
        return _s.broadcast_to(e, tuple(shape))
    if spec is None:
        raise FuncgradValueError(
            f"vmap: result leaf {k} is mapped, but out_axes gives it None (only results "
            "that are the same for every example can have out_axes None)"
        )
    nd = _ndim(v)
    dest = spec % nd
    return _as_result(v if dest == ax else _s.moveaxis(v, ax, dest))


def _holds_level(v: Any, level: Level) -> bool:
    v = under_nodes(v)
    return is_batched(v) and v.level is level


def _concat(pieces: list, out_axes: Any) -> Any:
    leaves0, out_def = tree.flatten(pieces[0])
    specs = _axes_for(out_axes, pieces[0], "the results")
    cols = [tree.flatten(p)[0] for p in pieces]
    res = []
    for k, spec in enumerate(specs):
        if spec is None:
            res.append(leaves0[k])
        else:
            parts = [c[k] for c in cols]
            res.append(as_array(_s.concatenate(parts, axis=spec % _ndim(parts[0]))))
    return tree.unflatten(out_def, res)


__all__ = ["vmap"]
