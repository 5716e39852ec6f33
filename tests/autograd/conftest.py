"""Shared setup for autograd's tests: import the package under test and seed randomness.

Run from the repository root or from tests/ (`python -m pytest autograd`). When the checkout holds
an in-place build (`python setup.py build_ext --inplace`), the repository root goes first on
sys.path so `import carray` / `import autograd` find it (and not the tests/carray folder, which
would otherwise be picked up as a namespace package). Without one, the installed package is used:
a clean checkout's carray/ has sources only, nothing compiled.
"""

import importlib.machinery
import os
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _has_inplace_build(root):
    """Whether root/carray/core holds the compiled extension modules (an in-place build)."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    try:
        names = os.listdir(os.path.join(root, "carray", "core"))
    except OSError:
        return False
    return any(n.startswith("_array.") and n.endswith(suffixes) for n in names)


if _has_inplace_build(_ROOT) and sys.path[:1] != [_ROOT]:
    sys.path.insert(0, _ROOT)
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(1, _HERE)  # so tests in subfolders can `from _check import ...`

import pytest  # noqa: E402

import autograd  # noqa: E402


@pytest.fixture(autouse=True)
def _seeded():
    """Every test starts from the same global seed and with grad mode on."""
    autograd.manual_seed(0)
    autograd.set_grad_enabled(True)
    yield


_HAVE_GPU = []


def have_gpu():
    """True when carray finds an OpenCL device for device="gpu" (checked once)."""
    if not _HAVE_GPU:
        try:
            import carray
            carray.opencl
            _HAVE_GPU.append(True)
        except Exception:  # no pyopencl, or no OpenCL device
            _HAVE_GPU.append(False)
    return _HAVE_GPU[0]


@pytest.fixture(params=["cpu", "gpu"])
def device(request):
    """Each device autograd can run on: "cpu" always, "gpu" when carray.opencl finds a device
    (skipped otherwise)."""
    if request.param == "gpu" and not have_gpu():
        pytest.skip("no OpenCL device")
    return request.param
