"""Launching kernels: setting their arguments and enqueueing them on the runtime's queue, with
pyopencl's cheapest calls (the per-launch host cost is what small ops pay)."""

from carray.opencl._runtime import runtime


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


def enqueue(queue, knl, gsize, lsize):
    """Enqueue knl (its arguments set) through pyopencl._cl directly: no wait list, no keyword
    handling. pyopencl is imported on first use, as everywhere in this package."""
    global _cl_enqueue
    if _cl_enqueue is None:
        from pyopencl._cl import enqueue_nd_range_kernel as _cl_enqueue
    _cl_enqueue(queue, knl, gsize, lsize, None, None, False, False)


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
    if bufs:
        set_buffers(knl, bufs)
    if vals:
        set_bytes(knl, vals)
    enqueue(rt.queue, knl, (-(-items // g) * g,), (g,))
