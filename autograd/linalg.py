"""torch.linalg's norms and matmul (h12): vector_norm, matrix_norm (fro, 1, -1, inf, -inf),
norm, matmul, composed from autograd's ops (the vector norm's gradient is 0 where it is 0)."""

import math

from autograd.ops import torch_functions as _tf
from autograd.ops.norms import LinalgVectorNorm as _VectorNorm

__all__ = ["matmul", "matrix_norm", "norm", "vector_norm"]

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
    -inf (max / min row abs sum). RuntimeError for fewer than 2 dims; NotImplementedError for
    'nuc', 2 and -2 (they need singular values)."""
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if dtype is not None:
        A = A.to(dtype)
    d0, d1 = (d % A.ndim for d in dim)
    if ord == "fro":
        result = vector_norm(A, 2, (d0, d1), keepdim)
    elif ord in ("nuc", 2, -2):
        raise NotImplementedError(f"linalg.matrix_norm: ord={ord!r} (singular values) is not "
                                  f"supported")
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
