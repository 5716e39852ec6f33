"""carray.linalg on complex64/complex128 matrices, built from the real routines, array ops and
the complex C loops of carray.cpu._linalg_complex.

eigh and svd (and through them eigvalsh and svdvals) run carray.cpu._linalg_complex's
Hermitian Jacobi and one-sided Jacobi on complex128 host copies (complex64 rounded back; on gpu
the results are uploaded, as the real routines do). A complex matrix A = X + iY acts like the
real matrix [[X, -Y], [Y, X]] of twice the size (the embedding maps products, inverses and
pseudo-inverses to those of A): inv, solve and pinv use it. det and slogdet take a batched LU
with partial pivoting in complex128, cholesky a column-by-column factorisation and qr LAPACK's
Householder reflections (R as NumPy's), all composed from array ops (so they run on every
device); lstsq uses svd.
"""

import math

import carray
from carray._complex import _PART, make, unary
from carray.cpu import _linalg_complex as _kc
from carray.ops import _linalg as _real  # (it imports this module: names read at call)


def is_complex(*xs):
    """True when any of xs is a complex Array."""
    return any(isinstance(x, carray.Array) and x.dtype.kind == "c" for x in xs)


def _cdtype(*xs):
    return carray.result_type(*[x.dtype for x in xs])


def _embed(a):
    """(..., n, m) complex -> (..., 2n, 2m) real [[X, -Y], [Y, X]]."""
    x, y = a.real, a.imag
    top = carray.concatenate([x, -y], axis=-1)
    bottom = carray.concatenate([y, x], axis=-1)
    return carray.concatenate([top, bottom], axis=-2)


def _unembed(r, n, m, dtype):
    """The complex (..., n, m) matrix whose embedding is r (its left column of blocks)."""
    return make(r[..., :n, :m], r[..., n:, :m], dtype)


def inv(a):
    """The inverse of each complex matrix of a (..., n, n)."""
    from carray.ops._linalg import inv as real_inv
    n = a.shape[-1]
    return _unembed(real_inv(_embed(a)), n, n, a.dtype)


def solve(a, b):
    """x with a @ x = b (b is (..., n, k), or (n,) for one vector) for complex a or b."""
    from carray.ops._linalg import solve as real_solve
    dt = _cdtype(a, b)
    a, b = a.astype(dt, copy=False), carray.asarray(b).astype(dt, copy=False)
    if b.ndim == 1:
        x = real_solve(_embed(a), carray.concatenate([b.real, b.imag], axis=-1))
        n = x.shape[-1] // 2
        return make(x[..., :n], x[..., n:], dt)
    x = real_solve(_embed(a), carray.concatenate([b.real, b.imag], axis=-2))
    n = x.shape[-2] // 2
    return make(x[..., :n, :], x[..., n:, :], dt)


def pinv(a, **kw):
    """The pseudo-inverse of each complex matrix of a (..., m, n) (same cut-off rules)."""
    from carray.ops._linalg import pinv as real_pinv
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return carray.zeros(a.shape[:-2] + (n, m), dtype=a.dtype, device=a.device)
    return _unembed(real_pinv(_embed(a), **kw), n, m, a.dtype)


def eigh(a, uplo, name="eigh"):
    """(eigenvalues, eigenvectors) of each Hermitian matrix of complex a (..., n, n) from its
    lower (uplo "L") or upper ("U") triangle, the diagonal's imaginary part ignored: eigenvalues
    real and ascending, eigenvectors unitary columns. LinAlgError when Jacobi does not converge
    (NaN or inf in the triangle read)."""
    from carray.ops._linalg import LinAlgError, _failed, _info, _where
    h = _real._host64(a, dtype=carray.complex128)
    B, n = h.shape[:2]
    rows = carray.arange(n)
    tri = rows[:, None] >= rows[None, :] if uplo == "L" else rows[:, None] <= rows[None, :]
    h, scale = _real._scaled(h, tri)
    w = carray.empty((B, n), dtype=carray.float64)
    v = carray.empty((B, n, n), dtype=carray.complex128)
    info = _info((B,))
    _kc.eigh(h, w, v, info, uplo == "L")
    if _failed(info):
        raise LinAlgError(f"{name}: Eigenvalues did not converge{_where(info)}")
    w = carray.multiply(w, scale)
    return (_real._back(w, a.shape[:-1], _PART[a.dtype.name], a.device),
            _real._back(v, a.shape, a.dtype, a.device))


