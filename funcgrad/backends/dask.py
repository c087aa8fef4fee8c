"""Dask arrays: chunked, lazy, out-of-core and distributed (layer 1).

This is the only module of funcgrad that imports Dask.  :mod:`funcgrad.backend`
imports it the first time a Dask array reaches a primitive, so ``import
funcgrad`` stays as light as it is; from then on Dask arrays dispatch to
:data:`xp`, ``dask.array`` with NumPy's signatures where Dask's differ:

- creation functions take their dtype positionally (``zeros(shape, dtype)``:
  Dask's would silently ignore it, or take it for ``chunks``);
- ``linalg.cholesky`` returns the *lower* factor (Dask's default is upper);
  ``det``, ``slogdet``, ``eigh``, ``inv``, ``solve``, ``svd`` and ``qr`` work on
  stacks of matrices, one matrix per task, in the chunks' own namespace
  (NumPy or CuPy);
- indexing with several integer arrays (NumPy's outer rules) goes through
  ``vindex``; ``argsort`` and ``sort`` work along an axis held in one chunk.

It is registered *lazy*: rules never read its data into Python.  The two
functions a lazy namespace adds, :func:`index_add` (the scatter-add behind the
gradient of indexing) and :func:`checked` (``debug_nans`` at compute time), are
here.  NumPy data beside Dask arrays is absorbed (it becomes a one-chunk Dask
array); CuPy arrays beside them raise ``DeviceMismatchError``.
``fg.device_of`` reports what the chunks hold: ``'cpu'`` for NumPy chunks,
``'cuda:N'`` for CuPy chunks.

>>> import numpy, dask.array as da, funcgrad as fg, funcgrad.numpy as fnp
>>> x = da.from_array(numpy.arange(6.0), chunks=3)
>>> g = fg.grad(lambda w: fnp.sum(fnp.tanh(x * w)))(numpy.array(0.5))
>>> type(g).__name__, fg.device_of(g)
('Array', 'cpu')
>>> float(g.compute()) == float(((1 - numpy.tanh(numpy.arange(6.0) * 0.5) ** 2)
...                              * numpy.arange(6.0)).sum())
True
"""

from __future__ import annotations

import math
from typing import Any

import dask
import dask.array as da
import numpy

from .. import backend
from ..errors import FuncgradTypeError, FuncgradValueError

__all__ = ["as_dask", "checked", "delayed", "index_add", "persisted", "row_blocks", "shared",
           "tree_reduce", "xp"]


def _device(x: Any) -> str:
    """Where the chunks of ``x`` live: the device of its meta (an empty chunk)."""
    meta = getattr(x, "_meta", None)
    return "cpu" if meta is None else backend.device_of(meta)


def _to_host(x: Any) -> Any:
    return backend.to_device(x.compute(), "cpu")


def _chunk_xp(chunk: Any):
    """The namespace of one computed chunk (NumPy or CuPy), in a task."""
    return backend.namespace(chunk)


# -- per-matrix linear algebra -------------------------------------------------------
# A stack of matrices is rechunked so that each matrix is whole in one chunk;
# each task then runs the chunk namespace's LAPACK on its part of the stack.


def _whole_matrices(a: Any) -> Any:
    return a.rechunk({a.ndim - 2: -1, a.ndim - 1: -1})


def _run(name: str, pick: Any, kwargs: dict) -> Any:
    def task(block):
        out = getattr(_chunk_xp(block).linalg, name)(block, **kwargs)
        return out if pick is None else out[pick]

    return task


def _per_matrix(name: str, a: Any, *, drop: int = 0, pick: Any = None, **kwargs: Any) -> Any:
    """``linalg.<name>`` of each matrix of ``a``; ``drop`` trailing axes vanish."""
    a = _whole_matrices(a)
    if drop:
        return a.map_blocks(_run(name, pick, kwargs), drop_axis=list(range(a.ndim - drop, a.ndim)),
                            dtype=a.dtype, meta=a._meta)
    return a.map_blocks(_run(name, pick, kwargs), dtype=a.dtype, meta=a._meta)


