"""``dir(fnp)`` covers every function HIPS autograd differentiates.

The list is read from the installed autograd at test time: every public name of
``autograd.numpy``, ``autograd.numpy.linalg`` and ``autograd.numpy.fft`` whose
value has a VJP rule in autograd.  ``EXCEPTIONS`` names the few left out on
purpose, each with its reason.
"""

from __future__ import annotations

import sys

import pytest

import funcgrad.numpy as fnp

autograd_numpy = pytest.importorskip("autograd.numpy")

EXCEPTIONS = {
    # autograd's internal helpers, public in its wrapper module but not NumPy functions
    "array_from_args": "autograd-internal: builds arrays from boxed arguments",
    "concatenate_args": "autograd-internal: concatenate's variadic form",
    "make_diagonal": "autograd-internal: the adjoint of diagonal",
    "fft.truncate_pad": "autograd-internal: the fit of the fft rules (funcgrad's _fit)",
    # owned by the complex-number work (issue 19 item 1), merged separately
    "real": "complex numbers: the complex branch adds it",
    "imag": "complex numbers: the complex branch adds it",
    "conj": "complex numbers: the complex branch adds it",
    "conjugate": "complex numbers: the complex branch adds it",
    "angle": "complex numbers: the complex branch adds it",
}


def _autograd_differentiated() -> set:
    import autograd.numpy.fft
    import autograd.numpy.linalg  # noqa: F401
    from autograd.core import primitive_vjps

    found = set()
    modules = {"autograd.numpy.numpy_wrapper": "", "autograd.numpy.linalg": "linalg.",
               "autograd.numpy.fft": "fft."}
    for module, prefix in modules.items():
        for name, value in vars(sys.modules[module]).items():
            if name.startswith("_"):
                continue
            try:
                if value in primitive_vjps:
                    found.add(prefix + name)
            except TypeError:  # unhashable
                pass
    return found


def _has(name: str) -> bool:
    obj = fnp
    for part in name.split("."):
        if part not in dir(obj):
            return False
        obj = getattr(obj, part)
    return True


def test_dir_fnp_has_every_function_autograd_differentiates():
    names = _autograd_differentiated()
    assert len(names) > 120, f"autograd's list looks short: {sorted(names)}"
    missing = sorted(n for n in names if not _has(n) and n not in EXCEPTIONS)
    assert not missing, f"fnp lacks functions autograd differentiates: {missing}"


COMPLEX = {"real", "imag", "conj", "conjugate", "angle"}  # may land any time


def test_the_exceptions_are_still_exceptions():
    names = _autograd_differentiated()
    stale = sorted(n for n in EXCEPTIONS if n not in names or (_has(n) and n not in COMPLEX))
    assert not stale, f"EXCEPTIONS names functions fnp now has or autograd lacks: {stale}"
