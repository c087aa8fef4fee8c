"""``funcgrad.optim``: first-order optimizers as pure functions over pytrees (layer 7).

Each optimizer is a pair of pure functions, as in optax:

- ``init(params) -> state``: the optimizer's state for parameters shaped
  like ``params`` (any pytree of arrays: a dict, a list, nested tuples...);
- ``update(grads, state, params=None) -> (updates, state)``: the updates for
  one step, a pytree shaped like ``grads``, and the next state.

The updates are the *negated* steps, so :func:`apply_updates` adds them:
``params = apply_updates(params, updates)``.  Nothing is changed in place:
the old state and parameters stay valid, and the functions are written with
``funcgrad.numpy``, so they run on any device and can themselves be
differentiated (through an unrolled training loop, say).

``learning_rate`` is a number or a *schedule*: a function of the step count
(0 at the first update) returning the rate, such as
``lambda count: 0.1 / (1 + count)``.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> from funcgrad import optim
>>> loss = lambda p: fnp.sum((p["w"] - 3.0) ** 2)
>>> params = {"w": numpy.zeros(2)}
>>> opt = optim.adam(0.1)
>>> state = opt.init(params)
>>> for _ in range(300):
...     updates, state = opt.update(fg.grad(loss)(params), state)
...     params = optim.apply_updates(params, updates)
>>> params["w"].round(3)
array([3., 3.])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from . import numpy as fnp
from . import tree
from .errors import FuncgradTypeError, FuncgradValueError


class Optimizer(NamedTuple):
    """An optimizer: ``init(params) -> state`` and ``update(grads, state, params=None)
    -> (updates, state)``, both pure (see the module's docstring).

    >>> from funcgrad import optim
    >>> opt = optim.sgd(0.5)
    >>> opt.update({"w": 2.0}, opt.init({"w": 1.0}))
    ({'w': -1.0}, SgdState(count=1))
    """

    init: Callable[[Any], Any]
    update: Callable[..., tuple[Any, Any]]


class SgdState(NamedTuple):
    """:func:`sgd`'s state: the number of updates made.

    >>> from funcgrad import optim
    >>> optim.sgd(0.1).init({"w": 1.0})
    SgdState(count=0)
    """

    count: int


class MomentumState(NamedTuple):
    """:func:`momentum`'s state: the number of updates and the velocity (``trace``).

    >>> import numpy
    >>> from funcgrad import optim
    >>> optim.momentum(0.1).init({"w": numpy.ones(2)})
    MomentumState(count=0, trace={'w': array([0., 0.])})
    """

    count: int
    trace: Any


class AdamState(NamedTuple):
    """:func:`adam`'s state: the number of updates and the first and second moments.

    >>> import numpy
    >>> from funcgrad import optim
    >>> optim.adam(0.1).init([numpy.ones(1)])
    AdamState(count=0, mu=[array([0.])], nu=[array([0.])])
    """

    count: int
    mu: Any
    nu: Any


class RmsPropState(NamedTuple):
    """:func:`rmsprop`'s state: the number of updates and the mean square of the gradients.

    >>> import numpy
    >>> from funcgrad import optim
    >>> optim.rmsprop(0.1).init(numpy.ones(2))
    RmsPropState(count=0, nu=array([0., 0.]))
    """

    count: int
    nu: Any


def _rate(learning_rate: Any, name: str) -> Callable[[int], Any]:
    if callable(learning_rate):
        return learning_rate
    if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float)) and \
            getattr(learning_rate, "shape", None) != ():
        raise FuncgradTypeError(
            f"optim.{name}: learning_rate must be a number or a schedule (a function of the "
            f"step count), got {type(learning_rate).__name__}")
    return lambda count: learning_rate


def _check_unit(value: Any, what: str, name: str) -> None:
    if not 0.0 <= float(value) < 1.0:
        raise FuncgradValueError(f"optim.{name}: {what} must be in [0, 1), got {value!r}")


def _zeros(params: Any) -> Any:
    return tree.tree_map(fnp.zeros_like, params)


def _scale(rate: Any, steps: Any) -> Any:
    return tree.tree_map(lambda s: -rate * s, steps)


def sgd(learning_rate: Any) -> Optimizer:
    """Stochastic gradient descent: ``updates = -learning_rate * grads``.

    >>> import numpy
    >>> from funcgrad import optim
    >>> opt = optim.sgd(0.1)
    >>> updates, state = opt.update({"w": numpy.array([1.0, -2.0])}, opt.init(None))
    >>> updates, state.count
    ({'w': array([-0.1,  0.2])}, 1)
    """
    rate = _rate(learning_rate, "sgd")

    def init(params: Any) -> SgdState:
        return SgdState(0)

    def update(grads: Any, state: SgdState, params: Any = None) -> tuple[Any, SgdState]:
        return _scale(rate(state.count), grads), SgdState(state.count + 1)

    return Optimizer(init, update)


def momentum(learning_rate: Any, mass: float = 0.9) -> Optimizer:
    """Gradient descent with momentum (optax's ``sgd(momentum=mass)``, heavy ball).

    ``trace = grads + mass * trace`` (from zeros); ``updates = -learning_rate * trace``.

    >>> from funcgrad import optim
    >>> opt = optim.momentum(1.0, mass=0.5)
    >>> state = opt.init({"w": 0.0})
    >>> u1, state = opt.update({"w": 1.0}, state)
    >>> u2, state = opt.update({"w": 1.0}, state)
    >>> float(u1["w"]), float(u2["w"])
    (-1.0, -1.5)
    """
    rate = _rate(learning_rate, "momentum")
    _check_unit(mass, "mass", "momentum")

    def init(params: Any) -> MomentumState:
        return MomentumState(0, _zeros(params))

    def update(grads: Any, state: MomentumState, params: Any = None
               ) -> tuple[Any, MomentumState]:
        trace = tree.tree_map(lambda g, t: g + mass * t, grads, state.trace)
        return _scale(rate(state.count), trace), MomentumState(state.count + 1, trace)

    return Optimizer(init, update)


def _abs_sq(g: Any) -> Any:
    """``|g|^2``, real: optax's second moment of a complex gradient (``g^2`` when real)."""
    return fnp.real(g * fnp.conj(g)) if fnp.iscomplexobj(g) else fnp.square(g)


def adam(learning_rate: Any, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
         ) -> Optimizer:
    """Adam (Kingma and Ba, 2015), with optax's formulas.

    ``mu = b1 mu + (1 - b1) g``, ``nu = b2 nu + (1 - b2) |g|^2`` (from zeros;
    ``|g|^2 = g conj(g)`` for a complex gradient, as in optax);
    with ``t`` the number of updates so far including this one,
    ``updates = -learning_rate * mu_hat / (sqrt(nu_hat) + eps)`` where
    ``mu_hat = mu / (1 - b1^t)`` and ``nu_hat = nu / (1 - b2^t)`` undo the
    moments' start at zero.

    >>> from funcgrad import optim
    >>> opt = optim.adam(0.1)
    >>> updates, _ = opt.update({"w": 4.0}, opt.init({"w": 0.0}))
    >>> print(f"{float(updates['w']):.6f}")   # the first step is -learning_rate * sign(g)
    -0.100000
    """
    rate = _rate(learning_rate, "adam")
    _check_unit(b1, "b1", "adam")
    _check_unit(b2, "b2", "adam")

    def init(params: Any) -> AdamState:
        return AdamState(0, _zeros(params), _zeros(params))

    def update(grads: Any, state: AdamState, params: Any = None) -> tuple[Any, AdamState]:
        mu = tree.tree_map(lambda g, m: b1 * m + (1 - b1) * g, grads, state.mu)
        nu = tree.tree_map(lambda g, v: b2 * v + (1 - b2) * _abs_sq(g), grads, state.nu)
        t = state.count + 1
        c1, c2 = 1 - b1**t, 1 - b2**t
        steps = tree.tree_map(lambda m, v: (m / c1) / (fnp.sqrt(v / c2) + eps), mu, nu)
        return _scale(rate(state.count), steps), AdamState(t, mu, nu)

    return Optimizer(init, update)


def rmsprop(learning_rate: Any, decay: float = 0.9, eps: float = 1e-8) -> Optimizer:
    """RMSProp (Tieleman and Hinton, 2012), with optax's formulas.

    ``nu = decay nu + (1 - decay) |g|^2`` (from zeros; ``|g|^2 = g conj(g)``
    for a complex gradient, as in optax);
    ``updates = -learning_rate * g / sqrt(nu + eps)`` (optax puts ``eps``
    inside the square root).

    >>> from funcgrad import optim
    >>> opt = optim.rmsprop(0.01, decay=0.75)
    >>> updates, state = opt.update({"w": 2.0}, opt.init({"w": 0.0}))
    >>> float(state.nu["w"]), round(float(updates["w"]), 6)   # nu = 0.25 * 2^2; -0.01 * 2 / 1
    (1.0, -0.02)
    """
    rate = _rate(learning_rate, "rmsprop")
    _check_unit(decay, "decay", "rmsprop")

    def init(params: Any) -> RmsPropState:
        return RmsPropState(0, _zeros(params))

    def update(grads: Any, state: RmsPropState, params: Any = None
               ) -> tuple[Any, RmsPropState]:
        nu = tree.tree_map(lambda g, v: decay * v + (1 - decay) * _abs_sq(g), grads, state.nu)
        steps = tree.tree_map(lambda g, v: g / fnp.sqrt(v + eps), grads, nu)
        return _scale(rate(state.count), steps), RmsPropState(state.count + 1, nu)

    return Optimizer(init, update)


def apply_updates(params: Any, updates: Any) -> Any:
    """``params + updates``, leaf by leaf; each result keeps its parameter's dtype.

    >>> import numpy
    >>> from funcgrad import optim
    >>> optim.apply_updates({"w": numpy.ones(2, "float32")}, {"w": numpy.array([0.5, -0.5])})
    {'w': array([1.5, 0.5], dtype=float32)}
    """
    def add(p: Any, u: Any) -> Any:
        out = p + u
        dtype = getattr(p, "dtype", None)
        return out if dtype is None or out.dtype == dtype else fnp.astype(out, dtype)

    return tree.tree_map(add, params, updates)


__all__ = ["AdamState", "MomentumState", "Optimizer", "RmsPropState", "SgdState", "adam",
           "apply_updates", "momentum", "rmsprop", "sgd"]


def __dir__() -> list:  # the public names only, not the imports
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]
