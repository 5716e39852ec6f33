"""carray.linalg's products, views and norms, composed of carray's device ops (so they run where
their input lives): matmul, matrix_transpose, vecdot, tensordot, outer, cross, diagonal, trace,
vector_norm, matrix_norm and numpy.linalg's norm, multi_dot and cond. matrix_norm's 2, -2 and
"nuc" and cond need singular values or inverses (carray.ops._linalg, hybrid on gpu)."""

import math
import operator

import carray
from carray.ops._linalg import LinAlgError, inv, svdvals
from carray.ops._matmul import matmul

__all__ = ["cond", "cross", "diagonal", "matmul", "matrix_norm", "matrix_transpose",
           "multi_dot", "norm", "outer", "tensordot", "trace", "vecdot", "vector_norm"]


def _asarray(x):
    return x if isinstance(x, carray.Array) else carray.asarray(x)


def _same_device(name, x1, x2):
    if x1.device != x2.device:
        raise carray.DeviceMismatchError(f"{name}: x1 is on {x1.device} and x2 on {x2.device}; "
                                         f"move one with .to()")


def matrix_transpose(x, /):
    """The view of x with its last two axes swapped. ValueError for fewer than 2 dims."""
    x = _asarray(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: Input array must be at least 2-dimensional (got "
                         f"{x.ndim} dims)")
    return x.mT


def vecdot(x1, x2, /, *, axis=-1):
    """sum(x1 * x2) over axis (of the broadcast shape), the operands broadcast over the other
    axes. ValueError when their sizes along axis differ or the axis is out of range."""
    x1, x2 = _asarray(x1), _asarray(x2)
    _same_device("vecdot", x1, x2)
    nd = max(x1.ndim, x2.ndim)
    if not -nd <= axis < nd:
        raise carray.AxisError(f"vecdot: axis {axis} is out of bounds for arrays of "
                               f"{nd} dimensions")
    ax = axis % nd
    n1, n2 = (x.shape[ax - nd + x.ndim] if ax - nd + x.ndim >= 0 else None for x in (x1, x2))
    if n1 is None or n2 is None or n1 != n2:
        raise ValueError(f"vecdot: x1 {x1.shape} and x2 {x2.shape} must have the same size "
                         f"along axis {axis}")
    dt = carray.result_type(x1.dtype, x2.dtype)
    if dt == carray.bool_:          # as NumPy's gufunc: the or of the ands
        return carray.any(carray.logical_and(x1, x2), axis=ax)
    if dt.kind == "c":              # the standard's vecdot conjugates x1
        x1 = carray.conj(x1)
    return carray.sum(x1 * x2, axis=ax, dtype=dt)     # in the operands' dtype, as NumPy's


def tensordot(x1, x2, /, *, axes=2):
    """The sum of products over the last `axes` axes of x1 and the first of x2 (an int), or
    over the axes paired in axes = (axes of x1, axes of x2). ValueError when paired sizes
    differ or axes is malformed."""
    x1, x2 = _asarray(x1), _asarray(x2)
    _same_device("tensordot", x1, x2)
    if isinstance(axes, int) or hasattr(axes, "__index__"):
        k = operator.index(axes)
        if k < 0:
            raise ValueError(f"tensordot: axes must be a non-negative integer (got {k})")
        if k > x1.ndim or k > x2.ndim:
            raise ValueError(f"tensordot: axes={k} exceeds the dims of x1 {x1.shape} or "
                             f"x2 {x2.shape}")
        a1, a2 = list(range(x1.ndim - k, x1.ndim)), list(range(k))
    else:
        try:
            a1, a2 = axes
        except (TypeError, ValueError):
            raise ValueError("tensordot: axes must be an int or a pair of sequences of "
                             "axes") from None
        a1 = [a1] if isinstance(a1, int) else list(a1)
        a2 = [a2] if isinstance(a2, int) else list(a2)
        if len(a1) != len(a2):
            raise ValueError(f"tensordot: axes {axes} pair {len(a1)} axes with {len(a2)}")
        a1 = [_axis(a, x1.ndim) for a in a1]
        a2 = [_axis(a, x2.ndim) for a in a2]
    for i, j in zip(a1, a2):
        if x1.shape[i] != x2.shape[j]:
            raise ValueError(f"tensordot: shape-mismatch for sum: x1 axis {i} has size "
                             f"{x1.shape[i]}, x2 axis {j} has {x2.shape[j]}")
    f1 = [i for i in range(x1.ndim) if i not in a1]
    f2 = [j for j in range(x2.ndim) if j not in a2]
    s1 = [x1.shape[i] for i in f1]
    s2 = [x2.shape[j] for j in f2]
    k = math.prod(x1.shape[i] for i in a1)
    m1 = carray.permute_dims(x1, tuple(f1 + a1)).reshape((math.prod(s1), k))
    m2 = carray.permute_dims(x2, tuple(a2 + f2)).reshape((k, math.prod(s2)))
    return carray.matmul(m1, m2).reshape(tuple(s1 + s2))


def _axis(a, nd):
    a = operator.index(a)
    if not -nd <= a < nd:
        raise carray.AxisError(f"axis {a} is out of bounds for an array of {nd} dimensions")
    return a % nd


def outer(x1, x2, /):
    """The outer product x1[i] * x2[j] of two 1-d arrays. ValueError for other dims."""
    x1, x2 = _asarray(x1), _asarray(x2)
    _same_device("outer", x1, x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer: Input arrays must be one-dimensional, but they are "
                         f"{x1.ndim}-d and {x2.ndim}-d")
    return carray.expand_dims(x1, 1) * carray.expand_dims(x2, 0)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-element vectors along axis, the other axes broadcast.
    ValueError unless both have size 3 there."""
    x1, x2 = _asarray(x1), _asarray(x2)
    _same_device("cross", x1, x2)
    for x in (x1, x2):
        if x.ndim == 0 or not -x.ndim <= axis < x.ndim or x.shape[axis] != 3:
            raise ValueError(f"cross: both inputs must have size 3 along axis {axis} (got "
                             f"shapes {x1.shape} and {x2.shape})")
    a = carray.moveaxis(x1, axis, -1)
    b = carray.moveaxis(x2, axis, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = carray.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    nd = out.ndim
    return carray.moveaxis(out, -1, axis if axis < 0 else axis + nd - x1.ndim)


def diagonal(x, /, *, offset=0):
    """The diagonal x[..., i, i + offset] of each matrix of x (a copy). ValueError for fewer
    than 2 dims."""
    x = _asarray(x)
    if x.ndim < 2:
        raise ValueError(f"diagonal: x must have at least 2 dimensions (got {x.ndim})")
    m, n = x.shape[-2:]
    offset = operator.index(offset)
    length = max(0, min(m + min(offset, 0), n - max(offset, 0)))
    rows = carray.arange(length) + max(-offset, 0)
    cols = carray.arange(length) + max(offset, 0)
    return x[..., rows, cols]


def trace(x, /, *, offset=0, dtype=None):
    """The sum of each matrix's diagonal (offset as diagonal's), in dtype (default: sum's)."""
    return carray.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def _float(x):
    return x if x.dtype.kind in "fc" else x.astype(carray.float64)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    """The vector ord-norm over axis (an int, a tuple, or None: all elements): (sum |x|^ord)^
    (1/ord); inf / -inf the max / min of |x|, 0 the count of non-zeros. Integer input gives
    float64."""
    x = _float(_asarray(x))
    a = carray.abs(x)
    if ord == math.inf:
        return carray.max(a, axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return carray.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return carray.sum(a != 0, axis=axis, keepdims=keepdims).astype(a.dtype)
    if ord == 1:
        return carray.sum(a, axis=axis, keepdims=keepdims)
    if ord == 2:
        return carray.sqrt(carray.sum(a * a, axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"vector_norm: Invalid norm order {ord!r} for vectors")
    p = float(ord)
    return carray.sum(a ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    """The matrix norm of each matrix of x (the last two axes): "fro", "nuc" (sum of singular
    values), 2 / -2 (largest / smallest singular value), 1 / -1 (max / min column abs sum),
    inf / -inf (max / min row abs sum). ValueError for another ord or fewer than 2 dims."""
    return _matrix_norm(_float(_asarray(x)), ord, -2, -1, keepdims)


def _matrix_norm(x, ord, r, c, keepdims):  # noqa: A002
    if x.ndim < 2:
        raise ValueError(f"matrix_norm: x must have at least 2 dimensions (got {x.ndim})")
    r, c = _axis(r, x.ndim), _axis(c, x.ndim)
    if r == c:
        raise ValueError("matrix_norm: Duplicate axes given.")
    if ord == "fro":
        a = carray.abs(x)
        out = carray.sqrt(carray.sum(a * a, axis=(r, c)))
    elif ord in ("nuc", 2, -2):
        s = svdvals(carray.moveaxis(x, (r, c), (-2, -1)))
        out = (carray.sum(s, axis=-1) if ord == "nuc" else
               carray.max(s, axis=-1) if ord == 2 else carray.min(s, axis=-1))
    elif ord in (1, -1, math.inf, -math.inf):
        summed, other = (r, c) if ord in (1, -1) else (c, r)
        sums = carray.sum(carray.abs(x), axis=summed, keepdims=True)
        red = carray.max if ord > 0 else carray.min
        out = carray.squeeze(red(sums, axis=other, keepdims=True), axis=(r, c))
    else:
        raise ValueError(f"matrix_norm: Invalid norm order {ord!r} for matrices")
    if keepdims:
        out = carray.expand_dims(carray.expand_dims(out, min(r, c)), max(r, c))
    return out


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """numpy.linalg.norm: over all elements (axis and ord None: 2-norm of the flattened x), a
    vector norm (axis an int, or a 1-d x) or a matrix norm (axis a pair, or a 2-d x)."""
    x = _float(_asarray(x))
    if axis is None:
        if ord is None:
            m = carray.abs(x) if x.dtype.kind == "c" else x     # |z|^2, not z^2, for complex
            out = carray.sqrt(carray.sum(m * m))
            return out.reshape((1,) * x.ndim) if keepdims else out
        if x.ndim == 1:
            axis = (0,)
        elif x.ndim == 2:
            axis = (0, 1)
        else:
            raise ValueError("norm: Improper number of dimensions to norm.")
    if isinstance(axis, int):
        axis = (axis,)
    axis = tuple(axis)
    if len(axis) == 1:
        return vector_norm(x, axis=axis[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axis) == 2:
        return _matrix_norm(x, "fro" if ord is None else ord, axis[0], axis[1], keepdims)
    raise ValueError("norm: Improper number of dimensions to norm.")


def multi_dot(arrays, *, out=None):
    """The product arrays[0] @ arrays[1] @ ... in the cheapest order (NumPy's dynamic
    programme over the matrix chain); the first may be 1-d (a row), the last 1-d (a column),
    the others 2-d. ValueError for fewer than two arrays or other dims."""
    arrays = [_asarray(a) for a in arrays]
    n = len(arrays)
    if n < 2:
        raise ValueError("multi_dot: Expecting at least two arrays.")
    first, last = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first:
        arrays[0] = carray.expand_dims(arrays[0], 0)
    if last:
        arrays[-1] = carray.expand_dims(arrays[-1], 1)
    for i, a in enumerate(arrays):
        if a.ndim != 2:
            raise ValueError(f"multi_dot: array {i} has {a.ndim} dimensions; expected 2 (the "
                             f"first and last may be 1-d)")
    dims = [arrays[0].shape[0]] + [a.shape[1] for a in arrays]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for span in range(1, n):
        for i in range(n - span):
            j = i + span
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i, j):
        if i == j:
            return arrays[i]
        k = split[i][j]
        return matmul(product(i, k), product(k + 1, j))

    result = product(0, n - 1)
    if first and last:
        result = result.reshape(())
    elif first:
        result = result.reshape((result.shape[1],))
    elif last:
        result = result.reshape((result.shape[0],))
    if out is not None:
        out[...] = result
        return out
    return result


def cond(x, p=None):
    """The condition number of each matrix of x in the norm p: None / 2 / -2 the ratio of the
    extreme singular values, "fro", "nuc", 1, -1, inf, -inf norm(x) * norm(inv(x)) (inf for a
    singular matrix, as NumPy)."""
    x = _float(_asarray(x))
    if p is None or p in (2, -2):
        s = svdvals(x)
        big, small = s[..., 0], s[..., -1]
        return big / small if p != -2 else small / big
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise LinAlgError(f"cond: Last 2 dimensions of the array must be square (got shape "
                          f"{x.shape})")
    def by_inverse(m):
        return _matrix_norm(m, p, -2, -1, False) * _matrix_norm(inv(m), p, -2, -1, False)

    try:
        return by_inverse(x)
    except LinAlgError:             # some matrix singular: inf there, one matrix at a time
        flat = x.reshape((-1,) + x.shape[-2:])
        out = []
        for i in range(flat.shape[0]):
            try:
                out.append(by_inverse(flat[i]))
            except LinAlgError:
                out.append(carray.full((), math.inf, dtype=x.dtype, device=x.device))
        return carray.stack(out).reshape(x.shape[:-2])
