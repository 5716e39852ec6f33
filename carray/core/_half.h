/* The 2-byte floats: IEEE binary16 (float16) and bfloat16, stored as their bits in a uint16_t.

   Every conversion is exact or rounds once, to nearest with ties to even, as NumPy's npy_half
   functions do: double -> float16 and double -> bfloat16 round directly from the double (going
   through float would round twice). Overflow gives inf, tiny values give subnormals or signed
   zero, NaN stays NaN (its sign and top payload bits kept). */
#ifndef CARRAY_HALF_H
#define CARRAY_HALF_H

#include <stdint.h>
#include <string.h>

/* distinct C types for the fused cast loops (same bits, different meaning) */
typedef struct { uint16_t bits; } carray_half_t;
typedef struct { uint16_t bits; } carray_bf16_t;

static inline uint32_t carray_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float carray_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint64_t carray_d2u(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }

/* Round the binary fraction `m` (with an implicit leading 1 already set when normal) right by
   `shift` bits, ties to even. */
static inline uint64_t carray_round_shift(uint64_t m, int shift) {
    if (shift <= 0) return m << (-shift);
    if (shift >= 64) return 0;      /* below half the smallest subnormal */
    uint64_t kept = m >> shift, rest = m & ((((uint64_t)1) << shift) - 1);
    uint64_t half = ((uint64_t)1) << (shift - 1);
    if (rest > half || (rest == half && (kept & 1))) kept += 1;
    return kept;
}

/* A finite or infinite/NaN value given as sign, unbiased exponent e and significand m with
   `mbits` fraction bits (m includes the leading 1 for normal values; zero m is zero) to a small
   float with `ebits` exponent bits and `fbits` fraction bits. */
static inline uint16_t carray_to_small(uint16_t sign, int e, uint64_t m, int mbits, int ebits,
                                       int fbits) {
    int bias = (1 << (ebits - 1)) - 1;
    uint16_t inf = (uint16_t)(((1 << ebits) - 1) << fbits);
    if (m == 0) return sign;
    /* the target exponent; below 1 - bias the value is subnormal there */
    int te = e + bias;
    int shift = mbits - fbits + (te < 1 ? 1 - te : 0);
    uint64_t r = carray_round_shift(m, shift);
    /* r is the significand with fbits fraction bits at exponent max(te, 1); a carry into the
       next binade lands in the exponent field by plain addition */
    uint32_t bits = (uint32_t)(te < 1 ? 0 : (uint32_t)(te - 1) << fbits) + (uint32_t)r;
    if (bits >= inf) return (uint16_t)(sign | inf);
    return (uint16_t)(sign | bits);
}

/* A NaN's fraction bits: the top payload bits; float16 keeps them as NumPy does (1 if none
   survive), bfloat16 sets the quiet bit as ml_dtypes does. */
static inline uint16_t carray_nan_payload(uint64_t top, int ebits, int fbits) {
    if (ebits == 8) return (uint16_t)(top | (1u << (fbits - 1)));
    return (uint16_t)(top ? top : 1);
}

static inline uint16_t carray_double_to_small(double d, int ebits, int fbits) {
    uint64_t u = carray_d2u(d);
    uint16_t sign = (uint16_t)((u >> 48) & 0x8000);
    int e = (int)((u >> 52) & 0x7ff);
    uint64_t m = u & 0xfffffffffffffULL;
    uint16_t inf = (uint16_t)(((1 << ebits) - 1) << fbits);
    if (e == 0x7ff) {
        if (m == 0) return (uint16_t)(sign | inf);
        return (uint16_t)(sign | inf | carray_nan_payload(m >> (52 - fbits), ebits, fbits));
    }
    if (e == 0) return carray_to_small(sign, -1022, m, 52, ebits, fbits);  /* (tiny) */
    return carray_to_small(sign, e - 1023, m | (1ULL << 52), 52, ebits, fbits);
}

static inline uint16_t carray_float_to_small(float f, int ebits, int fbits) {
    uint32_t u = carray_f2u(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    int e = (int)((u >> 23) & 0xff);
    uint64_t m = u & 0x7fffff;
    uint16_t inf = (uint16_t)(((1 << ebits) - 1) << fbits);
    if (e == 0xff) {
        if (m == 0) return (uint16_t)(sign | inf);
        return (uint16_t)(sign | inf | carray_nan_payload(m >> (23 - fbits), ebits, fbits));
    }
    if (e == 0) return carray_to_small(sign, -126, m, 23, ebits, fbits);
    return carray_to_small(sign, e - 127, m | (1u << 23), 23, ebits, fbits);
}

static inline uint16_t carray_float_to_half(float f) { return carray_float_to_small(f, 5, 10); }
static inline uint16_t carray_double_to_half(double d) { return carray_double_to_small(d, 5, 10); }
static inline uint16_t carray_double_to_bf16(double d) { return carray_double_to_small(d, 8, 7); }

static inline uint16_t carray_float_to_bf16(float f) {
    uint32_t u = carray_f2u(f);
    if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)((u >> 16) | 0x40);   /* quiet NaN */
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static inline float carray_bf16_to_float(uint16_t h) { return carray_u2f((uint32_t)h << 16); }

static inline float carray_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f) return carray_u2f(sign | 0x7f800000 | (m << 13));
    if (e == 0) {
        if (m == 0) return carray_u2f(sign);
        /* subnormal: m * 2^-24, exact in float */
        float v = (float)m * 5.9604644775390625e-08f;
        return sign ? -v : v;
    }
    return carray_u2f(sign | ((e + 112) << 23) | (m << 13));
}

/* by bits, as NumPy's npy_half_to_double (a float -> double conversion would quiet a NaN) */
static inline double carray_half_to_double(uint16_t h) {
    uint64_t sign = (uint64_t)(h & 0x8000) << 48, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    uint64_t u;
    double d;
    if (e == 0x1f) u = sign | 0x7ff0000000000000ULL | (m << 42);
    else if (e == 0) return (double)carray_half_to_float(h);
    else u = sign | ((e + 1008) << 52) | (m << 42);
    memcpy(&d, &u, 8);
    return d;
}

#endif
