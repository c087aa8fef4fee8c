"""Hostile inputs for every public function, and the judge of what a call may do.

``CALLS`` maps a name to a function of ``(args, kwargs)`` calling one public
name of funcgrad (every ``fnp`` function, ``fnp.linalg``, ``fg.nn``, the
combinators and what they return, the backprop API, ``check_grads``, ``trace``,
the extension API).  ``VALUES`` makes the inputs, fresh at each call: odd
dtypes, NaN and Inf, empty, 0-d and 32-d arrays, read-only, strided,
Fortran-order and big-endian arrays, ``np.matrix``, masked arrays, NumPy
scalars, ragged and self-holding lists, ``None``, huge Python ints, Nodes,
graph ids, hooks, functions.  ``judge`` runs one call and says what went wrong:
an exception other than a ``FuncgradError``, ``TypeError`` or ``ValueError``,
one with an empty message, a call running past its time, a changed input, or
a Node escaping from a call given no Node.
"""

from __future__ import annotations

import math
import signal
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import nn

ALLOWED = (fg.FuncgradError, TypeError, ValueError)
MAKE_NODES = {"fg.require_grad"}
# Where finite differences cannot work (NaN or Inf, or a step lost at 2**63):
# check_grads rightly reports a mismatch there.
NON_FINITE = {"nan_inf", "py_nan", "py_inf", "int_2_63"}  # calls whose results are Nodes (on the default graph)
TIME_LIMIT_S = 20.0


def _self_holding():
    a = [1.0, 2.0]
    a.append(a)
    return a


def _deep(depth):
    v = 1.0
    for _ in range(depth):
        v = [v]
    return v


def _read_only():
    a = np.linspace(-1.0, 1.0, 4)
    a.flags.writeable = False
    return a


def _structured():
    return np.zeros(2, dtype=[("a", "f8"), ("b", "i4")])


def _matrix():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        return np.matrix([[1.0, 2.0], [3.0, 4.0]])


class _Hook(fg.BackwardHook):
    pass


