"""``fnp.random`` (also ``fg.random``): NumPy's ``numpy.random``, as steps of a replay (layer 4).

The same API as ``numpy.random`` and the same numbers for the same seed:
:func:`default_rng` and its :class:`Generator`, and the legacy
:class:`RandomState` with the module's own functions (``seed``, ``randn``,
``rand``, ``normal``...) that autograd's examples use as ``npr``.  Underneath
are NumPy's own generators, so every draw is NumPy's.

What NumPy's generators cannot do, these do:

- **replay**: inside a function traced by :func:`fg.replay
  <funcgrad.replay>`, each draw is a step of the plan, so a replayed call
  draws new numbers, the numbers the same calls made eagerly would draw (a
  generator held outside the function goes on with its stream; one made
  inside with a seed starts it again at every call, one made without a seed
  takes fresh entropy at every call).  Any other generator used under a
  trace is refused.
- **gradients**: the parameters of the location-scale draws are
  differentiable, by reparameterisation: ``normal(loc, scale)`` is
  ``loc + scale * z`` with ``z`` drawn (so are ``uniform``, ``exponential``,
  ``laplace``, ``logistic``, ``gumbel``, ``rayleigh``, the ``scale`` of
  ``gamma``, the ``mean`` of ``multivariate_normal``), and ``choice``,
  ``permutation`` and ``permuted`` of a Node are differentiable in it.  A Node
  given where no gradient exists (``poisson(lam)``, the ``p`` of ``choice``,
  integer draws) raises :class:`~funcgrad.FuncgradTypeError`.
- **devices**: the state is NumPy's, on the host, and the numbers are
  NumPy's on every device: given parameters on a device (CuPy, a registered
  namespace) or ``like=`` an array there, a draw is made on the host and
  moved to that device.  Dask parameters give NumPy draws, which Dask
  arithmetic absorbs.

Scalar draws (no ``size``) are NumPy scalars (``numpy.float64``, a ``float``;
``numpy.int64``), where NumPy returns Python numbers for some: a traced
scalar can then be a step of a plan.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> rng = fnp.random.default_rng(0)
>>> bool((rng.normal(size=3) == numpy.random.default_rng(0).normal(size=3)).all())
True
>>> fg.grad(lambda mu: fnp.sum(fnp.random.default_rng(1).normal(mu, 2.0, size=4)))(0.5)
array(4.)
"""

from __future__ import annotations

import inspect
import os
from typing import Any

import numpy

from ..arrays import holds_node
from ..backend import NUMPY_TYPES, device_of, is_lazy, namespace, to_device
from ..errors import FuncgradTypeError, FuncgradValueError
from ..node import Node, value_of
from ..translation import documented
from . import creation as _c
from . import elementwise as _e
from . import shape as _s

# NumPy's seeds and bit generators, as they are: they hold no draws of their own.
SeedSequence = numpy.random.SeedSequence
PCG64 = numpy.random.PCG64
PCG64DXSM = numpy.random.PCG64DXSM
MT19937 = numpy.random.MT19937
Philox = numpy.random.Philox
# NumPy's own (fg.replay watches the name numpy.random.default_rng while it traces)
_DEFAULT_RNG = numpy.random.default_rng

# -- the one road of every draw ------------------------------------------------------

# ``_HOOK[0](kind, fn, args, kwargs, name)`` runs ``fn(*args, **kwargs)``; fg.replay's
# tracer (layer 6) installs one that, under a trace, records the call as a step:
# kind "new" makes a generator (a value of the plan), "draw" draws or reseeds (a step
# always run), "read" reads a generator's state into Python (refused under a trace).
_HOOK: list = [None]


def _call(kind: str, fn: Any, args: tuple, kwargs: dict, name: str) -> Any:
    hook = _HOOK[0]
    if hook is None:
        return fn(*args, **kwargs)
    return hook(kind, fn, args, kwargs, name)


def _box(value: Any) -> Any:
    """Python numbers drawn as NumPy scalars (values a plan can hold in a slot)."""
    t = type(value)
    if t is float:
        return numpy.float64(value)
    if t is int:
        return numpy.int64(value)
    return value


