"""The device allocation every new device array makes, without a Python frame: Runtime.alloc is
a PoolAlloc, which hands sizes the pool takes as they are (0 < nbytes <= the largest buffer)
straight to the pool's allocate and everything else (an empty array, a size beyond the largest
buffer, a failed allocation) to the Runtime's own checks and messages.

The pool's allocator is deferred (a new buffer gets its device memory at its first use), so a
block the pool has just made is handed to `fresh`, which makes the device back it at once: a
shortage then shows where memory is asked for (see Runtime.fault_in). A new block shows as a
change in the pool's managed_bytes, one attribute read per allocation. Freeing held blocks
lowers it, so whoever frees them calls sync() (Runtime.free_held does), lest a new block of the
freed size bring it back to where it was."""


cdef class PoolAlloc:
    """PoolAlloc(pool, max_bytes, checked, fresh): a callable f(nbytes) -> buffer that returns
    pool.allocate(nbytes) when 0 < nbytes <= max_bytes and that succeeds (and, when the pool's
    managed_bytes moved, i.e. it made a block, fresh(buffer) said the device backs it), else
    checked(nbytes) (which frees held blocks and tries again, or raises)."""
    cdef object allocate
    cdef object pool
    cdef object checked
    cdef object fresh
    cdef Py_ssize_t max_bytes
    cdef object managed

    def __init__(self, pool, Py_ssize_t max_bytes, checked, fresh):
        self.pool = pool
        self.allocate = pool.allocate          # (bound once: every device array calls it)
        self.max_bytes = max_bytes
        self.checked = checked
        self.fresh = fresh
        self.managed = pool.managed_bytes

    def sync(self):
        """Take the pool's managed_bytes as it is now (after blocks were freed)."""
        self.managed = self.pool.managed_bytes

    def __call__(self, Py_ssize_t nbytes):
        if 0 < nbytes <= self.max_bytes:
            try:
                buf = self.allocate(nbytes)
            except Exception:
                return self.checked(nbytes)     # (tries again, after freeing held blocks)
            managed = self.pool.managed_bytes
            if managed == self.managed:
                return buf                      # a block the pool held: backed already
            self.managed = managed
            if self.fresh(buf):
                return buf
            buf = None                          # (back to the pool, for checked to free)
        return self.checked(nbytes)
