"""Rows of the primitive table: ``fnp.fft`` (issue 19).

The table's functions take and give real arrays, so complex spectra are
seen through their real and imaginary parts (``_parts``), and complex inputs
are made of two real arguments (``_complex``).  Each transform is tried with
its default lengths, with a longer and a shorter ``n``/``s`` (zero-padding and
truncation, whose transposes are each other), on another axis, and with each
``norm``.  ``irfft``'s input is a complex half spectrum whose 0 and Nyquist bins
have imaginary parts that irfft ignores: the finite differences see that too.
"""

from __future__ import annotations

import numpy as np
from table import Row

import funcgrad.numpy as fnp

if hasattr(fnp, "real"):  # complex numbers merged: fnp.real, and astype to complex,
    _re = fnp.real         # are differentiable (and jax.numpy runs these rows too)

    def _complex_of(a):
        return fnp.astype(a, np.result_type(a.dtype, np.complex64))
else:
    from funcgrad.numpy.fft import _complex_of, _re

F = fnp.fft


def _parts(z, like):
    """The real and imaginary parts of ``z``, flat, in ``like``'s dtype (a float16
    signal has a complex64 spectrum, as in NumPy)."""
    out = fnp.concatenate([fnp.ravel(_re(z)), fnp.ravel(_re(z * -1j))])
    return fnp.astype(out, like.dtype)


def _complex(a, b):
    return fnp.add(_complex_of(a), fnp.multiply(_complex_of(b), 1j))  # devices checked


def c2c(fun, **kw):
    return lambda a, b: _parts(fun(_complex(a, b), **kw), a)


def r2c(fun, **kw):
    return lambda a: _parts(fun(a, **kw), a)


def c2r(fun, **kw):
    return lambda a, b: fnp.astype(fun(_complex(a, b), **kw), a.dtype)


V = [((4,), (4,)), ((2, 5), (2, 5)), ((1,), (1,))]
M = [((3, 4), (3, 4)), ((2, 2, 3), (2, 2, 3))]

ROWS = [
    Row("fft.fft", c2c(F.fft), shapes=V),
    Row("fft.fft", r2c(F.fft), id="real", shapes=[((5,),), ((2, 3),)]),
    Row("fft.fft", c2c(F.fft, n=6), id="pad", shapes=[((4,), (4,)), ((2, 3), (2, 3))]),
    Row("fft.fft", c2c(F.fft, n=3, axis=0, norm="ortho"), id="cut-axis0-ortho",
        shapes=[((5, 2), (5, 2))]),
    Row("fft.fft", c2c(F.fft, norm="forward"), id="forward", shapes=[((3,), (3,))]),
    Row("fft.ifft", c2c(F.ifft), shapes=V),
    Row("fft.ifft", c2c(F.ifft, n=7, norm="ortho"), id="pad-ortho", shapes=[((4,), (4,))]),
    Row("fft.ifft", c2c(F.ifft, n=2, axis=-2, norm="forward"), id="cut-forward",
        shapes=[((3, 2), (3, 2))]),
    Row("fft.fft2", c2c(F.fft2), shapes=M),
    Row("fft.fft2", c2c(F.fft2, s=(2, 5), norm="ortho"), id="s", shapes=[((3, 4), (3, 4))]),
    Row("fft.ifft2", c2c(F.ifft2), shapes=M),
    Row("fft.ifft2", c2c(F.ifft2, axes=(0, 2), norm="forward"), id="axes",
        shapes=[((2, 3, 3), (2, 3, 3))]),
    Row("fft.fftn", c2c(F.fftn), shapes=M + [((3,), (3,))]),
    Row("fft.fftn", c2c(F.fftn, s=(4, 2), axes=(2, 0)), id="s-axes",
        shapes=[((3, 2, 3), (3, 2, 3))]),
    Row("fft.ifftn", c2c(F.ifftn), shapes=M),
    Row("fft.ifftn", c2c(F.ifftn, s=(3,), norm="ortho"), id="s", shapes=[((2, 4), (2, 4))]),
    Row("fft.rfft", r2c(F.rfft), shapes=[((4,),), ((5,),), ((2, 3),), ((1,),)]),
    Row("fft.rfft", r2c(F.rfft, n=8, norm="ortho"), id="pad-ortho", shapes=[((5,),)]),
    Row("fft.rfft", r2c(F.rfft, n=3, axis=0, norm="forward"), id="cut-axis0",
        shapes=[((6, 2),)]),
    Row("fft.irfft", c2r(F.irfft), shapes=[((3,), (3,)), ((2, 4), (2, 4)), ((2,), (2,))]),
    Row("fft.irfft", c2r(F.irfft, n=7), id="odd", shapes=[((4,), (4,)), ((5,), (5,))]),
    Row("fft.irfft", c2r(F.irfft, n=10, norm="ortho"), id="pad-ortho",
        shapes=[((3,), (3,))]),
    Row("fft.irfft", c2r(F.irfft, n=4, axis=0, norm="forward"), id="cut-axis0",
        shapes=[((5, 2), (5, 2))]),
    Row("fft.irfft", lambda a: fnp.astype(F.irfft(a), a.dtype), id="real-input",
        shapes=[((4,),)]),
    Row("fft.rfft2", r2c(F.rfft2), shapes=[((3, 4),), ((2, 3, 3),)]),
    Row("fft.rfft2", r2c(F.rfft2, s=(2, 6), norm="ortho"), id="s", shapes=[((3, 4),)]),
    Row("fft.irfft2", c2r(F.irfft2), shapes=[((3, 3), (3, 3)), ((2, 2, 4), (2, 2, 4))]),
    Row("fft.irfft2", c2r(F.irfft2, s=(4, 5), norm="forward"), id="s",
        shapes=[((3, 3), (3, 3))]),
    Row("fft.rfftn", r2c(F.rfftn), shapes=[((3, 4),), ((2, 2, 3),), ((5,),)]),
    Row("fft.rfftn", r2c(F.rfftn, s=(3, 3), axes=(2, 0)), id="s-axes", shapes=[((2, 2, 4),)]),
    Row("fft.irfftn", c2r(F.irfftn), shapes=[((3, 3), (3, 3)), ((2, 2, 3), (2, 2, 3))]),
    Row("fft.irfftn", c2r(F.irfftn, s=(3, 6), axes=(0, 2), norm="ortho"), id="s-axes",
        shapes=[((2, 2, 4), (2, 2, 4))]),
    Row("fft.fftshift", F.fftshift, shapes=[((5,),), ((2, 3),), ((),)]),
    Row("fft.fftshift", lambda x: F.fftshift(x, axes=1), id="axis", shapes=[((2, 4),)]),
    Row("fft.ifftshift", F.ifftshift, shapes=[((5,),), ((3, 2),)]),
    Row("fft.ifftshift", lambda x: F.ifftshift(x, axes=(0,)), id="axis",
        shapes=[((3, 2),)]),
]
