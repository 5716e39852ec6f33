# cython: boundscheck=False, wraparound=False, cdivision=True
"""The cache-blocked GEMM behind carray.matmul and the convolutions (the CPU backend).

GEMM (float32/float64) follows GotoBLAS/BLIS. For C (M x N) += A (M x K) @ B (K x N), row-major:

    for jc in M by MC:                      A panel, MC x KC, packed by all threads: lives in L3
      for pc in K by KC:                    (one "phase" per (jc, pc))
        pack A[jc:jc+MC, pc:pc+KC] into MR-row micro-panels; barrier
        for each work unit a thread grabs (W columns of C x a group of the panel's rows):
          pack B[pc:pc+KC, cols] into NR-column micro-panels       B chunk, KC x W: lives in L2
          for each A micro-panel (MR x KC: stays in L1) of the unit's rows:
            for each B micro-panel (KC x NR, streamed from L2):
              micro-kernel: an MR x NR tile of C, accumulated in registers over KC

The micro-kernels (C with vector extensions, _gemm.h / _gemm_kernel.h) come in AVX-512, AVX2 and
baseline variants; the best one the CPU runs is chosen once, at import (CARRAY_GEMM_KERNEL
picks a slower one). Edge tiles of at most half the rows or columns use half-size kernels, and a
product with few columns runs transposed (C^T = B^T @ A^T) when that pads less. Packing reads any
strides (transposes, negative steps, stride-0 broadcasts), so views never need a copy.
Matrix-vector products (M == 1 or N == 1) skip packing: dot products or axpys.

Threads (OpenMP, above ~1M multiply-adds) grab work units from an atomic counter rather than
taking a fixed share, so a core shared with another process slows the product down less; the
thread count does not change the results (every tile sums over K in the same order).

Integer and bool matmul use a plain exact loop (wrapping on overflow, as NumPy); bool gives the
logical or of ands, as NumPy.

Sections: the GEMM driver; the Cython entry points (gemm, gemm_strided); the integer loops;
the batched products carray.ops._matmul calls (float_matmul, int_matmul); test hooks.
"""

from cython.parallel cimport parallel, prange, threadid
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from carray.core._array cimport Array
from carray.core._dtype cimport (BOOL, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, UINT8, UINT16,
                                 UINT32, UINT64, itemsize_of)
from carray.core._storage cimport host_alloc, host_free
from carray.core._strided cimport max_threads, region_enter, region_exit, thread_seen

import os

cdef extern from "_gemm.h" nogil:
    ctypedef void (*gemm_kernel_t "carray_gemm_kernel_t")(
        Py_ssize_t kc, const void* a, const void* b, void* c, Py_ssize_t rsc, Py_ssize_t csc,
        double alpha, double beta, int m, int n) noexcept nogil
    ctypedef void (*gemm_pack_t "carray_gemm_pack_t")(
        int rows, Py_ssize_t kc, const void* x, Py_ssize_t rs, Py_ssize_t ks,
        void* dst) noexcept nogil
    ctypedef void (*gemv_dot_t "carray_gemv_dot_t")(
        Py_ssize_t rows, Py_ssize_t K, double alpha, const void* x, Py_ssize_t rs,
        const void* v, double beta, void* y, Py_ssize_t ys) noexcept nogil
    ctypedef void (*gemv_axpy_t "carray_gemv_axpy_t")(
        Py_ssize_t rows, Py_ssize_t K, double alpha, const void* x, Py_ssize_t ks,
        const void* v, Py_ssize_t vs, double beta, void* y) noexcept nogil
    ctypedef struct gemm_impl "carray_gemm_impl":
        const char* name
        int mr
        int nr
        int mr_half
        int mr_two3
        int nr_half
        Py_ssize_t kc
        Py_ssize_t nc
        Py_ssize_t mc
        gemm_kernel_t kernel[6]
        gemm_pack_t pack_a
        gemm_pack_t pack_b
        gemv_dot_t gemv_dot
        gemv_axpy_t gemv_axpy
    int carray_gemm_best() noexcept
    const gemm_impl* carray_gemm_get(int variant, int is_double) noexcept
    void carray_gemm_barrier() noexcept
    Py_ssize_t carray_fetch_add(Py_ssize_t* p, Py_ssize_t v) noexcept
    int carray_gemm_team_size() noexcept
    int carray_gemm_in_parallel() noexcept

