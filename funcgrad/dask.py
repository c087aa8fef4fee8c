"""``fg.dask``: data-parallel gradients on a Dask cluster (layer 7).

Two ways to differentiate over Dask arrays:

- **Plain** ``fg.grad`` (and every combinator) on Dask arrays is the general
  path: funcgrad builds the gradient as a Dask graph, lazily, whatever the
  function -- reductions across chunks, indexing, linear algebra.  Compute it
  with ``.compute()`` or on any ``dask.distributed.Client``.
- :func:`data_parallel_grad` is the data-parallel pattern of ChainerMN and
  PyTorch's DDP, as one Dask graph: the loss of *one block of rows* is
  differentiated on each block, eagerly, with NumPy or CuPy (whatever the
  chunks hold), inside a Dask task; the per-block gradients are weighted by
  their rows and summed in a tree.  A worker holds one block at a time.

Reverse mode and memory: the backward of a block's loss needs that block's
forward values.  When a *global* reduction (a mean over all rows, a
normalization) comes before the per-block work, no block's backward can start
before every block has been read, so the plain path holds every chunk (or its
intermediates) in memory at once.  The two-pass option computes such small
global reductions first and keeps them (``stats=`` here; ``.persist()`` them
yourself on the plain path); the gradient pass then reads each block once.

>>> import numpy, dask.array as da, funcgrad as fg, funcgrad.numpy as fnp
>>> X = da.from_array(numpy.arange(12.0).reshape(6, 2), chunks=(2, 2))
>>> y = da.from_array(numpy.arange(6.0), chunks=2)
>>> def loss(w, Xb, yb):                      # a mean over the rows of one block
...     return fnp.mean((Xb @ w - yb) ** 2)
>>> g = fg.dask.data_parallel_grad(loss, numpy.zeros(2), X, y)
>>> g.compute()                               # -2 X^T y / 6: the mean over all rows
array([-36.66666667, -41.66666667])
>>> numpy.allclose(g.compute(), fg.grad(loss)(numpy.zeros(2), X.compute(), y.compute()))
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import tree
from .backends import dask as _dask
from .combinators import value_and_grad
from .errors import FuncgradTypeError, FuncgradValueError

__all__ = ["data_parallel_grad", "data_parallel_value_and_grad"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


_REDUCTIONS = ("mean", "sum")


def _block(loss: Callable, params: Any, stats: Any, reduction: str, *blocks: Any) -> tuple:
    """``(rows, weighted value, weighted gradient)`` of one block: funcgrad, eagerly."""
    rows = blocks[0].shape[0]
    args = (params, *blocks) + (() if stats is None else (stats,))
    if rows == 0:  # a selection may leave a block empty: it adds nothing
        value, grads = 0.0, tree.tree_map(lambda p: p * 0, params)
        return rows, value, grads
    value, grads = value_and_grad(loss)(*args)
    if reduction == "mean":  # a mean over the block's rows: weighted by them
        value = value * rows
        grads = tree.tree_map(lambda g: g * rows, grads)
    return rows, value, grads


def _add(*parts: tuple) -> tuple:
    """The sum of block results (one level of the tree)."""
    rows, value, grads = parts[0]
    for r, v, g in parts[1:]:
        rows = rows + r
        value = value + v
        grads = tree.tree_map(lambda a, b: a + b, grads, g)
    return rows, value, grads


def _finish(total: tuple, reduction: str, with_value: bool) -> Any:
    rows, value, grads = total
    if reduction == "mean":
        if rows == 0:
            raise FuncgradValueError("data_parallel_grad: the arrays have no rows")
        value = value / rows
        grads = tree.tree_map(lambda g: g / rows, grads)
    return (value, grads) if with_value else grads


def _build(loss, params, arrays, stats, reduction, split_every, with_value):
    if reduction not in _REDUCTIONS:
        raise FuncgradValueError(
            f"data_parallel_grad: reduction must be one of {_REDUCTIONS}, got {reduction!r}"
        )
    if not callable(loss):
        raise FuncgradTypeError(f"data_parallel_grad: loss must be callable, got {loss!r}")
    blocks = _dask.row_blocks(arrays)
    kept = None
    if stats is not None:  # the first pass: small global reductions, computed and kept
        kept = _dask.persisted(stats(*(_dask.as_dask(a) for a in arrays)))
    # One task per block; the loss, the parameters and the statistics are one value
    # each in the graph, sent to each worker once rather than with every task.
    shared = [_dask.shared(v) for v in (loss, params, kept)]
    task = _dask.delayed(_block)
    parts = [task(*shared, reduction, *b) for b in blocks]
    total = _dask.tree_reduce(parts, _add, split_every)
    return _dask.delayed(_finish)(total, reduction, with_value)


def data_parallel_value_and_grad(
    loss: Callable,
    params: Any,
    *arrays: Any,
    stats: Callable | None = None,
    reduction: str = "mean",
    split_every: int = 8,
) -> Any:
    """A Dask Delayed of ``(value, grads)``: the loss over all rows and its gradient.

    ``arrays`` (Dask arrays, or NumPy arrays) are split into blocks of rows
    along their first axis -- as the first array is chunked along it; other
    axes are made whole.  On each block, in a Dask task, funcgrad computes
    ``value_and_grad(loss)(params, *blocks)`` eagerly with the blocks' own
    arrays (NumPy or CuPy); the results are summed in a tree, ``split_every``
    at a time.

    ``reduction='mean'``: ``loss`` is a mean over a block's rows, and the result
    is the mean over all rows (each block weighted by its rows, so uneven and
    unknown chunk sizes are exact); ``'sum'``: ``loss`` is a sum, and so is the
    result.  ``params`` is any pytree of arrays, shipped once to each worker;
    the gradient has its structure.

    ``stats`` (optional) makes it two passes: ``stats(*arrays)`` returns small
    global reductions of the data (Dask arrays: a mean and a scale to
    normalize by...), computed and kept first (``dask.persist``: a compute
    now, or futures on a distributed client); ``loss`` then gets them as a last
    argument, ``loss(params, *blocks, stats)``, as constants (no gradient flows
    into them).  So a loss normalized by global statistics still reads each
    block once, and no block waits in memory for the others.

    Nothing runs before the result is computed: ``.compute()``,
    ``dask.compute``, or a ``dask.distributed.Client``.

    >>> import numpy, dask.array as da, funcgrad as fg, funcgrad.numpy as fnp
    >>> x = da.from_array(numpy.array([1.0, 2.0, 3.0, 4.0, 5.0]), chunks=2)
    >>> v, g = fg.dask.data_parallel_value_and_grad(
    ...     lambda w, xb: fnp.mean((xb - w) ** 2), numpy.array(0.0), x).compute()
    >>> float(v), float(g)                     # mean of x**2, and -2 mean(x)
    (11.0, -6.0)
    """
    return _build(loss, params, arrays, stats, reduction, split_every, True)


def data_parallel_grad(
    loss: Callable,
    params: Any,
    *arrays: Any,
    stats: Callable | None = None,
    reduction: str = "mean",
    split_every: int = 8,
) -> Any:
    """A Dask Delayed of the gradient of ``loss`` over all rows of ``arrays``.

    :func:`data_parallel_value_and_grad` without the value: see it for the
    arguments.

    >>> import numpy, dask.array as da, funcgrad as fg, funcgrad.numpy as fnp
    >>> x = da.from_array(numpy.arange(1.0, 6.0), chunks=2)
    >>> float(fg.dask.data_parallel_grad(lambda w, xb: fnp.mean(w * xb), numpy.array(1.0),
    ...                                  x).compute())
    3.0
    """
    return _build(loss, params, arrays, stats, reduction, split_every, False)
