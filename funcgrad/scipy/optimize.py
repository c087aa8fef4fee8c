"""``scipy.optimize.minimize`` with exact derivatives, and differentiable (layer 7).

:func:`minimize` hands SciPy the gradient, Hessian or Hessian-vector products
of a funcgrad function -- whichever the method takes -- and makes its answer
differentiable in the problem's parameters by the implicit function theorem:
at a minimum ``∇ₓ fun(x*, θ) = 0``, so ``dx* = -H⁻¹ ∂(∇ₓ fun)/∂θ dθ``, through
:func:`funcgrad.custom_root`.  The optimizer's iterations are never recorded.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> from funcgrad.scipy.optimize import minimize
>>> def argmin(c):                         # of sum((x - c)^2) + sum(x^4): x + 2x^3 = c
...     return minimize(lambda x, c: fnp.sum((x - c) ** 2 + x ** 4), numpy.zeros(2), (c,),
...                     method="BFGS", tol=1e-12).x
>>> c = numpy.array([3.0, 0.0])
>>> argmin(c)
array([1., 0.])
>>> fg.jacobian(argmin)(c)                 # dx/dc = 1 / (1 + 6x^2)
array([[0.14285714, 0.        ],
       [0.        , 1.        ]])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy
import scipy.optimize
import scipy.sparse.linalg

from .. import backend, tree
from ..combinators import grad, stop_gradient, value_and_grad
from ..batching import loop_needed
from ..context import unrecorded
from ..errors import FuncgradError, FuncgradTypeError, FuncgradValueError
from ..implicit import custom_root
from ..jacobians import hessian, hvp
from ..node import Node, device_of, value_of
from ..numpy import reshape, where
from .sparse.linalg import _cg_on_device

# What each of SciPy's methods takes, besides the function.
_JAC = {"cg", "bfgs", "l-bfgs-b", "tnc", "slsqp", "newton-cg", "trust-ncg", "trust-krylov",
        "trust-exact", "dogleg", "trust-constr"}
_HESSP = {"newton-cg", "trust-ncg", "trust-krylov", "trust-constr"}
_HESS = {"dogleg", "trust-exact"}
_DENSE = 256  # up to this many unknowns, the implicit solves form the Hessian


def _singular() -> FuncgradValueError:
    return FuncgradValueError(
        "minimize: the Hessian at the solution is singular, so the solution is not "
        "a differentiable function of the parameters there"
    )


_CG_FAILED = ("minimize: conjugate gradients on the Hessian at the solution did not converge "
              "(info={info}): the Hessian may not be positive definite there")
_GMRES_FAILED = ("minimize: GMRES on the Jacobian of the bounded problem at the solution did "
                 "not converge (info={info})")


def _converged(x: Any, info: int, failure: str) -> Any:
    if info != 0:
        raise FuncgradValueError(failure.format(info=info))
    return x


def _solve_on_device(hv: Callable, y: Any, symmetric: bool) -> Any:
    """``H⁻¹ y`` on another device than the CPU, in the arrays' own namespace."""
    xp = backend.namespace(y)
    n = y.shape[0]
    if n <= _DENSE or not symmetric:
        eye = xp.eye(n, dtype=y.dtype)
        x = xp.linalg.solve(xp.stack([hv(eye[i]) for i in range(n)], axis=1), y)
        if not bool(backend.to_device(xp.all(xp.isfinite(x)), "cpu")):
            raise _singular()
        return x
    return _converged(*_cg_on_device(hv, y, rtol=1e-10, maxiter=10 * n), _CG_FAILED)


def _krylov(solver: Callable, mv: Callable, y: Any, failure: str) -> Any:
    """SciPy's Krylov ``solver`` on the operator ``v -> mv(v)`` (host arrays)."""
    n = y.shape[0]
    op = scipy.sparse.linalg.LinearOperator((n, n), matvec=lambda v: numpy.asarray(mv(v)),
                                            dtype=y.dtype)
    return _converged(*solver(op, y, rtol=1e-10, maxiter=10 * n), failure)


def _hessian_solve(hv: Callable, y: Any) -> Any:
    """``H⁻¹ y``, ``hv`` computing ``H v`` (raw arrays): dense when small, else CG."""
    n = y.shape[0]
    if type(y) is not numpy.ndarray:
        return _solve_on_device(hv, y, symmetric=True)
    if n <= _DENSE:
        H = numpy.stack([numpy.asarray(hv(e)) for e in numpy.eye(n, dtype=y.dtype)], axis=1)
        try:
            return numpy.linalg.solve(H, y)
        except numpy.linalg.LinAlgError:
            raise _singular() from None
    return _krylov(scipy.sparse.linalg.cg, hv, y, _CG_FAILED)


