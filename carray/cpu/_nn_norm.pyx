"""Fused row kernels behind carray.nn's softmax, log_softmax, layer_norm and rms_norm and their
gradients, for float32 and float64 host arrays (re-exported by carray.cpu._nn, whose names the
op table lists).

carray/nn.py validates the arguments and hands these entry points C-contiguous arrays. Softmax
works on x viewed as (outer, n, inner): the row (o, i) is x[o, :, i], n elements `inner` apart,
and the rows go in parallel over the threads, one pass each (max, sum of exponentials, output).
The norms work on x viewed as (rows, n): one row per task (mean and variance in two passes over
the row, which stays in L1, summed in double), and the weight and bias gradients as column sums
done by column blocks in parallel (each thread owns its columns: no atomics, no partial buffers).
Each entry point re-checks the shapes it indexes with before it releases the GIL.
"""

from cython.parallel cimport prange, threadid
from libc.math cimport INFINITY, exp, log
from libc.stdlib cimport free, malloc

from carray.core._array cimport Array, new_array
from carray.core._dtype cimport FLOAT32, FLOAT64
from carray.core._strided cimport max_threads, region_enter, region_exit, thread_seen

cdef extern from "math.h" nogil:
    float logf(float)

cdef extern from "_math.h" nogil:
    float carray_expf(float)     # branch-free, vectorisable (libm's expf is a call per element)

cdef extern from "_rows.h" nogil:
    # vectorised row primitives, cloned for AVX2 / AVX-512 (see _rows.h)
    float carray_row_maxf(const float* x, Py_ssize_t n)
    double carray_row_maxd(const double* x, Py_ssize_t n)
    float carray_row_expsumf(const float* x, float* y, Py_ssize_t n, float m)
    double carray_row_expsumd(const double* x, double* y, Py_ssize_t n, double m)
    void carray_row_divf(float* y, Py_ssize_t n, float s)
    void carray_row_divd(double* y, Py_ssize_t n, double s)
    void carray_row_shiftf(const float* x, float* y, Py_ssize_t n, float m, float c)
    void carray_row_shiftd(const double* x, double* y, Py_ssize_t n, double m, double c)
    double carray_row_dotf(const float* a, const float* b, Py_ssize_t n)
    double carray_row_dotd(const double* a, const double* b, Py_ssize_t n)
    void carray_norm_rowf(const float* x, float* y, const float* w, const float* b,
                          Py_ssize_t n, double eps, int center, float* mean, float* rstd)
    void carray_norm_rowd(const double* x, double* y, const double* w, const double* b,
                          Py_ssize_t n, double eps, int center, double* mean, double* rstd)
    void carray_norm_grad_rowf(const float* g, const float* x, float mu, float r,
                               const float* w, float* gx, Py_ssize_t n, int center)
    void carray_norm_grad_rowd(const double* g, const double* x, double mu, double r,
                               const double* w, double* gx, Py_ssize_t n, int center)
    void carray_norm_wb_rowf(const float* g, const float* x, float mu, float r, double* aw,
                             double* ab, Py_ssize_t n)
    void carray_norm_wb_rowd(const double* g, const double* x, double mu, double r,
                             double* aw, double* ab, Py_ssize_t n)
    void carray_geluf(const float* x, float* y, Py_ssize_t n)
    void carray_gelud(const double* x, double* y, Py_ssize_t n)
    void carray_gelu_gradf(const float* g, const float* x, float* gx, Py_ssize_t n)
    void carray_gelu_gradd(const double* g, const double* x, double* gx, Py_ssize_t n)
    void carray_row_softmax_gradf(const float* y, const float* g, float* gx, Py_ssize_t n,
                                  float s, bint lg)
    void carray_row_softmax_gradd(const double* y, const double* g, double* gx, Py_ssize_t n,
                                  double s, bint lg)

ctypedef fused real:
    float
    double

# Loops with fewer elements than this run on one thread (a parallel region costs microseconds).
cdef double PARALLEL_MIN_WORK = 1 << 15
# Columns per task of the weight/bias gradient sums.
cdef Py_ssize_t COL_BLOCK = 64


