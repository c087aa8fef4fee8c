"""funcgrad: functional automatic differentiation over immutable graphs.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda x: fnp.sum(x ** 2))(numpy.array([1.0, 2.0]))
array([2., 4.])
"""

from . import (
    nn,
    numpy,
)
from .backprop import backprop
from .checks import check_grads
from .combinators import (
    grad,
    hessian,
    hvp,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    stop_gradient,
    value_and_grad,
    vjp,
)
from .custom import checkpoint, custom_vjp
from .errors import (
    BackpropError,
    DeviceMismatchError,
    FuncgradError,
    GradientTypeError,
    NodeConversionError,
)
from .graph import Graph, trace
from .hooks import BackwardHook, PrintHook, TimerHook, debug_nans, hooks
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
from .primitive import MissingRuleError, Primitive, defjvp, defvjp, primitive

__version__ = "0.1.0"
from . import tree
