"""How row-wise kernels (loss.cl, norm.cl) spread rows over the device: W lanes per row (a
power of two near the row's length, at most the work-group size) and WG / W rows per work group
of WG items, so long rows get a whole group with a local-memory tree and short rows share one;
either way M rows make about M W / WG groups, never a single one."""

from carray.opencl._runtime import runtime


def lanes(n):
    """(wg, w): the work-group size and the lanes per row for rows of n elements."""
    wg = runtime().max_group
    w = 1
    while w < n and w < wg:
        w *= 2
    return wg, w


def groups(rows, wg, w):
    """The work items to launch for `rows` rows of w lanes in groups of wg (whole groups)."""
    per = wg // w
    return -(-rows // per) * wg