cdef inline real _exp(real v) noexcept nogil:
    if real is float:
        return carray_expf(v)
    else:
        return exp(v)


cdef inline real _log(real v) noexcept nogil:
    if real is float:
        return logf(v)
    else:
        return log(v)


cdef int _threads(Py_ssize_t tasks, double work) noexcept nogil:
    cdef int nt = max_threads()
    if work < PARALLEL_MIN_WORK or tasks < 2:
        return 1
    return <int>tasks if tasks < nt else nt


cdef int _check(Array a, str name, int dt, Py_ssize_t size) except -1:
    if a.dtype_num != dt or not a.is_contiguous() or a.device != "cpu" or a.size_c() != size \
            or (a.data == NULL and size > 0):
        raise ValueError(f"carray.nn internal: {name} must be a C-contiguous host array of "
                         f"{size} elements and type number {dt}, got shape {a.shape}, type "
                         f"number {a.dtype_num}")
    return 0


cdef Array _like(Array x):
    return new_array(x.ndim, x.shape_, x.dtype_num)


cdef Array _vec(Py_ssize_t n, int dt):
    return new_array(1, &n, dt)


# ---------------------------------------------------------------------------------------------
# softmax and log_softmax
# ---------------------------------------------------------------------------------------------

cdef void _softmax_row_c(const real* x, real* y, Py_ssize_t n, real m, bint lg,
                         bint masked) noexcept nogil:
    """_softmax_row's contiguous case, by _rows.h's vectorised primitives (the exponentials into
    y first with their sum, then the scaling or shift)."""
    cdef real s
    if real is float:
        s = carray_row_expsumf(x, y, n, m)
    else:
        s = carray_row_expsumd(x, y, n, m)
    if lg:
        if real is float:
            carray_row_shiftf(x, y, n, m, _log(s))
        else:
            carray_row_shiftd(x, y, n, m, _log(s))
        return
    if masked and s == 0:
        s = 1
    if real is float:
        carray_row_divf(y, n, s)
    else:
        carray_row_divd(y, n, s)


cdef inline real _row_max(const real* x, Py_ssize_t n, Py_ssize_t st) noexcept nogil:
    """The max of n >= 1 elements st apart, the first NaN if any."""
    cdef Py_ssize_t k
    cdef real m = x[0], v
    if st == 1:
        if real is float:
            return carray_row_maxf(x, n)
        else:
            return carray_row_maxd(x, n)
    for k in range(1, n):
        v = x[k * st]
        if v > m or v != v:
            m = v
    return m


cdef void _softmax_row(const real* x, real* y, Py_ssize_t n, Py_ssize_t st, bint lg,
                       bint masked) noexcept nogil:
    """y = softmax(x) (or log_softmax) of one row of n elements st apart; masked: a row that is
    all -inf gives 0 (softmax) instead of NaN."""
    cdef Py_ssize_t k
    cdef real m = _row_max(x, n, st), v, s = 0, ls
    if masked and m == -INFINITY:
        m = 0
    if st == 1:
        _softmax_row_c(x, y, n, m, lg, masked)
        return
    if lg:
        for k in range(n):
            s = s + _exp(x[k * st] - m)
        ls = _log(s)
        for k in range(n):
            y[k * st] = (x[k * st] - m) - ls
        return
    for k in range(n):
        v = _exp(x[k * st] - m)
        y[k * st] = v
        s = s + v
    if masked and s == 0:
        s = 1
    for k in range(n):
        y[k * st] = y[k * st] / s


cdef void _softmax_grad_row(const real* y, const real* g, real* gx, Py_ssize_t n, Py_ssize_t st,
                            bint lg) noexcept nogil:
    """softmax: gx = y (g - sum(g y)); log_softmax: gx = g - exp(y) sum(g); sums in double."""
    cdef Py_ssize_t k
    cdef double s = 0
    cdef real sr
    if st == 1:
        if real is float:
            sr = <real>carray_row_dotf(g, NULL if lg else y, n)
            carray_row_softmax_gradf(y, g, gx, n, sr, lg)
        else:
            sr = <real>carray_row_dotd(g, NULL if lg else y, n)
            carray_row_softmax_gradd(y, g, gx, n, sr, lg)
        return
    if lg:
        for k in range(n):
            s = s + g[k * st]
        sr = <real>s
        for k in range(n):
            gx[k * st] = g[k * st] - _exp(y[k * st]) * sr
    else:
        for k in range(n):
            s = s + <double>g[k * st] * y[k * st]
        sr = <real>s
        for k in range(n):
            gx[k * st] = y[k * st] * (g[k * st] - sr)


