"""Kernels behind carray.nn: 2-d convolution (im2col + GEMM), max and average pooling, and their
gradients, for float32 and float64 NCHW arrays.

carray/nn.py parses and validates the arguments (shapes, dtypes, sizes) and hands these entry
points C-contiguous host arrays of one float dtype; each entry point re-checks what memory safety
depends on (dtype, contiguity, the shapes it indexes with) before it releases the GIL, so a wrong
call raises ValueError instead of reading out of bounds.

Convolution. With K = C * kH * kW and L = Ho * Wo, image n's receptive fields unrolled into
col (K x L), col[(c, ky, kx), (oy, ox)] = x[n, c, oy * sH - pH + ky * dH, ox * sW - pW + kx * dW]
(0 outside the image), every pass is GEMMs (carray/cpu/_gemm.pxd):

    forward        out[n]   (O x L) = weight (O x K) @ col (K x L)  (+ bias[o] on every row)
    grad_input     dcol     (K x L) = weight^T (K x O) @ gout[n] (O x L); grad_x[n] = col2im(dcol)
    grad_weight    dweight^T (K x O) += col (K x L) @ gout[n]^T (L x O)   (summed over n)

Small images go several to a GEMM (col is then K x nb*L, and gout/out are regrouped to and from
O x nb*L); a 1x1 kernel with stride 1 and no padding multiplies the image itself. With enough
images, the threads take chunks of images as they come, and each thread runs a chunk's unfold,
GEMM (single-threaded inside a parallel region) and fold alone, with its own buffers that stay
in its core's L2: one parallel region per pass, no barrier. With few images (N < threads, or an
odd few), the chunks go one after another with all threads in each step.

Measured on the 2-core dev machine (bench/test_bench_conv.py, float32, GFLOP/s on W9 / W8's
first / second layer, best of a loaded run): im2col + GEMM as above 128 / 28.6 / 79; chunks
with all threads in each step 110 / 24.6 / 62 (it synchronises the threads 3 times per chunk,
and a loaded machine stalls every barrier); a direct loop (4 output channels at a time, the
inner loop over output columns) 19 / 15 / 4 (this module is compiled for baseline x86-64; the
GEMM's AVX-512/AVX2 micro-kernels are chosen at run time). Each GEMM call takes the GIL for a
moment to allocate its packing buffers, hence GEMM_MIN_WORK: a GEMM per small image had the
threads queue for the GIL (50x slower on a loaded machine).

Pooling runs one (H x W) plane per iteration of a parallel loop over the N * C planes; 2x2 max
pooling with stride 2 (the common case) has its own branch-free loop.

Softmax cross entropy runs one row at a time: its max, the exponentials (kept as the softmax for
the gradient), and -log softmax at the row's target, with the sum over rows in double; the row
loops are _rows.h's vectorised primitives (float32 exponentials by carray_expf).

Sections: helpers; convolution; pooling; softmax cross entropy; SGD's update.
"""

from cython.parallel cimport parallel, prange, threadid
from libc.math cimport INFINITY, NAN, exp, log
from libc.stdint cimport int64_t
from libc.string cimport memcpy, memset

from carray.core._array cimport Array, new_array
from carray.core._dtype cimport FLOAT32, FLOAT64, INT64
from carray.cpu._gemm cimport gemm
from carray.core._storage cimport host_alloc, host_free
from carray.core._strided cimport max_threads, region_enter, region_exit, thread_seen

cdef extern from "_rows.h" nogil:
    # vectorised row primitives, cloned for AVX2 / AVX-512 (see _rows.h)
    float carray_row_maxf(const float* x, Py_ssize_t n)
    double carray_row_maxd(const double* x, Py_ssize_t n)
    float carray_row_expsumf(const float* x, float* y, Py_ssize_t n, float m)
    double carray_row_expsumd(const double* x, double* y, Py_ssize_t n, double m)
    void carray_row_divf(float* y, Py_ssize_t n, float s)
    void carray_row_divd(double* y, Py_ssize_t n, double s)
    void carray_row_scalef(const float* x, float* y, Py_ssize_t n, float s)
    void carray_row_scaled(const double* x, double* y, Py_ssize_t n, double s)

ctypedef fused real:
    float
    double

# Loops with fewer multiply-adds (or, for pooling, element visits) than this run on one thread:
# starting a parallel region costs a few microseconds.
cdef double PARALLEL_MIN_WORK = 1 << 16

# Images per chunk (per GEMM call): enough for GEMM_MIN_WORK multiply-adds, so that small images
# do not pay a GEMM call each (each call takes the GIL to allocate its buffers, which threads
# then wait for), but no more than keep a chunk's unrolled receptive fields (col) within
# COL_BUDGET bytes, where the GEMM still finds them in the caches.
cdef Py_ssize_t GEMM_MIN_WORK = 1 << 21
cdef Py_ssize_t COL_BUDGET = 4 << 20


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

cdef struct Geom:
    Py_ssize_t N, C, H, W           # input
    Py_ssize_t O, kh, kw            # weight (O, C, kh, kw), or the pooling window
    Py_ssize_t Ho, Wo               # output
    Py_ssize_t sh, sw, ph, pw, dh, dw


cdef int _fill_geom(Geom* g, Py_ssize_t N, Py_ssize_t C, Py_ssize_t H, Py_ssize_t W,
                    Py_ssize_t O, Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t Ho, Py_ssize_t Wo,
                    Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t ph, Py_ssize_t pw,
                    Py_ssize_t dh, Py_ssize_t dw) except -1:
    """Fill g; ValueError when the sizes are not those of a valid window layout."""
    g.N, g.C, g.H, g.W, g.O, g.kh, g.kw, g.Ho, g.Wo = N, C, H, W, O, kh, kw, Ho, Wo
    g.sh, g.sw, g.ph, g.pw, g.dh, g.dw = sh, sw, ph, pw, dh, dw
    if min(N, C, H, W, O, Ho, Wo) < 0 or min(kh, kw, sh, sw, dh, dw) < 1 or min(ph, pw) < 0:
        raise ValueError("carray.nn internal: invalid sizes")
    return 0


cdef int _check(Array a, str name, int dtype_num, tuple shape) except -1:
    """ValueError unless a is a C-contiguous host array of dtype_num with exactly `shape`."""
    if a.dtype_num != dtype_num or a.shape != shape or not a.c_contiguous() or \
            (a.data == NULL and a.size_c() > 0):
        raise ValueError(f"carray.nn internal: {name} must be a C-contiguous host array of shape "
                         f"{shape} and type number {dtype_num}, got shape {a.shape}, type number "
                         f"{a.dtype_num}")
    return 0


cdef Array _new4(tuple shape, int dtype_num):
    """A new C-contiguous 4-d array (ValueError for negative sizes)."""
    cdef Py_ssize_t dims[4]
    dims[0], dims[1], dims[2], dims[3] = shape
    if min(dims[0], dims[1], dims[2], dims[3]) < 0:
        raise ValueError(f"carray.nn internal: negative size in {shape}")
    return new_array(4, dims, dtype_num)


cdef int _threads(Py_ssize_t tasks, double work) noexcept nogil:
    """Threads for `tasks` independent tasks of `work` multiply-adds in all."""
    cdef int nt = max_threads()
    if work < PARALLEL_MIN_WORK or tasks < 2:
        return 1
    return <int>tasks if tasks < nt else nt


