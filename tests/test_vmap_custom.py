"""fg.vmap over functions with custom rules (custom_vjp, custom_jvp), in every order.

The rules below are deliberately not sin's true derivative (twice it), so a result
that followed the function's body instead of its rule would show: before this test,
``grad(vmap(f))`` and ``jacfwd(vmap(f))`` silently differentiated ``sin`` itself.
"""

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


@fg.custom_vjp
def vjp_sin(x):
    return fnp.sin(x)


vjp_sin.defvjp(lambda x: (fnp.sin(x), x), lambda x, g: (2.0 * fnp.cos(x) * g,))


@fg.custom_jvp
def jvp_sin(x):
    return fnp.sin(x)


@jvp_sin.defjvp
def _jvp_sin_rule(primals, tangents):
    (x,), (t,) = primals, tangents
    return fnp.sin(x), 2.0 * fnp.cos(x) * t


X = np.linspace(-0.5, 1.0, 5)
FIRST = 2.0 * np.cos(X)  # the rule's derivative
SECOND = -2.0 * np.sin(X)  # its derivative

COMPOSITIONS = {
    "vmap(grad)": (lambda f: fg.vmap(fg.grad(f))(X), FIRST),
    "grad(sum vmap)": (lambda f: fg.grad(lambda x: fnp.sum(fg.vmap(f)(x)))(X), FIRST),
    "jacfwd(vmap)": (lambda f: np.diag(fg.jacfwd(fg.vmap(f))(X)), FIRST),
    "jacrev(vmap)": (lambda f: np.diag(fg.jacobian(fg.vmap(f))(X)), FIRST),
    "vmap(grad(grad))": (lambda f: fg.vmap(fg.grad(fg.grad(f)))(X), SECOND),
    "hessian(sum vmap)": (
        lambda f: np.diag(fg.hessian(lambda x: fnp.sum(fg.vmap(f)(x)))(X)), SECOND),
    "vmap alone": (lambda f: fg.vmap(f)(X), np.sin(X)),
}


@pytest.mark.parametrize("f", [vjp_sin, jvp_sin], ids=["custom_vjp", "custom_jvp"])
@pytest.mark.parametrize("composition", sorted(COMPOSITIONS))
def test_vmap_keeps_the_custom_rule(f, composition):
    run, expected = COMPOSITIONS[composition]
    np.testing.assert_allclose(run(f), expected, rtol=1e-12, atol=1e-12)