# GEMMs smaller than this (M * N * K multiply-adds, ~10 us on one core) run on one thread: a
# parallel region costs a few microseconds on an idle machine, and far more when the cores are
# shared (a sleeping worker thread must be scheduled again)
cdef double PARALLEL_MIN_WORK = 1 << 20
# the same for matrix-vector products (memory-bound: threads help only on large operands)
cdef double PARALLEL_MIN_GEMV = 1 << 20

cdef int _best_variant = carray_gemm_best()
cdef int _variant = _best_variant            # the variant in use (tests switch it)
cdef tuple _VARIANT_NAMES = ("plain", "avx2", "avx512")
cdef Py_ssize_t _tune[3]                     # kc, nc, mc overrides for tuning (0: the impl's)
_tune[0] = _tune[1] = _tune[2] = 0


# ---------------------------------------------------------------------------------------------
# the GEMM driver
# ---------------------------------------------------------------------------------------------

cdef struct Plan:
    const gemm_impl* impl
    Py_ssize_t M, N, K, isz
    double alpha, beta
    const char* A
    Py_ssize_t rsa, csa
    const char* B
    Py_ssize_t rsb, csb
    char* C
    Py_ssize_t rsc, csc
    bint swapped                # A and B exchanged: the plan computes C^T = B^T @ A^T
    Py_ssize_t kc, mc           # K block, rows of the A panel (the impl's sizes, balanced)
    Py_ssize_t w, ncc           # work units: C's columns in ncc chunks of w (a multiple of nr)
    Py_ssize_t nrg              # ... times nrg groups of the A panel's micro-panels
    Py_ssize_t nphases          # (A panel, K block) pairs
    Py_ssize_t abytes           # one thread's packed A panel (mc x kc)
    Py_ssize_t fbytes           # one thread's flags: the phase each A micro-panel was packed in
    Py_ssize_t bbytes           # one thread's packed B chunk (kc x w)
    Py_ssize_t thread_bytes     # abytes + fbytes + bbytes
    Py_ssize_t* counters        # per phase: units taken (64 bytes apart)
    char* work                  # the threads' buffers, thread_bytes apart


