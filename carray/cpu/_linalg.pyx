"""The matrix factorisations behind carray.linalg, as C loops over float64 host arrays.

carray/ops/_linalg.py validates, promotes (float32 is factorised in float64 and rounded back) and
hands these entry points C-contiguous float64 arrays with the batch flattened into axis 0; each
re-checks the shapes it indexes with, then runs the batch in parallel with the GIL released.
From BLOCKED_MIN on, LU, its solve, Cholesky and QR run blocked (right-looking: a panel of NB
columns by the loops below, the trailing update by carray's threaded GEMM, cimported from
carray.cpu._gemm), one matrix at a time. Per matrix (row-major, n x n unless said):
  lu / lu_solve      partial-pivoting LU (LAPACK's getrf: the largest |a_ik| is the pivot), and
                     the solve P L U x = b
  slogdet            sign and log|det| (and det itself, as a product) from the LU
  cholesky           A = L L^T from the lower triangle (row-oriented: rows of L are dot products)
  qr / qr_q          Householder QR (LAPACK's geqrf signs: R's diagonal is -sign(a_jj) |x|) and
                     the explicit Q (reduced or complete) by backward accumulation
  eigh               cyclic Jacobi below 32 x 32: rotations zero a_pq in turn until no a_pq is
                     above eps sqrt(|a_pp a_qq|); from 32 on Householder tridiagonalisation
                     and implicit QL (EISPACK's tred2/tql2); eigenvalues ascending,
                     eigenvectors as columns
  svd                one-sided (Hestenes) Jacobi on the rows of W: rotate row pairs until every
                     pair is orthogonal to eps; then s = row norms, rows / s, the basis completed
                     by a Householder QR where rows are missing (zero s, full_matrices)
`info` is per matrix: 0, or k + 1 for the first zero (or NaN) pivot / non-positive Cholesky
pivot, or -1 for an iteration that did not converge (or a non-finite input).
"""

from cython.parallel cimport parallel, prange, threadid
from libc.math cimport INFINITY, copysign, fabs, hypot, isfinite, log, sqrt
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from carray.core._array cimport Array, new_array
from carray.core._dtype cimport FLOAT64, INT64
from carray.cpu._gemm cimport gemm
from carray.core._strided cimport max_threads, region_enter, region_exit, thread_seen

ctypedef long long i64

cdef double EPS = 2.220446049250313e-16
cdef int MAX_SWEEPS = 80
# LU, Cholesky and QR of matrices this large run blocked: a panel of NB columns in these loops,
# the trailing update by GEMM (carray's, threaded), the batch one matrix at a time
cdef enum:
    BLOCKED_MIN = 160
    NB = 64
    # eigh: cyclic Jacobi below this size (the most accurate), above it Householder
    # tridiagonalisation and implicit QL (several times faster)
    JACOBI_MAX = 32


cdef int _check(Array a, int ndim, int dtype_num, str what) except -1:
    if a.ndim != ndim or a.dtype_num != dtype_num or not a.c_contiguous() or a.data == NULL:
        raise ValueError(f"carray.cpu._linalg: {what} must be a C-contiguous host array of "
                         f"{ndim} dims and dtype number {dtype_num}")
    return 0


cdef int _threads(Py_ssize_t batch, Py_ssize_t work) noexcept nogil:
    # a parallel region costs microseconds: small batches of small matrices stay on one thread
    return 1 if batch < 2 or batch * work < 32768 else max(1, min(max_threads(), batch))


# ---------------------------------------------------------------- LU

