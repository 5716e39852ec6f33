"""autograd.backends.opencl: autograd's own GPU backend (carray's OpenCL), named "gpu" and
also "cuda"."""

from autograd import gpu

__all__ = ["is_available", "is_built", "device_name"]


def is_available():
    """True when pyopencl finds an OpenCL device (never raises)."""
    return gpu.is_available()


def is_built():
    """True: the OpenCL backend is part of carray (it needs pyopencl at run time)."""
    return True


def device_name():
    """The OpenCL device's name (RuntimeError without one)."""
    return gpu.get_device_name()
