"""matmul on the device: operands brought to row-major batches, then one tiled, register-blocked
GEMM kernel (matmul.cl) over the batch. Tile shapes are chosen by problem size and can be set
with CARRAY_OPENCL_GEMM="TM,TN,BK,WM,WN" (for tuning).

float32 problems whose M, N, K are multiples of a fast tile (and whose offsets allow float4
access) take matmul.cl's fast kernel: 8 x 8 (or 8 x 16) per work item, float4 loads,
double-buffered local tiles; row-major operands and transposed views of row-major ones (x @ W.T
of a linear layer, g.T @ x of its weight gradient) alike. CARRAY_OPENCL_GEMM with WM = 8 and
WN = 8 or 16 sets its tile too; CARRAY_OPENCL_GEMM_FAST=0 turns it off, CARRAY_OPENCL_GEMM_PAD
sets its local padding (4; a multiple of 4 floats).

Large float32 products on NVIDIA GPUs of compute capability 8.0+ take
matmul_staged.cl instead: 128 x 128 tiles whose slices cp.async copies straight to local
memory, three in flight. It reads A k-major (stored K x M) and B row-major (stored K x N); an
operand stored the other way is first copied transposed (_transpose's tiled copy) when the copy
costs little beside the product. CARRAY_OPENCL_GEMM_STAGED=0 turns it off; =1 sends every
tile-aligned float32 product through it, on any device (plain copies where cp.async is missing:
how the tests run it on PoCL). When its tiles are not a whole number of waves of resident work
groups, the last wave's tiles are shared out by k steps between one wave of groups (stream-K:
see matmul_staged.cl and _stream_k); CARRAY_OPENCL_GEMM_STREAMK=0 turns that off."""

import os

import carray
from carray.opencl import _cache, _reduce, _transpose
from carray.opencl._launch import LAUNCH_LOCK, submit
from carray.opencl._layout import INT_LIMIT, numbered
from carray.opencl._runtime import runtime
from carray.opencl._types import BOOL, CL_TYPES, FLOAT32, FLOAT64, INT32

CL = CL_TYPES
BIG = (128, 128, 16, 8, 8)
SMALL = (32, 32, 16, 2, 2)


def env_tile(name):
    """The tile (TM, TN, BK, WM, WN) that environment variable `name` sets, or None when unset.

    Raises ValueError naming the variable unless it is five positive ints with TM a multiple of
    WM and TN of WN."""
    env = os.environ.get(name)
    if not env:
        return None
    try:
        cfg = tuple(int(v) for v in env.split(","))
    except ValueError:
        cfg = ()
    if len(cfg) != 5 or min(cfg) <= 0 or cfg[0] % cfg[3] or cfg[1] % cfg[4]:
        raise ValueError(f"{name}: expected 'TM,TN,BK,WM,WN' (positive ints, TM a multiple "
                         f"of WM and TN of WN), got {env!r}")
    return cfg


def _config(M, N, t):
    env = env_tile("CARRAY_OPENCL_GEMM")
    if env:
        return env
    if t in (FLOAT32, INT32) and M * N >= 512 * 512 and not runtime().is_cpu:
        return BIG
    return SMALL


FAST_TILES = ((128, 128, 8, 8, 8), (64, 128, 8, 8, 8), (64, 64, 8, 8, 8))   # largest first
# On a GPU, grids of at least BIG_GRID 128 x 128 tiles per compute unit (sgemm 4096 and up) take
# the 8 x 16 per-work-item variant of that tile: 3-5% faster there on an H100 (42-43.6 vs 41
# TFLOP/s), not meant for smaller grids (half the work items per tile). CPU devices keep 8 x 8.
WIDE_TILE = (128, 128, 8, 8, 16)
BIG_GRID = 4


