"""Rows of the primitive table: ``funcgrad.scipy.special``.

Each row is a special function in the arguments it is differentiable in,
over a domain where it is smooth; the order, integer data and shape
parameters without a derivative are closed over.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.scipy import special as sp

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from table import BINARY, UNARY, Row, above_one, away_from_zero, positive, real, unit


def inside(x):
    """(0.1, 0.9): inside (0, 1), away from both ends."""
    return 0.5 + 0.4 * np.tanh(x)


def above_two(x):
    """(2.5, ~5): multigammaln of dimension 3 needs a > 1."""
    return 2.5 + np.abs(x)


SMALL = [((),), ((3,),), ((2, 3),)]
PAIRS = [((), ()), ((3,), ()), ((2, 3), (3,))]
F64 = ("float64",)

ROWS = [
    Row("scipy.special.gamma", sp.gamma, domains=(positive,)),
    Row("scipy.special.gammaln", sp.gammaln, domains=(positive,)),
    Row("scipy.special.digamma", sp.digamma, domains=(positive,)),
    Row("scipy.special.polygamma", lambda x: sp.polygamma(1, x), domains=(positive,)),
    Row("scipy.special.polygamma", lambda x: sp.polygamma(fnp.asarray([0, 2, 3], like=x), x), [((3,),)],
        domains=(positive,), id="orders"),
    Row("scipy.special.beta", sp.beta, BINARY, domains=(positive,)),
    Row("scipy.special.betaln", sp.betaln, BINARY, domains=(positive,)),
    Row("scipy.special.betainc", lambda x: sp.betainc(2.0, 3.5, x), domains=(inside,)),
    Row("scipy.special.gammainc", lambda x: sp.gammainc(2.5, x), domains=(positive,)),
    Row("scipy.special.gammaincc", lambda x: sp.gammaincc(2.5, x), domains=(positive,)),
    Row("scipy.special.gammaincinv", lambda q: sp.gammaincinv(2.5, q), domains=(inside,)),
    Row("scipy.special.gammainccinv", lambda q: sp.gammainccinv(2.5, q), domains=(inside,)),
    Row("scipy.special.betaincinv", lambda q: sp.betaincinv(2.0, 3.5, q), domains=(inside,)),
    Row("scipy.special.stdtr", lambda t: sp.stdtr(3.5, t)),
    # SciPy inverts in float32 itself for float32 data: too coarse for finite differences
    Row("scipy.special.stdtrit", lambda p: sp.stdtrit(3.5, p), domains=(inside,), dtypes=F64),
    Row("scipy.special.erf", sp.erf),
    Row("scipy.special.erfc", sp.erfc),
    Row("scipy.special.erfcx", sp.erfcx, domains=(positive,)),
    Row("scipy.special.erfinv", sp.erfinv, domains=(unit,)),
    Row("scipy.special.erfcinv", lambda x: sp.erfcinv(1 + x), domains=(unit,)),
    Row("scipy.special.ndtr", sp.ndtr),
    Row("scipy.special.ndtri", sp.ndtri, domains=(inside,)),
    Row("scipy.special.log_ndtr", sp.log_ndtr),
    Row("scipy.special.logit", sp.logit, domains=(inside,)),
    Row("scipy.special.expit", sp.expit),
    Row("scipy.special.log_expit", sp.log_expit),
    Row("scipy.special.xlogy", sp.xlogy, BINARY, domains=(real, positive)),
    Row("scipy.special.xlog1py", sp.xlog1py, BINARY, domains=(real, positive)),
    Row("scipy.special.entr", sp.entr, domains=(positive,)),
    Row("scipy.special.rel_entr", sp.rel_entr, BINARY, domains=(positive,)),
    Row("scipy.special.kl_div", sp.kl_div, BINARY, domains=(positive,)),
    Row("scipy.special.i0", sp.i0),
    Row("scipy.special.i1", sp.i1),
    Row("scipy.special.i0e", sp.i0e, domains=(away_from_zero,)),
    Row("scipy.special.i1e", sp.i1e, domains=(away_from_zero,)),
    Row("scipy.special.iv", lambda x: sp.iv(1.5, x), SMALL, domains=(positive,)),
    Row("scipy.special.ive", lambda x: sp.ive(2.0, x), SMALL, domains=(away_from_zero,)),
    Row("scipy.special.j0", sp.j0),
    Row("scipy.special.j1", sp.j1),
    Row("scipy.special.jv", lambda x: sp.jv(2.5, x), SMALL, domains=(positive,)),
    Row("scipy.special.y0", sp.y0, domains=(positive,)),
    Row("scipy.special.y1", sp.y1, domains=(positive,)),
    Row("scipy.special.yv", lambda x: sp.yv(1.5, x), SMALL, domains=(positive,)),
    Row("scipy.special.rgamma", sp.rgamma, domains=(positive,)),
    Row("scipy.special.loggamma", sp.loggamma, domains=(positive,)),
    Row("scipy.special.gammasgn", lambda x: sp.gammasgn(x) * x, domains=(positive,)),
    Row("scipy.special.poch", sp.poch, BINARY, domains=(positive,)),
    Row("scipy.special.exp1", sp.exp1, domains=(positive,)),
    Row("scipy.special.expi", sp.expi, domains=(positive,)),
    Row("scipy.special.expn", lambda x: sp.expn(3, x), domains=(positive,)),
    Row("scipy.special.spence", sp.spence, domains=(positive,)),
    Row("scipy.special.zeta", lambda q: sp.zeta(3.0, q), domains=(positive,)),
    Row("scipy.special.multigammaln", lambda a: sp.multigammaln(a, 3), SMALL,
        domains=(above_two,)),
    Row("scipy.special.logsumexp", sp.logsumexp, SMALL),
    Row("scipy.special.logsumexp", lambda a, b: sp.logsumexp(a, axis=-1, b=b),
        [((3,), (3,)), ((2, 3), (3,))], domains=(real, positive), id="weights"),
    Row("scipy.special.logsumexp", lambda a: sp.logsumexp(a, axis=0, keepdims=True),
        [((3,),), ((2, 3),)], id="axis0-keepdims"),
    Row("scipy.special.logsumexp",
        lambda a: sp.logsumexp(a, b=fnp.asarray([1.0, -0.5, 0.25], a.dtype, like=a),
                               return_sign=True)[0],
        [((3,),)], dtypes=F64, id="signed"),
    Row("scipy.special.softmax", sp.softmax, SMALL),
    Row("scipy.special.softmax", lambda x: sp.softmax(x, axis=-1), [((2, 3),)], id="last"),
    Row("scipy.special.log_softmax", sp.log_softmax, SMALL),
]
del above_one, PAIRS, UNARY
