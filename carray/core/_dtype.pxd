# The five dtypes. Type numbers index every per-dtype table (casts, loops, promotion).
from libc.stdint cimport int32_t, int64_t

cdef enum:
    BOOL = 0
    INT32 = 1
    INT64 = 2
    FLOAT32 = 3
    FLOAT64 = 4
    NTYPES = 5

ctypedef unsigned char bool_t   # one byte, 0 or 1, as NumPy's bool

# the element types of the five dtypes, for loops written once for all of them
ctypedef fused num_t:
    bool_t
    int32_t
    int64_t
    float
    double

cdef class DType:
    cdef readonly str name
    cdef readonly int num
    cdef readonly Py_ssize_t itemsize
    cdef readonly str kind
    cdef readonly str char

cdef DType dtype_of(int num)

cdef inline Py_ssize_t itemsize_of(int num) noexcept nogil:
    return 1 if num == BOOL else (4 if num == INT32 or num == FLOAT32 else 8)

cpdef DType as_dtype(object obj)
cdef int promote_nums(int a, int b) noexcept
cdef int default_float_num() noexcept
