from cpython.pythread cimport PyThread_type_lock
from libc.stdint cimport int32_t, uintptr_t

cdef enum:
    MAX_CONSTS = 8      # the most by-value arguments a Plan sets on every launch


cdef class Plan:
    cdef readonly object queue
    cdef readonly object knl
    cdef readonly tuple consts          # (index, bytes, index, bytes, ...)
    cdef readonly tuple gsize
    cdef readonly object lsize          # a tuple or None
    cdef void* queue_ptr
    cdef void* kernel
    cdef int nconst
    cdef unsigned int const_index[MAX_CONSTS]
    cdef const char* const_value[MAX_CONSTS]
    cdef size_t const_size[MAX_CONSTS]
    cdef unsigned int dims
    cdef size_t g[3]
    cdef size_t l[3]

    cdef int32_t launch(self, int nbuf, const unsigned int* buf_index, const uintptr_t* mems,
                        int nval, const unsigned int* val_index, const void** vals,
                        const size_t* val_sizes) noexcept


cdef class LaunchLock:
    cdef PyThread_type_lock lock
    cdef unsigned long owner        # the holding thread's ident (valid while count > 0)
    cdef long count                 # how many times it holds the lock

    cdef bint free_for_launch(self) noexcept


cdef long quiet_turn() except -2
cdef int quiet_done(long since) except -1
