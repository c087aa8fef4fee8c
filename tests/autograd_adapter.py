"""A pytest plugin that runs HIPS autograd's own test suite against funcgrad.

Loaded with ``-p autograd_adapter`` in a separate pytest process (see
``test_autograd_suite.py``), it puts thin stand-ins for ``autograd``,
``autograd.numpy`` (``.linalg``, ``.fft``, ``.random``), ``autograd.test_util``,
``autograd.extend``, ``autograd.builtins``, ``autograd.tracer`` and
``autograd.misc`` (``.optimizers``: ``adam``/``sgd`` on ``funcgrad.optim``), ``autograd.scipy`` (``.special``, ``.stats`` and its distributions,
``.linalg``, ``.signal``, ``.integrate``, ``.misc``: funcgrad.scipy's) into ``sys.modules`` before autograd's tests import them.
Each maps autograd's API onto funcgrad's: ``grad(fun, argnum)`` is
``fg.grad(fun, argnums=argnum)``, ``check_grads(fun, argnum, modes, order)(*args)``
is ``fg.check_grads`` on the chosen arguments, ``defvjp(prim, maker)`` turns
autograd's VJP makers ``maker(ans, *args) -> (g -> grad)`` into funcgrad rules.
Names ``fnp`` lacks fall back to plain NumPy, so a test that needs one fails on
the Node it meets (NodeConversionError), never silently.  autograd's internals
(``autograd.core``: ``vspace``, ``Box``, ``primitive_vjps``; ``wrap_util``) are not
provided: tests importing them fail to import, and are listed out of scope.
"""

from __future__ import annotations

import builtins
import itertools
import sys
import types

import numpy

import funcgrad as fg
import funcgrad.numpy as fnp


class _Fallback(types.ModuleType):
    """A module whose attributes come from funcgrad first, then from NumPy."""

    def __init__(self, name, *sources):
        super().__init__(name)
        self._sources = sources

    def __getattr__(self, name):
        for src in self._sources:
            if name in dir(src) or (src is not fnp and hasattr(src, name)):
                return getattr(src, name)
        raise AttributeError(name)


def _argnums(argnum):
    return tuple(argnum) if isinstance(argnum, (tuple, list)) else argnum


def grad(fun, argnum=0):
    return fg.grad(fun, argnums=_argnums(argnum))


def value_and_grad(fun, argnum=0):
    return fg.value_and_grad(fun, argnums=_argnums(argnum))


def jacobian(fun, argnum=0):
    return fg.jacobian(fun, argnums=_argnums(argnum))


def hessian(fun, argnum=0):
    return fg.hessian(fun, argnums=_argnums(argnum))


def holomorphic_grad(fun, argnum=0):
    return fg.grad(fun, argnums=_argnums(argnum), holomorphic=True)


def elementwise_grad(fun, argnum=0):
    def gradfun(*args, **kwargs):
        def f(x):
            return fun(*args[:argnum], x, *args[argnum + 1:], **kwargs)

        out, vjp_fn = fg.vjp(f, args[argnum])
        return vjp_fn(numpy.ones_like(out))[0]

    return gradfun


def make_vjp(fun, argnum=0):
    def maker(*args):
        def f(x):
            return fun(*args[:argnum], x, *args[argnum + 1:])

        ans, vjp_fn = fg.vjp(f, args[argnum])
        return (lambda g: vjp_fn(g)[0]), ans

    return maker


def make_jvp(fun, argnum=0):
    def maker(*args):
        def f(x):
            return fun(*args[:argnum], x, *args[argnum + 1:])

        return lambda v: fg.jvp(f, (args[argnum],), (v,))

    return maker


def _unary(fun, argnum, args, kwargs):
    def f(x):
        return fun(*args[:argnum], x, *args[argnum + 1:], **kwargs)

    return f


