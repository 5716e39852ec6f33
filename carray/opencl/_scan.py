"""Cumulative sums and products on the device (cumsum, cumprod): one work item per lane."""

from carray.opencl import _cache, _layout
from carray.opencl._launch import launch
from carray.opencl._types import BOOL, CL_TYPES, FLOAT32, FLOAT64
from carray.ops._optable import ScanOp

CL = CL_TYPES
SCAN_SUM, SCAN_PROD = ScanOp.S_SUM, ScanOp.S_PROD


def _combine(op, t):
    """The C expression of one step (a, b) -> a + b or a * b in type t."""
    if t == BOOL:
        return "(a) | (b)" if op == SCAN_SUM else "(a) & (b)"
    sign = "+" if op == SCAN_SUM else "*"
    if t not in (FLOAT32, FLOAT64):     # wrap around as the host does, without signed overflow
        u = CL[t] if CL[t].startswith("u") else "u" + CL[t]
        return f"({CL[t]})(({u})(a) {sign} ({u})(b))"
    return f"(a) {sign} (b)"


def scan(r, outer, n, inner, op):
    """Scan the C-contiguous device Array r, seen as (outer, n, inner), along n in place:
    cumulative sums (op 0) or products (op 1), in order."""
    buf, off, t = r._cl()[:3]
    lanes = outer * inner
    idx = _layout.index_type(lanes * n + off, [], [], [])
    knl = _cache.kernel(("scan", t, op, idx), "scan",
                        lambda: _cache.render("scan.cl", t=CL[t], combine=_combine(op, t)),
                        idx, t == FLOAT64)
    P = _layout.pack
    launch(knl, lanes, [buf, P(idx, [off]), P(idx, [outer]), P(idx, [n]), P(idx, [inner])])
