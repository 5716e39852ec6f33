"""The differentiable matrix factorisations behind autograd.linalg (torch.linalg): inv, solve,
det, slogdet, cholesky, qr, svd and eigh, forward by carray.linalg, backward by the standard
analytic formulas (real matrices), written with Tensor ops so that create_graph works.

Conventions: g is an output's gradient (None where none arrived), E_ij = w_j - w_i for the
eigen- and singular values, F = 1 / E off the diagonal and 0 on it.
"""

import carray
from autograd._defaults import is_floating
from autograd.factories import eye
from autograd.ops._util import Builtin, meta, reduce_grad, wrap
from autograd.ops.elementwise import Where
from autograd.ops.shape import Cat

__all__ = ["Cholesky", "Det", "Eigh", "Inv", "LinAlgError", "QR", "SVD", "Slogdet", "Solve",
           "det", "inverse", "logdet", "slogdet"]

la = carray.linalg


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a singular or not positive-definite matrix, or a
    decomposition that did not converge (a RuntimeError, as PyTorch's)."""


def _run(name, fn, *arrays, **kw):
    """fn(*arrays, **kw) with PyTorch's errors: RuntimeError for a non-float input or bad
    shapes, LinAlgError for what carray.linalg raises LinAlgError for."""
    for a in arrays:
        if not is_floating(a.dtype):
            raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as "
                               f"input. Got {a.dtype.name}")
    try:
        return fn(*arrays, **kw)
    except la.LinAlgError as e:
        msg = str(e)
        if "square" in msg or "dimensional" in msg:
            raise RuntimeError(f"linalg.{name}: {msg}") from None
        raise LinAlgError(f"linalg.{name}: {msg}") from None
    except (ValueError, TypeError) as e:
        raise RuntimeError(f"linalg.{name}: {e}") from None


def _eye_like(t, n):
    return eye(n, dtype=t.dtype, device=t.device)


def _off_diagonal_inverse(d, n):
    """F with F_ij = 1 / (d_j - d_i) for i != j and 0 on the diagonal (d: (..., n))."""
    e = d.unsqueeze(-2) - d.unsqueeze(-1)
    i = _eye_like(d, n)
    return (1 - i) / (e + i)


def _solve(A, B):
    return Solve.apply(A, B)


class Inv(Builtin):
    """Y = A^-1;  dA = -Y^T g Y^T."""

    @staticmethod
    def forward(ctx, A):
        y = wrap(_run("inv", la.inv, A.array))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        yt = y.mT
        return -(yt.matmul(g).matmul(yt))


class Solve(Builtin):
    """X = A^-1 B for B (..., n, k), batch axes broadcast;  dB = A^-T g, dA = -dB X^T, each
    summed back to its operand's shape."""

    @staticmethod
    def forward(ctx, A, B):
        x = wrap(_run("solve", la.solve, A.array, B.array))
        ctx.save_for_backward(A, x)
        ctx.a, ctx.b = meta(A), meta(B)
        return x

    @staticmethod
    def backward(ctx, g):
        A, x = ctx.saved_tensors
        gb = Solve.apply(A.mT, g)
        ga = -gb.matmul(x.mT) if ctx.needs_input_grad[0] else None
        return reduce_grad(ga, ctx.a) if ga is not None else None, reduce_grad(gb, ctx.b)


class Det(Builtin):
    """d = det A;  dA = g d A^-T (A must be invertible for the gradient)."""

    @staticmethod
    def forward(ctx, A):
        d = wrap(_run("det", la.det, A.array))
        ctx.save_for_backward(A, d)
        return d

    @staticmethod
    def backward(ctx, g):
        A, d = ctx.saved_tensors
        return (g * d).unsqueeze(-1).unsqueeze(-1) * Inv.apply(A).mT


class Slogdet(Builtin):
    """(sign, log|det A|);  dA = g_logabsdet A^-T (sign has no gradient)."""

    @staticmethod
    def forward(ctx, A):
        sign, logabs = _run("slogdet", la.slogdet, A.array)
        sign, logabs = wrap(sign), wrap(logabs)
        ctx.save_for_backward(A)
        ctx.mark_non_differentiable(sign)
        return sign, logabs

    @staticmethod
    def backward(ctx, gsign, glog):
        if glog is None:
            return None
        (A,) = ctx.saved_tensors
        return glog.unsqueeze(-1).unsqueeze(-1) * Inv.apply(A).mT


class Cholesky(Builtin):
    """A = L L^T (upper: A = U^T U, L = U^T);  with M = tril(L^T gL) made symmetric with its
    diagonal halved, dA = L^-T M L^-1 (PyTorch's cholesky_backward)."""

    @staticmethod
    def forward(ctx, A, upper):
        out = wrap(_run("cholesky", la.cholesky, A.array, upper=upper))
        ctx.upper = upper
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        L, gL = (out.mT, g.mT) if ctx.upper else (out, g)
        Lt = L.mT
        m = Lt.matmul(gL).tril()
        m = 0.5 * (m + m.tril(-1).mT)
        x = _solve(Lt, m)                       # L^-T M
        return _solve(Lt, x.mT).mT, None        # (L^-T M) L^-1


def _qr_square_or_tall(Q, R, gQ, gR):
    """dA = (gQ + Q copyltu(M)) R^-T with M = R gR^T - gQ^T Q, copyltu(M) = tril(M) +
    tril(M, -1)^T, for A = Q R with R square."""
    m = R.matmul(gR.mT) - gQ.mT.matmul(Q)
    c = m.tril() + m.tril(-1).mT
    return _solve(R, (gQ + Q.matmul(c)).mT).mT


