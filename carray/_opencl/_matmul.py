"""matmul on the device: operands brought to row-major batches, then one tiled, register-blocked
GEMM kernel (matmul.cl) over the batch. Tile shapes are chosen by problem size and can be set
with CARRAY_OPENCL_GEMM="TM,TN,BK,WM,WN" (for tuning)."""

import os

from carray._opencl import _cache
from carray._opencl._runtime import runtime

CL = _cache.CL_TYPES
BOOL, INT32, INT64, FLOAT32, FLOAT64 = range(5)
BIG = (128, 128, 16, 8, 8)
SMALL = (32, 32, 16, 2, 2)


def _config(M, N, t):
    env = os.environ.get("CARRAY_OPENCL_GEMM")
    if env:
        return tuple(int(x) for x in env.split(","))
    if t in (FLOAT32, INT32) and M * N >= 512 * 512 and not runtime().is_cpu:
        return BIG
    return SMALL


def _kernel(t, cfg):
    tm, tn, bk, wm, wn = cfg
    mac = "acc |= (a) & (b)" if t == BOOL else "acc = fma(a, b, acc)" if t >= FLOAT32 else \
        "acc += (a) * (b)"
    return _cache.kernel(("gemm", t, cfg), "gemm",
                         lambda: _cache.render("matmul.cl", t=CL[t], tm=tm, tn=tn, bk=bk, wm=wm,
                                               wn=wn, mac=mac.replace("acc", "(acc)")),
                         "long", t == FLOAT64)


def _batched(x, batch, nbatch, rows, cols):
    """x as (buffer, offset, batch step, row step) of a row-major (rows x cols) matrix per batch
    entry (step 0 when x is shared by the whole batch)."""
    xb = x.shape[:-2]
    n = 1
    for s in xb:
        n *= s
    if n == 1:
        m = x.reshape(rows, cols)
        if not m.flags.c_contiguous:
            m = m.copy()
        buf, off, _, _, st = m._cl()
        return buf, off, 0, cols
    if n != nbatch:
        import carray
        x = carray.broadcast_to(x, tuple(batch) + (rows, cols))
    m = x.reshape(nbatch, rows, cols)
    if not m.flags.c_contiguous:
        m = m.copy()
    buf, off, _, _, st = m._cl()
    return buf, off, rows * cols, cols


def matmul(a, b, c, a1, b1, batch):
    """c[...] = a @ b for device arrays (a, b already of c's dtype; a1/b1: a or b was 1-d;
    batch: the broadcast batch shape)."""
    import carray

    rt = runtime()
    K = a.shape[-1]
    M = 1 if a1 else a.shape[-2]
    N = 1 if b1 else b.shape[-1]
    nbatch = 1
    for s in batch:
        nbatch *= s
    if c.size == 0:
        return c
    target = c if c.flags.c_contiguous else carray.empty(c.shape, dtype=c.dtype, device="gpu")
    if K == 0:
        target.fill(0)
    else:
        A = a.reshape(1, K) if a1 else a
        B = b.reshape(K, 1) if b1 else b
        abuf, aoff, sa, lda = _batched(A, batch, nbatch, M, K)
        bbuf, boff, sb, ldb = _batched(B, batch, nbatch, K, N)
        cbuf, coff = target._cl()[:2]
        t = c.dtype.num
        cfg = _config(M, N, t)
        tm, tn, bk, wm, wn = cfg
        knl = _kernel(t, cfg)
        import struct
        q = lambda v: struct.pack("q", v)  # noqa: E731
        knl.set_args(cbuf, abuf, bbuf, q(M), q(N), q(K), q(lda), q(ldb), q(N), q(sa), q(sb),
                     q(M * N), q(aoff), q(boff), q(coff))
        nx, ny = tn // wn, tm // wm
        gx = -(-N // tn) * nx
        gy = -(-M // tm) * ny
        rt.cl.enqueue_nd_range_kernel(rt.queue, knl, (gx, gy, nbatch), (nx, ny, 1))
    if target is not c:
        c[...] = target
    return c