def _draw(owner: Any, method: str, device: str | None, *args: Any, **kwargs: Any) -> Any:
    """One draw of NumPy's generator under ``owner``, moved to ``device`` (None: the host)."""
    value = _box(getattr(owner._np, method)(*args, **kwargs))
    if device is not None and hasattr(value, "shape"):
        value = to_device(numpy.asarray(value), device)
    return value


def _entropy() -> numpy.ndarray:
    """128 fresh bits from the OS (what NumPy takes for a generator made without a seed)."""
    return numpy.frombuffer(os.urandom(16), dtype=numpy.uint32).copy()


def _new_generator(seed: Any) -> Generator:
    if seed is None:
        seed = SeedSequence(_entropy())
    return Generator._wrap(_DEFAULT_RNG(seed))


def _new_random_state(seed: Any) -> RandomState:
    bits = MT19937(0)  # seeded at once, as NumPy's legacy seeding does (and no OS entropy)
    bits._legacy_seeding(_entropy() if seed is None else seed)
    return _rebuild(RandomState, numpy.random.RandomState(bits))


def _reseed(owner: Any, seed: Any) -> None:
    owner._np.seed(_entropy() if seed is None else seed)


def _set_state(owner: Any, state: Any) -> None:
    owner._np.set_state(state)


def _get_state(owner: Any, legacy: bool) -> Any:
    return owner._np.get_state(legacy=legacy)


def _bit_generator(owner: Any) -> Any:
    return owner._np.bit_generator


def _spawn(owner: Any, n: int) -> list:
    return [Generator._wrap(g) for g in owner._np.spawn(n)]


# -- parameters: Nodes, devices ------------------------------------------------------


def _simple(args: Any, kwargs: dict | None = None) -> bool:
    """Whether every argument is NumPy data or a plain value, lists and tuples of them
    included (the fast path: NumPy's own call)."""
    for a in args:
        t = type(a)
        if t not in NUMPY_TYPES or (t is list or t is tuple) and not _simple(a):
            return False
    return kwargs is None or _simple(kwargs.values())


def _device(values: Any, like: Any) -> str | None:
    """The device of the draws: ``like``'s, else that of the parameters' arrays (None: host)."""
    if like is not None:
        d = device_of(value_of(like))
        return None if d == "cpu" else d
    for v in values:
        v = value_of(v)
        if type(v) not in NUMPY_TYPES and hasattr(v, "shape"):
            d = device_of(v)
            if d != "cpu":
                return d
    return None


def _to_host(v: Any) -> Any:
    """A parameter on a device, copied to the host (NumPy's generators read it there)."""
    if type(v) in NUMPY_TYPES or not hasattr(v, "shape") or device_of(v) == "cpu":
        return v
    return to_device(v, "cpu")


def _shape(size: Any, *params: Any) -> tuple:
    if size is not None:
        return (size,) if isinstance(size, (int, numpy.integer)) else tuple(size)
    return numpy.broadcast_shapes(*(numpy.shape(value_of(p)) for p in params))


def _check_nonnegative(name: str, param: str, v: Any) -> None:
    """NumPy's check of a scale, kept where a rule draws with scale 1 instead (under a
    trace, a step: a replayed call checks its own value)."""
    v = value_of(v)
    if isinstance(v, (int, float)):
        if v < 0:
            raise FuncgradValueError(f"fnp.random.{name}: {param} < 0")
        return
    _call("draw", _nonnegative, (v, name, param), {}, f"random.{name} ({param} >= 0)")


def _nonnegative(v: Any, name: str, param: str) -> None:
    xp = namespace(v)
    if not is_lazy(xp) and bool(xp.any(v < 0)):
        raise FuncgradValueError(f"fnp.random.{name}: {param} < 0")


