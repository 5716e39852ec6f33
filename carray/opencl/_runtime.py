"""The OpenCL runtime carray uses: one device per process, its context, in-order queue and pool.

The devices a process may use are numbered (ordinals, as CUDA numbers GPUs): those
CARRAY_OPENCL_DEVICE names (a substring of the device or platform name, or "platform:device"
indices such as "0:1"), else every GPU, else every OpenCL device of any kind. The runtime is made
on first use, on ordinal 0 unless select(ordinal) chose another before (autograd.cuda.set_device,
or init_process_group picking one GPU per local rank). pyopencl is imported here, lazily:
`import carray` never does.
"""

import operator
import os
import threading
import warnings

from carray.opencl._alloc import PoolAlloc

_ZERO_BYTE = b"\0"          # the pattern of the fill that backs a new buffer
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
        # a deferred allocator, with new blocks faulted in by fault_in: pyopencl's
        # ImmediateAllocator faults them in with clEnqueueMigrateMemObjects, which crashes
        # NVIDIA's driver (SIGSEGV in its worker thread) when other threads copy to or from the
        # device meanwhile
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)    # "pools expect non-deferred ..."
            self.pool = cl_tools.MemoryPool(cl_tools.DeferredAllocator(self.context))
        self.fp64 = "cl_khr_fp64" in device.extensions or device.double_fp_config != 0
        self.max_alloc = device.max_mem_alloc_size
        self.max_group = min(device.max_work_group_size, 256)
        self.is_cpu = bool(device.type & cl.device_type.CPU)
        # cp.async (global -> local copies that bypass registers): NVIDIA compute capability 8.0+
        self.async_copies = _nv_compute_capability(cl, device) >= (8, 0)
        self.debug = int(os.environ.get("CARRAY_DEBUG", "0") or 0)
        # alloc without a Python frame per call: the pool's allocate for the sizes it takes as
        # they are, checked_alloc (below) for the rest
        self.alloc = PoolAlloc(self.pool, self.max_alloc, self.checked_alloc, self.fault_in)

    def __repr__(self):
        return (f"<carray OpenCL device {self.name!r} on {self.platform!r}, "
                f"fp64={'yes' if self.fp64 else 'no'}>")

    def checked_alloc(self, nbytes):
        """A pooled device buffer of at least nbytes (one byte for empty arrays), backed by
        device memory: what self.alloc(nbytes) returns (a _alloc.PoolAlloc, which calls this
        for an empty array, a size beyond the largest buffer and a failed allocation). Frees
        the blocks the pool holds and tries again before giving up.

        Raises MemoryError naming the size when the device cannot hold it."""
        if nbytes > self.max_alloc:
            raise MemoryError(f"cannot allocate {nbytes} bytes on OpenCL device {self.name!r}: "
                              f"its largest buffer is {self.max_alloc} bytes")
        n = nbytes if nbytes > 0 else 1
        for _attempt in range(2):      # the second after freeing held blocks
            try:
                buf = self.pool.allocate(n)
                self._back(buf)
                return buf
            except self.cl.Error as e:
                error = e
                buf = None
                self.free_held()
        raise MemoryError(f"out of device memory allocating {nbytes} bytes on OpenCL "
                          f"device {self.name!r} ({error})")

    def free_held(self):
        """Give the blocks the pool holds (free ones, kept for reuse) back to the driver."""
        self.pool.free_held()
        self.alloc.sync()

    def fault_in(self, buf):
        """Whether the device now backs buf (a block the pool has just made) with memory:
        False when it has none left (self.alloc then calls checked_alloc)."""
        try:
            self._back(buf)
            return True
        except self.cl.Error:
            return False

    def _back(self, buf):
        # a 1-byte fill: the driver gives a buffer its memory at its first use, and reports a
        # shortage there (MEM_OBJECT_ALLOCATION_FAILURE from the enqueue, not later)
        self.cl.enqueue_fill_buffer(self.queue, buf, _ZERO_BYTE, 0, 1)


def _nv_compute_capability(cl, device):
    """(major, minor) of an NVIDIA device (cl_nv_device_attribute_query), else (0, 0)."""
    if "cl_nv_device_attribute_query" not in device.extensions:
        return (0, 0)
    try:
        return (device.compute_capability_major_nv, device.compute_capability_minor_nv)
    except (AttributeError, cl.Error):
        return (0, 0)


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


_found = {}     # CARRAY_OPENCL_DEVICE's value -> the devices it leaves (enumerated once)