cdef void _softmax_all(const real* x, real* y, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner,
                       bint lg, bint masked, int nt) noexcept nogil:
    cdef Py_ssize_t r, o, i
    cdef double start = region_enter(nt)
    for r in prange(outer * inner, schedule="static", num_threads=nt):
        thread_seen(threadid())
        o = r // inner
        i = r - o * inner
        _softmax_row(x + o * n * inner + i, y + o * n * inner + i, n, inner, lg, masked)
    region_exit(start, nt)


cdef void _softmax_grad_all(const real* y, const real* g, real* gx, Py_ssize_t outer,
                            Py_ssize_t n, Py_ssize_t inner, bint lg, int nt) noexcept nogil:
    cdef Py_ssize_t r, o, i, base
    cdef double start = region_enter(nt)
    for r in prange(outer * inner, schedule="static", num_threads=nt):
        thread_seen(threadid())
        o = r // inner
        i = r - o * inner
        base = o * n * inner + i
        _softmax_grad_row(y + base, g + base, gx + base, n, inner, lg)
    region_exit(start, nt)


cdef Array _softmax(Array x, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner, bint lg,
                    bint masked):
    cdef int dt = x.dtype_num, nt
    if dt != FLOAT32 and dt != FLOAT64 or outer < 0 or n < 0 or inner < 0:
        raise ValueError("carray.nn internal: softmax needs a float array and sizes >= 0")
    _check(x, "input", dt, outer * n * inner)
    cdef Array y = _like(x)
    if outer * n * inner == 0:
        return y
    nt = _threads(outer * inner, <double>outer * n * inner * 8)
    with nogil:
        if dt == FLOAT32:
            _softmax_all(<const float*>x.data, <float*>y.data, outer, n, inner, lg, masked, nt)
        else:
            _softmax_all(<const double*>x.data, <double*>y.data, outer, n, inner, lg, masked,
                         nt)
    return y


cdef Array _softmax_grad(Array y, Array g, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner,
                         bint lg):
    cdef int dt = y.dtype_num, nt
    if dt != FLOAT32 and dt != FLOAT64 or outer < 0 or n < 0 or inner < 0:
        raise ValueError("carray.nn internal: softmax_grad needs float arrays and sizes >= 0")
    _check(y, "output", dt, outer * n * inner)
    _check(g, "grad_output", dt, outer * n * inner)
    cdef Array gx = _like(y)
    if outer * n * inner == 0:
        return gx
    nt = _threads(outer * inner, <double>outer * n * inner * 4)
    with nogil:
        if dt == FLOAT32:
            _softmax_grad_all(<const float*>y.data, <const float*>g.data, <float*>gx.data, outer,
                              n, inner, lg, nt)
        else:
            _softmax_grad_all(<const double*>y.data, <const double*>g.data, <double*>gx.data,
                              outer, n, inner, lg, nt)
    return gx


def softmax_rows(Array x, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner, bint masked=False):
    """softmax of x (C-contiguous, viewed as (outer, n, inner)) over its middle axis; masked:
    rows that are all -inf give 0."""
    return _softmax(x, outer, n, inner, False, masked)


def log_softmax_rows(Array x, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner):
    """log_softmax of x (C-contiguous, viewed as (outer, n, inner)) over its middle axis."""
    return _softmax(x, outer, n, inner, True, False)


def softmax_grad_rows(Array y, Array g, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner):
    """y (g - sum(g y)) over the middle axis of (outer, n, inner) C-contiguous y and g."""
    return _softmax_grad(y, g, outer, n, inner, False)


def log_softmax_grad_rows(Array y, Array g, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner):
    """g - exp(y) sum(g) over the middle axis of (outer, n, inner) C-contiguous y and g."""
    return _softmax_grad(y, g, outer, n, inner, True)