def _not_differentiable(owner: Any, name: str, param: str) -> FuncgradTypeError:
    return FuncgradTypeError(
        f"fnp.random: {type(owner).__name__}.{name} is not differentiable in {param!r} (a "
        "Node was given): its draws have no reparameterisation funcgrad can follow. Pass "
        f"fg.value_of({param}) to draw with its value and no gradient")


# -- reparameterised draws: the parameters' gradients ---------------------------------


def _loc_scale(standard: str | None, loc_name: str = "loc", scale_name: str = "scale"):
    """``loc + scale * z``, ``z`` the draw with loc 0 and scale 1 (exactly NumPy's numbers:
    NumPy computes the same two roundings)."""

    def rule(owner, name, b, device):
        loc, scale = b.get(loc_name, 0.0), b.get(scale_name, 1.0)
        _check_nonnegative(name, scale_name, scale)
        shape = _shape(b.get("size"), loc, scale)
        if standard is not None:
            z = _raw(owner, standard, device, (), {"size": shape})
        else:
            z = _raw(owner, name, device, (0.0, 1.0), {"size": shape})
        return _e.add(loc, _e.multiply(scale, z))

    rule.params = frozenset({loc_name, scale_name})
    return rule


def _scale_only(standard: str, args: tuple = ()):
    def rule(owner, name, b, device):
        scale = b.get("scale", 1.0)
        _check_nonnegative(name, "scale", scale)
        shape = _shape(b.get("size"), scale)
        return _e.multiply(scale, _raw(owner, standard, device, args, {"size": shape}))

    rule.params = frozenset({"scale"})
    return rule


def _uniform(owner, name, b, device):
    low, high = b.get("low", 0.0), b.get("high", 1.0)
    shape = _shape(b.get("size"), low, high)
    unit = "random" if isinstance(owner, Generator) else "random_sample"
    unit_draws = _raw(owner, unit, device, (), {"size": shape})
    return _e.add(low, _e.multiply(_e.subtract(high, low), unit_draws))


_uniform.params = frozenset({"low", "high"})


def _gamma(owner, name, b, device):
    k, scale = b["shape"], b.get("scale", 1.0)
    _check_nonnegative(name, "scale", scale)
    shape = _shape(b.get("size"), k, scale)
    return _e.multiply(scale, _raw(owner, "standard_gamma", device, (_to_host(k),),
                                   {"size": shape}))


_gamma.params = frozenset({"scale"})


def _mvn(owner, name, b, device):
    mean = b["mean"]
    rest = {k: _to_host(v) for k, v in b.items() if k not in ("mean", "cov")}
    zero = numpy.zeros(numpy.shape(value_of(mean)))
    return _e.add(mean, _raw(owner, name, device, (zero, _to_host(b["cov"])), rest))


_mvn.params = frozenset({"mean"})


def _choice(owner, name, b, device):
    a = b["a"]
    axis = b.get("axis", 0)
    rest = {k: _to_host(v) for k, v in b.items() if k not in ("a", "axis")}
    if numpy.ndim(value_of(a)) == 0:
        raise FuncgradValueError("fnp.random.choice: a must be 1-dimensional or an integer")
    n = numpy.shape(value_of(a))[axis]
    return _s.take(a, _raw(owner, name, None, (n,), rest), axis=axis)


_choice.params = frozenset({"a"})


def _permutation(owner, name, b, device):
    x = b["x"]
    axis = b.get("axis", 0)
    if numpy.ndim(value_of(x)) == 0:
        raise FuncgradValueError("fnp.random.permutation: x must be an integer or at least 1-d")
    n = numpy.shape(value_of(x))[axis]
    return _s.take(x, _raw(owner, "permutation", None, (n,), {}), axis=axis)


_permutation.params = frozenset({"x"})


def _permuted(owner, name, b, device):
    x, axis = b["x"], b.get("axis")
    if b.get("out") is not None:
        raise FuncgradTypeError("fnp.random.permuted: out= cannot hold a Node's draws")
    shape = numpy.shape(value_of(x))
    if axis is None:
        order = _raw(owner, "permuted", None, (numpy.arange(int(numpy.prod(shape))),), {})
        return _s.reshape(_s.getitem(_s.ravel(x), order), shape)
    axis = axis % len(shape)
    index = numpy.indices(shape, sparse=True)
    along = numpy.broadcast_to(numpy.arange(shape[axis]).reshape(index[axis].shape), shape)
    order = _raw(owner, "permuted", None, (along,), {"axis": axis})
    return _s.getitem(x, tuple(order if k == axis else i for k, i in enumerate(index)))