cdef inline Py_ssize_t _cdiv(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    return (a + b - 1) // b


cdef inline Py_ssize_t _round_up(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    return _cdiv(a, b) * b


cdef inline Py_ssize_t _balanced(Py_ssize_t n, Py_ssize_t block, Py_ssize_t unit) noexcept nogil:
    """The size of ceil(n / block) equal blocks covering n, rounded up to a multiple of unit
    (so 1030 columns in blocks of 512 become 3 blocks of ~344, not 512 + 512 + 6)."""
    if n <= 0:
        return unit
    return _round_up(_cdiv(n, _cdiv(n, block)), unit)


cdef inline Py_ssize_t _min(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    return a if a < b else b


cdef void _gemm_thread(const Plan* p, int tid, int nt) noexcept nogil:
    """The loop nest run by each of the nt threads of a team (nt = 1: the whole product).

    Each (A panel, K block) phase, the threads grab work units (a chunk of C's columns times a
    group of the A panel's micro-panels) from a shared counter until none is left, and wait for
    each other at the end of the phase (C's tiles must sum their K blocks in order). For a unit,
    a thread packs its B chunk into its own buffer (L2), packs the A micro-panels it has not yet
    packed in this phase into its own A panel buffer, and runs the micro-kernels.

    Grabbing units instead of taking a fixed share keeps both cores busy when one of them is
    shared with another process. Packing A privately costs a second pass over A when both
    threads need all of it, but is cheaper than sharing one packed panel: writing lines that
    the other core has cached (from the previous phase) stalls on cache-coherence traffic."""
    cdef const gemm_impl* impl = p.impl
    cdef Py_ssize_t mr = impl.mr, nr = impl.nr, isz = p.isz
    cdef Py_ssize_t jc, pc, mb, kb, nb, npan, rgs, nrgs, nunits, u, q, q0, q1, r, c0, nbp
    cdef Py_ssize_t packed, phase = 0
    cdef char* mine = p.work + tid * p.thread_bytes
    cdef char* abuf = mine
    cdef Py_ssize_t* aflags = <Py_ssize_t*>(mine + p.abytes)   # phase each A panel was packed in
    cdef char* bbuf = mine + p.abytes + p.fbytes
    cdef double beta
    cdef int mt, ntl, ki
    cdef const char* apan
    cdef char* crow
    jc = 0
    while jc < p.M:
        mb = _min(p.mc, p.M - jc)
        npan = _cdiv(mb, mr)
        rgs = _cdiv(npan, p.nrg)
        nrgs = _cdiv(npan, rgs)
        nunits = p.ncc * nrgs
        pc = 0
        while pc < p.K:
            kb = _min(p.kc, p.K - pc)
            beta = p.beta if pc == 0 else 1.0
            packed = -1                 # the column chunk now in bbuf
            while True:
                u = carray_fetch_add(&p.counters[phase * 8], 1)
                if u >= nunits:
                    break
                # consecutive units share a column chunk: a thread that takes several of them
                # packs the chunk once
                c0 = (u // nrgs) * p.w
                nb = _min(p.w, p.N - c0)
                q0 = (u % nrgs) * rgs
                q1 = _min(q0 + rgs, npan)
                nbp = _cdiv(nb, nr)
                if c0 != packed:
                    packed = c0
                    for r in range(nbp):
                        impl.pack_b(<int>_min(nr, nb - r * nr), kb,
                                    p.B + (pc * p.rsb + (c0 + r * nr) * p.csb) * isz, p.csb,
                                    p.rsb, bbuf + r * nr * kb * isz)
                for q in range(q0, q1):
                    apan = abuf + q * mr * kb * isz
                    mt = <int>_min(mr, mb - q * mr)
                    if aflags[q] != phase:
                        aflags[q] = phase
                        impl.pack_a(mt, kb, p.A + ((jc + q * mr) * p.rsa + pc * p.csa) * isz,
                                    p.rsa, p.csa, <char*>apan)
                    crow = p.C + ((jc + q * mr) * p.rsc + c0 * p.csc) * isz
                    for r in range(nbp):
                        ntl = <int>_min(nr, nb - r * nr)
                        # edge tiles of at most half (two thirds) the rows, half the columns use
                        # the smaller kernels
                        ki = 2 * (1 if mt <= impl.mr_half else 2 if mt <= impl.mr_two3 else 0) + \
                            (1 if ntl <= impl.nr_half else 0)
                        impl.kernel[ki](kb, apan, bbuf + r * nr * kb * isz,
                                        crow + r * nr * p.csc * isz, p.rsc, p.csc,
                                        p.alpha, beta, mt, ntl)
            if nt > 1:
                carray_gemm_barrier()
            phase += 1
            pc += kb
        jc += mb


cdef int _threads_for(Py_ssize_t M, Py_ssize_t N, Py_ssize_t K) noexcept nogil:
    if carray_gemm_in_parallel():
        return 1
    if <double>M * <double>N * <double>K < PARALLEL_MIN_WORK:
        return 1
    return max_threads()


cdef inline Py_ssize_t _padded(Py_ssize_t n, Py_ssize_t full, Py_ssize_t half,
                               Py_ssize_t two3) noexcept nogil:
    """n rounded up to what the kernels compute: whole tiles, the last one full, half or two
    thirds size (two3 = full: no two-thirds kernel on that side)."""
    cdef Py_ssize_t rem = n % full
    return n - rem + (0 if rem == 0 else half if rem <= half else two3 if rem <= two3 else full)


cdef void _plan(Plan* p, int dtype_num, Py_ssize_t M, Py_ssize_t N, Py_ssize_t K, double alpha,
                const char* A, Py_ssize_t rsa, Py_ssize_t csa,
                const char* B, Py_ssize_t rsb, Py_ssize_t csb,
                double beta, char* C, Py_ssize_t rsc, Py_ssize_t csc, int nt) noexcept nogil:
    """Fill p for an nt-thread run (buffers not yet set: see _workspace_bytes)."""
    cdef const gemm_impl* impl = carray_gemm_get(_variant, dtype_num == FLOAT64)
    cdef Py_ssize_t npan, want = 4 * nt        # work units wanted: a few per thread
    # C^T = B^T @ A^T is the same product with A and B exchanged: take it when it wastes far
    # fewer multiply-adds on padded tiles (a tall product with few columns, say)
    p.swapped = (_padded(N, impl.mr, impl.mr_half, impl.mr_two3) *
                 _padded(M, impl.nr, impl.nr_half, impl.nr) * 5 <
                 _padded(M, impl.mr, impl.mr_half, impl.mr_two3) *
                 _padded(N, impl.nr, impl.nr_half, impl.nr) * 4)
    if p.swapped:
        M, N = N, M
        A, B = B, A
        rsa, csa, rsb, csb = csb, rsb, csa, rsa
        rsc, csc = csc, rsc
    p.impl = impl
    p.isz = itemsize_of(dtype_num)
    p.M, p.N, p.K = M, N, K
    p.alpha, p.beta = alpha, beta
    p.A, p.rsa, p.csa = A, rsa, csa
    p.B, p.rsb, p.csb = B, rsb, csb
    p.C, p.rsc, p.csc = C, rsc, csc
    p.kc = _balanced(K, _tune[0] if _tune[0] > 0 else impl.kc, 1)
    p.mc = _balanced(M, _tune[2] if _tune[2] > 0 else impl.mc, impl.mr)
    p.nphases = _cdiv(M, p.mc) * _cdiv(K, p.kc)
    npan = _cdiv(p.mc, impl.mr)
    # column chunks: L2-sized, narrower (down to 4 tiles) when that gives each thread a few
    p.w = _balanced(N, _tune[1] if _tune[1] > 0 else impl.nc, impl.nr)
    if nt > 1 and _cdiv(N, p.w) < want:
        p.w = _round_up(_cdiv(N, want), impl.nr)
        if p.w < 4 * impl.nr:
            p.w = _min(4 * impl.nr, _round_up(N, impl.nr))
    p.ncc = _cdiv(N, p.w)
    # few columns: split the A panel's rows too
    p.nrg = 1
    if nt > 1 and p.ncc < want:
        p.nrg = _min(_cdiv(want, p.ncc), npan)
    p.abytes = _round_up(p.mc * p.kc * p.isz, 64)
    p.fbytes = _round_up(npan * sizeof(Py_ssize_t), 64)
    p.bbytes = _round_up(p.w * p.kc * p.isz, 64)
    p.thread_bytes = p.abytes + p.fbytes + p.bbytes


cdef inline void _set_operands(Plan* p, const char* A, const char* B, char* C) noexcept nogil:
    """Point a plan at another product of the same shape and steps (a batch member)."""
    if p.swapped:
        p.A, p.B = B, A
    else:
        p.A, p.B = A, B
    p.C = C


cdef Py_ssize_t _counter_bytes(const Plan* p) noexcept nogil:
    return p.nphases * 8 * sizeof(Py_ssize_t)


cdef Py_ssize_t _workspace_bytes(Plan* p, int nt) noexcept nogil:
    """Bytes of the phase counters and the packing buffers of nt threads."""
    return _counter_bytes(p) + nt * p.thread_bytes


cdef void _run(Plan* p, char* workspace, int nt) noexcept nogil:
    cdef int t
    cdef double start
    p.counters = <Py_ssize_t*>workspace
    memset(workspace, 0, _counter_bytes(p))
    p.work = workspace + _counter_bytes(p)
    for t in range(nt):         # no A micro-panel packed yet (phase -1)
        memset(p.work + t * p.thread_bytes + p.abytes, 0xFF, p.fbytes)
    if nt <= 1:
        _gemm_thread(p, 0, 1)
        return
    start = region_enter(nt)
    with parallel(num_threads=nt):
        thread_seen(threadid())
        _gemm_thread(p, threadid(), carray_gemm_team_size())
    region_exit(start, nt)


cdef void _scale(int dtype_num, Py_ssize_t M, Py_ssize_t N, double beta, char* C,
                 Py_ssize_t rsc, Py_ssize_t csc) noexcept nogil:
    """C := beta * C (C := 0 when beta == 0, whatever C held)."""
    cdef Py_ssize_t i, j
    cdef float* cf
    cdef double* cd
    for i in range(M):
        if dtype_num == FLOAT32:
            cf = <float*>C + i * rsc
            for j in range(N):
                cf[j * csc] = 0 if beta == 0 else <float>beta * cf[j * csc]
        else:
            cd = <double*>C + i * rsc
            for j in range(N):
                cd[j * csc] = 0 if beta == 0 else beta * cd[j * csc]


# ---------------------------------------------------------------------------------------------
# Cython entry points (declared in _gemm.pxd)
# ---------------------------------------------------------------------------------------------

cdef void _gemv_rows(const gemm_impl* impl, bint dot, Py_ssize_t r0, Py_ssize_t r1,
                     Py_ssize_t K, double alpha, const char* x, Py_ssize_t xrs, Py_ssize_t xks,
                     const char* v, Py_ssize_t vs, double beta, char* y, Py_ssize_t ys,
                     Py_ssize_t isz) noexcept nogil:
    """Rows r0..r1-1 of y := alpha * X @ v + beta * y."""
    if r1 <= r0:
        return
    if dot:
        impl.gemv_dot(r1 - r0, K, alpha, x + r0 * xrs * isz, xrs, v, beta, y + r0 * ys * isz, ys)
    else:
        impl.gemv_axpy(r1 - r0, K, alpha, x + r0 * isz, xks, v, vs, beta, y + r0 * isz)


cdef int _gemv(int dtype_num, Py_ssize_t M, Py_ssize_t N, Py_ssize_t K, double alpha,
               const char* A, Py_ssize_t rsa, Py_ssize_t csa,
               const char* B, Py_ssize_t rsb, Py_ssize_t csb,
               double beta, char* C, Py_ssize_t rsc, Py_ssize_t csc) except -1 nogil:
    """C := alpha * A @ B + beta * C when M == 1 or N == 1, as y := alpha * X @ v + beta * y
    without packing: dot products when X's rows are contiguous, axpys when its columns are.
    Returns 1 when done, 0 when the layout needs the general path."""
    cdef const gemm_impl* impl = carray_gemm_get(_variant, dtype_num == FLOAT64)
    cdef Py_ssize_t isz = itemsize_of(dtype_num), rows, xrs, xks, vs, ys, k, t
    cdef const char* x
    cdef const char* v
    cdef char* y = C
    cdef char* vbuf = NULL
    cdef bint dot
    cdef int nt
    cdef double start
    if N == 1:                  # C[:, 0] = A @ B[:, 0]
        rows, x, xrs, xks, v, vs, ys = M, A, rsa, csa, B, rsb, rsc
    else:                       # C[0, :] = B^T @ A[0, :]
        rows, x, xrs, xks, v, vs, ys = N, B, csb, rsb, A, csa, csc
    if rows == 1 and xks != 1 and vs == 1:     # a dot product: either side may be X
        x, xks, v, vs = v, vs, x, xks
    if xks == 1:
        dot = True
    elif xrs == 1 and ys == 1:
        dot = False
    else:
        return 0
    if dot and vs != 1:         # the dot kernel reads v contiguously
        with gil:
            vbuf = <char*>host_alloc(K * isz)
        for k in range(K):
            memcpy(vbuf + k * isz, v + k * vs * isz, isz)
        v, vs = vbuf, 1
    nt = 1 if <double>rows * K < PARALLEL_MIN_GEMV else _threads_for(rows, 1, K)
    if nt > rows:
        nt = <int>rows
    if nt <= 1:
        _gemv_rows(impl, dot, 0, rows, K, alpha, x, xrs, xks, v, vs, beta, y, ys, isz)
    else:
        start = region_enter(nt)
        for t in prange(nt, schedule="static", num_threads=nt):
            thread_seen(threadid())
            _gemv_rows(impl, dot, rows * t // nt, rows * (t + 1) // nt, K, alpha, x, xrs, xks,
                       v, vs, beta, y, ys, isz)
        region_exit(start, nt)
    if vbuf != NULL:
        with gil:
            host_free(vbuf, K * isz)
    return 1


cdef int gemm_strided(int dtype_num, Py_ssize_t M, Py_ssize_t N, Py_ssize_t K, double alpha,
                      const char* A, Py_ssize_t rsa, Py_ssize_t csa,
                      const char* B, Py_ssize_t rsb, Py_ssize_t csb,
                      double beta, char* C, Py_ssize_t rsc, Py_ssize_t csc) except -1 nogil:
    """C := alpha * A @ B + beta * C with element steps (rs*, cs*) for rows and columns."""
    cdef Plan p
    cdef int nt
    cdef Py_ssize_t nbytes
    cdef char* ws
    if dtype_num != FLOAT32 and dtype_num != FLOAT64:
        with gil:
            raise ValueError(f"gemm: dtype must be float32 or float64 (type number "
                             f"{FLOAT32} or {FLOAT64}), got type number {dtype_num}")
    if M < 0 or N < 0 or K < 0:
        with gil:
            raise ValueError(f"gemm: sizes must be >= 0, got M={M}, N={N}, K={K}")
    if M == 0 or N == 0:
        return 0
    if K == 0 or alpha == 0:
        _scale(dtype_num, M, N, beta, C, rsc, csc)
        return 0
    if (M == 1 or N == 1) and _gemv(dtype_num, M, N, K, alpha, A, rsa, csa, B, rsb, csb,
                                    beta, C, rsc, csc):
        return 0
    nt = _threads_for(M, N, K)
    _plan(&p, dtype_num, M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, rsc, csc, nt)
    nbytes = _workspace_bytes(&p, nt)
    with gil:
        ws = <char*>host_alloc(nbytes)
    _run(&p, ws, nt)
    with gil:
        host_free(ws, nbytes)
    return 0


cdef int gemm(int dtype_num, bint trans_a, bint trans_b, Py_ssize_t M, Py_ssize_t N, Py_ssize_t K,
              double alpha, const char* A, Py_ssize_t lda, const char* B, Py_ssize_t ldb,
              double beta, char* C, Py_ssize_t ldc) except -1 nogil:
    """C := alpha * op(A) @ op(B) + beta * C, row-major with leading dimensions (BLAS style)."""
    return gemm_strided(dtype_num, M, N, K, alpha,
                        A, 1 if trans_a else lda, lda if trans_a else 1,
                        B, 1 if trans_b else ldb, ldb if trans_b else 1,
                        beta, C, ldc, 1)


# ---------------------------------------------------------------------------------------------
# integer and bool matmul: exact loops (unsigned arithmetic wraps as NumPy's integers do)
# ---------------------------------------------------------------------------------------------

ctypedef fused uint_t:
    uint8_t
    uint16_t
    uint32_t
    uint64_t


cdef void _int_row(uint_t* c, const uint_t* a, const uint_t* b, Py_ssize_t N, Py_ssize_t K,
                   Py_ssize_t csa, Py_ssize_t rsb, Py_ssize_t csb,
                   Py_ssize_t csc) noexcept nogil:
    """One row of C: c[j] = sum_k a[k] * B[k, j]."""
    cdef Py_ssize_t j, k
    cdef uint_t aik
    for j in range(N):
        c[j * csc] = 0
    for k in range(K):
        aik = a[k * csa]
        if uint_t is uint8_t or uint_t is uint16_t:     # (C would multiply them as int)
            for j in range(N):
                c[j * csc] = <uint_t>(c[j * csc] + <uint32_t>aik * b[k * rsb + j * csb])
        elif csb == 1 and csc == 1:
            for j in range(N):
                c[j] += aik * b[k * rsb + j]
        else:
            for j in range(N):
                c[j * csc] += aik * b[k * rsb + j * csb]


cdef void _bool_row(uint8_t* c, const uint8_t* a, const uint8_t* b, Py_ssize_t N, Py_ssize_t K,
                    Py_ssize_t csa, Py_ssize_t rsb, Py_ssize_t csb,
                    Py_ssize_t csc) noexcept nogil:
    """One row of C: c[j] = any_k (a[k] and B[k, j])."""
    cdef Py_ssize_t j, k
    for j in range(N):
        c[j * csc] = 0
    for k in range(K):
        if a[k * csa] != 0:
            if csb == 1 and csc == 1:
                for j in range(N):
                    c[j] |= b[k * rsb + j] != 0
            else:
                for j in range(N):
                    c[j * csc] |= b[k * rsb + j * csb] != 0


cdef void int_matmul(int dtype_num, Py_ssize_t nbatch, const Py_ssize_t* offs,
                     Py_ssize_t M, Py_ssize_t N, Py_ssize_t K,
                      const char* A, Py_ssize_t rsa, Py_ssize_t csa,
                      const char* B, Py_ssize_t rsb, Py_ssize_t csb,
                      char* C, Py_ssize_t rsc, Py_ssize_t csc) noexcept nogil:
    """C[t] = A[t] @ B[t] for every batch t; offs[3t..3t+2] are the element offsets of A, B, C."""
    cdef Py_ssize_t r, t, i, rows = nbatch * M
    cdef int nt = 1
    cdef double start
    if <double>rows * <double>N * <double>K >= PARALLEL_MIN_WORK and rows > 1:
        nt = max_threads()
        if nt > rows:
            nt = <int>rows
    start = region_enter(nt)
    with parallel(num_threads=nt):
        thread_seen(threadid())
        for r in prange(rows, schedule="static"):
            t = r // M
            i = r - t * M
            # signed and unsigned ints of one size share the wrapping unsigned loop
            if dtype_num == INT32 or dtype_num == UINT32:
                _int_row(<uint32_t*>C + offs[3 * t + 2] + i * rsc,
                         <const uint32_t*>A + offs[3 * t] + i * rsa,
                         <const uint32_t*>B + offs[3 * t + 1], N, K, csa, rsb, csb, csc)
            elif dtype_num == INT8 or dtype_num == UINT8:
                _int_row(<uint8_t*>C + offs[3 * t + 2] + i * rsc,
                         <const uint8_t*>A + offs[3 * t] + i * rsa,
                         <const uint8_t*>B + offs[3 * t + 1], N, K, csa, rsb, csb, csc)
            elif dtype_num == INT16 or dtype_num == UINT16:
                _int_row(<uint16_t*>C + offs[3 * t + 2] + i * rsc,
                         <const uint16_t*>A + offs[3 * t] + i * rsa,
                         <const uint16_t*>B + offs[3 * t + 1], N, K, csa, rsb, csb, csc)
            elif dtype_num == INT64 or dtype_num == UINT64:
                _int_row(<uint64_t*>C + offs[3 * t + 2] + i * rsc,
                         <const uint64_t*>A + offs[3 * t] + i * rsa,
                         <const uint64_t*>B + offs[3 * t + 1], N, K, csa, rsb, csb, csc)
            else:
                _bool_row(<uint8_t*>C + offs[3 * t + 2] + i * rsc,
                          <const uint8_t*>A + offs[3 * t] + i * rsa,
                          <const uint8_t*>B + offs[3 * t + 1], N, K, csa, rsb, csb, csc)
    region_exit(start, nt)


# ---------------------------------------------------------------------------------------------
# batched float GEMM over offset tables
# ---------------------------------------------------------------------------------------------

cdef int float_matmul(int dtype_num, Py_ssize_t nbatch, const Py_ssize_t* offs,
                      Py_ssize_t M, Py_ssize_t N, Py_ssize_t K,
                      const char* A, Py_ssize_t rsa, Py_ssize_t csa,
                      const char* B, Py_ssize_t rsb, Py_ssize_t csb,
                      char* C, Py_ssize_t rsc, Py_ssize_t csc) except -1:
    """C[t] = A[t] @ B[t] for every batch t (offs as in int_matmul). Large matrices run one
    after another with all threads each; small ones run in parallel, one thread each."""
    cdef Py_ssize_t isz = itemsize_of(dtype_num), t, nbytes
    cdef int nt = _threads_for(M, N, K), nb_threads
    cdef Plan p
    cdef char* ws
    if nbatch == 0 or M == 0 or N == 0:
        return 0
    if K == 0 or M == 1 or N == 1:      # zeros, or matrix-vector products (no packing)
        with nogil:
            for t in range(nbatch):
                gemm_strided(dtype_num, M, N, K, 1.0, A + offs[3 * t] * isz, rsa, csa,
                             B + offs[3 * t + 1] * isz, rsb, csb, 0.0,
                             C + offs[3 * t + 2] * isz, rsc, csc)
        return 0
    nb_threads = 1
    if nt == 1 and nbatch > 1 and not carray_gemm_in_parallel() and \
            <double>nbatch * M * N * K >= PARALLEL_MIN_WORK:
        nb_threads = max_threads()
        if nb_threads > nbatch:
            nb_threads = <int>nbatch
    _plan(&p, dtype_num, M, N, K, 1.0, A, rsa, csa, B, rsb, csb, 0.0, C, rsc, csc, nt)
    nbytes = _workspace_bytes(&p, nt)
    ws = <char*>host_alloc(nbytes * nb_threads)
    try:
        with nogil:
            if nb_threads == 1:
                for t in range(nbatch):
                    _set_operands(&p, A + offs[3 * t] * isz, B + offs[3 * t + 1] * isz,
                                  C + offs[3 * t + 2] * isz)
                    _run(&p, ws, nt)
            else:
                _batch_parallel(&p, nbatch, offs, A, B, C, ws, nbytes, nb_threads)
    finally:
        host_free(ws, nbytes * nb_threads)
    return 0


cdef void _batch_parallel(const Plan* proto, Py_ssize_t nbatch, const Py_ssize_t* offs,
                          const char* A, const char* B, char* C, char* ws, Py_ssize_t nbytes,
                          int nt) noexcept nogil:
    """Single-threaded GEMMs of a batch, spread over nt threads (each with its own buffers)."""
    cdef Py_ssize_t t
    cdef Plan p
    cdef Py_ssize_t isz = proto.isz
    cdef double start = region_enter(nt)
    for t in prange(nbatch, schedule="static", num_threads=nt):
        thread_seen(threadid())
        p = proto[0]
        _set_operands(&p, A + offs[3 * t] * isz, B + offs[3 * t + 1] * isz,
                      C + offs[3 * t + 2] * isz)
        _run(&p, ws + threadid() * nbytes, 1)
    region_exit(start, nt)


# ---------------------------------------------------------------------------------------------
# test hooks (not public API)
# ---------------------------------------------------------------------------------------------

def _gemm_kernels():
    """Names of the micro-kernel variants this CPU can run, slowest first."""
    return list(_VARIANT_NAMES[:_best_variant + 1])


def _set_gemm_kernel(name=None):
    """Use the micro-kernel variant `name` (None: the best one); return the previous name."""
    global _variant
    prev = _VARIANT_NAMES[_variant]
    if name is None:
        _variant = _best_variant
    elif name in _VARIANT_NAMES[:_best_variant + 1]:
        _variant = _VARIANT_NAMES.index(name)
    else:
        raise ValueError(f"gemm kernel {name!r} is not available on this CPU; available: "
                         f"{_gemm_kernels()}")
    return prev


def _gemm_info():
    """The blocking of the variant in use: {dtype: (mr, nr, kc, nc, mc)}."""
    cdef const gemm_impl* s = carray_gemm_get(_variant, 0)
    cdef const gemm_impl* d = carray_gemm_get(_variant, 1)
    return {"kernel": _VARIANT_NAMES[_variant],
            "float32": (s.mr, s.nr, s.kc, s.nc, s.mc),
            "float64": (d.mr, d.nr, d.kc, d.nc, d.mc)}


def _gemm_tune(kc=0, nc=0, mc=0):
    """Override the block sizes (K block, B chunk columns, A panel rows; 0: the kernel's own),
    for tuning on a new machine. Returns the previous overrides."""
    prev = (_tune[0], _tune[1], _tune[2])
    for i, v in enumerate((kc, nc, mc)):
        if v < 0:
            raise ValueError(f"block sizes must be >= 0, got {(kc, nc, mc)}")
        _tune[i] = v
    return prev


def _gemm(bint trans_a, bint trans_b, Py_ssize_t M, Py_ssize_t N, Py_ssize_t K, double alpha,
          Array A not None, Py_ssize_t lda, Array B not None, Py_ssize_t ldb, double beta,
          Array C not None, Py_ssize_t ldc):
    """Call the cdef gemm on the memory of contiguous arrays A, B, C (a test hook): checks that
    the arrays are contiguous float32/float64 of one dtype and large enough, then
    C := alpha * op(A) @ op(B) + beta * C."""
    cdef Py_ssize_t ra = K if trans_a else M, ca = M if trans_a else K
    cdef Py_ssize_t rb = N if trans_b else K, cb = K if trans_b else N
    for name, x in (("A", A), ("B", B), ("C", C)):
        if not (<Array>x).c_contiguous():
            raise ValueError(f"_gemm: {name} must be C-contiguous")
        if (<Array>x).dtype_num != C.dtype_num:
            raise ValueError(f"_gemm: A, B and C must have one dtype")
    if M < 0 or N < 0 or K < 0:
        raise ValueError(f"_gemm: sizes must be >= 0, got M={M}, N={N}, K={K}")
    for name, x, rows, cols, ld in (("A", A, ra, ca, lda), ("B", B, rb, cb, ldb),
                                    ("C", C, M, N, ldc)):
        if ld < max(cols, 1):
            raise ValueError(f"_gemm: ld{name.lower()}={ld} is smaller than {name}'s row length "
                             f"{cols}")
        if rows > 0 and cols > 0 and (rows - 1) * ld + cols > (<Array>x).size_c():
            raise ValueError(f"_gemm: {name} has {(<Array>x).size_c()} elements, needs "
                             f"{(rows - 1) * ld + cols}")
    if not C.writeable:
        raise ValueError("_gemm: C is read-only")
    with nogil:
        gemm(C.dtype_num, trans_a, trans_b, M, N, K, alpha, A.data, lda, B.data, ldb, beta,
             C.data, ldc)
    return C


cdef _init_from_env():
    """CARRAY_GEMM_KERNEL=plain|avx2|avx512 picks a slower variant (for debugging and timing)."""
    name = os.environ.get("CARRAY_GEMM_KERNEL")
    if name:
        try:
            _set_gemm_kernel(name)
        except ValueError as e:
            import warnings
            warnings.warn(f"CARRAY_GEMM_KERNEL ignored: {e}", RuntimeWarning, stacklevel=2)


_init_from_env()
