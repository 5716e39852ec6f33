"""autograd.gpu, also importable as autograd.cuda: the OpenCL device, as torch.cuda.

"cuda" is another name for carray's OpenCL device "gpu" (as ROCm's PyTorch names AMD GPUs
"cuda"), so a PyTorch program's `torch.cuda.is_available()`, `device="cuda"`, `.cuda()` and
`torch.cuda.synchronize()` run unchanged on any OpenCL device. The devices are numbered as CUDA's
(device_count(): the GPUs, or those CARRAY_OPENCL_DEVICE names); a process uses one of them,
chosen before its first GPU operation: device 0 by default, set_device(i), a first `"cuda:i"`, or
init_process_group under mpiexec (one GPU per local rank). Several GPUs are used as with PyTorch's
DistributedDataParallel: one process per GPU.

    if autograd.cuda.is_available():
        x = autograd.randn(3, device="cuda")      # x.is_cuda, x.device == "gpu"
"""

import importlib

import carray
from autograd import amp  # noqa: F401  (autograd.cuda.amp, as torch.cuda.amp)
from autograd.factories import get_rng_state as _get_global_state
from autograd.factories import manual_seed as _seed_global
from autograd.factories import set_rng_state as _set_global_state
from autograd.tensor import device as _device

__all__ = ["is_available", "is_initialized", "device_count", "current_device", "set_device",
           "get_device_name", "synchronize", "manual_seed", "manual_seed_all",
           "memory_allocated", "memory_reserved", "empty_cache", "device",
           # checkpoints (h10): the RNG state, as torch.cuda's
           "get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all"]

_checked = None      # the answer of is_available, once found


def is_available():
    """True when an OpenCL device can be used (pyopencl is installed and finds a device);
    False otherwise, never raising. It does not make the device's context, so set_device may
    still choose the device afterwards."""
    global _checked
    if _checked is None:
        try:
            _checked = _opencl().device_count() > 0
        except Exception:    # ImportError without pyopencl, RuntimeError or a pyopencl error
            _checked = False  # without a device or driver: "not available", as torch.cuda
    return _checked


def is_initialized():
    """True when the OpenCL device this process uses has been set up (its first use)."""
    return _runtime_made()


def _runtime_made():
    return _opencl().is_initialized()


def _opencl():
    """The carray.opencl package without making the device's runtime (the attribute
    `carray.opencl` makes it), imported on first use so `import autograd` stays light."""
    return importlib.import_module("carray.opencl")


def device_count():
    """The number of OpenCL devices (GPUs, or those CARRAY_OPENCL_DEVICE names); 0 when none
    is available."""
    return _opencl().device_count() if is_available() else 0


def _runtime():
    """carray's OpenCL runtime; RuntimeError naming the cause when there is none."""
    try:
        return carray.opencl.runtime()
    except ImportError as e:
        raise RuntimeError(f"no OpenCL GPU is available: {e}") from None


def _index(d):
    """The device ordinal of d (None or -1: the current device; an int, 'cuda', 'cuda:1',
    autograd.device); RuntimeError for an ordinal that does not exist, ValueError for a CPU
    device."""
    if d is None:
        return current_device()
    if isinstance(d, int):
        index = d
    else:
        d = _device(d)
        if d.type != "gpu":
            raise ValueError(f"Expected a cuda device, but got: {d}")
        index = current_device() if d.index is None else d.index
    if index == -1:
        return current_device()
    count = device_count()
    if not 0 <= index < count:
        raise RuntimeError(f"invalid device ordinal {index}: {count} OpenCL "
                           f"device{'s' if count != 1 else ''} here")
    return index


def _is_current(d):
    """True when d names the device this process uses (others hold none of its memory)."""
    return _index(d) == current_device()


def current_device():
    """The ordinal of the device this process uses (0 unless set_device chose another)."""
    return _opencl().selected()


def set_device(device):
    """Use device `device` (an ordinal, 'cuda:1', autograd.device) in this process. Call it
    before the first GPU operation: a process uses one device (RuntimeError naming both
    devices otherwise); an ordinal that does not exist raises RuntimeError."""
    _opencl().select(_index(device))


def get_device_name(device=None):
    """The OpenCL device's name (e.g. 'NVIDIA GeForce RTX 3090', 'pthread-...' for PoCL).
    RuntimeError when no OpenCL device is available or the ordinal does not exist."""
    index = _index(device)
    if index == current_device() and _runtime_made():
        return _runtime().name
    return _opencl().device_name(index)


def synchronize(device=None):
    """Wait until every queued OpenCL command has finished (the queue's finish()). Timing GPU
    work needs this, since ops only enqueue kernels. RuntimeError without a device."""
    if _is_current(device) and _runtime_made():
        _opencl().finish()      # (a "clFinish" row in autograd.profiler)


def manual_seed(seed):
    """Seed the random numbers of the GPU. autograd has one generator for every device (the
    same seed gives the same numbers on cpu and gpu), so this seeds the global generator, as
    autograd.manual_seed does."""
    _seed_global(seed)


def manual_seed_all(seed):
    """manual_seed(seed) (there is one device)."""
    _seed_global(seed)


# -- RNG state (checkpoints, h10) ------------------------------------------------------------

def get_rng_state(device="cuda"):
    """The random state of the GPU: that of the global generator, which every device shares
    (autograd.get_rng_state()). RuntimeError for a device other than the one GPU."""
    _index(device)
    return _get_global_state()


def set_rng_state(new_state, device="cuda"):
    """Restore the GPU's random state from get_rng_state(): the global generator's
    (TypeError for anything else). RuntimeError for a device other than the one GPU."""
    _index(device)
    _set_global_state(new_state)


def get_rng_state_all():
    """[get_rng_state()]: one state per device (there is one)."""
    return [get_rng_state()]


def set_rng_state_all(new_states):
    """set_rng_state of each state in new_states, one per device (there is one)."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def memory_allocated(device=None):
    """Bytes of device memory held by live arrays: pyopencl's MemoryPool.active_bytes of the
    pool carray allocates from (sizes as requested; the pool rounds blocks up). 0 when no
    OpenCL device is available."""
    if not is_available() or not _is_current(device) or not _runtime_made():
        return 0
    return int(_runtime().pool.active_bytes)


def memory_reserved(device=None):
    """Bytes the pool holds from the driver: live blocks plus cached free ones (pyopencl's
    MemoryPool.managed_bytes). 0 when no OpenCL device is available."""
    if not is_available() or not _is_current(device) or not _runtime_made():
        return 0
    return int(_runtime().pool.managed_bytes)


def empty_cache():
    """Give the pool's cached free blocks back to the driver (live arrays keep theirs).
    Nothing happens when no OpenCL device is available."""
    if is_available() and _runtime_made():
        _runtime().free_held()


class device:
    """torch.cuda.device(d): a context manager selecting device d. A process uses one device,
    so entering it selects d before the first GPU operation and afterwards only checks that d is
    the device in use (RuntimeError otherwise)."""

    def __init__(self, device):
        self.idx = _index(device)

    def __enter__(self):
        set_device(self.idx)
        return self

    def __exit__(self, *exc):
        return False