def deriv(fun, argnum=0):
    def d(*args, **kwargs):
        x = args[argnum]
        return fg.jvp(_unary(fun, argnum, args, kwargs), (x,), (numpy.ones_like(x),))[1]

    return d


def grad_and_aux(fun, argnum=0):
    return fg.grad(fun, argnums=_argnums(argnum), has_aux=True)


def make_hvp(fun, argnum=0):
    def maker(*args, **kwargs):
        return make_vjp(grad(fun, argnum), argnum)(*args, **kwargs)

    return maker


def hessian_tensor_product(fun, argnum=0):
    fun_grad = grad(fun, argnum)

    def vector_dot_grad(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return fnp.tensordot(fun_grad(*args, **kwargs), vector, numpy.ndim(vector))

    return grad(vector_dot_grad, argnum)


def tensor_jacobian_product(fun, argnum=0):
    def vector_dot_fun(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return fnp.tensordot(vector, fun(*args, **kwargs), axes=numpy.ndim(vector))

    return jacobian(vector_dot_fun, argnum)


def make_ggnvp(f, g=lambda x: 0.5 * fnp.sum(x ** 2, axis=-1), f_argnum=0):
    def maker(*args, **kwargs):
        x = args[f_argnum]
        fx_of = _unary(f, f_argnum, args, kwargs)
        f_x, f_vjp = fg.vjp(fx_of, x)
        _, g_hvp = fg.vjp(fg.grad(g), f_x)

        def ggnvp(v):
            jv = fg.jvp(fx_of, (x,), (v,))[1]
            return f_vjp(g_hvp(jv)[0])[0]

        return ggnvp

    return maker


def check_equivalent(x, y):
    xs, ys = fg.tree.flatten(x)[0], fg.tree.flatten(y)[0]
    assert len(xs) == len(ys), f"structure mismatch:\nx: {x}\ny: {y}"
    for a, b in zip(xs, ys, strict=True):
        numpy.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def _name(fun):
    return getattr(fun, "__name__", None) or getattr(fun, "name", "[unknown name]")


def check_grads(fun, argnum=0, modes=("fwd", "rev"), order=2):
    def checker(*args, **kwargs):
        idx = (argnum,) if isinstance(argnum, int) else tuple(argnum)

        def chosen(*sel):
            full = [sel[idx.index(i)] if i in idx else a for i, a in enumerate(args)]
            return fun(*full, **kwargs)

        inputs = tuple(numpy.asarray(args[i]) if isinstance(args[i], (int, float, complex))
                       else args[i] for i in idx)
        for mode in ("fwd", "rev"):
            if mode not in modes:
                continue
            try:
                fg.check_grads(chosen, inputs, order=order, modes=(mode,))
            except AssertionError as exc:  # autograd's wording: which check of what failed
                kind = "JVP" if mode == "fwd" else "VJP"
                name = _name(fun) if "order 1" in str(exc) else f"{kind.lower()}_{_name(fun)}"
                raise AssertionError(f"({kind}) check of {name} failed: {exc}") from exc

    return checker


def combo_check(fun, *args, **kwargs):
    def run(*arg_lists, **kwarg_lists):
        keys = list(kwarg_lists)
        for combo in itertools.product(*arg_lists):
            for values in itertools.product(*(kwarg_lists[k] for k in keys)):
                check_grads(fun, *args, **kwargs)(*combo, **dict(zip(keys, values, strict=True)))

    return run


def scalar_close(a, b):
    return abs(a - b) < 1e-6 or abs(a - b) / abs(a + b) < 1e-6


def primitive(f):
    return fg.primitive(f)


def _vjp_rule(maker):
    return lambda g, ans, *a, **k: maker(ans, *a, **k)(g)


def defvjp(prim, *makers, argnums=None):
    rules = [None if m is None else _vjp_rule(m) for m in makers]
    if argnums is not None:
        full = [None] * (max(argnums) + 1)
        for i, r in zip(argnums, rules, strict=True):
            full[i] = r
        rules = full
    fg.defvjp(prim, *rules)


def defjvp(prim, *rules, argnums=None):
    fg.defjvp(prim, *rules)


def isinstance_(x, cls):
    """``isinstance`` that sees a Node as the ndarray it stands for (autograd's builtins)."""
    if builtins.isinstance(x, fg.Node):
        classes = cls if builtins.isinstance(cls, builtins.tuple) else (cls,)
        return fg.Node in classes or numpy.ndarray in classes
    return builtins.isinstance(x, cls)


def const_graph(fun, *args, **kwargs):
    """autograd's graph cache: funcgrad's ``fg.replay`` (trace once, replay the plan)."""
    import functools

    return fg.replay(functools.partial(fun, *args, **kwargs) if args or kwargs else fun)


def isbox(x):
    return isinstance(x, fg.Node)


def flatten(value):
    leaves, treedef = fg.tree.flatten(value)
    shapes = [numpy.shape(leaf) for leaf in leaves]
    sizes = [int(numpy.prod(s)) for s in shapes]
    flat = fnp.concatenate([fnp.ravel(leaf) for leaf in leaves]) if leaves else numpy.zeros(0)

    def unflatten(vec):
        parts, start = [], 0
        for shape, size in zip(shapes, sizes, strict=True):
            parts.append(fnp.reshape(vec[start:start + size], shape))
            start += size
        return fg.tree.unflatten(treedef, parts)

    return flat, unflatten


def _loop(make, grad, x0, callback, num_iters):
    """autograd's optimizer loop (``grad(x, i)``, ``callback(x, i, g)`` on pytrees) around
    a ``funcgrad.optim`` optimizer."""
    from funcgrad import optim

    opt = make()
    x, state = x0, opt.init(x0)
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        updates, state = opt.update(g, state, x)
        x = optim.apply_updates(x, updates)
    return x


def adam(grad, x0, callback=None, num_iters=100, step_size=0.001, b1=0.9, b2=0.999,
         eps=10**-8):
    """autograd.misc.optimizers.adam: funcgrad.optim.adam has the same formulas."""
    from funcgrad import optim

    return _loop(lambda: optim.adam(step_size, b1, b2, eps), grad, x0, callback, num_iters)


def sgd(grad, x0, callback=None, num_iters=200, step_size=0.1, mass=0.9):
    """autograd's sgd keeps ``velocity = mass v - (1 - mass) g``: that is
    ``-(1 - mass)`` times funcgrad.optim.momentum's trace, so its step is
    momentum's with ``learning_rate = step_size (1 - mass)``."""
    from funcgrad import optim

    return _loop(lambda: optim.momentum(step_size * (1.0 - mass), mass), grad, x0, callback,
                 num_iters)


def rmsprop(grad, x0, callback=None, num_iters=100, step_size=0.1, gamma=0.9, eps=10**-8):
    """autograd's rmsprop starts its average at ones and adds ``eps`` outside the root
    (funcgrad.optim.rmsprop: zeros, inside), so it is written out here."""
    x, avg = x0, fg.tree.tree_map(fnp.ones_like, x0)
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        avg = fg.tree.tree_map(lambda a, d: a * gamma + d**2 * (1 - gamma), avg, g)
        x = fg.tree.tree_map(lambda p, d, a: p - step_size * d / (fnp.sqrt(a) + eps), x, g, avg)
    return x


def _module(name, **attrs):
    mod = types.ModuleType(name)
    for k, v in attrs.items():
        setattr(mod, k, v)
    sys.modules[name] = mod
    return mod


def install():
    rand = getattr(fnp, "random", None) or numpy.random
    anp = _Fallback("autograd.numpy", fnp, numpy)
    anp.linalg = _Fallback("autograd.numpy.linalg", fnp.linalg, numpy.linalg)
    anp.fft = _Fallback("autograd.numpy.fft", fnp.fft, numpy.fft)
    anp.random = rand
    anp.numpy_boxes = _module("autograd.numpy.numpy_boxes", ArrayBox=fg.Node)
    for name, mod in (("autograd.numpy", anp), ("autograd.numpy.linalg", anp.linalg),
                      ("autograd.numpy.fft", anp.fft), ("autograd.numpy.random", rand)):
        sys.modules[name] = mod
    top = _module(
        "autograd", grad=grad, value_and_grad=value_and_grad, jacobian=jacobian,
        hessian=hessian, holomorphic_grad=holomorphic_grad, elementwise_grad=elementwise_grad,
        deriv=deriv, make_vjp=make_vjp, make_jvp=make_jvp, primitive=primitive,
        checkpoint=fg.checkpoint, grad_and_aux=grad_and_aux, make_hvp=make_hvp,
        hessian_tensor_product=hessian_tensor_product,
        hessian_vector_product=hessian_tensor_product,
        tensor_jacobian_product=tensor_jacobian_product,
        vector_jacobian_product=tensor_jacobian_product, make_ggnvp=make_ggnvp,
        isinstance=isinstance_, list=builtins.list, tuple=builtins.tuple,
        dict=builtins.dict, numpy=anp,
    )
    top.test_util = _module("autograd.test_util", check_grads=check_grads,
                            combo_check=combo_check, scalar_close=scalar_close,
                            check_equivalent=check_equivalent)
    top.extend = _module("autograd.extend", primitive=primitive, defvjp=defvjp, defjvp=defjvp)
    top.builtins = _module("autograd.builtins", isinstance=isinstance_,
                           list=builtins.list, tuple=builtins.tuple, dict=builtins.dict)
    top.tracer = _module("autograd.tracer", primitive=primitive, isbox=isbox)
    top.misc = _module("autograd.misc", flatten=flatten, const_graph=const_graph)
    top.misc.optimizers = _module("autograd.misc.optimizers", adam=adam, sgd=sgd,
                                  rmsprop=rmsprop)
    top.scipy = _install_scipy()


def _install_scipy():
    """``autograd.scipy`` and its submodules onto ``funcgrad.scipy``: names funcgrad.scipy
    lacks are missing (AttributeError in the test that uses one), never SciPy's own."""
    import scipy.stats

    import funcgrad.scipy as fsp

    special = _module("autograd.scipy.special")
    for name in fsp.special.__all__:
        setattr(special, name, getattr(fsp.special, name))
    special.jn, special.yn = fsp.special.jv, fsp.special.yv  # SciPy's own aliases
    stats = _module("autograd.scipy.stats")
    for name in fsp.stats.__all__:  # sampling (not differentiated) is SciPy's own
        rvs = types.SimpleNamespace(rvs=getattr(scipy.stats, name).rvs)
        sub = _Fallback(f"autograd.scipy.stats.{name}", getattr(fsp.stats, name), rvs)
        setattr(stats, name, sub)
        sys.modules[f"autograd.scipy.stats.{name}"] = sub
    def odeint(func, y0, t, args=(), **kwargs):  # SciPy's args tuple; funcgrad's *args
        return fsp.integrate.odeint(func, y0, t, *args, **kwargs)

    subs = {"special": special, "stats": stats, "linalg": fsp.linalg, "signal": fsp.signal,
            "integrate": _module("autograd.scipy.integrate", odeint=odeint),
            "misc": _module("autograd.scipy.misc", logsumexp=fsp.special.logsumexp)}
    for name, mod in subs.items():
        if name in ("linalg", "signal"):
            sys.modules[f"autograd.scipy.{name}"] = mod
    return _module("autograd.scipy", **subs)


def pytest_configure(config):
    """Installed only when loaded as a plugin (``-p autograd_adapter``), never on import:
    funcgrad's own tests import the real autograd."""
    install()