# ---------------------------------------------------------------------------------------------
# layer norm and RMS norm
# ---------------------------------------------------------------------------------------------

cdef inline void _norm_row(const real* x, real* y, const real* w, const real* b, Py_ssize_t n,
                           double eps, bint center, real* mean_out,
                           real* rstd_out) noexcept nogil:
    """One row (carray_norm_row, _rows.h): mean (0 unless center),
    rstd = 1 / sqrt(mean((x - mean)^2) + eps), y = (x - mean) rstd w + b (w, b may be NULL)."""
    if real is float:
        carray_norm_rowf(x, y, w, b, n, eps, center, mean_out, rstd_out)
    else:
        carray_norm_rowd(x, y, w, b, n, eps, center, mean_out, rstd_out)


cdef void _norm_all(const real* x, real* y, const real* w, const real* b, Py_ssize_t rows,
                    Py_ssize_t n, double eps, bint center, real* mean, real* rstd,
                    int nt) noexcept nogil:
    cdef Py_ssize_t i
    cdef double start = region_enter(nt)
    for i in prange(rows, schedule="static", num_threads=nt):
        thread_seen(threadid())
        _norm_row(x + i * n, y + i * n, w, b, n, eps, center, mean + i, rstd + i)
    region_exit(start, nt)


cdef inline void _norm_grad_row(const real* g, const real* x, real mu, real r, const real* w,
                                real* gx, Py_ssize_t n, bint center) noexcept nogil:
    """dx = r (gh - mean(gh) - xhat mean(gh xhat)) (layer norm; RMS norm without mean(gh)),
    gh = g w, xhat = (x - mu) r (carray_norm_grad_row, _rows.h)."""
    if real is float:
        carray_norm_grad_rowf(g, x, mu, r, w, gx, n, center)
    else:
        carray_norm_grad_rowd(g, x, mu, r, w, gx, n, center)


cdef void _norm_grad_cols(const real* g, const real* x, const real* mean, const real* rstd,
                          double* acc_w, double* acc_b, Py_ssize_t rows, Py_ssize_t n,
                          Py_ssize_t j0, Py_ssize_t j1) noexcept nogil:
    """acc_w[j] = sum_i g[i, j] xhat[i, j], acc_b[j] = sum_i g[i, j] for j in [j0, j1) (either
    may be NULL; mean NULL: 0)."""
    cdef Py_ssize_t i, j
    cdef real mu, r
    for j in range(j0, j1):
        if acc_w != NULL:
            acc_w[j] = 0
        if acc_b != NULL:
            acc_b[j] = 0
    for i in range(rows):
        mu = mean[i] if mean != NULL else 0
        r = rstd[i]
        if real is float:
            carray_norm_wb_rowf(g + i * n + j0, x + i * n + j0, mu, r,
                                acc_w + j0 if acc_w != NULL else NULL,
                                acc_b + j0 if acc_b != NULL else NULL, j1 - j0)
        else:
            carray_norm_wb_rowd(g + i * n + j0, x + i * n + j0, mu, r,
                                acc_w + j0 if acc_w != NULL else NULL,
                                acc_b + j0 if acc_b != NULL else NULL, j1 - j0)


cdef void _norm_grad_all(const real* g, const real* x, const real* mean, const real* rstd,
                         const real* w, real* gx, double* acc_w, double* acc_b, Py_ssize_t rows,
                         Py_ssize_t n, bint center, int nt) noexcept nogil:
    cdef Py_ssize_t i, blk, nblk = (n + COL_BLOCK - 1) // COL_BLOCK
    # (two regions: the column blocks may be fewer than the threads, and a thread with no block
    # would never report its start)
    cdef int ntc = nt if nt < nblk else <int>nblk
    cdef double start
    if gx != NULL:
        start = region_enter(nt)
        for i in prange(rows, schedule="static", num_threads=nt):
            thread_seen(threadid())
            _norm_grad_row(g + i * n, x + i * n, mean[i] if center else 0, rstd[i], w,
                           gx + i * n, n, center)
        region_exit(start, nt)
    if acc_w != NULL or acc_b != NULL:
        start = region_enter(ntc)
        for blk in prange(nblk, schedule="static", num_threads=ntc):
            thread_seen(threadid())
            _norm_grad_cols(g, x, mean if center else NULL, rstd, acc_w, acc_b, rows, n,
                            blk * COL_BLOCK, min(n, (blk + 1) * COL_BLOCK))
        region_exit(start, ntc)


