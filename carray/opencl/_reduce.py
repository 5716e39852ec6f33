"""Reductions on the device: sum/prod/max/min over any axes, and argmax/argmin. Every layout
spreads over many work groups: rows (reduced elements next to each other) as W lanes per output
with a local-memory tree, several short rows per group; columns (outputs next to each other) as
one work item per output and chunk of the reduced elements, the chunks' partial results folded by
a second pass; other layouts as work-group trees (two passes when few outputs reduce many
elements)."""

import struct

from carray.core._dtype import DTYPE_NAMES
from carray.opencl import _cache, _layout
from carray.opencl._launch import launch
from carray.opencl._runtime import runtime
from carray.opencl._types import BOOL, CL_TYPES, FLOAT32, FLOAT64, LIMITS
from carray.ops import _optable
from carray.ops._optable import Identity, Kind, ReduceOp

CL = CL_TYPES
R_SUM, R_PROD, R_MAX, R_MIN = ReduceOp.R_SUM, ReduceOp.R_PROD, ReduceOp.R_MAX, ReduceOp.R_MIN
WG = 256
COL_ITEMS = 1 << 18     # a column reduction splits its elements into chunks up to this many items

# the op table's symbolic identities, written in OpenCL C for each type: (LOWEST, HIGHEST)
_LIMITS = LIMITS


def _combine(op, t):
    if op == R_SUM:
        return "(a) | (b)" if t == BOOL else "(a) + (b)"
    if op == R_PROD:
        return "(a) & (b)" if t == BOOL else "(a) * (b)"
    return "NAN_MAX(a, b)" if op == R_MAX else "NAN_MIN(a, b)"


def _identity(op, t):
    ident = _optable.lookup(Kind.REDUCE, op).identity
    if ident == Identity.ZERO:
        return f"({CL[t]})0"
    if ident == Identity.ONE:
        return f"({CL[t]})1"
    return f"({CL[t]})({_LIMITS[t][0] if ident == Identity.LOWEST else _LIMITS[t][1]})"


def _split(shape, strides, offset, reduced):
    """(outer shape, outer strides, inner shape, inner strides), each coalesced, rank >= 1."""
    oshape = [n for n, r in zip(shape, reduced) if not r]
    ost = [s for s, r in zip(strides, reduced) if not r]
    ishape = [n for n, r in zip(shape, reduced) if r]
    ist = [s for s, r in zip(strides, reduced) if r]
    oshape, (ost,) = _layout.coalesce(oshape, [ost])
    ishape, (ist,) = _layout.coalesce(ishape, [ist])
    return oshape, ost, ishape, ist


def _load(t, ti):
    """An element of type ti read as type t (bool results get x != 0, as NumPy's casts)."""
    if ti == t:
        return "(x)"
    return "((x) != 0)" if t == BOOL else f"(({CL[t]})(x))"


def _program(t, op, orank, irank, idx, ti=None):
    """The reduce kernels of result type t reading elements of type ti (default t)."""
    ti = t if ti is None else ti
    # float32 products keep their partial results in double where the device has it: float
    # products of factors near 1 round with a bias (a 1e-3 relative error over 2e5 factors)
    acc = FLOAT64 if op == R_PROD and t == FLOAT32 and runtime().fp64 else t
    key = ("reduce", t, op, orank, irank, idx, acc, ti)
    src = lambda: _cache.render("reduce.cl", t=CL[t], acc=CL[acc], ti=CL[ti],  # noqa: E731
                                load=_load(t, ti),
                                combine=_combine(op, t), identity=_identity(op, t),
                                orank=orank, irank=irank, wg=WG, cmp=">" if op == R_MAX else "<")
    return _cache.kernel(key, ("reduce_groups", "reduce_items", "arg_groups", "reduce_lanes",
                               "reduce_cols"), src, idx,
                         FLOAT64 in (acc, ti))


def _args(idx, oshape, ost, off, ishape, ist):
    return (_layout.pack(idx, list(oshape) + list(ost) + [off]),
            _layout.pack(idx, list(ishape) + list(ist) + [0]))


_plans = _cache.PlanCache()     # (types, op, shape, strides, offset, reduced) -> _Plan


class _Plan:
    """What a repeated reduction of one layout reuses: the result's shape, the partials' shape
    (two passes) or None, and each launch as (kernel, items, group, arguments), the arguments
    "out", "in" and "part" standing for the buffers of that call."""
    __slots__ = ("out_shape", "part_shape", "steps")

    def __init__(self, out_shape, part_shape, steps):
        self.out_shape, self.part_shape, self.steps = out_shape, part_shape, steps


