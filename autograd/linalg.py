"""torch.linalg: the norms and matmul (h12), composed from autograd's ops (the vector norm's
gradient is 0 where it is 0), and the factorisations (inv, solve, det, slogdet, cholesky, qr,
svd, svdvals, eigh, eigvalsh: Functions of autograd/ops/factorizations.py over carray.linalg)
with what is built on them (pinv, matrix_power, lstsq, matrix_rank, cross, vecdot, diagonal,
solve_triangular, multi_dot, cond)."""

import math
from typing import NamedTuple

import carray
from autograd.ops import factorizations as _f
from autograd.ops import torch_functions as _tf
from autograd.ops.factorizations import LinAlgError
from autograd.ops.norms import LinalgVectorNorm as _VectorNorm
from autograd.tensor import Tensor

__all__ = ["LinAlgError", "cholesky", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh",
           "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot",
           "norm", "pinv", "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals",
           "vecdot", "vector_norm"]

matmul = _tf.matmul


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """(sum |x|^ord)^(1/ord) over dim (all dims when None); ord 0 counts non-zeros, +-inf is
    max/min |x|. RuntimeError for an integer input."""
    if dtype is not None:
        x = x.to(dtype)
    result = _VectorNorm.apply(x, float(ord), dim, keepdim)
    return result if out is None else out.copy_(result)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """The matrix norm over the two dims: 'fro', or 1 / -1 (max / min column abs sum), inf /
    -inf (max / min row abs sum), 'nuc' / 2 / -2 (sum / max / min of the singular values).
    RuntimeError for fewer than 2 dims or another ord."""
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if dtype is not None:
        A = A.to(dtype)
    d0, d1 = (d % A.ndim for d in dim)
    if ord == "fro":
        result = vector_norm(A, 2, (d0, d1), keepdim)
    elif ord in ("nuc", 2, -2):
        rest = [d for d in range(A.ndim) if d not in (d0, d1)]
        s = svdvals(A.permute(*rest, d0, d1))
        result = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        if keepdim:
            result = result.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
    elif ord in (1, -1, math.inf, -math.inf):
        summed, reduce = (d0, d1) if abs(ord) == 1 else (d1, d0)
        sums = A.abs().sum(summed, keepdim=True)
        result = sums.amax(reduce, keepdim=True) if ord > 0 else sums.amin(reduce, keepdim=True)
        if not keepdim:
            result = result.squeeze((d0, d1)) if A.ndim > 2 else result.reshape(())
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return result if out is None else out.copy_(result)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """A vector norm (dim an int, or ord None and dim None: over all elements) or a matrix norm
    (dim a pair, or a 2-d A with ord given). RuntimeError for ord given with dim None and A not
    1-d or 2-d."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is None:
        if ord is None:
            return vector_norm(A, 2, None, keepdim, dtype=dtype, out=out)
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                               f"be 1D or 2D. Got {A.ndim}D.")
        dim = tuple(range(A.ndim))
    if len(dim) == 1:
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)
    return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype, out=out)


# ---------------------------------------------------------------- factorisations (issue 13)

class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class LstsqResult(NamedTuple):
    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


def _out(result, out):
    return result if out is None else out.copy_(result)


def inv(A, *, out=None):
    """The inverse of each matrix of A (..., n, n); dA = -A^-T g A^-T. LinAlgError (a
    RuntimeError) for a singular matrix; RuntimeError for a non-square or integer input."""
    return _out(_f.Inv.apply(A), out)


def solve(A, B, *, left=True, out=None):
    """X with A X = B (left) or X A = B; B (..., n, k), or a batch of vectors (..., n) when
    B.ndim == 1 or B.shape == A.shape[:-1] (PyTorch's rule); batch axes broadcast.
    LinAlgError for a singular A."""
    if not left:
        return _out(solve(A.mT, B.mT).mT, out)
    if B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1])):
        return _out(_f.Solve.apply(A, B.unsqueeze(-1)).squeeze(-1), out)
    return _out(_f.Solve.apply(A, B), out)


def det(A, *, out=None):
    """The determinant of each matrix of A (..., n, n); dA = g det(A) A^-T (A invertible)."""
    return _out(_f.Det.apply(A), out)


def slogdet(A, *, out=None):
    """(sign, logabsdet) of each matrix of A; logabsdet differentiable (dA = g A^-T)."""
    sign, logabs = _f.Slogdet.apply(A)
    return SlogdetResult(sign, logabs)


def cholesky(A, *, upper=False, out=None):
    """The Cholesky factor L (A = L L^T) or, with upper, U (A = U^T U) of each symmetric
    positive-definite matrix of A. LinAlgError when one is not positive-definite."""
    return _out(_f.Cholesky.apply(A, bool(upper)), out)


def qr(A, mode="reduced", *, out=None):
    """Q, R of each matrix of A (..., m, n): mode 'reduced' (Q (m, k), R (k, n)), 'complete'
    (Q (m, m), R (m, n)) or 'r' (an empty Q). RuntimeError for another mode."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    q, r = _f.QR.apply(A, mode)
    return QRResult(q, r)


def svd(A, full_matrices=True, *, driver=None, out=None):
    """U, S, Vh with A = U diag(S) Vh for each matrix of A (..., m, n), S descending."""
    u, s, vh = _f.SVD.apply(A, bool(full_matrices))
    return SVDResult(u, s, vh)


def svdvals(A, *, driver=None, out=None):
    """The singular values (descending) of each matrix of A; dA = U diag(g) Vh."""
    return _out(_f.SVD.apply(A, False)[1], out)


def eigh(A, UPLO="L", *, out=None):  # noqa: N803  (PyTorch's name)
    """Eigenvalues (ascending) and eigenvectors (columns) of each symmetric matrix of A, from
    its lower (UPLO 'L') or upper ('U') triangle."""
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    w, v = _f.Eigh.apply(A, UPLO)
    return EighResult(w, v)


def eigvalsh(A, UPLO="L", *, out=None):  # noqa: N803
    """The eigenvalues (ascending) of each symmetric matrix of A; see eigh."""
    return _out(eigh(A, UPLO)[0], out)


def _tol(S, m, n, atol, rtol):
    """max(atol, rtol * max(S)) per matrix, PyTorch's defaults (rtol = max(m, n) * eps when
    both are None, else 0 where not given), shaped (..., 1)."""
    eps = 2.220446049250313e-16 if S.dtype == carray.float64 else 1.1920929e-07
    if rtol is None:
        rtol = max(m, n) * eps if atol is None or atol == 0 else 0.0
    smax = S.amax(-1, keepdim=True) if S.shape[-1] else S.sum(-1, keepdim=True)
    tol = smax * rtol
    if atol is not None:
        tol = tol.clamp(min=atol) if not isinstance(atol, Tensor) else \
            _tf.maximum(tol, atol.unsqueeze(-1))
    return tol


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The pseudo-inverse of each matrix of A (..., m, n) from its SVD, singular values at most
    max(atol, rtol * max(S)) dropped (differentiable through the SVD)."""
    m, n = A.shape[-2:]
    if m == 0 or n == 0:
        return _out(A.mT * 0, out)
    U, S, Vh = svd(A, full_matrices=False)
    keep = S > _tol(S.detach(), m, n, atol, rtol)
    sinv = _tf.where(keep, 1 / _tf.where(keep, S, 1.0), 0.0)
    return _out((Vh.mT * sinv.unsqueeze(-2)).matmul(U.mT), out)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The number of singular values of each matrix of A above max(atol, rtol * max(S))
    (an int64 tensor; not differentiable)."""
    S = svdvals(A.detach())
    m, n = A.shape[-2:]
    return _out((S > _tol(S, m, n, atol, rtol)).sum(-1), out)


def matrix_power(A, n, *, out=None):
    """A multiplied by itself n times (repeated squaring); n = 0 the identity, n < 0 powers of
    inv(A). RuntimeError for a non-square A."""
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {tuple(A.shape[-2:])} matrices")
    if n == 0:
        eye = carray.eye(A.shape[-1], dtype=A.array.dtype, device=A.array.device)
        return _out(Tensor._wrap(carray.ascontiguousarray(carray.broadcast_to(eye, A.array.shape))),
                    out)
    if n < 0:
        A, n = inv(A), -n
    result, z = None, A
    while True:
        if n & 1:
            result = z if result is None else result.matmul(z)
        n >>= 1
        if not n:
            break
        z = z.matmul(z)
    return _out(result if result is not A else result.clone(), out)


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of A X = B (B (..., m, k) or (m,)), as pinv(A) @ B with
    PyTorch's default CPU driver's results: residuals and singular_values empty, rank given."""
    vector = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2:]
    X = pinv(A, rtol=rcond).matmul(Bm)
    empty = Tensor._wrap(carray.empty((0,), dtype=A.array.dtype, device=A.array.device))
    rank = matrix_rank(A, rtol=rcond)
    return LstsqResult(X.squeeze(-1) if vector else X, empty, rank, empty)


def cross(input, other, *, dim=-1, out=None):  # noqa: A002
    """The cross product of 3-vectors along dim, other dims broadcast. RuntimeError unless
    both have size 3 there."""
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions "
                           f"(got {input.ndim} and {other.ndim})")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    shape = carray.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    d = dim % len(shape)
    a, b = input.expand(*shape), other.expand(*shape)
    pick = [(slice(None),) * d + (i,) for i in range(3)]
    a = [a[k] for k in pick]
    b = [b[k] for k in pick]
    parts = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    return _out(_tf.stack(parts, d), out)


def vecdot(x, y, *, dim=-1, out=None):
    """sum(x * y) over dim, the other dims broadcast."""
    return _out((x * y).sum(dim), out)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal of each matrix of A (a view, as torch.diagonal)."""
    return A.diagonal(offset, dim1, dim2)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with T X = B (left) or X T = B, T the upper or lower triangle of A (its diagonal
    taken as ones with unitriangular); the gradient reaches only that triangle."""
    n = A.shape[-1]
    if unitriangular:
        T = (A.triu(1) if upper else A.tril(-1)) + _f._eye_like(A, n)
    else:
        T = A.triu() if upper else A.tril()
    if left:
        return _out(_f.Solve.apply(T, B), out)
    return _out(_f.Solve.apply(T.mT, B.mT).mT, out)


def multi_dot(tensors, *, out=None):
    """tensors[0] @ tensors[1] @ ...; the first may be 1-d (a row), the last 1-d (a column).
    RuntimeError for fewer than two tensors."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    result = tensors[0]
    for t in tensors[1:]:
        result = result.matmul(t)
    return _out(result, out)


def cond(A, p=None, *, out=None):
    """The condition number of each matrix of A: p None / 2 / -2 from the singular values,
    else matrix_norm(A, p) * matrix_norm(inv(A), p)."""
    if p is None or p in (2, -2):
        s = svdvals(A)
        big, small = s[..., 0], s[..., -1]
        return _out(big / small if p != -2 else small / big, out)
    return _out(matrix_norm(A, p) * matrix_norm(inv(A), p), out)
