"""The complex Hermitian eigen- and singular value decompositions behind carray.linalg, as C
loops over complex128 host arrays (the companions of carray.cpu._linalg's real eigh and svd).

carray/ops/_linalg_complex.py promotes (complex64 is factorised in complex128 and rounded back),
scales and hands these entry points C-contiguous complex128 arrays (interleaved re, im doubles,
as NumPy's) with the batch flattened into axis 0; each re-checks the shapes it indexes with,
then runs the batch in parallel with the GIL released. Per matrix (row-major):
  eigh   cyclic Jacobi on the Hermitian a (n, n) built from one triangle (the diagonal's
         imaginary part ignored, as LAPACK's zheev): for h_pq = |h_pq| e^(i phi), a phase
         e^(-i phi) on column q (and its conjugate on row q) makes h_pq real, then the real
         rotation of carray.cpu._linalg's eigh zeroes it; eigenvalues ascending (real),
         eigenvectors as unitary columns
  svd    one-sided (Hestenes) Jacobi on the rows of W (k, L), k <= L: for
         gamma = w_p^H w_q, the row pair (w_p, w_q) becomes (c w_p - s u w_q, s w_p + c u w_q)
         with u = conj(gamma) / |gamma| and c, s the real rotation of |gamma|; W = gt^H diag(s)
         qo, s descending, the missing rows of qo (zero s, full_matrices) completed by
         Gram-Schmidt on the unit vectors that lie furthest from the rows already there
`info` is per matrix: 0, or -1 for an iteration that did not converge (or a non-finite input).
"""

from cython.parallel cimport parallel, prange, threadid
from libc.math cimport copysign, fabs, hypot, isfinite, sqrt
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from carray.core._array cimport Array
from carray.core._dtype cimport COMPLEX128, FLOAT64, INT64
from carray.core._strided cimport max_threads, region_enter, region_exit, thread_seen

ctypedef long long i64

cdef double EPS = 2.220446049250313e-16
cdef int MAX_SWEEPS = 80


cdef int _check(Array a, int ndim, int dtype_num, str what) except -1:
    if a.ndim != ndim or a.dtype_num != dtype_num or not a.c_contiguous() or a.data == NULL:
        raise ValueError(f"carray.cpu._linalg_complex: {what} must be a C-contiguous host array "
                         f"of {ndim} dims and dtype number {dtype_num}")
    return 0


cdef int _threads(Py_ssize_t batch, Py_ssize_t work) noexcept nogil:
    # as carray.cpu._linalg's: small batches of small matrices stay on one thread
    return 1 if batch < 2 or batch * work < 32768 else max(1, min(max_threads(), batch))


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


cdef inline void _rot(double* x, double* y, double c, double s, double er,
                      double ei) noexcept nogil:
    # (x, y) := (c x - s e y, s x + c e y) for complex x, y (re, im pairs), e = er + i ei
    cdef double xr = x[0], xi = x[1]
    cdef double yr = y[0] * er - y[1] * ei, yi = y[0] * ei + y[1] * er
    x[0] = c * xr - s * yr
    x[1] = c * xi - s * yi
    y[0] = s * xr + c * yr
    y[1] = s * xi + c * yi


# ---------------------------------------------------------------- Hermitian Jacobi

