"""Differential: fg.replay against eager over random programs, random argument kinds and
random mutations between calls (hypothesis).

A program is a random list of steps on a running array ``h``; each step reads one of
the things a function can read: its array argument, a Python float of either sign
(dynamic), an int (in the signature), a registered dataclass (its leaves dynamic), a
static object's attribute, a closed-over array (directly, or derived in NumPy,
``float()`` of it, a branch on it), a closed-over dict, a global array.  Between
calls the test changes some of them: a new float (signed zeros included), an
attribute, an in-place change to the closed-over array, a new array in the dict, the
global bound to another array.  Every replayed result must be the eager call's, bit
for bit; the figures of a run are the number of examples times the calls of each.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp


@fg.tree.register_dataclass
@dataclasses.dataclass
class Pair:
    w: np.ndarray
    b: np.ndarray


class Config:  # a plain object: static (by identity), its attributes watched
    def __init__(self, t):
        self.t = t


G = np.array([0.25, -0.5, 1.0])


def _steps(c, d):
    """The vocabulary: name -> step(h, x, s, n, p, cfg)."""
    return {
        "mul_x": lambda h, x, s, n, p, cfg: h * x,
        "add_s": lambda h, x, s, n, p, cfg: h + s,
        "div_s": lambda h, x, s, n, p, cfg: h / (1.0 + s * s),
        "py_s": lambda h, x, s, n, p, cfg: h * (s * 0.5 - 1.0),
        "sign_s": lambda h, x, s, n, p, cfg: h * math.copysign(1.0, s),
        "branch_s": lambda h, x, s, n, p, cfg: fnp.sin(h) if s > 0 else fnp.cos(h),
        "sin": lambda h, x, s, n, p, cfg: fnp.sin(h),
        "tanh": lambda h, x, s, n, p, cfg: fnp.tanh(h),
        "int_n": lambda h, x, s, n, p, cfg: h * n if n != 2 else h - n,
        "pair": lambda h, x, s, n, p, cfg: h * p.w + p.b,
        "cfg": lambda h, x, s, n, p, cfg: h * cfg.t,
        "c": lambda h, x, s, n, p, cfg: h * c,
        "np_sin_c": lambda h, x, s, n, p, cfg: h + np.sin(c),
        "fnp_sin_c": lambda h, x, s, n, p, cfg: h + fnp.sin(c),
        "float_c": lambda h, x, s, n, p, cfg: h * float(c[0]),
        "branch_c": lambda h, x, s, n, p, cfg: h if c[0] > 0 else -h,
        "sum_c": lambda h, x, s, n, p, cfg: h + c.sum(),
        "dict": lambda h, x, s, n, p, cfg: h * d["k"],
        "global": lambda h, x, s, n, p, cfg: h + G,
        "unique": lambda h, x, s, n, p, cfg: h / len(np.unique(np.round(fg.value_of(x)))),
    }


STEP_NAMES = sorted(_steps(None, None))
FLOATS = st.sampled_from([0.0, -0.0, 0.5, -0.5, 1.25, -2.0, 3.0, 1e-3])
MUTATIONS = st.sampled_from(["none", "float", "int", "attr", "c_in_place", "dict",
                             "global", "x", "pair"])


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(program=st.lists(st.sampled_from(STEP_NAMES), min_size=1, max_size=6),
       mutations=st.lists(st.tuples(MUTATIONS, FLOATS), min_size=2, max_size=5),
       s0=FLOATS, seed=st.integers(0, 2**16))
def test_replay_is_eager_bit_for_bit_under_random_mutations(program, mutations, s0, seed):
    global G
    rng = np.random.default_rng(seed)
    c = rng.standard_normal(3)
    d = {"k": rng.standard_normal(3)}
    steps = _steps(c, d)
    chosen = [steps[name] for name in program]

    def loss(x, s, n, p, cfg):
        h = x
        for step in chosen:
            h = step(h, x, s, n, p, cfg)
        return fnp.sum(h * h)

    eager = fg.value_and_grad(loss, argnums=(0, 3))
    replayed = fg.replay(eager, static_argnums=4)
    x = rng.standard_normal(3)
    s, n = s0, 1
    p = Pair(rng.standard_normal(3), rng.standard_normal(3))
    cfg = Config(1.5)
    saved = G
    try:
        for mutation, value in [("none", s0), *mutations]:
            if mutation == "float":
                s = value
            elif mutation == "int":
                n = 3 - n
            elif mutation == "attr":
                cfg.t = value
            elif mutation == "c_in_place":
                c[:] = rng.standard_normal(3) * value
            elif mutation == "dict":
                d["k"] = rng.standard_normal(3)
            elif mutation == "global":
                G = G * value
            elif mutation == "x":
                x = x * 2.0 + value
            elif mutation == "pair":
                p = Pair(p.w + value, p.b)
            with np.errstate(all="ignore"):
                want = eager(x, s, n, p, cfg)
                got = replayed(x, s, n, p, cfg)
            want_leaves, want_def = fg.tree.flatten(want)
            got_leaves, got_def = fg.tree.flatten(got)
            assert got_def == want_def
            for g, w in zip(got_leaves, want_leaves, strict=True):
                g, w = np.asarray(g), np.asarray(w)
                assert g.dtype == w.dtype and g.shape == w.shape
                assert g.tobytes() == w.tobytes(), (program, mutation, g, w)
    finally:
        G = saved
    stats = replayed.stats
    assert stats.hits + stats.traces == stats.calls == len(mutations) + 1