def _plan(t, ti, op, shape, strides, off, reduced):
    """The launches of a reduction of this layout into type t from elements of type ti (see
    reduce)."""
    out_shape = tuple(1 if r else n for n, r in zip(shape, reduced))
    M = 1
    for n in out_shape:
        M *= n
    if M == 0:
        return _Plan(out_shape, None, [])
    K = 1
    for n, r in zip(shape, reduced):
        if r:
            K *= n
    oshape, ost, ishape, ist = _split(shape, strides, off, reduced)
    idx = _layout.index_type(M * K, list(shape), [list(strides)], [off])
    groups, items, _, lanes, cols = _program(t, op, len(oshape), len(ishape), idx, ti)
    lo, li = _args(idx, oshape, ost, off, ishape, ist)
    P = _layout.pack
    if ist[-1] == 1 and (K <= WG * 8 or M >= 256):         # rows
        W = 1               # (rows of up to 8 fold in order, as NumPy's pairwise sum does)
        while W < K and W < WG and K > 8:
            W *= 2
        return _Plan(out_shape, None, [(lanes, -(-M // (WG // W)) * WG, WG,
                                        ["out", "in", lo, li, P(idx, [K]), P(idx, [M]),
                                         struct.pack("i", W)])])
    if ost[-1] == 1 and M >= 256:       # columns (fewer: the group trees below, which split
        # K over groups; neighbouring k are then only M apart)
        G = max(1, min(-(-COL_ITEMS // M), -(-K // 32)))
        chunk = max(1, -(-K // G))
        G = max(1, -(-K // chunk))
        if G == 1:
            return _Plan(out_shape, None, [(cols, M, None, ["out", "in", lo, li, P(idx, [K]),
                                                            P(idx, [M]), P(idx, [1]),
                                                            P(idx, [chunk])])])
        items2 = _program(t, op, 1, 1, idx)[1]
        lo2, li2 = _args(idx, [M], [1], 0, [G], [M])
        return _Plan(out_shape, (G, M), [
            (cols, M * G, None, ["part", "in", lo, li, P(idx, [K]), P(idx, [M]), P(idx, [G]),
                                 P(idx, [chunk])]),
            (items2, M, None, ["out", "part", lo2, li2, P(idx, [G]), P(idx, [M])])])
    if K <= 64 or M >= 4096 and K <= 1024:
        return _Plan(out_shape, None, [(items, M, None, ["out", "in", lo, li, P(idx, [K]),
                                                          P(idx, [M])])])
    G = 1
    if M < 256:
        G = max(1, min(-(-K // (WG * 8)), 1024 // M))
    if G == 1:
        return _Plan(out_shape, None, [(groups, M * WG, WG, ["out", "in", lo, li, P(idx, [K]),
                                                              P(idx, [1]), P(idx, [K])])])
    chunk = -(-K // G)
    # second pass: the M x G partials, contiguous
    g2 = _program(t, op, 1, 1, idx)[0]
    lo2, li2 = _args(idx, [M], [G], 0, [G], [1])
    return _Plan(out_shape, (M, G), [
        (groups, M * G * WG, WG, ["part", "in", lo, li, P(idx, [K]), P(idx, [G]),
                                  P(idx, [chunk])]),
        (g2, M * WG, WG, ["out", "part", lo2, li2, P(idx, [G]), P(idx, [1]), P(idx, [G])])])


def reduce(a, op, reduced, out=None, t_out=None):
    """a (a device Array) reduced with op over the dims flagged in `reduced`; the result keeps
    every dim (size 1 where reduced), C-contiguous, of type number t_out (default a's): each
    element is converted as it is read and folded in that type, no converted copy of a. out: a
    C-contiguous device Array of that dtype, as many elements and offset 0, to write instead
    (returned as it is).

    One work item per output for short reductions, else work-group trees (two passes when few
    outputs reduce many elements). Planned once per layout: a repeat only sets the buffers and
    enqueues."""
    import carray

    buf, off, ti, shape, strides = a._cl()
    t = ti if t_out is None else t_out
    key = (t, ti, op, shape, strides, off, tuple(reduced))
    plan = _plans.get(key)
    if plan is None:
        plan = _plans.put(key, _plan(t, ti, op, shape, strides, off, reduced))
    dtype = carray.dtype(DTYPE_NAMES[t])
    if out is None:
        out = carray.empty(plan.out_shape, dtype=dtype, device="gpu")
    if not plan.steps:
        return out
    bufs = {"out": out._cl()[0], "in": buf}
    if plan.part_shape is not None:
        part = carray.empty(plan.part_shape, dtype=dtype, device="gpu")
        bufs["part"] = part._cl()[0]
    for knl, items, group, args in plan.steps:
        launch(knl, items, [bufs[x] if type(x) is str else x for x in args], group)
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
    _, _, argk, _, _ = _program(t, R_MAX if want_max else R_MIN, len(oshape), len(ishape), idx)
    lo, li = _args(idx, oshape, ost, off, ishape, ist)
    launch(argk, M * WG, [out._cl()[0], buf, lo, li, _layout.pack(idx, [shape[-1]])], WG)
    return out
