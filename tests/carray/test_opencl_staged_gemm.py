"""The staged GEMM (carray/opencl/kernels/matmul_staged.cl, chosen in carray/opencl/_matmul.py)
and the tiled transposed copies it relies on (carray/opencl/_transpose.py), against NumPy.

CARRAY_OPENCL_GEMM_STAGED=1 sends every tile-aligned float32 product through the staged kernel:
with cp.async on NVIDIA GPUs of compute capability 8.0+, with plain copies elsewhere (PoCL in CI).
"""

import numpy as np
import pytest

import carray as ca
from carray.opencl import _cache, _elementwise, _matmul, _transpose

from conftest import have_gpu

pytestmark = pytest.mark.skipif(not have_gpu(), reason="no OpenCL device")


@pytest.fixture(autouse=True)
def tiled_copies(monkeypatch):
    """The tiled transposed copies on every device (CPU devices keep the elementwise copy), with
    no elementwise copy plan made before (a plan would take the copy first)."""
    monkeypatch.setattr(_transpose, "ON_CPU_DEVICES", True)
    _elementwise._plans.clear()
    yield
    _elementwise._plans.clear()


@pytest.fixture
def staged(monkeypatch):
    """Force the staged kernel, with fresh matmul plans (a plan keeps the kernel it chose), and
    count its launches."""
    monkeypatch.setenv("CARRAY_OPENCL_GEMM_STAGED", "1")
    _matmul._plans.clear()
    calls = []
    real = _matmul._staged_launch

    def counting(*args):
        calls.append(args[4:7])
        return real(*args)
    monkeypatch.setattr(_matmul, "_staged_launch", counting)
    yield calls
    _matmul._plans.clear()


def _operand(rng, rows, cols, transposed, pad=0):
    """(NumPy value, device view) of a rows x cols float32 matrix: row-major, or a transposed view
    of a cols x rows one; pad > 0 makes it a view into a wider matrix (row step cols + pad) at an
    offset of pad elements."""
    stored = (cols, rows) if transposed else (rows, cols)
    full = rng.standard_normal((stored[0] + 1, stored[1] + pad)).astype(np.float32)
    part = full[1:, pad:] if pad else full[: stored[0]]
    dev = ca.asarray(full, device="gpu")
    dev = dev[1:, pad:] if pad else dev[: stored[0]]
    return (part.T, dev.T) if transposed else (part, dev)


def _as_block(a, b, shape):
    """(A, B) whose 2-d product is the batched product's rows stacked: a block-diagonal free
    check, by comparing each batch entry's product through one matrix."""
    a = np.broadcast_to(a, shape[:-2] + a.shape[-2:]).reshape(-1, a.shape[-1])
    bb = np.broadcast_to(b, shape[:-2] + b.shape[-2:]).reshape(-1, b.shape[-2], b.shape[-1])
    return a, bb


def _check(r, a, b):
    if b.ndim == 3:                     # stacked rows of a batch: entry i uses b[i]
        rows = a.shape[0] // b.shape[0]
        got = np.asarray(r.to("cpu"))
        for i in range(b.shape[0]):
            _check(ca.asarray(got[i * rows:(i + 1) * rows]), a[i * rows:(i + 1) * rows], b[i])
        return
    ref = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    got = np.asarray(r.to("cpu"), dtype=np.float64)
    assert r.shape == ref.shape and r.dtype.name == "float32"
    err = np.abs(got - ref)
    assert (err <= 1e-5 * scale + 1e-6).all(), f"max error {err.max()}"


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("m,n,k", [(128, 128, 16), (256, 128, 48), (128, 384, 160)])
def test_staged_products_of_every_layout(staged, ta, tb, m, n, k):
    rng = np.random.default_rng(m + n + k + 2 * ta + tb)
    a, da = _operand(rng, m, k, ta)
    b, db = _operand(rng, k, n, tb)
    _check(da @ db, a, b)
    assert staged == [(m, n, k)]
    # a repeat takes the plan (the staged kernel; the operand copies redone)
    plan, = _matmul._plans.values()
    assert plan.knl is _matmul._staged_kernel(_matmul._staged_mode())[0]
    assert plan.staged == ((m, n, k, 1) if (not ta or tb) else None)
    _check(da @ db, a, b)
    b2 = b * 2
    db.__setitem__(Ellipsis, ca.asarray(b2, device="gpu"))     # new values, same layout
    _check(da @ db, a, b2)
    assert len(staged) == 1


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_staged_reads_views_at_offsets(staged, ta, tb):
    rng = np.random.default_rng(7)
    a, da = _operand(rng, 128, 32, ta, pad=4)
    b, db = _operand(rng, 32, 256, tb, pad=8)
    _check(da @ db, a, b)
    assert staged == [(128, 256, 32)]


