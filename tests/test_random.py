"""``fnp.random``: NumPy's numbers bit for bit, draws that replay, gradients of parameters,
devices; and under ``fg.replay`` every other generator refused (issue 16).

The reference is NumPy itself: every method of ``fnp.random.Generator`` and
``fnp.random.RandomState`` and every legacy module function draws exactly what
NumPy's draws for the same seed, and a replayed function draws exactly what the
same calls made eagerly draw.  Gradients are checked against finite
differences (``fg.check_grads``) at first and second order, with the seed fixed
inside the function so that it is deterministic.
"""

from __future__ import annotations

import inspect
import random
import secrets
import tempfile
import threading
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import FuncgradTypeError

# Arguments for every draw (size is added where the method takes one).
ARGS = {
    "beta": (2.0, 3.0), "binomial": (10, 0.5), "chisquare": (2.0,), "dirichlet": ([1.0, 2.0],),
    "exponential": (2.0,), "f": (2.0, 3.0), "gamma": (2.0, 1.5), "geometric": (0.5,),
    "gumbel": (0.5, 2.0), "hypergeometric": (5, 5, 3), "laplace": (0.5, 2.0),
    "logistic": (0.5, 2.0), "lognormal": (0.0, 0.5), "logseries": (0.5,),
    "multinomial": (10, [0.5, 0.5]), "multivariate_hypergeometric": ([3, 2], 2),
    "multivariate_normal": ([0.0, 1.0], [[2.0, 0.3], [0.3, 1.0]]),
    "negative_binomial": (5, 0.5), "noncentral_chisquare": (2.0, 1.0),
    "noncentral_f": (2.0, 3.0, 1.0), "normal": (1.0, 2.0), "pareto": (3.0,), "poisson": (3.0,),
    "power": (2.0,), "rayleigh": (1.5,), "standard_cauchy": (), "standard_exponential": (),
    "standard_gamma": (2.0,), "standard_normal": (), "standard_t": (3.0,),
    "triangular": (0.0, 0.5, 1.0), "uniform": (-1.0, 2.0), "vonmises": (0.0, 1.0),
    "wald": (1.0, 1.0), "weibull": (2.0,), "zipf": (2.0,), "integers": (0, 10),
    "randint": (0, 10), "random": (), "random_sample": (), "tomaxint": (), "choice": (7,),
}
NO_SIZE = {"permutation": (6,), "permuted": (np.arange(6.0),), "bytes": (5,), "rand": (2, 3),
           "randn": (2, 3), "shuffle": None, "spawn": None, "seed": None, "get_state": None,
           "set_state": None, "random_integers": None, "bit_generator": None}


def _methods(cls):
    return sorted(n for n in dir(cls) if not n.startswith("_") and n not in
                  ("shuffle", "spawn", "seed", "get_state", "set_state", "random_integers",
                   "bit_generator"))


def _same(a, b):
    if isinstance(a, bytes):
        return a == b
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and bool(np.all(a == b))


def _call(gen, name):
    if name in NO_SIZE:
        return getattr(gen, name)(*NO_SIZE[name])
    return getattr(gen, name)(*ARGS[name], size=4)


@pytest.mark.parametrize("name", _methods(np.random.Generator))
def test_generator_methods_draw_numpys_numbers(name):
    ours, theirs = fnp.random.default_rng(11), np.random.default_rng(11)
    for _ in range(2):  # twice: the streams stay in step
        assert _same(_call(ours, name), _call(theirs, name)), name


@pytest.mark.parametrize("name", _methods(np.random.RandomState))
def test_random_state_methods_draw_numpys_numbers(name):
    ours, theirs = fnp.random.RandomState(3), np.random.RandomState(3)
    for _ in range(2):
        assert _same(_call(ours, name), _call(theirs, name)), name


def test_the_module_functions_are_numpys_legacy_ones():
    legacy = [n for n in _methods(np.random.RandomState) if hasattr(np.random, n)]
    assert len(legacy) > 40
    fnp.random.seed(5)
    np_state = np.random.RandomState(5)
    for name in legacy:
        assert _same(_call(fnp.random, name), _call(np_state, name)), name
    for alias in ("ranf", "sample"):
        assert _same(getattr(fnp.random, alias)(3), np_state.random_sample(3))