def _general_solve(jv: Callable, y: Any) -> Any:
    """``J⁻¹ y`` for the (not symmetric) Jacobian of the bounded stationarity conditions."""
    if type(y) is not numpy.ndarray:
        return _solve_on_device(jv, y, symmetric=False)
    if y.shape[0] <= _DENSE:
        return _hessian_solve(jv, y)
    return _krylov(scipy.sparse.linalg.gmres, jv, y, _GMRES_FAILED)


def _refuse_constrained(jv: Callable, y: Any) -> Any:
    raise FuncgradError(
        "minimize: a result found with constraints is not differentiable in the parameters "
        "here (the Lagrange multipliers are not known): reformulate with bounds, or minimize "
        "a penalized objective"
    )


class _Flat:
    """A pytree of arrays as one float64 vector, and back (differentiably)."""

    def __init__(self, x0: Any):
        leaves, self.treedef = tree.flatten(x0)
        if not leaves:
            raise FuncgradValueError("minimize: x0 has no arrays")
        raw = []
        self.device = None  # where x lives when not on the CPU: SciPy sees a host copy
        for k, v in enumerate(leaves):
            v = value_of(stop_gradient(v))
            if hasattr(v, "shape") and not isinstance(v, (numpy.ndarray, numpy.generic)):
                if backend.is_lazy(backend.namespace(v)):
                    raise FuncgradTypeError(
                        f"minimize: x0 leaf {k} is a lazy {type(v).__name__}: an optimizer "
                        "reads every iterate, compute it first"
                    )
                device = device_of(v)
                if self.device not in (None, device):
                    raise FuncgradTypeError(
                        f"minimize: x0 has leaves on {self.device} and on {device} (leaf {k})"
                    )
                self.device = device
                v = backend.to_device(v, "cpu")
            v = numpy.asarray(v)
            if v.dtype.kind not in "fiu":
                raise FuncgradTypeError(
                    f"minimize: x0 leaf {k} must be real numbers, got dtype {v.dtype}"
                )
            raw.append(v)
        self.shapes = [v.shape for v in raw]
        self.dtypes = [v.dtype if v.dtype.kind == "f" else numpy.dtype(float) for v in raw]
        self.bounds = numpy.cumsum([0] + [v.size for v in raw])
        self.vector = numpy.concatenate([v.ravel() for v in raw]).astype(numpy.float64)

    def put(self, v: Any) -> Any:
        """A host array (SciPy's iterate) on x0's device."""
        return v if self.device is None else backend.to_device(v, self.device)

    @staticmethod
    def host(v: Any) -> Any:
        """A raw result as a float64 NumPy array, for SciPy."""
        if not isinstance(v, (numpy.ndarray, numpy.generic, float, int)):
            v = backend.to_device(v, "cpu")
        return numpy.asarray(v, dtype=numpy.float64)

    def unravel(self, v: Any) -> Any:
        leaves = []
        for k, (shape, dtype) in enumerate(zip(self.shapes, self.dtypes, strict=True)):
            part = reshape(v[self.bounds[k]:self.bounds[k + 1]], shape)
            leaves.append(part if part.dtype == dtype else part.astype(dtype))
        return tree.unflatten(self.treedef, leaves)


def _bound_arrays(bounds: Any, n: int) -> tuple:
    """Lower and upper bounds of the flat vector (±inf where there is none)."""
    if isinstance(bounds, scipy.optimize.Bounds):
        lb, ub = bounds.lb, bounds.ub
    else:
        pairs = list(bounds)
        if len(pairs) != n:
            raise FuncgradValueError(f"minimize: {len(pairs)} bounds for {n} unknowns")
        lb = [-numpy.inf if lo is None else lo for lo, _ in pairs]
        ub = [numpy.inf if hi is None else hi for _, hi in pairs]
    lb = numpy.broadcast_to(numpy.asarray(lb, dtype=numpy.float64), (n,))
    ub = numpy.broadcast_to(numpy.asarray(ub, dtype=numpy.float64), (n,))
    return lb, ub


def _active(x: Any, bounds: Any) -> tuple:
    """Which entries of ``x`` sit on a bound, and the bound's value there (else 0)."""
    lb, ub = _bound_arrays(bounds, x.shape[0])
    near = 1e-9 * (1.0 + numpy.abs(x))
    low = numpy.isfinite(lb) & (x <= lb + near)
    high = numpy.isfinite(ub) & (x >= ub - near) & ~low
    at = numpy.where(low, numpy.where(numpy.isfinite(lb), lb, 0.0),
                     numpy.where(high, numpy.where(numpy.isfinite(ub), ub, 0.0), 0.0))
    return low | high, at


