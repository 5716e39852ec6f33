"""Sorting (sort, argsort, topk), with its gradient.

Sorting is always stable (carray's merge sort): ascending puts NaN last, descending (the
stable ascending sort of the reversed dim, reversed back) puts NaN first and keeps ties in
their original order, as PyTorch's stable=True. The gradient of sorted values goes back to the
positions they came from (IndexAdd, the adjoint of gather).
"""

import collections

import carray
from autograd.ops._util import Builtin, along_dim_key, norm_dim, wrap
from autograd.ops.shape import IndexAdd
from carray.ops._sort import sort_with_indices

__all__ = ["Sort", "SortResult", "TopkResult"]

# what sort and topk return (torch.return_types.sort / .topk)
SortResult = collections.namedtuple("sort", ["values", "indices"])
TopkResult = collections.namedtuple("topk", ["values", "indices"])


def sorted_along(a, d, descending):
    """(values, int64 indices) of the carray Array a sorted stably along dim d (a 0-d array is
    its own sort)."""
    if a.ndim == 0:
        return a.copy(), carray.zeros((), dtype=carray.int64, device=a.device)
    if not descending:
        return sort_with_indices(a, d)
    values, idx = sort_with_indices(carray.flip(a, d), d)
    return carray.flip(values, d).copy(), carray.subtract(a.shape[d] - 1, carray.flip(idx, d))


class Sort(Builtin):
    """(values, indices) of x sorted along dim, the first k of them when k is not None (topk);
    dx = g added at the positions the values came from."""

    @staticmethod
    def forward(ctx, x, dim, descending, k):
        a = x.array
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