def test_the_module_functions_share_numpys_global_generator():
    np.random.seed(3)
    a = fnp.random.randn(4)
    fnp.random.seed(3)
    assert (np.random.randn(4) == a).all()
    assert fnp.random.get_state()[1][0] == np.random.get_state()[1][0]
    from numpy.random import randn as numpy_randn  # bound before: compared by state

    f = fg.replay(lambda x: x + fnp.random.randn(2) + 0 * np.random.rand())
    with pytest.raises(fg.ReplayError, match="numpy.random.rand"):
        f(np.zeros(2))  # a NumPy draw beside fnp.random's is still seen (by its wrapper)
    # fnp.random's draws move the global state: no false refusal where the function
    # holds NumPy's global generator too
    g = fg.replay(lambda x: x + fnp.random.randn(2) + numpy_randn.__name__.count("z"))
    fnp.random.seed(1)
    got = [g(np.zeros(2)) for _ in range(2)]
    np.random.seed(1)
    for r in got:
        assert (r == np.random.randn(2)).all()


def test_scalars_shuffle_state_and_seeds_as_numpy():
    ours, theirs = fnp.random.default_rng(2), np.random.default_rng(2)
    a, b = ours.random(), theirs.random()
    assert a == b and isinstance(a, float)
    x, y = np.arange(10), np.arange(10)
    ours.shuffle(x), theirs.shuffle(y)
    assert (x == y).all()
    r = fnp.random.RandomState(0)
    state = r.get_state()
    first = r.randn(3)
    r.set_state(state)
    assert (r.randn(3) == first).all()
    r.seed(4)
    assert (r.rand(2) == np.random.RandomState(4).rand(2)).all()
    seq = fnp.random.SeedSequence(9)
    assert _same(fnp.random.default_rng(seq).random(3), np.random.default_rng(9).random(3))
    g = fnp.random.Generator(fnp.random.PCG64(1))
    assert _same(g.normal(size=2), np.random.Generator(np.random.PCG64(1)).normal(size=2))
    assert fnp.random.default_rng(g) is g
    kids = fnp.random.default_rng(0).spawn(2)
    assert _same(kids[1].random(2), np.random.default_rng(0).spawn(2)[1].random(2))
    assert fg.random is fnp.random
    import funcgrad.random

    assert funcgrad.random is fnp.random


def test_a_generator_pickles_with_its_state():
    import pickle

    g = fnp.random.default_rng(3)
    g.random(2)
    h = pickle.loads(pickle.dumps(g))
    assert _same(h.random(3), g.random(3))


def test_signatures_are_numpys_with_like():
    sig = inspect.signature(fnp.random.Generator.normal)
    assert list(sig.parameters) == ["self", "loc", "scale", "size", "like"]


# -- gradients of the parameters ------------------------------------------------------

LOC_SCALE = ["normal", "laplace", "logistic", "gumbel"]


