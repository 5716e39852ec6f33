"""Launching kernels: setting their arguments and enqueueing them on the runtime's queue, with
pyopencl's cheapest calls (the per-launch host cost is what small ops pay), at most about
MAX_IN_FLIGHT of them queued at a time."""

import collections
import threading
import time

from carray.opencl import _profiling
from carray.opencl._runtime import runtime

# A cached kernel object is shared by every thread that launches it, and setting its arguments
# and enqueueing it are separate calls: each launch holds this lock across both, so two threads
# cannot swap each other's arguments.
LAUNCH_LOCK = threading.RLock()


def _set_generic(knl, pairs):
    for i in range(0, len(pairs), 2):
        knl.set_arg(pairs[i], pairs[i + 1])


# Kernel.set_arg on a bytes value tries other argument kinds first and costs ~6 us a call;
# pyopencl's one-call setters cost ~0.1 us: _set_arg_multi for buffers, _set_arg_buf_multi for
# by-value arguments given as bytes. Both take (index, value, index, value, ...).

def set_buffers(knl, pairs):
    """Set buffer arguments of knl: pairs = [index, buffer, index, buffer, ...]."""
    try:
        knl._set_arg_multi(tuple(pairs))
    except AttributeError:          # a pyopencl without it
        _set_generic(knl, pairs)


def set_bytes(knl, pairs):
    """Set by-value arguments of knl: pairs = [index, bytes, index, bytes, ...]."""
    try:
        knl._set_arg_buf_multi(tuple(pairs))
    except AttributeError:
        _set_generic(knl, pairs)


_cl_enqueue = None
_quiet = False          # see _quiet_enqueuer (False: not looked up yet)

# Backpressure: the host enqueues far faster than a device runs small kernels, so without a
# bound the in-order queue grows without end, and after a Ctrl-C the next read of a result
# waits for the whole backlog (minutes were seen). Every MARK_EVERY launches the launch's event
# is kept (and the queue flushed, so the device has it); when more than MAX_IN_FLIGHT launches
# lie after the oldest kept event, the host waits for that one. So at most
# MAX_IN_FLIGHT + MARK_EVERY - 1 kernels are queued or running when a launch returns, and a
# queue that keeps up never waits (its events are complete). 128 keeps the device fed (a kernel
# of a few microseconds each) and the wait cheap (16 marks: one flush per 16 launches).
MAX_IN_FLIGHT = 128
MARK_EVERY = 16
_marks = collections.deque()    # the kept events, oldest first, MARK_EVERY launches apart
_since_mark = 0                 # launches since the last kept event


def _wait(event):
    """Wait for event (a launch MAX_IN_FLIGHT launches back) to complete."""
    obs = _profiling.observer
    if obs is None or event.command_execution_status == 0:     # (0: CL_COMPLETE, no wait)
        event.wait()
        return
    t0 = time.perf_counter_ns()
    event.wait()
    obs.wait("clWaitForEvents (queue bound)", t0)


def _mark(queue, event):
    queue.flush()
    _marks.append(event)
    if len(_marks) > MAX_IN_FLIGHT // MARK_EVERY:
        try:
            old = _marks.popleft()
        except IndexError:          # another thread took it
            return
        _wait(old)


def _quiet_enqueuer():
    """A function (queue, knl, gsize, lsize) -> bool that enqueues knl by calling OpenCL's
    clEnqueueNDRangeKernel through ctypes without asking for an event (True when it was
    enqueued), or None where that entry point cannot be found.

    Why: pyopencl makes an Event for every launch, and on NVIDIA's driver creating and releasing
    the event costs more than the launch itself (11.5 us a launch with it, 5.1 without, on an
    H100); a training step makes hundreds of launches. The symbol is looked up through
    pyopencl's own extension module, so it is the OpenCL library (ICD loader) pyopencl uses."""
    try:
        import ctypes

        from pyopencl import _cl
        fn = ctypes.CDLL(_cl.__file__).clEnqueueNDRangeKernel
    except (ImportError, OSError, AttributeError):
        return None
    vp, size_t = ctypes.c_void_p, ctypes.c_size_t
    fn.restype = ctypes.c_int32
    fn.argtypes = [vp, vp, ctypes.c_uint32, vp, vp, vp, ctypes.c_uint32, vp, vp]
    sizes = {}      # (gsize, lsize) -> (dims, global, local) as C arrays, made once

    def quiet(queue, knl, gsize, lsize):
        s = sizes.get((gsize, lsize))
        if s is None:
            if len(sizes) >= 4096:
                sizes.clear()
            n = len(gsize)
            s = sizes[(gsize, lsize)] = (n, (size_t * n)(*gsize),
                                         None if lsize is None else (size_t * n)(*lsize))
        return fn(queue.int_ptr, knl.int_ptr, s[0], None, s[1], s[2], 0, None, None) == 0
    return quiet


def enqueue(queue, knl, gsize, lsize):
    """Enqueue knl (its arguments set); no wait list, no keyword handling; every launch goes
    through here, which bounds the queue (see MAX_IN_FLIGHT). Launches whose event nobody needs
    (all but every MARK_EVERY-th, while no profiler observes) go through _quiet_enqueuer's
    event-less call; the others, and any launch the quiet call could not enqueue (so that the
    error is pyopencl's own), through pyopencl._cl. pyopencl is imported on first use, as
    everywhere in this package."""
    global _cl_enqueue, _quiet, _since_mark
    if _cl_enqueue is None:
        from pyopencl._cl import enqueue_nd_range_kernel as _cl_enqueue
        _quiet = _quiet_enqueuer()
    obs = _profiling.observer
    _since_mark += 1
    if obs is None and _since_mark < MARK_EVERY and _quiet is not None \
            and _quiet(queue, knl, gsize, lsize):
        return
    event = _cl_enqueue(queue, knl, gsize, lsize, None, None, False, False)
    if obs is not None:
        obs.kernel(knl, event)
    if _since_mark >= MARK_EVERY:
        _since_mark = 0
        _mark(queue, event)


def launch(knl, items, args, group=None):
    """Enqueue knl over `items` work items (rounded up to whole work groups); no wait.

    args: buffers and by-value arguments (bytes), in the kernel's order. Every argument is set
    on every launch, buffers in one call and by-value ones in another (both cheap)."""
    rt = runtime()
    g = group or rt.max_group
    bufs = []
    vals = []
    for i, a in enumerate(args):
        if type(a) is bytes:
            vals.append(i)
            vals.append(a)
        else:
            bufs.append(i)
            bufs.append(a)
    with LAUNCH_LOCK:
        if bufs:
            set_buffers(knl, bufs)
        if vals:
            set_bytes(knl, vals)
        enqueue(rt.queue, knl, (-(-items // g) * g,), (g,))