# name -> a function making a fresh value
VALUES: dict[str, Callable[[], Any]] = {
    # floating arrays, ordinary and odd
    "f64_2x3": lambda: np.arange(6.0).reshape(2, 3) / 7.0 + 0.1,
    "f64_3": lambda: np.array([0.5, -1.5, 2.0]),
    "f32_3": lambda: np.array([0.5, 1.0, 1.5], np.float32),
    "f16_2": lambda: np.array([0.5, 1.0], np.float16),
    "f64_0d": lambda: np.array(0.75),
    "f64_empty": lambda: np.zeros((0,)),
    "f64_2x0": lambda: np.zeros((2, 0)),
    "f64_32d": lambda: np.ones((1,) * 32),
    "f64_3x3": lambda: np.array([[2.0, 0.5, 0.1], [0.5, 3.0, 0.2], [0.1, 0.2, 4.0]]),
    "nan_inf": lambda: np.array([np.nan, np.inf, -np.inf]),
    "read_only": _read_only,
    "strided": lambda: np.arange(8.0)[::2],
    "fortran": lambda: np.asfortranarray(np.arange(6.0).reshape(2, 3)),
    "big_endian": lambda: np.array([1.0, 2.0, 3.0], dtype=">f8"),
    "big_endian_0d": lambda: np.array(1.5, dtype=">f4"),
    "matrix": lambda: _matrix(),
    "masked": lambda: np.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False]),
    # other dtypes
    "i64_3": lambda: np.array([0, 1, 2]),
    "i8_2": lambda: np.array([1, -1], np.int8),
    "u8_2": lambda: np.array([1, 255], np.uint8),
    "bool_3": lambda: np.array([True, False, True]),
    "c128_3": lambda: np.array([1 + 1j, 2.0, 1j]),
    "str_2": lambda: np.array(["ab", "c"]),
    "bytes_2": lambda: np.array([b"ab", b"c"]),
    "object_2": lambda: np.array([1.0, None], dtype=object),
    "datetime": lambda: np.array(["2020-01-01"], dtype="datetime64[D]"),
    "timedelta": lambda: np.array([1, 2], dtype="timedelta64[s]"),
    "structured": _structured,
    # NumPy scalars
    "np_f64": lambda: np.float64(1.5),
    "np_f32": lambda: np.float32(2.0),
    "np_i64": lambda: np.int64(3),
    "np_bool": lambda: np.bool_(True),
    "np_c128": lambda: np.complex128(1j),
    # Python values
    "none": lambda: None,
    "true": lambda: True,
    "zero": lambda: 0,
    "one": lambda: 1,
    "minus_one": lambda: -1,
    "three": lambda: 3,
    "huge_int": lambda: 10**400,
    "huge_neg_int": lambda: -(10**400),
    "int_2_63": lambda: 2**63,
    "float": lambda: 1.5,
    "py_nan": lambda: math.nan,
    "py_inf": lambda: math.inf,
    "complex": lambda: 1j,
    "str": lambda: "abc",
    "empty_str": lambda: "",
    "einsum_spec": lambda: "ij,jk->ik",
    "dtype_name": lambda: "float32",
    "bytes": lambda: b"x",
    "empty_list": list,
    "list": lambda: [1.0, 2.0, 3.0],
    "nested_list": lambda: [[1.0, 2.0], [3.0, 4.0]],
    "ragged": lambda: [[1.0, 2.0], [3.0]],
    "mixed_ragged": lambda: [1.0, [2.0]],
    "self_holding": _self_holding,
    "deep_list": lambda: _deep(3000),
    "tuple": lambda: (0, 1),
    "empty_tuple": lambda: (),
    "dict": lambda: {"a": 1.0},
    "empty_dict": dict,
    "set": lambda: {1.0, 2.0},
    "object": lambda: object(),
    "slice": lambda: slice(None, None, 2),
    "ellipsis": lambda: Ellipsis,
    "function": lambda: (lambda *a, **k: 1.0),
    "np_dtype": lambda: np.dtype("float64"),
    "type": lambda: float,
    # funcgrad values
    "node": lambda: fg.require_grad(np.array([0.5, 1.0, 2.0])),
    "node_0d": lambda: fg.require_grad(np.array(1.25)),
    "node_2x2": lambda: fg.require_grad(np.array([[1.0, 0.2], [0.2, 2.0]])),
    "backprop_id": lambda: fg.BackpropId("fuzz"),
    "default_id": lambda: fg.DEFAULT_BACKPROP_ID,
    "hook": lambda: _Hook(),
    "primitive": lambda: fnp.sin,
}

KEYWORDS: dict[str, list[str]] = {
    "axis": ["zero", "minus_one", "three", "huge_int", "none", "tuple", "str", "float", "list"],
    "keepdims": ["true", "none", "str"],
    "dtype": ["dtype_name", "str", "none", "object", "np_dtype", "type"],
    "ord": ["three", "str", "none", "float", "huge_int"],
    "argnums": ["zero", "three", "huge_int", "tuple", "str", "none", "list", "minus_one"],
    "has_aux": ["true", "str"],
    "backprop_id": ["backprop_id", "default_id", "str", "none", "node"],
    "grad_outputs": ["dict", "str", "list", "none", "c128_3", "f64_3", "empty_list"],
    "loss_scale": ["f64_3", "str", "complex", "huge_int", "true", "np_f32", "node_0d"],
    "hooks": ["hook", "list", "str", "object", "none"],
    "enable_double_backprop": ["true", "str"],
    "order": ["zero", "three", "huge_int", "str", "minus_one"],
    "modes": ["str", "tuple", "list", "none", "empty_tuple"],
    "bogus": ["one"],
    "fallback": ["true", "str"],
    "max_plans": ["zero", "huge_int", "str"],
}


# -- the calls --------------------------------------------------------------------------


def _fnp_names() -> list[str]:
    skip = {"e", "pi", "inf", "nan", "newaxis", "linalg"}
    return sorted(n for n in dir(fnp) if not n.startswith("_") and n not in skip
                  and callable(getattr(fnp, n)))


