"""Every public differentiable function, at order 2, in both modes, against finite differences.

The rows live in ``rows_*.py`` beside this file (see ``table.py``); the guard
below fails when a name of API.md §2 or of ``fg.nn`` has no row.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from table import load_rows

import funcgrad as fg
import funcgrad.numpy as fnp

ROWS = load_rows()

# API.md §2, the differentiable names (comparison and creation are data only).
DIFFERENTIABLE = ["add", "subtract", "multiply", "divide", "true_divide", "negative", "power", "square", "sqrt", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "abs", "absolute", "maximum", "minimum", "clip", "where", "reciprocal", "sum", "mean", "prod", "max", "min", "amax", "amin", "var", "std", "cumsum", "cumprod", "logaddexp", "dot", "matmul", "tensordot", "einsum", "outer", "inner", "trace", "linalg.inv", "linalg.det", "linalg.slogdet", "linalg.solve", "linalg.cholesky", "linalg.norm", "reshape", "transpose", "moveaxis", "swapaxes", "squeeze", "expand_dims", "broadcast_to", "concatenate", "stack", "split", "flip", "tile", "repeat", "ravel", "atleast_1d", "take", "getitem", "floor", "ceil", "round", "sort", "diag", "diagonal", "vstack", "hstack", "triu", "tril", "pad", "roll", "meshgrid", "cross", "linalg.eigh", "linalg.svd", "linalg.qr", "nn.sigmoid", "nn.relu", "nn.softplus", "nn.log_softmax", "nn.softmax", "nn.logsumexp", "nn.softmax_cross_entropy"]

DATA_ONLY = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "isfinite", "isnan", "argmax", "argmin", "sign", "array", "asarray", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "arange", "linspace", "eye", "all", "any"]


# Issue 19: fnp.fft, the rest of NumPy, the new linalg and nn functions.
DIFFERENTIABLE += [f"fft.{n}" for n in fnp.fft.__all__ if not n.endswith("freq")] + [
    "acos", "acosh", "append", "array_split", "asin", "asinh", "atan", "atan2", "atanh",
    "atleast_2d", "atleast_3d", "average", "c_", "cbrt", "column_stack", "convolve", "corrcoef",
    "correlate", "cov", "deg2rad", "degrees", "diff", "dsplit", "dstack", "fabs", "fix",
    "fliplr", "flipud", "floor_divide", "fmax", "fmin", "fmod", "gradient", "hsplit", "hypot",
    "interp", "kron", "logaddexp2", "logspace", "median", "mod", "nan_to_num", "nancumprod",
    "nancumsum", "nanmax", "nanmean", "nanmin", "nanprod", "nanstd", "nansum", "nanvar",
    "partition", "percentile", "permute_dims", "polyval", "pow", "ptp", "quantile", "r_",
    "rad2deg", "radians", "real_if_close", "remainder", "rint", "rollaxis", "rot90",
    "row_stack", "select", "sinc", "take_along_axis", "trapezoid", "trunc", "vander", "vsplit",
    "linalg.eigvalsh", "linalg.svdvals", "linalg.pinv", "linalg.lstsq", "linalg.matrix_power",
    "linalg.multi_dot", "linalg.eig", "linalg.eigvals", "nn.gelu", "nn.silu", "nn.elu", "nn.leaky_relu", "nn.log_sigmoid",
]
DATA_ONLY += [
    "allclose", "argpartition", "argsort", "argwhere", "array_equal", "bitwise_and",
    "bitwise_not", "bitwise_or", "bitwise_xor", "count_nonzero", "flatnonzero", "invert",
    "isclose", "iscomplex", "iscomplexobj", "isinf", "isneginf", "isposinf", "isreal",
    "isrealobj", "logical_and", "logical_not", "logical_or", "logical_xor", "nanargmax",
    "nanargmin", "nonzero", "searchsorted", "signbit", "unique", "empty", "empty_like",
    "identity", "ndim", "size", "fft.fftfreq", "fft.rfftfreq", "linalg.matrix_rank",
    "nn.one_hot",
]


def _resolve(name: str):
    if name.startswith("nn."):
        return getattr(fg.nn, name[3:])
    obj = fnp
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def test_every_public_name_exists():
    missing = []
    for name in DIFFERENTIABLE + DATA_ONLY:
        try:
            _resolve(name)
        except AttributeError:
            missing.append(name)
    assert not missing, f"names of API.md §2 missing from funcgrad: {missing}"


def test_every_differentiable_name_has_a_row():
    covered = {row.name for row in ROWS}
    missing = [n for n in DIFFERENTIABLE if n not in covered]
    assert not missing, f"public functions without a row in tests/rows_*.py: {missing}"


def _cases():
    for row in ROWS:
        for shapes in row.shapes:
            for dtype in row.dtypes:
                label = f"{row.name}{('-' + row.id) if row.id else ''}-{shapes}-{dtype}"
                yield pytest.param(row, shapes, dtype, id=label)


@pytest.mark.parametrize("row, shapes, dtype", list(_cases()))
def test_row(row, shapes, dtype):
    rng = np.random.default_rng(abs(zlib.crc32(f"{row.name}{row.id}{shapes}".encode())) % 2**32)
    args = row.inputs(rng, dtype, shapes)
    # Values match NumPy's dtype: float inputs give float outputs of the same dtype.
    out = row.fun(*args)
    for leaf in fg.tree.flatten(out)[0]:
        assert np.asarray(leaf).dtype == np.dtype(dtype), f"{row.name} changed dtype"
    fg.check_grads(row.fun, args, order=row.order, modes=row.modes,
                   rtol=row.rtol, atol=row.atol)
    # Gradients come back in the inputs' dtypes.
    _, vjp_fn = fg.vjp(row.fun, *args)
    ct = fg.tree.tree_map(np.ones_like, out)
    for a, g in zip(args, vjp_fn(ct), strict=True):
        assert g.dtype == a.dtype and g.shape == a.shape


def _float16_cases():
    for row in ROWS:
        shapes = next((s for s in row.shapes if all(np.prod(x) > 0 for x in s)), row.shapes[0])
        yield pytest.param(row, shapes, id=f"{row.name}{('-' + row.id) if row.id else ''}")


@pytest.mark.parametrize("row, shapes", list(_float16_cases()))
def test_float16_gradients_stay_float16(row, shapes):
    rng = np.random.default_rng(zlib.crc32(row.name.encode()))
    args = row.inputs(rng, "float16", shapes)
    out, vjp_fn = fg.vjp(row.fun, *args)
    ct = fg.tree.tree_map(np.ones_like, out)
    for a, g in zip(args, vjp_fn(ct), strict=True):
        assert g.dtype == np.float16, f"{row.name}: gradient dtype {g.dtype} for float16 input"
        assert g.shape == a.shape
    _, t = fg.jvp(row.fun, args, tuple(np.ones_like(a) for a in args))
    for leaf in fg.tree.flatten(t)[0]:
        assert np.asarray(leaf).dtype == np.float16, f"{row.name}: tangent dtype changed"


def _zero_d_cases():
    for row in ROWS:
        for shapes in row.shapes:
            if all(s == () for s in shapes):
                yield pytest.param(row, shapes, id=f"{row.name}{('-' + row.id) if row.id else ''}")


@pytest.mark.parametrize("row, shapes", list(_zero_d_cases()))
def test_row_through_0d_intermediates(row, shapes):
    # ``x * 1.0`` of a 0-d float64 array is a numpy.float64, a subclass of
    # Python's float: a rule that takes it for a Python constant drops a path.
    rng = np.random.default_rng(zlib.crc32(f"0d-{row.name}{row.id}".encode()))
    args = row.inputs(rng, "float64", shapes)
    fg.check_grads(lambda *a: row.fun(*[x * 1.0 for x in a]), args, order=row.order,
                   modes=row.modes, rtol=row.rtol, atol=row.atol)


def _mixed_cases():
    for row in ROWS:
        shapes = next((s for s in row.shapes if all(np.prod(x) > 0 for x in s)), None)
        if shapes is not None and len(shapes) >= 2:
            yield pytest.param(row, shapes, id=f"{row.name}{('-' + row.id) if row.id else ''}")


@pytest.mark.parametrize("row, shapes", list(_mixed_cases()))
def test_tangents_take_the_output_dtype_when_precisions_mix(row, shapes):
    rng = np.random.default_rng(zlib.crc32(f"mixed-{row.name}{row.id}".encode()))
    args = row.inputs(rng, "float64", shapes)
    for k in range(len(args)):  # argument k in float32 and traced, the others float64 data
        a32 = args[k].astype(np.float32)

        def fun(a, k=k):
            return row.fun(*(a if i == k else x for i, x in enumerate(args)))

        out, t = fg.jvp(fun, (a32,), (np.ones_like(a32),))
        for o, tl in zip(fg.tree.flatten(out)[0], fg.tree.flatten(t)[0], strict=True):
            assert np.asarray(tl).dtype == np.asarray(o).dtype, (k, tl.dtype, o.dtype)
        _, vjp_fn = fg.vjp(fun, a32)
        assert vjp_fn(fg.tree.tree_map(np.ones_like, out))[0].dtype == np.float32
