"""Index-taking ops composed from Index, IndexPut and IndexAdd (ops/shape.py): scatter,
scatter_add, index_add, take_along_dim, and their in-place forms' raw writes.

Every index is checked on the host before any memory is touched (a min/max read-back), so an
out-of-range or negative index raises PyTorch's error on every device instead of wrapping
around as NumPy-style indexing would.
"""

import carray
from autograd.ops._util import along_dim_key, norm_dim
from autograd.ops.shape import Index, IndexAdd, IndexPut
from autograd.tensor import Tensor

__all__ = ["check_index_range", "index_add_parts", "scatter_parts", "scatter_out",
           "scatter_add_out", "index_add_out", "take_along_dim_out"]


def check_index_range(idx, size, dim, name, error=RuntimeError):
    """Raise `error` naming op `name` when an index of the integer Array idx is negative or
    not below size (the length of dimension dim)."""
    if idx.size == 0:
        return
    lo, hi = int(carray.min(idx)), int(carray.max(idx))
    if lo < 0 or hi >= size:
        bad = lo if lo < 0 else hi
        raise error(f"{name}(): index {bad} is out of bounds for dimension {dim} with size {size}")


def _check_int_index(idx, name):
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")


def scatter_parts(self, dim, index, src, name):
    """(dim, advanced key, source part) of scatter/scatter_add along dim: checks index's dtype,
    rank, sizes and range (RuntimeError, as PyTorch). src is a Tensor (its leading
    index-shaped block is used) or a Python number."""
    nd = self.array.ndim
    d = norm_dim(dim, nd)
    idx = index.array
    _check_int_index(idx, name)
    if idx.ndim != max(nd, 1) and not (idx.ndim <= 1 and nd == 0):
        raise RuntimeError(f"{name}(): Index tensor must have the same number of dimensions as "
                           f"self tensor")
    if isinstance(src, Tensor):
        if src.array.ndim != idx.ndim:
            raise RuntimeError(f"{name}(): Index tensor must have the same number of dimensions "
                               f"as src tensor")
        if src.array.dtype != self.array.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    shape = self.array.shape or (1,)
    for k in range(idx.ndim):
        if (k != d and idx.shape[k] > shape[k]) or \
                (isinstance(src, Tensor) and idx.shape[k] > src.array.shape[k]):
            raise RuntimeError(
                f"{name}(): Expected index {list(idx.shape)} to be no larger than self "
                f"{list(self.array.shape)} apart from dimension {d}" +
                (f" and to be no larger size than src {list(src.array.shape)}"
                 if isinstance(src, Tensor) else ""))
    check_index_range(idx, shape[d], d, name)
    if nd == 0:     # a 0-d self: its one element, at index 0
        return d, (), (src.reshape(()) if isinstance(src, Tensor) else src)
    key = along_dim_key(idx, d)
    if isinstance(src, Tensor):
        src = Index.apply(src, tuple(slice(0, n) for n in idx.shape))
    return d, key, src


def scatter_out(self, dim, index, src, name="scatter"):
    """self with src's values written at index along dim (out of place, differentiable)."""
    _, key, part = scatter_parts(self, dim, index, src, name)
    if not isinstance(part, Tensor):
        part = Tensor._wrap(carray.asarray(part, dtype=self.array.dtype,
                                           device=self.array.device))
    return IndexPut.apply(self, key, part)


def scatter_add_out(self, dim, index, src, name="scatter_add"):
    """self with src's values added at index along dim (repeated indices add up)."""
    _, key, part = scatter_parts(self, dim, index, src, name)
    return self + IndexAdd.apply(self.array.shape, key, part)


def index_add_parts(self, dim, index, source, alpha, name):
    """(key, scaled source) of index_add: checks index (1-d integers, one per source slice,
    in range: IndexError) and source's shape (RuntimeError)."""
    nd = self.array.ndim
    d = norm_dim(dim, nd)
    idx = index.array
    if idx.ndim > 1 or idx.dtype.kind not in "iu":
        raise IndexError(f"{name}(): Index is supposed to be a vector of integers")
    idx = idx.reshape(-1)
    sshape = source.array.shape or (1,)
    shape = self.array.shape or (1,)
    if source.array.ndim != nd:
        raise RuntimeError(f"{name}(): source and self must have the same number of dimensions "
                           f"(got {source.array.ndim} and {nd})")
    if nd and sshape[d] != idx.shape[0]:
        raise RuntimeError(f"{name}(): Number of indices ({idx.shape[0]}) should be equal to "
                           f"source.size(dim) ({sshape[d]})")
    for k in range(nd):
        if k != d and sshape[k] != shape[k]:
            raise RuntimeError(f"{name}(): source {list(sshape)} and self {list(shape)} must "
                               f"match in every dimension but {d}")
    check_index_range(idx, shape[d], d, name, IndexError)
    if source.array.dtype != self.array.dtype:
        raise RuntimeError(f"{name}(): self ({self.array.dtype}) and source "
                           f"({source.array.dtype}) must have the same scalar type")
    key = (slice(None),) * d + (idx,) if nd else ()
    return key, (source * alpha if alpha != 1 else source)


def index_add_out(self, dim, index, source, alpha=1, name="index_add"):
    """self with alpha * source's slices added at index along dim."""
    key, part = index_add_parts(self, dim, index, source, alpha, name)
    return self + IndexAdd.apply(self.array.shape, key, part)


def take_along_dim_out(input, indices, dim=None):
    """input's values at indices along dim (input and indices broadcast in the other dims);
    dim None: of the flattened input. RuntimeError for an index out of range."""
    idx = indices.array
    if idx.dtype.kind not in "iu":
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{idx.dtype}")
    if dim is None:
        flat = input.reshape(-1)
        idx = idx.reshape(-1)
        check_index_range(idx, flat.array.shape[0], 0, "take_along_dim")
        return Index.apply(flat, (idx,))
    nd = input.array.ndim
    d = norm_dim(dim, nd)
    if idx.ndim != nd:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {nd} dimensions for input, and "
                           f"{idx.ndim} dimensions for indices")
    ishape, jshape = list(input.array.shape), list(idx.shape)
    ishape[d] = jshape[d] = 1
    try:
        b = carray.broadcast_shapes(tuple(ishape), tuple(jshape))
    except ValueError:
        raise RuntimeError(f"torch.take_along_dim(): shapes {list(input.array.shape)} and "
                           f"{list(idx.shape)} do not broadcast apart from dim {d}") from None
    x = input.expand(b[:d] + (input.array.shape[d],) + b[d + 1:])
    idx = carray.broadcast_to(idx, b[:d] + (idx.shape[d],) + b[d + 1:])
    check_index_range(idx, input.array.shape[d], d, "take_along_dim")
    return Index.apply(x, along_dim_key(idx, d))
