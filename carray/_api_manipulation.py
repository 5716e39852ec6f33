"""The array API's manipulation, statistics and creation functions composed from carray's ops.

concat, take, take_along_axis, repeat, roll, tile, unstack, meshgrid, tril, triu, diff,
cumulative_sum, cumulative_prod; and the NumPy functions whose signatures the standard extends,
re-exported under the same names with the standard's keywords added: reshape(copy=),
sort/argsort(descending=), std/var(correction=), clip(min=, max=).
"""

import builtins

from carray.core import _array as core
from carray.core._array import Array, AxisError, asarray
from carray.ops import _creation, _join, _sort
from carray.ops import _cumulative as _cum
from carray.ops import _ufunc as uf

_NOTHING = object()

# the functions here that carray/__init__.py exports in place of the ops' plain versions
EXTENDED = ("reshape", "sort", "argsort", "std", "var", "clip")


def _arr(x):
    return x if isinstance(x, Array) else asarray(x)


def _axis(axis, ndim, name):
    if not -ndim <= axis < ndim:
        raise AxisError(f"{name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _along(axis, ndim, index):
    """The index tuple that applies `index` on dimension `axis` of an ndim-d array."""
    return (slice(None),) * axis + (index,) + (slice(None),) * (ndim - axis - 1)


# -- the NumPy functions with the standard's keywords -------------------------------------------

def reshape(a, /, shape=None, order="C", *, copy=None):
    """a with a new shape (NumPy's reshape); copy=True always copies, copy=False never does
    (ValueError when a view is impossible), None copies only when needed."""
    if shape is None:
        raise TypeError("reshape() missing required argument 'shape'")
    a = _arr(a)
    if copy is False:
        try:
            return a.view(shape) if order == "C" else core.reshape(a, shape, order)
        except RuntimeError:
            raise ValueError(f"reshape: cannot reshape array of shape {a.shape} into "
                             f"{shape} without copying (copy=False)") from None
    out = core.reshape(a, shape, order)
    if copy and (out is a or out.base is not None):     # a view of a's memory
        out = out.copy()
    return out


def sort(a, /, axis=-1, kind=None, order=None, *, descending=False, stable=None):
    """A sorted copy along `axis` (NumPy's sort, always stable); descending=True sorts from
    largest to smallest keeping equal elements in their order."""
    if not descending:
        return _sort.sort(a, axis, kind, order, stable=stable)
    a = _arr(a)
    return _sort.sort(a, axis, kind, order, stable=stable) if a.ndim == 0 else \
        _join.flip(_sort.sort(a, axis, kind, order, stable=stable), axis=axis)


def argsort(a, /, axis=-1, kind=None, order=None, *, descending=False, stable=None):
    """The int64 indices that sort `a` along `axis` (NumPy's argsort, stable); descending=True
    orders from largest to smallest, equal elements in their original order."""
    if not descending:
        return _sort.argsort(a, axis, kind, order, stable=stable)
    a = _arr(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    if a.ndim == 0:
        return _sort.argsort(a, axis, kind, order)
    ax = _axis(axis, a.ndim, "argsort")
    n = a.shape[ax]
    idx = _join.flip(_sort.argsort(_join.flip(a, axis=ax), ax), axis=ax)
    return uf.subtract(n - 1, idx)


def _ddof(ddof, correction, name):
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError(f"{name}: ddof and correction can't be provided simultaneously")
    return correction


def var(a, /, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    """Variance over `axis` with `ddof` (the standard's `correction`) degrees of freedom removed
    (NumPy's var)."""
    return uf.var(a, axis, dtype, out, _ddof(ddof, correction, "var"), keepdims)


def std(a, /, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    """Standard deviation over `axis` (NumPy's std); correction= is ddof=."""
    return uf.std(a, axis, dtype, out, _ddof(ddof, correction, "std"), keepdims)


def clip(a, /, min=None, max=None, out=None, *, a_min=_NOTHING, a_max=_NOTHING):  # noqa: A002
    """a limited to [min, max] elementwise (the standard's names; NumPy's a_min=/a_max=
    keywords too); a copy when both are None. TypeError when a bound is given twice."""
    if a_min is not _NOTHING and min is not None or a_max is not _NOTHING and max is not None:
        raise TypeError("clip: pass each bound once (min= or a_min=, max= or a_max=)")
    lo = min if a_min is _NOTHING else a_min
    hi = max if a_max is _NOTHING else a_max
    a = _arr(a)
    if lo is None and hi is None:
        return a.copy() if out is None else uf.clip(a, a, None, out)
    return uf.clip(a, lo, hi, out)


# -- the standard's manipulation functions -------------------------------------------------------

def concat(arrays, /, *, axis=0):
    """Join arrays along an existing axis (axis=None: flattened), the standard's concatenate."""
    return _join.concatenate(arrays, axis=axis)


def take(x, indices, /, *, axis=None):
    """Elements of x at `indices` along `axis` (of the flattened x when axis is None); negative
    indices count from the end. IndexError for out-of-range indices."""
    x = _arr(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    if x.ndim == 0:
        raise ValueError("take: x must have at least one dimension")
    ax = _axis(axis, x.ndim, "take")
    idx = indices if isinstance(indices, Array) else asarray(indices, device=x.device)
    if idx.dtype.kind not in "iu":
        raise IndexError(f"take: indices must be integers, got dtype {idx.dtype.name}")
    return x[_along(ax, x.ndim, idx)]


def take_along_axis(x, indices, /, *, axis=-1):
    """x's elements at `indices` along `axis` (NumPy's take_along_axis); the other dimensions
    of x and indices broadcast. ValueError when their ranks differ."""
    x = _arr(x)
    if not isinstance(indices, Array) or indices.dtype.kind not in "iu":
        raise IndexError("take_along_axis: indices must be an integer array")
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices and x must have the same number of "
                         f"dimensions, got {indices.ndim} and {x.ndim}")
    ax = _axis(axis, x.ndim, "take_along_axis")
    index = []
    for d in range(x.ndim):
        if d == ax:
            index.append(indices)
        else:
            shape = [1] * x.ndim
            shape[d] = x.shape[d]
            index.append(_creation.arange(x.shape[d], device=x.device).reshape(shape))
    return x[tuple(index)]


def repeat(x, repeats, /, *, axis=None):
    """Each element of x repeated `repeats` times (an int, or one count per element along
    `axis`) along `axis` (the flattened x when axis is None). ValueError for negative counts."""
    x = _arr(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    ax = _axis(axis, x.ndim, "repeat") if x.ndim else 0
    if x.ndim == 0:
        x = x.reshape(1)
    n = x.shape[ax]
    counts = repeats.tolist() if isinstance(repeats, Array) else repeats
    if isinstance(counts, int):
        counts = [counts] * n
    elif len(counts) == 1:
        counts = counts * n
    if len(counts) != n:
        raise ValueError(f"repeat: got {len(counts)} repeats for an axis of length {n}")
    if builtins.any(c < 0 for c in counts):
        raise ValueError("repeat: repeats may not contain negative values")
    index = [i for i, c in enumerate(counts) for _ in range(c)]
    idx = asarray(index, dtype="int64", device=x.device)
    return x[_along(ax, x.ndim, idx)]


def roll(x, /, shift, *, axis=None):
    """x's elements shifted by `shift` along `axis` (int or tuple; flattened when None),
    wrapping around (NumPy's roll)."""
    x = _arr(x)
    if axis is None:
        return roll(x.reshape(-1), shift, axis=0).reshape(x.shape)
    shifts = shift if isinstance(shift, tuple) else (shift,)
    axes = axis if isinstance(axis, tuple) else (axis,)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("roll: 'shift' and 'axis' should be scalars or 1D sequences of the "
                         "same length")
    total = {}
    for s, a in zip(shifts, axes):
        a = _axis(a, x.ndim, "roll")
        total[a] = total.get(a, 0) + s
    out = x
    for a, s in total.items():
        n = x.shape[a]
        if n == 0 or s % n == 0:
            continue
        s %= n
        out = _join.concatenate([out[_along(a, x.ndim, slice(n - s, None))],
                                 out[_along(a, x.ndim, slice(0, n - s))]], axis=a)
    return out if out is not x else x.copy()


def tile(x, repetitions, /):
    """x repeated `repetitions` times along each axis (NumPy's tile)."""
    x = _arr(x)
    reps = tuple(repetitions) if isinstance(repetitions, (tuple, list)) else (repetitions,)
    nd = builtins.max(len(reps), x.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - x.ndim) + x.shape
    inter = []
    for s in shape:
        inter += [1, s]
    big = []
    for r, s in zip(reps, shape):
        big += [r, s]
    out = core.broadcast_to(x.reshape(tuple(inter)), tuple(big))
    return out.reshape(tuple(r * s for r, s in zip(reps, shape)))


def unstack(x, /, *, axis=0):
    """The slices of x along `axis`, as a tuple of views."""
    x = _arr(x)
    if x.ndim == 0:
        raise ValueError("unstack: x must have at least one dimension")
    ax = _axis(axis, x.ndim, "unstack")
    return tuple(x[_along(ax, x.ndim, i)] for i in range(x.shape[ax]))


def meshgrid(*arrays, indexing="xy", copy=True, sparse=False):
    """Coordinate arrays from 1-d arrays (NumPy's meshgrid), as a tuple; indexing 'xy'
    (Cartesian, the first two axes swapped) or 'ij' (matrix)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [_arr(a).reshape(-1) for a in arrays]
    nd = len(xs)
    out = []
    for i, a in enumerate(xs):
        shape = [1] * nd
        shape[i] = -1
        if indexing == "xy" and nd > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        out.append(a.reshape(shape))
    if not sparse:
        out = list(core.broadcast_arrays(*out))
    if copy:
        out = [a.copy() for a in out]
    return tuple(out)


def _tri_mask(x, k, lower):
    x = _arr(x)
    if x.ndim < 2:
        raise ValueError(f"{'tril' if lower else 'triu'}: x must have at least two "
                         f"dimensions, got shape {x.shape}")
    m, n = x.shape[-2:]
    rows = _creation.arange(m, device=x.device).reshape(m, 1)
    cols = _creation.arange(n, device=x.device).reshape(1, n)
    d = uf.subtract(cols, rows)
    keep = uf.less_equal(d, k) if lower else uf.greater_equal(d, k)
    return x, keep


def tril(x, /, *, k=0):
    """x with the elements above the k-th diagonal zeroed (the last two axes)."""
    x, keep = _tri_mask(x, k, True)
    return uf.where(keep, x, _creation.zeros((), dtype=x.dtype, device=x.device))


def triu(x, /, *, k=0):
    """x with the elements below the k-th diagonal zeroed (the last two axes)."""
    x, keep = _tri_mask(x, k, False)
    return uf.where(keep, x, _creation.zeros((), dtype=x.dtype, device=x.device))


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The n-th discrete difference along `axis` (NumPy's diff; bools give not_equal), with
    `prepend`/`append` joined first. ValueError for n < 0 or a 0-d x."""
    x = _arr(x)
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}")
    if x.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = _axis(axis, x.ndim, "diff")
    parts = []
    for extra in (prepend, None, append):
        if extra is None and parts and parts[-1] is x:
            continue
        if extra is None:
            parts.append(x)
            continue
        e = _arr(extra) if isinstance(extra, Array) else asarray(extra, dtype=x.dtype,
                                                                  device=x.device)
        if e.ndim == 0:
            shape = list(x.shape)
            shape[ax] = 1
            e = core.broadcast_to(e, tuple(shape))
        parts.append(e)
    if len(parts) > 1:
        x = _join.concatenate(parts, axis=ax)
    for _ in range(n):
        hi = x[_along(ax, x.ndim, slice(1, None))]
        lo = x[_along(ax, x.ndim, slice(None, -1))]
        x = uf.not_equal(hi, lo) if x.dtype.kind == "b" else uf.subtract(hi, lo)
    return x


def _cumulative(fn, identity, x, axis, dtype, include_initial, name):
    x = _arr(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: axis must be given for arrays of more than one "
                             f"dimension (got shape {x.shape})")
        if x.ndim == 0:
            raise ValueError(f"{name}: x must have at least one dimension")
        axis = 0
    ax = _axis(axis, x.ndim, name)
    out = fn(x, ax, dtype)
    if include_initial:
        shape = list(out.shape)
        shape[ax] = 1
        first = _creation.full(tuple(shape), identity, dtype=out.dtype, device=out.device)
        out = _join.concatenate([first, out], axis=ax)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sum along `axis` (required for n-d x), starting with 0 when include_initial."""
    return _cumulative(_cum.cumsum, 0, x, axis, dtype, include_initial,
                       "cumulative_sum")


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative product along `axis` (required for n-d x), starting with 1 when
    include_initial."""
    return _cumulative(_cum.cumprod, 1, x, axis, dtype, include_initial,
                       "cumulative_prod")