def minimize(fun: Callable, x0: Any, args: tuple = (), method: str | Callable | None = None,
             tol: float | None = None, options: dict | None = None, *,
             bounds: Any = None, constraints: Any = (),
             callback: Callable | None = None) -> scipy.optimize.OptimizeResult:
    """``scipy.optimize.minimize`` of a funcgrad function, given its exact derivatives.

    ``fun(x, *args)`` returns a scalar; ``x0`` is an array of any shape or a
    pytree of arrays (SciPy sees one flat vector).  The method (SciPy's
    default, BFGS, when None) gets what it takes: the gradient (CG, BFGS,
    L-BFGS-B, TNC, SLSQP), and Hessian-vector products (Newton-CG,
    trust-ncg, trust-krylov, trust-constr) or the Hessian (dogleg,
    trust-exact); Nelder-Mead, Powell and COBYLA take none.  ``tol``,
    ``options``, ``bounds`` and ``constraints`` (of the flat vector) and
    ``callback`` (which receives it) pass to SciPy.

    Returns SciPy's ``OptimizeResult``, ``x`` in the structure of ``x0`` and
    on its device: with ``x0`` on a GPU (CuPy), SciPy iterates on a host copy
    of the vector while ``fun`` and its derivatives run on the device.
    Called with traced ``args`` (or a ``fun`` that closes over traced
    values), ``x`` is differentiable in them, to every order, by the implicit
    function theorem, and so is ``fun``, the value there: the derivative
    costs a solve with the Hessian at ``x`` (formed when ``x`` has at most 256
    entries, else by conjugate gradients), never the optimizer's steps.  It
    is exact at a minimum; so check ``success``.  With ``bounds``, an entry
    on its bound stays there (its derivative is zero) and the others follow
    the implicit function theorem on the free entries; with
    ``constraints``, differentiating the result raises
    :class:`~funcgrad.FuncgradError` (the multipliers are not known).

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> from funcgrad.scipy.optimize import minimize
    >>> def rosen(x):
    ...     return fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    >>> res = minimize(rosen, numpy.array([-1.2, 1.0, 0.5]), method="trust-exact")
    >>> res.success, numpy.allclose(res.x, 1.0)
    (True, True)
    """
    for v in tree.flatten((x0, args))[0]:  # SciPy sees one example at a time: under
        loop_needed("minimize", v)          # fg.vmap, a loop over the examples
    flat = _Flat(x0)
    name = method.lower() if isinstance(method, str) else method
    if name is None:  # SciPy's choice
        name = "slsqp" if constraints else "l-bfgs-b" if bounds is not None else "bfgs"

    def f_flat(v: Any, *a: Any) -> Any:
        return fun(flat.unravel(v), *a)

    raw_args = stop_gradient(tuple(args))

    def for_scipy(compute: Callable, convert: Callable) -> Callable:
        """One of SciPy's callbacks: its vectors on x0's device (trust-constr may hand over
        integer ones), computed unrecorded, the result as host floats."""
        def call(*vectors: Any) -> Any:
            with unrecorded():
                out = compute(*(flat.put(numpy.asarray(v, dtype=numpy.float64))
                                for v in vectors))
            for leaf in tree.flatten(out)[0]:  # fun closes over values fg.vmap maps
                loop_needed("minimize", leaf)
            return convert(out)

        return call

    def scalar(value: Any) -> float:
        return float(flat.host(value))

    objective = for_scipy(lambda v: value_and_grad(f_flat)(v, *raw_args),
                          lambda vg: (scalar(vg[0]), flat.host(vg[1])))
    plain = for_scipy(lambda v: f_flat(v, *raw_args), scalar)
    hess = for_scipy(lambda v: hessian(f_flat)(v, *raw_args), flat.host)
    hessp = for_scipy(lambda v, p: hvp(lambda u: f_flat(u, *raw_args), (v,), (p,)), flat.host)

    kwargs: dict = {"method": method, "tol": tol, "options": options, "callback": callback,
                    "bounds": bounds, "constraints": constraints}
    if callable(name) or name in _JAC:
        kwargs["jac"] = True
        if name in _HESSP:
            kwargs["hessp"] = hessp
        elif name in _HESS:
            kwargs["hess"] = hess
        res = scipy.optimize.minimize(objective, flat.vector, **kwargs)
    else:
        res = scipy.optimize.minimize(plain, flat.vector, **kwargs)
    found = numpy.asarray(res.x, dtype=numpy.float64)

    active, at = _active(found, bounds) if bounds is not None else (None, None)
    on_bound = active is not None and bool(active.any())
    if on_bound:
        active, at = flat.put(active), flat.put(at)

    def stationary(v):  # ∇ₓ fun: zero at the minimum, with the traced parameters
        g = grad(f_flat)(v, *args)
        if on_bound:  # an entry on its bound stays there
            g = where(active, v - at, g)
        return g

    found = flat.put(found)
    if constraints:
        x = custom_root(stationary, found, lambda f, guess: guess, _refuse_constrained)
    elif on_bound:
        x = custom_root(stationary, found, lambda f, guess: guess, _general_solve)
    else:
        x = custom_root(stationary, found, lambda f, guess: guess, _hessian_solve)
    res.x = flat.unravel(x)
    if type(x) is Node:
        res.fun = f_flat(x, *args)
    return res


__all__ = ["minimize"]


def __dir__() -> list:  # the public names only, not the helpers and imports
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]