def svd(a, full_matrices, compute_uv):
    """The SVD a = U @ (S[..., None] * Vh) of each complex matrix of a (..., m, n) by one-sided
    Jacobi: S real, descending; U and Vh unitary ((m, m) and (n, n) with full_matrices, else
    (m, k) and (k, n)); S alone without compute_uv. LinAlgError when Jacobi does not converge
    (NaN or inf input)."""
    from carray.ops._linalg import LinAlgError, _failed, _info, _where
    m, n = a.shape[-2:]
    wide = m < n
    k, L = (m, n) if wide else (n, m)
    rows = L if (full_matrices and compute_uv) else k
    w = a if wide else _conj(a.mT)                  # w (B, k, L): a or a^H
    h, scale = _real._scaled(_real._host64(w, dtype=carray.complex128))
    B = h.shape[0]
    s = carray.empty((B, k), dtype=carray.float64)
    gt = carray.empty((B, k, k), dtype=carray.complex128)
    qo = carray.empty((B, rows, L), dtype=carray.complex128)
    info = _info((B,))
    _kc.svd(h, s, gt, qo, info)
    if _failed(info):
        raise LinAlgError(f"SVD did not converge{_where(info)}")
    batch = a.shape[:-2]
    S = _real._back(carray.multiply(s, scale), batch + (k,), _PART[a.dtype.name], a.device)
    if not compute_uv:
        return S
    # w = gt^H diag(s) qo: for a wide a (w = a) U = gt^H and Vh = qo; for a tall one (w = a^H)
    # U = qo^H and Vh = gt
    U, Vh = (_conj(gt.mT), qo) if wide else (_conj(qo.mT), gt)
    return (_real._back(U, batch + U.shape[1:], a.dtype, a.device), S,
            _real._back(Vh, batch + Vh.shape[1:], a.dtype, a.device))


def lstsq(a, b, rcond):
    """numpy.linalg.lstsq for a complex a (m, n) or b ((m,) or (m, k)), validated by the caller:
    (x, residuals, rank, s) by svd, x complex, residuals (sum |b - a x|^2 per column, when
    rank == n < m, else empty) and s real."""
    dt = _cdtype(a, b)
    part = _PART[dt.name]
    eps = 2.220446049250313e-16 if part == carray.float64 else 1.1920929e-07
    m, n = a.shape
    if rcond is None:
        rcond = max(m, n) * eps
    elif rcond < 0:                 # LAPACK's gelsd: machine precision
        rcond = eps
    device = a.device
    a128 = a.to("cpu").astype(carray.complex128)
    b128 = b.to("cpu").astype(carray.complex128)
    bm = b128.reshape((m, 1)) if b.ndim == 1 else b128
    if min(m, n) == 0:
        x = carray.zeros((n, bm.shape[1]), dtype=carray.complex128)
        s = carray.zeros((0,), dtype=carray.float64)
        rank = 0
    else:
        U, s, Vh = svd(a128, False, True)
        big = s > rcond * float(carray.max(s))
        rank = int(carray.sum(big))
        sinv = carray.where(big, 1.0 / carray.where(big, s, 1.0), 0.0)
        uhb = carray.matmul(_conj(U.mT), bm)
        x = carray.matmul(_conj(Vh.mT), carray.expand_dims(sinv, -1) * uhb)
    if rank == n and m > n:
        resid = carray.sum(carray.abs(bm - carray.matmul(a128, x)) ** 2, axis=0)
    else:
        resid = carray.zeros((0,), dtype=carray.float64)
    if b.ndim == 1:
        x = x.reshape((n,))
    return (_real._back(x, x.shape, dt, device), _real._back(resid, resid.shape, part, device),
            rank, _real._back(s, s.shape, part, device))


def _lu_pivots(a):
    """The pivots of a batched LU with partial pivoting of complex a (..., n, n) in complex128,
    and the parity of the row swaps: (list of (...,) complex arrays, (...,) int64)."""
    h = a.astype("complex128")
    n = h.shape[-1]
    batch = h.shape[:-2]
    h = carray.reshape(h, (math.prod(batch), n, n)).copy()
    idx = carray.arange(n, device=a.device)
    swaps = carray.zeros(h.shape[:1], dtype="int64", device=a.device)
    pivots = []
    for k in range(n):
        p = carray.argmax(carray.abs(h[:, k:, k]), axis=-1) + k
        perm = carray.where(idx == k, p[:, None], carray.where(idx == p[:, None], k, idx))
        h = carray.take_along_axis(h, carray.broadcast_to(perm[:, :, None], h.shape), axis=1)
        swaps = swaps + (p != k)
        piv = h[:, k, k]
        pivots.append(carray.reshape(piv, batch))
        safe = carray.where(piv == 0, 1.0 + 0j, piv)
        f = h[:, k + 1:, k] / safe[:, None]
        h[:, k + 1:, :] = h[:, k + 1:, :] - f[:, :, None] * h[:, k:k + 1, :]
    return pivots, carray.reshape(swaps, batch)


def det(a):
    """The determinant of each complex matrix of a (..., n, n)."""
    pivots, swaps = _lu_pivots(a)
    d = carray.where(swaps % 2 == 1, -1.0 + 0j,
                     carray.ones(swaps.shape, dtype="complex128", device=a.device))
    for p in pivots:
        d = d * p
    return d.astype(a.dtype)


