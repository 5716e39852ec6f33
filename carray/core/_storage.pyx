"""Storage: the memory behind arrays, and the caching host allocator.

Host blocks are 64-byte aligned (2 MiB aligned and marked for transparent huge pages when large).
Freed blocks are kept in free lists by size class and handed out again, so an out-of-place op does
not pay fresh page faults on every call (PyTorch's CPU and CUDA allocators do the same).
"""

from cpython.buffer cimport PyBuffer_Release
from cpython.pycapsule cimport PyCapsule_IsValid
from libc.stdlib cimport free
from libc.string cimport memset

cdef extern from "stdlib.h" nogil:
    int posix_memalign(void** memptr, size_t alignment, size_t size)

cdef extern from "_hugepage.h" nogil:
    void carray_advise_hugepages(void* addr, size_t length)

cdef extern from "_dlpack.h":
    ctypedef struct DLManagedTensor:
        void (*deleter)(DLManagedTensor*)
    ctypedef struct DLManagedTensorVersioned:
        void (*deleter)(DLManagedTensorVersioned*)

# ---------------------------------------------------------------------------------------------
# size classes: multiples of 64 bytes up to 512, then 8 classes per power of two (<= 12.5% waste)
# ---------------------------------------------------------------------------------------------

cdef enum:
    NCLASSES = 8 + 8 * 64
    HUGE_BYTES = 4 << 20           # blocks from here on are 2 MiB aligned and use huge pages

cdef Py_ssize_t _cache_limit = 1 << 30     # bytes kept in free lists at most
cdef Py_ssize_t _cached_bytes = 0
cdef void* _free_head[NCLASSES]            # each free block stores the next pointer in its first bytes
memset(_free_head, 0, sizeof(_free_head))


cdef inline int _bit_length(size_t n) noexcept nogil:
    cdef int b = 0
    while n:
        n >>= 1
        b += 1
    return b


cdef int _size_class(Py_ssize_t n, Py_ssize_t* rounded) noexcept nogil:
    """Index of the class holding n bytes; `rounded` receives the class's block size."""
    cdef int e, sub
    cdef Py_ssize_t step
    if n <= 512:
        sub = <int>((n + 63) // 64)
        if sub == 0:
            sub = 1
        rounded[0] = sub * 64
        return sub - 1
    e = _bit_length(<size_t>(n - 1)) - 1         # 2**e < n <= 2**(e+1), e >= 9
    step = (<Py_ssize_t>1) << (e - 3)
    sub = <int>((n - ((<Py_ssize_t>1) << e) + step - 1) // step)   # 1..8
    rounded[0] = ((<Py_ssize_t>1) << e) + sub * step
    return 8 + (e - 9) * 8 + (sub - 1)


cdef Py_ssize_t _memory_ceiling = 1 << 62   # set at import, see _find_memory_ceiling


cdef void* host_alloc(Py_ssize_t nbytes) except NULL:
    """A 64-byte aligned host block of at least nbytes, from the cache when one is free.

    Raises MemoryError naming the size when the system has no memory left.
    """
    global _cached_bytes
    cdef Py_ssize_t size
    cdef int cls = _size_class(nbytes, &size)
    cdef void* p = _free_head[cls]
    if p != NULL:
        _free_head[cls] = (<void**>p)[0]
        _cached_bytes -= size
        return p
    cdef size_t align = (2 << 20) if size >= HUGE_BYTES else 64
    if size > _memory_ceiling:
        # the system might promise it (overcommit) and then kill the process when the pages
        # are touched: refuse up front what can never fit
        raise MemoryError(f"unable to allocate {size} bytes of host memory: more than the "
                          f"{_memory_ceiling} bytes of memory this machine (or container) has")
    if posix_memalign(&p, align, <size_t>size) != 0:
        empty_cache()
        if posix_memalign(&p, align, <size_t>size) != 0:
            raise MemoryError(f"unable to allocate {size} bytes of host memory")
    if size >= HUGE_BYTES:
        carray_advise_hugepages(p, <size_t>size)
    return p


cdef void host_free(void* ptr, Py_ssize_t nbytes) noexcept:
    """Return a block from host_alloc(nbytes) to its free list (or to the system if the cache is full)."""
    global _cached_bytes
    cdef Py_ssize_t size
    cdef int cls = _size_class(nbytes, &size)
    if _cached_bytes + size > _cache_limit:
        free(ptr)
        return
    (<void**>ptr)[0] = _free_head[cls]
    _free_head[cls] = ptr
    _cached_bytes += size


def empty_cache():
    """Give every cached free host block back to the system."""
    global _cached_bytes
    cdef void* p
    cdef void* nxt
    for cls in range(NCLASSES):
        p = _free_head[cls]
        while p != NULL:
            nxt = (<void**>p)[0]
            free(p)
            p = nxt
        _free_head[cls] = NULL
    _cached_bytes = 0


def cache_info():
    """(bytes held in free lists, the limit) of the caching host allocator."""
    return _cached_bytes, _cache_limit


def set_cache_limit(Py_ssize_t nbytes):
    """Set how many bytes of freed host blocks the allocator may keep (0 disables caching)."""
    global _cache_limit
    if nbytes < 0:
        raise ValueError(f"cache limit must be >= 0 bytes, got {nbytes}")
    _cache_limit = nbytes
    if _cached_bytes > nbytes:
        empty_cache()


# ---------------------------------------------------------------------------------------------
# Storage
# ---------------------------------------------------------------------------------------------

cdef class Storage:

    def __cinit__(self):
        self.ptr = NULL
        self.nbytes = 0
        self.device = "cpu"
        self.owns_host = False
        self.has_view = False
        self.dl_managed = NULL

    def __dealloc__(self):
        if self.owns_host and self.ptr != NULL:
            host_free(self.ptr, self.nbytes if self.nbytes > 0 else 1)
        if self.has_view:
            PyBuffer_Release(&self.view)
        if self.dl_managed != NULL:
            if self.dl_versioned:
                if (<DLManagedTensorVersioned*>self.dl_managed).deleter != NULL:
                    (<DLManagedTensorVersioned*>self.dl_managed).deleter(
                        <DLManagedTensorVersioned*>self.dl_managed)
            elif (<DLManagedTensor*>self.dl_managed).deleter != NULL:
                (<DLManagedTensor*>self.dl_managed).deleter(<DLManagedTensor*>self.dl_managed)
        self.ptr = NULL

    def __repr__(self):
        return f"<carray Storage of {self.nbytes} bytes on {self.device}>"


cdef Storage new_host_storage(Py_ssize_t nbytes):
    """Fresh, uninitialised host memory of nbytes (at least one block, so ptr is never NULL)."""
    cdef Storage s = Storage.__new__(Storage)
    s.ptr = <char*>host_alloc(nbytes if nbytes > 0 else 1)
    s.nbytes = nbytes
    s.owns_host = True
    return s


cdef Storage storage_from_buffer(object obj, Py_buffer* view):
    """Storage over an imported buffer; takes over `view` and releases it when freed."""
    cdef Storage s = Storage.__new__(Storage)
    s.view = view[0]
    s.has_view = True
    s.ptr = <char*>view.buf
    s.nbytes = view.len
    s.keepalive = obj
    return s


def _find_memory_ceiling():
    """The most memory a block may take: physical memory, or the container's (cgroup) limit
    when lower; unlimited where neither can be read."""
    import os
    ceiling = (1 << 62)
    try:
        ceiling = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
            if text.isdigit() and 0 < int(text) < ceiling:
                ceiling = int(text)
        except OSError:
            pass
    return ceiling


_memory_ceiling = _find_memory_ceiling()