cdef i64 _eigh(double* a, double* w, double* v, Py_ssize_t n, double* tmp, Py_ssize_t* idx,
               bint lower) noexcept nogil:
    # a (n, n) complex, destroyed; its lower (or upper) triangle read; w (n) ascending, v (n, n)
    # complex columns; tmp: 2 n doubles
    cdef Py_ssize_t i, j, p, q, sweep
    cdef double norm2 = 0.0, ar, ai, mag, er, ei, theta, t, c, s, app, aqq
    cdef i64 info = -1
    cdef bint rotated
    for i in range(n):
        for j in range(i):
            if lower:
                a[2 * (j * n + i)] = a[2 * (i * n + j)]
                a[2 * (j * n + i) + 1] = -a[2 * (i * n + j) + 1]
            else:
                a[2 * (i * n + j)] = a[2 * (j * n + i)]
                a[2 * (i * n + j) + 1] = -a[2 * (j * n + i) + 1]
        a[2 * (i * n + i) + 1] = 0.0
    for i in range(2 * n * n):
        norm2 += a[i] * a[i]
    memset(v, 0, 2 * n * n * sizeof(double))
    for i in range(n):
        v[2 * (i * n + i)] = 1.0
    if not isfinite(norm2):
        for i in range(n):
            w[i] = norm2 - norm2            # NaN
        return -1
    for sweep in range(MAX_SWEEPS):
        rotated = False
        for p in range(n):
            for q in range(p + 1, n):
                ar = a[2 * (p * n + q)]
                ai = a[2 * (p * n + q) + 1]
                if ar == 0.0 and ai == 0.0:
                    continue
                mag = hypot(ar, ai)
                app = a[2 * (p * n + p)]
                aqq = a[2 * (q * n + q)]
                if mag <= EPS * sqrt(fabs(app)) * sqrt(fabs(aqq)):
                    a[2 * (p * n + q)] = 0.0    # negligible: eigenvalues change by < eps |a_pp|
                    a[2 * (p * n + q) + 1] = 0.0
                    a[2 * (q * n + p)] = 0.0
                    a[2 * (q * n + p) + 1] = 0.0
                    continue
                rotated = True
                er = ar / mag                   # e = conj(a_pq) / |a_pq|
                ei = -ai / mag
                theta = (aqq - app) / (2.0 * mag)
                t = copysign(1.0, theta) / (fabs(theta) + hypot(theta, 1.0))
                c = 1.0 / hypot(t, 1.0)
                s = t * c
                for i in range(n):              # columns p, q: a J
                    _rot(a + 2 * (i * n + p), a + 2 * (i * n + q), c, s, er, ei)
                for i in range(n):              # rows p, q: J^H (a J)
                    _rot(a + 2 * (p * n + i), a + 2 * (q * n + i), c, s, er, -ei)
                a[2 * (p * n + q)] = 0.0
                a[2 * (p * n + q) + 1] = 0.0
                a[2 * (q * n + p)] = 0.0
                a[2 * (q * n + p) + 1] = 0.0
                a[2 * (p * n + p) + 1] = 0.0
                a[2 * (q * n + q) + 1] = 0.0
                for i in range(n):
                    _rot(v + 2 * (i * n + p), v + 2 * (i * n + q), c, s, er, ei)
        if not rotated:
            info = 0
            break
    for i in range(n):
        tmp[i] = a[2 * (i * n + i)]
    _order(tmp, idx, n, False)
    for i in range(n):
        w[i] = tmp[idx[i]]
    for i in range(n):                      # permute v's columns, row by row
        for j in range(n):
            tmp[2 * j] = v[2 * (i * n + idx[j])]
            tmp[2 * j + 1] = v[2 * (i * n + idx[j]) + 1]
        memcpy(v + 2 * i * n, tmp, 2 * n * sizeof(double))
    return info


def eigh(Array a, Array w, Array v, Array info, bint lower):
    """Per matrix of a (B, n, n) complex128 (destroyed; its lower triangle read, or with
    lower=False its upper one): eigenvalues w (B, n) float64 ascending and eigenvectors
    v (B, n, n) complex128 as columns; info -1 where the iteration did not converge or the input
    is not finite."""
    _check(a, 3, COMPLEX128, "a")
    _check(w, 2, FLOAT64, "w")
    _check(v, 3, COMPLEX128, "v")
    _check(info, 1, INT64, "info")
    cdef Py_ssize_t B = a.shape_[0], n = a.shape_[1], b
    if a.shape_[2] != n or w.shape_[0] != B or w.shape_[1] != n or v.shape_[0] != B \
            or v.shape_[1] != n or v.shape_[2] != n or info.shape_[0] != B:
        raise ValueError("carray.cpu._linalg_complex.eigh: shapes do not match")
    cdef double* pa = <double*>a.data
    cdef double* pw = <double*>w.data
    cdef double* pv = <double*>v.data
    cdef i64* pi = <i64*>info.data
    cdef double* tmp = <double*>malloc(B * 2 * n * sizeof(double) + 8)
    cdef Py_ssize_t* idx = <Py_ssize_t*>malloc(B * n * sizeof(Py_ssize_t) + 8)
    if tmp == NULL or idx == NULL:
        free(tmp)
        free(idx)
        raise MemoryError()
    cdef int nt = _threads(B, 40 * n * n * n)
    try:
        start = region_enter(nt)
        with nogil, parallel(num_threads=nt):
            thread_seen(threadid())
            for b in prange(B, schedule="dynamic"):
                pi[b] = _eigh(pa + 2 * b * n * n, pw + b * n, pv + 2 * b * n * n, n,
                              tmp + 2 * b * n, idx + b * n, lower)
        region_exit(start, nt)
    finally:
        free(tmp)
        free(idx)


