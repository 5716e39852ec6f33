"""autograd.gpu, also importable as autograd.cuda: the OpenCL device, as torch.cuda.

"cuda" is another name for carray's OpenCL device "gpu" (as ROCm's PyTorch names AMD GPUs
"cuda"), so a PyTorch program's `torch.cuda.is_available()`, `device="cuda"`, `.cuda()` and
`torch.cuda.synchronize()` run unchanged on any OpenCL device. There is one such device: the
one carray picks (CARRAY_OPENCL_DEVICE, else the first GPU, else the first OpenCL device).

    if autograd.cuda.is_available():
        x = autograd.randn(3, device="cuda")      # x.is_cuda, x.device == "gpu"
"""

import carray
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
    False otherwise, never raising."""
    global _checked
    if _checked is None:
        try:
            carray.opencl.runtime()
            _checked = True
        except Exception:    # ImportError without pyopencl, RuntimeError or a pyopencl error
            _checked = False  # without a device or driver: "not available", as torch.cuda
    return _checked


def is_initialized():
    """True when the OpenCL device is available (it is set up by is_available's first call)."""
    return bool(_checked)


def device_count():
    """1 when the OpenCL device is available, else 0 (carray uses one device)."""
    return 1 if is_available() else 0


def _runtime():
    """carray's OpenCL runtime; RuntimeError naming the cause when there is none."""
    try:
        return carray.opencl.runtime()
    except ImportError as e:
        raise RuntimeError(f"no OpenCL GPU is available: {e}") from None


def _index(d):
    """The device number of d (None, an int, 'cuda', 'cuda:0', autograd.device); RuntimeError
    for a device other than the one GPU, ValueError for a CPU device."""
    if d is None:
        return 0
    if isinstance(d, int):
        index = d
    else:
        d = _device(d)
        if d.type != "gpu":
            raise ValueError(f"Expected a cuda device, but got: {d}")
        index = d.index or 0
    if index not in (0, -1):
        raise RuntimeError(f"invalid device ordinal {index}: autograd has one OpenCL GPU "
                           f"(index 0)")
    return 0


def current_device():
    """The index of the current device: always 0 (there is one)."""
    return 0


def set_device(device):
    """Select the device: only device 0 ('cuda', 'cuda:0', 0) exists, so this only checks.
    RuntimeError for another index."""
    _index(device)


def get_device_name(device=None):
    """The OpenCL device's name (e.g. 'NVIDIA GeForce RTX 3090', 'pthread-...' for PoCL).
    RuntimeError when no OpenCL device is available."""
    _index(device)
    return _runtime().name


def synchronize(device=None):
    """Wait until every queued OpenCL command has finished (the queue's finish()). Timing GPU
    work needs this, since ops only enqueue kernels. RuntimeError without a device."""
    _index(device)
    carray.opencl.finish()      # (a "clFinish" row in autograd.profiler)


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
    _index(device)
    if not is_available():
        return 0
    return int(_runtime().pool.active_bytes)


def memory_reserved(device=None):
    """Bytes the pool holds from the driver: live blocks plus cached free ones (pyopencl's
    MemoryPool.managed_bytes). 0 when no OpenCL device is available."""
    _index(device)
    if not is_available():
        return 0
    return int(_runtime().pool.managed_bytes)


def empty_cache():
    """Give the pool's cached free blocks back to the driver (live arrays keep theirs).
    Nothing happens when no OpenCL device is available."""
    if is_available():
        _runtime().pool.free_held()


class device:
    """torch.cuda.device(d): a context manager selecting device d; there is one device, so it
    only checks d (RuntimeError for another index)."""

    def __init__(self, device):
        self.idx = _index(device)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