_permuted.params = frozenset({"x"})


_REPARAM = {
    "normal": _loc_scale("standard_normal"),
    "laplace": _loc_scale(None),
    "logistic": _loc_scale(None),
    "gumbel": _loc_scale(None),
    "uniform": _uniform,
    "exponential": _scale_only("standard_exponential"),
    "rayleigh": _scale_only("rayleigh", (1.0,)),
    "gamma": _gamma,
    "multivariate_normal": _mvn,
    "choice": _choice,
    "permutation": _permutation,
    "permuted": _permuted,
}


def _raw(owner: Any, name: str, device: str | None, args: tuple, kwargs: dict) -> Any:
    return _call("draw", _draw, (owner, name, device, *args), kwargs, f"random.{name}")


def _sample(owner: Any, name: str, args: tuple, kwargs: dict, like: Any) -> Any:
    """A draw of ``owner``'s method ``name``: NumPy's call, or a rule for Nodes and devices."""
    if like is None and _simple(args, kwargs):  # NumPy data: NumPy's call itself
        return _call("draw", _draw, (owner, name, None, *args), kwargs, f"random.{name}")
    sig = _SIGNATURES[type(owner)][name]
    try:
        bound = sig.bind(None, *args, **kwargs).arguments
    except TypeError as exc:
        raise FuncgradTypeError(f"fnp.random.{name}: {exc}") from None
    del bound["self"]
    device = _device(bound.values(), like)
    nodes = [k for k, v in bound.items() if holds_node(v)]
    if nodes:
        rule = _REPARAM.get(name)
        for k in nodes:
            if rule is None or k not in rule.params:
                raise _not_differentiable(owner, name, k)
        for k in nodes:  # a list holding Nodes is one array, as NumPy takes lists
            if type(bound[k]) is not Node:
                bound[k] = _c.asarray(bound[k])
        return rule(owner, name, bound, device)
    args = tuple(_to_host(a) for a in args)
    kwargs = {k: _to_host(v) for k, v in kwargs.items()}
    return _call("draw", _draw, (owner, name, device, *args), kwargs, f"random.{name}")


# -- the generators ------------------------------------------------------------------


class _Drawing:
    """What both generators share: NumPy's generator ``_np``, and the slot of a trace."""

    __slots__ = ("__weakref__", "_np", "_slot")

    def __reduce__(self):
        return (_rebuild, (type(self), self._np))

    def __repr__(self) -> str:
        return f"fnp.random.{type(self).__name__}({type(self._bit_source()).__name__})"

    def _bit_source(self) -> Any:
        return self._np.bit_generator if isinstance(self._np, numpy.random.Generator) else \
            self._np._bit_generator


def _rebuild(cls: type, np_generator: Any) -> Any:
    obj = object.__new__(cls)
    obj._np = np_generator
    obj._slot = None
    return obj


