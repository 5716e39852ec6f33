"""The vector p-norm behind norm, linalg.vector_norm/matrix_norm, normalize and the distances,
with PyTorch's gradient: 0 (not NaN) where the norm is 0."""

import math

import carray
from autograd._defaults import is_floating, scalar_type_name
from autograd.ops._util import Builtin, norm_dims, wrap
from autograd.ops.elementwise import Where
from autograd.ops.reduce import _expand_back, _kept_shape

__all__ = ["LinalgVectorNorm"]


class LinalgVectorNorm(Builtin):
    """y = (sum |x|^p)^(1/p) over dims (p = 0 counts non-zeros, +-inf is max/min |x|);
    dx = g sign(x) |x|^(p-1) / y^(p-1), taken as 0 where y == 0 (PyTorch's norm_backward),
    for p = inf: g sign(x) spread evenly over the elements where |x| == y; none for p = 0."""

    @staticmethod
    def forward(ctx, x, p, dim, keepdim):
        a = x.array
        if not is_floating(a.dtype):
            raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                               f"as input. Got {scalar_type_name(x.dtype)}")
        dims = norm_dims(dim, a.ndim)
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        kw = {"axis": dims, "keepdims": keepdim}
        if p == 2:
            y = carray.sqrt(carray.sum(carray.multiply(a, a), **kw))
        elif p == 1:
            y = carray.sum(carray.abs(a), **kw)
        elif p == 0:
            y = carray.sum(carray.not_equal(a, 0), dtype=a.dtype, **kw)
        elif math.isinf(p) and a.size == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {p} norm on an empty "
                               f"tensor because the operation does not have an identity")
        elif p == math.inf:
            y = carray.max(carray.abs(a), **kw)
        elif p == -math.inf:
            y = carray.min(carray.abs(a), **kw)
        else:
            y = carray.power(carray.sum(carray.power(carray.abs(a), p), **kw), 1.0 / p)
        out = wrap(y)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        p, shape = ctx.p, x.shape
        if p == 0:  # PyTorch gives no gradient (x.grad stays None)
            return None, None, None, None
        g = _expand_back(g, shape, ctx.dims, ctx.keepdim)
        if not ctx.keepdim and ctx.dims:
            y = y.reshape(_kept_shape(shape, ctx.dims))
        if p == 1:
            return x.sign() * g, None, None, None
        if math.isinf(p):
            hit = (x.abs() == y).to(x.dtype)
            count = hit.sum(ctx.dims, keepdim=True)
            return x.sign() * hit * g / count, None, None, None
        zero = y == 0
        if p == 2:
            return x * Where.apply(zero, 0.0, g / y), None, None, None
        if p < 1:
            ax = x.abs()
            scaled = x.sign() * Where.apply(x == 0, 0.0, ax.pow(p - 1))
            return scaled * g * y.pow(1 - p), None, None, None
        scaled = x.sign() * x.abs().pow(p - 1) if p < 2 else x * x.abs().pow(p - 2)
        return scaled * Where.apply(zero, 0.0, g / y.pow(p - 1)), None, None, None