def _plain(fun):
    return lambda args, kwargs: fun(*args, **kwargs)


def _functions():
    """User functions given to combinators (library calls only: their own errors are
    the library's)."""
    return {
        "fun_sum_sq": lambda x, *r, **k: fnp.sum(fnp.multiply(x, x)),
        "fun_identity": lambda x, *r, **k: x,
        "fun_constant": lambda *r, **k: 1.0,
        "fun_none": lambda *r, **k: None,
        "fun_string": lambda *r, **k: "s",
        "fun_pair": lambda x, *r, **k: (x, 2.0),
        "fun_dict": lambda x, *r, **k: {"k": fnp.sin(x)},
        "fun_stack_all": lambda *a, **k: fnp.sum(fnp.stack(list(a))),
        "fun_mean_axis0": lambda x, *r, **k: fnp.mean(x, axis=0),
        "fun_index_far": lambda x, *r, **k: fnp.getitem(x, 100),
        "fun_float_of": lambda x, *r, **k: float(fnp.sum(fnp.sin(x))),
        "fun_nn_softmax_sum": lambda x, *r, **k: fnp.sum(nn.softmax(x)),
        "fun_aux_pair": lambda x, *r, **k: (fnp.sum(x), {"aux": x}),
    }


FUNCTIONS = _functions()


def _combinator(comb):
    def call(args, kwargs):
        fun = FUNCTIONS[args[0]] if args and isinstance(args[0], str) and args[0] in FUNCTIONS \
            else (args[0] if args else None)
        opts = {k: v for k, v in kwargs.items() if k in ("argnums", "has_aux")}
        rest = {k: v for k, v in kwargs.items() if k not in ("argnums", "has_aux")}
        return comb(fun, **opts)(*args[1:], **rest)

    return call


def _vjp(args, kwargs):
    fun = FUNCTIONS.get(args[0], args[0]) if args and isinstance(args[0], str) else (
        args[0] if args else None)
    primals = args[1:-1] if len(args) > 2 else args[1:]
    res = fg.vjp(fun, *primals, **{k: v for k, v in kwargs.items() if k == "has_aux"})
    if len(args) > 2:  # the last argument is the cotangent
        return res[1](args[-1])
    return res[0]


def _forward(comb):
    def call(args, kwargs):
        fun = FUNCTIONS.get(args[0], args[0]) if args and isinstance(args[0], str) else (
            args[0] if args else None)
        return comb(fun, *args[1:], **kwargs)

    return call


def _backprop(args, kwargs):
    # outputs and inputs from the Node values given, or the values themselves
    nodes = [a for a in args if type(a) is fg.Node]
    if nodes:
        outputs = [fnp.sum(fnp.multiply(nodes[0], nodes[0]))]
        inputs = nodes
    else:
        outputs, inputs = (args[0] if args else []), (args[1] if len(args) > 1 else [])
    return fg.backprop(outputs, inputs, *args[2:3], **kwargs)


def _scope(args, kwargs):
    with fg.backprop_scope(*args, **kwargs) as bp:
        return fg.is_grad_required(fg.require_grad(np.ones(2), bp), bp)


def _hooks(args, kwargs):
    with fg.hooks(*args, **kwargs):
        return fg.grad(fnp.sin)(np.array(0.5))


def _debug_nans(args, kwargs):
    with fg.debug_nans(*args, **kwargs):
        return fg.grad(fnp.sin)(np.array(0.5))


def _check_grads(args, kwargs):
    fun = FUNCTIONS.get(args[0], args[0]) if args and isinstance(args[0], str) else (
        args[0] if args else None)
    return fg.check_grads(fun, *args[1:], **kwargs)


def _trace(args, kwargs):
    fun = FUNCTIONS.get(args[0], args[0]) if args and isinstance(args[0], str) else (
        args[0] if args else None)
    graph = fg.trace(fun, *args[1:], **kwargs)
    return str(graph), graph.to_dot(), graph._repr_html_()