class Generator(_Drawing):
    """NumPy's ``numpy.random.Generator`` (the same numbers), whose draws replay.

    Make one with :func:`default_rng`; ``Generator(bit_generator)`` wraps a
    NumPy bit generator (``fnp.random.PCG64(seed)``...) as NumPy's does,
    sharing its state.  Every method of NumPy's Generator is here, with the
    same arguments, plus ``like=`` (an array: the draws land on its device).

    >>> import numpy, funcgrad.numpy as fnp
    >>> rng = fnp.random.Generator(fnp.random.PCG64(7))
    >>> bool(rng.random() == numpy.random.Generator(numpy.random.PCG64(7)).random())
    True
    """

    __slots__ = ()

    def __init__(self, bit_generator: Any):
        if not isinstance(bit_generator, numpy.random.BitGenerator):
            raise FuncgradTypeError(
                f"fnp.random.Generator needs a NumPy bit generator (fnp.random.PCG64(seed)...),"
                f" got {type(bit_generator).__name__}; use fnp.random.default_rng(seed)")
        made = _call("read", numpy.random.Generator, (bit_generator,), {},
                     "fnp.random.Generator(bit_generator)")
        self._np = made
        self._slot = None

    @classmethod
    def _wrap(cls, np_generator: Any) -> Generator:
        return _rebuild(cls, np_generator)

    @property
    def bit_generator(self) -> Any:
        """The NumPy bit generator underneath (its state; not readable under a trace)."""
        return _call("read", _bit_generator, (self,), {}, "Generator.bit_generator")

    def spawn(self, n_children: int) -> list:
        """``n_children`` independent generators, as NumPy's ``Generator.spawn`` makes them.

        >>> import funcgrad.numpy as fnp
        >>> len(fnp.random.default_rng(0).spawn(2))
        2
        """
        return _call("read", _spawn, (self, n_children), {}, "Generator.spawn")

    def shuffle(self, x: Any, axis: int = 0) -> None:
        """Shuffle the array ``x`` in place, as NumPy does (a Node cannot change: use
        :meth:`permutation`, a shuffled copy that is differentiable).

        >>> import numpy, funcgrad.numpy as fnp
        >>> x = numpy.arange(5); fnp.random.default_rng(0).shuffle(x); sorted(x.tolist())
        [0, 1, 2, 3, 4]
        """
        return _shuffle(self, x, axis)


class RandomState(_Drawing):
    """NumPy's legacy ``numpy.random.RandomState`` (the same numbers), whose draws replay.

    ``RandomState(seed)`` draws what ``numpy.random.RandomState(seed)`` draws;
    the module's functions (``fnp.random.seed``, ``randn``, ``normal``...) are
    the methods of NumPy's global one (``fnp.random.seed(0)`` is ``numpy.random.seed(0)``).

    >>> import numpy, funcgrad.numpy as fnp
    >>> bool((fnp.random.RandomState(0).randn(2, 3)
    ...       == numpy.random.RandomState(0).randn(2, 3)).all())
    True
    """

    __slots__ = ()

    def __init__(self, seed: Any = None):
        if isinstance(seed, numpy.random.BitGenerator):
            self._np = _call("read", numpy.random.RandomState, (seed,), {},
                             "fnp.random.RandomState(bit_generator)")
            self._slot = None
        else:  # under a trace, a step: made again at each replayed call
            made = _call("new", _new_random_state, (seed,), {}, "random.RandomState")
            self._np, self._slot = made._np, made._slot

    def seed(self, seed: Any = None) -> None:
        """Seed again, as ``numpy.random.RandomState.seed`` (under a trace: a step).

        >>> import funcgrad.numpy as fnp
        >>> r = fnp.random.RandomState(); r.seed(3)
        >>> bool(r.rand() == fnp.random.RandomState(3).rand())
        True
        """
        _call("draw", _reseed, (self, seed), {}, "random.seed")

    def get_state(self, legacy: bool = True) -> Any:
        """The generator's state, as NumPy's ``get_state`` (not readable under a trace).

        >>> import funcgrad.numpy as fnp
        >>> fnp.random.RandomState(0).get_state()[0]
        'MT19937'
        """
        return _call("read", _get_state, (self, legacy), {}, "RandomState.get_state")

    def set_state(self, state: Any) -> None:
        """Set the state, as NumPy's ``set_state`` (under a trace: a step).

        >>> import funcgrad.numpy as fnp
        >>> r = fnp.random.RandomState(0); s = r.get_state(); a = r.rand(); r.set_state(s)
        >>> bool(r.rand() == a)
        True
        """
        _call("draw", _set_state, (self, state), {}, "random.set_state")

    def shuffle(self, x: Any) -> None:
        """Shuffle the array ``x`` in place, as NumPy does (a Node cannot change: use
        :meth:`permutation`, a shuffled copy that is differentiable).

        >>> import numpy, funcgrad.numpy as fnp
        >>> x = numpy.arange(4); fnp.random.RandomState(0).shuffle(x); x
        array([2, 3, 1, 0])
        """
        return _shuffle(self, x, None)


