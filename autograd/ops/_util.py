"""What every op file shares: the base of the built-in Functions, wrapping arrays, the one
gradient-reduction helper, dim checks."""

import carray
from autograd.function import Function, reduce_to_shape
from autograd.tensor import Tensor, norm_dim  # noqa: F401  (norm_dim: for the ops)

wrap = Tensor._wrap


class Builtin(Function):
    """Base of every built-in op: its backward returns one gradient of the exact shape (or None)
    per argument, so the engine skips the checks it makes on a custom Function's results."""

    _trusted = True


def data_of(x):
    """The carray.Array of a Tensor; other values (Python numbers) as they are."""
    return x.array if isinstance(x, Tensor) else x


def meta(x):
    """What backward needs to know of an argument: (shape, dtype) of a Tensor, None otherwise."""
    return (x.array.shape, x.array.dtype) if isinstance(x, Tensor) else None


def reduce_grad(g, like):
    """The gradient g of a broadcast result, summed back to the shape of an input and cast to
    its dtype (`like` is the input's meta(), the input Tensor, or its carray data): the one place
    gradients are unbroadcast. None when the input was not a Tensor (a Python number)."""
    cls = like.__class__
    if cls is carray.Array:
        shape, dtype = like.shape, like.dtype
    elif cls is tuple:
        shape, dtype = like
    elif isinstance(like, Tensor):
        shape, dtype = like.array.shape, like.array.dtype
    else:
        return None
    if g.array.shape != shape:
        g = reduce_to_shape(g, shape)
    if g.array.dtype != dtype:
        g = g.to(dtype)
    return g


def norm_dims(dim, ndim):
    """dim (None, an int or a sequence of ints) as a sorted tuple of dims; None means all.
    A 0-d tensor accepts dim 0 and -1 (and reduces nothing), as PyTorch."""
    if ndim == 0 and dim is not None:
        for d in (dim if isinstance(dim, (tuple, list)) else (dim,)):
            norm_dim(d, 0)
        return ()
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        dims = tuple(norm_dim(d, ndim) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"dim {dims} appears multiple times in the list of dims")
        if not dims:
            return tuple(range(ndim))
        return tuple(sorted(dims))
    return (norm_dim(dim, ndim),)


def broadcasting(fn, a, b):
    """fn(a, b) on arrays or numbers, with PyTorch's RuntimeError when the shapes of a and b do
    not broadcast (carray raises ValueError)."""
    try:
        return fn(a, b)
    except ValueError:
        sa, sb = getattr(a, "shape", ()), getattr(b, "shape", ())
        n = max(len(sa), len(sb))
        for i in range(n - 1, -1, -1):  # from the last dim, as PyTorch reports it
            k = n - 1 - i
            x = sa[len(sa) - 1 - k] if k < len(sa) else 1
            y = sb[len(sb) - 1 - k] if k < len(sb) else 1
            if x != y and x != 1 and y != 1:
                raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                                   f"({y}) at non-singleton dimension {i}") from None
        raise


def along_dim_key(idx, d):
    """The advanced-index key that picks idx's positions along dim d and every position along
    the others (torch.gather's addressing): idx at d, broadcast aranges elsewhere."""
    nd = idx.ndim
    return tuple(idx if k == d else carray.arange(idx.shape[k], device=idx.device).reshape(
        tuple(-1 if j == k else 1 for j in range(nd))) for k in range(nd))