cdef tuple _norm(Array x, Py_ssize_t rows, Py_ssize_t n, object w, object b, double eps,
                 bint center):
    cdef int dt = x.dtype_num, nt
    if dt != FLOAT32 and dt != FLOAT64 or rows < 0 or n < 0:
        raise ValueError("carray.nn internal: a norm needs a float array and sizes >= 0")
    _check(x, "input", dt, rows * n)
    cdef Array wa = w, ba = b
    if wa is not None:
        _check(wa, "weight", dt, n)
    if ba is not None:
        _check(ba, "bias", dt, n)
    cdef Array y = _like(x), mean = _vec(rows, dt), rstd = _vec(rows, dt)
    if rows == 0:
        return y, mean, rstd
    nt = _threads(rows, <double>rows * n * 3)
    cdef void* wp = wa.data if wa is not None else NULL
    cdef void* bp = ba.data if ba is not None else NULL
    with nogil:
        if dt == FLOAT32:
            _norm_all(<const float*>x.data, <float*>y.data, <const float*>wp, <const float*>bp,
                      rows, n, eps, center, <float*>mean.data, <float*>rstd.data, nt)
        else:
            _norm_all(<const double*>x.data, <double*>y.data, <const double*>wp,
                      <const double*>bp, rows, n, eps, center, <double*>mean.data,
                      <double*>rstd.data, nt)
    return y, mean, rstd


cdef Array _from_acc(double* acc, Py_ssize_t n, int dt):
    cdef Array out = _vec(n, dt)
    cdef Py_ssize_t j
    if dt == FLOAT32:
        for j in range(n):
            (<float*>out.data)[j] = <float>acc[j]
    else:
        for j in range(n):
            (<double*>out.data)[j] = acc[j]
    return out


cdef tuple _norm_grad(Array g, Array x, object mean, Array rstd, object w, Py_ssize_t rows,
                      Py_ssize_t n, bint center, bint need_x, bint need_w, bint need_b):
    cdef int dt = x.dtype_num, nt
    if dt != FLOAT32 and dt != FLOAT64 or rows < 0 or n < 0:
        raise ValueError("carray.nn internal: a norm gradient needs float arrays, sizes >= 0")
    _check(x, "input", dt, rows * n)
    _check(g, "grad_output", dt, rows * n)
    _check(rstd, "rstd", dt, rows)
    cdef Array ma = mean, wa = w, gx = None, gw = None, gb = None
    if center:
        _check(ma, "mean", dt, rows)
    if wa is not None:
        _check(wa, "weight", dt, n)
    need_b = need_b and center
    cdef double* acc = NULL
    if need_w or need_b:
        acc = <double*>malloc(2 * n * sizeof(double) + 1)
        if acc == NULL:
            raise MemoryError()
    if need_x:
        gx = _like(x)
    cdef double* acc_w = acc if need_w else NULL
    cdef double* acc_b = acc + n if need_b else NULL
    nt = _threads(rows, <double>rows * n * 4)
    cdef void* mp = ma.data if center else NULL
    cdef void* wp = wa.data if wa is not None else NULL
    cdef void* gxp = gx.data if need_x else NULL
    try:
        with nogil:
            if dt == FLOAT32:
                _norm_grad_all(<const float*>g.data, <const float*>x.data, <const float*>mp,
                               <const float*>rstd.data, <const float*>wp, <float*>gxp, acc_w,
                               acc_b, rows, n, center, nt)
            else:
                _norm_grad_all(<const double*>g.data, <const double*>x.data, <const double*>mp,
                               <const double*>rstd.data, <const double*>wp, <double*>gxp, acc_w,
                               acc_b, rows, n, center, nt)
        if need_w:
            gw = _from_acc(acc_w, n, dt)
        if need_b:
            gb = _from_acc(acc_b, n, dt)
    finally:
        free(acc)
    return gx, gw, gb


