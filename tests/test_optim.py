"""funcgrad.optim against the recurrences of optax's formulas, written out here in NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import optim

RNG = np.random.default_rng(0)
PARAMS = {"w": RNG.standard_normal((3, 2)), "b": (RNG.standard_normal(2), np.array(0.5))}
GRADS = [fg.tree.tree_map(lambda p: RNG.standard_normal(np.shape(p)), PARAMS) for _ in range(6)]


def leaves(tree):
    return fg.tree.flatten(tree)[0]


def reference(name, lr, **kw):
    """The update of each step, leaf by leaf, by the textbook recurrences."""
    out = []
    for k in range(len(leaves(PARAMS))):
        gs = [leaves(g)[k] for g in GRADS]
        state = [np.zeros_like(gs[0]), np.zeros_like(gs[0])]
        ups = []
        for t, g in enumerate(gs, start=1):
            rate = lr(t - 1) if callable(lr) else lr
            if name == "sgd":
                ups.append(-rate * g)
            elif name == "momentum":
                state[0] = g + kw.get("mass", 0.9) * state[0]
                ups.append(-rate * state[0])
            elif name == "adam":
                b1, b2, eps = kw.get("b1", 0.9), kw.get("b2", 0.999), kw.get("eps", 1e-8)
                state[0] = b1 * state[0] + (1 - b1) * g
                state[1] = b2 * state[1] + (1 - b2) * (g * np.conj(g)).real
                m_hat, v_hat = state[0] / (1 - b1**t), state[1] / (1 - b2**t)
                ups.append(-rate * m_hat / (np.sqrt(v_hat) + eps))
            elif name == "rmsprop":
                decay, eps = kw.get("decay", 0.9), kw.get("eps", 1e-8)
                state[1] = decay * state[1] + (1 - decay) * (g * np.conj(g)).real
                ups.append(-rate * g / np.sqrt(state[1] + eps))
        out.append(ups)
    return out


CASES = [
    ("sgd", 0.1, {}),
    ("momentum", 0.05, {}),
    ("momentum", 0.05, {"mass": 0.5}),
    ("adam", 0.01, {}),
    ("adam", 0.02, {"b1": 0.5, "b2": 0.9, "eps": 1e-3}),
    ("rmsprop", 0.01, {}),
    ("rmsprop", 0.03, {"decay": 0.5, "eps": 1e-2}),
    ("adam", lambda count: 0.1 / (1 + count), {}),
    ("sgd", lambda count: 0.5**count, {}),
]


@pytest.mark.parametrize("name, lr, kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_updates_follow_the_recurrences(name, lr, kw):
    opt = getattr(optim, name)(lr, **kw)
    want = reference(name, lr, **kw)
    state = opt.init(PARAMS)
    first = state
    for t, g in enumerate(GRADS):
        updates, new = opt.update(g, state, PARAMS)
        assert fg.tree.flatten(updates)[1] == fg.tree.flatten(PARAMS)[1]
        for k, u in enumerate(leaves(updates)):
            np.testing.assert_allclose(u, want[k][t], rtol=1e-12, atol=1e-15)
        assert new.count == state.count + 1
        state = new
    assert first.count == 0  # the first state is unchanged: nothing is updated in place
    assert all(np.all(leaf == 0) for leaf in leaves(tuple(first[1:])))


@pytest.mark.parametrize("name, lr, kw", [c for c in CASES if c[0] in ("adam", "rmsprop")])
def test_complex_gradients_take_the_squared_modulus_as_optax_does(name, lr, kw, monkeypatch):
    # optax's second moment is |g|^2 = g conj(g), real; g^2 would turn the step's phase
    rng = np.random.default_rng(3)
    params = {"z": np.zeros(3, complex)}
    grads = [{"z": rng.normal(size=3) + 1j * rng.normal(size=3)} for _ in range(4)]
    monkeypatch.setitem(globals(), "PARAMS", params)
    monkeypatch.setitem(globals(), "GRADS", grads)
    want = reference(name, lr, **kw)[0]
    opt = getattr(optim, name)(lr, **kw)
    state = opt.init(params)
    for t, g in enumerate(grads):
        updates, state = opt.update(g, state, params)
        np.testing.assert_allclose(updates["z"], want[t], rtol=1e-12, atol=1e-15)
    # the first Adam step is -lr * g / |g| (phase kept): -0.1j for g = 1j, not -0.1
    first, _ = optim.adam(0.1).update(np.array([1j]), optim.adam(0.1).init(np.array([0j])))
    np.testing.assert_allclose(first, [-0.1j], atol=1e-9)


def test_apply_updates_adds_and_keeps_dtypes():
    params = {"a": np.ones(2, "float32"), "b": 1.0}
    new = optim.apply_updates(params, {"a": np.array([0.25, -1.0]), "b": 0.5})
    assert new["a"].dtype == np.float32 and new["b"] == 1.5
    np.testing.assert_array_equal(new["a"], [1.25, 0.0])
    np.testing.assert_array_equal(params["a"], [1.0, 1.0])  # nothing changed in place


def test_adam_trains_a_regression_to_its_closed_form():
    x = RNG.standard_normal((50, 3))
    y = x @ np.array([1.0, -2.0, 0.5]) + 0.3
    exact = np.linalg.lstsq(np.c_[x, np.ones(50)], y, rcond=None)[0]

    def loss(p):
        return fnp.mean((x @ p["w"] + p["b"] - y) ** 2)

    params = {"w": np.zeros(3), "b": np.array(0.0)}
    opt = optim.adam(0.05)
    state = opt.init(params)
    for _ in range(1500):
        updates, state = opt.update(fg.grad(loss)(params), state, params)
        params = optim.apply_updates(params, updates)
    np.testing.assert_allclose(np.r_[params["w"], params["b"]], exact, atol=1e-6)


@pytest.mark.parametrize("name", ["sgd", "momentum", "adam", "rmsprop"])
def test_a_training_run_is_differentiable(name):
    # The loss after three steps, as a function of the starting point: the optimizer's
    # own arithmetic is differentiated (to second order, against finite differences).
    def after_three(w0):
        opt = getattr(optim, name)(0.1)
        params, state = {"w": w0}, opt.init({"w": w0})
        for _ in range(3):
            g = fg.grad(lambda p: fnp.sum(fnp.sin(p["w"]) * p["w"]))(params)
            updates, state = opt.update(g, state)
            params = optim.apply_updates(params, updates)
        return fnp.sum(params["w"] ** 2)

    fg.check_grads(after_three, (np.array([0.3, -0.7]),), order=2, modes=("rev",))


def test_bad_hyperparameters_are_named():
    with pytest.raises(fg.FuncgradValueError, match="optim.adam: b1"):
        optim.adam(0.1, b1=1.0)
    with pytest.raises(fg.FuncgradValueError, match="optim.momentum: mass"):
        optim.momentum(0.1, mass=-0.1)
    with pytest.raises(fg.FuncgradTypeError, match="optim.sgd: learning_rate"):
        optim.sgd("fast")
