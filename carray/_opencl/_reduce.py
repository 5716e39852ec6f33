"""Reductions on the device: sum/prod/max/min over any axes as work-group trees (two passes when
few outputs reduce many elements), and argmax/argmin."""

from carray._opencl import _cache, _layout
from carray._opencl._elementwise import launch
from carray._opencl._runtime import runtime

CL = _cache.CL_TYPES
BOOL, INT32, INT64, FLOAT32, FLOAT64 = range(5)
R_SUM, R_PROD, R_MAX, R_MIN = range(4)
WG = 256

_LIMITS = {BOOL: ("0", "1"), INT32: ("INT_MIN", "INT_MAX"), INT64: ("LONG_MIN", "LONG_MAX"),
           FLOAT32: ("-INFINITY", "INFINITY"), FLOAT64: ("-INFINITY", "INFINITY")}


def _combine(op, t):
    if op == R_SUM:
        return "(a) | (b)" if t == BOOL else "(a) + (b)"
    if op == R_PROD:
        return "(a) & (b)" if t == BOOL else "(a) * (b)"
    return "NAN_MAX(a, b)" if op == R_MAX else "NAN_MIN(a, b)"


def _identity(op, t):
    if op == R_SUM:
        return f"({CL[t]})0"
    if op == R_PROD:
        return f"({CL[t]})1"
    return f"({CL[t]})({_LIMITS[t][0] if op == R_MAX else _LIMITS[t][1]})"


def _split(shape, strides, offset, reduced):
    """(outer shape, outer strides, inner shape, inner strides), each coalesced, rank >= 1."""
    oshape = [n for n, r in zip(shape, reduced) if not r]
    ost = [s for s, r in zip(strides, reduced) if not r]
    ishape = [n for n, r in zip(shape, reduced) if r]
    ist = [s for s, r in zip(strides, reduced) if r]
    oshape, (ost,) = _layout.coalesce(oshape, [ost])
    ishape, (ist,) = _layout.coalesce(ishape, [ist])
    return oshape, ost, ishape, ist


def _program(t, op, orank, irank, idx):
    # float32 products keep their partial results in double where the device has it: float
    # products of factors near 1 round with a bias (a 1e-3 relative error over 2e5 factors)
    acc = FLOAT64 if op == R_PROD and t == FLOAT32 and runtime().fp64 else t
    key = ("reduce", t, op, orank, irank, idx, acc)
    src = lambda: _cache.render("reduce.cl", t=CL[t], acc=CL[acc],  # noqa: E731
                                combine=_combine(op, t), identity=_identity(op, t),
                                orank=orank, irank=irank, wg=WG, cmp=">" if op == R_MAX else "<")
    return _cache.kernel(key, ("reduce_groups", "reduce_items", "arg_groups"), src, idx,
                         acc == FLOAT64)


def _args(idx, oshape, ost, off, ishape, ist):
    return (_layout.pack(idx, list(oshape) + list(ost) + [off]),
            _layout.pack(idx, list(ishape) + list(ist) + [0]))


def reduce(a, op, reduced, out=None):
    """a (a device Array) reduced with op over the dims flagged in `reduced`; the result keeps
    every dim (size 1 where reduced), C-contiguous, a's dtype. out: a C-contiguous device Array
    of a's dtype, as many elements and offset 0, to write instead (returned as it is)."""
    import carray

    buf, off, t, shape, strides = a._cl()
    if out is None:
        out = carray.empty(tuple(1 if r else n for n, r in zip(shape, reduced)), dtype=a.dtype,
                           device="gpu")
    M = out.size
    if M == 0:
        return out
    K = 1
    for n, r in zip(shape, reduced):
        if r:
            K *= n
    oshape, ost, ishape, ist = _split(shape, strides, off, reduced)
    n_all = M * K
    idx = _layout.index_type(n_all, list(shape), [list(strides)], [off])
    groups, items, _ = _program(t, op, len(oshape), len(ishape), idx)
    lo, li = _args(idx, oshape, ost, off, ishape, ist)
    obuf = out._cl()[0]
    P = _layout.pack
    if K <= 64 or M >= 4096 and K <= 1024:
        launch(items, M, [obuf, buf, lo, li, P(idx, [K]), P(idx, [M])])
        return out
    G = 1
    if M < 256:
        G = max(1, min(-(-K // (WG * 8)), 1024 // M))
    if G == 1:
        launch(groups, M * WG, [obuf, buf, lo, li, P(idx, [K]), P(idx, [1]), P(idx, [K])], WG)
        return out
    chunk = -(-K // G)
    part = carray.empty((M, G), dtype=a.dtype, device="gpu")
    launch(groups, M * G * WG, [part._cl()[0], buf, lo, li, P(idx, [K]), P(idx, [G]),
                                P(idx, [chunk])], WG)
    # second pass: the M x G partials, contiguous
    g2, _, _ = _program(t, op, 1, 1, idx)
    lo2, li2 = _args(idx, [M], [G], 0, [G], [1])
    launch(g2, M * WG, [obuf, part._cl()[0], lo2, li2, P(idx, [G]), P(idx, [1]),
                        P(idx, [G])], WG)
    return out


def arg(rows, want_max):
    """argmax (or argmin) of the device Array `rows` over its last dim: an int64 device Array
    of shape rows.shape[:-1]."""
    import carray

    buf, off, t, shape, strides = rows._cl()
    out = carray.empty(shape[:-1], dtype="int64", device="gpu")
    M = out.size
    if M == 0:
        return out
    reduced = [False] * (len(shape) - 1) + [True]
    oshape, ost, ishape, ist = _split(shape, strides, off, reduced)
    idx = _layout.index_type(M * shape[-1], list(shape), [list(strides)], [off])
    _, _, argk = _program(t, R_MAX if want_max else R_MIN, len(oshape), len(ishape), idx)
    lo, li = _args(idx, oshape, ost, off, ishape, ist)
    launch(argk, M * WG, [out._cl()[0], buf, lo, li, _layout.pack(idx, [shape[-1]])], WG)
    return out