def _defvjp(args, kwargs):
    prim = fg.primitive(lambda x, *r: x * 2.0)
    fg.defvjp(prim, *args, **kwargs)
    return fg.grad(lambda x: fnp.sum(prim(x)))(np.ones(2))


def _custom_vjp(args, kwargs):
    f = fg.custom_vjp(lambda x: fnp.sin(x))
    f.defvjp(*args[:2], **kwargs)
    return fg.grad(lambda x: fnp.sum(f(x)))(*args[2:3])


def _checkpoint(args, kwargs):
    fun = FUNCTIONS.get(args[0], args[0]) if args and isinstance(args[0], str) else (
        args[0] if args else None)
    return fg.grad(lambda *xs: fnp.sum(fg.checkpoint(fun)(*xs)))(*args[1:], **kwargs)


def _replay(transform):
    def call(args, kwargs):
        fun = FUNCTIONS.get(args[0], args[0]) if args and isinstance(args[0], str) else (
            args[0] if args else None)
        opts = {k: v for k, v in kwargs.items() if k in ("fallback", "max_plans")}
        replayed = fg.replay(transform(fun), **opts)
        first = replayed(*args[1:])  # traced
        return first, replayed(*args[1:])  # replayed

    return call


def _method(name):
    def call(args, kwargs):
        node = fg.require_grad(np.array([[0.5, 1.0], [1.5, 2.0]]))
        return getattr(node, name)(*args, **kwargs)

    return call


def _operator(op):
    def call(args, kwargs):
        node = fg.require_grad(np.array([0.5, 1.0, 1.5]))
        return op(node, *args[:1])

    return call


def _calls() -> dict[str, Callable]:
    calls: dict[str, Callable] = {f"fnp.{n}": _plain(getattr(fnp, n)) for n in _fnp_names()}
    calls.update({f"fnp.linalg.{n}": _plain(getattr(fnp.linalg, n))
                  for n in dir(fnp.linalg) if not n.startswith("_")})
    calls.update({f"nn.{n}": _plain(getattr(nn, n)) for n in dir(nn)
                  if not n.startswith("_") and callable(getattr(nn, n))
                  and getattr(getattr(nn, n), "__module__", "").startswith("funcgrad")})
    for name in ("grad", "value_and_grad", "jacobian", "jacrev", "jacfwd", "hessian"):
        calls[f"fg.{name}"] = _combinator(getattr(fg, name))
    calls.update({
        "fg.vjp": _vjp,
        "fg.jvp": _forward(fg.jvp),
        "fg.hvp": _forward(fg.hvp),
        "fg.stop_gradient": _plain(fg.stop_gradient),
        "fg.require_grad": _plain(fg.require_grad),
        "fg.is_grad_required": _plain(fg.is_grad_required),
        "fg.value_of": _plain(fg.value_of),
        "fg.device_of": _plain(fg.device_of),
        "fg.to_device": _plain(fg.to_device),
        "fg.backprop": _backprop,
        "fg.backprop_scope": _scope,
        "fg.hooks": _hooks,
        "fg.debug_nans": _debug_nans,
        "fg.check_grads": _check_grads,
        "fg.trace": _trace,
        "fg.primitive": _plain(fg.primitive),
        "fg.defvjp": _defvjp,
        "fg.custom_vjp": _custom_vjp,
        "fg.checkpoint": _checkpoint,
        "fg.Graph.of": _plain(fg.Graph.of),
        "fg.TimerHook": _plain(fg.TimerHook),
        "fg.replay": _replay(lambda f: f),
        "fg.replay(grad)": _replay(lambda f: fg.grad(f) if callable(f) else f),
        "fg.BackpropId": _plain(fg.BackpropId),
    })
    for name in ("sum", "mean", "max", "min", "prod", "var", "std", "reshape", "transpose",
                 "astype", "ravel", "squeeze", "dot", "clip", "cumsum", "__getitem__"):
        calls[f"Node.{name}"] = _method(name)
    import operator

    for name in ("add", "sub", "mul", "truediv", "pow", "matmul", "lt", "eq"):
        calls[f"Node.__{name}__"] = _operator(getattr(operator, name))
    return calls


