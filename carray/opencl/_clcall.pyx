"""Setting a kernel's arguments and enqueueing it by calling OpenCL's C entry points directly:
the launch path every small op pays, without pyopencl's per-argument Python calls and without
the Event pyopencl makes for every launch (on NVIDIA's driver creating and releasing that event
costs more than the launch: 11.1 us a bare enqueue with it, 5.0 without, on an H100).

carray links no OpenCL library: bind() is given the addresses of clSetKernelArg and
clEnqueueNDRangeKernel, which carray.opencl._launch looks up through ctypes in the OpenCL
library pyopencl itself loaded. Until bind() is called, launch() reports CL_INVALID_OPERATION.
"""

from libc.stdint cimport int32_t, uintptr_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE

ctypedef int32_t (*set_arg_fn)(void* kernel, unsigned int index, size_t size,
                               const void* value) noexcept nogil
ctypedef int32_t (*enqueue_fn)(void* queue, void* kernel, unsigned int dims,
                               const size_t* offset, const size_t* gsize, const size_t* lsize,
                               unsigned int nwait, const void* wait, void* event) noexcept nogil

cdef set_arg_fn _set_arg = NULL
cdef enqueue_fn _enqueue = NULL

CL_INVALID_OPERATION = -59
CL_INVALID_WORK_DIMENSION = -53


def bind(uintptr_t set_arg, uintptr_t enqueue):
    """Use the functions at these addresses as clSetKernelArg and clEnqueueNDRangeKernel."""
    global _set_arg, _enqueue
    _set_arg = <set_arg_fn>set_arg
    _enqueue = <enqueue_fn>enqueue


def launch(uintptr_t queue, uintptr_t kernel, bufs, vals, tuple gsize, lsize):
    """Set the kernel's arguments and enqueue it over gsize (local size lsize, a tuple or None),
    asking for no event. bufs: [index, pyopencl buffer or None, ...]; vals: [index, bytes, ...]
    (by-value arguments). Returns OpenCL's error code: 0 when enqueued; otherwise nothing was
    enqueued, though some arguments may have been set (the caller sets them all again)."""
    cdef size_t g[3]
    cdef size_t l[3]
    cdef Py_ssize_t i, n = len(gsize)
    cdef uintptr_t mem
    cdef int32_t err
    cdef bytes b
    if _enqueue is NULL:
        return CL_INVALID_OPERATION
    if n < 1 or n > 3 or (lsize is not None and len(lsize) != n):
        return CL_INVALID_WORK_DIMENSION
    for i in range(0, len(bufs), 2):
        obj = bufs[i + 1]
        mem = 0 if obj is None else obj.int_ptr
        err = _set_arg(<void*>kernel, bufs[i], sizeof(void*), &mem)
        if err:
            return err
    for i in range(0, len(vals), 2):
        b = vals[i + 1]
        err = _set_arg(<void*>kernel, vals[i], PyBytes_GET_SIZE(b), PyBytes_AS_STRING(b))
        if err:
            return err
    for i in range(n):
        g[i] = gsize[i]
        if lsize is not None:
            l[i] = lsize[i]
    return _enqueue(<void*>queue, <void*>kernel, n, NULL, g,
                    l if lsize is not None else NULL, 0, NULL, NULL)
