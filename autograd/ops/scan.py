"""Scans: cumulative sums and products along a dim, with their gradients."""

import carray
from autograd.ops._util import Builtin, norm_dim, wrap
from autograd.ops.elementwise import Where

__all__ = ["Cumprod", "Cumsum"]


def _reverse_cumsum(g, d):
    """out_i = sum of g_j over j >= i along dim d (the adjoint of cumsum)."""
    return g.flip((d,)).cumsum(d).flip((d,))


class Cumsum(Builtin):
    """x.cumsum(dim) (in x's dtype: the caller casts);  dx = reverse cumsum of g along dim."""

    autocast_policy = "float32_gpu"

    @staticmethod
    def forward(ctx, x, dim):
        a = x.array
        ctx.d = norm_dim(dim, a.ndim)
        return wrap(carray.cumsum(a, axis=ctx.d if a.ndim else None).reshape(a.shape))

    @staticmethod
    def backward(ctx, g):
        return (_reverse_cumsum(g, ctx.d) if g.array.ndim else g), None


class Cumprod(Builtin):
    """y = x.cumprod(dim);  dx_k = sum over i >= k of g_i * prod_{j <= i, j != k} x_j, exact
    with zeros: before a lane's first zero z it is revcumsum(g * y)_k / x_k; at z it is
    revcumsum(g * y')_z, y' the cumprod with x_z set to 1; after z it is 0."""

    autocast_policy = "float32_gpu"

    @staticmethod
    def forward(ctx, x, dim):
        a = x.array
        ctx.d = norm_dim(dim, a.ndim)
        ctx.save_for_backward(x)
        return wrap(carray.cumprod(a, axis=ctx.d if a.ndim else None).reshape(a.shape))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        d = ctx.d
        if x.array.ndim == 0:
            return g, None
        zero = x == 0
        zeros_so_far = zero.cumsum(d)
        before = zeros_so_far == 0
        first = zero.logical_and(zeros_so_far == 1)
        g_before = _reverse_cumsum(g * x.cumprod(d), d) / Where.apply(before, x, 1.0)
        g_first = _reverse_cumsum(g * Where.apply(first, 1.0, x).cumprod(d), d)
        return Where.apply(before, g_before, Where.apply(first, g_first, 0.0)), None
