"""Every error funcgrad raises (layer 0: stdlib only).

Each class derives from :class:`FuncgradError` and, where one fits, from the
builtin a caller would catch anyway (``ValueError``, ``TypeError``), so both
``except fg.FuncgradError`` and ``except ValueError`` work.
"""


class FuncgradError(Exception):
    """Base class of all funcgrad errors."""


class BackpropError(FuncgradError, ValueError):
    """A node, output or input is not on the graph a call names."""


class GradientTypeError(FuncgradError, TypeError):
    """A VJP rule returned a gradient of the wrong shape, dtype kind or device."""


class DeviceMismatchError(FuncgradError, ValueError):
    """The inputs of one operation live on different devices."""


class NodeConversionError(FuncgradError, TypeError):
    """A Node was converted to a raw value by accident (``float(node)``...)."""


class FuncgradTypeError(FuncgradError, TypeError):
    """An argument of the wrong type (a non-Node, an integer input to grad...)."""


class FuncgradValueError(FuncgradError, ValueError):
    """An argument of the wrong value (a shape, a length, an axis)."""
