"""API.md §7: devices.

``fg.device_of`` and ``fg.to_device`` on the CPU always; with CuPy and a GPU,
gradients computed on the GPU equal the CPU's, stay on the GPU, and mixing
devices raises ``fg.DeviceMismatchError``.  Without them the GPU cases skip.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _gpu_available() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - no CuPy, no driver, no device
        return False


GPU = _gpu_available()
NO_GPU = "CuPy with a GPU is not available"
needs_gpu = pytest.mark.skipif(not GPU, reason=NO_GPU)
DEVICES = ["cpu", pytest.param("cuda:0", marks=needs_gpu)]


def _host(a):
    """A NumPy copy of a NumPy or CuPy array."""
    return np.asarray(fg.to_device(a, "cpu"))


def _array_type(device):
    if device == "cpu":
        return np.ndarray
    import cupy

    return cupy.ndarray


# --- the CPU ----------------------------------------------------------------------

@pytest.mark.parametrize("value", [np.ones(3), np.zeros((2, 2), np.float32), np.float64(1.0),
                                   np.array(2.0), 1.5, 3])
def test_device_of_cpu_values(value):
    assert fg.device_of(value) == "cpu"


def test_device_of_a_node_and_its_gradient():
    x = fg.require_grad(np.ones(3))
    assert fg.device_of(x) == "cpu" and x.device == "cpu"
    assert fg.device_of(fg.grad(lambda v: (v * v).sum())(np.ones(3))) == "cpu"


def test_to_device_cpu_round_trip():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    b = fg.to_device(a, "cpu")
    assert type(b) is np.ndarray and b.dtype == np.float32
    np.testing.assert_array_equal(b, a)
    np.testing.assert_array_equal(fg.to_device(fg.require_grad(a), "cpu"), a)


@pytest.mark.parametrize("device", ["tpu", "gpu:0", ""])
def test_to_device_unknown_device_is_a_value_error_naming_it(device):
    with pytest.raises(ValueError) as info:
        fg.to_device(np.ones(2), device)
    assert repr(device) in str(info.value) or device in str(info.value)
    assert isinstance(info.value, fg.FuncgradError)


@pytest.mark.skipif(GPU, reason="only without a GPU")
def test_to_cuda_without_a_gpu_is_a_value_error():
    with pytest.raises(ValueError, match="cuda:0"):
        fg.to_device(np.ones(2), "cuda:0")


# --- every device --------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_to_device_round_trip(device):
    a = np.linspace(-1.0, 1.0, 5)
    on = fg.to_device(a, device)
    assert type(on) is _array_type(device)
    assert fg.device_of(on) == device
    back = fg.to_device(on, "cpu")
    assert type(back) is np.ndarray
    np.testing.assert_array_equal(back, a)


def _loss(x, w):
    return (fnp.tanh(x @ w) * fnp.exp(x[:, :1])).sum() + (w ** 3).mean()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradient_on_device_equals_cpu_and_stays_there(device, dtype):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3)).astype(dtype)
    w = rng.standard_normal((3, 2)).astype(dtype)
    cpu_gx, cpu_gw = fg.grad(_loss, argnums=(0, 1))(x, w)
    gx, gw = fg.grad(_loss, argnums=(0, 1))(fg.to_device(x, device), fg.to_device(w, device))
    for got, ref in ((gx, cpu_gx), (gw, cpu_gw)):
        assert type(got) is _array_type(device)
        assert fg.device_of(got) == device
        assert got.dtype == dtype
        tol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(_host(got), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("device", DEVICES)
def test_second_order_and_forward_mode_on_device(device):
    x = np.array([0.3, -0.7, 1.1])
    f = lambda v: (fnp.sin(v) * v).sum()
    h_cpu = fg.hessian(f)(x)
    h = fg.hessian(f)(fg.to_device(x, device))
    assert type(h) is _array_type(device)
    np.testing.assert_allclose(_host(h), h_cpu, rtol=1e-12)
    np.testing.assert_allclose(h_cpu, np.diag(2 * np.cos(x) - x * np.sin(x)), rtol=1e-12)
    _, t = fg.jvp(fnp.exp, (fg.to_device(x, device),), (fg.to_device(np.ones(3), device),))
    assert type(t) is _array_type(device)
    np.testing.assert_allclose(_host(t), np.exp(x), rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_nodes_report_their_device(device):
    x = fg.require_grad(fg.to_device(np.ones(2), device))
    y = fnp.sin(x) * 2.0
    assert x.device == y.device == device
    assert fg.device_of(y) == device


# --- the GPU only ----------------------------------------------------------------------

@needs_gpu
def test_mixing_devices_raises_device_mismatch_error_naming_both():
    a = np.ones(3)
    b = fg.to_device(np.ones(3), "cuda:0")
    with pytest.raises(fg.DeviceMismatchError) as info:
        fnp.add(fg.require_grad(a), b)
    assert "cpu" in str(info.value) and "cuda:0" in str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, fg.FuncgradError)
    with pytest.raises(fg.DeviceMismatchError):
        fg.grad(lambda v: (v * b).sum())(a)


@needs_gpu
def test_gpu_values_in_the_hooks_and_the_fold_stay_on_the_gpu():
    import cupy

    kinds = []

    class Kinds(fg.BackwardHook):
        def backward_postprocess(self, node, in_values, out_grads, in_grads):
            kinds.extend(type(fg.value_of(g)) for g in in_grads if g is not None)

    with fg.hooks(Kinds()):
        fg.grad(lambda v: (fnp.sin(v) * v).sum())(fg.to_device(np.ones(4), "cuda:0"))
    assert kinds and all(k is cupy.ndarray for k in kinds)


@needs_gpu
def test_a_rule_returning_a_gradient_on_the_wrong_device_is_a_gradient_type_error():
    def host_only(x):
        return x * 2.0

    prim = fg.primitive(host_only)
    fg.defvjp(prim, lambda g, ans, x: np.ones(x.shape, x.dtype) * 2.0)  # NumPy, not CuPy
    with pytest.raises(fg.GradientTypeError) as info:
        fg.grad(lambda v: prim(v).sum())(fg.to_device(np.ones(3), "cuda:0"))
    message = str(info.value)
    assert "host_only" in message and "cuda:0" in message and "cpu" in message
