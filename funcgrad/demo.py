"""funcgrad's main job: ``python -m funcgrad.demo [--plot demo.png]``.

Trains a small network on three interleaved spirals that it generates itself
(deterministically, from ``--seed``), with Adam from :mod:`funcgrad.optim`
and a ``tqdm`` progress bar; prints train and held-out accuracy;
checks the model's gradients against finite differences at first and second
order; and runs Newton's method on a convex problem (logistic regression),
each step a conjugate-gradient solve on Hessian-vector products.  ``--plot
PATH`` saves the loss curve and the decision regions as a PNG (needs
matplotlib: ``pip install -e '.[viz]'``).

It exits with status 1, saying why, when a promise is not kept: held-out
accuracy below ``--min-accuracy``, a failed gradient check, or a Newton run
that does not reach the optimum.  It takes a few seconds on a CPU.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy
from tqdm import tqdm

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import optim

PROMISED_ACCURACY = 0.97  # held-out accuracy the default run must reach
N_CLASSES = 3
HIDDEN = 32

Params = dict[str, Any]


# --- data -------------------------------------------------------------------


def spirals(n: int, seed: int, noise: float = 0.03) -> tuple[numpy.ndarray, numpy.ndarray]:
    """``n`` points on three interleaved spiral arms, 1.5 turns each: ``(points, labels)``.

    Point ``i`` belongs to arm ``i % 3``; its radius is drawn so that points
    are spread evenly along the arms, then Gaussian noise is added.  The same
    ``seed`` always gives the same points.

    >>> points, labels = spirals(6, seed=0)
    >>> points.shape, labels.tolist()
    ((6, 2), [0, 1, 2, 0, 1, 2])
    """
    rng = numpy.random.default_rng(seed)
    labels = numpy.arange(n) % N_CLASSES
    radius = numpy.sqrt(rng.uniform(0.02, 1.0, n))
    angle = 2 * numpy.pi * labels / N_CLASSES + 3 * numpy.pi * radius
    points = radius[:, None] * numpy.stack([numpy.cos(angle), numpy.sin(angle)], axis=1)
    return points + noise * rng.standard_normal((n, 2)), labels


# --- the model and its optimizer ----------------------------------------------


def init_params(seed: int) -> Params:
    """A 2-32-32-3 multilayer perceptron's weights, scaled so that tanh starts unsaturated."""
    rng = numpy.random.default_rng(seed)
    return {
        "w1": 3.0 * rng.standard_normal((2, HIDDEN)),  # the inputs lie in the unit disc
        "b1": numpy.zeros(HIDDEN),
        "w2": rng.standard_normal((HIDDEN, HIDDEN)) / HIDDEN**0.5,
        "b2": numpy.zeros(HIDDEN),
        "w3": rng.standard_normal((HIDDEN, N_CLASSES)) / HIDDEN**0.5,
        "b3": numpy.zeros(N_CLASSES),
    }


def logits(params: Params, x: Any) -> Any:
    """The network's class scores for points ``x`` of shape ``(n, 2)``."""
    h = fnp.tanh(x @ params["w1"] + params["b1"])
    h = fnp.tanh(h @ params["w2"] + params["b2"])
    return h @ params["w3"] + params["b3"]


def loss(params: Params, x: Any, labels: Any) -> Any:
    """Mean softmax cross-entropy of the network on ``(x, labels)``."""
    return fg.nn.softmax_cross_entropy(logits(params, x), labels)


def accuracy(params: Params, x: Any, labels: Any) -> float:
    """The fraction of points whose highest score is their label."""
    return float(fnp.mean(fnp.equal(fnp.argmax(logits(params, x), axis=1), labels)))


def train(params: Params, x: Any, labels: Any, steps: int) -> tuple[Params, list[float]]:
    """Full-batch Adam (:func:`funcgrad.optim.adam`) for ``steps`` steps, with a progress bar;
    returns the losses too."""
    step = fg.value_and_grad(loss)
    opt = optim.adam(0.02)
    state = opt.init(params)
    losses = []
    with tqdm(range(steps), desc="training", unit="step", ncols=80) as bar:
        for i in bar:
            value, grads = step(params, x, labels)
            updates, state = opt.update(grads, state, params)
            params = optim.apply_updates(params, updates)
            losses.append(float(value))
            if i % 10 == 0 or i == steps - 1:
                bar.set_postfix(loss=f"{losses[-1]:.4f}", refresh=False)
    return params, losses


