"""Setting a kernel's arguments and enqueueing it by calling OpenCL's C entry points directly:
the launch path every small op pays, without pyopencl's per-argument Python calls and without
the Event pyopencl makes for every launch (on NVIDIA's driver creating and releasing that event
costs more than the launch: 11.1 us a bare enqueue with it, 5.0 without, on an H100).

carray links no OpenCL library: bind() is given the addresses of clSetKernelArg and
clEnqueueNDRangeKernel, which carray.opencl._launch looks up through ctypes in the OpenCL
library pyopencl itself loaded. Until bind() is called, launch() reports CL_INVALID_OPERATION.

Two ways in: launch() (from Python, through _launch.submit) and Plan.launch (from C: the cached
launches of carray.opencl._ewfast, which first ask quiet_turn() whether _launch's policy lets
this launch go without an event).
"""

from libc.stdint cimport int32_t, uintptr_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject
from cpython.pythread cimport (NOWAIT_LOCK, WAIT_LOCK, PyThread_acquire_lock,
                               PyThread_allocate_lock, PyThread_free_lock,
                               PyThread_get_thread_ident, PyThread_release_lock)

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


# -- a stand-in driver, for tests and for measuring carray's own host cost per launch ----------

cdef long _counted_set_args = 0
cdef long _counted_enqueues = 0


cdef int32_t _count_set_arg(void* kernel, unsigned int index, size_t size,
                            const void* value) noexcept nogil:
    global _counted_set_args
    _counted_set_args += 1
    return 0


cdef int32_t _count_enqueue(void* queue, void* kernel, unsigned int dims, const size_t* offset,
                            const size_t* gsize, const size_t* lsize, unsigned int nwait,
                            const void* wait, void* event) noexcept nogil:
    global _counted_enqueues
    _counted_enqueues += 1
    return 0


def bind_counting():
    """Bind stand-ins that only count their calls and succeed (nothing runs): what carray itself
    costs per launch can then be timed, and the calls counted with counts(). Returns the
    addresses bound before, for bind() to restore."""
    global _set_arg, _enqueue
    before = (<uintptr_t>_set_arg, <uintptr_t>_enqueue)
    _set_arg = _count_set_arg
    _enqueue = _count_enqueue
    return before


def counts():
    """(clSetKernelArg calls, clEnqueueNDRangeKernel calls) the bind_counting() stand-ins saw."""
    return _counted_set_args, _counted_enqueues


# -- launches from Python ----------------------------------------------------------------------

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


def quiet(queue, knl, bufs, vals, gsize, lsize):
    """_launch's event-less launcher (see _launch._quiet_launcher): launch() on pyopencl's queue
    and kernel; True when enqueued."""
    return launch(queue.int_ptr, knl.int_ptr, bufs, vals, gsize, lsize) == 0


# -- launches from C ---------------------------------------------------------------------------

cdef class Plan:
    """A launch repeated on one queue with one kernel, the same by-value arguments and sizes:
    only the buffers (and scalars) change between launches. Plan(queue, knl, consts, gsize,
    lsize): consts (index, bytes, index, bytes, ...), at most MAX_CONSTS pairs; gsize and lsize
    (a tuple or None) as pyopencl takes them. ValueError for more consts or dims than that."""

    def __init__(self, queue, knl, tuple consts, tuple gsize, lsize):
        cdef int i
        cdef bytes b
        if len(consts) % 2 or len(consts) // 2 > MAX_CONSTS:
            raise ValueError(f"Plan: consts must be at most {MAX_CONSTS} (index, bytes) pairs, "
                             f"got {len(consts)} items")
        if not 1 <= len(gsize) <= 3 or lsize is not None and len(lsize) != len(gsize):
            raise ValueError(f"Plan: gsize must have 1 to 3 dims and lsize (or None) as many, "
                             f"got {gsize} and {lsize}")
        self.queue, self.knl, self.consts, self.gsize, self.lsize = \
            queue, knl, consts, gsize, lsize
        self.queue_ptr = <void*><uintptr_t>queue.int_ptr
        self.kernel = <void*><uintptr_t>knl.int_ptr
        self.nconst = len(consts) // 2
        for i in range(self.nconst):
            b = consts[2 * i + 1]
            self.const_index[i] = consts[2 * i]
            self.const_value[i] = PyBytes_AS_STRING(b)
            self.const_size[i] = PyBytes_GET_SIZE(b)
        self.dims = len(gsize)
        for i in range(self.dims):
            self.g[i] = gsize[i]
            self.l[i] = lsize[i] if lsize is not None else 0

    cdef int32_t launch(self, int nbuf, const unsigned int* buf_index, const uintptr_t* mems,
                        int nval, const unsigned int* val_index, const void** vals,
                        const size_t* val_sizes) noexcept:
        """Set the buffers (mems: cl_mem handles), the by-value arguments vals (val_sizes bytes
        each) and the plan's consts, and enqueue without an event. OpenCL's error code: 0 when
        enqueued; otherwise nothing was enqueued (the caller then sets all again)."""
        cdef int i
        cdef int32_t err
        if _enqueue is NULL:
            return CL_INVALID_OPERATION
        for i in range(nbuf):
            err = _set_arg(self.kernel, buf_index[i], sizeof(void*), &mems[i])
            if err:
                return err
        for i in range(nval):
            err = _set_arg(self.kernel, val_index[i], val_sizes[i], vals[i])
            if err:
                return err
        for i in range(self.nconst):
            err = _set_arg(self.kernel, self.const_index[i], self.const_size[i],
                           self.const_value[i])
            if err:
                return err
        return _enqueue(self.queue_ptr, self.kernel, self.dims, NULL, self.g,
                        self.l if self.lsize is not None else NULL, 0, NULL, NULL)


