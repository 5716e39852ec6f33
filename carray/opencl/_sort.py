"""Sorting on the device (sort, argsort): a stable merge sort per row, one work item per row."""

from carray.opencl import _cache, _layout
from carray.opencl._launch import launch
from carray.opencl._types import CL_TYPES, FLOAT64

CL = CL_TYPES


def sort_lanes(keys, idx=None):
    """Sort each row of the C-contiguous device Array keys (shape (..., n), offset 0) in place,
    stably, NaNs last; idx (a C-contiguous int64 device Array of keys' shape, or None) receives
    each element's original position along the row (argsort)."""
    import carray

    buf, off, t, shape, _ = keys._cl()
    total = keys.size
    if total == 0:
        return
    if off or (idx is not None and idx._cl()[1]):
        raise ValueError("sort_lanes: keys and idx must start at their buffer's offset 0")
    n = shape[-1] if shape else 1
    M = total // n
    with_idx = idx is not None
    idx_t = _layout.index_type(total, [], [], [])
    knl = _cache.kernel(("sort", t, with_idx, idx_t), "sort_lanes",
                        lambda: _cache.render("sort.cl", t=CL[t], with_idx=int(with_idx)),
                        idx_t, t == FLOAT64)
    scratch = carray.empty((total,), dtype=keys.dtype, device="gpu")
    args = [buf, scratch._cl()[0]]
    if with_idx:
        iscratch = carray.empty((total,), dtype="int64", device="gpu")
        args += [idx._cl()[0], iscratch._cl()[0]]
    P = _layout.pack
    launch(knl, M, args + [P(idx_t, [n]), P(idx_t, [M])])