def _packed(a: Any, name: str, shapes: list, kwargs: dict) -> tuple:
    """Several factors of each matrix from one LAPACK call per task.

    Each task packs its factors, flattened, along one last axis; they are
    sliced apart and reshaped here (``shapes``: the trailing shape of each).
    """
    a = _whole_matrices(a)
    sizes = [math.prod(s) for s in shapes]
    batch = a.shape[:-2]

    def task(block):
        xp = _chunk_xp(block)
        out = getattr(xp.linalg, name)(block, **kwargs)
        out = tuple(out) if isinstance(out, tuple) else (out,)
        lead = block.shape[:-2]
        return xp.concatenate([xp.reshape(f, lead + (-1,)) for f in out], axis=-1)

    flat = a.map_blocks(task, drop_axis=[a.ndim - 1], chunks=a.chunks[:-2] + ((sum(sizes),),),
                        dtype=a.dtype, meta=a._meta)
    factors, start = [], 0
    for size, shape in zip(sizes, shapes, strict=True):
        factors.append(flat[..., start:start + size].reshape(batch + tuple(shape)))
        start += size
    return tuple(factors)


class _Linalg:
    """``dask.array.linalg`` with NumPy's conventions, per matrix (see the module notes)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(da.linalg, name)

    def cholesky(self, a):
        """The *lower* factor, as NumPy gives it (Dask's default is the upper one)."""
        return _per_matrix("cholesky", a)

    def inv(self, a):
        return _per_matrix("inv", a)

    def det(self, a):
        return _per_matrix("det", a, drop=2)

    def slogdet(self, a):
        return (_per_matrix("slogdet", a, drop=2, pick=0),
                _per_matrix("slogdet", a, drop=2, pick=1))

    def solve(self, a, b):
        a = _whole_matrices(a)
        b = b.rechunk(a.chunks[:-2] + (-1, -1))

        def task(ab, bb):
            return _chunk_xp(ab).linalg.solve(ab, bb)

        return da.map_blocks(task, a, b, dtype=numpy.result_type(a.dtype, b.dtype),
                             chunks=b.chunks, meta=b._meta)

    def eigh(self, a, UPLO="L"):
        n = a.shape[-1]
        return _packed(a, "eigh", [(n,), (n, n)], {"UPLO": UPLO})

    def svd(self, a, full_matrices=True, compute_uv=True):
        m, n = a.shape[-2:]
        k = min(m, n)
        if not compute_uv:
            return _packed(a, "svd", [(k,)], {"compute_uv": False})[0]
        cu, rv = (m, n) if full_matrices else (k, k)
        return _packed(a, "svd", [(m, cu), (k,), (rv, n)], {"full_matrices": full_matrices})

    def qr(self, a, mode="reduced"):
        m, n = a.shape[-2:]
        k = min(m, n)
        if mode == "raw":
            return _packed(a, "qr", [(n, m), (k,)], {"mode": "raw"})
        if mode == "r":
            return _packed(a, "qr", [(k, n)], {"mode": "r"})[0]
        cols = m if mode == "complete" else k
        return _packed(a, "qr", [(m, cols), (cols, n)], {"mode": mode})


# -- sorting, along an axis held in one chunk -----------------------------------------


def _along_one_chunk(a: Any, axis: int) -> Any:
    return a.rechunk({axis % a.ndim: -1}) if a.ndim else a


def _argsort(a, axis=-1, kind=None):
    a = _along_one_chunk(a, axis)

    def task(block):
        xp = _chunk_xp(block)
        return xp.argsort(block, axis=axis) if kind is None else xp.argsort(block, axis=axis,
                                                                            kind=kind)

    return a.map_blocks(task, dtype=numpy.intp)


def _sort(a, axis=-1, kind=None):
    a = _along_one_chunk(a, axis)
    return a.map_blocks(lambda block: _chunk_xp(block).sort(block, axis=axis), dtype=a.dtype)


# -- indexing ----------------------------------------------------------------------


def _is_array(p: Any) -> bool:
    return hasattr(p, "dtype") and hasattr(p, "shape") and not isinstance(p, numpy.generic)


def _parts(index: Any) -> tuple:
    return index if isinstance(index, tuple) else (index,)


def getitem(x: Any, index: Any) -> Any:
    """``x[index]`` with NumPy's rules, where Dask's own indexing lacks them.

    Dask indexes with one integer array of at most one dimension; several, or
    one of more dimensions (``take`` along an axis, ``diagonal``, ``sort``),
    are gathered through the flat positions of the elements picked.
    """
    parts = _parts(index)
    advanced = [p for p in parts if isinstance(p, list) or (_is_array(p) and p.ndim > 0)]
    if len(advanced) == 0 or (len(advanced) == 1 and (advanced[0].dtype.kind == "b"
                                                      or advanced[0].ndim == 1)):
        return x[index]
    return _gather(x, parts)


def _gather(x: Any, parts: tuple) -> Any:
    """``x[parts]`` (integer arrays, ints, slices, Ellipsis) as a gather of flat positions."""
    if any(p is None or (_is_array(p) and p.dtype.kind == "b") for p in parts):
        raise FuncgradTypeError(
            "Dask arrays: indexing with several arrays (or one of several dimensions) takes "
            f"integer arrays, ints, slices and Ellipsis (no None, no boolean masks); got {parts!r}"
        )
    parts = _expand(parts, x.ndim)
    arrays = {k: da.asarray(p) for k, p in enumerate(parts) if not isinstance(p, slice)}
    sliced = {k: range(*p.indices(x.shape[k])) for k, p in enumerate(parts) if k not in arrays}
    shape, end, where = _gathered_layout(list(arrays), arrays, sliced)
    flat = da.zeros((), dtype=numpy.int64)
    stride = 1
    for k in reversed(range(x.ndim)):
        n = x.shape[k]
        if k in arrays:
            idx = _array_axis(arrays[k], n, end, len(shape))
        else:
            idx = _sliced_axis(sliced[k], where[k], len(shape))
        flat = flat + idx * stride
        stride *= n
    flat = da.broadcast_to(flat, shape)
    picked = xp.reshape(x, (-1,))[xp.reshape(flat, (-1,))]
    return xp.reshape(picked, shape)


def _gathered_layout(adv: list, arrays: dict, sliced: dict) -> tuple:
    """The result's shape, the axis where the broadcast index axes end, and where each
    sliced axis goes: NumPy's placement, the broadcast axes where the advanced indices
    are when these are adjacent, otherwise first."""
    bshape = numpy.broadcast_shapes(*(a.shape for a in arrays.values()))
    at = adv[0] if adv == list(range(adv[0], adv[-1] + 1)) else 0
    before = [k for k in sliced if k < at]
    after = [k for k in sliced if k >= at]
    shape = (tuple(len(sliced[k]) for k in before) + bshape
             + tuple(len(sliced[k]) for k in after))
    end = len(before) + len(bshape)
    where = {k: i for i, k in enumerate(before)}
    where.update({k: end + i for i, k in enumerate(after)})
    return shape, end, where


def _array_axis(a: Any, n: int, end: int, ndim: int) -> Any:
    """An integer index array of an axis of length ``n``, its negative entries wrapped,
    shaped to end at axis ``end`` of a result of ``ndim`` axes."""
    a = a.astype(numpy.int64)
    a = da.where(a < 0, a + n, a)
    lead = end - a.ndim
    return a.reshape((1,) * lead + a.shape + (1,) * (ndim - lead - a.ndim))


def _sliced_axis(r: range, at: int, ndim: int) -> Any:
    """The positions ``r`` a slice picks, along axis ``at`` of a result of ``ndim`` axes."""
    idx = da.arange(r.start, r.stop, r.step, dtype=numpy.int64) if len(r) else (
        da.zeros((0,), dtype=numpy.int64))
    return idx.reshape(tuple(len(r) if i == at else 1 for i in range(ndim)))


def _expand(parts: tuple, ndim: int) -> tuple:
    """``parts`` with Ellipsis (or its absence) made full slices: one part per axis."""
    parts = tuple(parts)
    ks = [i for i, p in enumerate(parts) if p is Ellipsis]  # (``in`` would compare arrays)
    if ks:
        k = ks[0]
        rest = parts[:k] + parts[k + 1:]
        return parts[:k] + (slice(None),) * (ndim - len(rest)) + parts[k + 1:]
    return parts + (slice(None),) * (ndim - len(parts))


def _positions(shape: tuple, chunks: tuple) -> Any:
    """The flat (C order) position of every element of an array of ``shape``, lazily."""
    grid = da.zeros((), dtype=numpy.int64)
    stride = 1
    for axis in reversed(range(len(shape))):
        n = shape[axis]
        along = da.arange(n, chunks=(chunks[axis],), dtype=numpy.int64)
        along = along.reshape(tuple(n if i == axis else 1 for i in range(len(shape))))
        grid = grid + along * stride
        stride *= n
    return da.broadcast_to(grid, shape, chunks=chunks) if shape else grid


def _scatter_task(block, pos, vals, shape, block_info=None):
    """The part of ``vals`` whose flat positions ``pos`` fall in this output block, summed."""
    xp = _chunk_xp(vals)
    loc = block_info[0]["array-location"]
    sizes = tuple(stop - start for start, stop in loc)
    pos = xp.reshape(pos, (-1,))
    vals = xp.reshape(vals, (-1,))
    inside = xp.ones(pos.shape, dtype=bool)
    local = xp.zeros(pos.shape, dtype=pos.dtype)
    if shape:
        for c, (start, _), n in zip(xp.unravel_index(pos, shape), loc, sizes, strict=True):
            c = c - start
            inside &= (c >= 0) & (c < n)
            local = local * n + c
    summed = xp.bincount(local[inside], weights=vals[inside], minlength=math.prod(sizes))
    return xp.reshape(summed, sizes).astype(vals.dtype)


def _place_task(g, mask, axis):
    """A block of zeros with the masked block ``g`` put back where ``mask`` is true."""
    xp = _chunk_xp(g)
    shape = g.shape[:axis] + mask.shape[axis:axis + 1] + g.shape[axis + 1:]
    out = xp.zeros(shape, g.dtype)
    index = (slice(None),) * axis + (xp.reshape(mask, (-1,)),)
    out[index] = g
    return out


def _one_mask_axis(parts: tuple, ndim: int) -> int | None:
    """``k`` when the index is full slices but for a 1-d boolean mask on axis ``k``."""
    masks = [p for p in parts if _is_array(p) and p.dtype.kind == "b"]
    if len(masks) != 1 or masks[0].ndim != 1:
        return None
    parts = _expand(parts, ndim)
    k = next(i for i, p in enumerate(parts) if p is masks[0])
    full = slice(None)
    if any(not (isinstance(p, slice) and p == full) for i, p in enumerate(parts) if i != k):
        return None
    return k


def _index_add_masked(g: Any, parts: tuple, shape: tuple) -> Any:
    """``index_add`` through a Dask boolean mask, whose selections have unknown sizes.

    ``x[mask]`` keeps the blocks of ``x``: block ``i`` of the result holds what
    the mask selects in block ``i``.  So the gradient is built block by block,
    each block of ``g`` put back into a block of zeros where its block of the
    mask is true -- no lengths needed.
    """
    k = _one_mask_axis(parts, len(shape))
    mask = next(p for p in parts if _is_array(p) and p.dtype.kind == "b")
    if k is None:
        raise FuncgradValueError(
            "Dask arrays: the gradient of indexing with a Dask boolean mask of unknown "
            "selection size is available for a 1-d mask on one axis (x[mask], x[:, mask]); "
            f"got an index of parts {[type(p).__name__ for p in parts]} for shape {shape}"
        )
    mask = da.asarray(mask)
    if g.numblocks[k] != mask.numblocks[0]:
        raise FuncgradValueError(
            f"Dask arrays: the gradient of x[mask] needs its blocks along axis {k} to match "
            f"the mask's ({mask.numblocks[0]} blocks), got {g.numblocks[k]}: chunk the mask "
            "like the array it selects from"
        )
    letters = "abcdefghijklmnopqrstuvwxyz"[: len(shape)]
    bshape = tuple(1 if i != k else n for i, n in enumerate(shape))
    g = g.rechunk({i: c for i, c in enumerate(g.chunks) if i != k}) if g.ndim > 1 else g
    return da.blockwise(_place_task, letters, g, letters, mask.reshape(bshape), letters,
                        axis=k, adjust_chunks={letters[k]: mask.chunks[0]}, dtype=g.dtype,
                        align_arrays=False, meta=g._meta)


def _block(x: Any, b: tuple) -> Any:
    """Block ``b`` of ``x`` as a Delayed value."""
    return dask.delayed(_same, pure=True)(x.blocks[b])


def _same(x: Any) -> Any:
    return x


def _index_add_basic(g: Any, parts: tuple, shape: tuple) -> Any:
    """``index_add`` for slices, ints, None and Ellipsis: no element is picked twice,
    so Dask's (lazy) assignment into zeros serves."""
    out = da.zeros(shape, dtype=g.dtype)
    if g.size == 0:
        return out
    full = _expand_with_none(parts, len(shape))
    if any(p is None for p in full):  # the axes of length 1 that None added to g go
        g = g[tuple(0 if p is None else slice(None) for p in full if not _is_int(p))]
    out[tuple(p for p in full if p is not None)] = g
    return out


def _is_int(p: Any) -> bool:
    return isinstance(p, (int, numpy.integer)) or (_is_array(p) and p.ndim == 0)


def _expand_with_none(parts: tuple, ndim: int) -> tuple:
    """``parts`` with Ellipsis expanded to full slices, None kept (it takes no axis)."""
    taking = [p for p in parts if p is not None and p is not Ellipsis]
    fill = (slice(None),) * (ndim - len(taking))
    out = []
    for p in parts:
        if p is Ellipsis:
            out.extend(fill)
            fill = ()
        else:
            out.append(p)
    return tuple(out) + fill


def index_add(g: Any, index: Any, shape: tuple) -> Any:
    """Zeros of ``shape`` with ``g`` added at ``index``, repeated indices accumulating.

    The scatter-add behind the gradient of ``x[index]``, lazily: each block of
    ``g`` adds its values into each block of the output (a task per pair,
    in the chunks' namespace, by ``bincount``), and the partial outputs are
    summed in a tree.  A Dask boolean mask, whose selection sizes are unknown,
    puts the blocks back one by one instead.
    """
    g = da.asarray(g)
    shape = tuple(shape)
    parts = _parts(index)
    if any(_is_array(p) and p.dtype.kind == "b" and isinstance(p, da.Array) for p in parts):
        return _index_add_masked(g, parts, shape)
    if not backend.known_shape(shape) or not backend.known_shape(g.shape):
        raise FuncgradValueError(
            f"Dask arrays: cannot scatter a gradient of shape {g.shape} into shape {shape}, "
            "whose length is unknown (call compute_chunk_sizes() on the array first)"
        )
    if not any(isinstance(p, list) or (_is_array(p) and p.ndim > 0) for p in parts):
        return _index_add_basic(g, parts, shape)
    # NumPy masks have known sizes: their integer positions serve as well.
    parts = tuple(q for p in parts
                  for q in (p.nonzero() if isinstance(p, numpy.ndarray) and p.dtype.kind == "b"
                            else (p,)))
    out_chunks = da.core.normalize_chunks("auto", shape, dtype=g.dtype)
    pos = getitem(_positions(shape, out_chunks), parts)
    pos = pos.rechunk(g.chunks) if pos.shape == g.shape else da.broadcast_to(
        pos, g.shape).rechunk(g.chunks)
    template = da.zeros(shape, dtype=g.dtype, chunks=out_chunks)
    # Each block of g (and of its positions) reaches every output block as a Delayed
    # value: the block itself, not the whole g, and no graph optimization now.
    partials = [
        template.map_blocks(_scatter_task, _block(pos, b), _block(g, b), shape, dtype=g.dtype,
                            meta=g._meta)
        for b in numpy.ndindex(*g.numblocks)
    ]
    if len(partials) == 1:
        return partials[0]
    return da.stack(partials, axis=0).sum(axis=0)


def _check_task(block, predicate, error):
    if not predicate(block):
        raise error
    return block


def checked(x: Any, predicate: Any, error: BaseException) -> Any:
    """``x``, raising ``error`` when a chunk is computed for which ``predicate`` is false."""
    return x.map_blocks(_check_task, predicate, error, dtype=x.dtype, meta=x._meta)


# -- the namespace ---------------------------------------------------------------------


class _FFT:
    """``dask.array.fft``, each transformed axis made one chunk first (Dask transforms
    only along axes of one chunk); funcgrad always names its ``axes``."""

    def __getattr__(self, name: str) -> Any:
        fun = getattr(da.fft, name)

        def call(a, *args, axes=None, **kwargs):
            if axes is not None and isinstance(a, da.Array):
                a = a.rechunk({ax: -1 for ax in axes})
            return fun(a, *args, axes=axes, **kwargs) if axes is not None else fun(a, *args, **kwargs)

        return call


class DaskNamespace:
    """``dask.array`` with NumPy's signatures where Dask's differ (see the module notes)."""

    def __init__(self) -> None:
        self.linalg = _Linalg()
        self.fft = _FFT()
        self.index_add = index_add
        self.checked = checked
        self.getitem = getitem
        self.argsort = _argsort
        self.sort = _sort

    def __getattr__(self, name: str) -> Any:
        try:
            return getattr(da, name)
        except AttributeError:
            raise AttributeError(f"dask.array has no {name!r}") from None

    def __repr__(self) -> str:
        return "<dask.array, as funcgrad dispatches to it>"

    # Creation: the dtype may come positionally, as NumPy's functions take it.
    @staticmethod
    def zeros(shape, dtype=float, order="C", **kwargs):
        return da.zeros(shape, dtype=dtype, **kwargs)

    @staticmethod
    def ones(shape, dtype=float, order="C", **kwargs):
        return da.ones(shape, dtype=dtype, **kwargs)

    @staticmethod
    def empty(shape, dtype=float, order="C", **kwargs):
        return da.empty(shape, dtype=dtype, **kwargs)

    @staticmethod
    def full(shape, fill_value, dtype=None, order="C", **kwargs):
        return da.full(shape, fill_value, dtype=dtype, **kwargs)

    @staticmethod
    def eye(N, M=None, k=0, dtype=float, **kwargs):
        return da.eye(N, M=M, k=k, dtype=dtype, **kwargs)

    @staticmethod
    def arange(*args, dtype=None, **kwargs):
        return da.arange(*args, dtype=dtype, **kwargs)

    @staticmethod
    def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, **kwargs):
        return da.linspace(start, stop, num, endpoint=endpoint, retstep=retstep, dtype=dtype,
                           **kwargs)

    @staticmethod
    def asarray(a, dtype=None, copy=None, like=None):
        """``a`` as a Dask array; NumPy data is split into ``like``'s chunks when given."""
        if isinstance(a, da.Array):
            return a if dtype is None or a.dtype == dtype else a.astype(dtype)
        if like is not None and isinstance(like, da.Array) and numpy.shape(a) == like.shape:
            x = da.from_array(a, chunks=like.chunks)
        else:
            x = da.asarray(a)
        # (the dtype applied here: older Dask's asarray ignores its dtype argument)
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)

    @staticmethod
    def einsum(subscripts, *operands, **kwargs):
        """``da.einsum``, each label's axes chunked alike first (Dask aligns the axes of
        different operands, not two axes of one operand: ``'ii->'``)."""
        ins = subscripts.split("->")[0].split(",")
        if len(ins) != len(operands) or "." in subscripts:
            return da.einsum(subscripts, *operands, **kwargs)
        chunks: dict = {}
        aligned = []
        for sub, op in zip(ins, operands, strict=True):
            op = da.asarray(op)
            want = {}
            for axis, label in enumerate(sub):
                if label not in chunks:
                    chunks[label] = op.chunks[axis]
                elif op.chunks[axis] != chunks[label]:
                    want[axis] = chunks[label]
            aligned.append(op.rechunk(want) if want else op)
        return da.einsum(subscripts, *aligned, **kwargs)

    @staticmethod
    def reshape(x, shape):
        """``da.reshape``; lengths unknown yet (NaN) allow unit axes to come and go."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        x = da.asarray(x)
        if backend.known_shape(x.shape):
            try:
                return da.reshape(x, shape)
            except NotImplementedError:  # not a merge or split of axes: through one axis
                return da.reshape(da.reshape(x, (-1,)), shape)
        kept = [n for n in x.shape if n != 1]
        if -1 in shape and len(kept) == 1:
            shape = tuple(kept[0] if n == -1 else n for n in shape)
        if not backend.same_shape(tuple(kept), tuple(n for n in shape if n != 1)):
            raise FuncgradValueError(
                f"Dask arrays: cannot reshape an array of shape {x.shape}, whose lengths are "
                f"not known yet, to {shape} (call compute_chunk_sizes() on it first)"
            )
        # Indexing with 0 and None, which (unlike reshape) leaves unknown lengths alone.
        y = x[tuple(0 if n == 1 else slice(None) for n in x.shape)]
        return y[tuple(None if n == 1 else slice(None) for n in shape)]

    @classmethod
    def array(cls, a, dtype=None, copy=True, **kwargs):
        # Dask arrays are immutable: a copy is the array itself.
        return cls.asarray(a, dtype=dtype)


xp = DaskNamespace()


# -- data-parallel building blocks (used by funcgrad.dask) ----------------------------


def row_blocks(arrays: tuple) -> list[tuple]:
    """The arrays' row blocks as Delayed objects, one tuple per block of rows.

    Every array is split along its first axis as the first array is (its
    other axes whole); the arrays must have the same number of rows.
    """
    if not arrays:
        raise FuncgradValueError("data_parallel_grad needs at least one chunked array")
    first = da.asarray(arrays[0])
    rows = first.chunks[0] if first.ndim else None
    split = []
    for i, a in enumerate(arrays):
        a = da.asarray(a)
        if a.ndim == 0:
            raise FuncgradValueError(f"data_parallel_grad: array {i} is 0-d; it has no rows")
        if backend.known_shape(first.shape[:1]) and a.shape[0] != first.shape[0]:
            raise FuncgradValueError(
                f"data_parallel_grad: array {i} has {a.shape[0]} rows, array 0 has "
                f"{first.shape[0]}"
            )
        wanted = (rows,) + tuple((n,) for n in a.shape[1:])
        if a.chunks != wanted:
            a = a.rechunk(wanted)
        split.append(a.to_delayed().reshape(-1))
    return list(zip(*split, strict=True))


def as_dask(a: Any) -> Any:
    """``a`` as a Dask array."""
    return da.asarray(a)


def shared(value: Any) -> Any:
    """``value`` as one Delayed value (Dask collections inside it computed), which
    many tasks can take without each carrying a copy."""
    return dask.delayed(value)


def persisted(value: Any) -> Any:
    """``value`` (a pytree holding Dask collections) with them computed and kept:
    ``dask.persist`` (futures, on a distributed client)."""
    (kept,) = dask.persist(value)
    return kept


def delayed(fun: Any) -> Any:
    """``dask.delayed(fun)``, pure: equal inputs give one task."""
    return dask.delayed(fun, pure=True)


def tree_reduce(items: list, combine: Any, split_every: int = 8) -> Any:
    """``combine`` applied over ``items`` (Delayed) in a tree, ``split_every`` at a time."""
    if split_every < 2:
        raise FuncgradValueError(f"split_every must be at least 2, got {split_every}")
    level = list(items)
    task = delayed(combine)
    while len(level) > 1:
        level = [task(*level[i:i + split_every]) if len(level[i:i + split_every]) > 1
                 else level[i] for i in range(0, len(level), split_every)]
    return level[0]


backend.register_namespace(da.Array, xp, _device, absorbs_numpy=True, to_host=_to_host,
                           lazy=True)
