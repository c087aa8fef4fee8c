"""API.md §7: data-parallel gradients (``fg.dask``) and gradients on a Dask cluster.

The data-parallel helper must equal NumPy funcgrad's gradient of the mean (or
sum) over all rows, whatever the chunking -- uneven, unknown, one row per
block -- with pytrees of parameters and a two-pass statistics option.  On a
``LocalCluster`` of two worker processes (on 127.0.0.1 only, started and closed
here), the plain path (``fg.grad`` on Dask arrays) and the data-parallel path
give NumPy's gradients to 1e-10.
"""

from __future__ import annotations

import logging
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="Dask is optional: pip install funcgrad[dask]")
import dask
from lazy import counting

import funcgrad as fg
import funcgrad.numpy as fnp

RNG = np.random.default_rng(11)
N, D = 23, 3
X = RNG.standard_normal((N, D))
Y = (RNG.standard_normal(N) > 0).astype(float)
W = RNG.standard_normal(D) * 0.3


def logistic(w, x, y):
    """The mean logistic loss of the rows of x (labels 0/1)."""
    z = x @ w
    return fnp.mean(fg.nn.softplus(z) - y * z)


def test_data_parallel_grad_is_the_gradient_of_the_mean_over_all_rows():
    want_v, want_g = fg.value_and_grad(logistic)(W, X, Y)
    for chunks in (5, 1, N, (10, 3, 10)):  # uneven, a row per block, one block
        x, y = da.from_array(X, chunks=(chunks, D)), da.from_array(Y, chunks=(chunks,))
        with counting() as c:
            lazy = fg.dask.data_parallel_value_and_grad(logistic, W, x, y)
        assert c.calls == 0
        v, g = lazy.compute()
        np.testing.assert_allclose(v, want_v, rtol=1e-12)
        np.testing.assert_allclose(g, want_g, rtol=1e-12)
        np.testing.assert_allclose(fg.dask.data_parallel_grad(logistic, W, x, y).compute(),
                                   want_g, rtol=1e-12)


def test_numpy_arrays_and_chunks_of_other_arrays_follow_the_first():
    x = da.from_array(X, chunks=(4, 2))  # columns in two chunks: made whole per block
    y = da.from_array(Y, chunks=7)       # rechunked to the first array's rows
    g = fg.dask.data_parallel_grad(logistic, W, x, y).compute()
    np.testing.assert_allclose(g, fg.grad(logistic)(W, X, Y), rtol=1e-12)


def test_rows_of_unknown_number_are_weighted_exactly():
    mask = X[:, 0] > 0
    mask[6:12] = False  # the second block selects nothing
    keep = da.from_array(mask, chunks=6)
    xs, ys = da.from_array(X, chunks=(6, D))[keep], da.from_array(Y, chunks=6)[keep]
    assert np.isnan(xs.shape[0])  # selections of unknown size
    g = fg.dask.data_parallel_grad(logistic, W, xs, ys).compute()
    np.testing.assert_allclose(g, fg.grad(logistic)(W, X[mask], Y[mask]), rtol=1e-12)


def test_a_pytree_of_parameters_and_a_sum_reduction():
    params = {"w": W, "b": np.array(0.2)}

    def loss(p, x, y):
        z = x @ p["w"] + p["b"]
        return fnp.sum((z - y) ** 2)

    x, y = da.from_array(X, chunks=(4, D)), da.from_array(Y, chunks=4)
    v, g = fg.dask.data_parallel_value_and_grad(loss, params, x, y, reduction="sum").compute()
    want_v, want_g = fg.value_and_grad(loss)(params, X, Y)
    np.testing.assert_allclose(v, want_v, rtol=1e-12)
    assert set(g) == {"w", "b"}
    np.testing.assert_allclose(g["w"], want_g["w"], rtol=1e-12)
    np.testing.assert_allclose(g["b"], want_g["b"], rtol=1e-12)


def test_two_passes_use_global_statistics_as_constants():
    def stats(x, y):
        return {"mean": x.mean(axis=0), "scale": x.std(axis=0)}

    def loss(w, x, y, s):
        return logistic(w, (x - s["mean"]) / s["scale"], y)

    x, y = da.from_array(X, chunks=(5, D)), da.from_array(Y, chunks=5)
    g = fg.dask.data_parallel_grad(loss, W, x, y, stats=stats).compute()
    s = {"mean": X.mean(axis=0), "scale": X.std(axis=0)}
    np.testing.assert_allclose(g, fg.grad(loss)(W, X, Y, s), rtol=1e-12)


def test_bad_arguments_are_named():
    x = da.from_array(X, chunks=5)
    with pytest.raises(ValueError, match="reduction"):
        fg.dask.data_parallel_grad(logistic, W, x, reduction="max")
    with pytest.raises(TypeError, match="callable"):
        fg.dask.data_parallel_grad("loss", W, x)
    with pytest.raises(ValueError, match="rows"):
        fg.dask.data_parallel_grad(logistic, W, x, da.from_array(Y[:5], chunks=5))
    with pytest.raises(ValueError, match="at least one"):
        fg.dask.data_parallel_grad(logistic, W)


# --- a real cluster: two worker processes on the loopback interface ----------------------


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed", reason="pip install funcgrad[dask]")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=None, silence_logs=logging.ERROR,
    )
    with cluster, distributed.Client(cluster) as c:
        yield c


def test_the_cluster_listens_on_loopback_only(client):
    addresses = [client.scheduler.address, *client.scheduler_info()["workers"]]
    assert len(addresses) == 3
    assert all(a.startswith("tcp://127.0.0.1:") for a in addresses), addresses


def test_plain_and_data_parallel_gradients_on_the_cluster_equal_numpy(client):
    x, y = da.from_array(X, chunks=(6, D)), da.from_array(Y, chunks=6)
    want = fg.grad(logistic, argnums=(0, 1))(W, X, Y)
    scale = 1.5  # a closed-over value: the loss travels by value (cloudpickle)

    def loss(w, xb, yb):
        return logistic(w * scale, xb, yb)

    # The plain path: a lazy gradient, computed by the workers.
    gw, gx = fg.grad(logistic, argnums=(0, 1))(W, x, y)
    gw, gx = client.compute([gw, gx], sync=True)
    np.testing.assert_allclose(gw, want[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gx, want[1], rtol=1e-10, atol=1e-12)
    # The data-parallel path: funcgrad eager in each worker's tasks.
    g = client.compute(fg.dask.data_parallel_grad(loss, W, x, y), sync=True)
    np.testing.assert_allclose(g, fg.grad(loss)(W, X, Y), rtol=1e-10, atol=1e-12)
    # The work was done by the worker processes, which imported funcgrad for it.
    imported = client.run(lambda: "funcgrad.numpy" in sys.modules)
    assert any(imported.values()), imported
    # And the default scheduler is the cluster's while the client is open.
    assert dask.base.get_scheduler() == client.get