def test_staged_kernel_offsets(staged, monkeypatch):
    """Operands read in place at element offsets (k-major A at 4, row-major B at 8): the
    kernel's offset arguments, not copies at offset 0; the result lands in a view at 256."""
    rng = np.random.default_rng(21)
    m, n, k = 128, 256, 32
    fa = rng.standard_normal(4 + k * m).astype(np.float32)
    fb = rng.standard_normal(8 + k * n).astype(np.float32)
    a = fa[4:].reshape(k, m).T
    b = fb[8:].reshape(k, n)
    da = ca.asarray(fa, device="gpu")[4:].reshape(k, m).T
    db = ca.asarray(fb, device="gpu")[8:].reshape(k, n)
    fc = ca.zeros(256 + m * n + 4, dtype="float32", device="gpu")
    out = fc[256:256 + m * n].reshape(m, n)
    launches = []
    real = _matmul.submit

    def spy(queue, knl, bufs, vals, gsize, lsize):
        launches.append({vals[i]: int.from_bytes(vals[i + 1], "little", signed=True)
                         for i in range(0, len(vals), 2)})
        return real(queue, knl, bufs, vals, gsize, lsize)
    monkeypatch.setattr(_matmul, "submit", spy)
    r = ca.matmul(da, db, out=out)
    _check(r, a, b)
    assert staged == [(m, n, k)]
    assert [(v[10], v[11]) for v in launches] == [(4, 8)]      # offa, offb: read in place
    rest = np.asarray(fc.to("cpu"))
    assert not rest[:256].any() and not rest[256 + m * n:].any()


def test_staged_kernel_that_does_not_build_falls_back(staged, monkeypatch):
    def broken(mode):
        raise ca.opencl.runtime().cl.RuntimeError("clBuildProgram failed")
    monkeypatch.setattr(_matmul, "_build_staged", broken)
    monkeypatch.setattr(_matmul, "_staged_failed", set())
    rng = np.random.default_rng(2)
    a, da = _operand(rng, 128, 16, True)
    b, db = _operand(rng, 16, 128, False)
    with pytest.warns(RuntimeWarning, match="staged GEMM"):
        _check(da @ db, a, b)
    _check(da @ db, a, b)                   # warned once, still right
    assert staged == []


def test_staged_skips_misaligned_and_untiled_products(staged):
    rng = np.random.default_rng(3)
    a, da = _operand(rng, 128, 32, True)
    flat = rng.standard_normal(32 * 128 + 1).astype(np.float32)
    b = flat[1:].reshape(32, 128)                   # row-major B at an offset of 1 float
    db = ca.asarray(flat, device="gpu")[1:].reshape(32, 128)
    _check(da @ db, a, b)
    a2, da2 = _operand(rng, 120, 32, False)         # M not a multiple of 128
    _check(da2 @ db, a2, b)
    a3, da3 = _operand(rng, 128, 24, False)         # K not a multiple of 16
    b3, db3 = _operand(rng, 24, 128, False)
    _check(da3 @ db3, a3, b3)
    assert staged == []


@pytest.mark.parametrize("sa,sb", [((3, 128, 32), (3, 32, 256)), ((128, 32), (3, 32, 128)),
                                   ((3, 128, 32), (32, 128)), ((2, 1, 128, 16), (1, 3, 16, 128))])
