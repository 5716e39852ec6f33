"""carray.linalg's factorisations and what is built on them: det, slogdet, inv, solve, cholesky,
qr, svd, svdvals, eigh, eigvalsh, pinv, matrix_rank, matrix_power, lstsq (numpy.linalg's names,
arguments, results and LinAlgError).

Each validates, promotes (bool and integers to float64, float32 stays float32), flattens the
batch (leading axes) and hands C-contiguous float64 host copies to the C loops of
carray.cpu._linalg; float32 is factorised in float64 and rounded back. On gpu the scheme is
hybrid: the matrices are read to the host, factorised there, and the results uploaded, so they
stay on the input's device.
"""

import math
import operator
from typing import NamedTuple

import carray
from carray._complex import make as _make
from carray.core._array import Array
from carray.cpu import _linalg as _k
from carray.ops import _linalg_complex as _lc

__all__ = ["LinAlgError", "EighResult", "QRResult", "SlogdetResult", "SVDResult", "cholesky",
           "det", "eigh", "eigvalsh", "inv", "lstsq", "matrix_power", "matrix_rank", "pinv", "qr",
           "slogdet", "solve", "svd", "svdvals"]


class LinAlgError(ValueError):
    """A linear-algebra error (singular matrix, not positive definite, no convergence, not a
    square stack of matrices), a ValueError as numpy.linalg.LinAlgError."""


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


# ---------------------------------------------------------------- helpers

def _float_type(*dtypes):
    """The dtype a factorisation returns: float64 for bool/integer inputs, else the promoted
    float; TypeError for the dtypes carray.linalg has no loops for."""
    out = []
    for dt in dtypes:
        if dt.kind in "biu":
            out.append(carray.float64)
        elif dt.name in ("float32", "float64"):
            out.append(dt)
        else:
            raise TypeError(f"array type {dt.name} is unsupported in linalg (expected a bool, "
                            f"integer, float32 or float64 array)")
    return carray.result_type(*out)


def _asarray(x):
    return x if isinstance(x, carray.Array) else carray.asarray(x)


def _square(a, name):
    """a as an Array of at least 2 dims whose last two are equal; else LinAlgError."""
    a = _asarray(a)
    _at_least_2d(a)
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError(f"{name}: Last 2 dimensions of the array must be square (got shape "
                          f"{a.shape})")
    return a


def _at_least_2d(a):
    if a.ndim < 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least "
                          f"two-dimensional")


def _host64(a, shape=None, dtype="float64"):
    """A fresh C-contiguous float64 (or complex128) host copy of a (broadcast to shape first,
    if given), reshaped to (batch, m, n): the C loops work in place on it."""
    if shape is not None and tuple(a.shape) != tuple(shape):
        a = carray.broadcast_to(a, shape)
    if a.device != "cpu":
        a = a.to("cpu")
    h = carray.empty(a.shape, dtype=dtype)
    h[...] = a
    m, n = a.shape[-2:]
    return h.reshape((math.prod(a.shape[:-2]), m, n))


def _back(h, shape, dtype, device):
    """A host float64 (or complex128) result reshaped to shape, C-contiguous, in dtype, on
    device."""
    h = h.reshape(shape)
    if not h.flags.c_contiguous:
        h = h.copy()
    if h.dtype != dtype:
        h = h.astype(dtype)
    return h if device == "cpu" else h.to(device)


def _info(shape):
    return carray.zeros((math.prod(shape),), dtype=carray.int64)


def _failed(info):
    return info.shape[0] > 0 and bool(carray.any(info != 0))


def _where(info, detail=None):
    """The detail that follows NumPy's message for the first failed matrix: '(matrix i of the
    batch: ...)' or, for one matrix, '(...)'; detail(code) words a positive info code."""
    codes = info.tolist()
    i = next(j for j, c in enumerate(codes) if c != 0)
    text = detail(codes[i]) if detail is not None and codes[i] > 0 else ""
    if len(codes) == 1:
        return f" ({text})" if text else ""
    return f" (matrix {i} of the batch" + (f": {text})" if text else ")")