# --- checks -----------------------------------------------------------------


def _relative_error(a: Any, b: Any) -> float:
    a = numpy.concatenate([numpy.ravel(v) for v in a.values()])
    b = numpy.concatenate([numpy.ravel(v) for v in b.values()])
    return float(numpy.max(numpy.abs(a - b)) / numpy.max(numpy.abs(b)))


def gradient_check(params: Params, x: Any, labels: Any, seed: int) -> float:
    """Print the model's first- and second-order derivative errors; return the worse one.

    ``fg.check_grads`` compares both modes up to order 2 (it raises on a
    mismatch); the two printed errors are our own central differences along a
    random direction ``v``: of the loss against ``<grad, v>``, and of the
    gradient against the Hessian-vector product (forward over reverse).
    """
    def f(p: Params) -> Any:
        return loss(p, x, labels)

    fg.check_grads(f, (params,), order=2)
    print("fg.check_grads(loss, params, order=2), reverse and forward mode: passed")

    rng = numpy.random.default_rng(seed)
    v = {k: rng.standard_normal(p.shape) for k, p in params.items()}
    eps = 1e-5

    def moved(sign: float) -> Params:
        return {k: params[k] + sign * eps * v[k] for k in params}

    g = fg.grad(f)(params)
    first = sum(float(fnp.sum(g[k] * v[k])) for k in params)
    numeric = (float(f(moved(1))) - float(f(moved(-1)))) / (2 * eps)
    err1 = abs(first - numeric) / abs(numeric)
    print(f"1st order: <grad, v> = {first:+.8f}, central difference {numeric:+.8f}, "
          f"relative error {err1:.1e}")

    hv = fg.jvp(fg.grad(f), (params,), (v,))[1]
    g_plus, g_minus = fg.grad(f)(moved(1)), fg.grad(f)(moved(-1))
    numeric_hv = {k: (g_plus[k] - g_minus[k]) / (2 * eps) for k in params}
    err2 = _relative_error(hv, numeric_hv)
    print(f"2nd order: Hessian @ v ({sum(a.size for a in hv.values())} entries) vs central "
          f"difference of grad, relative error {err2:.1e}")
    return max(err1, err2)


def logistic_problem(seed: int, n: int = 400) -> tuple[numpy.ndarray, numpy.ndarray, float]:
    """A logistic regression problem: features ``(n, 6)``, 0/1 labels ``(n,)``, L2 penalty.

    The features are the quadratic monomials of 2-D Gaussian points; the labels
    say, with noise, whether a point is inside an ellipse, so no ``w`` fits
    them exactly and the optimum is finite even without the penalty.

    >>> x, labels, penalty = logistic_problem(0)
    >>> x.shape, sorted(set(labels.tolist())), penalty
    ((400, 6), [0.0, 1.0], 0.001)
    """
    rng = numpy.random.default_rng(seed + 1)
    p = rng.standard_normal((n, 2))
    labels = (p[:, 0] ** 2 + 0.5 * p[:, 1] ** 2 + 0.6 * rng.standard_normal(n) < 1.2) * 1.0
    x = numpy.stack([numpy.ones(n), p[:, 0], p[:, 1], p[:, 0] ** 2, p[:, 0] * p[:, 1],
                     p[:, 1] ** 2], axis=1)
    return x, labels, 1e-3


def logistic_loss(w: Any, x: Any, labels: Any, penalty: float) -> Any:
    """Mean logistic loss of the linear scores ``x @ w``, plus ``penalty / 2 * |w|^2``."""
    z = x @ w
    return fnp.mean(fg.nn.softplus(z) - labels * z) + 0.5 * penalty * fnp.sum(w * w)


def conjugate_gradient(hvp: Any, b: Any, tol: float = 1e-15) -> Any:
    """Solve ``H d = b`` for symmetric positive definite ``H`` given only ``hvp(v) = H v``.

    >>> conjugate_gradient(lambda v: numpy.array([2.0, 4.0]) * v, numpy.array([1.0, 1.0]))
    array([0.5 , 0.25])
    """
    d, r = fnp.zeros_like(b), b
    s, rr = r, float(fnp.sum(r * r))
    for _ in range(2 * b.size):  # n steps in exact arithmetic; a few more for round-off
        hs = hvp(s)
        alpha = rr / float(fnp.sum(s * hs))
        d, r = d + alpha * s, r - alpha * hs
        rr, rr_old = float(fnp.sum(r * r)), rr
        if rr <= (tol * float(fnp.linalg.norm(b))) ** 2:
            break
        s = r + (rr / rr_old) * s
    return d