def _fast_config(M, N, K, nbatch):
    """The fast kernel's (TM, TN, BK, WM, WN) for a float32 problem of this shape, or None when no
    fast tile divides it (or CARRAY_OPENCL_GEMM names a tile other than 8 x 8 or 8 x 16 per work
    item, or the fast path is off).
    The largest tile whose work groups (with split-K, when K is long enough to split) keep at
    least 3/4 of the compute units busy, else the smallest; WIDE_TILE for big grids on a GPU.
    (Larger tiles run at a higher rate: on an H100/H200 the GPT step's 15 linear-layer products
    took 4.74 ms so against 5.51 when the rule asked for two work groups per compute unit, which
    chose 64 x 64 tiles for most of them.)"""
    if os.environ.get("CARRAY_OPENCL_GEMM_FAST", "1") == "0":
        return None
    env = env_tile("CARRAY_OPENCL_GEMM")
    if env:
        tiles = (env,) if env[3] == 8 and env[4] in (8, 16) and env[2] % 4 == 0 else ()
    else:
        tiles = FAST_TILES
    fits = [c for c in tiles if M % c[0] == 0 and N % c[1] == 0 and K % c[2] == 0]
    if not fits:
        return None
    want = _want()
    if fits[0] == FAST_TILES[0] and not env and not runtime().is_cpu \
            and (M // WIDE_TILE[0]) * (N // WIDE_TILE[1]) * nbatch >= BIG_GRID // 2 * want:
        return WIDE_TILE
    for c in fits:
        tiles = (M // c[0]) * (N // c[1]) * nbatch
        if tiles * 8 >= 3 * want or (nbatch == 1 and _split_fast(M, N, K, c)):
            return c
    return fits[-1]


def _kernel(t, cfg, fast=False, ta=False, tb=False):
    tm, tn, bk, wm, wn = cfg
    mac = "acc |= (a) & (b)" if t == BOOL else "acc = fma(a, b, acc)" if t >= FLOAT32 else \
        "acc += (a) * (b)"
    pad = int(os.environ.get("CARRAY_OPENCL_GEMM_PAD", "4")) // 4 * 4 if fast else 0   # float4
    return _cache.kernel(("gemm", t, cfg, fast, pad, ta, tb), "gemm",
                         lambda: _cache.render("matmul.cl", t=CL[t], tm=tm, tn=tn, bk=bk, wm=wm,
                                               wn=wn, mac=mac.replace("acc", "(acc)"),
                                               fast=int(fast), pad=pad, ta=int(ta),
                                               tb=int(tb)),
                         "long", t == FLOAT64)


def _plain(x, rows, cols):
    """x (leading dims all 1) as (buffer, offset, row step, column step) of a rows x cols matrix:
    row-major or transposed views as they are (also slices of wider matrices: rows, or the
    stored matrix's rows, further apart than their length), other layouts as a contiguous
    copy."""
    m = x.reshape(rows, cols)
    buf, off, _, _, st = m._cl()
    rs = st[0] if rows > 1 else cols
    cs = st[1] if cols > 1 else 1
    if cs == 1 and rs >= cols:
        return buf, off, rs, 1
    if rs == 1 and cs >= rows and rows > 1 and cols > 1:
        return buf, off, 1, cs                       # a transposed matrix (or slice of one)
    m = m.copy()
    buf, off = m._cl()[:2]
    return buf, off, cols, 1


def _per_batch(x, batch, nbatch, rows, cols):
    """x (rows x cols per entry of `batch`, broadcast over it) as one rows x cols matrix when it
    is shared by the whole batch, else as nbatch x rows x cols (views where they can be)."""
    n = 1
    for s in x.shape[:-2]:
        n *= s
    if n == 1:
        return x.reshape(rows, cols)
    if n != nbatch:
        x = carray.broadcast_to(x, tuple(batch) + (rows, cols))
    return x.reshape(nbatch, rows, cols)


def _batched(x, batch, nbatch, rows, cols):
    """x as (buffer, offset, batch step, row step) of a row-major (rows x cols) matrix per batch
    entry (step 0 when x is shared by the whole batch)."""
    m = _per_batch(x, batch, nbatch, rows, cols)
    if not m.flags.c_contiguous:
        m = m.copy()
    buf, off = m._cl()[:2]
    return buf, off, (0 if m.ndim == 2 else rows * cols), cols


def _want():
    """Work groups that keep the device busy: two per compute unit."""
    return 2 * runtime().device.max_compute_units


STAGED = (128, 128, 16, 8, 8)       # matmul_staged.cl's TM, TN, BK, WM, WN
STAGES = 3                          # slices in flight (3 x 16 KB of local memory)
# The most the transposed copies of the operands may add to a product's time to take the staged
# kernel (about 0.92x cuBLAS against the fast kernel's 0.8x on an H200). A copy of A moves
# 8 M K bytes at ~3.1 TB/s beside 2 M N K flops at ~47 TFLOP/s: about 64 / N of the product.
STAGED_COPY_COST = 0.08
# work groups resident per compute unit: gemm's 256 work items of 127 registers and 48 KB of
# local memory (2 on an H100: 65,536 registers); gemm_sk's take 173 (1: a loop around the tile
# steps cost 45-50 registers in every form tried; a group alone on a unit runs ~1.9x faster)
STAGED_PER_CU = 2
SK_PER_CU = 1


def _wave():
    """gemm's work groups the device runs at once."""
    return STAGED_PER_CU * runtime().device.max_compute_units


def _sk_groups():
    """gemm_sk's work groups the device runs at once."""
    return SK_PER_CU * runtime().device.max_compute_units


def _stream_k(tiles, KT):
    """(dp, sk) for a staged product of `tiles` tiles of KT k steps: the tiles gemm takes whole
    (one work group each), and the gemm_sk groups that share out the rest by k steps (0: none).
    gemm runs whole waves; a part-empty last wave took as long as a full one (8192^3 on an
    H100: 15.5 waves as long as 16), so its tiles go to one wave of gemm_sk groups (no more
    groups than steps). Under one wave of tiles, or a whole number: all gemm."""
    dp = tiles - tiles % _wave()
    if dp == 0 or dp == tiles or tiles * KT >= INT_LIMIT or \
            os.environ.get("CARRAY_OPENCL_GEMM_STREAMK") == "0":
        return tiles, 0
    return dp, min(_sk_groups(), (tiles - dp) * KT)


def _staged_mode():
    """"async" (cp.async), "plain" (forced on a device without it), or None: off."""
    env = os.environ.get("CARRAY_OPENCL_GEMM_STAGED")
    if env == "0":
        return None
    if env == "1":
        return "async" if runtime().async_copies else "plain"
    return "async" if runtime().async_copies else None


def _use_staged(mode, M, N, K, copy_a, copy_b, nbatch=1):
    """Whether a float32 M x N x K product (nbatch of them) takes the staged kernel:
    tile-aligned, and (unless forced) enough tiles to fill 3/4 of the compute units and cheap
    operand copies."""
    tm, tn, bk = STAGED[:3]
    if mode is None or M % tm or N % tn or K % bk:
        return False
    if os.environ.get("CARRAY_OPENCL_GEMM_STAGED") == "1":
        return True
    cost = (64 / N if copy_a else 0) + (64 / M if copy_b else 0)
    return (M // tm) * (N // tn) * nbatch * 8 >= 3 * _want() and cost <= STAGED_COPY_COST


def _staged_operands(A, B, M, N, K, batch, nbatch, pa, pb):
    """((buffer, offset, row step, batch step) of A stored K x M, the same of B stored K x N)
    for the staged kernel, copying transposed (one tiled copy each, enqueued straight from the
    buffers) whichever operand is stored the other way. pa, pb: _plain's answers (buffer,
    offset, row step, column step), or for a batch _batched's (buffer, offset, batch step, row
    step) of row-major entries. None when an offset or step is not a whole float4, or a copy
    is beyond the tiled copy's grid."""
    if nbatch == 1:
        (abuf, aoff, lda, csa), (bbuf, boff, ldb, csb) = pa, pb
        sa = sb = 0
        if csa == 1:                # row-major M x K: copy its transpose
            abuf, aoff, lda = _transposed(abuf, K, M, aoff, lda), 0, M
        else:                       # a transposed view of a K x M matrix with row step csa
            lda = csa
        if csb != 1:                # a transposed view of an N x K matrix: copy it row-major
            bbuf, boff, ldb = _transposed(bbuf, K, N, boff, csb), 0, N
    else:
        (abuf, aoff, sa, lda), (bbuf, boff, sb, ldb) = pa, pb
        # row-major entries (row step lda): K x M copies, one shared when A is
        abuf = _transposed(abuf, K, M, aoff, lda, nbatch if sa else 1, sa)
        aoff, lda, sa = 0, M, (K * M if sa else 0)
    if abuf is None or bbuf is None or any(v % 4 for v in (aoff, lda, sa, boff, ldb, sb)):
        return None
    return (abuf, aoff, lda, sa), (bbuf, boff, ldb, sb)


def _transposed(buf, R, C, off, isc, nb=1, isb=0):
    """_transpose.transposed of float32 matrices (None when the tiled copy cannot take them)."""
    try:
        return _transpose.transposed(buf, FLOAT32, 4, R, C, off, isc, nb, isb)
    except ValueError:
        return None


_staged_failed = set()      # modes whose kernel the driver would not build


def _staged_kernel(mode):
    """The staged kernel for mode ("async" / "plain"), or None when the driver cannot build it
    (then, with a warning once, products take the fast kernel)."""
    if mode in _staged_failed:
        return None
    try:
        return _build_staged(mode)
    except runtime().cl.Error as e:
        import warnings
        _staged_failed.add(mode)
        warnings.warn(f"carray: the staged GEMM ({mode} copies) does not build on "
                      f"{runtime().name!r}; using the fast kernel ({e})", RuntimeWarning,
                      stacklevel=3)
        return None


def _build_staged(mode):
    """(gemm, gemm_sk, gemm_fixup) of matmul_staged.cl for mode."""
    return _cache.kernel(("gemm_staged", mode, STAGED, STAGES), ("gemm", "gemm_sk", "gemm_fixup"),
                         lambda: _staged_source(mode))


def _staged_source(mode):
    tm, tn, bk, _, wn = STAGED
    return _cache.render("matmul_staged.cl", tm=tm, tn=tn, bk=bk, wn=wn, stages=STAGES,
                         async_=int(mode == "async"),
                         steps=_cache.render("matmul_staged_steps.cl", wait=STAGES - 2))


TINY = (16, 16, 16, 1, 1)
SPLIT_MIN_K = 128          # the shortest K slice worth its own work group (split-K)
SPLIT_MAX = 512
# K shorter than this never splits: the split's second launch (the reduction) costs the host
# more than the idle compute units cost the device (an MLP step is bound by its launches)
SPLIT_FROM_K = 1000


def _split_general(M, N, K, cfg, from_k=SPLIT_FROM_K, min_k=SPLIT_MIN_K, most=SPLIT_MAX):
    """The K slice length for split-K on the general kernel (0: no split): when the output
    tiles leave most compute units idle and K is long, K is cut into slices, each a batch entry
    of the launch, and the partial products are summed by a reduction (from_k: the shortest K
    that splits, min_k: the shortest slice, most: the most slices; also the convolutions'
    rule, with their own numbers)."""
    tiles = -(-M // cfg[0]) * -(-N // cfg[1])
    want = _want()
    if tiles >= want or K < from_k:
        return 0
    S = min(-(-want // tiles), K // min_k, most)
    if S < 2:
        return 0
    kc = -(-K // S)
    return -(-kc // cfg[2]) * cfg[2]


def _split_fast(M, N, K, fast):
    """The K slice length for split-K on the fast kernel (0: none): slices must divide K into
    whole BK steps (the fast kernel has no edge handling)."""
    tm, tn, bk = fast[:3]
    tiles = (M // tm) * (N // tn)
    want = _want()
    if tiles >= want or K < SPLIT_FROM_K:
        return 0
    best = 0
    for S in range(2, SPLIT_MAX + 1):
        if K % S or (K // S) % bk or K // S < 4 * bk:
            continue
        best = K // S
        if tiles * S >= want:
            break
    return best


class _Plan:
    """What a repeated product (or convolution, _conv.py) of one layout reuses: the kernel, its
    by-value arguments, the global and local sizes, and the split-K partials' shape (or None)."""
    __slots__ = ("knl", "consts", "gsize", "lsize", "part_shape", "staged", "launches")

    def __init__(self, knl, consts, gsize, lsize, part_shape, staged=None, launches=None):
        self.knl, self.consts, self.gsize, self.lsize = knl, consts, gsize, lsize
        self.part_shape = part_shape
        self.staged = staged        # (M, N, K, nbatch): a staged product whose operands are copied
        self.launches = launches    # a staged product's (launches, workspace floats)


_plans = _cache.PlanCache()     # (type, layouts of a, b and c, a1, b1, batch) -> _Plan


def matmul(a, b, c, a1, b1, batch):
    """c[...] = a @ b for device arrays (a, b already of c's dtype; a1/b1: a or b was 1-d;
    batch: the broadcast batch shape).

    Unbatched products read row-major and transposed operands in place (the general kernel
    takes both steps) and, when their output tiles would leave compute units idle, split K over
    the launch's batch and add the slices up with one reduction (split-K). A product whose
    operands need no copy is planned once per layout (the tile and split-K choices, and the
    environment variables above, are read then): a repeat only sets the buffers and enqueues."""
    ac, bc, cc = a._cl(), b._cl(), c._cl()
    key = (cc[2], ac[1:], bc[1:], cc[1:], a1, b1, batch)
    plan = _plans.get(key)
    if plan is None:
        return _matmul_planned(a, b, c, a1, b1, batch, key)
    knl = plan.knl
    part = None
    cbuf = cc[0]
    abuf, bbuf = ac[0], bc[0]
    if plan.staged is not None:
        M, N, K, nbatch = plan.staged
        A = a.reshape(1, K) if a1 else a
        B = b.reshape(K, 1) if b1 else b
        if nbatch == 1:
            pa, pb = _plain(A, M, K), _plain(B, K, N)
        else:
            pa, pb = _batched(A, batch, nbatch, M, K), _batched(B, batch, nbatch, K, N)
        (abuf, *_), (bbuf, *_) = _staged_operands(A, B, M, N, K, batch, nbatch, pa, pb)
    if plan.launches is not None:
        _run_staged(plan.launches, cbuf, abuf, bbuf)
        return c
    if plan.part_shape is not None:
        part = carray.empty(plan.part_shape, dtype=c.dtype, device="gpu")
        cbuf = part._cl()[0]
    with LAUNCH_LOCK:
        submit(runtime().queue, knl, [0, cbuf, 1, abuf, 2, bbuf], plan.consts, plan.gsize,
               plan.lsize)
    if part is not None:
        _reduce.reduce(part, _reduce.R_SUM, (True, False, False), out=c)
    return c


def _matmul_planned(a, b, c, a1, b1, batch, key):
    """matmul() the first time for key: choose and launch, and keep the plan when a repeat can
    reuse it (no operand copied, c contiguous from offset 0 when K is split)."""

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
        if nbatch == 1:
            abuf, aoff, lda, csa = _plain(A, M, K)
            bbuf, boff, ldb, csb = _plain(B, K, N)
            sa = sb = 0
        else:
            abuf, aoff, sa, lda = _batched(A, batch, nbatch, M, K)
            bbuf, boff, sb, ldb = _batched(B, batch, nbatch, K, N)
            csa = csb = 1
        cbuf, coff = target._cl()[:2]
        t = c.dtype.num
        direct = abuf is a._cl()[0] and bbuf is b._cl()[0]     # no operand copied
        copy_a, copy_b = csa == 1, csb != 1     # (a batch's operands are row-major)
        mode = _staged_mode()
        staged = t == FLOAT32 and coff % 4 == 0 and \
            _use_staged(mode, M, N, K, copy_a, copy_b, nbatch) and _staged_kernel(mode)
        if staged:
            ops = _staged_operands(A, B, M, N, K, batch, nbatch,
                                   (abuf, aoff, sa, lda) if nbatch > 1 else (abuf, aoff, lda, csa),
                                   (bbuf, boff, sb, ldb) if nbatch > 1 else (bbuf, boff, ldb, csb))
            if ops is not None and coff + M * N * nbatch <= INT_LIMIT and \
                    max(o[1] + max(o[3] * nbatch, K * o[2]) for o in ops) <= INT_LIMIT:
                _staged_launch(staged, ops, cbuf, coff, M, N, K, nbatch,
                               key if target is c and direct else None, copy_a or copy_b)
                if target is not c:
                    c[...] = target
                return c
        fast = _fast_config(M, N, K, nbatch) if t == FLOAT32 else None
        split = 0
        # the stored matrices' row steps (a transposed operand's is its column step) and the
        # elements each operand spans: float4 loads and 32-bit indices in the fast kernel
        rsa, rsb = (csa if csa != 1 else lda), (csb if csb != 1 else ldb)
        span_a = max(sa * nbatch, (M - 1) * lda + K if csa == 1 else (K - 1) * csa + M)
        span_b = max(sb * nbatch, (K - 1) * ldb + N if csb == 1 else (N - 1) * csb + K)
        if fast and all(o % 4 == 0 for o in (aoff, boff, coff, rsa, rsb)) and \
                max(aoff + span_a, boff + span_b, coff + M * N * nbatch) <= INT_LIMIT:
            cfg = fast
            if nbatch == 1:
                split = _split_fast(M, N, K, fast)
        else:
            fast = None
            cfg = TINY if M * N <= 256 and not os.environ.get("CARRAY_OPENCL_GEMM") else \
                _config(M, N, t)
            if nbatch == 1:
                split = _split_general(M, N, K, cfg)
        part = None
        launches = nbatch
        if split:
            launches = -(-K // split)
            part = carray.empty((launches, M, N), dtype=c.dtype, device="gpu")
            cbuf, coff = part._cl()[0], 0
            sa, sb = split * csa, split * ldb
        if fast:
            # a transposed operand (column step != 1, row step 1) is read from its stored
            # matrix (A: K x M, B: N x K), whose row step is the column step
            fmt = "i"
            ints = (split or K, rsa, rsb, N, sa, sb, M * N, aoff, boff, coff)
        else:
            fmt = "q"
            ints = (M, N, K, lda, ldb, N, sa, sb, M * N, aoff, boff, coff, csa, csb, split)
        tm, tn, bk, wm, wn = cfg
        knl = _kernel(t, cfg, fast is not None, csa != 1, csb != 1)
        consts = numbered(fmt, 3, ints)
        nx, ny = tn // wn, tm // wm
        gsize, lsize = (-(-N // tn) * nx, -(-M // tm) * ny, launches), (nx, ny, 1)
        with LAUNCH_LOCK:
            submit(rt.queue, knl, [0, cbuf, 1, abuf, 2, bbuf], consts, gsize, lsize)
        if target is c and direct and (part is None or c._cl()[1] == 0):
            _plans.put(key, _Plan(knl, consts, gsize, lsize,
                                  None if part is None else part.shape))
        if part is not None:
            if target._cl()[1] == 0:
                _reduce.reduce(part, _reduce.R_SUM, (True, False, False), out=target)
            else:
                target[...] = _reduce.reduce(part, _reduce.R_SUM, (True, False, False)) \
                    .reshape(target.shape)
    if target is not c:
        c[...] = target
    return c


def _staged_launch(kernels, ops, cbuf, coff, M, N, K, nbatch, key, copied):
    """Launch the staged kernels on _staged_operands' answer `ops` into C (cbuf from coff, rows
    of N, batch step M N): gemm over whole waves of tiles, gemm_sk and gemm_fixup over the rest
    (_stream_k); keep a plan under key (when not None), which redoes the operand copies if
    copied."""
    (abuf, aoff, lda, sa), (bbuf, boff, ldb, sb) = ops
    gemm, gemm_sk, fixup = kernels
    tm, tn, bk, wm, wn = STAGED
    tiles_n = N // tn
    tiles_mn = (M // tm) * tiles_n
    tiles = tiles_mn * nbatch
    dp, sk = _stream_k(tiles, K // bk)
    ints = numbered("i", 3, (K, lda, ldb, N, sa, sb, M * N, aoff, boff, coff, tiles_n, tiles_mn))
    nx, ny = tn // wn, tm // wm
    # (kernel, by-value arguments, work groups, (argument index, buffer) pairs: "C", "A", "B"
    # and "W", the workspace)
    launches = [(gemm, ints, dp, ((0, "C"), (1, "A"), (2, "B")))]
    if sk:
        order = (tiles, dp, sk)
        launches += [(gemm_sk, ints + numbered("i", 16, order), sk,
                      ((0, "C"), (1, "A"), (2, "B"), (15, "W"))),
                     (fixup, numbered("i", 2, (K, N, M * N, coff, tiles_n, tiles_mn) + order),
                      tiles - dp, ((0, "C"), (1, "W")))]
    launches = [(knl, consts, (groups * nx, ny, 1), (nx, ny, 1), bufs)
                for knl, consts, groups, bufs in launches]
    staged = (launches, 2 * sk * tm * tn)       # (two tiles of workspace a gemm_sk group)
    _run_staged(staged, cbuf, abuf, bbuf)
    if key is not None:
        _plans.put(key, _Plan(gemm, None, None, None, None,
                              (M, N, K, nbatch) if copied else None, staged))


def _run_staged(staged, cbuf, abuf, bbuf):
    """Enqueue _staged_launch's launches on C, A, B (and a fresh workspace when they use one)."""
    launches, nwork = staged
    work = carray.empty(nwork, dtype=carray.float32, device="gpu") if nwork else None
    by_name = {"C": cbuf, "A": abuf, "B": bbuf, "W": work._cl()[0] if nwork else None}
    queue = runtime().queue
    with LAUNCH_LOCK:
        for knl, consts, gsize, lsize, args in launches:
            submit(queue, knl, [v for i, name in args for v in (i, by_name[name])], consts,
                   gsize, lsize)