def _shuffle(owner: Any, x: Any, axis: Any) -> None:
    if holds_node(x):
        raise FuncgradTypeError(
            f"fnp.random.{type(owner).__name__}.shuffle changes x in place, and a Node never "
            "changes: use permutation(x), a shuffled copy (differentiable)")
    args = (x,) if axis is None else (x, axis)
    _call("draw", _draw, (owner, "shuffle", None, *args), {}, "random.shuffle")


def default_rng(seed: Any = None) -> Generator:
    """A :class:`Generator`: ``_DEFAULT_RNG(seed)``'s numbers, drawn as steps.

    ``seed`` is None (fresh entropy from the OS), an int or a sequence of
    ints, a ``SeedSequence``, a NumPy bit generator, or a Generator (returned
    as it is).  Made inside a function that :func:`fg.replay
    <funcgrad.replay>` traces, the generator is made again at every replayed
    call, as an eager call would make it.

    >>> import numpy, funcgrad.numpy as fnp
    >>> a = fnp.random.default_rng(42).integers(0, 10, size=5)
    >>> bool((a == numpy.random.default_rng(42).integers(0, 10, size=5)).all())
    True
    """
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, numpy.random.Generator):
        return Generator._wrap(_call("read", _same, (seed,), {}, "default_rng(a NumPy Generator)"))
    if isinstance(seed, (numpy.random.BitGenerator, numpy.random.SeedSequence)):
        return Generator._wrap(_call("read", _DEFAULT_RNG, (seed,), {},
                                     f"default_rng(a {type(seed).__name__})"))
    return _call("new", _new_generator, (seed,), {}, "random.default_rng")


def _same(x: Any) -> Any:
    return x


# -- the methods: NumPy's, each as a draw --------------------------------------------

_SIGNATURES: dict[type, dict[str, inspect.Signature]] = {Generator: {}, RandomState: {}}
_OWN = {"shuffle", "spawn", "seed", "get_state", "set_state", "bit_generator"}

# An example for each method's docstring: its arguments (``size=3`` is added).
_EXAMPLES = {
    "beta": "2.0, 3.0", "binomial": "10, 0.5", "chisquare": "2.0", "dirichlet": "[1.0, 2.0]",
    "exponential": "2.0", "f": "2.0, 3.0", "gamma": "2.0, 1.5", "geometric": "0.5",
    "gumbel": "0.0, 1.0", "hypergeometric": "5, 5, 3", "laplace": "0.0, 1.0",
    "logistic": "0.0, 1.0", "lognormal": "0.0, 1.0", "logseries": "0.5",
    "multinomial": "10, [0.5, 0.5]", "multivariate_hypergeometric": "[3, 2], 2",
    "multivariate_normal": "[0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]]",
    "negative_binomial": "5, 0.5", "noncentral_chisquare": "2.0, 1.0",
    "noncentral_f": "2.0, 3.0, 1.0", "normal": "1.0, 2.0", "pareto": "3.0", "poisson": "3.0",
    "power": "2.0", "rayleigh": "1.0", "standard_cauchy": "", "standard_exponential": "",
    "standard_gamma": "2.0", "standard_normal": "", "standard_t": "3.0",
    "triangular": "0.0, 0.5, 1.0", "uniform": "-1.0, 1.0", "vonmises": "0.0, 1.0",
    "wald": "1.0, 1.0", "weibull": "2.0", "zipf": "2.0", "integers": "0, 10",
    "randint": "0, 10", "random": "", "random_sample": "", "random_integers": "1, 6",
    "tomaxint": "", "choice": "5", "permutation": None, "permuted": None, "bytes": None,
    "rand": None, "randn": None,
}
_SPECIAL_EXAMPLES = {
    "permutation": ("permutation(5)", ""), "permuted": ("permuted(numpy.arange(5))", ""),
    "bytes": ("bytes(4)", ""), "rand": ("rand(3)", ""), "randn": ("randn(3)", ""),
}