def newton_logistic(seed: int, max_steps: int = 12) -> tuple[numpy.ndarray, list[float]]:
    """Newton's method on :func:`logistic_problem`, printing each step: ``(w, |grad| per step)``.

    Convex and smooth, so Newton converges quadratically: near the optimum
    the gradient's norm roughly squares at each step.  Each step solves
    ``H d = grad`` by :func:`conjugate_gradient` on ``fg.hvp``, never forming
    ``H``; the first step's direction is compared with a dense solve on
    ``fg.hessian``.
    """
    x, labels, penalty = logistic_problem(seed)

    def f(w: Any) -> Any:
        return logistic_loss(w, x, labels, penalty)

    print(f"{x.shape[1]} quadratic features, {len(x)} points, L2 penalty {penalty:g}, from w = 0")
    w = numpy.zeros(x.shape[1])
    norms = []
    for i in range(max_steps + 1):
        g = fg.grad(f)(w)
        norms.append(float(fnp.linalg.norm(g)))
        print(f"step {i}  loss {float(f(w)):.10f}  |grad| {norms[-1]:.1e}")
        if norms[-1] < 1e-13 or i == max_steps:
            break
        d = conjugate_gradient(lambda v, w=w: fg.hvp(f, (w,), (v,)), g)
        if i == 0:
            dense = fnp.linalg.solve(fg.hessian(f)(w), g)
            print(f"  (CG on fg.hvp vs solve(fg.hessian(f)(w), grad): max |difference| "
                  f"{float(fnp.max(fnp.abs(d - dense))):.1e})")
        w = w - d
    print(f"|grad| {norms[0]:.1e} -> {norms[-1]:.1e} in {len(norms) - 1} Newton steps")
    return w, norms


# --- a taste of the rest ------------------------------------------------------


def more() -> None:
    """Two one-liners from the rest of the library: nested grad and multiple graphs."""
    t = numpy.tanh(0.5)
    d3 = float(fg.grad(fg.grad(fg.grad(fnp.tanh)))(0.5))
    print(f"d3/dx3 tanh(x) at x = 0.5 by nested fg.grad: {d3:.6f} "
          f"(closed form {(1 - t**2) * (6 * t**2 - 2):.6f})")
    with fg.backprop_scope("bp_y") as bp_y, fg.backprop_scope("bp_x") as bp_x:
        x = fg.require_grad(fnp.full((), 2.0), bp_x)
        y = fg.require_grad(fnp.full((), 3.0), bp_y)
        gx = fg.backprop([x * (x + y)], [x], backprop_id=bp_x)[x]  # 2x + y, still on bp_y
        gy = fg.backprop([x * gx], [y], backprop_id=bp_y)[y]  # d(x (2x + y))/dy = x
    print(f"two graphs, z = x (x + y) at x = 2, y = 3: dz/dx = {float(fg.value_of(gx))} on "
          f"bp_x, and its d(x dz/dx)/dy = {float(fg.value_of(gy))} on bp_y")


# --- the picture --------------------------------------------------------------


