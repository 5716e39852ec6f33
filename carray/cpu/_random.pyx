"""Philox4x32-10 and the fill kernels behind carray.random (the public API is carray/random.py,
whose docstring is the specification of the streams: counter -> words -> numbers).

Every kernel fills the blocks [b0, b1) of one draw: block b of a draw uses the Philox counter
(offset + b, attempt, 0) and writes elements [b * per_block, (b + 1) * per_block). An element
therefore depends only on (seed, offset, its position), never on how the blocks are split across
threads: `_run` hands out chunks of CHUNK blocks with prange above PARALLEL_MIN elements.
Kernels are `noexcept nogil` and trust their caller (Generator's methods validate everything).
"""

from cython.parallel cimport prange, threadid
from libc.math cimport sqrt, isfinite
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t, INT32_MIN, INT32_MAX
from libc.stdint cimport INT64_MIN, INT64_MAX, UINT64_MAX
from libc.string cimport memcpy

from carray.core._array cimport (Array, as_array, broadcast_view, copy_into, new_array, on_gpu,
                            parse_device, parse_dtype_num, parse_shape)
from carray.core._dtype cimport (BOOL, FLOAT32, FLOAT64, INT32, INT64, bool_t, default_float_num,
                                 dtype_of, is_int_num, is_unsigned_num, itemsize_of)
from carray.core._strided cimport MAXDIMS, max_threads, region_enter, region_exit, thread_seen

import operator

from carray.core._array import AxisError, broadcast_shapes

cdef extern from *:
    """
    /* 64 x 64 -> 128-bit product: returns the high word, stores the low word. */
    static inline uint64_t carray_mul128(uint64_t a, uint64_t b, uint64_t* lo) {
    #if defined(__SIZEOF_INT128__)
        unsigned __int128 p = (unsigned __int128)a * b;
        *lo = (uint64_t)p;
        return (uint64_t)(p >> 64);
    #else
        uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
        uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
        uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
        *lo = (mid << 32) | (uint32_t)p00;
        return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    #endif
    }
    #define CARRAY_PHILOX_M0 0xD2511F53u
    #define CARRAY_PHILOX_M1 0xCD9E8D57u
    #define CARRAY_PHILOX_W0 0x9E3779B9u
    #define CARRAY_PHILOX_W1 0xBB67AE85u
    #define CARRAY_F64_MANTISSA 0x000FFFFFFFFFFFFFull
    #define CARRAY_F64_ONE 0x3FF0000000000000ull
    #define CARRAY_F64_TWO52 0x4330000000000000ull
    #define CARRAY_SQRT2_MANTISSA 0x6A09E667F3BCDull
    #define CARRAY_TWO51 0x8000000000000ull
    /* a * b + c stays two roundings (the streams are specified without fused multiply-add);
       GCC in -std=c11 mode never contracts, clang needs telling */
    #if defined(__clang__)
    #pragma STDC FP_CONTRACT OFF
    #endif
    """
    uint64_t carray_mul128(uint64_t a, uint64_t b, uint64_t* lo) noexcept nogil
    const uint32_t PHILOX_M0 "CARRAY_PHILOX_M0"
    const uint32_t PHILOX_M1 "CARRAY_PHILOX_M1"
    const uint32_t PHILOX_W0 "CARRAY_PHILOX_W0"
    const uint32_t PHILOX_W1 "CARRAY_PHILOX_W1"
    const uint64_t F64_MANTISSA "CARRAY_F64_MANTISSA"     # a double's fraction bits
    const uint64_t F64_ONE "CARRAY_F64_ONE"               # the bits of 1.0
    const uint64_t F64_TWO52 "CARRAY_F64_TWO52"           # the bits of 2.0**52
    const uint64_t SQRT2_MANTISSA "CARRAY_SQRT2_MANTISSA" # the fraction bits of sqrt(2)
    const uint64_t TWO51_BITS "CARRAY_TWO51"              # the integer 2**51

cdef Py_ssize_t PARALLEL_MIN = 1 << 16     # draws with fewer elements run on one thread
cdef Py_ssize_t CHUNK = 1024               # blocks per parallel work item

cdef enum:
    BATCH = 64                             # blocks whose words a kernel makes in one loop

cdef float F32_ULP = 5.9604644775390625e-08           # 2**-24
cdef double F64_ULP = 1.1102230246251565e-16          # 2**-53
cdef double TWO_PI = 6.283185307179586
cdef double TWO52 = 4503599627370496.0                # 2**52
cdef double TWO51 = 2251799813685248.0
cdef double LN2_HI = 6.93147180369123816490e-01       # ln 2 = LN2_HI + LN2_LO (fdlibm's split)
cdef double LN2_LO = 1.90821492927058770002e-10
# Taylor coefficients: LOG_C[k] = 1 / (2k + 3); SIN_C[k] = (-1)**(k+1) / (2k + 3)!;
# COS_C[k] = (-1)**k / (2k + 4)! (each the double nearest the fraction)
cdef double LOG_C[10]
cdef double SIN_C[8]
cdef double COS_C[8]


cdef void _init_coefficients() noexcept:
    cdef int k
    for k in range(10):
        LOG_C[k] = 1.0 / (2 * k + 3)
    for k in range(8):
        SIN_C[k] = (-1.0 if k % 2 == 0 else 1.0) / <double>_factorial(2 * k + 3)
        COS_C[k] = (1.0 if k % 2 == 0 else -1.0) / <double>_factorial(2 * k + 4)