def test_staged_batches(staged, sa, sb):
    rng = np.random.default_rng(len(sa) + len(sb))
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    da, db = ca.asarray(a, device="gpu"), ca.asarray(b, device="gpu")
    for _ in range(2):                                  # the repeat takes the plan
        r = da @ db
        expect = np.matmul(a.astype(np.float64), b)
        assert r.shape == expect.shape
        _check(r.reshape(-1, r.shape[-1]) if r.ndim > 2 else r,
               *_as_block(a, b, expect.shape))
    # once, then from the plan; operands broadcast by copying (the last case) are planned anew
    assert staged == [(128, sb[-1], sa[-1])] * (2 if len(sa) == 4 else 1)


@pytest.mark.parametrize("a_layout", ["row-major", "k-major"])
@pytest.mark.parametrize("wave,groups", [(2, 2), (3, 5), (4, 40)])
@pytest.mark.parametrize("shape_a,shape_b", [      # tiles that no wave divides
    ((896, 48), (48, 896)),             # 49 tiles of 3 k steps: pieces across tile rows
    ((1408, 160), (160, 128)),          # 11 tiles of 10 steps
    ((128, 16), (16, 1664)),            # 13 tiles of one k step
    ((7, 128, 64), (7, 64, 896)),       # 49 tiles over 7 batch entries: runs cross entries
    ((128, 1040), (1040, 896)),         # 7 tiles of 65 steps
])
def test_stream_k_shares_out_the_last_wave(staged, monkeypatch, a_layout, wave, groups,
                                           shape_a, shape_b):
    """With `wave` gemm groups resident, tiles = q wave + r (q, r > 0) run as q wave whole
    tiles and `groups` gemm_sk groups (no more than the r tiles' steps) sharing the r tiles' k
    steps: runs longer than a tile, and shorter (several pieces a tile, the 40 groups), summed
    by gemm_fixup; A row-major (copied transposed) or a transposed view (read as it is).
    Checked against NumPy on the first call and on the plan's repeat (new values), into a
    fresh array and into a view at an offset."""
    monkeypatch.setattr(_matmul, "_wave", lambda: wave)
    monkeypatch.setattr(_matmul, "_sk_groups", lambda: groups)
    splits = []
    real = _matmul._stream_k

    def spy(tiles, KT):
        splits.append((tiles, KT, real(tiles, KT)))
        return splits[-1][2]
    monkeypatch.setattr(_matmul, "_stream_k", spy)
    rng = np.random.default_rng(wave + groups + shape_a[-1])
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    da, db = ca.asarray(a, device="gpu"), ca.asarray(b, device="gpu")
    if a_layout == "k-major":                           # the same values, stored K x M
        da = ca.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2)), device="gpu")
        da = da.transpose(*range(a.ndim - 2), a.ndim - 1, a.ndim - 2)
    for scale in (1, -3):                               # the repeat takes the plan
        if scale != 1:
            a = a * scale
            da[...] = ca.asarray(a, device="gpu")
        r = da @ db
        expect = np.matmul(a.astype(np.float64), b)
        _check(r.reshape(-1, r.shape[-1]) if r.ndim > 2 else r,
               *(_as_block(a, b, expect.shape) if a.ndim > 2 else (a, b)))
    # into a view at an offset (the kernels' offc; ca.matmul's out= goes through a fresh array)
    full = ca.zeros((2,) + expect.shape, dtype="float32", device="gpu")
    _matmul.matmul(da, db, full[1], False, False, expect.shape[:-2])
    got = np.asarray(full.to("cpu"))
    assert not got[0].any()
    _check(ca.asarray(got[1].reshape(-1, got.shape[-1])),
           *(_as_block(a, b, expect.shape) if a.ndim > 2 else (a, b)))
    tiles = (expect.shape[-2] // 128) * (expect.shape[-1] // 128) * \
        (expect.shape[0] if expect.ndim > 2 else 1)
    KT = shape_a[-1] // 16
    # planned, and planned for the view (a batch of transposed views is copied row-major, and
    # a product with a copied operand keeps no plan: planned on every call)
    assert [s[:2] for s in splits] == [(tiles, KT)] * (3 if a.ndim > 2 and
                                                       a_layout == "k-major" else 2)
    rest = tiles % wave if tiles > wave else 0
    assert splits[0][2] == ((tiles - rest, min(groups, rest * KT)) if rest else (tiles, 0))


def test_stream_k_rule(monkeypatch):
    monkeypatch.setattr(_matmul, "_wave", lambda: 4)
    monkeypatch.setattr(_matmul, "_sk_groups", lambda: 3)
    assert _matmul._stream_k(9, 10) == (8, 3)       # one tile left over: 3 groups share it
    assert _matmul._stream_k(9, 2) == (8, 2)        # no more groups than its 2 steps
    assert _matmul._stream_k(8, 10) == (8, 0)       # whole waves
    assert _matmul._stream_k(3, 10) == (3, 0)       # under one wave
    monkeypatch.setenv("CARRAY_OPENCL_GEMM_STREAMK", "0")
    assert _matmul._stream_k(9, 10) == (9, 0)


def test_staged_batch_of_transposed_views(staged):
    """q @ k.transpose(-2, -1), as attention computes it (k's batch copied row-major first)."""
    rng = np.random.default_rng(9)
    q = rng.standard_normal((4, 128, 32)).astype(np.float32)
    k = rng.standard_normal((4, 256, 32)).astype(np.float32)
    r = ca.asarray(q, device="gpu") @ ca.asarray(k, device="gpu").transpose(0, 2, 1)
    expect = np.matmul(q.astype(np.float64), k.transpose(0, 2, 1))
    got = np.asarray(r.to("cpu"), dtype=np.float64)
    scale = np.matmul(np.abs(q).astype(np.float64), np.abs(k).transpose(0, 2, 1))
    assert (np.abs(got - expect) <= 1e-5 * scale + 1e-6).all()
    assert staged == [(128, 256, 32)]


def test_staged_output_view_and_zero_k(staged):
    rng = np.random.default_rng(5)
    a, da = _operand(rng, 128, 16, False)
    b, db = _operand(rng, 16, 128, False)
    out = ca.zeros((128, 130), dtype="float32", device="gpu")
    r = ca.matmul(da, db, out=out[:, 2:])           # a non-contiguous target
    _check(r, a, b)
    np.testing.assert_array_equal(np.asarray(out[:, :2].to("cpu")), 0)
    z = ca.zeros((128, 0), dtype="float32", device="gpu") @ ca.zeros((0, 128), dtype="float32",
                                                                     device="gpu")
    np.testing.assert_array_equal(np.asarray(z.to("cpu")), np.zeros((128, 128)))


def test_staged_rule(monkeypatch):
    """Unforced, the staged kernel needs cp.async, enough tiles and cheap operand copies."""
    monkeypatch.delenv("CARRAY_OPENCL_GEMM_STAGED", raising=False)
    monkeypatch.setattr(_matmul, "_want", lambda: 264)        # an H100/H200: 132 CUs
    use = _matmul._use_staged
    assert use("async", 4096, 4096, 4096, True, False)         # copy of A: 64/4096 of the time
    assert use("async", 4096, 4096, 4096, True, True)
    assert use("async", 4096, 1024, 512, False, False)
    assert not use("async", 4096, 512, 4096, True, False)      # copy of A: 1/8 of the time
    assert use("async", 4096, 512, 4096, False, False)
    assert not use("async", 1024, 1024, 4096, False, False)    # 64 tiles for 132 CUs
    assert not use("async", 4096, 4096, 4088, False, False)    # K not whole slices
    assert not use(None, 4096, 4096, 4096, False, False)
    monkeypatch.setenv("CARRAY_OPENCL_GEMM_STAGED", "0")
    assert _matmul._staged_mode() is None


def test_staged_kernel_variant_matches_the_device(staged):
    rng = np.random.default_rng(1)
    a, da = _operand(rng, 128, 16, True)
    b, db = _operand(rng, 16, 128, False)
    _check(da @ db, a, b)
    mode = "async" if ca.opencl.runtime().async_copies else "plain"
    assert any(k[:2] == ("gemm_staged", mode) for k in _cache._kernels)


# -- transposed copies ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint16", "int64", "bool",
                                   "float16", "complex64"])
