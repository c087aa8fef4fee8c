"""Runs three of autograd's examples (``ode_net``, ``gaussian_process``,
``bayesian_optimization``) in this process and pickles what they computed.

``python autograd_examples_run.py BACKEND SDIST OUT`` with BACKEND ``autograd``
(the ``autograd`` package of autograd's sdist at SDIST) or ``funcgrad`` (the
same examples with ``autograd`` mapped onto funcgrad by ``autograd_adapter``).
Each example's ``__main__`` block runs as written, plotting on matplotlib's
Agg backend, except: ``plt.show``/``plt.pause``/``plt.draw`` do nothing (no
window, no waiting), and the few constants of :data:`PATCHES` are lowered so
that the three run in seconds.  What they compute is recorded on the way by
wrapping ``scipy.optimize.minimize`` (each call's start value and gradient,
its result) and ``autograd.misc.optimizers.adam`` (each step's gradient,
the result).  Used by ``test_autograd_examples.py``, which compares the two
backends' records.
"""

from __future__ import annotations

import pathlib
import pickle
import sys
import time
import traceback

import numpy

EXAMPLES = ("ode_net", "gaussian_process", "bayesian_optimization")

# (example, text, replacement): each text occurs exactly once in autograd 1.9.1's example.
PATCHES = [
    ("ode_net", "N = 30  # Dataset size", "N = 10  # Dataset size"),
    ("ode_net", "num_iters=1000", "num_iters=2"),
    ("bayesian_optimization", "num_iters=20, callback=None", "num_iters=3, callback=None"),
]


_ORIGINAL: dict = {}


def _flat(tree) -> numpy.ndarray:
    """Every leaf of a (list/tuple) tree of arrays, raveled and joined."""
    if isinstance(tree, (list, tuple)):
        parts = [_flat(t) for t in tree]
        return numpy.concatenate(parts) if parts else numpy.zeros(0)
    return numpy.ravel(numpy.asarray(tree, dtype=float))


def _record_minimize(log: list):
    import scipy.optimize

    real = _ORIGINAL.setdefault("minimize", scipy.optimize.minimize)

    def minimize(fun, x0, *args, **kwargs):
        start = fun(x0)  # jac=True in these examples: (value, gradient)
        res = real(fun, x0, *args, **kwargs)
        end = fun(res.x)
        log.append({"x0": _flat(x0), "f0": _flat(start[0]), "g0": _flat(start[1]),
                    "x": _flat(res.x), "fun": _flat(res.fun), "nit": int(res.nit),
                    "g": _flat(end[1])})
        return res

    scipy.optimize.minimize = minimize


def _record_adam(log: list):
    module = sys.modules["autograd.misc.optimizers"]
    real = _ORIGINAL.setdefault("adam", module.adam)

    def adam(grad, x0, callback=None, **kwargs):
        _ORIGINAL["adam_start"] = x0

        def watch(x, i, g):
            log.append({"i": i, "x": _flat(x), "g": _flat(g)})
            if callback:
                callback(x, i, g)

        out = real(grad, x0, watch, **kwargs)
        log.append({"result": _flat(out)})
        return out

    module.adam = adam


def _source(examples: pathlib.Path, name: str) -> str:
    text = (examples / f"{name}.py").read_text()
    for example, old, new in PATCHES:
        if example == name:
            if text.count(old) != 1:
                raise RuntimeError(f"{name}.py: {old!r} occurs {text.count(old)} times, not once")
            text = text.replace(old, new)
    return text


def run(backend: str, sdist: pathlib.Path) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.show = plt.pause = plt.draw = lambda *args, **kwargs: None
    examples = sdist / "examples"
    sys.path.insert(0, str(examples))  # bayesian_optimization imports gaussian_process
    if backend == "funcgrad":
        import autograd_adapter

        autograd_adapter.install()
    else:
        sys.path.insert(0, str(sdist))  # the sdist's own autograd package
        import autograd.misc.optimizers
    import autograd

    out: dict = {"autograd_from": getattr(autograd.grad, "__module__", "?")}
    for name in EXAMPLES:
        minimize_log: list = []
        adam_log: list = []
        _record_minimize(minimize_log)
        _record_adam(adam_log)
        start = time.perf_counter()
        namespace = {"__name__": "__main__", "__file__": str(examples / f"{name}.py")}
        try:
            exec(compile(_source(examples, name), str(examples / f"{name}.py"), "exec"),  # noqa: S102
                 namespace)
            error = None
        except Exception:  # noqa: BLE001 (reported by the test, with the traceback)
            error = traceback.format_exc()
        plt.close("all")
        if name == "ode_net" and error is None:
            out["ode_net_tight_grad"] = _tight_grad(namespace, _ORIGINAL["adam_start"])
        result = namespace.get("best_x"), namespace.get("best_y")
        out[name] = {"error": error, "seconds": time.perf_counter() - start,
                     "minimize": minimize_log, "adam": adam_log,
                     "best": None if result[0] is None else (_flat(result[0]),
                                                             float(result[1]))}
    out["ode_net"]["tight_grad"] = out.pop("ode_net_tight_grad", None)
    return out


def _tight_grad(ns: dict, params) -> numpy.ndarray:
    """ode_net's training loss's gradient at its start, solved with rtol = atol = 1e-8
    (the example's own ``ode_pred`` takes rtol=0.01), written with the example's functions."""
    def loss(p):
        pred = ns["odeint"](ns["nn_predict"], ns["true_y0"], ns["t"], ns["tuple"]((p,)),
                            rtol=1e-8, atol=1e-8)
        return ns["L1_loss"](pred, ns["true_y"])

    return _flat(ns["grad"](loss)(params))


if __name__ == "__main__":
    backend, sdist, dest = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    result = run(backend, sdist)
    dest.write_bytes(pickle.dumps(result))
