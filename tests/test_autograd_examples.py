"""Three of HIPS autograd's own examples, run through ``autograd_adapter`` on funcgrad and
compared with the same examples run on autograd itself (issue 20).

``ode_net.py`` (a neural ODE trained with ``odeint``'s adjoint gradient and autograd's
``adam``), ``gaussian_process.py`` (GP hyperparameters fitted with SciPy's CG on
``value_and_grad`` of ``multivariate_normal.logpdf``) and ``bayesian_optimization.py``
(GP fits, then L-BFGS-B on an acquisition built from ``norm.cdf``/``norm.pdf``) come from
autograd 1.9.1's sdist, downloaded at test time (``autograd_sdist``).  Each runs its
``__main__`` block as written (plots drawn on Agg; ``show``/``pause``/``draw`` do nothing;
fewer iterations: ``autograd_examples_run.PATCHES``) once per backend, in two separate
processes -- the reference is the ``autograd`` package of the same sdist -- and what they
computed is compared: every ``minimize`` call's start value, gradient and result, every
``adam`` step's gradient, and for ``ode_net`` also the start gradient with tight solver
tolerances, where the two ODE solvers (SciPy's LSODA in autograd, funcgrad's own
Dormand-Prince) must agree closely.
"""

from __future__ import annotations

import os
import pathlib
import pickle
import subprocess
import sys
import tempfile

import autograd_sdist
import numpy
import pytest

HERE = pathlib.Path(__file__).resolve().parent
BACKENDS = ("autograd", "funcgrad")


def _run_both(sdist: pathlib.Path) -> dict:
    out = pathlib.Path(tempfile.mkdtemp(prefix="autograd-examples-"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parent), str(HERE)]),
               MPLBACKEND="Agg", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1")  # one thread: as fast on a shared machine, reproducible
    procs = {b: subprocess.Popen([sys.executable, str(HERE / "autograd_examples_run.py"), b,
                                  str(sdist), str(out / f"{b}.pkl")],
                                 env=env, cwd=out, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
             for b in BACKENDS}
    results = {}
    for b, proc in procs.items():
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"the {b} run broke:\n{err[-3000:]}"
        results[b] = pickle.loads((out / f"{b}.pkl").read_bytes())
    return results


@pytest.fixture(scope="module")
def runs():
    try:
        sdist = autograd_sdist.root()
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"autograd's sdist could not be downloaded: {exc}")
    return _run_both(sdist)


def _pair(runs, name):
    ref, ours = runs["autograd"][name], runs["funcgrad"][name]
    assert ref["error"] is None, f"autograd's own run of {name} broke:\n{ref['error']}"
    assert ours["error"] is None, f"{name} on funcgrad broke:\n{ours['error']}"
    return ref, ours


def _rel(a, b):
    return float(numpy.max(numpy.abs(a - b)) / numpy.max(numpy.abs(a)))


def test_the_runs_use_the_backends_they_name(runs):
    assert runs["funcgrad"]["autograd_from"] == "autograd_adapter"
    assert runs["autograd"]["autograd_from"].startswith("autograd.")