def slogdet(a):
    """(sign, logabsdet) of each complex matrix of a: sign a unit complex number (0 for a
    singular matrix), logabsdet real (-inf for a singular one)."""
    pivots, swaps = _lu_pivots(a)
    sign = carray.where(swaps % 2 == 1, -1.0 + 0j,
                        carray.ones(swaps.shape, dtype="complex128", device=a.device))
    logabs = carray.zeros(swaps.shape, dtype="float64", device=a.device)
    for p in pivots:
        m = carray.abs(p)
        sign = sign * carray.where(m == 0, 0j, p / carray.where(m == 0, 1.0, m))
        logabs = logabs + carray.log(m)
    part = "float32" if a.dtype == carray.complex64 else "float64"
    return sign.astype(a.dtype), logabs.astype(part)


def _norm(x):
    """The 2-norm over the last axis, scaled by the largest |x_i| so it neither overflows nor
    underflows."""
    m = carray.abs(x)
    if x.shape[-1] == 0:
        return carray.zeros(x.shape[:-1], dtype=m.dtype, device=x.device)
    big = carray.max(m, axis=-1, keepdims=True)
    safe = carray.where(big == 0, 1.0, big)
    return carray.sqrt(carray.sum((m / safe) ** 2, axis=-1)) * safe[..., 0]


def _conj(x):
    return unary("conjugate", x)


def cholesky(a, upper):
    """The Cholesky factor of each Hermitian positive-definite complex matrix of a: lower L with
    a = L L^H from a's lower triangle (upper=True: U = L^H from the upper one), column by column
    in complex128. LinAlgError when a matrix is not positive definite."""
    from carray.ops._linalg import LinAlgError
    h = a.astype("complex128")
    if upper:
        h = _conj(carray.matrix_transpose(h))
    n = h.shape[-1]
    batch = h.shape[:-2]
    h = carray.reshape(h, (math.prod(batch), n, n))
    low = carray.zeros(h.shape, dtype="complex128", device=a.device)
    for j in range(n):
        row = low[:, j, :j]
        d2 = h[:, j, j].real - carray.sum(carray.abs(row) ** 2, axis=-1)
        if not bool(carray.all(d2 > 0)):
            raise LinAlgError("cholesky: Matrix is not positive definite")
        d = carray.sqrt(d2)
        low[:, j, j] = d
        if j + 1 < n:
            s = carray.sum(low[:, j + 1:, :j] * _conj(row)[:, None, :], axis=-1)
            low[:, j + 1:, j] = (h[:, j + 1:, j] - s) / d[:, None]
    out = carray.reshape(low, batch + (n, n))
    if upper:
        out = _conj(carray.matrix_transpose(out))
    return carray.ascontiguousarray(out.astype(a.dtype))


def qr(a, mode):
    """(Q, R) of each complex matrix of a (..., m, n) by Householder reflections in complex128:
    Q unitary (m, k) or (m, m) for mode='complete', R upper triangular (exact zeros below)."""
    h = a.astype("complex128")
    m, n = h.shape[-2:]
    k = min(m, n)
    batch = h.shape[:-2]
    r = carray.reshape(h, (math.prod(batch), m, n)).copy()
    nb = r.shape[0]
    q = carray.broadcast_to(carray.eye(m, dtype="complex128", device=a.device), (nb, m, m)).copy()
    for j in range(k):
        # LAPACK's zlarfg: H = I - tau v v^H with v[0] = 1 maps x to beta e1, beta real
        # (-sign(Re x0) ||x||), so R's diagonal is real as NumPy's; no reflection (tau = 0)
        # when x is already real beta e1
        x = r[:, j:, j]                                         # (nb, m - j)
        alpha = x[:, 0]
        full = _norm(x)
        skip = carray.logical_and(_norm(x[:, 1:]) == 0, alpha.imag == 0)
        beta = -carray.copysign(full, alpha.real)
        beta_safe = carray.where(skip, 1.0, beta)
        tau = carray.where(skip, 0j, (beta_safe - alpha) / beta_safe)
        denom = carray.where(skip, 1.0 + 0j, alpha - beta_safe)
        v = x / denom[:, None]
        v[:, 0] = 1.0
        vh = _conj(v)
        block = r[:, j:, :]
        w = carray.sum(vh[:, :, None] * block, axis=1)        # v^H R
        r[:, j:, :] = block - (_conj(tau)[:, None] * v)[:, :, None] * w[:, None, :]
        qb = q[:, :, j:]
        qv = carray.sum(qb * v[:, None, :], axis=-1)          # Q v
        q[:, :, j:] = qb - (tau[:, None] * qv)[:, :, None] * vh[:, None, :]
    rows = carray.arange(m, device=a.device)[:, None]
    cols = carray.arange(n, device=a.device)[None, :]
    r = carray.where(rows > cols, 0j, r)
    if mode != "complete":
        q, r = q[:, :, :k], r[:, :k, :]
    q = carray.reshape(q, batch + q.shape[1:])
    r = carray.reshape(r, batch + r.shape[1:])
    return (carray.ascontiguousarray(q.astype(a.dtype)),
            carray.ascontiguousarray(r.astype(a.dtype)))
