"""The general (non-symmetric) eigenvalue problem behind carray.linalg.eig and eigvals, as C
loops over complex128 host arrays (LAPACK's zgeev; balancing scales, but does not permute).

carray/ops/_linalg_eig.py promotes (real and complex64 input is solved in complex128 and rounded
back), checks finiteness, scales each matrix by its largest |entry| and hands this entry point a
C-contiguous complex128 array with the batch flattened into axis 0; it re-checks the shapes it
indexes with, then runs the batch in parallel with the GIL released. Per matrix (row-major):
  0. balancing (zgebal's scaling loop): A := D^-1 A D, D diagonal powers of 2, so that each
     row and column have 2-norms within a factor 2 (badly scaled matrices keep their accuracy);
     the eigenvectors are D v, normalised after
  1. Householder reduction to upper Hessenberg form H = Q^H A Q (zgehrd's reflectors:
     H_k = I - tau v v^H, beta real), Q accumulated when eigenvectors are wanted
  2. complex single-shift QR on H (zlahqr): Wilkinson shifts (the eigenvalue of the trailing
     2 x 2 block nearer its last entry; an exceptional shift every 10 iterations without a
     deflation), a bulge chased by Givens rotations, subdiagonal entries below
     eps (|h_k-1,k-1| + |h_kk|) set to zero; with eigenvectors the rotations act on the whole
     Schur factor T and on Z = Q G_1^H G_2^H ...
  3. eigenvectors (ztrevc): x_k solves (T - t_kk I) x = 0 with x_k = 1 by back-substitution
     (a divisor below eps |t_kk| replaced by it, for repeated or defective eigenvalues; the
     partial solution rescaled when it grows past 1e100), v_k = D Z x_k, normalised as zgeev:
     unit 2-norm and the first largest |component| real and positive
  4. for real input (as dgeev's results): eigenvalues within 8 n eps |A| of the real axis made
     real, with real vectors; the others made exact conjugate pairs, with conjugate vectors
Eigenvalues come out in the order of T's diagonal (as LAPACK's). `info` is per matrix: 0, or -1
when the QR iteration did not converge in 30 max(10, n) iterations.
"""

from cython.parallel cimport parallel, prange, threadid
from libc.math cimport copysign, fabs, hypot, sqrt
from libc.stdlib cimport free, malloc

from carray.core._array cimport Array
from carray.core._dtype cimport COMPLEX128, INT64
from carray.core._strided cimport max_threads, region_enter, region_exit, thread_seen

ctypedef long long i64
ctypedef double complex z128

cdef double EPS = 2.220446049250313e-16
cdef double SMLNUM = 2.2250738585072014e-308 / 2.220446049250313e-16
cdef double BIG = 1e100


cdef int _check(Array a, int ndim, int dtype_num, str what) except -1:
    if a.ndim != ndim or a.dtype_num != dtype_num or not a.c_contiguous() or a.data == NULL:
        raise ValueError(f"carray.cpu._linalg_eig: {what} must be a C-contiguous host array "
                         f"of {ndim} dims and dtype number {dtype_num}")
    return 0


cdef inline double _abs1(z128 x) noexcept nogil:
    return fabs(x.real) + fabs(x.imag)


cdef inline double _mod(z128 x) noexcept nogil:
    return hypot(x.real, x.imag)


cdef inline double _sq(z128 x) noexcept nogil:
    return x.real * x.real + x.imag * x.imag


cdef inline z128 _conj(z128 x) noexcept nogil:
    return x.real - 1j * x.imag


cdef inline z128 _sqrt(z128 z) noexcept nogil:
    # the principal square root
    cdef double x = z.real, y = z.imag, r = hypot(x, y), t
    if r == 0.0:
        return 0.0
    if x >= 0.0:
        t = sqrt(0.5 * (r + x))
        return t + 1j * (y / (2.0 * t))
    t = sqrt(0.5 * (r - x))
    return fabs(y) / (2.0 * t) + 1j * copysign(t, y)


# ---------------------------------------------------------------- balancing

