"""Advanced indexing on the device (carray/core/_indexing.pxi decides what goes where):
each index combination's element offset (worked out on the host from host index arrays, or on
the device by device_offsets from index arrays that stay there), then the kernels that move the
blocks (move_blocks: a[key], a[key] = v) or add them up (add_blocks: add_at); and embedding's
row lookup (take_rows).

Index arrays on the device are checked on the device: an index out of bounds sets the flag of
carray/opencl/_nn.py (read_flag_with_next_read), and IndexError is raised at the next read from
the device (item(), tolist(), .to("cpu"), printing), not by the indexing call itself. The bad
combination gathers 0 and adds or assigns nothing meanwhile."""

import struct

import carray
from carray.opencl import _cache, _layout, _nn
from carray.opencl._launch import launch
from carray.opencl._layout import int_arg as _i
from carray.opencl._layout import long_arg as _q
from carray.opencl._runtime import runtime
from carray.opencl._types import BOOL, CL_TYPES, FLOAT32, FLOAT64, INT32, INT64

# Flag codes from FIRST_CODE up each stand for one IndexError message of this module (codes
# below are _nn's own); past MAX_CODES messages, one code with a generic message.
FIRST_CODE, MAX_CODES = 16, 1024
_codes = {}


def expect_index_check(message):
    """The flag code a kernel about to be queued sets on a bad index; notes that the next read
    from the device raises IndexError(message) when it did."""
    code = _codes.get(message)
    if code is None:
        if len(_codes) >= MAX_CODES:
            message = "an index is out of bounds"
            code = FIRST_CODE + MAX_CODES
        else:
            code = _codes[message] = FIRST_CODE + len(_codes)
    _nn._expect_check(code, message)
    return code




def _strided_layout(shape, strides, offset):
    """(rank, packed layout) of one operand of `shape` with element strides, coalesced."""
    cshape, (cst,) = _layout.coalesce(list(shape), [list(strides)])
    return len(cshape), _layout.pack("long", cshape + cst + [offset])


def device_offsets(bshape, entries):
    """The int64 device Array of shape bshape with the element offset each index combination
    selects: the sum over entries (index Array, axis length n, axis stride, axis number) of
    index * stride, negative indices counting from the end. Device index arrays are checked on
    the device (see the module's docstring); host ones here, now (IndexError, as NumPy)."""
    offs = carray.empty(bshape, dtype="int64", device="gpu")
    total = offs.size
    base = 0
    dev = []
    for idx, n, stride, axis in entries:
        if idx.device == "cpu":
            if idx.size:
                lo, hi = int(carray.min(idx)), int(carray.max(idx))
                if lo < -n or hi >= n:
                    bad = lo if lo < -n else hi
                    raise IndexError(f"index {bad} is out of bounds for axis {axis} with "
                                     f"size {n}")
            if idx.ndim == 0:
                v = int(idx)
                base += (v + n if v < 0 else v) * stride
                continue
            idx = idx.to("gpu")
        dev.append((idx, n, stride, axis))
    if total == 0:
        return offs
    if not dev:
        offs.fill(base)
        return offs
    flag = _nn._bad_flag()._cl()[0]
    for k, (idx, n, stride, axis) in enumerate(dev):
        buf, ioff, t, ishape, ist = idx._cl()
        st = _layout.broadcast_strides(bshape, ishape, ist)
        rank, layout = _strided_layout(bshape or (1,), st or (0,), ioff)
        knl = _cache.kernel(("index_offsets", t, rank), "index_offsets",
                            lambda t=t, rank=rank: _cache.render("index_offsets.cl",
                                                                 i=CL_TYPES[t], rank=rank),
                            "long")
        code = expect_index_check(f"an index is out of bounds for axis {axis} with size {n}")
        launch(knl, total, [offs._cl()[0], buf, layout, _q(total), _q(n), _q(stride),
                            _q(base), _i(1 if k else 0), flag, _i(code)])
    return offs


def _int64_atomics():
    rt = runtime()
    has = getattr(rt, "_int64_atomics", None)
    if has is None:
        has = rt._int64_atomics = "cl_khr_int64_base_atomics" in rt.device.extensions
    return has


def _atomic_mode(t):
    """scatter_add.cl's $atomic for type t: 0 when the device has no atomic add for it."""
    if t == INT32:
        return 1
    if t == FLOAT32:
        return 2
    if t in (INT64, FLOAT64) and _int64_atomics():
        return 3 if t == INT64 else 4
    return 0


def add_blocks(view, result, offsets, vshape, vstrides, nbefore, nb):
    """view block at offsets[b] += result[..., b, ...] for every b, repeated offsets adding up
    (add_at). Arguments as move_blocks'; offsets may be a host or a device Array. Types with a
    device atomic add run one work item per element (the order of additions into one element
    varies); others (bool, and 64-bit types without cl_khr_int64_base_atomics) one work item per
    element of the non-indexed dims, adding the blocks in order."""
    n = result.size
    if n == 0:
        return
    offs = offsets.reshape(-1).to("gpu")
    total = offs.size
    bstep = 1
    for s in result.shape[nbefore + nb:]:
        bstep *= s
    vbuf, voff, t = view._cl()[:3]
    mode = _atomic_mode(t)
    if mode:
        shape, strides, items = list(vshape), list(vstrides), n
    else:       # the (before, after) dims only
        keep = [d for d in range(len(vshape)) if not nbefore <= d < nbefore + nb]
        shape = [vshape[d] for d in keep] or [1]
        strides = [vstrides[d] for d in keep] or [0]
        items = n // total
    rank = len(shape)
    names = ("add_atomic", "add_serial") if mode else "add_serial"
    kernels = _cache.kernel(
        ("scatter_add", t, rank, mode), names,
        lambda: ("#define ADD_IS_OR 1\n" if t == BOOL else "") + _cache.render(
            "scatter_add.cl", t=CL_TYPES[t], rank=rank, atomic=mode),
        "long", t == FLOAT64)
    knl = kernels[0] if mode else kernels
    layout = _layout.pack("long", shape + strides + [voff])
    launch(knl, items, [vbuf, result._cl()[0], offs._cl()[0], layout, _q(items), _q(bstep),
                        _q(total)])


def take_rows(w, idx, message):
    """out[..., :] = w[idx[...], :] for a 2-d device w and a device int32/int64 idx: an
    Array of shape idx.shape + (w.shape[1],). An index outside [0, w.shape[0]) gives a row of
    zeros and IndexError(message) at the next read from the device."""
    V, D = w.shape
    out = carray.empty(tuple(idx.shape) + (D,), dtype=w.dtype, device="gpu")
    if out.size == 0:
        return out
    if not idx.flags.c_contiguous:
        idx = idx.copy()
    ibuf, ioff, it = idx._cl()[:3]
    wbuf, woff, t, _, (ws0, ws1) = w._cl()
    knl = _cache.kernel(("take_rows", t, it), "take_rows",
                        lambda: _cache.render("take_rows.cl", t=CL_TYPES[t], i=CL_TYPES[it]),
                        "long", t == FLOAT64)
    code = expect_index_check(message)
    launch(knl, out.size, [out._cl()[0], wbuf, ibuf, _q(out.size), _q(D), _q(V), _q(ws0),
                           _q(ws1), _q(woff), _q(ioff), _nn._bad_flag()._cl()[0], _i(code)])
    return out


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