cdef class LaunchLock:
    """The lock every launch holds across setting a kernel's arguments and enqueueing it
    (_launch.LAUNCH_LOCK): reentrant, as threading.RLock (acquire(blocking=True) -> bool,
    release(), `with`), and its holder readable from C, so that free_for_launch() tells a
    launch made from C without calling Python code that it may go without taking it."""

    def __cinit__(self):
        self.lock = PyThread_allocate_lock()
        if self.lock == NULL:
            raise MemoryError("cannot allocate a lock")

    def __dealloc__(self):
        if self.lock != NULL:
            PyThread_free_lock(self.lock)

    def acquire(self, bint blocking=True):
        """Take the lock (again, when this thread holds it); without blocking, False when
        another thread holds it."""
        cdef unsigned long me = PyThread_get_thread_ident()
        cdef int got
        if self.count and self.owner == me:
            self.count += 1
            return True
        got = PyThread_acquire_lock(self.lock, NOWAIT_LOCK)
        if not got:
            if not blocking:
                return False
            with nogil:
                got = PyThread_acquire_lock(self.lock, WAIT_LOCK)
        self.owner = me
        self.count = 1
        return True

    def release(self):
        """Give the lock back once; RuntimeError when this thread does not hold it."""
        if not self.count or self.owner != PyThread_get_thread_ident():
            raise RuntimeError("cannot release un-acquired lock")
        self.count -= 1
        if not self.count:
            self.owner = 0
            PyThread_release_lock(self.lock)

    def __enter__(self):
        return self.acquire()

    def __exit__(self, exc_type, exc, tb):
        self.release()

    cdef bint free_for_launch(self) noexcept:
        """Whether a launch made from C, holding the GIL throughout and calling no Python code
        (so no other thread can run meanwhile), may go without taking the lock: no thread holds
        it, or this one does. Another thread waiting for it takes it only with the GIL, after
        such a launch."""
        return self.count == 0 or self.owner == PyThread_get_thread_ident()


# _launch's and _profiling's globals (read on first use: _launch imports this module lazily)
cdef dict _launch_globals = None
cdef dict _profiling_globals = None
cdef object _quiet_fn = quiet


cdef long quiet_turn() except -2:
    """_launch._since_mark when the caller may launch now through Plan.launch, else -1: the
    test of _launch.submit's event-less branch, on _launch's state (its MARK_EVERY turn, no
    profiler observing), and _launch._quiet is this module's quiet() itself; when it is not
    (not looked up yet, off through CARRAY_OPENCL_LAUNCH=pyopencl, or wrapped by a test) the
    caller launches through _launch.submit, which then sees every launch. After the launch
    succeeds the caller calls quiet_done() with the count. Runs no Python code after the first
    call (dict reads only)."""
    global _launch_globals, _profiling_globals
    cdef PyObject* p
    cdef long since
    if _launch_globals is None:
        from carray.opencl import _launch, _profiling
        _launch_globals = _launch.__dict__
        _profiling_globals = _profiling.__dict__
    p = PyDict_GetItem(_launch_globals, "_quiet")
    if p is NULL or p is not <PyObject*>_quiet_fn:
        return -1
    p = PyDict_GetItem(_profiling_globals, "observer")
    if p is NULL or p is not <PyObject*>None:
        return -1
    since = _global_long("_since_mark")
    if since + 1 >= _global_long("MARK_EVERY"):
        return -1
    return since


cdef inline long _global_long(str name) except? -1:
    cdef PyObject* p = PyDict_GetItem(_launch_globals, name)
    if p is NULL:
        raise KeyError(name)
    return <long><object>p


cdef int quiet_done(long since) except -1:
    """Count a launch made after quiet_turn() gave `since` (as _launch.submit counts its own)."""
    _launch_globals["_since_mark"] = since + 1
    return 0
