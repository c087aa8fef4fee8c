"""Every error funcgrad raises (layer 0: stdlib, and attrs for one base class).

Each class derives from :class:`FuncgradError` and, where one fits, from the
builtin a caller would catch anyway (``ValueError``, ``TypeError``), so both
``except fg.FuncgradError`` and ``except ValueError`` work.
"""

import attrs


class FuncgradError(Exception):
    """Base class of all funcgrad errors.

    Catch it to catch anything funcgrad raises; each subclass also derives from
    the builtin that fits (``ValueError``, ``TypeError``...).

    >>> import numpy, funcgrad as fg
    >>> try:
    ...     fg.grad(lambda x: x * 2.0)(numpy.ones(3))
    ... except fg.FuncgradError as exc:
    ...     print(isinstance(exc, ValueError), exc)
    True grad needs a scalar (size-1) output, got shape (3,)
    """


class BackpropError(FuncgradError, ValueError):
    """A node, output or input is not on the graph a call names.

    >>> import numpy, funcgrad as fg
    >>> with fg.backprop_scope("mine") as mine:
    ...     x = fg.require_grad(numpy.ones(2), mine)
    ...     fg.backprop([x.sum()], [x])          # folds the default graph, not 'mine'
    Traceback (most recent call last):
      ...
    funcgrad.errors.BackpropError: output 0 is not on the graph 'default'
    """


class GradientTypeError(FuncgradError, TypeError):
    """A VJP rule returned a gradient of the wrong shape, dtype kind or device.

    The message names the primitive, what was expected and what came back.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> bad = fg.primitive(lambda x: x * 2.0)
    >>> fg.defvjp(bad, lambda g, ans, x: fnp.sum(g))        # a scalar, not x's shape
    >>> fg.grad(lambda x: fnp.sum(bad(x)))(numpy.ones(3))   # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    funcgrad.errors.GradientTypeError: ...shape...
    """


class DeviceMismatchError(FuncgradError, ValueError):
    """The inputs of one operation live on different devices.

    Raised by any primitive given, say, a CuPy array and a NumPy array; move
    one with ``fg.to_device``.  On a machine without a GPU it is never raised.

    >>> import funcgrad as fg
    >>> issubclass(fg.DeviceMismatchError, ValueError)
    True
    """


class NodeConversionError(FuncgradError, TypeError):
    """A Node was converted to a raw value by accident, or given to a NumPy function.

    Inside a differentiated function, ``float(x)``, ``numpy.asarray(x)``,
    ``if x:`` or ``numpy.sin(x)`` on a Node raise it; the message says what to
    use instead (``fg.value_of``, or the ``fnp`` function of the same name).

    >>> import numpy, funcgrad as fg
    >>> fg.grad(lambda x: numpy.sin(x))(1.0)
    Traceback (most recent call last):
      ...
    funcgrad.errors.NodeConversionError: numpy.sin was called on a funcgrad Node inside a differentiated function: use fnp.sin(...) instead, which is differentiable
    """


class FuncgradTypeError(FuncgradError, TypeError):
    """An argument of the wrong type (a non-Node, an integer input to grad...).

    >>> import numpy, funcgrad as fg
    >>> try:
    ...     fg.grad(lambda x: x.sum())(numpy.arange(3))
    ... except fg.FuncgradTypeError as exc:
    ...     print(isinstance(exc, TypeError))
    True
    """


class FuncgradValueError(FuncgradError, ValueError):
    """An argument of the wrong value (a shape, a length, an axis).

    >>> import numpy, funcgrad as fg
    >>> try:
    ...     fg.grad(lambda x: x * 2.0)(numpy.ones(3))
    ... except fg.FuncgradValueError as exc:
    ...     print(exc)
    grad needs a scalar (size-1) output, got shape (3,)
    """


class FuncgradStateError(FuncgradError, RuntimeError):
    """A context block (hooks, debug_nans, backprop_scope) ended twice or in another context;
    a drawing asked of Graphviz where it is not installed.

    >>> import funcgrad as fg
    >>> issubclass(fg.FuncgradStateError, RuntimeError)
    True
    """


class ReplayError(FuncgradError, TypeError):
    """``fg.replay`` met something a plan cannot replay: a traced value printed,
    converted to NumPy or pickled, random numbers drawn while tracing, an
    argument updated in place, a traced value used after its trace.

    The message says what and where; ``fg.replay(fun, fallback=True)`` runs such
    calls eagerly instead.

    >>> import numpy, funcgrad as fg
    >>> fg.replay(lambda x: print(fg.value_of(x)))(numpy.ones(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    funcgrad.errors.ReplayError: fg.replay: str() or print() of a traced value at ... reads a traced value for Python itself, which a replay cannot redo ...
    """


