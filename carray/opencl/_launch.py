"""Launching kernels: setting their arguments and enqueueing them on the runtime's queue, with
pyopencl's cheapest calls (the per-launch host cost is what small ops pay), at most about
MAX_IN_FLIGHT of them queued at a time."""

import collections
import os
import time

from carray.opencl import _clcall, _profiling
from carray.opencl._runtime import runtime

# A cached kernel object is shared by every thread that launches it, and setting its arguments
# and enqueueing it are separate calls: each launch holds this lock across both, so two threads
# cannot swap each other's arguments. A reentrant lock (as threading.RLock) whose holder C code
# can read (see _clcall.LaunchLock.free_for_launch).
LAUNCH_LOCK = _clcall.LaunchLock()


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
_quiet = False          # see _quiet_launcher (False: not looked up yet)

# Backpressure: the host enqueues far faster than a device runs small kernels, so without a
# bound the in-order queue grows without end, and after a Ctrl-C the next read of a result
# waits for the whole backlog (minutes were seen). Every MARK_EVERY launches the launch's event
# is kept (and the queue flushed, so the device has it); when more than MAX_IN_FLIGHT launches
# lie after the oldest kept event, the host waits for that one. So at most
# MAX_IN_FLIGHT + MARK_EVERY - 1 kernels are queued or running when a launch returns, and a
# queue that keeps up never waits (its events are complete). 128 keeps the device fed (a kernel
# of a few microseconds each) and the wait cheap (4 marks: one flush per 32 launches; the marked
# launch goes through pyopencl with its event, ~6 us more on NVIDIA's driver: a 16-element add
# took 6.26 us a launch with a mark every 16 launches, 5.86 with one every 32, on an H200).
MAX_IN_FLIGHT = 128
MARK_EVERY = 32
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


def _quiet_launcher():
    """A function (queue, knl, bufs, vals, gsize, lsize) -> bool that sets knl's arguments and
    enqueues it through carray.opencl._clcall (OpenCL's C entry points called directly, no
    event made) and tells whether it was enqueued; None where those entry points cannot be had.
    They are looked up through pyopencl's own extension module, so they are the OpenCL library
    (ICD loader) pyopencl uses. CARRAY_OPENCL_LAUNCH=pyopencl turns it off (every launch then
    through pyopencl, with its event)."""
    if os.environ.get("CARRAY_OPENCL_LAUNCH") == "pyopencl":
        return None
    try:
        import ctypes

        from pyopencl import _cl

        lib = ctypes.CDLL(_cl.__file__)
        _clcall.bind(ctypes.cast(lib.clSetKernelArg, ctypes.c_void_p).value,
                     ctypes.cast(lib.clEnqueueNDRangeKernel, ctypes.c_void_p).value)
    except (ImportError, OSError, AttributeError):
        return None
    return _clcall.quiet


def _init():
    """Import pyopencl's enqueue and look up the C launch path (first launch)."""
    global _cl_enqueue, _quiet
    from pyopencl._cl import enqueue_nd_range_kernel as _cl_enqueue
    _quiet = _quiet_launcher()


def enqueue(queue, knl, gsize, lsize):
    """Enqueue knl (its arguments set) through pyopencl._cl directly, keeping its event: no
    wait list, no keyword handling. Every launch goes through here or submit, which bound the
    queue (see MAX_IN_FLIGHT). pyopencl is imported on first use, as everywhere in this
    package."""
    global _since_mark
    if _cl_enqueue is None:
        _init()
    event = _cl_enqueue(queue, knl, gsize, lsize, None, None, False, False)
    obs = _profiling.observer
    if obs is not None:
        obs.kernel(knl, event)
    _since_mark += 1
    if _since_mark >= MARK_EVERY:
        _since_mark = 0
        _mark(queue, event)


def submit(queue, knl, bufs, vals, gsize, lsize):
    """Set knl's arguments (bufs: [index, buffer, ...], vals: [index, bytes, ...]) and enqueue
    it over gsize / lsize; the caller holds LAUNCH_LOCK. Launches whose event nobody needs (all
    but every MARK_EVERY-th, while no profiler observes) go through _quiet_launcher's C call;
    the others, and any launch the C call could not enqueue (so that the error raised is
    pyopencl's own), through pyopencl. (carray.opencl._clcall's quiet_turn() makes the same
    test for the cached launches that _ewfast makes from C: keep the two alike.)"""
    global _since_mark
    if _quiet is False:
        _init()
    if _since_mark + 1 < MARK_EVERY and _quiet is not None and _profiling.observer is None \
            and _quiet(queue, knl, bufs, vals, gsize, lsize):
        _since_mark += 1
        return
    if bufs:
        set_buffers(knl, bufs)
    if vals:
        set_bytes(knl, vals)
    enqueue(queue, knl, gsize, lsize)


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
        submit(rt.queue, knl, bufs, vals, (-(-items // g) * g,), (g,))