def _zero_pivot(code):
    return f"U[{code - 1}, {code - 1}] is exactly zero"


def _minor(code):
    return f"the leading minor of order {code} is not positive definite"


# ---------------------------------------------------------------- LU: det, slogdet, inv, solve

def slogdet(a):
    """(sign, logabsdet) of each matrix of a (..., n, n): det = sign * exp(logabsdet); sign 0
    and logabsdet -inf for a singular matrix. LinAlgError for a non-square stack."""
    a = _square(a, "slogdet")
    if _lc.is_complex(a):
        return SlogdetResult(*_lc.slogdet(a))
    dt = _float_type(a.dtype)
    h = _host64(a)
    batch = (h.shape[0],)
    sign, logabs, d = (carray.empty(batch, dtype=carray.float64) for _ in range(3))
    _k.slogdet(h, sign, logabs, d)
    return SlogdetResult(_back(sign, a.shape[:-2], dt, a.device),
                         _back(logabs, a.shape[:-2], dt, a.device))


def det(a):
    """The determinant of each matrix of a (..., n, n), by LU with partial pivoting (0 for a
    singular matrix). LinAlgError for a non-square stack."""
    a = _square(a, "det")
    if _lc.is_complex(a):
        return _lc.det(a)
    dt = _float_type(a.dtype)
    h = _host64(a)
    batch = (h.shape[0],)
    sign, logabs, d = (carray.empty(batch, dtype=carray.float64) for _ in range(3))
    _k.slogdet(h, sign, logabs, d)
    return _back(d, a.shape[:-2], dt, a.device)


def _lu(h, name):
    piv = carray.empty(h.shape[:2], dtype=carray.int64)
    info = _info(h.shape[:1])
    _k.lu(h, piv, info)
    if _failed(info):
        raise LinAlgError(f"{name}: Singular matrix{_where(info, _zero_pivot)}")
    return piv


def inv(a):
    """The inverse of each matrix of a (..., n, n). LinAlgError for a singular matrix (an exact
    zero pivot, as LAPACK) or a non-square stack."""
    a = _square(a, "inv")
    if _lc.is_complex(a):
        return _lc.inv(a)
    dt = _float_type(a.dtype)
    h = _host64(a)
    piv = _lu(h, "inv")
    n = a.shape[-1]
    rhs = _host64(carray.eye(n, dtype=carray.float64), (h.shape[0], n, n))
    _k.lu_solve(h, piv, rhs)
    return _back(rhs, a.shape, dt, a.device)


def solve(a, b):
    """x with a @ x = b for each matrix of a (..., n, n); b is (..., n, k), or (n,) for one
    vector (NumPy 2's rule), batch axes broadcast. LinAlgError for a singular or non-square a;
    ValueError when b's n differs from a's."""
    a = _square(a, "solve")
    b = _asarray(b)
    if a.device != b.device:
        raise carray.DeviceMismatchError(f"solve: a is on {a.device} and b on {b.device}; "
                                         f"move one with .to()")
    if _lc.is_complex(a, b):
        return _lc.solve(a, b)
    dt = _float_type(a.dtype, b.dtype)
    n = a.shape[-1]
    vector = b.ndim == 1
    if b.ndim == 0:
        raise ValueError("solve: b must be at least 1-dimensional (got a 0-d array)")
    if (b.shape[0] if vector else b.shape[-2]) != n:
        raise ValueError(f"solve: b's shape {b.shape} does not match a's {a.shape}: expected "
                         f"{n} rows")
    bm = b.reshape((n, 1)) if vector else b
    batch = carray.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    h = _host64(a, batch + (n, n))
    rhs = _host64(bm, batch + bm.shape[-2:])
    piv = _lu(h, "solve")
    _k.lu_solve(h, piv, rhs)
    return _back(rhs, batch + ((n,) if vector else bm.shape[-2:]), dt, a.device)