def _candidates(cl):
    """The devices a process may use, in ordinal order (see the module docstring).

    Raises RuntimeError when there is no OpenCL device or CARRAY_OPENCL_DEVICE names none."""
    wanted = os.environ.get("CARRAY_OPENCL_DEVICE", "").strip()
    if wanted not in _found:
        _found[wanted] = _enumerate(cl, wanted)
    return _found[wanted]


def _enumerate(cl, wanted):
    """_candidates' work: every device, filtered by CARRAY_OPENCL_DEVICE's value `wanted`."""
    platforms, devices = _all_devices(cl)
    if not devices:
        raise RuntimeError("device='gpu' needs an OpenCL device, but no OpenCL platform or "
                           "device was found; install a driver (or pocl-binary-distribution "
                           "to run on the CPU)")
    if wanted:
        if ":" in wanted and all(part.isdigit() for part in wanted.split(":")):
            pi, di = (int(x) for x in wanted.split(":"))
            try:
                return [platforms[pi].get_devices()[di]]
            except (IndexError, cl.Error):
                pass
        named = [d for d in devices
                 if wanted.lower() in d.name.lower() or wanted.lower() in d.platform.name.lower()]
        if named:
            return named
        names = ", ".join(repr(d.name.strip()) for d in devices)
        raise RuntimeError(f"CARRAY_OPENCL_DEVICE={wanted!r} matches no OpenCL device; "
                           f"found {names}")
    gpus = [d for d in devices if d.type & cl.device_type.GPU]
    return gpus or devices


_selected = 0       # the ordinal the runtime is (or will be) made on
_chosen = False     # whether select() chose it (suggest() then leaves it)


def device_count():
    """The number of devices a process may select (ordinals 0 .. count - 1).

    ImportError without pyopencl, RuntimeError without an OpenCL device."""
    return len(_candidates(_import_pyopencl()))


def device_name(ordinal):
    """The name of device `ordinal` (without making a runtime for it). IndexError when out of
    range, ImportError without pyopencl, RuntimeError without an OpenCL device."""
    devices = _candidates(_import_pyopencl())
    if not 0 <= ordinal < len(devices):
        raise IndexError(f"device ordinal {ordinal} out of range: {len(devices)} OpenCL "
                         f"device{'s' if len(devices) != 1 else ''}")
    return devices[ordinal].name.strip()


def is_initialized():
    """True once this process's runtime (context, queue) has been made."""
    return _runtime is not None


def selected():
    """The ordinal of the device this process uses (made or about to be made)."""
    return _selected


def select(ordinal):
    """Use device `ordinal` in this process. Before the runtime exists this chooses the device
    it is made on; afterwards only the device in use may be named.

    TypeError for a non-integer, RuntimeError for an ordinal out of range or, once the runtime
    exists, for another device than the one in use (one device per process)."""
    global _selected, _chosen
    try:
        ordinal = operator.index(ordinal)
    except TypeError:
        raise TypeError(f"device ordinal must be an int, not {type(ordinal).__name__}") from None
    with _runtime_lock:
        if _runtime is not None:
            if ordinal != _selected:
                raise RuntimeError(
                    f"this process already uses OpenCL device {_selected} "
                    f"({_runtime.name!r}); carray uses one device per process, so choose "
                    f"device {ordinal} before the first GPU operation (e.g. "
                    f"autograd.cuda.set_device({ordinal}) at the start, or one process per "
                    f"device with mpiexec)")
            return
        count = len(_candidates(_import_pyopencl()))
        if not 0 <= ordinal < count:
            raise RuntimeError(f"invalid device ordinal {ordinal}: {count} OpenCL "
                               f"device{'s' if count != 1 else ''} "
                               f"(ordinals 0..{count - 1})")
        _selected = ordinal
        _chosen = True


def suggest(ordinal):
    """select(ordinal) unless this process already chose a device (select) or made its
    runtime: how init_process_group spreads the ranks of one machine over its devices. Returns
    the ordinal in use."""
    if not _chosen and _runtime is None:
        select(ordinal)
    return _selected


def runtime():
    """The Runtime, made on first call. ImportError without pyopencl, RuntimeError without a
    device."""
    global _runtime
    if _runtime is None:
        with _runtime_lock:     # threads' first uses at once must share one context
            if _runtime is None:
                cl = _import_pyopencl()
                _runtime = Runtime(cl, _candidates(cl)[_selected])
    return _runtime