cdef inline void _valid(Py_ssize_t start, Py_ssize_t step, Py_ssize_t size, Py_ssize_t count,
                        Py_ssize_t* lo, Py_ssize_t* hi) noexcept nogil:
    """[lo, hi): the i in [0, count) with 0 <= start + i * step < size (step >= 1)."""
    cdef Py_ssize_t a = 0, b
    if start < 0:
        a = (-start + step - 1) // step
    b = 0 if size - 1 - start < 0 else (size - 1 - start) // step + 1
    if a > count:
        a = count
    if b > count:
        b = count
    if b < a:
        b = a
    lo[0] = a
    hi[0] = b


# ---------------------------------------------------------------------------------------------
# convolution
# ---------------------------------------------------------------------------------------------

cdef void _shifted_rows(const real* x, real* dst, const Geom* g, Py_ssize_t iy0,
                        Py_ssize_t ix0, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """dst (Ho x W) := x (H x W) shifted by iy0 rows and ix0 columns, 0 outside it: the rows of
    col of one kernel tap when sh = sw = 1 and Wo = W. The rows that fall inside x are one
    memcpy (the elements that wrap around from a neighbouring row are in the columns outside
    [lo, hi), zeroed after); rows outside x are zeroed."""
    cdef Py_ssize_t W = g.W, oy0, oy1, start, stop, oy, ox
    if lo >= hi:                # the tap's columns all miss the input (padding wider than it)
        memset(dst, 0, g.Ho * W * sizeof(real))
        return
    oy0 = -iy0 if iy0 < 0 else 0                      # output rows whose input row exists
    if oy0 > g.Ho:
        oy0 = g.Ho
    oy1 = g.H - iy0 if g.H - iy0 < g.Ho else g.Ho
    if oy1 < oy0:
        oy1 = oy0
    if oy0 > 0:
        memset(dst, 0, oy0 * W * sizeof(real))
    if oy1 < g.Ho:
        memset(dst + oy1 * W, 0, (g.Ho - oy1) * W * sizeof(real))
    if oy1 == oy0:
        return
    # dst[p] = x[(iy0 + oy0) * W + ix0 + p - oy0 * W] for p in [oy0 * W, oy1 * W), clipped to x
    start = oy0 * W + lo
    stop = (oy1 - 1) * W + hi
    if stop > start:
        memcpy(dst + start, x + iy0 * W + ix0 + start, (stop - start) * sizeof(real))
    # column by column: row by row, the compiler makes each one- or two-element run a memset
    # call, 3% of a 3x3 convolution's time
    for ox in range(lo):
        for oy in range(oy0, oy1):
            dst[oy * W + ox] = 0
    for ox in range(hi, W):
        for oy in range(oy0, oy1):
            dst[oy * W + ox] = 0


cdef void _im2col(const real* x, real* col, Py_ssize_t ld, const Geom* g) noexcept nogil:
    """One channel's rows of col (kH * kW rows, ld apart; L columns) := the receptive fields of
    that channel's plane x (H x W); 0 where they hang over its edges."""
    cdef Py_ssize_t ky, kx, oy, ox, iy, ix0, lo, hi
    cdef Py_ssize_t Wo = g.Wo, sw = g.sw
    cdef const real* xrow
    cdef real* dst
    # stride 1 and rows as long as the input's ('same' padding): a row of col is a shifted input
    # row, and consecutive rows are consecutive input rows
    cdef bint block = g.sh == 1 and sw == 1 and Wo == g.W
    for ky in range(g.kh):
        for kx in range(g.kw):
            dst = col + (ky * g.kw + kx) * ld
            ix0 = kx * g.dw - g.pw                      # column of output 0 in the input
            _valid(ix0, sw, g.W, Wo, &lo, &hi)
            if block:
                _shifted_rows(x, dst, g, ky * g.dh - g.ph, ix0, lo, hi)
                continue
            for oy in range(g.Ho):
                iy = oy * g.sh - g.ph + ky * g.dh
                if iy < 0 or iy >= g.H or lo == hi:
                    for ox in range(Wo):
                        dst[ox] = 0
                else:
                    xrow = x + iy * g.W + (ix0 + lo * sw)
                    for ox in range(lo):
                        dst[ox] = 0
                    if sw == 1:         # (the C library's memcpy uses the CPU's widest moves)
                        memcpy(dst + lo, xrow, (hi - lo) * sizeof(real))
                    else:
                        for ox in range(hi - lo):
                            dst[lo + ox] = xrow[ox * sw]
                    for ox in range(hi, Wo):
                        dst[ox] = 0
                dst += Wo


cdef void _col2im(const real* col, Py_ssize_t ld, real* x, const Geom* g) noexcept nogil:
    """One channel's plane x (H x W) := the adjoint of _im2col applied to that channel's rows of
    col: each entry added back to the input element it was read from (x is zeroed first)."""
    cdef Py_ssize_t ky, kx, oy, ox, iy, ix0, lo, hi
    cdef Py_ssize_t Wo = g.Wo, sw = g.sw
    cdef real* xrow
    cdef const real* src
    memset(x, 0, g.H * g.W * sizeof(real))
    for ky in range(g.kh):
        for kx in range(g.kw):
            src = col + (ky * g.kw + kx) * ld
            ix0 = kx * g.dw - g.pw
            _valid(ix0, sw, g.W, Wo, &lo, &hi)
            for oy in range(g.Ho):
                iy = oy * g.sh - g.ph + ky * g.dh
                if iy >= 0 and iy < g.H and lo < hi:
                    xrow = x + iy * g.W + (ix0 + lo * sw)
                    if sw == 1:
                        for ox in range(hi - lo):
                            xrow[ox] += src[lo + ox]
                    else:
                        for ox in range(hi - lo):
                            xrow[ox * sw] += src[lo + ox]
                src += Wo


cdef inline bint _is_pointwise(const Geom* g) noexcept nogil:
    """A 1x1 kernel, stride 1, no padding: an image's col is the image itself."""
    return g.kh == 1 and g.kw == 1 and g.sh == 1 and g.sw == 1 and g.ph == 0 and g.pw == 0


cdef inline void _unfold_one(const real* x, real* col, const Geom* g, Py_ssize_t nb,
                             Py_ssize_t i) noexcept nogil:
    cdef Py_ssize_t b = i // g.C, c = i - (i // g.C) * g.C, L = g.Ho * g.Wo
    _im2col(x + i * g.H * g.W, col + c * g.kh * g.kw * nb * L + b * L, nb * L, g)


cdef void _unfold(const real* x, real* col, const Geom* g, Py_ssize_t nb,
                  int nt) noexcept nogil:
    """col (K x nb*L) := [im2col(x[0]) | ... | im2col(x[nb - 1])], nt threads over the (image,
    channel) pairs."""
    cdef Py_ssize_t i
    cdef double start
    if nt <= 1:
        for i in range(nb * g.C):
            _unfold_one(x, col, g, nb, i)
    else:
        start = region_enter(nt)
        with parallel(num_threads=nt):
            thread_seen(threadid())
            for i in prange(nb * g.C, schedule="static"):
                _unfold_one(x, col, g, nb, i)
        region_exit(start, nt)


cdef inline void _fold_one(const real* col, real* x, const Geom* g, Py_ssize_t nb,
                           Py_ssize_t i) noexcept nogil:
    cdef Py_ssize_t b = i // g.C, c = i - (i // g.C) * g.C, L = g.Ho * g.Wo
    _col2im(col + c * g.kh * g.kw * nb * L + b * L, nb * L, x + i * g.H * g.W, g)


cdef void _fold(const real* col, real* x, const Geom* g, Py_ssize_t nb, int nt) noexcept nogil:
    """x[b] := col2im(columns b*L .. (b+1)*L - 1 of col (K x nb*L)) for b < nb, nt threads over
    the (image, channel) pairs (each writes its own plane)."""
    cdef Py_ssize_t i
    cdef double start
    if nt <= 1:
        for i in range(nb * g.C):
            _fold_one(col, x, g, nb, i)
    else:
        start = region_enter(nt)
        with parallel(num_threads=nt):
            thread_seen(threadid())
            for i in prange(nb * g.C, schedule="static"):
                _fold_one(col, x, g, nb, i)
        region_exit(start, nt)


cdef inline void _interleave_one(const real* src, real* dst, Py_ssize_t nb, Py_ssize_t rows,
                                 Py_ssize_t L, bint to_wide, Py_ssize_t i) noexcept nogil:
    cdef Py_ssize_t b = i // rows, r = i - (i // rows) * rows, l
    cdef const real* s
    cdef real* d
    if to_wide:
        s = src + i * L
        d = dst + r * nb * L + b * L
    else:
        s = src + r * nb * L + b * L
        d = dst + i * L
    for l in range(L):
        d[l] = s[l]


cdef void _interleave(const real* src, real* dst, Py_ssize_t nb, Py_ssize_t rows, Py_ssize_t L,
                      bint to_wide, int nt) noexcept nogil:
    """Between a stack of nb (rows x L) matrices and one (rows x nb*L) matrix: with to_wide,
    dst[r, b*L + l] = src[b, r, l]; else dst[b, r, l] = src[r, b*L + l]."""
    cdef Py_ssize_t i
    cdef double start
    if nt <= 1:
        for i in range(nb * rows):
            _interleave_one(src, dst, nb, rows, L, to_wide, i)
    else:
        start = region_enter(nt)
        with parallel(num_threads=nt):
            thread_seen(threadid())
            for i in prange(nb * rows, schedule="static"):
                _interleave_one(src, dst, nb, rows, L, to_wide, i)
        region_exit(start, nt)


cdef void _add_bias(real* out, const real* bias, Py_ssize_t nb, Py_ssize_t O, Py_ssize_t L,
                    int nt) noexcept nogil:
    """out[b, o, :] += bias[o] for b < nb."""
    cdef Py_ssize_t r, l
    cdef double start
    if nt <= 1:
        for r in range(nb * O):
            for l in range(L):
                out[r * L + l] += bias[r % O]
    else:
        start = region_enter(nt)
        with parallel(num_threads=nt):
            thread_seen(threadid())
            for r in prange(nb * O, schedule="static"):
                for l in range(L):
                    out[r * L + l] += bias[r % O]
        region_exit(start, nt)


cdef struct Split:
    int outer           # threads over the chunks of images, each chunk run by one thread alone
    int inner           # threads inside each step (unfold, GEMM, fold) when outer == 1
    Py_ssize_t B        # images per chunk
    Py_ssize_t col      # elements of one thread's col buffer (K x B*L)
    Py_ssize_t wide     # elements of one thread's wide buffer (O x B*L), 0 when B == 1


cdef Split _split(const Geom* g, Py_ssize_t itemsize) noexcept:
    """How a convolution pass over g's images uses the threads and the buffers.

    Enough images (a multiple of the threads, or many): the threads take chunks of images as
    they come (a core shared with another process just takes fewer) and run each alone, with no
    barrier and a thread-local col. Too few: one chunk after another with all threads in each
    step."""
    cdef Split s
    cdef int nt = max_threads()
    cdef Py_ssize_t K = g.C * g.kh * g.kw, L = g.Ho * g.Wo, per = K * L, most, nchunks
    s.outer = s.inner = 1
    if <double>g.N * g.O * per >= PARALLEL_MIN_WORK and nt > 1:
        if g.N >= nt and (g.N % nt == 0 or g.N >= 4 * nt):
            s.outer = nt
        else:
            s.inner = nt
    # enough images for GEMM_MIN_WORK multiply-adds per GEMM call, as far as COL_BUDGET allows,
    # and (threads over chunks) at least two chunks per thread
    most = g.N if s.outer == 1 else g.N // (2 * s.outer)
    s.B = COL_BUDGET // (per * itemsize) if per > 0 else most
    if per > 0 and g.O > 0 and s.B > GEMM_MIN_WORK // (per * g.O) + 1:
        s.B = GEMM_MIN_WORK // (per * g.O) + 1
    if s.B > most:
        s.B = most
    if s.B < 1:
        s.B = 1
    nchunks = (g.N + s.B - 1) // s.B                # then nearly equal chunks
    s.B = (g.N + nchunks - 1) // nchunks if nchunks > 0 else 1
    s.col = K * s.B * L
    s.wide = g.O * s.B * L if s.B > 1 else 0
    return s


cdef inline int _dtype(real* p) noexcept nogil:
    return FLOAT32 if real is float else FLOAT64


cdef int _forward_images(const real* x, const real* w, Py_ssize_t kw, const real* bias,
                         real* out, const Geom* g, Py_ssize_t n0, Py_ssize_t n1, Py_ssize_t B,
                         real* col, real* wide, int nt) except -1 nogil:
    """out[n] = w @ im2col(x[n]) (+ bias) for n0 <= n < n1, B images at a time: col = unfold of
    the chunk (K x nb*L), wide (O x nb*L) = w (O x K) @ col, wide's columns dealt out to the
    images (one image: the GEMM writes out[n] itself). With kw = K + 1, w's last column is the
    bias and col gets a last row of ones: the GEMM adds the bias (bias is then NULL)."""
    cdef Py_ssize_t K = g.C * g.kh * g.kw, L = g.Ho * g.Wo, n, nb, i
    cdef const real* src
    cdef real* dst
    n = n0
    while n < n1:
        nb = B if B < n1 - n else n1 - n
        src = x + n * g.C * g.H * g.W
        if nb > 1 or not _is_pointwise(g) or kw > K:
            _unfold(src, col, g, nb, nt)
            for i in range(nb * L * (kw - K)):
                col[K * nb * L + i] = 1
            src = col
        dst = out + n * g.O * L
        gemm(_dtype(col), False, False, g.O, nb * L, kw, 1.0, <const char*>w, kw,
             <const char*>src, nb * L, 0.0, <char*>(dst if nb == 1 else wide), nb * L)
        if nb > 1:
            _interleave(wide, dst, nb, g.O, L, False, nt)
        if bias != NULL:
            _add_bias(dst, bias, nb, g.O, L, nt)
        n += nb
    return 0


cdef int _grad_input_images(const real* gout, const real* w, real* gin, const Geom* g,
                            Py_ssize_t n0, Py_ssize_t n1, Py_ssize_t B, real* col, real* wide,
                            int nt) except -1 nogil:
    """gin[n] = col2im(w^T @ gout[n]) for n0 <= n < n1, B images at a time: col (K x nb*L) =
    w^T (K x O) @ [gout[n] | ...] (O x nb*L), folded back into the images."""
    cdef Py_ssize_t K = g.C * g.kh * g.kw, L = g.Ho * g.Wo, n, nb
    cdef const real* src
    cdef real* dst
    cdef bint direct
    n = n0
    while n < n1:
        nb = B if B < n1 - n else n1 - n
        src = gout + n * g.O * L
        if nb > 1:
            _interleave(src, wide, nb, g.O, L, True, nt)
            src = wide
        dst = gin + n * g.C * g.H * g.W
        direct = nb == 1 and _is_pointwise(g)
        gemm(_dtype(col), True, False, K, nb * L, g.O, 1.0, <const char*>w, K,
             <const char*>src, nb * L, 0.0, <char*>(dst if direct else col), nb * L)
        if not direct:
            _fold(col, dst, g, nb, nt)
        n += nb
    return 0


cdef int _grad_weight_images(const real* x, const real* gout, real* acc, const Geom* g,
                             Py_ssize_t n0, Py_ssize_t n1, Py_ssize_t B, real* col, real* wide,
                             int nt) except -1 nogil:
    """acc (K x O) += the sum over n0 <= n < n1 of (gout[n] @ im2col(x[n])^T)^T, B images at a
    time: unfold(chunk) (K x nb*L) @ [gout[n] | ...]^T (nb*L x O). (This orientation packs both
    operands from contiguous rows: about twice as fast as gout @ col^T.)"""
    cdef Py_ssize_t K = g.C * g.kh * g.kw, L = g.Ho * g.Wo, n, nb
    cdef const real* src
    cdef const real* gsrc
    n = n0
    while n < n1:
        nb = B if B < n1 - n else n1 - n
        src = x + n * g.C * g.H * g.W
        if nb > 1 or not _is_pointwise(g):
            _unfold(src, col, g, nb, nt)
            src = col
        gsrc = gout + n * g.O * L
        if nb > 1:
            _interleave(gsrc, wide, nb, g.O, L, True, nt)
            gsrc = wide
        gemm(_dtype(col), False, True, K, g.O, nb * L, 1.0, <const char*>src, nb * L,
             <const char*>gsrc, nb * L, 1.0, <char*>acc, g.O)
        n += nb
    return 0


cdef int _forward(const real* x, const real* w, const real* bias, real* out, const Geom* g,
                  const Split* s, real* col, real* wide, real* wb) except -1 nogil:
    """With a bias and a col for every chunk anyway, the bias rides in the GEMM: wb (O x K+1)
    = [w | bias] (one pass over the output less: 3% of a 3x3 convolution's time)."""
    cdef Py_ssize_t c, t, n0, n1, o, k, K = g.C * g.kh * g.kw, kw = K
    cdef double start
    if bias != NULL and wb != NULL:
        for o in range(g.O):
            for k in range(K):
                wb[o * (K + 1) + k] = w[o * K + k]
            wb[o * (K + 1) + K] = bias[o]
        w, bias, kw = wb, NULL, K + 1
    if s.outer <= 1:
        return _forward_images(x, w, kw, bias, out, g, 0, g.N, s.B, col, wide, s.inner)
    start = region_enter(s.outer)
    try:            # (a MemoryError in a worker must not leave the region counted: _omp.h)
        # every thread reports on entering (taking dynamic chunks, a late one may
        # find none left)
        with parallel(num_threads=s.outer):
            thread_seen(threadid())
            for c in prange((g.N + s.B - 1) // s.B, schedule="dynamic"):
                t = threadid()
                n0 = c * s.B
                n1 = min(n0 + s.B, g.N)
                _forward_images(x, w, kw, bias, out, g, n0, n1, s.B, col + t * s.col,
                                wide + t * s.wide, 1)
    finally:
        region_exit(start, s.outer)
    return 0


cdef int _grad_input(const real* gout, const real* w, real* gin, const Geom* g, const Split* s,
                     real* col, real* wide) except -1 nogil:
    cdef Py_ssize_t c, t, n0, n1
    cdef double start
    if s.outer <= 1:
        return _grad_input_images(gout, w, gin, g, 0, g.N, s.B, col, wide, s.inner)
    start = region_enter(s.outer)
    try:
        # every thread reports on entering (taking dynamic chunks, a late one may
        # find none left)
        with parallel(num_threads=s.outer):
            thread_seen(threadid())
            for c in prange((g.N + s.B - 1) // s.B, schedule="dynamic"):
                t = threadid()
                n0 = c * s.B
                n1 = min(n0 + s.B, g.N)
                _grad_input_images(gout, w, gin, g, n0, n1, s.B, col + t * s.col,
                                   wide + t * s.wide, 1)
    finally:
        region_exit(start, s.outer)
    return 0


cdef int _grad_weight(const real* x, const real* gout, real* gw, const Geom* g, const Split* s,
                      real* col, real* wide, real* part) except -1 nogil:
    """gw = the sum over all images: each thread t sums the chunks it takes into part[t]
    (K x O, zeroed first), and gw (O x K) is the sum of the parts' transposes."""
    cdef Py_ssize_t c, t, n0, n1, o, k, K = g.C * g.kh * g.kw, KO = K * g.O
    cdef int nparts = s.outer if s.outer > 1 else 1
    cdef real v
    cdef double start
    memset(part, 0, nparts * KO * sizeof(real))
    if s.outer <= 1:
        _grad_weight_images(x, gout, part, g, 0, g.N, s.B, col, wide, s.inner)
    else:
        start = region_enter(s.outer)
        try:
            # every thread reports on entering (taking dynamic chunks, a late one may
            # find none left)
            with parallel(num_threads=s.outer):
                thread_seen(threadid())
                for c in prange((g.N + s.B - 1) // s.B, schedule="dynamic"):
                    t = threadid()
                    n0 = c * s.B
                    n1 = min(n0 + s.B, g.N)
                    _grad_weight_images(x, gout, part + t * KO, g, n0, n1, s.B, col + t * s.col,
                                        wide + t * s.wide, 1)
        finally:
            region_exit(start, s.outer)
    for o in range(g.O):
        for k in range(K):
            v = 0
            for t in range(nparts):
                v = v + part[t * KO + k * g.O + o]
            gw[o * K + k] = v
    return 0


cdef int _conv_geom(Geom* g, Array x, tuple wshape, object stride, object padding,
                    object dilation, tuple out_shape) except -1:
    cdef Py_ssize_t N, C, H, W, O, kh, kw
    N, C, H, W = x.shape
    O, _, kh, kw = wshape
    _fill_geom(g, N, C, H, W, O, kh, kw, out_shape[2], out_shape[3], stride[0], stride[1],
               padding[0], padding[1], dilation[0], dilation[1])
    # (any Ho, Wo is memory-safe: the kernels clamp every window to the input)
    if wshape[1] != C or out_shape[0] != N or out_shape[1] != O:
        raise ValueError(f"carray.nn internal: inconsistent conv2d shapes: input {x.shape}, "
                         f"weight {wshape}, output {out_shape}")
    return 0


cdef class _Scratch:
    """The buffers of one convolution pass, from the host allocator (returned to it when the
    object goes): per thread a col (K x B*L) and a wide (O x B*L) buffer, and the partial sums
    of grad_weight."""
    cdef char* ptr
    cdef Py_ssize_t nbytes
    cdef char* col
    cdef char* wide
    cdef char* part

    def __cinit__(self, Py_ssize_t col_bytes, Py_ssize_t wide_bytes, Py_ssize_t part_bytes):
        cdef Py_ssize_t a = (col_bytes + 63) // 64 * 64, b = (wide_bytes + 63) // 64 * 64
        self.nbytes = a + b + part_bytes + 64
        self.ptr = <char*>host_alloc(self.nbytes)
        self.col = self.ptr
        self.wide = self.ptr + a
        self.part = self.ptr + a + b

    def __dealloc__(self):
        if self.ptr != NULL:
            host_free(self.ptr, self.nbytes)


cdef _Scratch _scratch(const Split* s, const Geom* g, Py_ssize_t itemsize, Py_ssize_t part):
    """Buffers for s.outer threads, plus `part` elements (grad_weight's partial sums, or the
    forward's [weight | bias] matrix)."""
    cdef Py_ssize_t nt = s.outer
    return _Scratch(nt * s.col * itemsize, nt * s.wide * itemsize, part * itemsize)


def conv2d_forward(Array x, Array w, object b, tuple out_shape, tuple stride, tuple padding,
                   tuple dilation):
    """out = conv2d(x, w, b); x, w (and b) C-contiguous of one float dtype, out_shape valid."""
    cdef Geom g
    cdef Split s
    cdef Array out
    cdef char* bias = NULL
    cdef int dt = x.dtype_num
    cdef _Scratch buf
    cdef Py_ssize_t K
    cdef bint bias_row
    if dt != FLOAT32 and dt != FLOAT64 or x.ndim != 4 or w.ndim != 4:
        raise ValueError("carray.nn internal: conv2d_forward needs 4-d float arrays")
    _conv_geom(&g, x, w.shape, stride, padding, dilation, out_shape)
    _check(x, "input", dt, (g.N, g.C, g.H, g.W))
    _check(w, "weight", dt, (g.O, g.C, g.kh, g.kw))
    if b is not None:
        _check(<Array?>b, "bias", dt, (g.O,))
        bias = (<Array>b).data
    out = _new4((g.N, g.O, g.Ho, g.Wo), dt)
    if out.size_c() == 0:
        return out
    s = _split(&g, x.itemsize)
    K = g.C * g.kh * g.kw
    bias_row = bias != NULL and (s.B > 1 or not _is_pointwise(&g))
    if bias_row:
        s.col += s.B * g.Ho * g.Wo                  # col's row of ones
    buf = _scratch(&s, &g, x.itemsize, g.O * (K + 1) if bias_row else 0)
    with nogil:
        if dt == FLOAT32:
            _forward(<float*>x.data, <float*>w.data, <float*>bias, <float*>out.data, &g, &s,
                     <float*>buf.col, <float*>buf.wide, <float*>buf.part if bias_row else NULL)
        else:
            _forward(<double*>x.data, <double*>w.data, <double*>bias, <double*>out.data, &g, &s,
                     <double*>buf.col, <double*>buf.wide,
                     <double*>buf.part if bias_row else NULL)
    return out


def conv2d_grad_input(Array gout, Array w, tuple input_shape, tuple stride, tuple padding,
                      tuple dilation):
    """grad of conv2d with respect to its input (of shape input_shape)."""
    cdef Geom g
    cdef Split s
    cdef Array gin
    cdef int dt = gout.dtype_num
    cdef _Scratch buf
    if dt != FLOAT32 and dt != FLOAT64 or gout.ndim != 4 or w.ndim != 4 or len(input_shape) != 4:
        raise ValueError("carray.nn internal: conv2d_grad_input needs 4-d float arrays")
    gin = _new4(input_shape, dt)
    _conv_geom(&g, gin, w.shape, stride, padding, dilation, gout.shape)
    _check(gout, "grad_output", dt, (g.N, g.O, g.Ho, g.Wo))
    _check(w, "weight", dt, (g.O, g.C, g.kh, g.kw))
    if gin.size_c() == 0:
        return gin
    if gout.size_c() == 0:
        memset(gin.data, 0, gin.size_c() * gin.itemsize)
        return gin
    s = _split(&g, gin.itemsize)
    buf = _scratch(&s, &g, gin.itemsize, 0)
    with nogil:
        if dt == FLOAT32:
            _grad_input(<float*>gout.data, <float*>w.data, <float*>gin.data, &g, &s,
                        <float*>buf.col, <float*>buf.wide)
        else:
            _grad_input(<double*>gout.data, <double*>w.data, <double*>gin.data, &g, &s,
                        <double*>buf.col, <double*>buf.wide)
    return gin


def conv2d_grad_weight(Array x, Array gout, tuple weight_shape, tuple stride, tuple padding,
                       tuple dilation):
    """grad of conv2d with respect to its weight (of shape weight_shape)."""
    cdef Geom g
    cdef Split s
    cdef Array gw
    cdef int dt = x.dtype_num
    cdef _Scratch buf
    if dt != FLOAT32 and dt != FLOAT64 or x.ndim != 4 or gout.ndim != 4 or len(weight_shape) != 4:
        raise ValueError("carray.nn internal: conv2d_grad_weight needs 4-d float arrays")
    gw = _new4(weight_shape, dt)
    _conv_geom(&g, x, weight_shape, stride, padding, dilation, gout.shape)
    _check(x, "input", dt, (g.N, g.C, g.H, g.W))
    _check(gout, "grad_output", dt, (g.N, g.O, g.Ho, g.Wo))
    if gw.size_c() == 0:
        return gw
    if gout.size_c() == 0:
        memset(gw.data, 0, gw.size_c() * gw.itemsize)
        return gw
    s = _split(&g, x.itemsize)
    buf = _scratch(&s, &g, x.itemsize, s.outer * g.O * g.C * g.kh * g.kw)
    with nogil:
        if dt == FLOAT32:
            _grad_weight(<float*>x.data, <float*>gout.data, <float*>gw.data, &g, &s,
                         <float*>buf.col, <float*>buf.wide, <float*>buf.part)
        else:
            _grad_weight(<double*>x.data, <double*>gout.data, <double*>gw.data, &g, &s,
                         <double*>buf.col, <double*>buf.wide, <double*>buf.part)
    return gw


cdef void _bias_grad_rows(const real* gout, real* gb, Py_ssize_t N, Py_ssize_t O,
                          Py_ssize_t L, Py_ssize_t o) noexcept nogil:
    cdef Py_ssize_t n, l, i
    cdef double s = 0.0
    cdef real a[8]
    cdef const real* row
    for n in range(N):
        # a row's sum in the array's type over 8 interleaved partial sums (independent
        # additions run in parallel), the rows' sums added up in double
        row = gout + (n * O + o) * L
        for i in range(8):
            a[i] = 0
        for l in range(0, L - 7, 8):
            for i in range(8):
                a[i] = a[i] + row[l + i]
        for l in range(L - L % 8, L):
            a[0] = a[0] + row[l]
        s += ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
    gb[o] = <real>s


def conv2d_grad_bias(Array gout):
    """gb[o] = sum over n, h, w of gout[n, o, h, w]; gout C-contiguous, 4-d, float."""
    cdef Array gb
    cdef int dt = gout.dtype_num, nt
    cdef Py_ssize_t N, O, L, o
    if dt != FLOAT32 and dt != FLOAT64 or gout.ndim != 4:
        raise ValueError("carray.nn internal: conv2d_grad_bias needs a 4-d float array")
    N, O = gout.shape_[0], gout.shape_[1]
    L = gout.shape_[2] * gout.shape_[3]
    _check(gout, "grad_output", dt, gout.shape)
    gb = new_array(1, &O, dt)
    nt = _threads(O, <double>gout.size_c())
    start = region_enter(nt)
    with nogil, parallel(num_threads=nt):
        thread_seen(threadid())
        if dt == FLOAT32:
            for o in prange(O, schedule="static"):
                _bias_grad_rows(<float*>gout.data, <float*>gb.data, N, O, L, o)
        else:
            for o in prange(O, schedule="static"):
                _bias_grad_rows(<double*>gout.data, <double*>gb.data, N, O, L, o)
    region_exit(start, nt)
    return gb


# ---------------------------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------------------------

cdef void _max_plane(const real* x, real* out, int64_t* idx, const Geom* g) noexcept nogil:
    """One plane of max pooling, with PyTorch's rule (an element wins when it is greater than
    the maximum so far or NaN): the first maximum's index, or the last NaN's.

    Branch-free where the data decide: the maximum by `v > m ? v : m` (one maxss), then the
    index of its first occurrence by conditional moves; NaNs (rare) take a separate scan. A
    compare-and-branch per element mispredicted about half the time and ran 3x slower."""
    cdef Py_ssize_t oy, ox, y, xx, y0, y1, x0, x1, best, j
    cdef real m, v
    cdef bint nan
    for oy in range(g.Ho):
        y0 = oy * g.sh - g.ph
        y1 = y0 + (g.kh - 1) * g.dh + 1
        if y1 > g.H:
            y1 = g.H
        if y0 < 0:                  # the first tap inside (no loop: padding can be huge)
            y0 += ((g.dh - 1 - y0) // g.dh) * g.dh
        for ox in range(g.Wo):
            x0 = ox * g.sw - g.pw
            x1 = x0 + (g.kw - 1) * g.dw + 1
            if x1 > g.W:
                x1 = g.W
            if x0 < 0:                  # the first tap inside (no loop: padding can be huge)
                x0 += ((g.dw - 1 - x0) // g.dw) * g.dw
            m = -INFINITY
            nan = False
            y = y0
            while y < y1:
                xx = x0
                while xx < x1:
                    v = x[y * g.W + xx]
                    m = v if v > m else m
                    nan = nan | (v != v)
                    xx += g.dw
                y += g.dh
            # a window can miss the input entirely when the dilation exceeds the input's size:
            # it gives -inf and index -1, which max_pool2d_grad skips (PyTorch reports an index
            # that is not in the window, possibly not even in the plane)
            best = -1
            y = y0
            while y < y1:
                xx = x0
                while xx < x1:
                    j = y * g.W + xx
                    if nan:
                        best = j if x[j] != x[j] else best         # the last NaN
                    else:
                        best = j if best < 0 and x[j] == m else best
                    xx += g.dw
                y += g.dh
            out[oy * g.Wo + ox] = x[best] if nan else m
            if idx != NULL:
                idx[oy * g.Wo + ox] = best


cdef void _max_plane_2x2(const real* x, real* out, int64_t* idx, const Geom* g) noexcept nogil:
    """_max_plane for the common 2x2 window, stride 2, no padding, no dilation, every window
    inside the plane (4x faster)."""
    cdef Py_ssize_t oy, ox, j, best
    cdef const real* r0
    cdef const real* r1
    cdef real a, b, c, d, m
    cdef Py_ssize_t tb, tc, td
    for oy in range(g.Ho):
        r0 = x + 2 * oy * g.W
        r1 = r0 + g.W
        for ox in range(g.Wo):
            j = 2 * oy * g.W + 2 * ox
            a, b, c, d = r0[2 * ox], r0[2 * ox + 1], r1[2 * ox], r1[2 * ox + 1]
            # the flags (setcc: no branch; false for NaN) and the index by arithmetic on them,
            # the maximum by maxss: the compiler turned selects on these flags into branches
            tb = b > a
            m = b if b > a else a
            tc = c > m
            m = c if c > m else m
            td = d > m
            m = d if d > m else m
            best = j + td * (g.W + 1) + (1 - td) * (tc * g.W + (1 - tc) * tb)
            if (a != a) | (b != b) | (c != c) | (d != d):     # rare: the last NaN wins
                best = j + g.W + 1 if d != d else (j + g.W if c != c else (j + 1 if b != b else j))
                m = x[best]
            out[oy * g.Wo + ox] = m
            if idx != NULL:
                idx[oy * g.Wo + ox] = best


cdef void _max_pool(const real* x, real* out, int64_t* idx, const Geom* g,
                    int nt) noexcept nogil:
    cdef Py_ssize_t p, P = g.N * g.C
    cdef bint two = (g.kh == 2 and g.kw == 2 and g.sh == 2 and g.sw == 2 and g.ph == 0 and
                     g.pw == 0 and g.dh == 1 and g.dw == 1 and 2 * g.Ho <= g.H and
                     2 * g.Wo <= g.W)       # (with ceil_mode, a last window can hang over)
    cdef double start = region_enter(nt)
    for p in prange(P, schedule="static", num_threads=nt):
        thread_seen(threadid())
        if two:
            _max_plane_2x2(x + p * g.H * g.W, out + p * g.Ho * g.Wo,
                           NULL if idx == NULL else idx + p * g.Ho * g.Wo, g)
        else:
            _max_plane(x + p * g.H * g.W, out + p * g.Ho * g.Wo,
                       NULL if idx == NULL else idx + p * g.Ho * g.Wo, g)
    region_exit(start, nt)


cdef void _max_grad(const real* gout, const int64_t* idx, real* gin, const Geom* g,
                    int nt) noexcept nogil:
    """gin[p, idx[p, i]] += gout[p, i] for every plane p (indices already checked; -1: a window
    without input elements, skipped)."""
    cdef Py_ssize_t p, i, P = g.N * g.C, HW = g.H * g.W, L = g.Ho * g.Wo
    cdef double start = region_enter(nt)
    for p in prange(P, schedule="static", num_threads=nt):
        thread_seen(threadid())
        memset(gin + p * HW, 0, HW * sizeof(real))
        for i in range(L):
            if idx[p * L + i] >= 0:
                gin[p * HW + idx[p * L + i]] += gout[p * L + i]
    region_exit(start, nt)


cdef void _avg_plane(const real* x, real* out, const Geom* g, bint count_pad, Py_ssize_t divisor,
                     bint backward) noexcept nogil:
    """One plane of average pooling (PyTorch's windows and divisors); with `backward`, x is the
    output's gradient and out the input's: out[window] += x[o] / divisor (out zeroed first)."""
    cdef Py_ssize_t oy, ox, y, xx, y0, y1, x0, x1, n
    cdef real s, v
    if backward:
        memset(out, 0, g.H * g.W * sizeof(real))
    for oy in range(g.Ho):
        for ox in range(g.Wo):
            y0 = oy * g.sh - g.ph
            x0 = ox * g.sw - g.pw
            y1 = min(y0 + g.kh, g.H + g.ph)
            x1 = min(x0 + g.kw, g.W + g.pw)
            n = (y1 - y0) * (x1 - x0)           # the window, padding included
            y0 = max(y0, 0)
            x0 = max(x0, 0)
            y1 = min(y1, g.H)
            x1 = min(x1, g.W)
            if divisor > 0:
                n = divisor
            elif not count_pad:
                n = (y1 - y0) * (x1 - x0)
            if y0 >= y1 or x0 >= x1:            # only padding (ceil_mode): PyTorch gives 0
                if not backward:
                    out[oy * g.Wo + ox] = 0
                continue
            if backward:
                v = x[oy * g.Wo + ox] / n
                for y in range(y0, y1):
                    for xx in range(x0, x1):
                        out[y * g.W + xx] += v
            else:
                s = 0
                for y in range(y0, y1):
                    for xx in range(x0, x1):
                        s = s + x[y * g.W + xx]
                out[oy * g.Wo + ox] = s / n


cdef void _avg_pool(const real* x, real* out, const Geom* g, bint count_pad, Py_ssize_t divisor,
                    bint backward, int nt) noexcept nogil:
    cdef Py_ssize_t p, P = g.N * g.C
    cdef Py_ssize_t xs = g.Ho * g.Wo if backward else g.H * g.W
    cdef Py_ssize_t os = g.H * g.W if backward else g.Ho * g.Wo
    cdef double start = region_enter(nt)
    for p in prange(P, schedule="static", num_threads=nt):
        thread_seen(threadid())
        _avg_plane(x + p * xs, out + p * os, g, count_pad, divisor, backward)
    region_exit(start, nt)


cdef int _pool_geom(Geom* g, tuple in_shape, tuple out_shape, tuple kernel, tuple stride,
                    tuple padding, tuple dilation) except -1:
    cdef Py_ssize_t N, C, H, W
    N, C, H, W = in_shape
    _fill_geom(g, N, C, H, W, C, kernel[0], kernel[1], out_shape[2], out_shape[3], stride[0],
               stride[1], padding[0], padding[1], dilation[0], dilation[1])
    # (any Ho, Wo is memory-safe: the kernels clamp every window to the input)
    if out_shape[0] != N or out_shape[1] != C:
        raise ValueError(f"carray.nn internal: inconsistent pooling shapes: input {in_shape}, "
                         f"output {out_shape}")
    return 0


def max_pool2d_forward(Array x, tuple out_shape, tuple kernel, tuple stride, tuple padding,
                       tuple dilation, bint with_indices):
    """(out, indices or None) of max pooling; x C-contiguous float, 4-d."""
    cdef Geom g
    cdef Array out, idx = None
    cdef int dt = x.dtype_num, nt
    if dt != FLOAT32 and dt != FLOAT64 or x.ndim != 4:
        raise ValueError("carray.nn internal: max_pool2d_forward needs a 4-d float array")
    _pool_geom(&g, x.shape, out_shape, kernel, stride, padding, dilation)
    _check(x, "input", dt, x.shape)
    out = _new4(out_shape, dt)
    if with_indices:
        idx = _new4(out_shape, INT64)
    if out.size_c() == 0:
        return out, idx
    nt = _threads(g.N * g.C, <double>out.size_c() * g.kh * g.kw)
    if dt == FLOAT32:
        with nogil:
            _max_pool(<float*>x.data, <float*>out.data,
                      NULL if not with_indices else <int64_t*>idx.data, &g, nt)
    else:
        with nogil:
            _max_pool(<double*>x.data, <double*>out.data,
                      NULL if not with_indices else <int64_t*>idx.data, &g, nt)
    return out, idx


def max_pool2d_backward(Array gout, Array idx, tuple input_shape):
    """grad of max pooling: gin[n, c].flat[idx[n, c, i, j]] += gout[n, c, i, j] (-1: nowhere);
    IndexError when an index is outside its (H x W) plane."""
    cdef Geom g
    cdef Array gin
    cdef int dt = gout.dtype_num, nt
    cdef Py_ssize_t i, size, HW, bad = -1
    cdef const int64_t* ip
    if dt != FLOAT32 and dt != FLOAT64 or gout.ndim != 4 or len(input_shape) != 4:
        raise ValueError("carray.nn internal: max_pool2d_backward needs 4-d float arrays")
    _fill_geom(&g, input_shape[0], input_shape[1], input_shape[2], input_shape[3],
               input_shape[1], 1, 1, gout.shape_[2], gout.shape_[3], 1, 1, 0, 0, 1, 1)
    _check(gout, "grad_output", dt, (g.N, g.C, g.Ho, g.Wo))
    _check(idx, "indices", INT64, (g.N, g.C, g.Ho, g.Wo))
    HW = g.H * g.W
    size = idx.size_c()
    ip = <const int64_t*>idx.data
    with nogil:
        for i in range(size):
            if ip[i] < -1 or ip[i] >= HW:
                bad = i
                break
    if bad >= 0:
        raise IndexError(f"max_pool2d_grad: index {ip[bad]} is out of bounds for an input plane "
                         f"of {g.H}x{g.W} = {HW} elements")
    gin = _new4(input_shape, dt)
    if gin.size_c() == 0:
        return gin
    nt = _threads(g.N * g.C, <double>gin.size_c() + <double>size)
    if dt == FLOAT32:
        with nogil:
            _max_grad(<float*>gout.data, ip, <float*>gin.data, &g, nt)
    else:
        with nogil:
            _max_grad(<double*>gout.data, ip, <double*>gin.data, &g, nt)
    return gin


def avg_pool2d_forward(Array x, tuple out_shape, tuple kernel, tuple stride, tuple padding,
                       bint count_include_pad, Py_ssize_t divisor):
    """Average pooling; divisor > 0 overrides the window size; x C-contiguous float, 4-d."""
    cdef Geom g
    cdef Array out
    cdef int dt = x.dtype_num, nt
    if dt != FLOAT32 and dt != FLOAT64 or x.ndim != 4:
        raise ValueError("carray.nn internal: avg_pool2d_forward needs a 4-d float array")
    _pool_geom(&g, x.shape, out_shape, kernel, stride, padding, (1, 1))
    _check(x, "input", dt, x.shape)
    out = _new4(out_shape, dt)
    if out.size_c() == 0:
        return out
    nt = _threads(g.N * g.C, <double>out.size_c() * g.kh * g.kw)
    if dt == FLOAT32:
        with nogil:
            _avg_pool(<float*>x.data, <float*>out.data, &g, count_include_pad, divisor, False, nt)
    else:
        with nogil:
            _avg_pool(<double*>x.data, <double*>out.data, &g, count_include_pad, divisor, False,
                      nt)
    return out


def avg_pool2d_backward(Array gout, tuple input_shape, tuple kernel, tuple stride,
                        tuple padding, bint count_include_pad, Py_ssize_t divisor):
    """grad of average pooling with respect to its input (of shape input_shape)."""
    cdef Geom g
    cdef Array gin
    cdef int dt = gout.dtype_num, nt
    if dt != FLOAT32 and dt != FLOAT64 or gout.ndim != 4 or len(input_shape) != 4:
        raise ValueError("carray.nn internal: avg_pool2d_backward needs 4-d float arrays")
    _pool_geom(&g, input_shape, gout.shape, kernel, stride, padding, (1, 1))
    _check(gout, "grad_output", dt, gout.shape)
    gin = _new4(input_shape, dt)
    if gin.size_c() == 0:
        return gin
    nt = _threads(g.N * g.C, <double>gout.size_c() * g.kh * g.kw)
    if dt == FLOAT32:
        with nogil:
            _avg_pool(<float*>gout.data, <float*>gin.data, &g, count_include_pad, divisor, True,
                      nt)
    else:
        with nogil:
            _avg_pool(<double*>gout.data, <double*>gin.data, &g, count_include_pad, divisor,
                      True, nt)
    return gin


# ---------------------------------------------------------------------------------------------
# test hooks
# ---------------------------------------------------------------------------------------------

def _set_col_budget(Py_ssize_t nbytes):
    """Set COL_BUDGET (bytes of col per chunk of images; 0: one image per chunk); return the
    previous value. For tests and benchmarks."""
    global COL_BUDGET
    if nbytes < 0:
        raise ValueError(f"col budget must be >= 0, got {nbytes}")
    prev = COL_BUDGET
    COL_BUDGET = nbytes
    return prev


# ---------------------------------------------------------------------------------------------
# softmax cross entropy
# ---------------------------------------------------------------------------------------------

cdef Py_ssize_t _softmax_nll_rows(const real* x, const int64_t* t, real* p, real* loss,
                                  Py_ssize_t M, Py_ssize_t C, int64_t ignore,
                                  double* total, Py_ssize_t* count) noexcept nogil:
    """p = softmax of each row of x (M x C, C >= 1), loss[i] = log(sum(exp(x[i] - m))) -
    (x[i, t[i]] - m), m the row's max (when loss is not NULL; 0 for rows whose target is
    ignore), *total = their sum, *count = the rows counted. Returns the first row whose target
    is outside [0, C), or -1."""
    cdef Py_ssize_t i, c
    cdef int64_t ti
    cdef real m, s, li
    cdef const real* row
    cdef real* prow
    total[0] = 0
    count[0] = 0
    for i in range(M):
        row = x + i * C
        prow = p + i * C
        ti = t[i]
        if ti != ignore and (ti < 0 or ti >= C):
            return i
        if real is float:
            m = carray_row_maxf(row, C)
            s = carray_row_expsumf(row, prow, C, m)
            carray_row_divf(prow, C, s)
        else:
            m = carray_row_maxd(row, C)
            s = carray_row_expsumd(row, prow, C, m)
            carray_row_divd(prow, C, s)
        li = 0
        if ti != ignore:
            # x_t - m first (exact when x_t is near m): log(s) + m - x_t would lose log(s)
            # against a huge m (0 instead of log 3 for three logits of -1e38)
            li = log(s) - (row[ti] - m)
            count[0] += 1
        if loss != NULL:
            loss[i] = li
        total[0] += li
    return -1


def softmax_nll(Array x, Array t, int64_t ignore_index, str reduction):
    """(loss, probs, count) of softmax cross entropy over the rows of x (M, C >= 1) at int64
    targets t (M,), both C-contiguous: loss per row ('none'), summed ('sum') or summed over the
    count of rows whose target is not ignore_index ('mean'; NaN when none); count a 0-d array
    (None for 'none'). IndexError for a target outside [0, C) other than ignore_index."""
    cdef int dt = x.dtype_num
    cdef Py_ssize_t M, C, bad, count
    cdef double total
    cdef Array probs, loss, cnt = None
    cdef bint per_row = reduction == "none"
    if dt != FLOAT32 and dt != FLOAT64 or x.ndim != 2 or x.shape_[1] < 1:
        raise ValueError("carray.nn internal: softmax_nll needs a 2-d float array with columns")
    M, C = x.shape_[0], x.shape_[1]
    _check(x, "input", dt, (M, C))
    _check(t, "target", INT64, (M,))
    probs = new_array(2, x.shape_, dt)
    loss = new_array(1 if per_row else 0, x.shape_, dt)
    if dt == FLOAT32:
        with nogil:
            bad = _softmax_nll_rows(<const float*>x.data, <const int64_t*>t.data,
                                    <float*>probs.data, <float*>loss.data if per_row else NULL,
                                    M, C, ignore_index, &total, &count)
    else:
        with nogil:
            bad = _softmax_nll_rows(<const double*>x.data, <const int64_t*>t.data,
                                    <double*>probs.data, <double*>loss.data if per_row else NULL,
                                    M, C, ignore_index, &total, &count)
    if bad >= 0:
        raise IndexError(f"Target {(<const int64_t*>t.data)[bad]} is out of bounds.")
    if not per_row:
        if reduction == "mean":
            total = total / count if count else NAN
        loss.fill(total)
        cnt = new_array(0, x.shape_, dt)
        cnt.fill(count)
    return loss, probs, cnt


cdef void _softmax_nll_grad_rows(real* gx, const real* p, const int64_t* t, Py_ssize_t M,
                                 Py_ssize_t C, int64_t ignore, const real* g, Py_ssize_t gstep,
                                 real divisor) noexcept nogil:
    cdef Py_ssize_t i, c
    cdef int64_t ti
    cdef real s
    for i in range(M):
        ti = t[i]
        s = g[i * gstep] / divisor if ti != ignore and 0 <= ti < C else 0
        if real is float:
            carray_row_scalef(p + i * C, gx + i * C, C, s)
        else:
            carray_row_scaled(p + i * C, gx + i * C, C, s)
        if ti != ignore and 0 <= ti < C:
            gx[i * C + ti] = (p[i * C + ti] - 1) * s


def softmax_nll_grad(Array probs, Array t, Array g, object count, int64_t ignore_index):
    """(probs - one_hot(t)) * g [/ count] by rows (0 for rows whose target is ignore_index or
    outside [0, C)); probs (M, C) and t (M,) C-contiguous, g a 0-d or C-contiguous (M,) array of
    probs' dtype, count None or a 0-d array."""
    cdef int dt = probs.dtype_num
    cdef Py_ssize_t M, C, gstep
    cdef double divisor = 1
    cdef Array gx
    if dt != FLOAT32 and dt != FLOAT64 or probs.ndim != 2:
        raise ValueError("carray.nn internal: softmax_nll_grad needs a 2-d float array")
    M, C = probs.shape_[0], probs.shape_[1]
    _check(probs, "probs", dt, (M, C))
    _check(t, "target", INT64, (M,))
    _check(g, "grad_output", dt, (M,) if g.ndim else ())
    gstep = 1 if g.ndim else 0
    if count is not None:
        divisor = float(count)
    gx = new_array(2, probs.shape_, dt)
    if dt == FLOAT32:
        with nogil:
            _softmax_nll_grad_rows(<float*>gx.data, <const float*>probs.data,
                                   <const int64_t*>t.data, M, C, ignore_index,
                                   <const float*>g.data, gstep, <float>divisor)
    else:
        with nogil:
            _softmax_nll_grad_rows(<double*>gx.data, <const double*>probs.data,
                                   <const int64_t*>t.data, M, C, ignore_index,
                                   <const double*>g.data, gstep, divisor)
    return gx


# ---------------------------------------------------------------------------------------------
# SGD's update
# ---------------------------------------------------------------------------------------------

cdef void _sgd_rows(real* p, const real* g, Py_ssize_t n, real lr) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        p[i] = p[i] - lr * g[i]


def sgd_step(list params, list grads, double lr):
    """params[k] -= lr * grads[k] in place (the product rounded first, as subtract(p, multiply(g,
    lr)) computes it), for C-contiguous host arrays, each pair of one float dtype and shape."""
    cdef Array p, g
    cdef int dt
    cdef Py_ssize_t n
    if len(params) != len(grads):
        raise ValueError("carray.nn internal: sgd_step needs as many gradients as parameters")
    for p, g in zip(params, grads):
        dt = p.dtype_num
        if dt != FLOAT32 and dt != FLOAT64:
            raise ValueError("carray.nn internal: sgd_step needs float arrays")
        _check(p, "param", dt, p.shape)
        _check(g, "grad", dt, p.shape)
        if not p.writeable:
            raise ValueError("carray.nn internal: sgd_step needs writeable parameters")
        n = p.size_c()
        if dt == FLOAT32:
            with nogil:
                _sgd_rows(<float*>p.data, <const float*>g.data, n, <float>lr)
        else:
            with nogil:
                _sgd_rows(<double*>p.data, <const double*>g.data, n, lr)


# ---------------------------------------------------------------------------------------------
# fused softmax / log_softmax / layer norm / RMS norm rows (h13): kernels in _nn_norm.pyx
# ---------------------------------------------------------------------------------------------

from carray.cpu._nn_norm import (  # noqa: E402
    gelu_rows, layer_norm_grad_rows, layer_norm_rows, log_softmax_grad_rows, log_softmax_rows,
    rms_norm_grad_rows, rms_norm_rows, softmax_grad_rows, softmax_rows)