cdef void _balance(z128* a, double* d, Py_ssize_t n) noexcept nogil:
    # a := D^-1 a D with D = diag(d), powers of 2 (exact), chosen as zgebal's scaling loop (no
    # permutations): column and row i scaled until their 2-norms (off the diagonal) are within a
    # factor 2, while that shrinks c + r by 5 % at least
    cdef Py_ssize_t i, j
    cdef double c, r, g, f, sm
    cdef bint noconv = True
    cdef int sweeps = 0
    for i in range(n):
        d[i] = 1.0
    while noconv and sweeps < 100:
        noconv = False
        sweeps += 1
        for i in range(n):
            c = 0.0
            r = 0.0
            for j in range(n):
                if j != i:
                    c += _sq(a[j * n + i])
                    r += _sq(a[i * n + j])
            c = sqrt(c)
            r = sqrt(r)
            if c == 0.0 or r == 0.0:
                continue
            g = r / 2.0
            f = 1.0
            sm = c + r
            while c < g and d[i] * f < 1e150:
                f *= 2.0
                c *= 2.0
                r /= 2.0
                g /= 2.0
            g = c / 2.0
            while g >= r and d[i] * f > 1e-150:
                f /= 2.0
                c /= 2.0
                g /= 2.0
                r *= 2.0
            if c + r >= 0.95 * sm:
                continue
            d[i] *= f
            noconv = True
            for j in range(n):
                a[i * n + j] = a[i * n + j] / f
                a[j * n + i] = a[j * n + i] * f


# ---------------------------------------------------------------- Hessenberg reduction

cdef void _hessenberg(z128* h, z128* q, Py_ssize_t n, z128* v, z128* s,
                      bint wantq) noexcept nogil:
    # h := Q^H h Q upper Hessenberg (zeros stored below the subdiagonal); q := Q^T (transposed:
    # the QR sweeps then update rows of it, contiguous) when wantq. v, s: n complex each
    cdef Py_ssize_t k, i, j, m, r
    cdef double xnorm2, nrm, beta
    cdef z128 alpha, tau, scal, t
    if wantq:
        for i in range(n * n):
            q[i] = 0.0
        for i in range(n):
            q[i * n + i] = 1.0
    for k in range(n - 2):
        m = n - k - 1                       # x = h[k+1:, k]
        alpha = h[(k + 1) * n + k]
        xnorm2 = 0.0
        for i in range(k + 2, n):
            xnorm2 += h[i * n + k].real * h[i * n + k].real + h[i * n + k].imag * h[i * n + k].imag
        if xnorm2 == 0.0 and alpha.imag == 0.0:
            for i in range(k + 2, n):       # entries whose squares underflow: negligible
                h[i * n + k] = 0.0
            continue
        nrm = sqrt(alpha.real * alpha.real + alpha.imag * alpha.imag + xnorm2)
        beta = -copysign(nrm, alpha.real)
        tau = (beta - alpha) / beta
        scal = 1.0 / (alpha - beta)
        v[0] = 1.0
        for i in range(1, m):
            v[i] = h[(k + 1 + i) * n + k] * scal
        # from the left, rows k+1.. and columns k..: h -= conj(tau) v (v^H h)
        for j in range(k, n):
            s[j] = 0.0
        for i in range(m):
            t = _conj(v[i])
            for j in range(k, n):
                s[j] = s[j] + t * h[(k + 1 + i) * n + j]
        t = _conj(tau)
        for i in range(m):
            for j in range(k, n):
                h[(k + 1 + i) * n + j] = h[(k + 1 + i) * n + j] - v[i] * t * s[j]
        h[(k + 1) * n + k] = beta
        for i in range(k + 2, n):
            h[i * n + k] = 0.0
        # from the right, columns k+1..: h -= tau (h v) v^H, and q likewise
        for r in range(n):
            t = 0.0
            for i in range(m):
                t = t + h[r * n + k + 1 + i] * v[i]
            t = t * tau
            for i in range(m):
                h[r * n + k + 1 + i] = h[r * n + k + 1 + i] - t * _conj(v[i])
        if wantq:                           # q^T := (I - tau conj(v) v^T) q^T, by rows
            for j in range(n):
                s[j] = 0.0
            for i in range(m):
                for j in range(n):
                    s[j] = s[j] + v[i] * q[(k + 1 + i) * n + j]
            for i in range(m):
                t = tau * _conj(v[i])
                for j in range(n):
                    q[(k + 1 + i) * n + j] = q[(k + 1 + i) * n + j] - t * s[j]