class FuncgradIndexError(FuncgradError, IndexError, ValueError):
    """An index or axis out of range (an ``IndexError`` and a ``ValueError``, as NumPy's
    ``AxisError`` is).

    >>> import numpy, funcgrad as fg
    >>> try:
    ...     fg.grad(lambda x: x[10])(numpy.ones(3))
    ... except fg.FuncgradIndexError as exc:
    ...     print(isinstance(exc, IndexError), isinstance(exc, ValueError))
    True True
    """


def describe(x: object) -> str:
    """A short description of ``x`` for messages, whatever it is: never a long repr.

    >>> describe(10 ** 400), describe([1, [2]]), describe("abc")
    ('an int of 1329 bits', 'a list of 2 items', "'abc'")
    """
    if x is None or x is Ellipsis or isinstance(x, bool):
        return repr(x)
    if isinstance(x, int):
        return repr(x) if x.bit_length() <= 64 else f"an int of {x.bit_length()} bits"
    if isinstance(x, (float, complex)):
        return repr(x)
    if isinstance(x, (str, bytes)):
        text = repr(x)
        return text if len(text) <= 40 else text[:37] + "..."
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    name = type(x).__name__
    if shape is not None and dtype is not None:
        return f"a {dtype} {name} of shape {tuple(shape)}"
    if isinstance(x, (list, tuple, dict, set, frozenset)):
        return f"a {name} of {len(x)} items"
    return f"a {name}"


def describe_arguments(args: tuple, kwargs: dict | None = None) -> str:
    """``'argument 0: ..., argument 1: ..., axis=...'`` for the arguments of a call."""
    parts = [f"argument {i}: {describe(a)}" for i, a in enumerate(args)]
    parts += [f"{k}={describe(v)}" for k, v in (kwargs or {}).items()]
    return ", ".join(parts) or "no arguments"


class BatchedValueError(FuncgradError, TypeError):
    """Python read a value that ``fg.vmap`` maps over: it has one value per example.

    ``if x > 0``, ``float(x)``, ``int(x)``, ``bool(x)``, ``x.item()`` and
    indexing with ``x`` need one Python value, but inside ``vmap`` a batched
    value has one per example, so the branch cannot be taken for all of them at
    once.  Write the choice as data instead: ``fnp.where(x > 0, a, b)``.

    >>> import numpy, funcgrad as fg
    >>> fg.vmap(lambda x: x if x > 0 else -x)(numpy.array([1.0, -2.0]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    funcgrad.errors.BatchedValueError: bool() (an if, while, and, or) of a value batched by fg.vmap (the result of 'greater'): ...
    """


class VmapFallbackWarning(UserWarning):
    """A primitive without a batching rule ran under ``fg.vmap`` as a loop.

    The results are right (one call per example, stacked), only slower; give
    the primitive a rule with :func:`fg.defbatch <funcgrad.defbatch>`.

    >>> import warnings, numpy, funcgrad as fg
    >>> twice = fg.primitive(lambda x: 2.0 * x)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     out = fg.vmap(twice)(numpy.ones((3, 2)))
    >>> out.shape, caught[0].category.__name__
    ((3, 2), 'VmapFallbackWarning')
    """


class MissingRuleError(FuncgradError, NotImplementedError):
    """A primitive is differentiated with respect to an argument it has no rule for.

    Also a ``NotImplementedError``; the message names the primitive and the argument.

    >>> import numpy, funcgrad as fg
    >>> shift = fg.primitive(lambda x: x + 1.0)                  # no rules yet
    >>> fg.grad(lambda x: shift(x).sum())(numpy.ones(2))         # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    funcgrad.errors.MissingRuleError: primitive '<lambda>' has no derivative rule for argument 0...
    """


class FrozenNodeError(FuncgradError, attrs.exceptions.FrozenInstanceError):
    """Setting or deleting an attribute of a Node (or a BackpropId): attrs' frozen
    error (an AttributeError).

    >>> import numpy, funcgrad as fg
    >>> try:
    ...     fg.require_grad(numpy.ones(2)).value = None
    ... except fg.FrozenNodeError as exc:
    ...     print(exc)
    Node is immutable: cannot set 'value'
    """

    def __init__(self, message: str):
        AttributeError.__init__(self, message)
        self.msg = message