def layer_norm_rows(Array x, Py_ssize_t rows, Py_ssize_t n, object weight, object bias,
                    double eps):
    """(y, mean, rstd) of layer norm over the rows of C-contiguous x (rows * n elements; mean
    and rstd of shape (rows,)); weight and bias None or C-contiguous (n,) arrays."""
    return _norm(x, rows, n, weight, bias, eps, True)


def layer_norm_grad_rows(Array g, Array x, Array mean, Array rstd, object weight,
                         Py_ssize_t rows, Py_ssize_t n, bint need_x, bint need_w, bint need_b):
    """(dx, dweight, dbias) of layer norm (each None unless needed)."""
    return _norm_grad(g, x, mean, rstd, weight, rows, n, True, need_x, need_w, need_b)


def rms_norm_rows(Array x, Py_ssize_t rows, Py_ssize_t n, object weight, double eps):
    """(y, rstd) of RMS norm over the rows of C-contiguous x (rows * n elements)."""
    y, _, rstd = _norm(x, rows, n, weight, None, eps, False)
    return y, rstd


def rms_norm_grad_rows(Array g, Array x, Array rstd, object weight, Py_ssize_t rows,
                       Py_ssize_t n, bint need_x, bint need_w):
    """(dx, dweight) of RMS norm (each None unless needed)."""
    gx, gw, _ = _norm_grad(g, x, None, rstd, weight, rows, n, False, need_x, need_w, False)
    return gx, gw


# ---------------------------------------------------------------------------------------------
# exact GELU and its gradient in one pass (carray.nn.gelu / gelu_grad on the CPU)
# ---------------------------------------------------------------------------------------------

DEF GELU_CHUNK = 16384


cdef void _gelu_all(const real* g, const real* x, real* y, Py_ssize_t n, int nt) noexcept nogil:
    """y = gelu(x), or the gradient g gelu'(x) when g is not NULL, in chunks across nt threads."""
    cdef Py_ssize_t c, lo, hi, chunks = (n + GELU_CHUNK - 1) // GELU_CHUNK
    cdef double start
    if nt <= 1:
        _gelu_chunk(g, x, y, 0, n)
        return
    start = region_enter(nt)
    for c in prange(chunks, schedule="static", num_threads=nt):
        thread_seen(threadid())
        lo = c * GELU_CHUNK
        hi = lo + GELU_CHUNK if lo + GELU_CHUNK < n else n
        _gelu_chunk(g, x, y, lo, hi)
    region_exit(start, nt)


cdef inline void _gelu_chunk(const real* g, const real* x, real* y, Py_ssize_t lo,
                             Py_ssize_t hi) noexcept nogil:
    if real is float:
        if g == NULL:
            carray_geluf(x + lo, y + lo, hi - lo)
        else:
            carray_gelu_gradf(g + lo, x + lo, y + lo, hi - lo)
    else:
        if g == NULL:
            carray_gelud(x + lo, y + lo, hi - lo)
        else:
            carray_gelu_gradd(g + lo, x + lo, y + lo, hi - lo)


def gelu_rows(Array x, Array g=None):
    """Exact GELU of x (C-contiguous float32/float64), or with g (same shape and type) the
    gradient g (Phi(x) + x phi(x)); a new array."""
    cdef int dt = x.dtype_num, nt
    if dt != FLOAT32 and dt != FLOAT64:
        raise ValueError("carray.nn internal: gelu needs a float array")
    cdef Py_ssize_t n = x.size_c()
    _check(x, "input", dt, n)
    if g is not None:
        _check(g, "grad_output", dt, n)
    cdef Array y = _like(x)
    if n == 0:
        return y
    nt = _threads((n + GELU_CHUNK - 1) // GELU_CHUNK, <double>n * 20)
    cdef const void* gp = NULL if g is None else g.data
    with nogil:
        if dt == FLOAT32:
            _gelu_all(<const float*>gp, <const float*>x.data, <float*>y.data, n, nt)
        else:
            _gelu_all(<const double*>gp, <const double*>x.data, <double*>y.data, n, nt)
    return y