# ---------------------------------------------------------------- shifted QR

cdef inline void _givens(z128 f, z128 g, double* c, z128* s, z128* r) noexcept nogil:
    # c real, s complex with [[c, s], [-conj(s), c]] [f, g] = [r, 0]
    cdef double af = _mod(f), ag = _mod(g), nrm
    cdef z128 ph
    if ag == 0.0:
        c[0] = 1.0
        s[0] = 0.0
        r[0] = f
    elif af == 0.0:
        c[0] = 0.0
        s[0] = _conj(g) / ag
        r[0] = ag
    else:
        nrm = hypot(af, ag)
        ph = f / af
        c[0] = af / nrm
        s[0] = ph * _conj(g) / nrm
        r[0] = ph * nrm


cdef i64 _schur(z128* h, z128* z, z128* w, Py_ssize_t n, bint wantt,
                 double anorm) noexcept nogil:
    # h (n, n) upper Hessenberg -> eigenvalues w; with wantt h becomes the Schur factor T
    # (h = G T G^H with the rotations G applied to the columns of z, stored transposed)
    cdef Py_ssize_t hi = n - 1, l, k, i, j, istart, iend, top
    cdef i64 its = 0, total = 0, itmax = 30 * max(10, n)
    cdef double sub, tst, c
    cdef z128 a, b, cc, d, p, bc, disc, den, mu, f, g, s, r, x, y
    while hi >= 0:
        l = hi
        while l > 0:
            sub = _abs1(h[l * n + l - 1])
            if sub <= SMLNUM:
                break
            tst = _abs1(h[(l - 1) * n + l - 1]) + _abs1(h[l * n + l])
            if tst == 0.0:
                tst = anorm
            if sub <= EPS * tst:
                break
            l -= 1
        if l > 0:
            h[l * n + l - 1] = 0.0
        if l == hi:                         # a 1 x 1 block has split off
            w[hi] = h[hi * n + hi]
            hi -= 1
            its = 0
            continue
        if total >= itmax:
            return -1
        its += 1
        total += 1
        if its % 10 == 0:                   # exceptional shifts, as zlahqr's
            if its % 20 == 10:
                mu = h[l * n + l] + 0.75 * fabs(h[(l + 1) * n + l].real)
            else:
                mu = h[hi * n + hi] + 0.75 * fabs(h[hi * n + hi - 1].real)
        else:                               # Wilkinson's shift
            a = h[(hi - 1) * n + hi - 1]
            b = h[(hi - 1) * n + hi]
            cc = h[hi * n + hi - 1]
            d = h[hi * n + hi]
            p = 0.5 * (a - d)
            bc = b * cc
            disc = _sqrt(p * p + bc)
            if _mod(p + disc) < _mod(p - disc):
                disc = -disc
            den = p + disc
            mu = d if den == 0.0 else d - bc / den
        istart = 0 if wantt else l
        iend = n if wantt else hi + 1
        f = h[l * n + l] - mu
        g = h[(l + 1) * n + l]
        for k in range(l, hi):
            if k > l:
                f = h[k * n + k - 1]
                g = h[(k + 1) * n + k - 1]
            _givens(f, g, &c, &s, &r)
            if k > l:
                h[k * n + k - 1] = r
                h[(k + 1) * n + k - 1] = 0.0
            for j in range(k, iend):        # rows k, k + 1: G h
                x = h[k * n + j]
                y = h[(k + 1) * n + j]
                h[k * n + j] = c * x + s * y
                h[(k + 1) * n + j] = c * y - _conj(s) * x
            top = min(k + 2, hi)
            for i in range(istart, top + 1):    # columns k, k + 1: h G^H
                x = h[i * n + k]
                y = h[i * n + k + 1]
                h[i * n + k] = c * x + _conj(s) * y
                h[i * n + k + 1] = c * y - s * x
            if wantt:                       # z (stored transposed): columns k, k + 1
                for i in range(n):
                    x = z[k * n + i]
                    y = z[(k + 1) * n + i]
                    z[k * n + i] = c * x + _conj(s) * y
                    z[(k + 1) * n + i] = c * y - s * x
    return 0


