"""``dir()`` of every public module lists its documented public names and nothing else:
no private helpers, no imported modules (``numpy``, ``math``...), no internal
helpers (``as_arrays``, ``check_axis``, ``shape_of``).  The internals stay
importable; they are just not on the face of the module.

A new public name must be added to the documented lists below (and to the
docs); an internal one must stay out of ``dir()``.
"""

from __future__ import annotations

import importlib
import types

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

# API.md §1, §3-§9 and the extras the package exports (errors, the primitive class,
# the default graph, the pytree helpers); ``replay`` is API.md §8's working name.
FUNCGRAD = {
    "Node", "NodeConversionError", "value_of", "grad", "value_and_grad", "vjp", "jvp",
    "jacobian", "jacrev", "jacfwd", "hessian", "hvp", "stop_gradient", "checkpoint",
    "custom_vjp", "backprop_scope", "require_grad", "is_grad_required", "backprop", "trace",
    "Graph", "BackpropId", "primitive", "defvjp", "defjvp", "BackwardHook", "hooks",
    "TimerHook", "PrintHook", "debug_nans", "check_grads", "device_of", "to_device",
    "FuncgradError", "BackpropError", "GradientTypeError", "DeviceMismatchError", "replay", "ReplayError",
    "DEFAULT_BACKPROP_ID", "MissingRuleError", "Primitive", "nn", "numpy", "tree",
    "dask",  # API.md §7: fg.dask, imported on first use, listed where Dask is installed
    "vmap", "defbatch", "BatchedValueError", "VmapFallbackWarning",  # API.md §3, §5
    "random",  # API.md §8: fg.random is fnp.random
}
FUNCGRAD |= {"custom_jvp", "linearize", "elementwise_grad"}  # API.md §3 (issue 18)
FUNCGRAD |= {"custom_root", "custom_linear_solve"}  # API.md §10 (issue 20)
# API.md §9: every error class a message or the docs name; §4: with_gradients' result.
FUNCGRAD |= {"FuncgradValueError", "FuncgradTypeError", "FuncgradIndexError",
             "FuncgradStateError", "FrozenNodeError", "GradientFlow", "optim"}
OPTIM = {"sgd", "momentum", "adam", "rmsprop", "apply_updates", "Optimizer", "SgdState",
         "MomentumState", "AdamState", "RmsPropState"}  # API.md §10

# API.md §2.
FNP = {
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "isfinite", "isnan",
    "argmax", "argmin", "array", "asarray", "zeros", "ones", "full", "zeros_like", "ones_like",
    "full_like", "arange", "linspace", "eye", "add", "subtract", "multiply", "divide",
    "true_divide", "negative", "power", "square", "sqrt", "exp", "exp2", "log", "log2", "log10",
    "log1p", "expm1", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh",
    "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "abs", "absolute", "sign", "maximum",
    "minimum", "clip", "where", "reciprocal", "sum", "mean", "prod", "max", "min", "amax",
    "amin", "var", "std", "cumsum", "cumprod", "logaddexp", "dot", "matmul", "tensordot",
    "einsum", "outer", "inner", "trace", "linalg", "reshape", "transpose", "moveaxis",
    "swapaxes", "squeeze", "expand_dims", "broadcast_to", "concatenate", "stack", "split",
    "flip", "tile", "repeat", "ravel", "atleast_1d", "take", "pi", "e", "inf", "nan", "newaxis",
    "diag", "diagonal", "vstack", "hstack", "sort", "floor", "ceil", "round", "all", "any",
    "triu", "tril", "pad", "roll", "meshgrid", "cross",
}
FNP |= {"astype", "getitem", "index_add", "index_update", "isinf", "at"}  # exported extras
FNP |= {"real", "imag", "conj", "conjugate", "angle"}  # complex parts (issue 19)

# API.md §2, issue 19: the rest of NumPy (funcgrad/numpy/more.py) and fnp.fft.
FNP |= {
    "acos", "acosh", "allclose", "append", "argpartition", "argsort", "argwhere", "array_equal",
    "array_split", "asin", "asinh", "atan", "atan2", "atanh", "atleast_2d", "atleast_3d",
    "average", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "c_", "cbrt",
    "column_stack", "convolve", "corrcoef", "correlate", "count_nonzero", "cov", "deg2rad",
    "degrees", "diff", "dsplit", "dstack", "empty", "empty_like", "fabs", "fft", "fix",
    "flatnonzero", "fliplr", "flipud", "floor_divide", "fmax", "fmin", "fmod", "gradient",
    "hsplit", "hypot", "identity", "interp", "invert", "isclose", "iscomplex", "iscomplexobj",
    "isneginf", "isposinf", "isreal", "isrealobj", "kron", "logaddexp2", "logical_and",
    "logical_not", "logical_or", "logical_xor", "logspace", "median", "mod", "nan_to_num",
    "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmin",
    "nanprod", "nanstd", "nansum", "nanvar", "ndim", "nonzero", "partition", "percentile",
    "permute_dims", "polyval", "pow", "ptp", "quantile", "r_", "rad2deg", "radians",
    "real_if_close", "remainder", "rint", "rollaxis", "rot90", "row_stack", "searchsorted",
    "select", "signbit", "sinc", "size", "take_along_axis", "trapezoid", "trunc", "unique",
    "vander", "vsplit",
}
# NumPy's dtype names (NumPy's own types, re-exported) and dtype helpers.
DTYPES = {
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "int_", "intp", "uint",
    "double", "single", "longlong", "integer", "floating", "complexfloating", "number",
    "dtype", "finfo", "iinfo",
}
FNP |= DTYPES
FFT = {"fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
       "rfftn", "irfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq"}

