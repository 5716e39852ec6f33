"""The 2-byte floats in OpenCL C without cl_khr_fp16: stored as ushort bits, read to float by
bit operations, written with vstore_half_rte (float16) or round-to-nearest-even bit operations
(bfloat16). Only conversions (casts) touch them: ops compute in float32 (carray/ops/_half.py).
"""

from carray.opencl._types import (
    BFLOAT16,
    CL_TYPES,
    FLOAT16,
    FLOAT32,
    FLOAT64,
    INT32,
    INT64,
    UINT32,
    UINT64,
)

# bfloat16 from float: ties to even, NaN kept quiet. carray_odd makes a float rounded toward zero
# "round to odd" (its last bit set when inexact), so that rounding it again to bfloat16's 8 bits
# gives the correctly rounded result of a double or a wide int (one rounding, as the CPU's).
HELPERS = """
#ifndef CARRAY_HALF_HELPERS
#define CARRAY_HALF_HELPERS
inline ushort carray_f32_to_bf16(float f) {
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
inline float carray_odd(float f, int inexact) { return inexact ? as_float(as_uint(f) | 1u) : f; }
// float16 bits to float by bits (vload_half may quiet a signaling NaN)
inline float carray_h2f(ushort h) {
    uint e = (h >> 10) & 0x1fu, m = h & 0x3ffu, s = (uint)(h & 0x8000u) << 16;
    float v = (float)m * 0x1p-24f;
    if (e == 0) return (h & 0x8000u) ? -v : v;
    if (e == 0x1f) return as_float(s | 0x7f800000u | (m << 13));
    return as_float(s | ((e + 112) << 23) | (m << 13));
}
// a NaN's float16 bits as NumPy makes them: sign, the top payload bits (1 if none survive)
inline ushort carray_nan_h(uint sign, uint top) {
    return (ushort)(sign | 0x7c00u | (top ? top : 1u));
}
#endif
#undef STORE
"""

# float16 bits to double by bits (subnormals through an exact float product)
H2D = """
#ifndef CARRAY_H2D
#define CARRAY_H2D
inline double carray_h2d(ushort h) {
    ulong e = (h >> 10) & 0x1f, m = h & 0x3ff, s = (ulong)(h & 0x8000) << 48;
    float v = (float)m * 0x1p-24f;
    if (e == 0) return (double)((h & 0x8000) ? -v : v);
    if (e == 0x1f) return as_double(s | 0x7ff0000000000000UL | (m << 42));
    return as_double(s | ((e + 1008) << 52) | (m << 42));
}
#endif
"""


def any_half(nums):
    """True when a 2-byte float is among the type numbers."""
    return FLOAT16 in nums or BFLOAT16 in nums


def scalar_num(num):
    """The type a scalar kernel argument of type num travels as (2-byte floats: float)."""
    return FLOAT32 if num in (FLOAT16, BFLOAT16) else num


def load(num, buf, index, out_num=None):
    """C for element `index` of buffer `buf` of type num, as a value (2-byte floats: float;
    float16 read for a float64 output: a double by bits, keeping a NaN's payload as NumPy)."""
    if num == FLOAT16 and out_num == FLOAT64:
        return f"carray_h2d({buf}[{index}])"
    if num == FLOAT16:
        return f"carray_h2f({buf}[{index}])"
    if num == BFLOAT16:
        return f"as_float(((uint){buf}[{index}]) << 16)"
    return f"{buf}[{index}]"


def store_macro(out_num, src_num):
    """#define STORE(i, v): write value v (of src_num's type) to out[i] of type out_num."""
    if out_num == FLOAT16:
        # vstore_half_rte rounds once (also from a double); NaNs keep NumPy's bits
        if src_num == FLOAT64:
            t, bits, top = "double", "as_ulong(_v)", "(uint)((_b >> 42) & 0x3ff)"
            sign = "(uint)((_b >> 48) & 0x8000)"
        else:
            t, bits, top = "float", "as_uint(_v)", "((_b >> 13) & 0x3ffu)"
            sign = "((_b >> 16) & 0x8000u)"
        return (f"#define STORE(i, v) {{ {t} _v = ({t})(v); if (isnan(_v)) {{ "
                f"{'ulong' if t == 'double' else 'uint'} _b = {bits}; "
                f"out[i] = carray_nan_h({sign}, {top}); }} "
                f"else vstore_half_rte(_v, (i), (__global half*)out); }}")
    if out_num == BFLOAT16:
        if src_num == FLOAT64:
            d = "((double)(v))"
            w = f"carray_odd(convert_float_rtz({d}), (double)convert_float_rtz({d}) != {d})"
        elif src_num in (INT32, INT64, UINT32, UINT64):
            t = CL_TYPES[src_num]
            w = f"carray_odd(convert_float_rtz(v), ({t})convert_float_rtz(v) != (v))"
        else:
            w = "(float)(v)"
        return f"#define STORE(i, v) out[i] = carray_f32_to_bf16({w})"
    return f"#define STORE(i, v) out[i] = ({CL_TYPES[out_num]})(v)"