def _doc(cls: type, name: str) -> str:
    make = "default_rng(0)" if cls is Generator else "RandomState(0)"
    numpy_make = f"numpy.random.{make}"
    if name == "random_integers":  # deprecated by NumPy: its warning silenced
        return ("NumPy's ``RandomState.random_integers`` (deprecated by NumPy: use "
                "``randint(low, high + 1)``): the same arguments and numbers.\n\n"
                "    >>> import numpy, warnings, funcgrad.numpy as fnp\n"
                "    >>> with warnings.catch_warnings():\n"
                "    ...     warnings.simplefilter('ignore', DeprecationWarning)\n"
                "    ...     a = fnp.random.RandomState(0).random_integers(1, 6, size=3)\n"
                "    ...     b = numpy.random.RandomState(0).random_integers(1, 6, size=3)\n"
                "    >>> bool(numpy.all(a == b))\n"
                "    True\n")
    if name in _SPECIAL_EXAMPLES:
        call = _SPECIAL_EXAMPLES[name][0]
    else:
        args = _EXAMPLES.get(name, "")
        call = f"{name}({args + ', ' if args else ''}size=3)"
    rule = _REPARAM.get(name)
    grads = (f" Differentiable in {', '.join(sorted(rule.params))}."
             if rule is not None else "")
    return (f"NumPy's ``{cls.__name__}.{name}``: the same arguments and numbers, drawn as a "
            f"step under :func:`fg.replay <funcgrad.replay>`.{grads} ``like=`` an array "
            "puts the draws on its device.\n\n"
            "    >>> import numpy, funcgrad.numpy as fnp\n"
            f"    >>> a = fnp.random.{make}.{call}\n"
            f"    >>> b = {numpy_make}.{call}\n"
            f"    >>> bool(numpy.all(a == b))\n"
            "    True\n")


def _make_method(cls: type, name: str) -> Any:
    sig = inspect.signature(getattr(type(cls._np_template), name))
    _SIGNATURES[cls][name] = sig

    def method(self, *args, like=None, **kwargs):
        try:
            return _sample(self, name, args, kwargs, like)
        except Exception as exc:  # noqa: BLE001  (NumPy's ValueError...: documented, named)
            documented(f"fnp.random.{cls.__name__}.{name}", exc, args, kwargs)

    method.__name__ = name
    method.__qualname__ = f"{cls.__name__}.{name}"
    method.__doc__ = _doc(cls, name)
    params = list(sig.parameters.values())
    if params and params[-1].kind is inspect.Parameter.VAR_KEYWORD:
        params.insert(-1, inspect.Parameter("like", inspect.Parameter.KEYWORD_ONLY, default=None))
    else:
        params.append(inspect.Parameter("like", inspect.Parameter.KEYWORD_ONLY, default=None))
    method.__signature__ = sig.replace(parameters=params)
    method.__code__ = _generated(method.__code__)
    return method


def _generated(code: Any) -> Any:
    """``code``, named as funcgrad's (its frames are skipped where a message names the
    user's line) with no source to read: its signature is NumPy's (``__signature__``), not
    the ``*args`` of its definition, which documentation tools would read instead."""
    return code.replace(co_filename="<funcgrad fnp.random: NumPy's signature>")


Generator._np_template = _DEFAULT_RNG(0)  # type: ignore[attr-defined]
RandomState._np_template = numpy.random.RandomState(0)  # type: ignore[attr-defined]
for _cls in (Generator, RandomState):
    for _name in dir(type(_cls._np_template)):
        if _name.startswith("_") or _name in _OWN or _name in _cls.__dict__:
            continue
        setattr(_cls, _name, _make_method(_cls, _name))
    for _name in ("shuffle",):
        _SIGNATURES[_cls][_name] = inspect.signature(getattr(type(_cls._np_template), _name))
