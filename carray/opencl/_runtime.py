"""The OpenCL runtime carray uses: one device, its context, in-order queue and buffer pool.

Chosen once, on first use: the device named by CARRAY_OPENCL_DEVICE (a substring of the device
or platform name, or "platform:device" indices such as "0:1"), else the first GPU, else the
first OpenCL device of any kind. pyopencl is imported here, lazily: `import carray` never does.
"""

import os
import threading

_runtime = None
_runtime_lock = threading.Lock()


class Runtime:
    """The device, context, in-order queue, memory pool and capabilities carray works with."""

    def __init__(self, cl, device):
        import pyopencl.tools as cl_tools

        self.cl = cl
        self.device = device
        self.name = device.name.strip()
        self.platform = device.platform.name.strip()
        self.context = cl.Context([device])
        # profiling on: autograd.profiler reads kernels' device times from their events (no
        # measurable cost per launch on PoCL)
        self.queue = cl.CommandQueue(self.context, device,
                                     properties=cl.command_queue_properties.PROFILING_ENABLE)
        self.pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(self.queue))
        self.fp64 = "cl_khr_fp64" in device.extensions or device.double_fp_config != 0
        self.max_alloc = device.max_mem_alloc_size
        self.max_group = min(device.max_work_group_size, 256)
        self.is_cpu = bool(device.type & cl.device_type.CPU)
        self.debug = int(os.environ.get("CARRAY_DEBUG", "0") or 0)

    def __repr__(self):
        return (f"<carray OpenCL device {self.name!r} on {self.platform!r}, "
                f"fp64={'yes' if self.fp64 else 'no'}>")

    def alloc(self, nbytes):
        """A pooled device buffer of at least nbytes (one byte for empty arrays).

        Raises MemoryError naming the size when the device cannot hold it."""
        if nbytes > self.max_alloc:
            raise MemoryError(f"cannot allocate {nbytes} bytes on OpenCL device {self.name!r}: "
                              f"its largest buffer is {self.max_alloc} bytes")
        try:
            return self.pool.allocate(nbytes if nbytes > 0 else 1)
        except self.cl.Error as e:
            self.pool.free_held()
            try:
                return self.pool.allocate(nbytes if nbytes > 0 else 1)
            except self.cl.Error:
                raise MemoryError(f"out of device memory allocating {nbytes} bytes on OpenCL "
                                  f"device {self.name!r} ({e})") from None


def _import_pyopencl():
    try:
        import pyopencl as cl
    except ImportError as e:
        raise ImportError(f"device='gpu' needs pyopencl, which is not installed ({e}); "
                          f"install it with: pip install carray[opencl]") from None
    return cl


def _all_devices(cl):
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        platforms = []
    out = []
    for p in platforms:
        try:
            out.extend(p.get_devices())
        except cl.Error:
            pass
    return platforms, out


def _choose(cl):
    """The device CARRAY_OPENCL_DEVICE names, else the first GPU, else the first device.

    Raises RuntimeError when there is no OpenCL device or the named one does not exist."""
    platforms, devices = _all_devices(cl)
    if not devices:
        raise RuntimeError("device='gpu' needs an OpenCL device, but no OpenCL platform or "
                           "device was found; install a driver (or pocl-binary-distribution "
                           "to run on the CPU)")
    wanted = os.environ.get("CARRAY_OPENCL_DEVICE", "").strip()
    if wanted:
        if ":" in wanted and all(part.isdigit() for part in wanted.split(":")):
            pi, di = (int(x) for x in wanted.split(":"))
            try:
                return platforms[pi].get_devices()[di]
            except (IndexError, cl.Error):
                pass
        for d in devices:
            if wanted.lower() in d.name.lower() or wanted.lower() in d.platform.name.lower():
                return d
        names = ", ".join(repr(d.name.strip()) for d in devices)
        raise RuntimeError(f"CARRAY_OPENCL_DEVICE={wanted!r} matches no OpenCL device; "
                           f"found {names}")
    for d in devices:
        if d.type & cl.device_type.GPU:
            return d
    return devices[0]


def runtime():
    """The Runtime, made on first call. ImportError without pyopencl, RuntimeError without a
    device."""
    global _runtime
    if _runtime is None:
        with _runtime_lock:     # threads' first uses at once must share one context
            if _runtime is None:
                cl = _import_pyopencl()
                _runtime = Runtime(cl, _choose(cl))
    return _runtime