# ---------------------------------------------------------------- Cholesky, QR

def cholesky(a, /, *, upper=False):
    """The Cholesky factor of each matrix of a (..., n, n): lower L with a = L L^T from a's
    lower triangle, or with upper=True upper U with a = U^T U from its upper triangle.
    LinAlgError when a matrix is not positive definite or the stack is not square."""
    a = _square(a, "cholesky")
    if _lc.is_complex(a):
        return _lc.cholesky(a, upper)
    dt = _float_type(a.dtype)
    h = _host64(a.mT if upper else a)
    info = _info(h.shape[:1])
    _k.cholesky(h, info)
    if _failed(info):
        raise LinAlgError(f"cholesky: Matrix is not positive definite{_where(info, _minor)}")
    out = _back(h, a.shape, dt, a.device)
    return carray.ascontiguousarray(out.mT) if upper else out


def qr(a, mode="reduced"):
    """The QR factorisation of each matrix of a (..., m, n) by Householder reflections (R's
    diagonal signs as LAPACK's): mode "reduced" gives Q (..., m, k), R (..., k, n) with
    k = min(m, n); "complete" Q (..., m, m), R (..., m, n); "r" R alone (reduced).
    LinAlgError for fewer than 2 dims; ValueError for another mode."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: Unrecognized mode {mode!r} (expected 'reduced', 'complete' or "
                         f"'r')")
    a = _asarray(a)
    _at_least_2d(a)
    if _lc.is_complex(a):
        q, r = _lc.qr(a, mode)
        return r if mode == "r" else QRResult(q, r)
    dt = _float_type(a.dtype)
    m, n = a.shape[-2:]
    k = min(m, n)
    h = _host64(a)
    mc = m if mode == "complete" else (0 if mode == "r" else k)
    q = carray.empty((h.shape[0], m, mc), dtype=carray.float64)
    _k.qr(h, q)
    batch = a.shape[:-2]
    rows = m if mode == "complete" else k
    r = _back(carray.ascontiguousarray(h[:, :rows, :]), batch + (rows, n), dt, a.device)
    if mode == "r":
        return r
    return QRResult(_back(q, batch + (m, mc), dt, a.device), r)


# ---------------------------------------------------------------- eigh, svd

def eigh(a, UPLO="L"):  # noqa: N803  (NumPy's name)
    """Eigenvalues (ascending) and eigenvectors (the columns) of each symmetric (or complex
    Hermitian: real eigenvalues, unitary eigenvectors) matrix of a (..., n, n), from its lower
    (UPLO="L") or upper ("U") triangle, by cyclic Jacobi (large real ones by QL). LinAlgError
    for a non-square stack or when the iteration does not converge (NaN input)."""
    w, v = _eigh(a, UPLO, "eigh")
    return EighResult(w, v)


def eigvalsh(a, UPLO="L"):  # noqa: N803
    """The eigenvalues (ascending) of each symmetric matrix of a (..., n, n); see eigh."""
    return _eigh(a, UPLO, "eigvalsh")[0]


def _eigh(a, uplo, name):
    if uplo not in ("L", "U"):
        raise ValueError(f"{name}: UPLO argument must be 'L' or 'U' (got {uplo!r})")
    a = _square(a, name)
    if _lc.is_complex(a):
        return _lc.eigh(a, uplo, name)
    dt = _float_type(a.dtype)
    h = _host64(a.mT if uplo == "U" else a)
    B, n = h.shape[:2]
    rows = carray.arange(n)
    h, scale = _scaled(h, rows[:, None] >= rows[None, :])      # by the triangle read
    w = carray.empty((B, n), dtype=carray.float64)
    v = carray.empty((B, n, n), dtype=carray.float64)
    info = _info((B,))
    _k.eigh(h, w, v, info)
    if _failed(info):
        raise LinAlgError(f"{name}: Eigenvalues did not converge{_where(info)}")
    w = carray.multiply(w, scale)
    return _back(w, a.shape[:-1], dt, a.device), _back(v, a.shape, dt, a.device)


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """The singular value decomposition a = U @ (S[..., None] * Vh) of each matrix of
    a (..., m, n), by one-sided Jacobi: S (..., k) descending, k = min(m, n); U (..., m, m) and
    Vh (..., n, n) with full_matrices, else (..., m, k) and (..., k, n); S alone without
    compute_uv; complex a gives complex unitary U, Vh and real S. (hermitian is accepted and
    ignored: the general path is as accurate.) LinAlgError for fewer than 2 dims or when it
    does not converge (NaN or inf input)."""
    a = _asarray(a)
    _at_least_2d(a)
    if _lc.is_complex(a):
        out = _lc.svd(a, full_matrices, compute_uv)
        return SVDResult(*out) if compute_uv else out
    dt = _float_type(a.dtype)
    m, n = a.shape[-2:]
    wide = m < n
    k, L = (m, n) if wide else (n, m)
    rows = L if (full_matrices and compute_uv) else k
    if 0 < k and 2 * k <= L:
        s, gt, qo = _svd_preconditioned(a.mT if wide else a, k, L, rows)
    else:
        s, gt, qo = _svd_rows(_host64(a if wide else a.mT), k, L, rows)
    batch = a.shape[:-2]
    S = _back(s, batch + (k,), dt, a.device)
    if not compute_uv:
        return S
    # w = gt^T diag(s) qo: for a tall a (w = a^T) U = qo^T and Vh = gt; for a wide one U = gt^T
    if wide:
        U, Vh = carray.ascontiguousarray(gt.mT), qo
    else:
        U, Vh = carray.ascontiguousarray(qo.mT), gt
    return SVDResult(_back(U, batch + U.shape[1:], dt, a.device), S,
                     _back(Vh, batch + Vh.shape[1:], dt, a.device))


def _scaled(h, mask=None):
    """h (B, r, c) (float64 or complex128 on the host) divided per matrix by its largest
    |entry| (among mask's, if given) when that is finite and not 0, and the scales (B, 1):
    LAPACK scales the same way, so that the sums of squares of entries near 1e300 (or 1e-300)
    neither overflow nor underflow."""
    B = h.shape[0]
    if h.size == 0:
        return h, carray.ones((B, 1), dtype=carray.float64)
    m = carray.abs(h) if mask is None else carray.where(mask, carray.abs(h), 0.0)
    big = carray.max(m.reshape((B, -1)), axis=1, keepdims=True)
    ok = carray.logical_and(carray.isfinite(big), carray.greater(big, 0.0))
    scale = carray.where(ok, big, 1.0)
    d = scale.reshape((B, 1, 1))
    if h.dtype.kind == "c":     # the parts divided apart: complex / real would take 1 / scale
        return _make(h.real / d, h.imag / d, h.dtype), scale    # (inf for a subnormal scale)
    return carray.divide(h, d), scale


def _svd_rows(w, k, L, rows):
    """The C loop on w (B, k, L), the rows to orthogonalise: w = gt^T diag(s) qo with qo
    (B, rows, L). LinAlgError when it does not converge."""
    w, scale = _scaled(w)
    B = w.shape[0]
    s = carray.empty((B, k), dtype=carray.float64)
    gt = carray.empty((B, k, k), dtype=carray.float64)
    qo = carray.empty((B, rows, L), dtype=carray.float64)
    info = _info((B,))
    _k.svd(w, s, gt, qo, info)
    if _failed(info):
        raise LinAlgError(f"SVD did not converge{_where(info)}")
    return carray.multiply(s, scale), gt, qo


def _svd_preconditioned(wt, k, L, rows):
    """_svd_rows for w = wt^T when L >= 2k: QR first, wt = Q R, so w = R^T Q^T, and Jacobi
    runs on the k x k R^T (rows of length k instead of L, and fewer sweeps); qo = qo' Q^T, the
    complement rows (full_matrices) are Q's extra columns."""
    h, scale = _scaled(_host64(wt))                   # (B, L, k)
    B = h.shape[0]
    q = carray.empty((B, L, L if rows == L else k), dtype=carray.float64)
    _k.qr(h, q)
    w = carray.ascontiguousarray(h[:, :k, :].mT)      # R^T
    s, gt, qo = _svd_rows(w, k, k, k)
    s = carray.multiply(s, scale)
    qo = carray.matmul(qo, q[:, :, :k].mT)
    if rows == L:
        qo = carray.concatenate([qo, q[:, :, k:].mT], axis=1)
    return s, gt, carray.ascontiguousarray(qo)


def svdvals(x, /):
    """The singular values (descending) of each matrix of x (..., m, n); see svd."""
    return svd(x, compute_uv=False)


# ---------------------------------------------------------------- built on them

_NoValue = object()


def pinv(a, rcond=None, hermitian=False, *, rtol=_NoValue):
    """The Moore-Penrose pseudo-inverse of each matrix of a (..., m, n), from its SVD with
    singular values at most rtol * max(S) treated as zero (NumPy's defaults: rcond 1e-15, or
    with rtol=None max(m, n) * eps). ValueError when rcond and rtol are both given."""
    a = _asarray(a)
    _at_least_2d(a)
    if _lc.is_complex(a):
        if rtol is None and rcond is None:      # the default cut-off of a's own size
            rcond = max(a.shape[-2:]) * (1.1920929e-07 if a.dtype == carray.complex64
                                         else 2.220446049250313e-16)
        return _lc.pinv(a, **({"rcond": rcond} if rtol is _NoValue or rtol is None
                              else {"rcond": rcond, "rtol": rtol}))
    dt = _float_type(a.dtype)
    if rcond is None:
        if rtol is _NoValue:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(a.shape[-2:]) * (2.220446049250313e-16 if dt == carray.float64
                                         else 1.1920929e-07)
        else:
            rcond = rtol
    elif rtol is not _NoValue:
        raise ValueError("pinv: `rtol` and `rcond` can't be both set.")
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return carray.zeros(a.shape[:-2] + (n, m), dtype=dt, device=a.device)
    U, S, Vh = svd(a.to("cpu").astype(carray.float64), full_matrices=False)
    rc = carray.asarray(rcond, dtype=carray.float64)
    if rc.device != "cpu":
        rc = rc.to("cpu")
    cutoff = carray.expand_dims(rc, -1) * carray.max(S, axis=-1, keepdims=True)
    big = S > cutoff
    sinv = carray.where(big, 1.0 / carray.where(big, S, 1.0), 0.0)
    out = carray.matmul(Vh.mT * carray.expand_dims(sinv, -2), U.mT)
    return _back(carray.ascontiguousarray(out), out.shape, dt, a.device)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):  # noqa: N803
    """The number of singular values of each matrix of A above tol (default
    max(S) * max(m, n) * eps, or max(S) * rtol); for a 0-d or 1-d A, 1 unless all zero."""
    A = _asarray(A)
    if A.ndim < 2:
        return int(not bool(carray.all(A == 0)))
    S = svdvals(A.to("cpu") if A.device != "cpu" else A)
    if tol is None:
        if rtol is None:
            eps = 1.1920929e-07 if S.dtype == carray.float32 else 2.220446049250313e-16
            rtol = max(A.shape[-2:]) * eps
        rtol = carray.expand_dims(carray.asarray(rtol, dtype=S.dtype), -1)
        smax = (carray.max(S, axis=-1, keepdims=True) if S.shape[-1] else
                carray.zeros(S.shape[:-1] + (1,), dtype=S.dtype))
        tol = smax * rtol
    else:
        tol = carray.expand_dims(carray.asarray(tol, dtype=S.dtype), -1)
    rank = carray.sum(S > tol, axis=-1)
    return rank if A.device == "cpu" else rank.to(A.device)