cdef uint64_t _factorial(int n) noexcept:
    cdef uint64_t f = 1
    cdef int i
    for i in range(2, n + 1):
        f *= i
    return f


_init_coefficients()


# ---------------------------------------------------------------------------------------------
# Philox4x32-10 (Salmon, Moraes, Dror, Shaw, SC'11; constants as in Random123)
# ---------------------------------------------------------------------------------------------

cdef inline void philox4x32_10(uint32_t* x, uint32_t k0, uint32_t k1) noexcept nogil:
    """x := Philox4x32-10(counter x, key (k0, k1)); ten rounds of
    (x0, x1, x2, x3) := (hi(M1*x2) ^ x1 ^ k0, lo(M1*x2), hi(M0*x0) ^ x3 ^ k1, lo(M0*x0)),
    the key bumped by (W0, W1) between rounds."""
    cdef uint32_t x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3]
    cdef uint64_t p0, p1
    cdef int r
    for r in range(10):
        p0 = <uint64_t>PHILOX_M0 * x0
        p1 = <uint64_t>PHILOX_M1 * x2
        x0 = <uint32_t>(p1 >> 32) ^ x1 ^ k0
        x2 = <uint32_t>(p0 >> 32) ^ x3 ^ k1
        x1 = <uint32_t>p1
        x3 = <uint32_t>p0
        k0 = k0 + PHILOX_W0
        k1 = k1 + PHILOX_W1
    x[0] = x0
    x[1] = x1
    x[2] = x2
    x[3] = x3


def philox4x32_10_block(counter, key):
    """Philox4x32-10 of one block: counter (4 uint32 words) and key (2 words) -> 4 words.

    The raw bijection, for known-answer tests against Random123's kat_vectors."""
    cdef uint32_t x[4]
    cdef int i
    if len(counter) != 4 or len(key) != 2:
        raise ValueError("philox4x32_10_block takes 4 counter words and 2 key words")
    for i in range(4):
        x[i] = <uint32_t>(int(counter[i]) & 0xFFFFFFFF)
    philox4x32_10(x, <uint32_t>(int(key[0]) & 0xFFFFFFFF), <uint32_t>(int(key[1]) & 0xFFFFFFFF))
    return (x[0], x[1], x[2], x[3])


# ---------------------------------------------------------------------------------------------
# one draw: what the kernels read
# ---------------------------------------------------------------------------------------------

cdef struct Draw:
    uint32_t k0, k1          # key: the seed's low and high 32 bits
    uint64_t offset          # counter of the draw's block 0
    Py_ssize_t n             # elements
    char* out                # contiguous output of the draw's dtype
    const char* p0           # first parameter (low / loc), element step s0 (0: a scalar)
    const char* p1           # second parameter (high / scale / span), element step s1
    Py_ssize_t s0, s1
    double d0, d1            # scalar parameters live here; p0/p1 point at them
    float f0, f1
    int64_t i0
    uint64_t u1