# ---------------------------------------------------------------- eigenvectors

cdef void _vectors(z128* t, z128* zt, z128* v, Py_ssize_t n, z128* x) noexcept nogil:
    # v's columns := Z times the eigenvectors of the upper triangular t (not normalised); zt is
    # Z transposed. x: 2 n complex
    cdef Py_ssize_t k, i, j, r
    cdef double smin, m
    cdef z128 tkk, d, acc
    cdef z128* col = x + n
    for k in range(n):
        tkk = t[k * n + k]
        smin = max(EPS * _abs1(tkk), SMLNUM)
        x[k] = 1.0
        for i in range(k - 1, -1, -1):      # row i: (t_ii - t_kk) x_i = -sum_j>i t_ij x_j
            acc = t[i * n + k]
            for j in range(i + 1, k):
                acc = acc + t[i * n + j] * x[j]
            d = t[i * n + i] - tkk
            if _abs1(d) < smin:
                d = smin
            x[i] = -acc / d
            m = _abs1(x[i])
            if m > BIG:                     # rescale the solution so far: no overflow
                for j in range(i, k + 1):
                    x[j] = x[j] / m
        for r in range(n):
            col[r] = 0.0
        for j in range(k + 1):
            acc = x[j]
            for r in range(n):
                col[r] = col[r] + zt[j * n + r] * acc
        for r in range(n):
            v[r * n + k] = col[r]


cdef void _normalise(z128* v, Py_ssize_t n) noexcept nogil:
    # each column of v: unit 2-norm (scaled by its largest |component| first: no overflow), then
    # its first largest component made real and positive, as zgeev's
    cdef Py_ssize_t k, r, big
    cdef double m, nrm, best
    cdef z128 acc, ph
    for k in range(n):
        m = 0.0
        for r in range(n):
            m = max(m, _abs1(v[r * n + k]))
        if m == 0.0:
            continue
        nrm = 0.0
        for r in range(n):
            acc = v[r * n + k] / m
            v[r * n + k] = acc
            nrm += acc.real * acc.real + acc.imag * acc.imag
        nrm = sqrt(nrm)
        big = 0
        best = -1.0
        for r in range(n):
            acc = v[r * n + k]
            m = acc.real * acc.real + acc.imag * acc.imag
            if m > best:
                best = m
                big = r
        ph = _conj(v[big * n + k]) / (sqrt(best) * nrm)
        for r in range(n):
            v[r * n + k] = v[r * n + k] * ph
        v[big * n + k] = v[big * n + k].real


cdef void _real_pairs(z128* w, z128* v, Py_ssize_t n, bint wantv, double tol,
                      double* used) noexcept nogil:
    # for a real matrix, whose spectrum is closed under conjugation (as dgeev returns it): an
    # eigenvalue within tol of the real axis is made real and its vector real (the real part of
    # an eigenvector of a real eigenvalue of a real matrix is one; renormalised); any other is
    # paired with the unpaired eigenvalue nearest its conjugate (nearer than itself), the pair
    # averaged into exact conjugates and the second vector made the first's conjugate
    cdef Py_ssize_t i, j, r, best
    cdef double bd, dj, re, im, nrm
    cdef z128 target
    for i in range(n):
        used[i] = 0.0
    for i in range(n):
        if used[i] != 0.0:
            continue
        used[i] = 1.0
        if fabs(w[i].imag) <= tol:
            w[i] = w[i].real
            if wantv:
                nrm = 0.0
                for r in range(n):
                    nrm += v[r * n + i].real * v[r * n + i].real
                nrm = sqrt(nrm)
                if nrm > 0.0:
                    for r in range(n):
                        v[r * n + i] = v[r * n + i].real / nrm
            continue
        target = _conj(w[i])
        best = -1
        bd = fabs(w[i].imag)
        for j in range(i + 1, n):
            if used[j] == 0.0:
                dj = _mod(w[j] - target)
                if dj < bd:
                    bd = dj
                    best = j
        if best < 0:
            continue
        used[best] = 1.0
        re = 0.5 * (w[i].real + w[best].real)
        im = 0.5 * (w[i].imag - w[best].imag)
        w[i] = re + 1j * im
        w[best] = re - 1j * im
        if wantv:
            for r in range(n):
                v[r * n + best] = _conj(v[r * n + i])