CALLS = _calls()


# -- judging one call ---------------------------------------------------------------------


class _Overtime(BaseException):
    pass


def _alarm(signum, frame):
    raise _Overtime


def _snapshot(x: Any, seen: set | None = None, depth: int = 0) -> Any:
    """A copy to compare against: arrays by value and flags, containers by content
    (to a depth of 100; below, by identity)."""
    seen = set() if seen is None else seen
    if id(x) in seen:
        return ("<cycle>",)
    if depth > 100:
        return ("deep", id(x))
    if isinstance(x, np.ndarray):
        data = x.copy() if x.dtype != object else list(x.ravel())
        return ("array", type(x), x.dtype, x.shape, x.strides, x.flags.writeable, data,
                np.ma.getmaskarray(x).copy() if isinstance(x, np.ma.MaskedArray) else None)
    if isinstance(x, (list, tuple, dict, set)):
        seen = seen | {id(x)}
        items = x.items() if isinstance(x, dict) else x
        return (type(x), len(x), [_snapshot(i, seen, depth + 1) for i in items])
    return ("other", id(x))


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple) and a and a[0] == "array":
        head_a, head_b = a[:6], b[:6]
        if head_a != head_b:
            return False
        da, db = a[6], b[6]
        if isinstance(da, list):
            return len(da) == len(db) and all(p is q or p == q for p, q in zip(da, db))
        if da.dtype.kind in "fc":
            same = np.array_equal(da, db, equal_nan=True)
        elif da.dtype.fields:
            same = da.tobytes() == db.tobytes()
        else:
            same = np.array_equal(da, db)
        return bool(same) and (a[7] is None or np.array_equal(a[7], b[7]))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b, strict=True))
    return a == b


def _holds_node(x: Any, depth: int = 0) -> bool:
    if type(x) is fg.Node:
        return True
    if depth > 50:
        return False
    if isinstance(x, dict):
        return any(_holds_node(v, depth + 1) for v in x.values())
    if isinstance(x, (list, tuple, set, frozenset)):
        return any(_holds_node(v, depth + 1) for v in x)
    return False


def judge(call: str, arg_names: list[str], kw_names: dict[str, str]) -> str | None:
    """Run one call on fresh inputs; None if it behaved, else what went wrong."""
    args = [VALUES[a]() if a in VALUES else a for a in arg_names]
    kwargs = {k: VALUES[v]() for k, v in kw_names.items()}
    before = _snapshot((args, kwargs))
    given_node = _holds_node((args, kwargs))
    fun = CALLS[call]
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT_S)
    limit = sys.getrecursionlimit()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                result = fun(args, kwargs)
    except _Overtime:
        return "hang"
    except AssertionError as exc:
        # check_grads reports a mismatch so; finite differences at NaN or Inf are NaN
        if call == "fg.check_grads" and NON_FINITE & {*arg_names, *kw_names.values()}:
            result = None
        else:
            return f"AssertionError: {str(exc)[:150]}"
    except ALLOWED as exc:
        if not str(exc).strip():
            return f"{type(exc).__name__} with an empty message"
        result = None
    except RecursionError as exc:
        return f"RecursionError: {str(exc)[:150]}"
    except Exception as exc:  # noqa: BLE001 - what the judge is for
        return f"{type(exc).__name__}: {str(exc)[:150]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        sys.setrecursionlimit(limit)
    if not _same(_snapshot((args, kwargs)), before):
        return "mutated an input"
    if not given_node and call not in MAKE_NODES and not call.startswith("Node.") \
            and _holds_node(result):
        return "a Node escaped"
    return None


def describe(call: str, arg_names: list[str], kw_names: dict[str, str]) -> str:
    kw = ", ".join(f"{k}={v}" for k, v in kw_names.items())
    return f"{call}({', '.join(arg_names)}{', ' if kw and arg_names else ''}{kw})"


# names usable as arguments: values, plus the user functions for combinators
ARGUMENTS = sorted(VALUES) + sorted(FUNCTIONS)
