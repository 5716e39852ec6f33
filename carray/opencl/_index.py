"""Advanced indexing on the device: the host works out each index combination's element offset
(carray/core/_indexing.pxi, from index arrays read to the host), these kernels move the blocks."""

import struct

import carray
from carray.opencl import _cache, _layout
from carray.opencl._launch import launch
from carray.opencl._types import CL_TYPES, FLOAT64


def move_blocks(view, result, offsets, vshape, vstrides, nbefore, nb, assign):
    """result[..., b, ...] = view block at offsets[b] (or the reverse when assign).

    result: C-contiguous device Array with dims (before, B..., after); offsets: host int64 Array
    of the B combinations; vshape/vstrides: the view's extents and strides for the result's
    dims, with the B dims flattened to one of stride 0."""
    n = result.size
    if n == 0:
        return
    offs = offsets.reshape(-1).to("gpu")
    total = offs.size
    bstep = 1
    for s in result.shape[nbefore + nb:]:
        bstep *= s
    vbuf, voff, t = view._cl()[:3]
    rank = len(vshape)
    idx = "long"  # offsets from the host are 64-bit; one kernel per dtype and rank
    key = ("index", t, rank)
    kernels = _cache.kernel(key, ("gather", "scatter"),
                            lambda: _cache.render("index.cl", t=CL_TYPES[t], rank=rank),
                            idx, t == FLOAT64)
    layout = _layout.pack(idx, list(vshape) + list(vstrides) + [voff])
    P = _layout.pack
    args = [result._cl()[0], vbuf, offs._cl()[0], layout, P(idx, [n]), P(idx, [bstep]),
            P(idx, [total])]
    if assign:
        keep = _last_of_repeats(offsets)
        args += [offs._cl()[0] if keep is None else keep._cl()[0],
                 struct.pack("i", keep is not None)]
    launch(kernels[1 if assign else 0], n, args)


def _last_of_repeats(offsets):
    """None when the host offsets are all different, else a device bool mask of the blocks
    that are the last with their offset (NumPy: the last of repeated indices is assigned).
    A stable sort puts repeats next to each other in their original order."""
    flat = offsets.reshape(-1)
    if flat.size < 2:
        return None
    order = carray.argsort(flat, kind="stable")
    s = flat[order]
    differs = carray.not_equal(s[1:], s[:-1])
    if carray.all(differs):
        return None
    last = carray.concatenate([differs, carray.ones((1,), dtype="bool")])
    keep = carray.zeros((flat.size,), dtype="bool")
    keep[order[last]] = True
    return keep.to("gpu")
