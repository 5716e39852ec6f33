"""autograd.accelerator: the current accelerator, as torch.accelerator. autograd's accelerator
is the OpenCL device "gpu" (also called "cuda"; see autograd.gpu)."""

from autograd import gpu
from autograd.tensor import device

__all__ = ["is_available", "current_accelerator", "device_count", "synchronize",
           "current_device_index", "set_device_index"]


def is_available():
    """True when an OpenCL device can be used (never raises)."""
    return gpu.is_available()


def current_accelerator(check_available=False):
    """autograd.device('gpu') when an OpenCL device is available, else None (also when
    check_available is set, as torch: the device then exists and is available)."""
    return device("gpu") if gpu.is_available() else None


def device_count():
    """The number of accelerators: 1 with an OpenCL device, else 0."""
    return gpu.device_count()


def synchronize(device=None):
    """Wait for every queued kernel of the OpenCL device to finish (RuntimeError without one)."""
    gpu.synchronize(device)


def current_device_index():
    """0: there is one accelerator."""
    return 0


def set_device_index(device):
    """Select the accelerator; only index 0 exists (RuntimeError for another)."""
    gpu.set_device(device)