ctypedef void (*kernel_t)(const Draw* d, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil


cdef inline void _block(const Draw* d, Py_ssize_t b, uint32_t attempt, uint32_t* w) noexcept nogil:
    """w := the four words of block b of the draw: Philox of counter (offset + b, attempt, 0)."""
    cdef uint64_t c = d.offset + <uint64_t>b
    w[0] = <uint32_t>c
    w[1] = <uint32_t>(c >> 32)
    w[2] = attempt
    w[3] = 0
    philox4x32_10(w, d.k0, d.k1)


cdef inline void _words(const Draw* d, Py_ssize_t b, Py_ssize_t nb, uint32_t* w) noexcept nogil:
    """w[4k .. 4k + 3] := the words of blocks b + k of the draw, k < nb (attempt 0).

    A plain loop over independent blocks, so the compiler vectorizes the ten rounds."""
    cdef uint64_t c0 = d.offset + <uint64_t>b, c
    cdef uint32_t k0 = d.k0, k1 = d.k1
    cdef uint32_t x[4]
    cdef Py_ssize_t k
    for k in range(nb):
        c = c0 + <uint64_t>k
        x[0] = <uint32_t>c
        x[1] = <uint32_t>(c >> 32)
        x[2] = 0
        x[3] = 0
        philox4x32_10(x, k0, k1)
        w[4 * k] = x[0]
        w[4 * k + 1] = x[1]
        w[4 * k + 2] = x[2]
        w[4 * k + 3] = x[3]


cdef inline uint64_t _u64(const uint32_t* w, Py_ssize_t j) noexcept nogil:
    """64-bit number j of a word buffer: words 2j (low) and 2j + 1 (high)."""
    return (<uint64_t>w[2 * j + 1] << 32) | w[2 * j]


cdef void _run(kernel_t kernel, Draw* d, int per_block) noexcept nogil:
    """Fill the draw's ceil(n / per_block) blocks, in parallel chunks above PARALLEL_MIN."""
    cdef Py_ssize_t nblocks = (d.n + per_block - 1) // per_block
    cdef Py_ssize_t nchunks = (nblocks + CHUNK - 1) // CHUNK, c
    cdef int nthreads = max_threads()
    if nthreads > nchunks:
        nthreads = <int>nchunks
    if d.n < PARALLEL_MIN or nthreads <= 1:
        kernel(d, 0, nblocks)
        return
    cdef double start = region_enter(nthreads)
    for c in prange(nchunks, schedule="static", num_threads=nthreads):
        thread_seen(threadid())
        kernel(d, c * CHUNK, nblocks if (c + 1) * CHUNK > nblocks else (c + 1) * CHUNK)
    region_exit(start, nthreads)


# ---------------------------------------------------------------------------------------------
# kernels: each fills blocks [b0, b1) of a draw, BATCH blocks of words at a time.
# uniform: out = low + (high - low) * u; normal: out = loc + scale * z
# ---------------------------------------------------------------------------------------------

cdef void _k_uniform_f32(const Draw* d, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    """Element i: u = (word i of the draw >> 8) * 2**-24 (4 per block), float32 arithmetic."""
    cdef uint32_t w[4 * BATCH]
    cdef float* out = <float*>d.out
    cdef const float* lo = <const float*>d.p0
    cdef const float* hi = <const float*>d.p1
    cdef Py_ssize_t b, nb, i0, cnt, i, j, s0 = d.s0, s1 = d.s1
    cdef float l, sp
    b = b0
    while b < b1:
        nb = b1 - b if b1 - b < BATCH else BATCH
        _words(d, b, nb, w)
        i0 = 4 * b
        cnt = d.n - i0 if d.n - i0 < 4 * nb else 4 * nb
        if s0 == 0 and s1 == 0:
            l = lo[0]
            sp = hi[0] - l
            for j in range(cnt):
                out[i0 + j] = l + sp * (<float>(w[j] >> 8) * F32_ULP)
        else:
            for j in range(cnt):
                i = i0 + j
                l = lo[i * s0]
                out[i] = l + (hi[i * s1] - l) * (<float>(w[j] >> 8) * F32_ULP)
        b += nb


cdef void _k_uniform_f64(const Draw* d, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    """Element i: u = (u64 number i of the draw >> 11) * 2**-53 (2 per block)."""
    cdef uint32_t w[4 * BATCH]
    cdef double* out = <double*>d.out
    cdef const double* lo = <const double*>d.p0
    cdef const double* hi = <const double*>d.p1
    cdef Py_ssize_t b, nb, i0, cnt, i, j, s0 = d.s0, s1 = d.s1
    cdef double l, sp
    b = b0
    while b < b1:
        nb = b1 - b if b1 - b < BATCH else BATCH
        _words(d, b, nb, w)
        i0 = 2 * b
        cnt = d.n - i0 if d.n - i0 < 2 * nb else 2 * nb
        if s0 == 0 and s1 == 0:
            l = lo[0]
            sp = hi[0] - l
            for j in range(cnt):
                out[i0 + j] = l + sp * (<double>(_u64(w, j) >> 11) * F64_ULP)
        else:
            for j in range(cnt):
                i = i0 + j
                l = lo[i * s0]
                out[i] = l + (hi[i * s1] - l) * (<double>(_u64(w, j) >> 11) * F64_ULP)
        b += nb


# Box-Muller in plain float64 arithmetic (no libm): the same additions, multiplications,
# divisions and square roots, in the same order, give the same bits on every IEEE device.

cdef inline double _from_bits(uint64_t b) noexcept nogil:
    cdef double x
    memcpy(&x, &b, 8)
    return x


cdef inline uint64_t _to_bits(double x) noexcept nogil:
    cdef uint64_t b
    memcpy(&b, &x, 8)
    return b


cdef inline double _exact_double(uint64_t v) noexcept nogil:
    """float64(v) for v <= 2**53, from two exact 32-bit halves (2**52 + h has h in its low bits):
    integer and float64 operations only, so the compiler vectorizes it."""
    return ((_from_bits(F64_TWO52 | (v >> 32)) - TWO52) * 4294967296.0 +
            (_from_bits(F64_TWO52 | (v & <uint32_t>0xFFFFFFFF)) - TWO52))


cdef void _neg2log(const uint64_t* v, Py_ssize_t npairs, int bits, double* out) noexcept nogil:
    """out[p] := -2 ln(u1), u1 = (v[2p] + 1) 2**-bits in (0, 1] (v[2p] + 1 <= 2**53).

    float64(v + 1) = m 2**k with m in [1, 2), halved (k + 1) when m > sqrt(2); then
    ln m = 2 atanh(t) = 2 t (1 + y/3 + ... + y**10/21), t = (m - 1) / (m + 1), y = t**2 < 0.03,
    plus (k - bits) ln 2 (split in a high part with trailing zeros and a low part). Branch-free
    (the selects are bit operations) so the loop vectorizes."""
    cdef Py_ssize_t p
    cdef uint64_t xb, mb, big
    cdef double k, m, t, y, q
    for p in range(npairs):
        xb = _to_bits(_exact_double(v[2 * p] + 1))
        mb = xb & F64_MANTISSA
        big = (SQRT2_MANTISSA - mb) >> 63                       # 1 when m > sqrt(2)
        k = _from_bits(F64_TWO52 | ((xb >> 52) + big)) - (TWO52 + 1023.0) - bits
        m = _from_bits(mb | (F64_ONE - (big << 52)))
        t = (m - 1.0) / (m + 1.0)
        y = t * t
        q = LOG_C[9]
        q = q * y + LOG_C[8]
        q = q * y + LOG_C[7]
        q = q * y + LOG_C[6]
        q = q * y + LOG_C[5]
        q = q * y + LOG_C[4]
        q = q * y + LOG_C[3]
        q = q * y + LOG_C[2]
        q = q * y + LOG_C[1]
        q = q * y + LOG_C[0]
        q = q * y + 1.0
        out[p] = -2.0 * (k * LN2_HI + (k * LN2_LO + (t + t) * q))


cdef void _turns(const uint64_t* v, const double* r, Py_ssize_t npairs, int bits,
                 double* z) noexcept nogil:
    """z[2p], z[2p + 1] := r[p] cos t, r[p] sin t, t = 2 pi v[2p + 1] 2**-bits (bits <= 53).

    q = round(4 v 2**-bits) quarter turns (exact, in integers) plus a = (v - q 2**(bits-2))
    (2 pi 2**-bits) in [-pi/4, pi/4], whose sine and cosine are Taylor polynomials to a**17 and
    a**16; each quarter turn maps (cos, sin) to (-sin, cos) (bit operations, no branches)."""
    cdef Py_ssize_t p
    cdef uint64_t q, sb, cb, odd, c1, s1
    cdef uint64_t half = <uint64_t>1 << (bits - 3)
    cdef int sh = bits - 2
    cdef double step = TWO_PI / <double>(<uint64_t>1 << bits)
    cdef double a, y, ps, pc
    for p in range(npairs):
        q = (v[2 * p + 1] + half) >> sh
        # v - q 2**(bits-2) is in [-2**50, 2**50]: shifted by 2**51 it converts exactly
        a = (_from_bits(F64_TWO52 | (v[2 * p + 1] - (q << sh) + TWO51_BITS)) -
             (TWO52 + TWO51)) * step
        y = a * a
        ps = SIN_C[7]
        pc = COS_C[7]
        ps = ps * y + SIN_C[6]
        pc = pc * y + COS_C[6]
        ps = ps * y + SIN_C[5]
        pc = pc * y + COS_C[5]
        ps = ps * y + SIN_C[4]
        pc = pc * y + COS_C[4]
        ps = ps * y + SIN_C[3]
        pc = pc * y + COS_C[3]
        ps = ps * y + SIN_C[2]
        pc = pc * y + COS_C[2]
        ps = ps * y + SIN_C[1]
        pc = pc * y + COS_C[1]
        ps = ps * y + SIN_C[0]
        pc = pc * y + COS_C[0]
        sb = _to_bits(a + a * y * ps)
        cb = _to_bits(1.0 - 0.5 * y + y * y * pc)
        odd = 0 - (q & 1)
        c1 = (sb & odd) | (cb & ~odd)
        s1 = (cb & odd) | (sb & ~odd)
        z[2 * p] = r[p] * _from_bits(c1 ^ (((q + 1) & 2) << 62))
        z[2 * p + 1] = r[p] * _from_bits(s1 ^ ((q & 2) << 62))


cdef void _box_muller(const uint64_t* v, Py_ssize_t npairs, int bits, double* z) noexcept nogil:
    """z[2p], z[2p + 1] := r cos t, r sin t for the pair v[2p], v[2p + 1]: r = sqrt(-2 ln u1),
    u1 = (v[2p] + 1) 2**-bits in (0, 1], t = 2 pi v[2p + 1] 2**-bits. Three loops, so the two
    polynomial ones vectorize (sqrt may set errno, which keeps its loop scalar)."""
    cdef double r[2 * BATCH]
    cdef Py_ssize_t p
    _neg2log(v, npairs, bits, r)
    for p in range(npairs):
        r[p] = sqrt(r[p])
    _turns(v, r, npairs, bits, z)


cdef void _k_normal_f32(const Draw* d, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    """Elements 2q, 2q + 1 of the draw: Box-Muller of words 2q, 2q + 1 (4 per block) with
    bits = 32, in float64, rounded to float32; then loc + scale * z in float32."""
    cdef uint32_t w[4 * BATCH]
    cdef uint64_t v[4 * BATCH]
    cdef double z[4 * BATCH]
    cdef float* out = <float*>d.out
    cdef const float* loc = <const float*>d.p0
    cdef const float* scale = <const float*>d.p1
    cdef Py_ssize_t b, nb, i0, cnt, i, j, s0 = d.s0, s1 = d.s1
    b = b0
    while b < b1:
        nb = b1 - b if b1 - b < BATCH else BATCH
        _words(d, b, nb, w)
        i0 = 4 * b
        cnt = d.n - i0 if d.n - i0 < 4 * nb else 4 * nb
        for j in range(4 * nb):
            v[j] = w[j]
        _box_muller(v, (cnt + 1) // 2, 32, z)
        for j in range(cnt):
            i = i0 + j
            out[i] = loc[i * s0] + scale[i * s1] * <float>z[j]
        b += nb


cdef void _k_normal_f64(const Draw* d, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    """Elements 2b, 2b + 1: Box-Muller of block b's numbers x0 >> 11, x1 >> 11 with bits = 53
    (2 per block); then loc + scale * z."""
    cdef uint32_t w[4 * BATCH]
    cdef uint64_t v[2 * BATCH]
    cdef double z[2 * BATCH]
    cdef double* out = <double*>d.out
    cdef const double* loc = <const double*>d.p0
    cdef const double* scale = <const double*>d.p1
    cdef Py_ssize_t b, nb, i0, cnt, i, j, s0 = d.s0, s1 = d.s1
    b = b0
    while b < b1:
        nb = b1 - b if b1 - b < BATCH else BATCH
        _words(d, b, nb, w)
        i0 = 2 * b
        cnt = d.n - i0 if d.n - i0 < 2 * nb else 2 * nb
        for j in range(2 * nb):
            v[j] = _u64(w, j) >> 11
        _box_muller(v, (cnt + 1) // 2, 53, z)
        for j in range(cnt):
            i = i0 + j
            out[i] = loc[i * s0] + scale[i * s1] * z[j]
        b += nb


# ---------------------------------------------------------------------------------------------
# kernels: bounded integers (Lemire's multiply-shift with rejection, retries at attempt 1, 2, ...)
# ---------------------------------------------------------------------------------------------

cdef inline uint64_t _bounded(const Draw* d, Py_ssize_t b, Py_ssize_t half, uint64_t x,
                              uint64_t s) noexcept nogil:
    """A uniform integer in [0, s) (s == 0 means 2**64) from x, u64 number `half` of block b.

    x * s = hi * 2**64 + lo; accept when lo >= 2**64 mod s, else retry with number `half` of
    block b at counter word 2 = 1, 2, ... (exactly uniform; the retry rate is below s / 2**64)."""
    cdef uint64_t lo, hi, t
    cdef uint32_t attempt = 0
    cdef uint32_t w2[4]
    if s == 0:
        return x
    hi = carray_mul128(x, s, &lo)
    if lo < s:
        t = (0 - s) % s
        while lo < t:
            attempt += 1
            _block(d, b, attempt, w2)
            hi = carray_mul128(_u64(w2, half), s, &lo)
    return hi


ctypedef fused int_t:
    bool_t
    int32_t
    int64_t


cdef void _k_integers(int_t* out, const Draw* d, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    """Element i: low + a uniform integer in [0, span) from u64 number i of the draw (2 per
    block)."""
    cdef uint32_t w[4 * BATCH]
    cdef const int64_t* lo = <const int64_t*>d.p0
    cdef const uint64_t* span = <const uint64_t*>d.p1
    cdef Py_ssize_t b, nb, i0, cnt, i, j, s0 = d.s0, s1 = d.s1
    b = b0
    while b < b1:
        nb = b1 - b if b1 - b < BATCH else BATCH
        _words(d, b, nb, w)
        i0 = 2 * b
        cnt = d.n - i0 if d.n - i0 < 2 * nb else 2 * nb
        for j in range(cnt):
            i = i0 + j
            out[i] = <int_t>(<int64_t>(<uint64_t>lo[i * s0] +
                                       _bounded(d, b + j // 2, j & 1, _u64(w, j), span[i * s1])))
        b += nb


cdef void _k_integers_b(const Draw* d, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    _k_integers(<bool_t*>d.out, d, b0, b1)


cdef void _k_integers_i32(const Draw* d, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    _k_integers(<int32_t*>d.out, d, b0, b1)


cdef void _k_integers_i64(const Draw* d, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    _k_integers(<int64_t*>d.out, d, b0, b1)


cdef void _k_swaps(const Draw* d, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    """Element i: a uniform j in [0, i] (the inside-out Fisher-Yates draw of position i)."""
    cdef uint32_t w[4 * BATCH]
    cdef int64_t* out = <int64_t*>d.out
    cdef Py_ssize_t b, nb, i0, cnt, i, j
    b = b0
    while b < b1:
        nb = b1 - b if b1 - b < BATCH else BATCH
        _words(d, b, nb, w)
        i0 = 2 * b
        cnt = d.n - i0 if d.n - i0 < 2 * nb else 2 * nb
        for j in range(cnt):
            i = i0 + j
            out[i] = <int64_t>_bounded(d, b + j // 2, j & 1, _u64(w, j), <uint64_t>(i + 1))
        b += nb


cdef void _inside_out(int64_t* a, Py_ssize_t n) noexcept nogil:
    """a[i] holds j_i <= i on entry; on exit a is the inside-out Fisher-Yates shuffle of
    range(n): for i in 0..n-1: a[i] = a[j_i]; a[j_i] = i."""
    cdef Py_ssize_t i
    cdef int64_t j
    for i in range(n):
        j = a[i]
        a[i] = a[j]
        a[j] = i


# ---------------------------------------------------------------------------------------------
# argument helpers
# ---------------------------------------------------------------------------------------------

cdef int _out_shape(object size, tuple params, Py_ssize_t* shape) except -1:
    """The draw's shape: `size`, or (size None) the broadcast shape of the array parameters."""
    if size is not None:
        return parse_shape(size, shape)
    shp = broadcast_shapes(*[p.shape for p in params if p is not None])
    return parse_shape(shp, shape)


cdef Array _param_array(Array a, int num, int ndim, Py_ssize_t* shape, str name):
    """The array parameter a, cast to `num` and broadcast to `shape`, as a new contiguous array."""
    cdef Array out = new_array(ndim, shape, num)
    try:
        broadcast_view(a, ndim, shape)
    except ValueError:
        raise ValueError(f"{name} of shape {a.shape} cannot be broadcast to the output shape "
                         f"{tuple(shape[i] for i in range(ndim))}") from None
    copy_into(out, a)
    return out


cdef object _on_device(object x, str device):
    """A draw made on the host moved to `device` (the numbers do not depend on the device)."""
    if device == "gpu" and isinstance(x, Array):
        return (<Array>x).to("gpu")
    return x


cdef object _as_param(object x, int num):
    """None when x is a scalar (a Python number or a 0-d array), else x as a host Array of
    `num` (device parameters are read to the host, where the draw is made)."""
    if isinstance(x, Array) and on_gpu(<Array>x):
        x = (<Array>x).to("cpu")
    if isinstance(x, Array):
        return None if (<Array>x).ndim == 0 else as_array(x, num)
    if isinstance(x, (list, tuple)) or (hasattr(x, "shape") and len(x.shape) > 0):
        return as_array(x, num)
    return None


cdef int _float_dtype(object dtype, str what) except -1:
    cdef int num = parse_dtype_num(dtype, default_float_num())
    if num != FLOAT32 and num != FLOAT64:
        raise TypeError(f"Unsupported dtype {dtype_of(num).name} for {what}: use float32 or "
                        f"float64")
    return num


cdef int _int_dtype(object dtype) except -1:
    cdef int num = parse_dtype_num(dtype, INT64)
    if not is_int_num(num) and num != BOOL:
        raise TypeError(f"Unsupported dtype {dtype_of(num).name} for integers: use an integer "
                        f"dtype or bool")
    return num


cdef object _int_scalar(object x, str name):
    """x as a Python int; floats truncate toward zero (as NumPy, and as array bounds do)."""
    if isinstance(x, float):
        return int(x)
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(f"integers: {name} must be an integer, got {type(x).__name__} "
                        f"{x!r}") from None


cdef tuple _int_bounds(int num):
    """(min, max, name) of the values integers() draws for type num: the type's range (uint64:
    up to int64's max, as the draws are made in int64)."""
    cdef object bits = 8 * itemsize_of(num)
    if num == BOOL:
        return 0, 1, "bool"
    if is_unsigned_num(num):
        return 0, min((1 << bits) - 1, INT64_MAX), dtype_of(num).name
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1, dtype_of(num).name


# ---------------------------------------------------------------------------------------------
# the generator
# ---------------------------------------------------------------------------------------------

cdef class Generator:
    """A counter-based random generator: Philox4x32-10 keyed by a 64-bit seed.

    Generator(seed) with seed an int in [0, 2**64) (None: 8 bytes from os.urandom). Every draw
    takes the next ceil(n / per_block) counter blocks (`offset` counts the blocks used so far),
    so successive draws differ and every number depends only on (seed, its counter, position).
    See carray.random's docstring for the mapping from counter to numbers.
    """
    cdef uint64_t seed_
    cdef uint64_t offset_

    def __init__(self, seed=None):
        if seed is None:
            import os
            seed = int.from_bytes(os.urandom(8), "little")
        if isinstance(seed, (float, bool)) or not hasattr(seed, "__index__"):
            raise TypeError(f"seed must be an integer in [0, 2**64) or None, got "
                            f"{type(seed).__name__} {seed!r}")
        seed = operator.index(seed)
        if seed < 0 or seed >= 2 ** 64:
            raise ValueError(f"seed must be an integer in [0, 2**64), got {seed}")
        self.seed_ = seed
        self.offset_ = 0

    @property
    def seed(self):
        """The key: seed & 0xFFFFFFFF is key word 0, seed >> 32 key word 1."""
        return self.seed_

    @property
    def offset(self):
        """Counter blocks used so far; the next draw starts at this counter."""
        return self.offset_

    def __repr__(self):
        return f"Generator(Philox4x32-10, seed={self.seed_}, offset={self.offset_})"

    def __reduce__(self):
        return (_restore, (self.seed_, self.offset_))

    cdef uint64_t _take(self, Py_ssize_t n, int per_block) except? 0:
        """Reserve the blocks of an n-element draw (at least one); return its first block."""
        cdef uint64_t start = self.offset_
        cdef uint64_t nblocks = <uint64_t>((n + per_block - 1) // per_block)
        if nblocks > UINT64_MAX - start:
            raise OverflowError("this Generator has used all 2**64 counter blocks")
        self.offset_ = start + nblocks
        return start

    cdef Draw _draw(self, Py_ssize_t n, int per_block) except *:
        cdef Draw d
        d.k0 = <uint32_t>self.seed_
        d.k1 = <uint32_t>(self.seed_ >> 32)
        d.offset = self._take(n, per_block)
        d.n = n
        d.out = NULL
        d.p0 = NULL
        d.p1 = NULL
        d.s0 = 0
        d.s1 = 0
        return d

    # -- floats --------------------------------------------------------------------------------

    def random(self, size=None, dtype=None, device=None):
        """Uniform floats in [0, 1): float32 (the default) u = (u32 >> 8) * 2**-24, float64
        u = (u64 >> 11) * 2**-53. size None returns a Python float.

        Raises TypeError for a non-float dtype, ValueError for negative dims or a bad device."""
        return self._uniform(0.0, 1.0, size, dtype, device, "random")

    def uniform(self, low=0.0, high=1.0, size=None, dtype=None, device=None):
        """Uniform floats low + (high - low) * u, u as in random(); low and high broadcast.

        Raises ValueError when high - low < 0, OverflowError when it is not finite."""
        return self._uniform(low, high, size, dtype, device, "uniform")

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=None, device=None):
        """Normal floats loc + scale * z, z standard normal by Box-Muller; loc, scale broadcast.

        Raises ValueError when scale < 0."""
        cdef int num = _float_dtype(dtype, "normal")
        return _on_device(self._floats(loc, scale, size, num, 1), parse_device(device))

    cdef object _uniform(self, low, high, size, dtype, device, str what):
        cdef int num = _float_dtype(dtype, what)
        return _on_device(self._floats(low, high, size, num, 0), parse_device(device))

    cdef object _floats(self, a, b, size, int num, int normal):
        """uniform (normal == 0) or normal draws of dtype num with parameters a, b."""
        cdef Py_ssize_t shape[MAXDIMS]
        cdef int ndim, per_block
        cdef Py_ssize_t n, i
        cdef Draw d
        cdef Array out, pa = None, pb = None
        cdef double d0 = 0.0, d1 = 0.0, r64
        cdef float r32
        cdef kernel_t kernel
        xa = _as_param(a, num)
        xb = _as_param(b, num)
        if xa is None and xb is None and size is None:
            ndim = -1
            n = 1
        else:
            ndim = _out_shape(size, (xa, xb), shape)
            n = 1
            for i in range(ndim):
                n *= shape[i]
        # parameters: scalars in the Draw, arrays contiguous in the output's shape
        if xa is None:
            d0 = float(a)
        else:
            pa = _param_array(xa, num, ndim, shape, "loc" if normal else "low")
        if xb is None:
            d1 = float(b)
        else:
            pb = _param_array(xb, num, ndim, shape, "scale" if normal else "high")
        if num == FLOAT32:
            if xa is None:
                d0 = float(<float>d0)
            if xb is None:
                d1 = float(<float>d1)
        _check_float_params(d0 if xa is None else None, d1 if xb is None else None, pa, pb,
                            normal)
        per_block = 4 if num == FLOAT32 else 2
        if normal:
            kernel = _k_normal_f32 if num == FLOAT32 else _k_normal_f64
        else:
            kernel = _k_uniform_f32 if num == FLOAT32 else _k_uniform_f64
        d = self._draw(n, per_block)
        if xa is None:
            d.d0 = d0
            d.f0 = <float>d0
            d.p0 = <const char*>&d.f0 if num == FLOAT32 else <const char*>&d.d0
        else:
            d.p0 = pa.data
            d.s0 = 1
        if xb is None:
            d.d1 = d1
            d.f1 = <float>d1
            d.p1 = <const char*>&d.f1 if num == FLOAT32 else <const char*>&d.d1
        else:
            d.p1 = pb.data
            d.s1 = 1
        if ndim < 0:
            d.out = <char*>&r32 if num == FLOAT32 else <char*>&r64
            kernel(&d, 0, 1)
            return float(r32) if num == FLOAT32 else r64
        out = new_array(ndim, shape, num)
        d.out = out.data
        with nogil:
            _run(kernel, &d, per_block)
        return out

    # -- integers ------------------------------------------------------------------------------

    def integers(self, low, high=None, size=None, dtype=None, endpoint=False, device=None):
        """Uniform integers in [low, high) ([low, high] with endpoint=True); high None draws
        from [0, low). dtype any integer type (int64 default) or bool; low and high broadcast.

        Exactly uniform: Lemire's multiply-shift on a 64-bit number with rejection, a rejected
        number replaced by the same position's number at the next attempt counter.
        Float bounds truncate toward zero (as NumPy). Raises ValueError for low >= high
        ("high <= low") or bounds outside the dtype, TypeError for a non-integer dtype or bound."""
        cdef int want = _int_dtype(dtype)
        # the narrow and unsigned ints are drawn as int64 and cast (their bounds still apply)
        cdef int num = want if want == INT32 or want == INT64 or want == BOOL else INT64
        cdef Py_ssize_t shape[MAXDIMS]
        cdef int ndim
        cdef Py_ssize_t n, i
        cdef Draw d
        cdef Array out, pa = None, pb = None
        cdef int64_t r64
        cdef int32_t r32
        cdef bool_t rb
        cdef kernel_t kernel
        cdef str dev = parse_device(device)
        if high is None:
            low, high = 0, low
        dmin, dmax, dname = _int_bounds(want)
        xa = _as_param(low, INT64)
        xb = _as_param(high, INT64)
        if xa is None and xb is None and size is None:
            ndim = -1
            n = 1
        else:
            ndim = _out_shape(size, (xa, xb), shape)
            n = 1
            for i in range(ndim):
                n *= shape[i]
        if xa is None and xb is None:
            lo = _int_scalar(low, "low")
            hi = _int_scalar(high, "high")
            if not endpoint:
                hi -= 1
            if lo < dmin:
                raise ValueError(f"integers: low is out of bounds for {dname} (low={lo})")
            if hi > dmax:
                raise ValueError(f"integers: high is out of bounds for {dname} "
                                 f"(high={hi + (0 if endpoint else 1)})")
            if hi < lo:
                raise ValueError(f"integers: low >= high (high <= low): low={lo}, "
                                 f"high={hi + (0 if endpoint else 1)}" +
                                 ("" if endpoint else "; the range [low, high) is empty"))
            d_lo = lo
            d_span = (hi - lo + 1) & 0xFFFFFFFFFFFFFFFF
        else:
            pa = _param_array(xa if xa is not None else as_array(_int_scalar(low, "low"), INT64),
                              INT64, ndim, shape, "low")
            pb = _param_array(xb if xb is not None else as_array(_int_scalar(high, "high"), INT64),
                              INT64, ndim, shape, "high")
            _int_spans(pa, pb, n, endpoint, dmin, dmax, dname)   # pb := spans (as uint64)
        kernel = _k_integers_i64 if num == INT64 else (_k_integers_i32 if num == INT32
                                                       else _k_integers_b)
        d = self._draw(n, 2)
        if pa is None:
            d.i0 = d_lo
            d.u1 = d_span
            d.p0 = <const char*>&d.i0
            d.p1 = <const char*>&d.u1
        else:
            d.p0 = pa.data
            d.p1 = pb.data
            d.s0 = 1
            d.s1 = 1
        if ndim < 0:
            d.out = <char*>&r64 if num == INT64 else (<char*>&r32 if num == INT32 else <char*>&rb)
            kernel(&d, 0, 1)
            return r64 if num == INT64 else (r32 if num == INT32 else bool(rb))
        out = new_array(ndim, shape, num)
        d.out = out.data
        with nogil:
            _run(kernel, &d, 2)
        if want != num:
            out = out.astype(dtype_of(want))
        return _on_device(out, dev)

    # -- permutations --------------------------------------------------------------------------

    def permutation(self, x, axis=0):
        """A shuffled arange(x) (int64) for an int x, else a shuffled copy of x along `axis`.

        Inside-out Fisher-Yates: position i draws j_i uniform in [0, i] (as integers(0, i,
        endpoint=True) at that position), then sequentially a[i] = a[j_i]; a[j_i] = i.
        Raises AxisError for a 0-d array or a float."""
        cdef Py_ssize_t n, i, rowbytes
        cdef Array perm, src, out
        cdef Py_ssize_t shape[1]
        cdef int64_t* p
        cdef Draw d
        if isinstance(x, int) or (hasattr(x, "__index__") and not isinstance(x, Array)
                                  and type(x).__name__ != "ndarray"):
            n = max(operator.index(x), 0)
            src = None
        else:
            if isinstance(x, float):
                raise AxisError("axis 0 is out of bounds for array of dimension 0")
            src = as_array(x, -1)
            if src.ndim == 0:
                raise AxisError("axis 0 is out of bounds for array of dimension 0")
            axis = operator.index(axis)
            if not -src.ndim <= axis < src.ndim:
                raise AxisError(f"axis {axis} is out of bounds for array of dimension {src.ndim}")
            if axis % src.ndim != 0:    # shuffle axis 0 of the view with `axis` in front
                return self.permutation(src.swapaxes(0, axis)).swapaxes(0, axis).copy()
            if on_gpu(src):         # the same shuffle as on the host, moved back
                return self.permutation(src.to("cpu")).to("gpu")
            n = src.shape_[0]
        shape[0] = n
        perm = new_array(1, shape, INT64)
        d = self._draw(n, 2)
        d.out = perm.data
        p = <int64_t*>perm.data
        with nogil:
            _run(_k_swaps, &d, 2)
            _inside_out(p, n)
        if src is None:
            return perm
        if not src.c_contiguous():
            src = src.copy()
        out = new_array(src.ndim, src.shape_, src.dtype_num)
        rowbytes = src.itemsize
        for i in range(1, src.ndim):
            rowbytes *= src.shape_[i]
        if rowbytes > 0:
            with nogil:
                for i in range(n):
                    memcpy(out.data + i * rowbytes, src.data + p[i] * rowbytes, rowbytes)
        return out


def _restore(seed, offset):
    """Unpickle a Generator: its seed and counter offset."""
    cdef Generator g = Generator(seed)
    g.offset_ = offset
    return g


cdef int _check_float_params(object d0, object d1, Array pa, Array pb, int normal) except -1:
    """ValueError for scale < 0 (normal) or high - low < 0 (uniform); OverflowError for a
    non-finite high - low. Scalars are d0/d1 (None for arrays pa/pb of float32 or float64)."""
    cdef Py_ssize_t i, n
    cdef double lo, hi
    if normal:
        if pb is None:
            if d1 < 0:
                raise ValueError(f"normal: scale < 0 (scale={d1})")
            return 0
        n = pb.size_c()
        for i in range(n):
            hi = (<float*>pb.data)[i] if pb.dtype_num == FLOAT32 else (<double*>pb.data)[i]
            if hi < 0:
                raise ValueError(f"normal: scale < 0 (scale[{i}] of the broadcast scale = {hi})")
        return 0
    if pa is None and pb is None:
        _check_range(d0, d1, -1)
        return 0
    n = (pa if pa is not None else pb).size_c()
    for i in range(n):
        if pa is None:
            lo = d0
        else:
            lo = (<float*>pa.data)[i] if pa.dtype_num == FLOAT32 else (<double*>pa.data)[i]
        if pb is None:
            hi = d1
        else:
            hi = (<float*>pb.data)[i] if pb.dtype_num == FLOAT32 else (<double*>pb.data)[i]
        _check_range(lo, hi, i)
    return 0


cdef int _check_range(double lo, double hi, Py_ssize_t i) except -1:
    where = "" if i < 0 else f" at broadcast element {i}"
    if hi - lo < 0:
        raise ValueError(f"uniform: high - low < 0{where} (low={lo}, high={hi})")
    if not isfinite(hi - lo):
        raise OverflowError(f"uniform: high - low range exceeds valid bounds{where} "
                            f"(low={lo}, high={hi})")
    return 0


cdef int _int_spans(Array lo, Array hi, Py_ssize_t n, bint endpoint, object dmin, object dmax,
                    str dname) except -1:
    """Check int64 bounds lo, hi element by element; overwrite hi with the spans (uint64,
    0 meaning 2**64) of the inclusive ranges."""
    cdef int64_t* a = <int64_t*>lo.data
    cdef int64_t* b = <int64_t*>hi.data
    cdef int64_t vmin = dmin, vmax = dmax, h
    cdef Py_ssize_t i
    for i in range(n):
        if a[i] < vmin:
            raise ValueError(f"integers: low is out of bounds for {dname} (low[{i}]={a[i]})")
        if not endpoint and b[i] == INT64_MIN:
            raise ValueError(f"integers: low >= high (high <= low) at element {i}")
        h = b[i] if endpoint else b[i] - 1
        if h > vmax:
            raise ValueError(f"integers: high is out of bounds for {dname} (high[{i}]={b[i]})")
        if h < a[i]:
            raise ValueError(f"integers: low >= high (high <= low) at element {i}: "
                             f"low={a[i]}, high={b[i]}")
        (<uint64_t*>b)[i] = <uint64_t>h - <uint64_t>a[i] + 1
    return 0
