"""``fg.nn``: stable at ±1000, right values, consistent label forms, right gradients."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

nn = fg.nn

EXTREME = np.array([-1000.0, -30.0, -1.0, 0.0, 1.0, 30.0, 1000.0])
DTYPES = ["float64", "float32", "float16"]


def _lse(x, axis):
    return np.logaddexp.reduce(x, axis=axis, keepdims=True)


# float64 references, written differently from the library's compositions
REFERENCE = {
    "sigmoid": lambda x: np.exp(-np.logaddexp(0.0, -x)),
    "softplus": lambda x: np.logaddexp(0.0, x),
    "relu": lambda x: np.where(x > 0, x, 0.0),
    "logsumexp": lambda x: np.logaddexp.reduce(x.ravel()),  # over all axes by default
    "log_softmax": lambda x: x - _lse(x, -1),
    "softmax": lambda x: np.exp(x - _lse(x, -1)),
}


def _strict():
    """No overflow, underflow-to-NaN or division warnings may escape."""
    return np.errstate(over="raise", invalid="raise", divide="raise")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_extreme_inputs_give_finite_correct_values_and_gradients(name, dtype):
    fun = getattr(nn, name)
    x = np.stack([EXTREME, -EXTREME]).astype(dtype)
    with _strict():
        out = fun(x)
        g = fg.grad(lambda x: fnp.sum(fun(x) * np.linspace(0.5, 1.5, out.size).reshape(
            np.shape(out)).astype(dtype)))(x)
        h = fg.hvp(lambda x: fnp.sum(fun(x)), (x,), (np.ones_like(x),))
    assert out.dtype == np.dtype(dtype) and g.dtype == np.dtype(dtype)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(g))
    assert np.all(np.isfinite(fg.value_of(h[1] if isinstance(h, tuple) else h)))
    tol = {"float64": 1e-12, "float32": 1e-5, "float16": 2e-3}[dtype]
    expected = REFERENCE[name](x.astype(np.float64))
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=tol, atol=tol)


def test_extreme_gradients_have_the_right_values():
    x = np.array([-1000.0, 0.0, 1000.0])
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(nn.sigmoid(x)))(x), [0.0, 0.25, 0.0])
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(nn.softplus(x)))(x), [0.0, 0.5, 1.0])
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(nn.relu(x)))(x), [0.0, 0.0, 1.0])
    np.testing.assert_allclose(fg.grad(nn.logsumexp)(x), [0.0, 0.0, 1.0])
    # the tails keep full relative precision
    tail = np.exp(-30.0) / (1 + np.exp(-30.0))
    assert nn.sigmoid(np.array(-30.0)) == pytest.approx(tail, rel=1e-14)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_sums_to_one_and_matches_log_softmax(axis):
    x = np.random.default_rng(0).standard_normal((4, 5, 3)) * 300
    with _strict():
        p = nn.softmax(x, axis=axis)
        logp = nn.log_softmax(x, axis=axis)
    np.testing.assert_allclose(p.sum(axis=axis), 1.0, rtol=1e-12)
    assert np.all(p >= 0)
    np.testing.assert_allclose(np.exp(logp), p, atol=1e-12)
    np.testing.assert_allclose(nn.logsumexp(x, axis=axis), _lse(x, axis).squeeze(axis))


def test_logsumexp_of_minus_infinity_and_of_nothing():
    with np.errstate(divide="ignore"):  # log(0), as in NumPy
        assert nn.logsumexp(np.array([-np.inf, -np.inf])) == -np.inf
        assert nn.logsumexp(np.zeros(0)) == -np.inf
    assert nn.logsumexp(np.zeros((3, 0)), axis=0).shape == (0,)


def _one_hot(labels, n):
    return np.eye(n)[labels]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cross_entropy_integer_labels_equal_one_hot_labels(dtype):
    rng = np.random.default_rng(1)
    logits = (rng.standard_normal((6, 4)) * 3).astype(dtype)
    labels = rng.integers(0, 4, 6)
    onehot = _one_hot(labels, 4).astype(dtype)
    loss_i, g_i = fg.value_and_grad(lambda z: nn.softmax_cross_entropy(z, labels))(logits)
    loss_p, g_p = fg.value_and_grad(lambda z: nn.softmax_cross_entropy(z, onehot))(logits)
    assert loss_i.dtype == np.dtype(dtype) and g_i.dtype == np.dtype(dtype)
    np.testing.assert_allclose(loss_i, loss_p, rtol=1e-6)
    np.testing.assert_allclose(g_i, g_p, rtol=1e-6)
    # the mean over the batch of -log p[label]; its gradient is (softmax - onehot) / batch
    z = logits.astype(np.float64)
    logp = z - _lse(z, -1)
    np.testing.assert_allclose(loss_i, -logp[np.arange(6), labels].mean(), rtol=1e-5)
    np.testing.assert_allclose(g_i, (np.exp(logp) - _one_hot(labels, 4)) / 6, rtol=1e-4, atol=1e-6)


def test_cross_entropy_class_axis_and_extreme_logits():
    # shape (1, 3, 2): the classes are on axis 1
    logits = np.array([[[1000.0, -1000.0], [0.0, 0.0], [-1000.0, 1000.0]]])
    labels = np.array([[0, 2]])
    with _strict():
        loss, g = fg.value_and_grad(lambda z: nn.softmax_cross_entropy(z, labels, axis=1))(logits)
    assert np.isfinite(loss) and np.all(np.isfinite(g))
    moved = np.moveaxis(logits, 1, -1)
    expected = nn.softmax_cross_entropy(moved, labels)
    np.testing.assert_allclose(loss, expected)
    assert loss == pytest.approx(0.0, abs=1e-12)


def test_cross_entropy_soft_labels_are_differentiable():
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((3, 4))
    probs = nn.softmax(rng.standard_normal((3, 4)))
    fg.check_grads(nn.softmax_cross_entropy, (logits, probs), order=2)
    g = fg.grad(nn.softmax_cross_entropy, argnums=1)(logits, probs)
    np.testing.assert_allclose(g, -nn.log_softmax(logits) / 3)


def test_cross_entropy_rejects_bad_labels():
    logits = np.zeros((2, 3))
    with pytest.raises(ValueError, match="labels"):
        nn.softmax_cross_entropy(logits, np.array([0, 3]))
    with pytest.raises(ValueError, match="shape"):
        nn.softmax_cross_entropy(logits, np.array([0, 1, 2]))
    with pytest.raises(TypeError, match="integer"):
        nn.softmax_cross_entropy(logits, np.array([0.0, 1.0]))
    with pytest.raises(fg.FuncgradError):
        nn.softmax_cross_entropy(logits, np.zeros((3, 2)))


@pytest.mark.parametrize("name", ["sigmoid", "softplus", "logsumexp", "log_softmax", "softmax"])
def test_gradients_match_finite_differences(name):
    fun = getattr(nn, name)
    x = np.random.default_rng(3).standard_normal((3, 4)) * 3
    fg.check_grads(fun, (x,), order=2)
    fg.check_grads(lambda x: fun(x.astype("float32")), (x.astype("float32"),), order=2)


def test_relu_gradient_is_zero_at_zero_and_keeps_integers():
    assert fg.grad(nn.relu)(0.0) == 0.0
    out = nn.relu(np.array([-2, 3]))
    assert out.dtype.kind == "i" and list(out) == [0, 3]