# ---------------------------------------------------------------- one-sided Jacobi SVD

cdef double _norm2(const double* x, Py_ssize_t n) noexcept nogil:
    # |x|^2 of n complex numbers
    cdef double s = 0.0
    cdef Py_ssize_t i
    for i in range(2 * n):
        s += x[i] * x[i]
    return s


cdef void _cdot(const double* x, const double* y, Py_ssize_t n, double* out) noexcept nogil:
    # out := x^H y (re, im) of n complex numbers
    cdef double sr = 0.0, si = 0.0
    cdef Py_ssize_t i
    for i in range(n):
        sr += x[2 * i] * y[2 * i] + x[2 * i + 1] * y[2 * i + 1]
        si += x[2 * i] * y[2 * i + 1] - x[2 * i + 1] * y[2 * i]
    out[0] = sr
    out[1] = si


cdef i64 _svd(double* wr, Py_ssize_t k, Py_ssize_t L, double* s, double* gt, double* qo,
              Py_ssize_t rows, double* scratch, Py_ssize_t* idx) noexcept nogil:
    # wr (k, L) complex, k <= L, destroyed: rotated until its rows are orthogonal,
    # wr = gt^H diag(s) qo with gt (k, k) unitary and qo (rows, L) orthonormal rows (rows k or
    # L), s descending. scratch: at least k + 2 k k + 3 L doubles
    cdef Py_ssize_t i, j, p, q, sweep, r
    cdef double alpha, beta, g, zeta, t, c, sn, x, y, big, ur, ui, total = 0.0
    cdef double gamma[2]
    cdef i64 info = -1
    cdef bint rotated
    cdef double tol = EPS * sqrt(<double>L)      # as LAPACK's zgesvj
    total = _norm2(wr, k * L)
    memset(gt, 0, 2 * k * k * sizeof(double))
    for i in range(k):
        gt[2 * (i * k + i)] = 1.0
    if not isfinite(total):
        return -1
    # rows whose squared norm underflows are left as they are (see carray.cpu._linalg's svd)
    cdef double floor = total * 1e-290
    cdef double* nrm = scratch          # the squared row norms, updated per rotation
    for sweep in range(MAX_SWEEPS):
        rotated = False
        for i in range(k):
            nrm[i] = _norm2(wr + 2 * i * L, L)
        for p in range(k):
            for q in range(p + 1, k):
                alpha = nrm[p]
                beta = nrm[q]
                if alpha <= floor or beta <= floor:
                    continue
                _cdot(wr + 2 * p * L, wr + 2 * q * L, L, gamma)
                g = hypot(gamma[0], gamma[1])
                if g == 0.0 or g <= tol * sqrt(alpha) * sqrt(beta):
                    continue
                rotated = True
                zeta = (beta - alpha) / (2.0 * g)
                t = copysign(1.0, zeta) / (fabs(zeta) + hypot(zeta, 1.0))
                c = 1.0 / hypot(t, 1.0)
                sn = t * c
                x = c * c * alpha - 2.0 * c * sn * g + sn * sn * beta
                y = sn * sn * alpha + 2.0 * c * sn * g + c * c * beta
                ur = gamma[0] / g                # u = conj(gamma) / |gamma|
                ui = -gamma[1] / g
                for i in range(L):
                    _rot(wr + 2 * (p * L + i), wr + 2 * (q * L + i), c, sn, ur, ui)
                for i in range(k):
                    _rot(gt + 2 * (p * k + i), gt + 2 * (q * k + i), c, sn, ur, ui)
                # the updated norms, unless cancellation makes them inexact: then recomputed
                big = max(nrm[p], nrm[q]) * 1e-3
                nrm[p] = x if x > big else _norm2(wr + 2 * p * L, L)
                nrm[q] = y if y > big else _norm2(wr + 2 * q * L, L)
        if not rotated:
            info = 0
            break
    # sort by norm, descending; gt's rows and the unit rows follow
    cdef double* norms = scratch
    for i in range(k):
        norms[i] = sqrt(_norm2(wr + 2 * i * L, L))
    _order(norms, idx, k, True)
    cdef double* tmp = scratch + k
    for i in range(k):
        s[i] = norms[idx[i]]
    for j in range(k):                      # gt rows permuted, through tmp
        memcpy(tmp + 2 * j * k, gt + 2 * idx[j] * k, 2 * k * sizeof(double))
    memcpy(gt, tmp, 2 * k * k * sizeof(double))
    r = 0
    for j in range(k):
        if s[j] > 0.0 and isfinite(1.0 / s[j]):
            for i in range(2 * L):
                qo[2 * j * L + i] = wr[2 * idx[j] * L + i] / s[j]
            r = j + 1
        else:
            break
    if r < rows:
        _complete(qo, r, rows, L, scratch + k)
    return info


