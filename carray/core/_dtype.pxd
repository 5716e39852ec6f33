# The dtypes. Type numbers index every per-dtype table (casts, loops, promotion). The order is
# bool, the signed ints, the unsigned ints, float32/float64, the 2-byte floats float16/bfloat16
# (appended after the wider floats: they compute in float32), then complex64/complex128. Code
# names them only by these constants and the predicates below, never by value or by range.
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

cdef enum:
    BOOL = 0
    INT8 = 1
    INT16 = 2
    INT32 = 3
    INT64 = 4
    UINT8 = 5
    UINT16 = 6
    UINT32 = 7
    UINT64 = 8
    FLOAT32 = 9
    FLOAT64 = 10
    FLOAT16 = 11
    BFLOAT16 = 12
    COMPLEX64 = 13
    COMPLEX128 = 14
    NTYPES = 15

ctypedef unsigned char bool_t   # one byte, 0 or 1, as NumPy's bool

cdef extern from "<stdint.h>":
    # uint8 elements. C sees uint8_t; Cython is told `char` so that its fused types can tell
    # u8_t from bool_t (both unsigned char to C): use u8_t, not uint8_t, in any fused type
    # that also holds bool_t, and in the pointer casts that pick its specialisations.
    ctypedef char u8_t "uint8_t"

# the element types of the dtypes, for loops written once for all of them
ctypedef fused num_t:
    bool_t
    int8_t
    int16_t
    int32_t
    int64_t
    u8_t
    uint16_t
    uint32_t
    uint64_t
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
    if num == BOOL or num == INT8 or num == UINT8:
        return 1
    if num == INT16 or num == UINT16 or num == FLOAT16 or num == BFLOAT16:
        return 2
    if num == INT32 or num == UINT32 or num == FLOAT32:
        return 4
    if num == COMPLEX128:
        return 16
    return 8

cdef inline bint is_float_num(int num) noexcept nogil:
    """A real floating type (float16, bfloat16, float32, float64)."""
    return FLOAT32 <= num <= BFLOAT16

cdef inline bint is_half_num(int num) noexcept nogil:
    """A 2-byte float (float16, bfloat16): stored in 2 bytes, computed in float32."""
    return num == FLOAT16 or num == BFLOAT16

cdef inline bint is_complex_num(int num) noexcept nogil:
    return num == COMPLEX64 or num == COMPLEX128

cdef inline bint is_inexact_num(int num) noexcept nogil:
    """A real or complex floating type."""
    return num >= FLOAT32

cdef inline bint is_int_num(int num) noexcept nogil:
    """Any integer type, signed or unsigned (not bool)."""
    return INT8 <= num <= UINT64

cdef inline bint is_unsigned_num(int num) noexcept nogil:
    return UINT8 <= num <= UINT64

cdef inline int kind_rank(int num) noexcept nogil:
    """0 for bool, 1 for the integers, 2 for the real floats, 3 for the complex types (the kind
    order of promotion)."""
    if num == BOOL:
        return 0
    if num >= COMPLEX64:
        return 3
    return 2 if num >= FLOAT32 else 1

cpdef DType as_dtype(object obj)
cdef int promote_nums(int a, int b) noexcept
cdef int promote_seq(list nums) except -2
cdef int default_float_num() noexcept
cdef int int_fits(object value, int num) except -1
