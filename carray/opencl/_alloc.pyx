"""The device allocation every new device array makes, without a Python frame: Runtime.alloc is
a PoolAlloc, which hands sizes the pool takes as they are (0 < nbytes <= the largest buffer)
straight to the pool's allocate and everything else (an empty array, a size beyond the largest
buffer, a failed allocation) to the Runtime's own checks and messages."""


cdef class PoolAlloc:
    """PoolAlloc(allocate, max_bytes, checked): a callable f(nbytes) -> buffer that returns
    allocate(nbytes) when 0 < nbytes <= max_bytes and that succeeds, else checked(nbytes)
    (which raises the errors)."""
    cdef object allocate
    cdef object checked
    cdef Py_ssize_t max_bytes

    def __init__(self, allocate, Py_ssize_t max_bytes, checked):
        self.allocate = allocate
        self.max_bytes = max_bytes
        self.checked = checked

    def __call__(self, Py_ssize_t nbytes):
        if 0 < nbytes <= self.max_bytes:
            try:
                return self.allocate(nbytes)
            except Exception:
                pass            # (checked() tries again, after freeing held blocks, or raises)
        return self.checked(nbytes)