@pytest.mark.parametrize("shape", [(16, 16), (33, 70), (100, 17), (3, 40, 65)])
def test_transposed_copy(dtype, shape):
    rng = np.random.default_rng(len(shape) + shape[-1])
    x = (rng.standard_normal(shape) * 50).astype(dtype) if dtype != "complex64" else \
        (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype == "float64" and not ca.opencl.runtime().fp64:
        pytest.skip("no float64 on this device")
    d = ca.asarray(x, device="gpu")
    perm = (1, 0) if len(shape) == 2 else (0, 2, 1)
    assert _transpose.fits(*_layout_of(d.transpose(perm)))
    calls = []
    real = _transpose.run
    _transpose.run = lambda *args: (calls.append(args[3]), real(*args))
    try:
        got = d.transpose(perm).copy()
    finally:
        _transpose.run = real
    # (complex arrays are copied as float pairs: a layout of three dims, not this kernel's)
    assert len(calls) == (0 if dtype == "complex64" else 1)
    np.testing.assert_array_equal(np.asarray(got.to("cpu")), x.transpose(perm))


def test_transposed_copy_of_views_and_into_views():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((70, 90)).astype(np.float32)
    d = ca.asarray(x, device="gpu")
    np.testing.assert_array_equal(np.asarray(d[3:60:2, 5:].T.copy().to("cpu")), x[3:60:2, 5:].T)
    out = ca.zeros((90, 80), dtype="float32", device="gpu")
    out[:, 10:] = d[:, :].T                          # into a view: the output's row step is 80
    np.testing.assert_array_equal(np.asarray(out[:, 10:].to("cpu")), x.T)
    np.testing.assert_array_equal(np.asarray(out[:, :10].to("cpu")), 0)
    y = d.T.astype("float64") if ca.opencl.runtime().fp64 else None    # a cast: not this path
    if y is not None:
        np.testing.assert_array_equal(np.asarray(y.to("cpu")), x.T.astype(np.float64))


def test_transpose_fits_only_its_layouts():
    assert _transpose.fits((32, 64), [(64, 1), (1, 32)])
    assert _transpose.fits((2, 32, 64), [(2048, 64, 1), (4096, 1, 40)])
    assert not _transpose.fits((32, 64), [(64, 1), (64, 1)])      # a plain copy
    assert not _transpose.fits((32, 64), [(1, 32), (1, 32)])      # output not row-major
    assert not _transpose.fits((8, 64), [(64, 1), (1, 8)])        # too small a side
    assert not _transpose.fits((2, 32, 64), [(4096, 64, 1), (4096, 1, 40)])  # batch gap
    assert not _transpose.fits((2048,), [(1,), (1,)])
    assert not _transpose.fits((70000, 16, 16), [(256, 16, 1), (256, 1, 16)])  # grid's limit
    assert not _transpose.fits((32 * 65536, 16), [(16, 1), (1, 32 * 65536)])


def _layout_of(view):
    """(coalesced shape, [output strides, view strides]) of copying view into a new array."""
    from carray.opencl import _layout
    shape = view.shape
    c = 1
    ost = []
    for s in reversed(shape):
        ost.insert(0, c)
        c *= s
    vst = view._cl()[4]
    return _layout.coalesce(shape, [_layout.broadcast_strides(shape, shape, tuple(ost)),
                                    _layout.broadcast_strides(shape, shape, vst)])


@pytest.mark.parametrize("nb", [1, 3])
def test_transposed_from_buffers(nb):
    """_transpose.transposed: the staged GEMM's copies, straight from a buffer at an offset,
    rows wider than the copy and a batch step; ValueError for a layout the kernel cannot take."""
    rng = np.random.default_rng(nb)
    full = rng.standard_normal((nb, 50, 40)).astype(np.float32)    # entry b: 50 rows of 40
    d = ca.asarray(full, device="gpu")
    buf, off = d._cl()[:2]
    R, C = 37, 50                                      # out[b] = full[b, :, 1:38].T
    rt = ca.opencl.runtime()
    out = _transpose.transposed(buf, d.dtype.num, 4, R, C, off + 1, 40, nb, 50 * 40)
    got = np.empty((nb, R, C), np.float32)
    rt.cl.enqueue_copy(rt.queue, got, out)
    rt.queue.finish()
    np.testing.assert_array_equal(got, full[:, :, 1:R + 1].transpose(0, 2, 1))
    with pytest.raises(ValueError, match="no tiled copy"):
        _transpose.transposed(buf, d.dtype.num, 4, 8, C, off, 40)      # a side under 16
