"""The array API's top-level linear algebra functions besides matmul: matrix_transpose,
tensordot, vecdot (composed from transpose, reshape, matmul and sum; carray.linalg may
re-export them)."""

import builtins

from carray.core import _array as core
from carray.core._array import Array, AxisError, asarray
from carray.ops import _matmul
from carray.ops import _ufunc as uf


def _arr(x):
    return x if isinstance(x, Array) else asarray(x)


def matrix_transpose(x, /):
    """x with its last two axes swapped (a view). ValueError when x has fewer than 2 axes."""
    x = _arr(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: x must have at least two dimensions, got shape "
                         f"{x.shape}")
    return x.mT


def vecdot(x1, x2, /, *, axis=-1):
    """The dot product of x1 and x2 along `axis` (conjugating x1), broadcasting the other axes.
    ValueError when the two axes' sizes differ."""
    a, b = _arr(x1), _arr(x2)
    nd = builtins.max(a.ndim, b.ndim)
    if not -nd <= axis < 0 and not 0 <= axis < builtins.min(a.ndim, b.ndim):
        raise AxisError(f"vecdot: axis {axis} is out of bounds for arrays of dimensions "
                        f"{a.ndim} and {b.ndim}")
    if axis >= 0:
        axis -= nd
    if a.ndim < -axis or b.ndim < -axis or a.shape[axis] != b.shape[axis]:
        raise ValueError(f"vecdot: x1 and x2 must have the same size along axis {axis}, got "
                         f"shapes {a.shape} and {b.shape}")
    if a.dtype.kind == "c":
        from carray._api_elementwise import conj
        a = conj(a)
    prod = uf.multiply(a, b)
    return uf.sum(prod, axis=axis, dtype=prod.dtype)     # no int32 -> int64 widening


def tensordot(x1, x2, /, *, axes=2):
    """Sum of products over the last `axes` axes of x1 and the first of x2 (an int), or over the
    axes listed per array (a pair of sequences), as NumPy's tensordot."""
    a, b = _arr(x1), _arr(x2)
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError(f"tensordot: axes must be non-negative, got {axes}")
        ax_a = list(range(a.ndim - axes, a.ndim))
        ax_b = list(range(axes))
    else:
        ax_a, ax_b = ([axes[0]] if isinstance(axes[0], int) else list(axes[0]),
                      [axes[1]] if isinstance(axes[1], int) else list(axes[1]))
    if len(ax_a) != len(ax_b):
        raise ValueError("tensordot: the two axis lists must have the same length")
    ax_a = [d % a.ndim if a.ndim else d for d in ax_a]
    ax_b = [d % b.ndim if b.ndim else d for d in ax_b]
    for da, db in zip(ax_a, ax_b):
        if da >= a.ndim or db >= b.ndim or a.shape[da] != b.shape[db]:
            raise ValueError(f"tensordot: shape mismatch for sum over axes {ax_a} of "
                             f"{a.shape} and {ax_b} of {b.shape}")
    free_a = [d for d in range(a.ndim) if d not in ax_a]
    free_b = [d for d in range(b.ndim) if d not in ax_b]
    k = 1
    for d in ax_a:
        k *= a.shape[d]
    m = 1
    for d in free_a:
        m *= a.shape[d]
    n = 1
    for d in free_b:
        n *= b.shape[d]
    am = core.reshape(core.transpose(a, free_a + ax_a), (m, k))
    bm = core.reshape(core.transpose(b, ax_b + free_b), (k, n))
    out = _matmul.matmul(am, bm)
    return core.reshape(out, tuple(a.shape[d] for d in free_a) +
                        tuple(b.shape[d] for d in free_b))
