"""The systems under comparison, each imported on first use and only if installed.

Every workload implements the same math once per system key in ``SYSTEMS``. A peer that is
not installed raises ``NotInstalled`` from its loader, which the harness turns into a
"not installed" cell; any other import failure becomes an "error: ..." cell.

>>> load('numpy').__name__
'numpy'
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
import types

#: Row order of every table. ``numpy`` is the hand-written reference with manual gradients.
SYSTEMS: tuple[str, ...] = ('numpy', 'funcgrad', 'replay', 'autograd', 'torch', 'jax',
                            'jax.jit')

LABELS: dict[str, str] = {
    'numpy': 'NumPy (manual)',
    'funcgrad': 'funcgrad',
    'replay': 'funcgrad replay',
    'autograd': 'HIPS autograd',
    'torch': 'PyTorch eager (CPU)',
    'jax': 'JAX eager',
    'jax.jit': 'JAX jit',
}


class NotInstalled(ImportError):
    """The peer's package cannot be imported because it is not installed."""


@functools.cache
def load(system: str) -> types.ModuleType | types.SimpleNamespace:
    """Import what ``system`` needs and return it (a module, or a namespace of modules).

    >>> fg = load('funcgrad')  # doctest: +SKIP
    >>> fg.fg.value_and_grad, fg.fnp.tanh  # doctest: +SKIP
    """
    if system == 'numpy':
        return _import('numpy')
    if system in ('funcgrad', 'replay'):  # replay: fg.replay of the same funcgrad code
        return types.SimpleNamespace(fg=_import('funcgrad'), fnp=_import('funcgrad.numpy'))
    if system == 'autograd':
        return types.SimpleNamespace(autograd=_import('autograd'), anp=_import('autograd.numpy'))
    if system == 'torch':
        return _import('torch')
    if system in ('jax', 'jax.jit'):
        jax = _import('jax')
        # Every float64 workload must really run in float64; float32 inputs stay float32.
        jax.config.update('jax_enable_x64', True)
        return types.SimpleNamespace(jax=jax, jnp=_import('jax.numpy'))
    raise KeyError(f'unknown system {system!r}; expected one of {SYSTEMS}')


def _import(name: str) -> types.ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        # Only the package itself missing means "not installed"; a missing dependency of an
        # installed package is a real error and is reported as such.
        if exc.name is not None and name.split('.')[0] == exc.name.split('.')[0]:
            raise NotInstalled(f'{name} is not installed') from exc
        raise


def installed(system: str) -> bool:
    """Whether ``system``'s package can be found, without importing it.

    >>> installed('numpy')
    True
    """
    package = {'jax.jit': 'jax', 'replay': 'funcgrad'}.get(system, system)
    return importlib.util.find_spec(package) is not None


def version(distribution: str) -> str:
    """The installed version of ``distribution``, or 'not installed'.

    >>> version('surely-not-a-distribution')
    'not installed'
    """
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return 'not installed'
