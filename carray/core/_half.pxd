# The 2-byte floats' conversions (_half.h): float16 and bfloat16 stored as their bits.
from libc.stdint cimport uint16_t

cdef extern from "_half.h" nogil:
    ctypedef struct carray_half_t:
        uint16_t bits
    ctypedef struct carray_bf16_t:
        uint16_t bits
    uint16_t carray_float_to_half(float f)
    uint16_t carray_double_to_half(double d)
    float carray_half_to_float(uint16_t h)
    double carray_half_to_double(uint16_t h)
    uint16_t carray_float_to_bf16(float f)
    uint16_t carray_double_to_bf16(double d)
    float carray_bf16_to_float(uint16_t h)
