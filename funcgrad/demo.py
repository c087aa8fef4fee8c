"""A short tour of funcgrad that prints real results: ``python -m funcgrad.demo``.

Each section computes something with funcgrad and, where there is one, the
closed form it should equal.  It runs in a second or two on a CPU and uses
only the public API (``funcgrad`` as ``fg``, ``funcgrad.numpy`` as ``fnp``).
"""

from __future__ import annotations

import numpy

import funcgrad as fg
import funcgrad.numpy as fnp


def _section(title: str) -> None:
    print(f"\n== {title} ==")


def gradient() -> None:
    _section("gradient of a NumPy function vs its closed form")
    x = numpy.linspace(-1.0, 1.0, 5)

    def f(x):
        return fnp.sum(fnp.sin(x) * x**2)

    g = fg.grad(f)(x)
    closed = numpy.cos(x) * x**2 + 2 * x * numpy.sin(x)
    print("f(x)     = sum(sin(x) * x**2)")
    print("x        =", x)
    print("fg.grad  =", g)
    print("closed   =", closed, " (cos(x) x^2 + 2x sin(x))")
    print(f"max |difference| = {numpy.max(numpy.abs(g - closed)):.1e}")


def third_derivative() -> None:
    _section("third derivative by nested grad")
    x = numpy.array(0.5)
    d3 = fg.grad(fg.grad(fg.grad(fnp.tanh)))(x)
    t = numpy.tanh(x)
    closed = (1 - t**2) * (6 * t**2 - 2)
    print(f"d3/dx3 tanh(x) at x = 0.5: fg = {float(d3):.6f}, closed form = {closed:.6f}")


def forward_mode() -> None:
    _section("jvp (forward mode) vs the Jacobian")

    def f(x):
        return fnp.stack([x[0] * x[1], fnp.exp(x[0]), fnp.sin(x[1])])

    x = numpy.array([1.0, 2.0])
    v = numpy.array([1.0, -1.0])
    _, tangent = fg.jvp(f, (x,), (v,))
    jac = fg.jacobian(f)(x)
    print("f(x) = [x0 x1, exp(x0), sin(x1)] at x = [1, 2], tangent v = [1, -1]")
    print("jvp  =", tangent)
    print("J @ v =", jac @ v)


def hessian() -> None:
    _section("Hessian of the Rosenbrock function")

    def rosenbrock(x):
        return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2

    h = fg.hessian(rosenbrock)(numpy.array([1.0, 1.0]))
    print("at its minimum (1, 1); closed form [[802, -400], [-400, 200]]")
    print(h)


def multiple_graphs() -> None:
    _section("multiple graphs: differentiate a gradient on another graph")
    # API.md's example, with 0-d values: a (1,)-shaped output needs an explicit seed.
    with fg.backprop_scope("bp_y") as bp_y, fg.backprop_scope("bp_x") as bp_x:
        x = fg.require_grad(fnp.full((), 2.0, "float32"), bp_x)
        y = fg.require_grad(fnp.full((), 3.0, "float32"), bp_y)
        z = x * (x + y)
        gx = fg.backprop([z], [x], backprop_id=bp_x)[x]  # 2x + y
        w = x * gx
        gy = fg.backprop([w], [y], backprop_id=bp_y)[y]  # x
    print("x = 2, y = 3, z = x (x + y)")
    print(f"dz/dx on bp_x = {float(fg.value_of(gx))} (2x + y = 7)")
    on_y, on_x = fg.is_grad_required(gx, bp_y), fg.is_grad_required(gx, bp_x)
    print(f"gx still on bp_y: {on_y}, on bp_x: {on_x}")
    print(f"d(x * dz/dx)/dy on bp_y = {float(fg.value_of(gy))} (x = 2)")


def _blobs(rng: numpy.random.Generator, n: int = 60) -> tuple:
    """Three Gaussian blobs in the plane: points (n, 2) and integer labels (n,)."""
    centers = numpy.array([[0.0, 2.0], [-2.0, -1.0], [2.0, -1.0]])
    labels = numpy.arange(n) % 3
    points = centers[labels] + 1.2 * rng.standard_normal((n, 2))
    return points, labels


def training() -> None:
    _section("a small MLP trained by gradient descent")
    rng = numpy.random.default_rng(0)
    points, labels = _blobs(rng)
    params = {
        "w1": 0.5 * rng.standard_normal((2, 16)),
        "b1": numpy.zeros(16),
        "w2": 0.5 * rng.standard_normal((16, 3)),
        "b2": numpy.zeros(3),
    }

    def logits(p, x):
        return fnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]

    def loss(p, x, y):
        return fg.nn.softmax_cross_entropy(logits(p, x), y)

    step = fg.value_and_grad(loss)
    lr = 0.2
    first = last = None
    for i in range(30):
        value, grads = step(params, points, labels)
        params = {k: params[k] - lr * grads[k] for k in params}  # gradients are a dict too
        first = float(value) if first is None else first
        last = float(value)
        if i % 5 == 0 or i == 29:
            print(f"step {i:2d}  loss {last:.4f}")
    accuracy = numpy.mean(numpy.argmax(logits(params, points), axis=1) == labels)
    print(f"loss {first:.4f} -> {last:.4f}, training accuracy {accuracy:.0%}")


def graph() -> None:
    _section("the graph of a computation: fg.trace")

    def layer(w, x):
        return fnp.sum(fnp.tanh(x @ w) ** 2)

    g = fg.trace(layer, numpy.ones((3, 2)), numpy.ones((4, 3)))
    print(g)
    print(f"len(g) = {len(g)}; the fold visits: {[_name(n) for n in g]}")


def _name(node: fg.Node) -> str:
    return "input" if node.primitive is None else node.primitive.name


def main() -> None:
    """Run every section of the demo, printing its results."""
    with numpy.printoptions(precision=6, suppress=True):
        gradient()
        third_derivative()
        forward_mode()
        hessian()
        multiple_graphs()
        training()
        graph()


if __name__ == "__main__":
    main()