cdef i64 _geev(z128* a, z128* w, z128* v, Py_ssize_t n, z128* work, bint wantv,
                bint real) noexcept nogil:
    # a (n, n), destroyed. work: n n + 3 n complex (z: Q, then Z, transposed)
    cdef z128* z = work
    cdef z128* tmp = work + n * n
    cdef double* d = <double*>(work + n * n + 2 * n)
    cdef double anorm = 0.0
    cdef Py_ssize_t i, j
    cdef i64 info
    _balance(a, d, n)
    for i in range(n * n):
        anorm = max(anorm, _abs1(a[i]))
    _hessenberg(a, z, n, tmp, tmp + n, wantv)
    info = _schur(a, z, w, n, wantv, anorm if anorm > 0.0 else 1.0)
    if info == 0 and wantv:
        _vectors(a, z, v, n, tmp)
        for i in range(n):                  # back to a's eigenvectors: D v
            for j in range(n):
                v[i * n + j] = v[i * n + j] * d[i]
        _normalise(v, n)
    if info == 0 and real:
        _real_pairs(w, v, n, wantv, 8.0 * n * EPS * anorm, d)
    return info


def eig(Array a, Array w, Array v, Array info, bint real):
    """Per matrix of a (B, n, n) complex128 (destroyed): eigenvalues w (B, n) complex128 in the
    order of the Schur form's diagonal and, when v is not None, eigenvectors v (B, n, n)
    complex128 as unit-norm columns; info -1 where the QR iteration did not converge. real:
    a's entries are real, so real eigenvalues (and their vectors) are made exactly real and the
    others exact conjugate pairs."""
    _check(a, 3, COMPLEX128, "a")
    _check(w, 2, COMPLEX128, "w")
    _check(info, 1, INT64, "info")
    cdef Py_ssize_t B = a.shape_[0], n = a.shape_[1], b
    cdef bint wantv = v is not None
    if wantv:
        _check(v, 3, COMPLEX128, "v")
        if v.shape_[0] != B or v.shape_[1] != n or v.shape_[2] != n:
            raise ValueError("carray.cpu._linalg_eig.eig: shapes do not match")
    if a.shape_[2] != n or w.shape_[0] != B or w.shape_[1] != n or info.shape_[0] != B:
        raise ValueError("carray.cpu._linalg_eig.eig: shapes do not match")
    cdef z128* pa = <z128*>a.data
    cdef z128* pw = <z128*>w.data
    cdef z128* pv = <z128*>v.data if wantv else NULL
    cdef i64* pi = <i64*>info.data
    cdef Py_ssize_t per = n * n + 3 * n + 1
    cdef z128* work = <z128*>malloc(B * per * sizeof(z128) + 16)
    if work == NULL:
        raise MemoryError()
    cdef int nt = 1 if B < 2 or B * n * n * n < 4096 else max(1, min(max_threads(), B))
    try:
        start = region_enter(nt)
        with nogil, parallel(num_threads=nt):
            thread_seen(threadid())
            for b in prange(B, schedule="dynamic"):
                pi[b] = _geev(pa + b * n * n, pw + b * n, (pv + b * n * n) if wantv else NULL, n,
                              work + b * per, wantv, real)
        region_exit(start, nt)
    finally:
        free(work)