def _pyplot():
    """matplotlib's pyplot on the headless Agg backend, or None when it is not installed."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot(plt: Any, path: str, params: Params, losses: list[float], train_set: tuple,
         test_set: tuple, test_accuracy: float) -> None:
    """Save the decision regions (with the points) and the loss curve as one PNG."""
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 5), dpi=100)
    grid = numpy.linspace(-1.3, 1.3, 300)
    gx, gy = numpy.meshgrid(grid, grid)
    regions = numpy.argmax(logits(params, numpy.stack([gx.ravel(), gy.ravel()], 1)), axis=1)
    left.contourf(gx, gy, regions.reshape(gx.shape), levels=[-0.5, 0.5, 1.5, 2.5],
                  colors=colors, alpha=0.25)
    (xs, ys), (xt, yt) = train_set, test_set
    for k in range(N_CLASSES):
        left.scatter(*xs[ys == k].T, s=9, color=colors[k], label=f"class {k}")
    for k in range(N_CLASSES):
        left.scatter(*xt[yt == k].T, s=12, facecolors="none", edgecolors=colors[k], lw=0.6)
    # The held-out points are hollow circles in their class's colour: the legend shows
    # a hollow black circle, so that it is not read as one more point of class 0.
    left.scatter([], [], s=12, facecolors="none", edgecolors="black", lw=0.8,
                 label="held out (hollow)")
    left.set(title=f"decision regions; held-out accuracy {test_accuracy:.1%}",
             xlim=(-1.3, 1.3), ylim=(-1.3, 1.3), aspect="equal",
             xlabel="first coordinate $x_1$", ylabel="second coordinate $x_2$")
    left.legend(loc="upper left", fontsize=8)
    right.semilogy(numpy.arange(1, len(losses) + 1), losses)
    right.set(title="training loss (softmax cross-entropy)", xlabel="Adam step", ylabel="loss")
    right.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# --- main ---------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m funcgrad.demo",
        description="Train a small network on three spirals, check its gradients, and run "
        "Newton's method, all with funcgrad; exit 1 if a promise is not kept.")
    p.add_argument("--plot", metavar="PATH", help="save the loss curve and decision regions "
                   "as a PNG (needs matplotlib: pip install -e '.[viz]')")
    p.add_argument("--steps", type=int, default=500, help="Adam steps (default 500)")
    p.add_argument("--seed", type=int, default=0, help="seed of the data and weights (default 0)")
    p.add_argument("--min-accuracy", type=float, default=PROMISED_ACCURACY,
                   help=f"held-out accuracy to reach, else exit 1 (default {PROMISED_ACCURACY})")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo; return the exit status (0 when every promise is kept).

    >>> main(["--steps", "-1"])
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    args = _parser().parse_args(argv)
    if args.steps < 0:
        _parser().error(f"--steps must be >= 0, not {args.steps}")
    plt = None
    if args.plot:  # say so now, not after training
        plt = _pyplot()
        if plt is None:
            print("funcgrad.demo: --plot needs matplotlib, which is not installed; install "
                  "the 'viz' extra: pip install -e '.[viz]' (or pip install matplotlib)",
                  file=sys.stderr)
            return 2

    failures = []
    x, labels = spirals(600, seed=args.seed)
    x_test, labels_test = spirals(600, seed=args.seed + 1000)
    params = init_params(args.seed)
    print(f"funcgrad demo: three interleaved spirals, {len(x)} training and {len(x_test)} "
          f"held-out points (seed {args.seed})")
    print(f"model: 2-{HIDDEN}-{HIDDEN}-{N_CLASSES} MLP, tanh, softmax cross-entropy "
          f"({sum(p.size for p in params.values())} parameters), Adam from funcgrad.optim")

    print("\n== gradient check of the model, against finite differences ==")
    try:
        if gradient_check(params, x, labels, args.seed) > 1e-5:
            failures.append("the model's gradient check error is above 1e-5")
    except AssertionError as e:
        print(f"gradient check FAILED: {e}")
        failures.append("fg.check_grads found a mismatch")

    print(f"\n== training: {args.steps} full-batch Adam steps ==")
    start = time.perf_counter()
    params, losses = train(params, x, labels, args.steps)
    seconds = time.perf_counter() - start
    train_acc, test_acc = accuracy(params, x, labels), accuracy(params, x_test, labels_test)
    if losses:
        print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {seconds:.1f} s")
    print(f"train accuracy {train_acc:.1%}, test accuracy {test_acc:.1%} "
          f"(promised >= {args.min_accuracy:.1%})")
    if test_acc < args.min_accuracy:
        failures.append(f"test accuracy {test_acc:.1%} is below the promised "
                        f"{args.min_accuracy:.1%}")

    print("\n== Newton's method on logistic regression (convex), CG on fg.hvp ==")
    _, norms = newton_logistic(args.seed)
    before, after = norms[0], norms[-1]
    if not after <= 1e-10 * before:
        failures.append(f"Newton's method stopped at |grad| {after:.1e} (from {before:.1e})")

    print("\n== and more ==")
    more()

    if plt is not None:
        plot(plt, args.plot, params, losses, (x, labels), (x_test, labels_test), test_acc)
        print(f"\nsaved the loss curve and decision regions to {args.plot}")
    for failure in failures:
        print(f"funcgrad.demo: FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
