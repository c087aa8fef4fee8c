"""Where the GPU check computes: CuPy on a GPU, or a stand-in for it on the CPU (dry run).

Everything the check does on "the device" goes through a :class:`Backend`, so that the dry
run on a CPU walks the same code as the real run: moving arrays, synchronising, telling
whether a result stayed on the device, and PyTorch's device for its peer rows. The dry
run's device is the test suite's strict stand-in (``tests/standin.py``: a non-NumPy array
type that refuses Nodes, NumPy arrays beside its own and implicit conversion), so that it
walks funcgrad's device paths as CuPy would; plain NumPy where that file is missing.

>>> backend = numpy_backend()
>>> backend.on_device(backend.to_device([1.0, 2.0])), backend.device
(True, 'cpu')
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import pathlib
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Backend:
    """The array namespace the check runs on and how to reach it."""

    name: str                    # 'cupy'; in a dry run 'standin' or 'numpy'
    xp: ModuleType               # the array namespace (cupy or numpy)
    array_types: tuple[type, ...]  # what a result must be to have stayed on the device
    device: str                  # funcgrad's name for the device: 'cuda:0' or 'cpu'
    torch_device: str            # PyTorch's: 'cuda' or 'cpu'
    dry_run: bool
    _to_device: Callable[[Any], Any]
    _to_host: Callable[[Any], np.ndarray]
    sync: Callable[[], None]     # wait until the work queued on the device is done

    def to_device(self, value: Any) -> Any:
        """A copy of a NumPy array (or nested list) on the device, dtype kept."""
        return self._to_device(value)

    def to_host(self, value: Any) -> np.ndarray:
        """A NumPy copy of a device array (NumPy data passes through)."""
        if isinstance(value, self.array_types):
            return self._to_host(value)
        return np.asarray(value)

    def on_device(self, value: Any) -> bool:
        """Whether ``value`` is an array of the device's type."""
        return isinstance(value, self.array_types)


def numpy_backend() -> Backend:
    """NumPy standing in for CuPy: the dry run on a machine without a GPU."""
    # NumPy's 0-d results are NumPy scalars: NumPy data, on the CPU.
    return Backend('numpy', np, (np.ndarray, np.generic), 'cpu', 'cpu', True,
                   lambda a: np.array(a, copy=True), lambda a: np.array(a, copy=True),
                   lambda: None)


def cupy_backend() -> Backend:
    """CuPy on GPU 0; raises when CuPy or a GPU is missing."""
    import cupy  # only where a GPU is

    if cupy.cuda.runtime.getDeviceCount() < 1:
        raise RuntimeError('CuPy sees no GPU')
    cupy.cuda.Device(0).use()
    return Backend('cupy', cupy, (cupy.ndarray,), 'cuda:0', 'cuda', False,
                   cupy.asarray, cupy.asnumpy, cupy.cuda.runtime.deviceSynchronize)


def standin_backend() -> Backend:
    """The strict stand-in device of ``tests/standin.py``, registered with funcgrad."""
    tests = str(pathlib.Path(__file__).resolve().parents[2] / 'tests')
    if tests not in sys.path:
        sys.path.insert(0, tests)
    import standin  # the test suite's: benchmarks/ and tests/ ship together

    standin.register()
    return Backend('standin', standin.xp, (standin.StrictArray,), standin.DEVICE, 'cpu', True,
                   standin.put, standin.get, lambda: None)


def get(dry_run: bool, device: str = 'standin') -> Backend:
    """CuPy's backend, or in a dry run ``device``'s: 'standin' (NumPy where the stand-in
    cannot be imported) or 'numpy'."""
    if not dry_run:
        return cupy_backend()
    if device == 'standin':
        try:
            return standin_backend()
        except ImportError:
            pass
    return numpy_backend()


def _version(name: str) -> str:
    """The version of an importable package, or why it cannot be imported."""
    try:
        module = importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - a label: say why it is missing
        return f'not importable ({type(exc).__name__}: {exc})'
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return str(getattr(module, '__version__', 'version unknown'))


def describe(backend: Backend) -> dict[str, str]:
    """What the report names: the device, the drivers and every library's version."""
    stand_in = {'numpy': 'NumPy', 'standin': 'the strict stand-in device of tests/standin.py'}
    info = {
        'backend': backend.name + (f' (CPU dry run: {stand_in[backend.name]} stands in for '
                                   'CuPy)' if backend.dry_run else ''),
        'python': f'{platform.python_version()} ({sys.executable})',
        'numpy': np.__version__,
    }
    for name in ('attrs', 'pyrsistent', 'optree', 'pytest', 'hypothesis'):
        info[name] = _version(name)
    if backend.dry_run:
        info['device'] = f'CPU ({platform.processor() or platform.machine()}), no GPU'
    else:
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(0)
        name = props['name']
        info['device'] = name.decode() if isinstance(name, bytes) else str(name)
        info['device memory'] = f'{props["totalGlobalMem"] / 2**30:.0f} GiB'
        info['compute capability'] = f'{props["major"]}.{props["minor"]}'
        info['cupy'] = cupy.__version__
        info['CUDA runtime / driver'] = (f'{cupy.cuda.runtime.runtimeGetVersion()} / '
                                         f'{cupy.cuda.runtime.driverGetVersion()}')
        info['CUPY_TF32'] = os.environ.get('CUPY_TF32', 'unset')
    if backend.dry_run:  # importing PyTorch costs seconds; its version is enough here
        try:
            info['torch'] = importlib.metadata.version('torch')
        except importlib.metadata.PackageNotFoundError:
            info['torch'] = 'not installed'
        return info
    try:
        import torch

        info['torch'] = torch.__version__
        info['torch device'] = torch.cuda.get_device_name(0)
        info['torch TF32 matmul'] = str(torch.backends.cuda.matmul.allow_tf32)
    except Exception as exc:  # noqa: BLE001
        info['torch'] = f'not usable ({type(exc).__name__}: {exc})'
    return info
