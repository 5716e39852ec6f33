"""The array API's searching and set functions composed from carray's ops.

nonzero, count_nonzero, searchsorted (a vectorised binary search: log2(n) gathers), isin,
unique_all, unique_counts, unique_inverse, unique_values (one stable sort each). NaNs sort last,
as NumPy; unique counts every NaN as distinct (NaN != NaN), as NumPy 2's unique_* do.
"""

import math
from typing import NamedTuple

from carray.core._array import Array, asarray
from carray.ops import _creation, _join, _sort
from carray.ops import _ufunc as uf
from carray.ops._cumulative import cumsum


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def _arr(x):
    return x if isinstance(x, Array) else asarray(x)


def nonzero(x, /):
    """The indices of x's non-zero elements: a tuple of int64 arrays, one per dimension, in
    C order. ValueError for a 0-d x (NumPy 2)."""
    x = _arr(x)
    if x.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d("
                         "scalar).nonzero() instead.")
    flat = _creation.arange(x.size, device=x.device)[uf.not_equal(x.reshape(-1), 0)]
    out = []
    for n in reversed(x.shape):
        out.append(uf.remainder(flat, n) if n else flat)
        flat = uf.floor_divide(flat, n) if n else flat
    return tuple(reversed(out))


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """The number of non-zero elements over `axis` (int, tuple or None), as an int64 array."""
    x = _arr(x)
    return uf.sum(uf.not_equal(x, 0), axis=axis, dtype="int64", keepdims=keepdims)


def _before(a, b):
    """a < b in sort order (NaNs last)."""
    return uf.logical_or(uf.less(a, b), uf.logical_and(uf.isnan(b), uf.logical_not(uf.isnan(a))))


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """Where x2's elements would be inserted into the sorted 1-d x1 to keep it sorted: the
    first such place ('left') or the last ('right'); `sorter` sorts x1 (argsort's result).
    int64 indices of x2's shape. ValueError for a bad side or a non-1-d x1."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    x1 = _arr(x1)
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be 1-d, got shape {x1.shape}")
    if sorter is not None:
        x1 = x1[sorter]
    x2 = x2 if isinstance(x2, Array) else asarray(x2, device=x1.device)
    n = x1.shape[0]
    lo = _creation.zeros(x2.shape, dtype="int64", device=x1.device)
    hi = _creation.full(x2.shape, n, dtype="int64", device=x1.device)
    if n == 0:
        return lo
    for _ in range(int(math.log2(n)) + 2):
        mid = uf.floor_divide(uf.add(lo, hi), 2)
        v = x1[uf.minimum(mid, n - 1)]
        go_right = _before(v, x2) if side == "left" else uf.logical_not(_before(x2, v))
        active = uf.less(lo, hi)
        lo = uf.where(uf.logical_and(active, go_right), uf.add(mid, 1), lo)
        hi = uf.where(uf.logical_and(active, uf.logical_not(go_right)), mid, hi)
    return lo


def isin(x1, x2, /, *, invert=False):
    """True where an element of x1 is among x2's elements (NaN never is); `invert` negates."""
    if not isinstance(x1, Array) and not isinstance(x2, Array):
        raise TypeError("isin: at least one of x1, x2 must be an array")
    dev = (x1 if isinstance(x1, Array) else x2).device
    x1 = x1 if isinstance(x1, Array) else asarray(x1, device=dev)
    x2 = x2 if isinstance(x2, Array) else asarray(x2, device=dev)
    s = _sort.sort(x2.reshape(-1))
    if s.shape[0] == 0:
        found = _creation.zeros(x1.shape, dtype="bool", device=x1.device)
    else:
        i = searchsorted(s, x1)
        found = uf.equal(s[uf.minimum(i, s.shape[0] - 1)], x1)
    return uf.logical_not(found) if invert else found


def _sorted_groups(x):
    """(flat sorted values, the sorting permutation, the mask of each group's first element)."""
    flat = x.reshape(-1)
    perm = _sort.argsort(flat)
    s = flat[perm]
    head = _creation.ones((1,), dtype="bool", device=x.device)[: s.shape[0]]
    mask = _join.concatenate([head, uf.not_equal(s[1:], s[:-1])])
    return s, perm, mask


def _counts(mask, n):
    starts = _creation.arange(n, device=mask.device)[mask]
    ends = _join.concatenate([starts[1:], _creation.full((1,), n, dtype="int64",
                                                         device=mask.device)])
    return uf.subtract(ends, starts)


def _inverse(x, perm, mask):
    group = uf.subtract(cumsum(mask), 1)
    return group[_sort.argsort(perm)].reshape(x.shape)


def unique_values(x, /):
    """The distinct elements of x, sorted (1-d)."""
    s, _, mask = _sorted_groups(_arr(x))
    return s[mask]


def unique_counts(x, /):
    """(values, counts): the distinct elements of x, sorted, and how often each occurs."""
    s, _, mask = _sorted_groups(_arr(x))
    return UniqueCountsResult(s[mask], _counts(mask, s.shape[0]))


def unique_inverse(x, /):
    """(values, inverse_indices): the distinct elements, and for each element of x the index
    of its value in values (x's shape)."""
    x = _arr(x)
    s, perm, mask = _sorted_groups(x)
    return UniqueInverseResult(s[mask], _inverse(x, perm, mask))


def unique_all(x, /):
    """(values, indices, inverse_indices, counts): unique_counts and unique_inverse together,
    with the index of each value's first occurrence in the flattened x."""
    x = _arr(x)
    s, perm, mask = _sorted_groups(x)
    return UniqueAllResult(s[mask], perm[mask], _inverse(x, perm, mask),
                           _counts(mask, s.shape[0]))