cdef i64 _lu(double* a, i64* piv, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i, j, k, p
    cdef double best, v, l, t
    cdef i64 info = 0
    for k in range(n):
        p = k
        best = fabs(a[k * n + k])
        for i in range(k + 1, n):
            v = fabs(a[i * n + k])
            if v > best or v != v:
                best = v
                p = i
                if v != v:
                    break
        piv[k] = p
        if a[p * n + k] == 0.0 or a[p * n + k] != a[p * n + k]:     # NaN: singular, as LAPACK
            if info == 0:
                info = k + 1
            continue
        if p != k:
            for j in range(n):
                t = a[k * n + j]
                a[k * n + j] = a[p * n + j]
                a[p * n + j] = t
        for i in range(k + 1, n):
            l = a[i * n + k] / a[k * n + k]
            a[i * n + k] = l
            if l != 0.0:
                for j in range(k + 1, n):
                    a[i * n + j] -= l * a[k * n + j]
    return info


cdef i64 _lu_blocked(double* a, i64* piv, Py_ssize_t n) except -2 nogil:
    # right-looking: factor the panel a[k0:, k0:k0+kb] (rows swapped whole), U12 = L11^-1 A12,
    # then A22 -= L21 U12 by GEMM
    cdef Py_ssize_t k0, kb, k, i, j, p, rest
    cdef double best, v, l, t
    cdef i64 info = 0
    k0 = 0
    while k0 < n:
        kb = min(<Py_ssize_t>NB, n - k0)
        for k in range(k0, k0 + kb):
            p = k
            best = fabs(a[k * n + k])
            for i in range(k + 1, n):
                v = fabs(a[i * n + k])
                if v > best or v != v:
                    best = v
                    p = i
                    if v != v:
                        break
            piv[k] = p
            if a[p * n + k] == 0.0 or a[p * n + k] != a[p * n + k]:
                if info == 0:
                    info = k + 1
                continue
            if p != k:
                for j in range(n):
                    t = a[k * n + j]
                    a[k * n + j] = a[p * n + j]
                    a[p * n + j] = t
            for i in range(k + 1, n):
                l = a[i * n + k] / a[k * n + k]
                a[i * n + k] = l
                if l != 0.0:
                    for j in range(k + 1, k0 + kb):
                        a[i * n + j] -= l * a[k * n + j]
        rest = n - k0 - kb
        if rest == 0:
            break
        for k in range(k0, k0 + kb):            # U12 := L11^-1 A12 (unit lower L11)
            for i in range(k + 1, k0 + kb):
                l = a[i * n + k]
                if l != 0.0:
                    for j in range(k0 + kb, n):
                        a[i * n + j] -= l * a[k * n + j]
        gemm(FLOAT64, False, False, rest, rest, kb, -1.0,
             <const char*>(a + (k0 + kb) * n + k0), n, <const char*>(a + k0 * n + k0 + kb), n,
             1.0, <char*>(a + (k0 + kb) * n + k0 + kb), n)
        k0 += kb
    return info


cdef void _lu_solve(const double* lu, const i64* piv, double* b, Py_ssize_t n,
                    Py_ssize_t m) noexcept nogil:
    cdef Py_ssize_t i, j, r, p
    cdef double l, t
    for i in range(n):
        p = piv[i]
        if p != i:
            for j in range(m):
                t = b[i * m + j]
                b[i * m + j] = b[p * m + j]
                b[p * m + j] = t
    for i in range(n):
        for r in range(i):
            l = lu[i * n + r]
            if l != 0.0:
                for j in range(m):
                    b[i * m + j] -= l * b[r * m + j]
    for i in range(n - 1, -1, -1):
        for r in range(i + 1, n):
            l = lu[i * n + r]
            if l != 0.0:
                for j in range(m):
                    b[i * m + j] -= l * b[r * m + j]
        l = lu[i * n + i]
        for j in range(m):
            b[i * m + j] /= l


def lu(Array a, Array piv, Array info):
    """In place per matrix of a (B, n, n): P A = L U (unit L below, U on and above the
    diagonal); piv (B, n) int64 the row swapped with row k at step k; info (B,) int64."""
    _check(a, 3, FLOAT64, "a")
    _check(piv, 2, INT64, "piv")
    _check(info, 1, INT64, "info")
    cdef Py_ssize_t B = a.shape_[0], n = a.shape_[1], b
    if a.shape_[2] != n or piv.shape_[0] != B or piv.shape_[1] != n or info.shape_[0] != B:
        raise ValueError("carray.cpu._linalg.lu: shapes do not match")
    cdef double* pa = <double*>a.data
    cdef i64* pp = <i64*>piv.data
    cdef i64* pi = <i64*>info.data
    cdef int nt = _threads(B, n * n * n)
    if n >= BLOCKED_MIN:
        with nogil:
            for b in range(B):
                pi[b] = _lu_blocked(pa + b * n * n, pp + b * n, n)
        return
    start = region_enter(nt)
    with nogil, parallel(num_threads=nt):
        thread_seen(threadid())
        for b in prange(B, schedule="static"):
            pi[b] = _lu(pa + b * n * n, pp + b * n, n)
    region_exit(start, nt)


cdef int _lu_solve_blocked(const double* lu, const i64* piv, double* b, Py_ssize_t n,
                           Py_ssize_t m) except -1 nogil:
    # _lu_solve by blocks of NB rows: the rows above (below) a block are subtracted by one GEMM,
    # then the block is solved by substitution
    cdef Py_ssize_t i, j, r, p, i0, ib
    cdef double l, t
    for i in range(n):
        p = piv[i]
        if p != i:
            for j in range(m):
                t = b[i * m + j]
                b[i * m + j] = b[p * m + j]
                b[p * m + j] = t
    i0 = 0
    while i0 < n:                           # L y = b, unit lower L
        ib = min(<Py_ssize_t>NB, n - i0)
        if i0 > 0:
            gemm(FLOAT64, False, False, ib, m, i0, -1.0, <const char*>(lu + i0 * n), n,
                 <const char*>b, m, 1.0, <char*>(b + i0 * m), m)
        for i in range(i0, i0 + ib):
            for r in range(i0, i):
                l = lu[i * n + r]
                if l != 0.0:
                    for j in range(m):
                        b[i * m + j] -= l * b[r * m + j]
        i0 += ib
    i0 = ((n - 1) // NB) * NB if n > 0 else 0
    while n > 0 and i0 >= 0:                # U x = y, from the last block up
        ib = min(<Py_ssize_t>NB, n - i0)
        if i0 + ib < n:
            gemm(FLOAT64, False, False, ib, m, n - i0 - ib, -1.0,
                 <const char*>(lu + i0 * n + i0 + ib), n, <const char*>(b + (i0 + ib) * m), m,
                 1.0, <char*>(b + i0 * m), m)
        for i in range(i0 + ib - 1, i0 - 1, -1):
            for r in range(i + 1, i0 + ib):
                l = lu[i * n + r]
                if l != 0.0:
                    for j in range(m):
                        b[i * m + j] -= l * b[r * m + j]
            l = lu[i * n + i]
            for j in range(m):
                b[i * m + j] /= l
        i0 -= NB
    return 0


def lu_solve(Array lu, Array piv, Array rhs):
    """In place per matrix of rhs (B, n, m): solves P L U x = rhs with lu and piv from lu()."""
    _check(lu, 3, FLOAT64, "lu")
    _check(piv, 2, INT64, "piv")
    _check(rhs, 3, FLOAT64, "rhs")
    cdef Py_ssize_t B = lu.shape_[0], n = lu.shape_[1], m = rhs.shape_[2], b
    if lu.shape_[2] != n or rhs.shape_[0] != B or rhs.shape_[1] != n or piv.shape_[0] != B \
            or piv.shape_[1] != n:
        raise ValueError("carray.cpu._linalg.lu_solve: shapes do not match")
    cdef double* pa = <double*>lu.data
    cdef double* pb = <double*>rhs.data
    cdef i64* pp = <i64*>piv.data
    cdef int nt = _threads(B, n * n * (m + 1))
    if n >= BLOCKED_MIN and m >= 16:
        with nogil:
            for b in range(B):
                _lu_solve_blocked(pa + b * n * n, pp + b * n, pb + b * n * m, n, m)
        return
    start = region_enter(nt)
    with nogil, parallel(num_threads=nt):
        thread_seen(threadid())
        for b in prange(B, schedule="static"):
            _lu_solve(pa + b * n * n, pp + b * n, pb + b * n * m, n, m)
    region_exit(start, nt)


def slogdet(Array a, Array sign, Array logabs, Array det):
    """Per matrix of a (B, n, n), factorised in place: sign, log|det| and det (the product of
    U's diagonal, so it over/underflows as NumPy's does); sign 0, log -inf, det 0 if singular."""
    _check(a, 3, FLOAT64, "a")
    for arr, name in ((sign, "sign"), (logabs, "logabs"), (det, "det")):
        _check(arr, 1, FLOAT64, name)
    cdef Py_ssize_t B = a.shape_[0], n = a.shape_[1], b, k
    if a.shape_[2] != n or sign.shape_[0] != B or logabs.shape_[0] != B or det.shape_[0] != B:
        raise ValueError("carray.cpu._linalg.slogdet: shapes do not match")
    cdef double* pa = <double*>a.data
    cdef double* ps = <double*>sign.data
    cdef double* pl = <double*>logabs.data
    cdef double* pd = <double*>det.data
    cdef Py_ssize_t shape[2]
    shape[0] = B
    shape[1] = n
    cdef Array piv = new_array(2, shape, INT64)
    cdef Array info = new_array(1, shape, INT64)
    lu(a, piv, info)
    cdef i64* pp = <i64*>piv.data
    cdef i64* pi = <i64*>info.data
    cdef double s, lg, d, u
    with nogil:
        for b in range(B):
            s = 1.0
            lg = 0.0
            d = 1.0
            for k in range(n):
                u = pa[b * n * n + k * n + k]
                if pp[b * n + k] != k:
                    s = -s
                    d = -d
                if u < 0:
                    s = -s
                lg = lg + log(fabs(u))
                d = d * u
            if pi[b] != 0:
                s = 0.0
                lg = -INFINITY
                d = 0.0
            ps[b] = s
            pl[b] = lg
            pd[b] = d


# ---------------------------------------------------------------- Cholesky

cdef i64 _cholesky_ld(double* a, Py_ssize_t n, Py_ssize_t ld) noexcept nogil:
    # the lower factor of the n x n block at a (row step ld), in place (its upper part left)
    cdef Py_ssize_t i, j, k
    cdef double s, d
    for j in range(n):
        s = a[j * ld + j]
        for k in range(j):
            s -= a[j * ld + k] * a[j * ld + k]
        if not (s > 0.0):
            return j + 1
        d = sqrt(s)
        a[j * ld + j] = d
        for i in range(j + 1, n):
            s = a[i * ld + j]
            for k in range(j):
                s -= a[i * ld + k] * a[j * ld + k]
            a[i * ld + j] = s / d
    return 0


cdef void _zero_upper(double* a, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n - 1):
        memset(a + i * n + i + 1, 0, (n - 1 - i) * sizeof(double))


cdef i64 _cholesky(double* a, Py_ssize_t n) noexcept nogil:
    cdef i64 info = _cholesky_ld(a, n, n)
    if info == 0:
        _zero_upper(a, n)
    return info


cdef i64 _cholesky_blocked(double* a, Py_ssize_t n) except -2 nogil:
    # right-looking: L11 = chol(A11), L21 = A21 L11^-T (row by row), A22 -= L21 L21^T by GEMM
    cdef Py_ssize_t k0, kb, i, j, r, rest
    cdef double s
    cdef i64 info
    k0 = 0
    while k0 < n:
        kb = min(<Py_ssize_t>NB, n - k0)
        info = _cholesky_ld(a + k0 * n + k0, kb, n)
        if info != 0:
            return k0 + info
        rest = n - k0 - kb
        if rest == 0:
            break
        for i in range(k0 + kb, n):
            for j in range(kb):
                s = a[i * n + k0 + j]
                for r in range(j):
                    s -= a[i * n + k0 + r] * a[(k0 + j) * n + k0 + r]
                a[i * n + k0 + j] = s / a[(k0 + j) * n + k0 + j]
        gemm(FLOAT64, False, True, rest, rest, kb, -1.0,
             <const char*>(a + (k0 + kb) * n + k0), n, <const char*>(a + (k0 + kb) * n + k0), n,
             1.0, <char*>(a + (k0 + kb) * n + k0 + kb), n)
        k0 += kb
    _zero_upper(a, n)
    return 0


def cholesky(Array a, Array info):
    """In place per matrix of a (B, n, n): the lower Cholesky factor L of the lower triangle;
    info k + 1 where the k-th pivot is not positive (not positive definite)."""
    _check(a, 3, FLOAT64, "a")
    _check(info, 1, INT64, "info")
    cdef Py_ssize_t B = a.shape_[0], n = a.shape_[1], b
    if a.shape_[2] != n or info.shape_[0] != B:
        raise ValueError("carray.cpu._linalg.cholesky: shapes do not match")
    cdef double* pa = <double*>a.data
    cdef i64* pi = <i64*>info.data
    cdef int nt = _threads(B, n * n * n)
    if n >= BLOCKED_MIN:
        with nogil:
            for b in range(B):
                pi[b] = _cholesky_blocked(pa + b * n * n, n)
        return
    start = region_enter(nt)
    with nogil, parallel(num_threads=nt):
        thread_seen(threadid())
        for b in prange(B, schedule="static"):
            pi[b] = _cholesky(pa + b * n * n, n)
    region_exit(start, nt)


# ---------------------------------------------------------------- Householder QR

cdef int _qr_ld(double* a, double* tau, Py_ssize_t m, Py_ssize_t n, Py_ssize_t ld,
                double* w) noexcept nogil:
    # the m x n block at a (row step ld); w: scratch of n doubles
    cdef Py_ssize_t i, j, c, k = min(m, n)
    cdef double alpha, xnorm, beta, t, scale, v
    for j in range(k):
        alpha = a[j * ld + j]
        xnorm = 0.0
        for i in range(j + 1, m):
            xnorm = hypot(xnorm, a[i * ld + j])
        if xnorm == 0.0:
            tau[j] = 0.0
            continue
        beta = -copysign(hypot(alpha, xnorm), alpha)
        t = (beta - alpha) / beta
        tau[j] = t
        scale = 1.0 / (alpha - beta)
        for i in range(j + 1, m):
            a[i * ld + j] *= scale
        a[j * ld + j] = beta
        # a[j:, j+1:] -= t v (v^T a[j:, j+1:]) with v = (1, a[j+1:, j])
        for c in range(j + 1, n):
            w[c] = a[j * ld + c]
        for i in range(j + 1, m):
            v = a[i * ld + j]
            for c in range(j + 1, n):
                w[c] += v * a[i * ld + c]
        for c in range(j + 1, n):
            a[j * ld + c] -= t * w[c]
        for i in range(j + 1, m):
            v = t * a[i * ld + j]
            for c in range(j + 1, n):
                a[i * ld + c] -= v * w[c]
    return 0


cdef int _qr(double* a, double* tau, Py_ssize_t m, Py_ssize_t n, double* w) noexcept nogil:
    return _qr_ld(a, tau, m, n, n, w)


cdef void _block_reflector(const double* a, const double* tau, Py_ssize_t m, Py_ssize_t jb,
                           Py_ssize_t ld, double* v, double* t) noexcept nogil:
    # H_0 ... H_{jb-1} = I - V T V^T for the jb reflectors stored below the diagonal of the
    # m x jb block at a: v (m, jb) := V explicitly (unit diagonal, zeros above), t (jb, jb) the
    # upper triangular T (LAPACK's dlarft, forward, columnwise)
    cdef Py_ssize_t i, j, r, c
    cdef double z
    for i in range(m):
        for j in range(jb):
            v[i * jb + j] = (a[i * ld + j] if i > j else (1.0 if i == j else 0.0))
    memset(t, 0, jb * jb * sizeof(double))
    for j in range(jb):
        t[j * jb + j] = tau[j]
        if tau[j] == 0.0:
            continue
        for r in range(j):                  # t[r, j] = -tau_j (V[:, r] . V[:, j])
            z = 0.0
            for i in range(j, m):
                z += v[i * jb + r] * v[i * jb + j]
            t[r * jb + j] = -tau[j] * z
        for r in range(j):                  # t[:j, j] = T[:j, :j] t[:j, j] (upper: top down)
            z = 0.0
            for c in range(r, j):
                z += t[r * jb + c] * t[c * jb + j]
            t[r * jb + j] = z


cdef void _tri_times(const double* t, double* w, Py_ssize_t jb, Py_ssize_t cols,
                     bint transpose) noexcept nogil:
    # w (jb, cols) := T^T w (transpose) or T w, T (jb, jb) upper triangular, in place
    cdef Py_ssize_t i, r, c
    cdef double x
    if transpose:                           # row i of T^T w uses rows r <= i: bottom up
        for i in range(jb - 1, -1, -1):
            x = t[i * jb + i]
            for c in range(cols):
                w[i * cols + c] *= x
            for r in range(i):
                x = t[r * jb + i]
                if x != 0.0:
                    for c in range(cols):
                        w[i * cols + c] += x * w[r * cols + c]
    else:                                   # row i of T w uses rows r >= i: top down
        for i in range(jb):
            x = t[i * jb + i]
            for c in range(cols):
                w[i * cols + c] *= x
            for r in range(i + 1, jb):
                x = t[i * jb + r]
                if x != 0.0:
                    for c in range(cols):
                        w[i * cols + c] += x * w[r * cols + c]


cdef int _apply_block(const double* v, const double* t, double* c, Py_ssize_t m, Py_ssize_t jb,
                      Py_ssize_t cols, Py_ssize_t ldc, double* w, bint transpose) except -1 nogil:
    # c (m, cols; row step ldc) := (I - V T^T V^T) c (transpose) or (I - V T V^T) c, by GEMM
    gemm(FLOAT64, True, False, jb, cols, m, 1.0, <const char*>v, jb, <const char*>c, ldc, 0.0,
         <char*>w, cols)
    _tri_times(t, w, jb, cols, transpose)
    gemm(FLOAT64, False, False, m, cols, jb, -1.0, <const char*>v, jb, <const char*>w, cols, 1.0,
         <char*>c, ldc)
    return 0


cdef int _qr_blocked(double* a, double* tau, double* q, Py_ssize_t m, Py_ssize_t n,
                     Py_ssize_t mc) except -1 nogil:
    # blocked Householder QR: each panel of NB columns by _qr_ld, the trailing columns updated
    # with its block reflector (two GEMMs); q (m, mc) formed by the block reflectors backwards
    cdef Py_ssize_t k = min(m, n), j0, jb, i
    cdef Py_ssize_t wcols = max(n, mc) + 1
    cdef double* v = <double*>malloc((m * NB + NB * NB + NB * wcols + n + 8) * sizeof(double))
    if v == NULL:
        with gil:
            raise MemoryError()
    cdef double* t = v + m * NB
    cdef double* w = t + NB * NB
    cdef double* w1 = w + NB * wcols
    try:
        j0 = 0
        while j0 < k:
            jb = min(<Py_ssize_t>NB, k - j0)
            _qr_ld(a + j0 * n + j0, tau + j0, m - j0, jb, n, w1)
            if j0 + jb < n:
                _block_reflector(a + j0 * n + j0, tau + j0, m - j0, jb, n, v, t)
                _apply_block(v, t, a + j0 * n + j0 + jb, m - j0, jb, n - j0 - jb, n, w, True)
            j0 += jb
        if mc > 0:
            memset(q, 0, m * mc * sizeof(double))
            for i in range(min(m, mc)):
                q[i * mc + i] = 1.0
            j0 = ((k - 1) // NB) * NB if k > 0 else 0
            while k > 0 and j0 >= 0:
                jb = min(<Py_ssize_t>NB, k - j0)
                if mc > j0:
                    _block_reflector(a + j0 * n + j0, tau + j0, m - j0, jb, n, v, t)
                    _apply_block(v, t, q + j0 * mc + j0, m - j0, jb, mc - j0, mc, w, False)
                j0 -= NB
    finally:
        free(v)
    return 0


cdef void _qr_q(const double* a, const double* tau, double* q, Py_ssize_t m, Py_ssize_t n,
                Py_ssize_t mc, double* w) noexcept nogil:
    # q (m, mc) = H_0 ... H_{k-1} I[:, :mc], the reflectors below a's diagonal; w: mc doubles
    cdef Py_ssize_t i, j, c, k = min(m, n)
    cdef double t, v
    memset(q, 0, m * mc * sizeof(double))
    for i in range(min(m, mc)):
        q[i * mc + i] = 1.0
    for j in range(k - 1, -1, -1):
        t = tau[j]
        if t == 0.0:
            continue
        for c in range(mc):
            w[c] = q[j * mc + c]
        for i in range(j + 1, m):
            v = a[i * n + j]
            for c in range(mc):
                w[c] += v * q[i * mc + c]
        for c in range(mc):
            q[j * mc + c] -= t * w[c]
        for i in range(j + 1, m):
            v = t * a[i * n + j]
            for c in range(mc):
                q[i * mc + c] -= v * w[c]


def qr(Array a, Array q):
    """Per matrix of a (B, m, n), in place: R in a's upper triangle (zeros below), and
    q (B, m, mc) the first mc columns of Q (mc = min(m, n) reduced, m complete; mc 0: none)."""
    _check(a, 3, FLOAT64, "a")
    _check(q, 3, FLOAT64, "q")
    cdef Py_ssize_t B = a.shape_[0], m = a.shape_[1], n = a.shape_[2], mc = q.shape_[2], b
    cdef Py_ssize_t k = min(m, n), i, j
    if q.shape_[0] != B or (q.shape_[1] != m and mc != 0):
        raise ValueError("carray.cpu._linalg.qr: shapes do not match")
    cdef double* pa = <double*>a.data
    cdef double* pq = <double*>q.data
    cdef Py_ssize_t scratch = k + n + mc + 1
    cdef double* buf = <double*>malloc(B * scratch * sizeof(double) + 8)
    if buf == NULL:
        raise MemoryError()
    cdef double* mine
    cdef int nt = _threads(B, m * n * n)
    try:
        if k >= BLOCKED_MIN:
            with nogil:
                for b in range(B):
                    _qr_blocked(pa + b * m * n, buf + b * scratch, pq + b * m * mc, m, n, mc)
        else:
            start = region_enter(nt)
            with nogil, parallel(num_threads=nt):
                thread_seen(threadid())
                for b in prange(B, schedule="static"):
                    mine = buf + b * scratch
                    _qr(pa + b * m * n, mine, m, n, mine + k)
                    if mc > 0:
                        _qr_q(pa + b * m * n, mine, pq + b * m * mc, m, n, mc, mine + k + n)
            region_exit(start, nt)
        start = region_enter(nt)
        with nogil, parallel(num_threads=nt):
            thread_seen(threadid())
            for b in prange(B, schedule="static"):
                for i in range(1, m):
                    for j in range(min(i, n)):
                        pa[b * m * n + i * n + j] = 0.0
        region_exit(start, nt)
    finally:
        free(buf)


# ---------------------------------------------------------------- symmetric Jacobi

cdef void _order(double* d, Py_ssize_t* idx, Py_ssize_t n, bint descending) noexcept nogil:
    # idx := the permutation that sorts d (insertion sort: n is a matrix side)
    cdef Py_ssize_t i, j, t
    for i in range(n):
        idx[i] = i
    for i in range(1, n):
        t = idx[i]
        j = i
        while j > 0 and ((d[idx[j - 1]] < d[t]) if descending else (d[idx[j - 1]] > d[t])):
            idx[j] = idx[j - 1]
            j -= 1
        idx[j] = t


cdef i64 _eigh(double* a, double* w, double* v, Py_ssize_t n, double* tmp,
               Py_ssize_t* idx) noexcept nogil:
    # a symmetric (its lower triangle read), destroyed; w (n) ascending, v (n, n) columns
    cdef Py_ssize_t i, j, p, q, sweep
    cdef double norm2 = 0.0, apq, theta, t, c, s, x, y
    cdef i64 info = -1
    cdef bint rotated
    for i in range(n):
        for j in range(i):
            a[j * n + i] = a[i * n + j]
    for i in range(n * n):
        norm2 += a[i] * a[i]
        v[i] = 0.0
    for i in range(n):
        v[i * n + i] = 1.0
    if not isfinite(norm2):
        for i in range(n):
            w[i] = norm2 - norm2            # NaN
        return -1
    for sweep in range(MAX_SWEEPS):
        rotated = False
        for p in range(n):
            for q in range(p + 1, n):
                apq = a[p * n + q]
                if apq == 0.0:
                    continue
                if fabs(apq) <= EPS * sqrt(fabs(a[p * n + p])) * sqrt(fabs(a[q * n + q])):
                    a[p * n + q] = 0.0      # negligible: eigenvalues change by < eps |a_pp|
                    a[q * n + p] = 0.0
                    continue
                rotated = True
                theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq)
                t = copysign(1.0, theta) / (fabs(theta) + hypot(theta, 1.0))
                c = 1.0 / hypot(t, 1.0)
                s = t * c
                for i in range(n):          # columns p, q
                    x = a[i * n + p]
                    y = a[i * n + q]
                    a[i * n + p] = c * x - s * y
                    a[i * n + q] = s * x + c * y
                for i in range(n):          # rows p, q
                    x = a[p * n + i]
                    y = a[q * n + i]
                    a[p * n + i] = c * x - s * y
                    a[q * n + i] = s * x + c * y
                a[p * n + q] = 0.0
                a[q * n + p] = 0.0
                for i in range(n):
                    x = v[i * n + p]
                    y = v[i * n + q]
                    v[i * n + p] = c * x - s * y
                    v[i * n + q] = s * x + c * y
        if not rotated:
            info = 0
            break
    for i in range(n):
        tmp[i] = a[i * n + i]
    _order(tmp, idx, n, False)
    for i in range(n):
        w[i] = tmp[idx[i]]
    for i in range(n):                      # permute v's columns, row by row
        for j in range(n):
            tmp[j] = v[i * n + idx[j]]
        memcpy(v + i * n, tmp, n * sizeof(double))
    return info


cdef void _tridiagonalize(double* a, double* d, double* e, Py_ssize_t n) noexcept nogil:
    # Householder reduction of the symmetric a (its lower triangle read) to tridiagonal form
    # Q^T a Q = T (diagonal d, subdiagonal e[1:], e[0] = 0), a := Q (EISPACK's tred2)
    cdef Py_ssize_t i, j, k, l
    cdef double scale, h, f, g, hh
    for i in range(n - 1, 0, -1):
        l = i - 1
        h = 0.0
        scale = 0.0
        if l > 0:
            for k in range(l + 1):
                scale += fabs(a[i * n + k])
            if scale == 0.0:
                e[i] = a[i * n + l]
            else:
                for k in range(l + 1):
                    a[i * n + k] /= scale
                    h += a[i * n + k] * a[i * n + k]
                f = a[i * n + l]
                g = -sqrt(h) if f >= 0.0 else sqrt(h)
                e[i] = scale * g
                h -= f * g
                a[i * n + l] = f - g
                f = 0.0
                for j in range(l + 1):
                    a[j * n + i] = a[i * n + j] / h        # u / H, kept for Q
                    g = 0.0
                    for k in range(j + 1):
                        g += a[j * n + k] * a[i * n + k]
                    for k in range(j + 1, l + 1):
                        g += a[k * n + j] * a[i * n + k]
                    e[j] = g / h
                    f += e[j] * a[i * n + j]
                hh = f / (h + h)
                for j in range(l + 1):
                    f = a[i * n + j]
                    g = e[j] - hh * f
                    e[j] = g
                    for k in range(j + 1):
                        a[j * n + k] -= f * e[k] + g * a[i * n + k]
        else:
            e[i] = a[i * n + l]
        d[i] = h
    d[0] = 0.0
    e[0] = 0.0
    for i in range(n):                      # accumulate Q
        if d[i] != 0.0:
            for j in range(i):
                g = 0.0
                for k in range(i):
                    g += a[i * n + k] * a[k * n + j]
                for k in range(i):
                    a[k * n + j] -= g * a[k * n + i]
        d[i] = a[i * n + i]
        a[i * n + i] = 1.0
        for j in range(i):
            a[j * n + i] = 0.0
            a[i * n + j] = 0.0


cdef i64 _tridiagonal_ql(double* d, double* e, double* zt, Py_ssize_t n) noexcept nogil:
    # implicit QL with Wilkinson shifts on the tridiagonal (d, e) (EISPACK's tql2); the rotations
    # are applied to the rows of zt (the eigenvectors as rows). -1 if an eigenvalue needs more
    # than 60 iterations.
    cdef Py_ssize_t i, k, l, m
    cdef int it
    cdef double dd, g, r, s, c, p, f, bb
    cdef bint underflow
    for i in range(1, n):
        e[i - 1] = e[i]
    if n > 0:
        e[n - 1] = 0.0
    for l in range(n):
        it = 0
        while True:
            m = l
            while m < n - 1:
                dd = fabs(d[m]) + fabs(d[m + 1])
                if fabs(e[m]) <= EPS * dd:
                    break
                m += 1
            if m == l:
                break
            if it == 60:
                return -1
            it += 1
            g = (d[l + 1] - d[l]) / (2.0 * e[l])
            r = hypot(g, 1.0)
            g = d[m] - d[l] + e[l] / (g + copysign(r, g))
            s = 1.0
            c = 1.0
            p = 0.0
            underflow = False
            i = m - 1
            while i >= l:
                f = s * e[i]
                bb = c * e[i]
                r = hypot(f, g)
                e[i + 1] = r
                if r == 0.0:
                    d[i + 1] -= p
                    e[m] = 0.0
                    underflow = True
                    break
                s = f / r
                c = g / r
                g = d[i + 1] - p
                r = (d[i] - g) * s + 2.0 * c * bb
                p = s * r
                d[i + 1] = g + p
                g = c * r - bb
                for k in range(n):
                    f = zt[(i + 1) * n + k]
                    zt[(i + 1) * n + k] = s * zt[i * n + k] + c * f
                    zt[i * n + k] = c * zt[i * n + k] - s * f
                i -= 1
            if underflow:
                continue
            d[l] -= p
            e[l] = g
            e[m] = 0.0
    return 0


cdef i64 _eigh_tridiagonal(double* a, double* w, double* v, Py_ssize_t n, double* e,
                           double* zt, Py_ssize_t* idx) noexcept nogil:
    # a (lower triangle read) destroyed; w ascending, v eigenvectors as columns
    cdef Py_ssize_t i, j
    cdef double total = 0.0
    for i in range(n):
        for j in range(i + 1):
            total += fabs(a[i * n + j])
    if not isfinite(total):
        return -1
    _tridiagonalize(a, w, e, n)
    for i in range(n):
        for j in range(n):
            zt[j * n + i] = a[i * n + j]
    if _tridiagonal_ql(w, e, zt, n) != 0:
        return -1
    _order(w, idx, n, False)
    for i in range(n):
        e[i] = w[idx[i]]
    memcpy(w, e, n * sizeof(double))
    for i in range(n):
        for j in range(n):
            v[i * n + j] = zt[idx[j] * n + i]
    return 0


def eigh(Array a, Array w, Array v, Array info):
    """Per matrix of a (B, n, n) (destroyed; its lower triangle read): eigenvalues w (B, n)
    ascending and eigenvectors v (B, n, n) as columns; info -1 where the iteration did not
    converge or the input is not finite."""
    _check(a, 3, FLOAT64, "a")
    _check(w, 2, FLOAT64, "w")
    _check(v, 3, FLOAT64, "v")
    _check(info, 1, INT64, "info")
    cdef Py_ssize_t B = a.shape_[0], n = a.shape_[1], b
    if a.shape_[2] != n or w.shape_[0] != B or w.shape_[1] != n or v.shape_[0] != B \
            or v.shape_[1] != n or v.shape_[2] != n or info.shape_[0] != B:
        raise ValueError("carray.cpu._linalg.eigh: shapes do not match")
    cdef double* pa = <double*>a.data
    cdef double* pw = <double*>w.data
    cdef double* pv = <double*>v.data
    cdef i64* pi = <i64*>info.data
    cdef bint ql = n >= JACOBI_MAX
    cdef Py_ssize_t per = n + (n * n if ql else 0)
    cdef double* tmp = <double*>malloc(B * per * sizeof(double) + 8)
    cdef Py_ssize_t* idx = <Py_ssize_t*>malloc(B * n * sizeof(Py_ssize_t) + 8)
    if tmp == NULL or idx == NULL:
        free(tmp)
        free(idx)
        raise MemoryError()
    cdef int nt = _threads(B, 10 * n * n * n)
    try:
        start = region_enter(nt)
        with nogil, parallel(num_threads=nt):
            thread_seen(threadid())
            for b in prange(B, schedule="dynamic"):
                if ql:
                    pi[b] = _eigh_tridiagonal(pa + b * n * n, pw + b * n, pv + b * n * n, n,
                                              tmp + b * per, tmp + b * per + n, idx + b * n)
                else:
                    pi[b] = _eigh(pa + b * n * n, pw + b * n, pv + b * n * n, n, tmp + b * per,
                                  idx + b * n)
        region_exit(start, nt)
    finally:
        free(tmp)
        free(idx)


# ---------------------------------------------------------------- one-sided Jacobi SVD

cdef double _dot(const double* x, const double* y, Py_ssize_t n) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t i
    for i in range(n):
        s += x[i] * y[i]
    return s


cdef i64 _svd(double* wr, Py_ssize_t k, Py_ssize_t L, double* s, double* gt, double* qo,
              Py_ssize_t rows, double* scratch, Py_ssize_t* idx) noexcept nogil:
    # wr (k, L), k <= L, destroyed: rotated until its rows are orthogonal, wr = gt^T diag(s) qo
    # with gt (k, k) orthogonal and qo (rows, L) orthonormal rows (rows k or L), s descending.
    # scratch: at least L * (L + 2) + k doubles
    cdef Py_ssize_t i, j, p, q, sweep, r
    cdef double alpha, beta, gamma, zeta, t, c, sn, x, y, big, total = 0.0
    cdef i64 info = -1
    cdef bint rotated
    cdef double tol = EPS * sqrt(<double>L)      # as LAPACK's dgesvj
    for i in range(k * L):
        total += wr[i] * wr[i]
    memset(gt, 0, k * k * sizeof(double))
    for i in range(k):
        gt[i * k + i] = 1.0
    if not isfinite(total):
        return -1
    # rows whose squared norm underflows (about 1e-290 of the whole matrix's, which the caller
    # scaled to a largest entry of 1) are left as they are: tol * |p| |q| underflows for them,
    # and rows of subnormal numbers would rotate for ever; their singular values are 0 anyway
    cdef double floor = total * 1e-290
    cdef double* nrm = scratch          # the squared row norms, updated per rotation
    for sweep in range(MAX_SWEEPS):
        rotated = False
        for i in range(k):
            nrm[i] = _dot(wr + i * L, wr + i * L, L)
        for p in range(k):
            for q in range(p + 1, k):
                alpha = nrm[p]
                beta = nrm[q]
                if alpha <= floor or beta <= floor:
                    continue
                gamma = _dot(wr + p * L, wr + q * L, L)
                if gamma == 0.0 or fabs(gamma) <= tol * sqrt(alpha) * sqrt(beta):
                    continue
                rotated = True
                zeta = (beta - alpha) / (2.0 * gamma)
                t = copysign(1.0, zeta) / (fabs(zeta) + hypot(zeta, 1.0))
                c = 1.0 / hypot(t, 1.0)
                sn = t * c
                x = c * c * alpha - 2.0 * c * sn * gamma + sn * sn * beta
                y = sn * sn * alpha + 2.0 * c * sn * gamma + c * c * beta
                for i in range(L):
                    alpha = wr[p * L + i]
                    beta = wr[q * L + i]
                    wr[p * L + i] = c * alpha - sn * beta
                    wr[q * L + i] = sn * alpha + c * beta
                for i in range(k):
                    alpha = gt[p * k + i]
                    beta = gt[q * k + i]
                    gt[p * k + i] = c * alpha - sn * beta
                    gt[q * k + i] = sn * alpha + c * beta
                # the updated norms, unless cancellation makes them inexact: then recomputed
                big = max(nrm[p], nrm[q]) * 1e-3
                nrm[p] = x if x > big else _dot(wr + p * L, wr + p * L, L)
                nrm[q] = y if y > big else _dot(wr + q * L, wr + q * L, L)
        if not rotated:
            info = 0
            break
    # sort by norm, descending; gt's rows and the unit rows follow
    cdef double* norms = scratch
    for i in range(k):
        norms[i] = sqrt(_dot(wr + i * L, wr + i * L, L))
    _order(norms, idx, k, True)
    cdef double* tmp = scratch + k
    for i in range(k):
        s[i] = norms[idx[i]]
    for j in range(k):                      # gt rows permuted, through tmp
        memcpy(tmp + j * k, gt + idx[j] * k, k * sizeof(double))
    memcpy(gt, tmp, k * k * sizeof(double))
    r = 0
    for j in range(k):
        if s[j] > 0.0 and isfinite(1.0 / s[j]):
            for i in range(L):
                qo[j * L + i] = wr[idx[j] * L + i] / s[j]
            r = j + 1
        else:
            break
    if r < rows:
        _complete(qo, r, rows, L, scratch + k)
    return info


cdef void _complete(double* qo, Py_ssize_t r, Py_ssize_t rows, Py_ssize_t L,
                    double* scratch) noexcept nogil:
    # rows r.. of qo (rows, L) := an orthonormal basis of the complement of rows 0..r-1: the
    # columns r.. of the complete Q of the Householder QR of qo[:r]^T (L, r).
    cdef double* m = scratch                 # (L, r)
    cdef double* tau = m + L * r             # r
    cdef double* work = tau + r + 1          # L
    cdef double* q = work + L + 1            # (L, L)
    cdef Py_ssize_t i, j
    for i in range(L):
        for j in range(r):
            m[i * r + j] = qo[j * L + i]
    _qr(m, tau, L, r, work)
    _qr_q(m, tau, q, L, r, L, work)
    for j in range(r, rows):
        for i in range(L):
            qo[j * L + i] = q[i * L + j]


def svd(Array w, Array s, Array gt, Array qo, Array info):
    """Per matrix of w (B, k, L), k <= L, destroyed: w = gt^T diag(s) qo with s (B, k)
    descending, gt (B, k, k) orthogonal and qo (B, rows, L) orthonormal rows, rows k or L
    (completed by Householder QR where s is zero); info -1 where Jacobi did not converge or
    the input is not finite."""
    _check(w, 3, FLOAT64, "w")
    _check(s, 2, FLOAT64, "s")
    _check(gt, 3, FLOAT64, "gt")
    _check(qo, 3, FLOAT64, "qo")
    _check(info, 1, INT64, "info")
    cdef Py_ssize_t B = w.shape_[0], k = w.shape_[1], L = w.shape_[2], rows = qo.shape_[1], b
    if k > L or s.shape_[0] != B or s.shape_[1] != k or gt.shape_[0] != B or gt.shape_[1] != k \
            or gt.shape_[2] != k or qo.shape_[0] != B or qo.shape_[2] != L \
            or rows not in (k, L) or info.shape_[0] != B:
        raise ValueError("carray.cpu._linalg.svd: shapes do not match")
    cdef double* pw = <double*>w.data
    cdef double* ps = <double*>s.data
    cdef double* pg = <double*>gt.data
    cdef double* pq = <double*>qo.data
    cdef i64* pi = <i64*>info.data
    cdef Py_ssize_t scratch = 2 * k + k * k + L * (L + k + 3) + 8
    cdef double* buf = <double*>malloc(B * scratch * sizeof(double) + 8)
    cdef Py_ssize_t* idx = <Py_ssize_t*>malloc(B * k * sizeof(Py_ssize_t) + 8)
    if buf == NULL or idx == NULL:
        free(buf)
        free(idx)
        raise MemoryError()
    cdef int nt = _threads(B, 10 * k * k * L)
    try:
        start = region_enter(nt)
        with nogil, parallel(num_threads=nt):
            thread_seen(threadid())
            for b in prange(B, schedule="dynamic"):
                pi[b] = _svd(pw + b * k * L, k, L, ps + b * k, pg + b * k * k, pq + b * rows * L,
                             rows, buf + b * scratch, idx + b * k)
        region_exit(start, nt)
    finally:
        free(buf)
        free(idx)