def matrix_power(a, n):
    """a multiplied by itself n times (matmul, by repeated squaring) for each square matrix of
    a; n = 0 gives the identity, n < 0 the power of inv(a). TypeError for a non-integer n;
    LinAlgError for a non-square stack or (n < 0) a singular matrix."""
    a = _square(a, "matrix_power")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: exponent must be an integer (got {n!r})") from None
    if n == 0:
        eye = carray.eye(a.shape[-1], dtype=a.dtype, device=a.device)
        return carray.ascontiguousarray(carray.broadcast_to(eye, a.shape))
    if n < 0:
        a, n = inv(a), -n
    result = None
    z = a
    while True:
        if n & 1:
            result = z if result is None else carray.matmul(result, z)
        n >>= 1
        if not n:
            break
        z = carray.matmul(z, z)
    return result.copy() if result is a else result


def lstsq(a, b, rcond=None):
    """The least-squares solution x of a @ x = b for a (m, n) and b (m,) or (m, k), by SVD
    (singular values at most rcond * max(S) ignored; rcond None: max(m, n) * eps, negative:
    eps).
    Returns (x, residuals, rank, s): residuals the squared 2-norms of b - a @ x per column when
    rank == n < m, else empty. LinAlgError unless a is 2-d and b 1-d or 2-d; ValueError when
    their m differ."""
    a, b = _asarray(a), _asarray(b)
    if a.ndim != 2:
        raise LinAlgError(f"lstsq: {a.ndim}-dimensional array given. Array must be "
                          f"two-dimensional")
    if b.ndim not in (1, 2):
        raise LinAlgError(f"lstsq: {b.ndim}-dimensional array given. Array must be one or "
                          f"two-dimensional")
    m, n = a.shape
    if b.shape[0] != m:
        raise LinAlgError(f"lstsq: Incompatible dimensions: a is {a.shape}, b is {b.shape}")
    if a.device != b.device:
        raise carray.DeviceMismatchError(f"lstsq: a is on {a.device} and b on {b.device}; "
                                         f"move one with .to()")
    if _lc.is_complex(a, b):
        return _lc.lstsq(a, b, rcond)
    dt = _float_type(a.dtype, b.dtype)
    eps = 2.220446049250313e-16 if dt == carray.float64 else 1.1920929e-07
    if rcond is None:
        rcond = max(m, n) * eps
    elif rcond < 0:                 # LAPACK's gelsd: machine precision
        rcond = eps
    device = a.device
    a64 = a.to("cpu").astype(carray.float64)
    b64 = b.to("cpu").astype(carray.float64)
    bm = b64.reshape((m, 1)) if b.ndim == 1 else b64
    k = min(m, n)
    if k == 0:
        x = carray.zeros((n, bm.shape[1]), dtype=carray.float64)
        s = carray.zeros((0,), dtype=carray.float64)
        rank = 0
    else:
        U, s, Vh = svd(a64, full_matrices=False)
        big = s > rcond * float(carray.max(s))
        rank = int(carray.sum(big))
        sinv = carray.where(big, 1.0 / carray.where(big, s, 1.0), 0.0)
        x = carray.matmul(Vh.mT, carray.expand_dims(sinv, -1) * carray.matmul(U.mT, bm))
    if rank == n and m > n:
        r = bm - carray.matmul(a64, x)
        resid = carray.sum(r * r, axis=0)
    else:
        resid = carray.zeros((0,), dtype=carray.float64)
    if b.ndim == 1:
        x = x.reshape((n,))
    x = carray.ascontiguousarray(x)
    return (_back(x, x.shape, dt, device), _back(resid, resid.shape, dt, device), rank,
            _back(s, s.shape, dt, device))