@pytest.mark.parametrize("name", LOC_SCALE)
@pytest.mark.parametrize("make", ["default_rng", "RandomState"])
def test_location_scale_draws_are_differentiable_and_numpys(name, make):
    loc, scale = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.5, 2.0])

    def f(loc, scale):
        return getattr(getattr(fnp.random, make)(4), name)(loc, scale)

    numpy_value = getattr(getattr(np.random, make)(4), name)(loc, scale)
    value, vjp = fg.vjp(f, loc, scale)
    assert (value == numpy_value).all()  # the reparameterised value is NumPy's, bit for bit
    z = getattr(getattr(np.random, make)(4), name)(0.0, 1.0, 3)
    g_loc, g_scale = vjp(np.ones(3))
    assert (g_loc == 1).all() and np.allclose(g_scale, z)
    fg.check_grads(f, (loc, scale), order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("make", ["default_rng", "RandomState"])
def test_uniform_exponential_gamma_rayleigh_mvn_gradients(make):
    def rng():
        return getattr(fnp.random, make)(8)

    def ref():
        return getattr(np.random, make)(8)

    low, high = np.array([0.0, 1.0]), np.array([2.0, 4.0])
    cases = [
        (lambda lo, hi: rng().uniform(lo, hi), (low, high), lambda: ref().uniform(low, high)),
        (lambda s: rng().exponential(s), (high,), lambda: ref().exponential(high)),
        (lambda s: rng().gamma(2.5, s), (high,), lambda: ref().gamma(2.5, high)),
        (lambda s: rng().rayleigh(s, size=(3, 2)), (high,), lambda: ref().rayleigh(high, (3, 2))),
        (lambda m: rng().multivariate_normal(m, [[2.0, 0.3], [0.3, 1.0]], size=3), (low,),
         lambda: ref().multivariate_normal(low, [[2.0, 0.3], [0.3, 1.0]], size=3)),
    ]
    for f, args, expected in cases:
        value, _ = fg.vjp(f, *args)
        assert (value == expected()).all()
        fg.check_grads(f, args, order=2, modes=("rev", "fwd"))


def test_choice_permutation_permuted_of_a_node_are_differentiable():
    x = np.arange(12.0).reshape(6, 2) + 0.5
    for f, expected in [
        (lambda x: fnp.random.default_rng(1).choice(x, 4), np.random.default_rng(1).choice(x, 4)),
        (lambda x: fnp.random.default_rng(1).choice(x, 2, replace=False, axis=1),
         np.random.default_rng(1).choice(x, 2, replace=False, axis=1)),
        (lambda x: fnp.random.RandomState(2).choice(x[:, 0], 5),
         np.random.RandomState(2).choice(x[:, 0], 5)),
        (lambda x: fnp.random.default_rng(1).permutation(x),
         np.random.default_rng(1).permutation(x)),
        (lambda x: fnp.random.default_rng(1).permutation(x, axis=1),
         np.random.default_rng(1).permutation(x, axis=1)),
        (lambda x: fnp.random.RandomState(1).permutation(x), np.random.RandomState(1).permutation(x)),
        (lambda x: fnp.random.default_rng(1).permuted(x), np.random.default_rng(1).permuted(x)),
        (lambda x: fnp.random.default_rng(1).permuted(x, axis=0),
         np.random.default_rng(1).permuted(x, axis=0)),
        (lambda x: fnp.random.default_rng(1).permuted(x, axis=1),
         np.random.default_rng(1).permuted(x, axis=1)),
    ]:
        value, _ = fg.vjp(f, x)
        assert (value == expected).all()
        fg.check_grads(lambda x, f=f: fnp.sum(f(x) ** 3), (x,), order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("call, param", [
    (lambda r, v: r.poisson(v), "lam"),
    (lambda r, v: r.beta(v, 2.0), "a"),
    (lambda r, v: r.gamma(v, 1.0), "shape"),
    (lambda r, v: r.lognormal(v), "mean"),
    (lambda r, v: r.choice(3, p=fnp.stack([v, v, 1 - 2 * v])), "p"),
    (lambda r, v: r.multivariate_normal([0.0], fnp.reshape(v, (1, 1))), "cov"),
])
def test_a_node_where_no_gradient_exists_is_refused(call, param):
    with pytest.raises(FuncgradTypeError, match=rf"not differentiable in '{param}'"):
        fg.grad(lambda v: fnp.sum(call(fnp.random.default_rng(0), v)))(0.3)


def test_shuffle_of_a_node_is_refused_toward_permutation():
    with pytest.raises(FuncgradTypeError, match="permutation"):
        fg.grad(lambda x: (fnp.random.default_rng(0).shuffle(x), fnp.sum(x))[1])(np.ones(3))


def test_a_negative_scale_is_refused_as_numpy_refuses_it():
    with pytest.raises(ValueError, match="scale"):
        fg.grad(lambda m: fnp.sum(fnp.random.default_rng(0).normal(m, -1.0, size=2)))(0.0)
    with pytest.raises(ValueError):
        fnp.random.default_rng(0).normal(0.0, -1.0)
    # replayed: the check is a step, so a later call with a negative scale is refused too
    f = fg.replay(fg.grad(lambda s: fnp.sum(fnp.random.default_rng(0).normal(0.0, s, size=2))))
    f(np.float64(1.0))
    with pytest.raises(ValueError, match="scale < 0"):
        f(np.float64(-1.0))


def test_a_list_holding_nodes_is_a_parameter_array():
    g = fg.grad(lambda m: fnp.sum(fnp.random.default_rng(0).normal([m, 2 * m], 1.0)))(1.0)
    assert g == 3.0
    value, _ = fg.vjp(lambda m: fnp.random.default_rng(0).normal([m, 2 * m], 1.0), 1.0)
    assert (value == np.random.default_rng(0).normal([1.0, 2.0], 1.0)).all()


# -- replay: every call draws anew, as eager draws --------------------------------------


def _dropout_step(rng_of):
    """A training step with dropout, the generator found by ``rng_of()``."""

    def loss(w, x):
        h = fnp.tanh(x @ w)
        mask = rng_of().random(h.shape) > 0.3
        return fnp.mean((h * mask / 0.7) ** 2)

    return fg.value_and_grad(loss)


W, X = np.random.RandomState(0).randn(3, 4), np.random.RandomState(1).randn(5, 3)


def _eager_and_replayed(make_step, calls=4, *args):
    """Results of ``calls`` eager calls and ``calls`` replayed calls of fresh steps."""
    eager = make_step()
    expected = [eager(W, X, *args) for _ in range(calls)]
    replayed = fg.replay(make_step())
    got = [replayed(W, X, *args) for _ in range(calls)]
    assert replayed.stats.hits == calls - 1, replayed.stats
    return expected, got


def _assert_same_runs(expected, got):
    for (v1, g1), (v2, g2) in zip(expected, got, strict=True):
        assert v1 == v2 and (g1 == g2).all()
    assert expected[0][0] != expected[1][0]  # the draws changed from call to call


def test_a_closed_over_generator_draws_on_at_every_replay():
    def make():
        rng = fnp.random.default_rng(7)
        return _dropout_step(lambda: rng)

    _assert_same_runs(*_eager_and_replayed(make))


def test_a_generator_held_by_self_draws_on():
    class Model:
        def __init__(self):
            self.rng = fnp.random.default_rng(3)
            self.step = _dropout_step(lambda: self.rng)

    _assert_same_runs(*_eager_and_replayed(lambda: Model().step))


def test_a_generator_passed_as_an_argument_draws_on():
    def make():
        step = _dropout_step(lambda: holder[0])

        def call(w, x, rng):
            holder[0] = rng
            return step(w, x)

        holder = [None]
        return call

    rng_a, rng_b = fnp.random.default_rng(5), fnp.random.default_rng(5)
    eager, replayed = make(), fg.replay(make())
    expected = [eager(W, X, rng_a) for _ in range(3)]
    got = [replayed(W, X, rng_b) for _ in range(3)]
    _assert_same_runs(expected, got)


def test_a_generator_made_inside_with_a_seed_starts_again_at_every_call():
    f = fg.replay(lambda x: x * fnp.random.default_rng(4).normal(size=3))
    runs = [f(np.ones(3)) for _ in range(3)]
    for r in runs:
        assert (r == np.random.default_rng(4).normal(size=3)).all()
    g = fg.replay(lambda x: x * fnp.random.RandomState(4).randn(3))
    for _ in range(2):
        assert (g(np.ones(3)) == np.random.RandomState(4).randn(3)).all()
    assert f.stats.hits == 2 and g.stats.hits == 1


def test_an_unseeded_generator_made_inside_takes_fresh_entropy_at_every_call():
    f = fg.replay(lambda x: x * fnp.random.default_rng().random(4))
    runs = [f(np.ones(4)) for _ in range(3)]
    assert f.stats.hits == 2
    assert len({r.tobytes() for r in runs}) == 3


def test_the_legacy_module_functions_replay_with_seed_inside_and_outside():
    f = fg.replay(lambda x: (fnp.random.seed(2), x + fnp.random.randn(3))[1])
    for _ in range(2):
        assert (f(np.zeros(3)) == np.random.RandomState(2).randn(3)).all()
    g = fg.replay(lambda x: x + fnp.random.normal(size=3) + fnp.random.rand())
    fnp.random.seed(8)
    got = [g(np.zeros(3)) for _ in range(3)]
    ref = np.random.RandomState(8)
    for r in got:
        assert (r == np.zeros(3) + ref.normal(size=3) + ref.rand()).all()


@pytest.mark.parametrize("compile_after", [None, 0])
@pytest.mark.parametrize("legacy", [False, True], ids=["Generator", "RandomState"])
def test_a_branch_on_a_draw_draws_what_eager_draws(legacy, compile_after):
    # A guard on a draw fails at about every other call: the plan tried first has drawn
    # already, and the plan run instead must draw the same numbers (the generator is put
    # back), or the stream would run ahead of eager's.
    def make():
        rng = fnp.random.RandomState(0) if legacy else fnp.random.default_rng(0)

        def f(x):
            u = rng.normal() if legacy else rng.random()
            v = rng.random_sample(2) if legacy else rng.random(2)
            return x * u + v if u < 0.5 else x - u + v

        return f

    eager, replayed = make(), fg.replay(make(), compile_after=compile_after)
    for _ in range(12):
        assert (eager(X1[:2]) == replayed(X1[:2])).all()
    assert replayed.stats.traces == 2 and replayed.stats.hits == 10


def test_threads_sharing_a_generator_use_each_number_once():
    # Four threads replay one function branching on a draw from a shared generator: every
    # number of the stream is used by exactly one call (a failed guard gives its draws back).
    rng = fnp.random.default_rng(5)

    def g(x):
        u = rng.random()
        return x + u if u < 0.5 else x - (-u)

    f = fg.replay(g)
    results: list = []

    def work():
        for _ in range(25):
            results.append(float(f(np.float64(0.0))))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == sorted(np.random.default_rng(5).random(100).tolist())


def test_a_dead_draw_still_advances_the_generator():
    rng = fnp.random.default_rng(0)

    def f(x):
        rng.random(5)  # unused, but the stream moves on, as it does eagerly
        return x * rng.random()

    replayed = fg.replay(f)
    got = [replayed(np.float64(1.0)) for _ in range(3)]
    ref = np.random.default_rng(0)
    for r in got:
        ref.random(5)
        assert r == ref.random()


def test_replayed_gradient_of_a_reparameterised_draw():
    def loss(mu, log_s):
        eps_rng = holder[0]
        return fnp.sum(eps_rng.normal(mu, fnp.exp(log_s), size=3) ** 2)

    holder = [fnp.random.default_rng(1)]
    eager = [fg.grad(loss, argnums=(0, 1))(0.2, -0.1) for _ in range(3)]
    holder[0] = fnp.random.default_rng(1)
    f = fg.replay(fg.grad(loss, argnums=(0, 1)))
    for (a, b), (c, d) in zip(eager, (f(0.2, -0.1) for _ in range(3)), strict=True):
        assert a == c and b == d
    assert f.stats.hits == 2


def test_a_shuffle_of_an_argument_under_trace_is_refused():
    rng = fnp.random.default_rng(0)
    with pytest.raises(fg.ReplayError, match="in place"):
        fg.replay(lambda x: (rng.shuffle(x), x * 1)[1])(np.arange(4.0))
    def shuffled_copy(x):
        y = x * 1
        rng.shuffle(y)
        return y

    f = fg.replay(shuffled_copy)
    out = [f(np.arange(4.0)) for _ in range(2)]
    ref = np.random.default_rng(0)
    for o in out:
        y = np.arange(4.0)
        ref.shuffle(y)
        assert (o == y).all()


def test_reading_a_generators_state_under_trace_is_refused():
    rng = fnp.random.RandomState(0)
    with pytest.raises(fg.ReplayError, match="get_state"):
        fg.replay(lambda x: x * rng.get_state()[2])(np.ones(1))
    bits = fnp.random.PCG64(0)
    with pytest.raises(fg.ReplayError, match="default_rng"):
        fg.replay(lambda x: x * fnp.random.Generator(bits).random())(np.ones(1))
    f = fg.replay(lambda x: x * fnp.random.Generator(bits).random(), fallback=True)
    a, b = f(np.ones(1)), f(np.ones(1))
    assert a != b and f.stats.eager == 1


# -- devices -------------------------------------------------------------------------


def test_draws_on_the_standin_device_are_numpys_numbers_moved(standin):
    loc = standin.put([0.5, 1.0, -1.0])
    z = fnp.random.default_rng(3).normal(loc, 2.0)
    assert fg.device_of(z) == standin.DEVICE
    assert (standin.get(z) == np.random.default_rng(3).normal([0.5, 1.0, -1.0], 2.0)).all()
    u = fnp.random.default_rng(3).random((2, 2), like=loc)
    assert fg.device_of(u) == standin.DEVICE
    assert (standin.get(u) == np.random.default_rng(3).random((2, 2))).all()
    k = fnp.random.default_rng(3).poisson(standin.put([1.0, 4.0]))  # no rule: host and back
    assert fg.device_of(k) == standin.DEVICE
    assert (standin.get(k) == np.random.default_rng(3).poisson([1.0, 4.0])).all()
    g = fg.grad(lambda m: fnp.sum(fnp.random.default_rng(3).normal(m, 2.0)))(loc)
    assert fg.device_of(g) == standin.DEVICE and (standin.get(g) == 1).all()
    cov = standin.put([[2.0, 0.3], [0.3, 1.0]])
    mean = standin.put([0.5, -1.0])
    m, _ = fg.vjp(lambda m: fnp.random.default_rng(3).multivariate_normal(m, cov, size=2), mean)
    assert fg.device_of(m) == standin.DEVICE
    expected = np.random.default_rng(3).multivariate_normal([0.5, -1.0], standin.get(cov), 2)
    assert (standin.get(m) == expected).all()
    s, _ = fg.vjp(lambda s: fnp.random.default_rng(3).gamma(standin.put([2.0, 3.0]), s), loc[:2])
    assert (standin.get(s) == np.random.default_rng(3).gamma([2.0, 3.0], [0.5, 1.0])).all()
    f = fg.replay(lambda m: m * fnp.random.default_rng(3).random(3, like=m))
    for _ in range(2):
        assert (standin.get(f(loc)) == standin.get(loc) * np.random.default_rng(3).random(3)).all()


def test_draws_with_dask_parameters_are_numpys_numbers():
    da = pytest.importorskip("dask.array")
    loc = da.from_array(np.array([0.5, 1.0, -1.0, 2.0]), chunks=2)
    z = fnp.random.default_rng(3).normal(loc, 2.0)
    assert (np.asarray(z) == np.random.default_rng(3).normal(np.asarray(loc), 2.0)).all()
    g = fg.grad(lambda m: fnp.sum(fnp.random.default_rng(3).normal(m, 2.0)))(loc)
    assert (np.asarray(g) == 1).all()


# -- every other generator under a trace: refused, whoever holds it ------------------------

X1 = np.ones(3)
NP_GEN = np.random.default_rng(0)
PY_GEN = random.Random(0)


def _held_in_dict():
    box = {"rng": np.random.default_rng(0)}
    return lambda x: x * box["rng"].random(3)


class _Holder:
    def __init__(self):
        self.rng = np.random.RandomState(0)

    def draw(self, x):
        return x * self.rng.randn(3)


def _pre_bound():
    from numpy.random import randn

    return lambda x: x * randn(3)


def _pre_bound_python():
    from random import gauss
    from random import random as draw

    return lambda x: x * draw(), lambda x: x * gauss(0.0, 1.0)


REFUSED = {
    "numpy global": (lambda x: x * np.random.randn(3), "numpy.random.randn"),
    "numpy global seed": (lambda x: (np.random.seed(0), x * 1)[1], "numpy.random.seed"),
    "a closed-over NumPy Generator": (lambda x: x * NP_GEN.random(3), "a NumPy Generator"),
    "a Generator in a closed-over dict": (_held_in_dict(), "a NumPy Generator"),
    "self.rng, a NumPy RandomState": (_Holder().draw, "a NumPy RandomState"),
    "an argument": ("arg", "a NumPy Generator"),
    "a name bound before": (_pre_bound(), "numpy.random"),
    "a Python name bound before": (_pre_bound_python()[0], "Python's random module"),
    "a Python method bound before": (_pre_bound_python()[1], "Python's random module"),
    "an unseeded default_rng inside": (lambda x: x * np.random.default_rng().random(3),
                                       "numpy.random.default_rng"),
    "an unseeded RandomState inside": (lambda x: x * np.random.RandomState().rand(3),
                                       "without a seed"),
    "secrets": (lambda x: x * secrets.randbelow(5), "entropy"),
    "random.SystemRandom": (lambda x: x * random.SystemRandom().random(), "SystemRandom"),
    "an unseeded Generator(PCG64()) inside": (
        lambda x: x * np.random.Generator(np.random.PCG64()).random(3), "without a seed"),
    "Python's random": (lambda x: x * random.random(), "random.random"),
    "Python's random.gauss": (lambda x: x * random.gauss(0, 1), "Python's random"),
    "a random.Random instance": (lambda x: x * PY_GEN.random(), "a Random"),
    "a random.Random made inside": (lambda x: x * random.Random(3).random(), "a Random"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_other_generators_under_a_trace_are_refused_by_name(case):
    fun, name = REFUSED[case]
    if fun == "arg":
        f, args = fg.replay(lambda x, g: x * g.random(3)), (X1, np.random.default_rng(0))
    else:
        f, args = fg.replay(fun), (X1,)
    with pytest.raises(fg.ReplayError, match="fnp.random") as info:
        f(*args)
    assert name in str(info.value)


HELD = ["a closed-over NumPy Generator", "a Generator in a closed-over dict",
        "self.rng, a NumPy RandomState", "a name bound before", "a Python name bound before",
        "a random.Random instance"]
WRAPPERS = {
    "value_and_grad": lambda f: fg.value_and_grad(lambda x: fnp.sum(f(x))),
    "grad of grad": lambda f: fg.grad(lambda y: fnp.sum(fg.grad(lambda x: fnp.sum(f(x)))(y))),
    "jacobian": lambda f: fg.jacobian(f),
}


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
@pytest.mark.parametrize("case", HELD)
def test_a_generator_held_by_a_differentiated_function_is_refused(case, wrapper):
    # The watch walks through funcgrad's wrappers (whose __module__ functools.wraps makes
    # the user's) to the function they differentiate, and finds what it holds.
    fun, name = REFUSED[case]
    with pytest.raises(fg.ReplayError, match="fnp.random") as info:
        fg.replay(WRAPPERS[wrapper](fun))(X1)
    assert name in str(info.value)


def test_temporary_file_names_are_no_draws(tmp_path):
    def f(x):
        with tempfile.NamedTemporaryFile(dir=tmp_path):  # tempfile's own Random
            return x * 2

    assert (fg.replay(f)(X1) == 2).all()


def test_with_fallback_they_run_eagerly_instead():
    f = fg.replay(lambda x: x * np.random.randn(3), fallback=True)
    a, b = f(X1), f(X1)
    assert not (a == b).any() and f.stats.eager == 1 and f.stats.hits == 0


def test_draws_outside_traces_are_untouched():
    before = np.random.randn
    fg.replay(lambda x: x * 2)(X1)
    assert np.random.randn == before and random.random == random._inst.random
    assert "random" not in random.Random.__dict__  # the C method shows again
    assert random.Random.seed.__module__ == "random"
    for module in (np.random, np.random.mtrand, random, secrets):  # their class put back
        assert type(module) is types.ModuleType


MODULE_DRAWS = {  # every way a module's drawing function is read while a trace runs
    "attribute": lambda x: x * np.random.randn(3),
    "mtrand": lambda x: x * np.random.mtrand.randn(3),
    "getattr": lambda x, name="randn": x * getattr(np.random, name)(3),
    "imported inside": lambda x: x * __import__("numpy.random").random.rand(3),
    "from-import inside": lambda x: x * _from_import_inside(),
    "python random.uniform": lambda x: x * random.uniform(0.0, 1.0),
    "secrets.choice": lambda x: x * secrets.choice([1.0, 2.0]),
}


def _from_import_inside():
    from numpy.random import standard_normal

    return standard_normal(3)


@pytest.mark.parametrize("case", sorted(MODULE_DRAWS))
def test_a_modules_drawing_function_read_any_way_under_a_trace_is_refused(case):
    with pytest.raises(fg.ReplayError, match="fnp.random"):
        fg.replay(MODULE_DRAWS[case])(X1)
    assert type(np.random) is types.ModuleType


def test_a_module_function_mocked_before_the_trace_is_watched_too(monkeypatch):
    monkeypatch.setattr(np.random, "randn", lambda *shape: np.ones(shape))
    with pytest.raises(fg.ReplayError, match="numpy.random.randn"):
        fg.replay(lambda x: x * np.random.randn(3))(X1)
    assert (np.random.randn(2) == 1).all()  # the mock itself, outside


def test_a_trace_ending_in_another_thread_leaves_the_watch_of_this_one():
    inside, other_done, errors = threading.Event(), threading.Event(), []

    def slow(x):
        inside.set()
        other_done.wait(10)
        return x * np.random.randn(3)  # drawn after the other trace ended

    def run():
        try:
            fg.replay(slow)(X1)
        except fg.ReplayError as e:
            errors.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    inside.wait(10)
    fg.replay(lambda x: x * 2)(X1)  # a whole trace in this thread meanwhile
    other_done.set()
    thread.join()
    assert errors and "numpy.random.randn" in str(errors[0])
    assert type(np.random) is types.ModuleType


def test_another_thread_drawing_from_numpys_global_generator_is_no_draw_of_the_trace():
    stop = threading.Event()

    def loader():
        while not stop.is_set():
            np.random.randn(16)
            random.random()

    thread = threading.Thread(target=loader)
    thread.start()
    try:
        rng = fnp.random.default_rng(0)
        for k in range(10):  # each a new trace, while the loader draws
            f = fg.replay(fg.value_and_grad(
                lambda w, k=k: fnp.sum(fnp.tanh(w * k) * rng.random(3))))
            f(np.ones(3))
        # ... and a real draw of the traced function is still seen
        for k in range(3):
            with pytest.raises(fg.ReplayError, match="numpy.random.randn"):
                fg.replay(lambda x, k=k: x * k * np.random.randn(3))(X1)
    finally:
        stop.set()
        thread.join()


# -- differential: random programs of draws, replayed against eager ----------------------

OPS = {
    "normal": lambda r, x: r.normal(x, 2.0, size=3),
    "normal_const": lambda r, x: x * r.normal(1.0, 0.5, size=3),
    "uniform": lambda r, x: r.uniform(x, x + 1.0),
    "exponential": lambda r, x: r.exponential(fnp.exp(x)),
    "laplace": lambda r, x: r.laplace(x, 1.5),
    "integers": lambda r, x: x * r.integers(0, 3, size=3),
    "choice": lambda r, x: r.choice(x, 3),
    "permutation": lambda r, x: r.permutation(x),
    "dead": lambda r, x: (r.random(2), x)[1],
    "scalar": lambda r, x: x * r.standard_normal(),
    "branch": lambda r, x: x * 2 if r.random() < 0.5 else x - 1,
}


@settings(max_examples=25, deadline=None)
@given(ops=st.lists(st.sampled_from(sorted(OPS)), min_size=1, max_size=5),
       seed=st.integers(0, 2**32 - 1), inside=st.booleans())
def test_replayed_programs_of_draws_are_eager_bit_for_bit(ops, seed, inside):
    def make():
        held = fnp.random.default_rng(seed)

        def loss(x):
            rng = fnp.random.default_rng(seed) if inside else held
            total = 0.0
            for op in ops:
                total = total + fnp.sum(OPS[op](rng, x) * np.array([1.0, -2.0, 0.5]))
            return total

        return fg.value_and_grad(loss)

    x = np.array([0.3, -0.7, 1.1])
    eager, replayed = make(), fg.replay(make())
    for _ in range(4):
        (v1, g1), (v2, g2) = eager(x), replayed(x)
        assert v1 == v2 and (g1 == g2).all()
    if "branch" not in ops:  # a branch on a draw traces once per way it goes
        assert replayed.stats.hits == 3
