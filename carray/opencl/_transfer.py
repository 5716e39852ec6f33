"""The one copy on the device: dst[...] = src with broadcasting and casting, between device
arrays, from the host (upload) and to the host (download, the one place that waits), and
finish (the wait for the whole queue). Each reports to a running profiler (_profiling)."""

import atexit
import time

from carray.opencl import _elementwise, _nn, _profiling
from carray.opencl._runtime import runtime


def _drop_leading_ones(src, ndim):
    k = src.ndim - ndim
    if k > 0 and all(n == 1 for n in src.shape[:k]):
        return src.reshape(src.shape[k:])
    return src


def download(a):
    """A new C-contiguous host Array with a's elements (waits for the queue)."""
    import carray

    rt = runtime()
    if not a.flags.c_contiguous:
        a = a.copy()
    buf, off, num, shape, _ = a._cl()
    host = carray.empty(shape, dtype=a.dtype)
    flag = _nn.read_flag_with_next_read()   # kernels' index checks, read with this read
    obs = _profiling.observer
    t0 = time.perf_counter_ns() if obs is not None else 0
    if host.size:
        event = rt.cl.enqueue_copy(rt.queue, _raw(host), buf,
                                   src_offset=off * a.itemsize, is_blocking=True)
        if obs is not None:
            obs.copy("DtoH", host.size * host.itemsize, event, True, t0)
    elif flag is not None:
        rt.queue.finish()
        if obs is not None:
            obs.wait("clFinish", t0)
    _nn.check_pending(flag)
    return host


_pinned = []        # the mapped host arrays of pinned_empty, unmapped at exit (see there)


def pinned_empty(n, dtype):
    """A new 1-d host Array of n elements of dtype in page-locked ("pinned") memory, which the
    device copies to and from at full speed: an OpenCL buffer made with ALLOC_HOST_PTR and
    mapped once, handed to carray through DLPack (pyopencl maps it as a NumPy array; NumPy comes
    with pyopencl). Falls back to ordinary host memory where the driver cannot map one. The
    mapping lives until the interpreter exits, where it is undone while the device's context is
    still alive."""
    import carray

    dtype = carray.dtype(dtype)
    rt = runtime()
    cl = rt.cl
    if n:
        try:
            import numpy
            buf = cl.Buffer(rt.context, cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR,
                            n * dtype.itemsize)
            mapped, _ = cl.enqueue_map_buffer(rt.queue, buf,
                                              cl.map_flags.READ | cl.map_flags.WRITE, 0, (n,),
                                              numpy.dtype(dtype.name), is_blocking=True)
            if not _pinned:
                atexit.register(_unmap_pinned)
            _pinned.append(mapped)
            return carray.from_dlpack(mapped)
        except (cl.Error, ImportError, TypeError, ValueError, BufferError):
            pass
    return carray.empty(n, dtype=dtype)


def _unmap_pinned():
    """Undo pinned_empty's mappings before the context and queue go away at exit."""
    queue = runtime().queue
    while _pinned:
        mapped = _pinned.pop()
        try:
            mapped.base.release(queue)
        except Exception:       # already released, or the driver refuses: exit regardless
            pass
    queue.finish()


def download_async(a, host):
    """Queue host[...] = a for a C-contiguous device array `a` and a C-contiguous host array
    `host` of its size and dtype, without waiting; returns the copy's pyopencl Event (None for
    an empty array). host must stay alive and unread until the event completes (event.wait(),
    or its command_execution_status reads complete). ValueError for other shapes or layouts."""
    if not (a.flags.c_contiguous and host.flags.c_contiguous) or a.size != host.size \
            or a.dtype != host.dtype or host.device != "cpu":
        raise ValueError(f"download_async: needs a C-contiguous device array and a C-contiguous "
                         f"host array of the same size and dtype, got {a.shape} {a.dtype} and "
                         f"{host.shape} {host.dtype} on {host.device!r}")
    if not a.size:
        return None
    rt = runtime()
    buf, off, _, _, _ = a._cl()
    obs = _profiling.observer
    t0 = time.perf_counter_ns() if obs is not None else 0
    event = rt.cl.enqueue_copy(rt.queue, _raw(host), buf,
                               src_offset=off * a.itemsize, is_blocking=False)
    rt.queue.flush()        # submit it now: the caller polls the event
    if obs is not None:
        obs.copy("DtoH", host.size * host.itemsize, event, False, t0)
    return event


def _raw(host):
    """The bytes of a C-contiguous host array as a writable memoryview (bfloat16, which has no
    buffer format, through its uint16 bits)."""
    if host.dtype == "bfloat16":
        host = host.view("uint16")
    return memoryview(host).cast("B")


def upload(dst, host):
    """dst[...] = host for a C-contiguous device dst and a C-contiguous host array of its
    shape and dtype (queued, no wait: the queue keeps `host` alive until the copy ran)."""
    rt = runtime()
    buf, off, _, _, _ = dst._cl()
    if host.size:
        obs = _profiling.observer
        t0 = time.perf_counter_ns() if obs is not None else 0
        event = rt.cl.enqueue_copy(rt.queue, buf, _raw(host),
                                   dst_offset=off * dst.itemsize, is_blocking=False)
        if obs is not None:
            obs.copy("HtoD", host.size * host.itemsize, event, False, t0)


def finish():
    """Wait until every command queued on the device has run (the queue's finish)."""
    rt = runtime()
    obs = _profiling.observer
    t0 = time.perf_counter_ns() if obs is not None else 0
    rt.queue.finish()
    if obs is not None:
        obs.wait("clFinish", t0)


def copy_into(dst, src):
    """dst[...] = src (either may be on the host, at least one on the device), broadcasting src
    to dst's shape and casting to dst's dtype. ValueError when src does not broadcast."""
    import carray

    shape = dst.shape
    s = _drop_leading_ones(src, dst.ndim)
    try:
        b = carray.broadcast_to(s, shape)
    except ValueError:
        raise ValueError(f"could not broadcast input array from shape {src.shape} into shape "
                         f"{shape}") from None
    if dst.size == 0:
        return
    dbuf = dst._cl()[0]
    sbuf = s._cl()[0]
    if dbuf is not None and sbuf is not None:
        if dbuf is sbuf and dst._cl()[1:] != b._cl()[1:]:
            s = s.copy()        # overlapping views of one buffer: read everything first
        _elementwise.run(_elementwise.CAST, 0, s.dtype.num, dst, [s])
    elif dbuf is not None:
        if s.ndim == 0:
            _elementwise.run(_elementwise.CAST, 0, s.dtype.num, dst, [s])
            return
        host = carray.empty(shape, dtype=dst.dtype)
        host[...] = b
        if dst.flags.c_contiguous:
            upload(dst, host)
        else:
            tmp = carray.empty(shape, dtype=dst.dtype, device="gpu")
            upload(tmp, host)
            _elementwise.run(_elementwise.CAST, 0, dst.dtype.num, dst, [tmp])
    else:
        dst[...] = download(s)