cdef void _complete(double* qo, Py_ssize_t r, Py_ssize_t rows, Py_ssize_t L,
                    double* scratch) noexcept nogil:
    # rows r.. of qo (rows, L) := an orthonormal basis of the complement of rows 0..r-1: each
    # new row is the unit vector e_i furthest from the rows so far (the largest
    # 1 - sum_l |qo[l, i]|^2, at least (L - j) / L), orthogonalised against them twice
    # (classical Gram-Schmidt, repeated) and normalised. scratch: 3 L doubles
    cdef double* res = scratch               # L
    cdef double* vec = scratch + L           # 2 L
    cdef double* row
    cdef double coef[2]
    cdef double best, nrm
    cdef Py_ssize_t i, j, l, bi, rep
    for j in range(r, rows):
        for i in range(L):
            res[i] = 1.0
        for l in range(j):
            row = qo + 2 * l * L
            for i in range(L):
                res[i] -= row[2 * i] * row[2 * i] + row[2 * i + 1] * row[2 * i + 1]
        bi = 0
        best = res[0]
        for i in range(1, L):
            if res[i] > best:
                best = res[i]
                bi = i
        memset(vec, 0, 2 * L * sizeof(double))
        vec[2 * bi] = 1.0
        for rep in range(2):
            for l in range(j):
                row = qo + 2 * l * L
                _cdot(row, vec, L, coef)
                for i in range(L):
                    vec[2 * i] -= coef[0] * row[2 * i] - coef[1] * row[2 * i + 1]
                    vec[2 * i + 1] -= coef[0] * row[2 * i + 1] + coef[1] * row[2 * i]
        nrm = sqrt(_norm2(vec, L))
        for i in range(2 * L):
            qo[2 * j * L + i] = vec[i] / nrm


def svd(Array w, Array s, Array gt, Array qo, Array info):
    """Per matrix of w (B, k, L) complex128, k <= L, destroyed: w = gt^H diag(s) qo with
    s (B, k) float64 descending, gt (B, k, k) unitary and qo (B, rows, L) orthonormal rows, rows
    k or L (completed by Gram-Schmidt where s is zero); info -1 where Jacobi did not converge or
    the input is not finite."""
    _check(w, 3, COMPLEX128, "w")
    _check(s, 2, FLOAT64, "s")
    _check(gt, 3, COMPLEX128, "gt")
    _check(qo, 3, COMPLEX128, "qo")
    _check(info, 1, INT64, "info")
    cdef Py_ssize_t B = w.shape_[0], k = w.shape_[1], L = w.shape_[2], rows = qo.shape_[1], b
    if k > L or s.shape_[0] != B or s.shape_[1] != k or gt.shape_[0] != B or gt.shape_[1] != k \
            or gt.shape_[2] != k or qo.shape_[0] != B or qo.shape_[2] != L \
            or rows not in (k, L) or info.shape_[0] != B:
        raise ValueError("carray.cpu._linalg_complex.svd: shapes do not match")
    cdef double* pw = <double*>w.data
    cdef double* ps = <double*>s.data
    cdef double* pg = <double*>gt.data
    cdef double* pq = <double*>qo.data
    cdef i64* pi = <i64*>info.data
    cdef Py_ssize_t scratch = k + 2 * k * k + 3 * L + 8
    cdef double* buf = <double*>malloc(B * scratch * sizeof(double) + 8)
    cdef Py_ssize_t* idx = <Py_ssize_t*>malloc(B * k * sizeof(Py_ssize_t) + 8)
    if buf == NULL or idx == NULL:
        free(buf)
        free(idx)
        raise MemoryError()
    cdef int nt = _threads(B, 40 * k * k * L)
    try:
        start = region_enter(nt)
        with nogil, parallel(num_threads=nt):
            thread_seen(threadid())
            for b in prange(B, schedule="dynamic"):
                pi[b] = _svd(pw + 2 * b * k * L, k, L, ps + b * k, pg + 2 * b * k * k,
                             pq + 2 * b * rows * L, rows, buf + b * scratch, idx + b * k)
        region_exit(start, nt)
    finally:
        free(buf)
        free(idx)
