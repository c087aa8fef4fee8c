"""funcgrad: functional automatic differentiation over immutable graphs.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda x: fnp.sum(x ** 2))(numpy.array([1.0, 2.0]))
array([2., 4.])
"""

import sys as _sys
from types import ModuleType as _ModuleType

from . import backends as _backends  # names Dask's namespace, imported when its arrays show up
from . import (
    nn,
    numpy,
    optim,
)
from .backprop import backprop
from .checks import check_grads
from .combinators import (
    grad,
    jvp,
    stop_gradient,
    value_and_grad,
    vjp,
)
from .custom import checkpoint, custom_jvp, custom_vjp
from .errors import (
    BackpropError,
    BatchedValueError,
    DeviceMismatchError,
    FrozenNodeError,
    FuncgradError,
    FuncgradIndexError,
    FuncgradStateError,
    FuncgradTypeError,
    FuncgradValueError,
    GradientTypeError,
    MissingRuleError,
    NodeConversionError,
    ReplayError,
    VmapFallbackWarning,
)
from .graph import GradientFlow, Graph, trace
from .hooks import BackwardHook, PrintHook, TimerHook, debug_nans, hooks
from .implicit import custom_linear_solve, custom_root
from .jacobians import hessian, hvp, jacfwd, jacobian, jacrev
from .node import (
    DEFAULT_BACKPROP_ID,
    BackpropId,
    Node,
    backprop_scope,
    device_of,
    is_grad_required,
    require_grad,
    to_device,
    value_of,
)
from .primitive import Primitive, defbatch, defjvp, defvjp, primitive
from .replay import replay
from .transforms import elementwise_grad, linearize
from .vectorize import vmap

__version__ = "0.1.0"
from . import tree
from .numpy import random

# ``fg.random`` is ``fnp.random``, importable by that name too (``import funcgrad.random``).
_sys.modules.setdefault(f"{__name__}.random", random)

# dir(funcgrad) lists the public surface: every name imported above, and the
# public subpackages, but not the implementation modules (importable as
# ``funcgrad.node`` etc., internals).  The subpackages stay out of ``__all__``:
# ``from funcgrad import *`` must not shadow the real ``numpy``.
_PUBLIC_MODULES = ["nn", "numpy", "optim", "random", "tree"]
__all__ = [
    _name for _name, _value in sorted(globals().items())
    if not _name.startswith("_") and not isinstance(_value, _ModuleType)
]


def __getattr__(name: str):
    # ``fg.dask`` is imported on first use: ``import funcgrad`` never imports Dask.
    if name == "dask":
        import importlib

        try:
            return importlib.import_module("funcgrad.dask")
        except ImportError as exc:
            raise ImportError(
                f"fg.dask needs Dask: pip install funcgrad[dask] ({exc})"
            ) from exc
    if name == "scipy":  # fg.scipy, imported on first use: ``import funcgrad`` never imports SciPy
        import importlib

        return importlib.import_module("funcgrad.scipy")
    raise AttributeError(f"module 'funcgrad' has no attribute {name!r}")


def _optional_modules() -> list:
    import importlib.util

    return ["dask"] if importlib.util.find_spec("dask") is not None else []


def __dir__() -> list:
    return sorted(__all__ + _PUBLIC_MODULES + _optional_modules()) + [
        n for n in globals() if n.startswith("__") and n.endswith("__")
    ]