del Generator._np_template, RandomState._np_template, _cls, _name


# -- the legacy module functions: NumPy's global generator's ---------------------------

# NumPy's global RandomState itself: fnp.random.seed(0) is numpy.random.seed(0), and code
# that seeds one and draws from the other (autograd's, ported) keeps its numbers.
_GLOBAL = _rebuild(RandomState, numpy.random.mtrand._rand)


def _module_function(method: str, name: str | None = None) -> Any:
    """``numpy.random.<name>``: the method ``method`` of fnp.random's one RandomState."""
    bound = getattr(_GLOBAL, method)

    def function(*args, **kwargs):
        return bound(*args, **kwargs)

    function.__name__ = function.__qualname__ = name or method
    function.__doc__ = getattr(RandomState, method).__doc__
    sig = inspect.signature(getattr(RandomState, method))
    function.__signature__ = sig.replace(parameters=list(sig.parameters.values())[1:])
    function.__code__ = _generated(function.__code__)
    return function


seed = _module_function("seed")
get_state = _module_function("get_state")
set_state = _module_function("set_state")
shuffle = _module_function("shuffle")
beta = _module_function("beta")
binomial = _module_function("binomial")
bytes = _module_function("bytes")
chisquare = _module_function("chisquare")
choice = _module_function("choice")
dirichlet = _module_function("dirichlet")
exponential = _module_function("exponential")
f = _module_function("f")
gamma = _module_function("gamma")
geometric = _module_function("geometric")
gumbel = _module_function("gumbel")
hypergeometric = _module_function("hypergeometric")
laplace = _module_function("laplace")
logistic = _module_function("logistic")
lognormal = _module_function("lognormal")
logseries = _module_function("logseries")
multinomial = _module_function("multinomial")
multivariate_normal = _module_function("multivariate_normal")
negative_binomial = _module_function("negative_binomial")
noncentral_chisquare = _module_function("noncentral_chisquare")
noncentral_f = _module_function("noncentral_f")
normal = _module_function("normal")
pareto = _module_function("pareto")
permutation = _module_function("permutation")
poisson = _module_function("poisson")
power = _module_function("power")
rand = _module_function("rand")
randint = _module_function("randint")
randn = _module_function("randn")
random = _module_function("random")
random_integers = _module_function("random_integers")
random_sample = _module_function("random_sample")
ranf = sample = _GLOBAL.random_sample
rayleigh = _module_function("rayleigh")
standard_cauchy = _module_function("standard_cauchy")
standard_exponential = _module_function("standard_exponential")
standard_gamma = _module_function("standard_gamma")
standard_normal = _module_function("standard_normal")
standard_t = _module_function("standard_t")
triangular = _module_function("triangular")
uniform = _module_function("uniform")
vonmises = _module_function("vonmises")
wald = _module_function("wald")
weibull = _module_function("weibull")
zipf = _module_function("zipf")


__all__ = [
    "MT19937",
    "PCG64",
    "PCG64DXSM",
    "Generator",
    "Philox",
    "RandomState",
    "SeedSequence",
    "beta",
    "binomial",
    "bytes",
    "chisquare",
    "choice",
    "default_rng",
    "dirichlet",
    "exponential",
    "f",
    "gamma",
    "geometric",
    "get_state",
    "gumbel",
    "hypergeometric",
    "laplace",
    "logistic",
    "lognormal",
    "logseries",
    "multinomial",
    "multivariate_normal",
    "negative_binomial",
    "noncentral_chisquare",
    "noncentral_f",
    "normal",
    "pareto",
    "permutation",
    "poisson",
    "power",
    "rand",
    "randint",
    "randn",
    "random",
    "random_integers",
    "random_sample",
    "ranf",
    "rayleigh",
    "sample",
    "seed",
    "set_state",
    "shuffle",
    "standard_cauchy",
    "standard_exponential",
    "standard_gamma",
    "standard_normal",
    "standard_t",
    "triangular",
    "uniform",
    "vonmises",
    "wald",
    "weibull",
    "zipf",
]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]
