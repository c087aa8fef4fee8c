"""One registry of array types: a type registered by one ``register_namespace`` call is
seen by dispatch (its namespace and device) and by bind (its runner), and unregistered
from both at once.  The runners' indexes (``RUNNERS``, ``BATCHED``) and ``WEAK_TYPES``
are views of that registry, never registries of their own."""

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import arrays, backend
from funcgrad.errors import DeviceMismatchError, FuncgradTypeError


class Counted(np.ndarray):
    """An array type whose arrays run primitives themselves (as fg.replay's do)."""


class Other(np.ndarray):
    """A second such type, for the flags."""


class _Like:
    """A namespace of its own (NumPy's functions, whose arrays come out as ``Counted``),
    so that dispatch tells it from NumPy."""

    def __getattr__(self, name):
        fun = getattr(np, name)
        if not callable(fun) or isinstance(fun, type):
            return fun

        def call(*args, **kwargs):
            out = fun(*args, **kwargs)
            return out.view(Counted) if isinstance(out, np.ndarray) else out

        return call


XP = _Like()


def _raw(a):
    return a.view(np.ndarray) if isinstance(a, np.ndarray) else a


@pytest.fixture
def counted():
    """``Counted`` registered once, with namespace, device and runner; the runner's
    calls (primitive names) listed."""
    calls = []

    def run(prim, args, kwargs):
        calls.append(prim.name)
        out = prim.impl(*[_raw(a) for a in args], **kwargs)
        return np.asarray(out).view(Counted)

    backend.register_namespace(Counted, XP, lambda a: "counted:0", run=run)
    try:
        yield calls
    finally:
        backend.unregister_namespace(Counted)


def test_one_registration_gives_dispatch_and_runner(counted):
    x = np.array([0.1, 0.5, 0.9]).view(Counted)
    assert backend.namespace(x) is XP and fg.device_of(x) == "counted:0"
    with pytest.raises(DeviceMismatchError, match="counted:0"):  # not absorbs_numpy
        backend.namespace(x, np.ones(3))
    y = fnp.sin(x)                                  # a raw argument: bind, then the runner
    assert type(y) is Counted and counted == ["sin"]
    np.testing.assert_allclose(_raw(y), np.sin(_raw(x)))
    # a Node holding one: the unary fast path's runner too, forward and backward
    g = fg.grad(lambda v: fnp.sum(fnp.sin(v)))(x)
    np.testing.assert_allclose(_raw(g), np.cos(_raw(x)))
    assert {"sin", "sum", "cos"} <= set(counted), counted
    assert arrays.RUNNERS[Counted] is backend.lookup(Counted).run


def test_unregistering_drops_namespace_and_runner_together(counted):
    x = np.array([0.3]).view(Counted)
    fnp.exp(x)
    backend.unregister_namespace(Counted)
    assert backend.lookup(Counted).xp is np and Counted not in arrays.RUNNERS  # ndarray's
    np.testing.assert_allclose(_raw(fnp.exp(x)), np.exp(0.3))   # no runner any more
    assert counted == ["exp"]


def test_reregistering_without_a_runner_forgets_it(counted):
    backend.register_namespace(Counted, np)
    x = np.array([0.2]).view(Counted)
    fnp.cos(x)
    assert counted == [] and Counted not in arrays.RUNNERS
    assert backend.lookup(Counted).run is None


def test_batched_and_weak_land_in_their_indexes():
    def run(prim, args, kwargs):
        return "batched"

    backend.register_namespace(Other, np, run=run, batched=True)
    try:
        assert arrays.BATCHED[Other] is run and Other not in arrays.RUNNERS
        backend.register_namespace(Other, np, run=run)
        assert arrays.RUNNERS[Other] is run and Other not in arrays.BATCHED
        backend.register_namespace(Other, XP)
        two = np.array(2.0).view(Other)
        with pytest.raises(DeviceMismatchError):      # an array of XP beside NumPy's
            backend.namespace(two, np.ones(2))
        backend.register_namespace(Other, XP, weak=True)
        assert Other in backend.WEAK_TYPES and Other not in arrays.RUNNERS
        assert backend.namespace(two, np.ones(2)) is XP   # a number: neutral beside it
    finally:
        backend.unregister_namespace(Other)
    assert Other not in backend.WEAK_TYPES and Other not in arrays.BATCHED


def test_a_runner_needs_a_registered_type():
    with pytest.raises(FuncgradTypeError, match="Other.*no namespace"):
        backend.register_runner(Other, lambda prim, args, kwargs: None)
    assert Other not in arrays.RUNNERS and backend.lookup(Other).run is None


def test_the_indexes_are_the_registrys_after_replay_and_vmap():
    # fg.replay and fg.vmap register their own array types: each runner the hot paths
    # read is the one on that type's registry entry, and every entry's runner is indexed.
    f = fg.replay(lambda v, c: fnp.sum(fnp.sin(v) * c))
    np.testing.assert_allclose(f(np.ones(3), 2.0), 3 * 2 * np.sin(1.0))
    np.testing.assert_allclose(fg.vmap(fnp.sin)(np.ones((2, 3))), np.sin(np.ones((2, 3))))
    assert arrays.RUNNERS is backend.RUNNERS and arrays.BATCHED is backend.BATCHED
    assert arrays.RUNNERS and arrays.BATCHED
    for index, batched in ((arrays.RUNNERS, False), (arrays.BATCHED, True)):
        for t, run in index.items():
            entry = backend.lookup(t)
            assert entry.run is run and entry.batched is batched, t
    for t, entry in backend._REGISTRY.items():
        if entry.run is not None:
            assert (arrays.BATCHED if entry.batched else arrays.RUNNERS)[t] is entry.run, t
    weak = {t for t, entry in backend._REGISTRY.items() if entry.weak}
    assert weak == backend.WEAK_TYPES and weak       # fg.replay's traced floats among them
