"""Cumulative sums and products, and sorting (sort, argsort, topk), with their gradients.

Sorting is always stable (carray's merge sort): ascending puts NaN last, descending (the
stable ascending sort of the reversed dim, reversed back) puts NaN first and keeps ties in
their original order, as PyTorch's stable=True. The gradient of sorted values goes back to the
positions they came from (IndexAdd, the adjoint of gather).
"""

import collections

import carray
from carray.ops._sort import sort_with_indices

from autograd.function import Function
from autograd.ops.arith import Where
from autograd.ops.shape import IndexAdd
from autograd.ops._util import along_dim_key, norm_dim, wrap

# what sort and topk return (torch.return_types.sort / .topk)
SortResult = collections.namedtuple("sort", ["values", "indices"])
TopkResult = collections.namedtuple("topk", ["values", "indices"])


class _Builtin(Function):
    _trusted = True


def _reverse_cumsum(g, d):
    """out_i = sum of g_j over j >= i along dim d (the adjoint of cumsum)."""
    return g.flip((d,)).cumsum(d).flip((d,))


class Cumsum(_Builtin):
    """x.cumsum(dim) (in x's dtype: the caller casts);  dx = reverse cumsum of g along dim."""

    @staticmethod
    def forward(ctx, x, dim):
        a = x.data
        ctx.d = norm_dim(dim, a.ndim)
        return wrap(carray.cumsum(a, axis=ctx.d if a.ndim else None).reshape(a.shape))

    @staticmethod
    def backward(ctx, g):
        return (_reverse_cumsum(g, ctx.d) if g.data.ndim else g), None


class Cumprod(_Builtin):
    """y = x.cumprod(dim);  dx_k = sum over i >= k of g_i * prod_{j <= i, j != k} x_j, exact
    with zeros: before a lane's first zero z it is revcumsum(g * y)_k / x_k; at z it is
    revcumsum(g * y')_z, y' the cumprod with x_z set to 1; after z it is 0."""

    @staticmethod
    def forward(ctx, x, dim):
        a = x.data
        ctx.d = norm_dim(dim, a.ndim)
        ctx.save_for_backward(x)
        return wrap(carray.cumprod(a, axis=ctx.d if a.ndim else None).reshape(a.shape))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        d = ctx.d
        if x.data.ndim == 0:
            return g, None
        zero = x == 0
        zeros_so_far = zero.cumsum(d)
        before = zeros_so_far == 0
        first = zero.logical_and(zeros_so_far == 1)
        g_before = _reverse_cumsum(g * x.cumprod(d), d) / Where.apply(before, x, 1.0)
        g_first = _reverse_cumsum(g * Where.apply(first, 1.0, x).cumprod(d), d)
        return Where.apply(before, g_before, Where.apply(first, g_first, 0.0)), None


def sorted_along(a, d, descending):
    """(values, int64 indices) of the carray Array a sorted stably along dim d (a 0-d array is
    its own sort)."""
    if a.ndim == 0:
        return a.copy(), carray.zeros((), dtype=carray.int64, device=a.device)
    if not descending:
        return sort_with_indices(a, d)
    values, idx = sort_with_indices(carray.flip(a, d), d)
    return carray.flip(values, d).copy(), carray.subtract(a.shape[d] - 1, carray.flip(idx, d))


class Sort(_Builtin):
    """(values, indices) of x sorted along dim, the first k of them when k is not None (topk);
    dx = g added at the positions the values came from."""

    @staticmethod
    def forward(ctx, x, dim, descending, k):
        a = x.data
        d = norm_dim(dim, a.ndim)
        values, idx = sorted_along(a, d, descending)
        if k is not None and a.ndim:
            first = (slice(None),) * d + (slice(0, k),)
            values, idx = values[first].copy(), idx[first].copy()
        ctx.shape, ctx.d, ctx.idx = a.shape, d, idx
        indices = wrap(idx)
        ctx.mark_non_differentiable(indices)
        return wrap(values), indices

    @staticmethod
    def backward(ctx, g, _):
        shape, d, idx = ctx.shape, ctx.d, ctx.idx
        if not shape:
            return g, None, None, None
        return IndexAdd.apply(shape, along_dim_key(idx, d), g), None, None, None