LINALG = {"inv", "det", "slogdet", "solve", "cholesky", "norm", "eigh", "svd", "qr",
          "eigvalsh", "svdvals", "pinv", "lstsq", "matrix_power", "multi_dot", "matrix_rank",
          "eig", "eigvals"}
# API.md §8: numpy.random's names (its classes, bit generators, legacy functions).
RANDOM = {"Generator", "RandomState", "SeedSequence", "MT19937", "PCG64", "PCG64DXSM",
          "Philox", "default_rng", "ranf", "sample"} | {
    n for n in dir(np.random.RandomState) if not n.startswith("_") and n != "tomaxint"}
NN = {"sigmoid", "relu", "softplus", "log_softmax", "softmax", "logsumexp",
      "softmax_cross_entropy", "gelu", "silu", "elu", "leaky_relu", "log_sigmoid", "one_hot"}

import funcgrad.scipy.optimize  # API.md §10
import funcgrad.scipy.sparse.linalg

MODULES = [
    pytest.param(funcgrad.scipy.optimize, {"minimize"}, set(), id="funcgrad.scipy.optimize"),
    pytest.param(funcgrad.scipy.sparse.linalg, {"cg", "gmres", "bicgstab"}, set(),
                 id="funcgrad.scipy.sparse.linalg"),
    pytest.param(fg, FUNCGRAD, {"nn", "numpy", "optim", "random", "tree", "dask"},
                 id="funcgrad"),
    pytest.param(fg.optim, OPTIM, set(), id="funcgrad.optim"),
    pytest.param(fnp, FNP | {"random"}, {"linalg", "random", "fft"}, id="funcgrad.numpy"),
    pytest.param(fnp.random, RANDOM, set(), id="funcgrad.numpy.random"),
    pytest.param(fnp.linalg, LINALG, set(), id="funcgrad.numpy.linalg"),
    pytest.param(fnp.fft, FFT, set(), id="funcgrad.numpy.fft"),
    pytest.param(fg.nn, NN, set(), id="funcgrad.nn"),
]


def _listed(module) -> list:
    return [n for n in dir(module) if not (n.startswith("__") and n.endswith("__"))]


@pytest.mark.parametrize("module, documented, submodules", MODULES)
def test_dir_lists_only_documented_public_names(module, documented, submodules):
    names = _listed(module)
    private = [n for n in names if n.startswith("_")]
    assert not private, f"dir({module.__name__}) lists private names {private}"
    modules = [n for n in names
               if isinstance(getattr(module, n), types.ModuleType) and n not in submodules]
    assert not modules, f"dir({module.__name__}) lists imported modules {modules}"
    unknown = sorted(set(names) - documented)
    assert not unknown, f"dir({module.__name__}) lists undocumented names {unknown}"


@pytest.mark.parametrize("module, documented, submodules", MODULES)
def test_every_listed_name_resolves(module, documented, submodules):
    for name in _listed(module):
        getattr(module, name)
    for name in getattr(module, "__all__", ()):
        assert name in dir(module), f"{module.__name__}.__all__ has {name!r}, dir() does not"


@pytest.mark.parametrize("name", ["numpy", "math", "numbers", "as_arrays", "check_axis",
                                  "shape_of", "xp_of", "raw", "primitive", "defvjp"])
def test_helpers_are_not_listed_in_linalg(name):
    assert name not in dir(fnp.linalg)


def test_internals_stay_importable():
    # Hidden from dir(), not removed: other modules import them.
    from funcgrad.numpy.linalg import as_arrays, check_axis, shape_of  # noqa: F401
    from funcgrad.numpy.shape import as_arrays as _as_arrays  # noqa: F401

    node, shape = (importlib.import_module(f"funcgrad.{m}") for m in ("node", "numpy.shape"))
    assert node.Node is fg.Node and shape.reshape is fnp.reshape


def test_the_nn_and_numpy_subpackages_are_not_star_exported():
    # ``from funcgrad import *`` must not shadow the real numpy.
    assert "numpy" not in fg.__all__ and "grad" in fg.__all__


def test_dtype_names_are_numpys_own():
    for name in DTYPES:
        assert getattr(fnp, name) is getattr(np, name), name
    assert fnp.zeros(2, fnp.float32).dtype == np.float32


def test_constants_are_numpys_plain_python_values():
    for name in ("pi", "e", "inf", "nan"):
        value = getattr(fnp, name)
        assert type(value) is float, name
        np.testing.assert_equal(value, getattr(np, name))
    assert fnp.newaxis is None is np.newaxis