class QR(Builtin):
    """A = Q R (Householder, reduced or complete);  for m >= n the formula of
    _qr_square_or_tall; for m < n, A = [X Y] with X = Q R1: dY = Q gR2 and dX from the square
    formula with gQ + Y gR2^T. Not differentiable for mode 'complete' with m > n, or 'r'."""

    @staticmethod
    def forward(ctx, A, mode):
        a = A.array
        if mode == "r":
            r = wrap(_run("qr", la.qr, a, mode="r"))
            q = wrap(carray.empty((0,), dtype=a.dtype, device=a.device))
        else:
            q, r = (wrap(t) for t in _run("qr", la.qr, a, mode=mode))
        ctx.mode = mode
        ctx.save_for_backward(A, q, r)
        return q, r

    @staticmethod
    def backward(ctx, gQ, gR):
        A, Q, R = ctx.saved_tensors
        m, n = A.shape[-2:]
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not "
                               "computed when mode='r'. Please use linalg.qr(A, mode='reduced') "
                               "if you are going to differentiate through linalg.qr.")
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols.")
        gQ = gQ if gQ is not None else Q.detach() * 0
        gR = gR if gR is not None else R.detach() * 0
        if m >= n:
            return _qr_square_or_tall(Q, R, gQ, gR), None
        Y = A[..., m:]
        gR2 = gR[..., m:]
        gx = _qr_square_or_tall(Q, R[..., :m], gQ + Y.matmul(gR2.mT), gR[..., :m])
        return Cat.apply(-1, gx, Q.matmul(gR2)), None


class SVD(Builtin):
    """A = U diag(S) Vh (one-sided Jacobi);  with the first k = min(m, n) singular vectors,
    dA = U [diag(gS) + (F o (U^T gU - gU^T U)) S + S (F o (V^T gV - gV^T V))] Vh
         + (I - U U^T) gU S^-1 Vh + U S^-1 gVh (I - V Vh)     (F_ij = 1 / (s_j^2 - s_i^2)),
    PyTorch's svd_backward for real inputs (the gradient of the extra columns of a
    full_matrices result is ignored, as PyTorch's)."""

    @staticmethod
    def forward(ctx, A, full_matrices):
        u, s, vh = (wrap(t) for t in _run("svd", la.svd, A.array, full_matrices=full_matrices))
        ctx.save_for_backward(u, s, vh)
        return u, s, vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx.saved_tensors
        m, k, n = U.shape[-2], S.shape[-1], Vh.shape[-1]
        if U.shape[-1] != k:
            U, gU = U[..., :k], (gU[..., :k] if gU is not None else None)
        if Vh.shape[-2] != k:
            Vh, gVh = Vh[..., :k, :], (gVh[..., :k, :] if gVh is not None else None)
        i = _eye_like(S, k)
        inner = gS.unsqueeze(-1) * i if gS is not None else None
        extra = None
        if gU is not None or gVh is not None:
            F = _off_diagonal_inverse(S * S, k)
            sinv = 1 / S
        if gU is not None:
            utgu = U.mT.matmul(gU)
            j = F * (utgu - utgu.mT) * S.unsqueeze(-2)
            inner = j if inner is None else inner + j
            if m > k:
                extra = (gU - U.matmul(utgu)).matmul(sinv.unsqueeze(-1) * Vh)
        if gVh is not None:
            vtgv = Vh.matmul(gVh.mT)
            j = S.unsqueeze(-1) * (F * (vtgv - vtgv.mT))
            inner = j if inner is None else inner + j
            if n > k:
                t = U.matmul(sinv.unsqueeze(-1) * (gVh - gVh.matmul(Vh.mT).matmul(Vh)))
                extra = t if extra is None else extra + t
        if inner is None:
            return extra, None
        ga = U.matmul(inner).matmul(Vh)
        return (ga if extra is None else ga + extra), None


class Eigh(Builtin):
    """A = V diag(w) V^T for symmetric A (one triangle read);
    dA = V (diag(gw) + F o skew(V^T gV)) V^T with skew(M) = (M - M^T) / 2 (symmetric, as
    PyTorch's)."""

    @staticmethod
    def forward(ctx, A, uplo):
        w, v = (wrap(t) for t in _run("eigh", la.eigh, A.array, UPLO=uplo))
        ctx.save_for_backward(w, v)
        return w, v

    @staticmethod
    def backward(ctx, gw, gV):
        w, V = ctx.saved_tensors
        n = w.shape[-1]
        inner = None
        if gV is not None:
            m = V.mT.matmul(gV)
            inner = 0.5 * (m - m.mT) * _off_diagonal_inverse(w, n)
        if gw is not None:
            d = gw.unsqueeze(-1) * _eye_like(w, n)
            inner = d if inner is None else inner + d
        if inner is None:
            return None, None
        return V.matmul(inner).matmul(V.mT), None


# ---------------------------------------------------------------- torch.* and Tensor methods

def det(input):  # noqa: A002  (PyTorch's name)
    """torch.det: the determinant of each matrix of input (linalg.det)."""
    return Det.apply(input)


def inverse(input):  # noqa: A002
    """torch.inverse: the inverse of each matrix of input (linalg.inv)."""
    return Inv.apply(input)


def slogdet(input):  # noqa: A002
    """torch.slogdet: (sign, logabsdet) of each matrix of input (linalg.slogdet)."""
    return Slogdet.apply(input)


def logdet(input):  # noqa: A002
    """torch.logdet: log det of each matrix of input: NaN where det < 0, -inf where it is 0."""
    sign, logabs = Slogdet.apply(input)
    return Where.apply(sign < 0, float("nan"), logabs)