def _same_minimize_calls(ref, ours, x_atol, flat=()):
    """Every call starts from the same point with the same value and gradient, and ends at
    a stationary point (L-BFGS-B's and CG's own tolerance on the gradient, 1e-5) of the same
    value; where the end point is well determined it is the same point, reached in the same
    number of iterations.  The calls named in ``flat`` end in a valley whose floor is level
    to 1e-10: there a one-ulp difference in the start gradient (a sum taken in another
    order) moves the end along the floor, so they get ``x`` to 1e-3 and two iterations."""
    assert len(ours["minimize"]) == len(ref["minimize"]) > 0
    for k, (a, b) in enumerate(zip(ref["minimize"], ours["minimize"], strict=True)):
        numpy.testing.assert_allclose(b["x0"], a["x0"], rtol=0, atol=1e-12, err_msg=f"call {k}")
        numpy.testing.assert_allclose(b["f0"], a["f0"], rtol=1e-10, atol=1e-12,
                                      err_msg=f"call {k}: objective at the start")
        numpy.testing.assert_allclose(b["g0"], a["g0"], rtol=1e-8, atol=1e-12,
                                      err_msg=f"call {k}: gradient at the start")
        numpy.testing.assert_allclose(b["fun"], a["fun"], rtol=1e-9, atol=1e-12,
                                      err_msg=f"call {k}: objective at the optimum")
        for name, run in (("autograd", a), ("funcgrad", b)):
            assert numpy.max(numpy.abs(run["g"])) < 1e-5, f"call {k}: {name} ended off a minimum"
        if k in flat:
            assert abs(b["nit"] - a["nit"]) <= 2, f"call {k}: {b['nit']} iterations, autograd {a['nit']}"
            numpy.testing.assert_allclose(b["x"], a["x"], rtol=0, atol=1e-3, err_msg=f"call {k}")
        else:
            assert b["nit"] == a["nit"], f"call {k}: {b['nit']} iterations, autograd {a['nit']}"
            numpy.testing.assert_allclose(b["x"], a["x"], rtol=0, atol=x_atol, err_msg=f"call {k}")


def test_gaussian_process(runs):
    ref, ours = _pair(runs, "gaussian_process")
    assert len(ref["minimize"]) == 1 and ref["minimize"][0]["nit"] > 5  # CG ran to the end
    _same_minimize_calls(ref, ours, x_atol=1e-6)


def test_bayesian_optimization(runs):
    ref, ours = _pair(runs, "bayesian_optimization")
    # 3 rounds of 15 L-BFGS-B searches of the acquisition, and one GP fit (round 3)
    assert len(ref["minimize"]) == 46
    # call 30, the GP fit, drives two log-scales to -16, where the likelihood is level
    assert ref["minimize"][30]["nit"] > 20 and ref["minimize"][30]["x"][1] < -10
    _same_minimize_calls(ref, ours, x_atol=1e-5, flat=(30,))
    (x_ref, y_ref), (x_ours, y_ours) = ref["best"], ours["best"]
    numpy.testing.assert_allclose(x_ours, x_ref, atol=1e-8)
    numpy.testing.assert_allclose(y_ours, y_ref, rtol=1e-10)


def _adam(steps, step_size=0.001, b1=0.9, b2=0.999, eps=1e-8):
    """Kingma and Ba's Adam from ``steps[0]["x"]`` with the recorded gradients (autograd's
    ``adam`` defaults, which ode_net uses)."""
    x = steps[0]["x"]
    m = v = numpy.zeros_like(x)
    for i, step in enumerate(steps):
        m = b1 * m + (1 - b1) * step["g"]
        v = b2 * v + (1 - b2) * step["g"] ** 2
        x = x - step_size * (m / (1 - b1 ** (i + 1))) / (numpy.sqrt(v / (1 - b2 ** (i + 1))) + eps)
    return x


def test_ode_net(runs):
    ref, ours = _pair(runs, "ode_net")
    steps_ref, steps_ours = ref["adam"][:-1], ours["adam"][:-1]
    assert [s["i"] for s in steps_ours] == [s["i"] for s in steps_ref] == [0, 1]
    numpy.testing.assert_array_equal(steps_ours[0]["x"], steps_ref[0]["x"])  # same start
    # the example's own rtol=0.01: the two solvers' gradients differ by the solvers' error
    for a, b in zip(steps_ref, steps_ours, strict=True):
        assert _rel(a["g"], b["g"]) < 2e-2, (a["i"], _rel(a["g"], b["g"]))
    for run in (ref, ours):  # each run's steps follow Adam's formulas from its gradients
        numpy.testing.assert_allclose(run["adam"][1]["x"], _adam(run["adam"][:1]), atol=1e-12)
        numpy.testing.assert_allclose(run["adam"][-1]["result"], _adam(run["adam"][:-1]),
                                      atol=1e-12)
    # at rtol = atol = 1e-8 the adjoint gradients agree to the solvers' tolerance
    assert _rel(ref["tight_grad"], ours["tight_grad"]) < 1e-3
