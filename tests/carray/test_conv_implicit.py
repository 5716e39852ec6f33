"""The device convolution as implicit GEMM (carray/opencl/_conv.py, kernels/conv.cl): conv2d,
conv2d_grad_input and conv2d_grad_weight on "gpu" against float64 NumPy references and against
carray's CPU path, over strides, paddings, dilations, kernel shapes, odd sizes, channel counts
that are not multiples of the tile, batches of 1, 5 and 0, bias or none, float32 and float64;
plus the split-K weight gradient, arrays at a buffer offset, other tiles
(CARRAY_OPENCL_CONV_TILE) and the im2col switch (CARRAY_OPENCL_CONV=im2col)."""

import numpy as np
import pytest

import carray as ca
from carray import nn

from conftest import have_gpu

pytestmark = pytest.mark.skipif(not have_gpu(), reason="no OpenCL device")


def pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def windows(xp, kh, kw, stride, dilation, Ho, Wo):
    """(u, v, the strided window of padded xp that tap (u, v) reads) for every tap."""
    (sh, sw), (dh, dw) = stride, dilation
    for u in range(kh):
        for v in range(kw):
            yield u, v, (slice(None), slice(None), slice(u * dh, u * dh + sh * (Ho - 1) + 1, sh),
                         slice(v * dw, v * dw + sw * (Wo - 1) + 1, sw))


def ref_forward(x, w, b, stride, padding, dilation):
    x, w = x.astype(np.float64), w.astype(np.float64)
    (ph, pw) = padding
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    O, C, kh, kw = w.shape
    Ho = (xp.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    Wo = (xp.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((x.shape[0], O, Ho, Wo))
    for u, v, win in windows(xp, kh, kw, stride, dilation, Ho, Wo):
        out += np.einsum("nchw,oc->nohw", xp[win], w[:, :, u, v])
    if b is not None:
        out += b.astype(np.float64)[None, :, None, None]
    return out


def ref_grad_input(g, w, xshape, stride, padding, dilation):
    g, w = g.astype(np.float64), w.astype(np.float64)
    N, C, H, W = xshape
    (ph, pw) = padding
    gxp = np.zeros((N, C, H + 2 * ph, W + 2 * pw))
    O, _, kh, kw = w.shape
    for u, v, win in windows(gxp, kh, kw, stride, dilation, g.shape[2], g.shape[3]):
        gxp[win] += np.einsum("nohw,oc->nchw", g, w[:, :, u, v])
    return gxp[:, :, ph:ph + H, pw:pw + W]


def ref_grad_weight(x, g, wshape, stride, padding, dilation):
    x, g = x.astype(np.float64), g.astype(np.float64)
    (ph, pw) = padding
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    O, C, kh, kw = wshape
    gw = np.zeros(wshape)
    for u, v, win in windows(xp, kh, kw, stride, dilation, g.shape[2], g.shape[3]):
        gw[:, :, u, v] = np.einsum("nchw,nohw->oc", xp[win], g)
    return gw


def close(got, ref, scale, dtype):
    """got (a device Array) equals ref within float rounding of a sum of |terms| = scale."""
    assert got.device == "gpu"
    got = np.asarray(got.to("cpu"))
    assert got.shape == ref.shape and got.dtype == dtype
    tol = 2e-5 if dtype == np.float32 else 1e-12
    assert np.all(np.abs(got - ref) <= tol * (scale + 1e-30)), np.abs(got - ref).max()


def same(got, cpu, dtype):
    """The device result equals carray's CPU result within float32 / float64 rounding."""
    got = np.asarray(got.to("cpu"))
    cpu = np.asarray(cpu)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, cpu, rtol=rtol, atol=rtol * max(1.0, np.abs(cpu).max()))


# (N, C, H, W, O, kh, kw, stride, padding, dilation)
CASES = [
    (2, 3, 8, 8, 4, 3, 3, 1, 1, 1),
    (5, 7, 11, 9, 35, 3, 3, 2, 1, 1),          # odd sizes, O not a multiple of the tile
    (1, 33, 7, 10, 6, 5, 3, 1, 2, 1),          # C not a multiple of the tile, 5x3 kernel
    (3, 5, 13, 12, 9, 3, 3, 2, 2, 2),          # stride, padding and dilation 2
    (2, 6, 9, 7, 5, 1, 1, 1, 0, 1),            # 1x1
    (1, 4, 9, 11, 3, 1, 1, 2, 0, 1),           # 1x1 stride 2 (a shortcut)
    (2, 3, 10, 9, 4, 3, 2, (2, 1), (0, 2), (1, 2)),     # mixed pairs
    (2, 4, 6, 6, 3, 5, 3, 2, 0, 1),            # taps that no output reads on the edge
    (2, 3, 2, 5, 4, 3, 3, 3, 1, 1),            # stride 3 > H - 1: an input phase without rows
    (1, 5, 14, 13, 6, 5, 3, 3, 2, 2),          # stride 3, dilation 2: every third tap a phase
]
IDS = [f"case{i}" for i in range(len(CASES))]


def _case(case, dtype, seed):
    N, C, H, W, O, kh, kw, s, p, d = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, C, H, W)).astype(dtype)
    w = rng.standard_normal((O, C, kh, kw)).astype(dtype)
    b = rng.standard_normal(O).astype(dtype)
    return x, w, b, pair(s), pair(p), pair(d)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward(case, dtype):
    x, w, b, s, p, d = _case(case, dtype, 1)
    for bias in (None, b):
        got = nn.conv2d(ca.asarray(x, device="gpu"), ca.asarray(w, device="gpu"),
                        None if bias is None else ca.asarray(bias, device="gpu"),
                        stride=s, padding=p, dilation=d)
        ref = ref_forward(x, w, bias, s, p, d)
        scale = ref_forward(np.abs(x), np.abs(w), None if bias is None else np.abs(bias), s, p, d)
        close(got, ref, scale, dtype)
        cpu = nn.conv2d(ca.asarray(x), ca.asarray(w), None if bias is None else ca.asarray(bias),
                        stride=s, padding=p, dilation=d)
        same(got, cpu, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_grad_input(case, dtype):
    x, w, _, s, p, d = _case(case, dtype, 2)
    g = ref_forward(x, w, None, s, p, d)
    g = np.random.default_rng(3).standard_normal(g.shape).astype(dtype)
    got = nn.conv2d_grad_input(ca.asarray(g, device="gpu"), ca.asarray(w, device="gpu"),
                               x.shape, stride=s, padding=p, dilation=d)
    ref = ref_grad_input(g, w, x.shape, s, p, d)
    close(got, ref, ref_grad_input(np.abs(g), np.abs(w), x.shape, s, p, d), dtype)
    same(got, nn.conv2d_grad_input(ca.asarray(g), ca.asarray(w), x.shape, stride=s, padding=p,
                                   dilation=d), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_grad_weight(case, dtype):
    x, w, _, s, p, d = _case(case, dtype, 4)
    g = ref_forward(x, w, None, s, p, d)
    g = np.random.default_rng(5).standard_normal(g.shape).astype(dtype)
    got = nn.conv2d_grad_weight(ca.asarray(x, device="gpu"), ca.asarray(g, device="gpu"),
                                w.shape, stride=s, padding=p, dilation=d)
    ref = ref_grad_weight(x, g, w.shape, s, p, d)
    close(got, ref, ref_grad_weight(np.abs(x), np.abs(g), w.shape, s, p, d), dtype)
    same(got, nn.conv2d_grad_weight(ca.asarray(x), ca.asarray(g), w.shape, stride=s, padding=p,
                                    dilation=d), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_empty_batch_and_channels(dtype):
    w = ca.asarray(np.ones((4, 3, 3, 3), dtype), device="gpu")
    x = ca.zeros((0, 3, 5, 5), dtype=dtype, device="gpu")
    out = nn.conv2d(x, w, padding=1)
    assert out.shape == (0, 4, 5, 5) and out.device == "gpu"
    gi = nn.conv2d_grad_input(out, w, (0, 3, 5, 5), padding=1)
    assert gi.shape == (0, 3, 5, 5)
    gw = nn.conv2d_grad_weight(x, out, (4, 3, 3, 3), padding=1)
    np.testing.assert_array_equal(np.asarray(gw.to("cpu")), np.zeros((4, 3, 3, 3), dtype))
    # no input channels: the output is the bias
    x0 = ca.zeros((2, 0, 4, 4), dtype=dtype, device="gpu")
    w0 = ca.zeros((3, 0, 3, 3), dtype=dtype, device="gpu")
    b = ca.asarray(np.array([1, 2, 3], dtype), device="gpu")
    out = np.asarray(nn.conv2d(x0, w0, b, padding=1).to("cpu"))
    np.testing.assert_array_equal(out, np.broadcast_to(np.array([1, 2, 3], dtype)[:, None, None],
                                                       (2, 3, 4, 4)))


def test_unbatched_and_offsets():
    """A 3-d input, and operands that start inside their buffers (views at an offset)."""
    rng = np.random.default_rng(6)
    xs = rng.standard_normal((3, 4, 9, 8)).astype(np.float32)
    ws = rng.standard_normal((2, 5, 4, 3, 3)).astype(np.float32)
    bs = rng.standard_normal(11).astype(np.float32)
    xg, wg, bg = (ca.asarray(a, device="gpu") for a in (xs, ws, bs))
    x, w, b = xg[1:], wg[1], bg[6:]
    assert x.is_contiguous() and w.is_contiguous()
    got = nn.conv2d(x, w, b, stride=2, padding=1)
    ref = ref_forward(xs[1:], ws[1], bs[6:], (2, 2), (1, 1), (1, 1))
    scale = ref_forward(np.abs(xs[1:]), np.abs(ws[1]), np.abs(bs[6:]), (2, 2), (1, 1), (1, 1))
    close(got, ref, scale, np.float32)
    g = ca.asarray(rng.standard_normal((3,) + ref.shape[1:]).astype(np.float32), device="gpu")
    gnp = np.asarray(g.to("cpu"))
    gi = nn.conv2d_grad_input(g[1:], w, x.shape, stride=2, padding=1)
    close(gi, ref_grad_input(gnp[1:], ws[1], x.shape, (2, 2), (1, 1), (1, 1)),
          ref_grad_input(np.abs(gnp[1:]), np.abs(ws[1]), x.shape, (2, 2), (1, 1), (1, 1)),
          np.float32)
    gw = nn.conv2d_grad_weight(x, g[1:], w.shape, stride=2, padding=1)
    close(gw, ref_grad_weight(xs[1:], gnp[1:], w.shape, (2, 2), (1, 1), (1, 1)),
          ref_grad_weight(np.abs(xs[1:]), np.abs(gnp[1:]), w.shape, (2, 2), (1, 1), (1, 1)),
          np.float32)
    out3 = nn.conv2d(xg[0], w, padding=1)
    close(out3[None], ref_forward(xs[:1], ws[1], None, (1, 1), (1, 1), (1, 1)),
          ref_forward(np.abs(xs[:1]), np.abs(ws[1]), None, (1, 1), (1, 1), (1, 1)), np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grad_weight_split_k(monkeypatch, dtype):
    """A device wanting many work groups: the weight gradient's K is split over the launch and
    the slices summed."""
    from carray.opencl import _conv, _matmul
    monkeypatch.setattr(_matmul, "_want", lambda: 4096)     # the split rule is the GEMM's
    monkeypatch.setattr(_conv, "SPLIT_MIN_K", 64)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 6, 29, 27)).astype(dtype)
    g = rng.standard_normal((3, 7, 15, 14)).astype(dtype)
    wshape = (7, 6, 3, 3)
    split = _conv._split(7, 54, 3 * 15 * 14, _conv.tile(_conv.GW, 7))
    assert split > 0 and (3 * 15 * 14) % split % 16      # a last slice ending inside a BK step
    got = nn.conv2d_grad_weight(ca.asarray(x, device="gpu"), ca.asarray(g, device="gpu"),
                                wshape, stride=2, padding=1)
    close(got, ref_grad_weight(x, g, wshape, (2, 2), (1, 1), (1, 1)),
          ref_grad_weight(np.abs(x), np.abs(g), wshape, (2, 2), (1, 1), (1, 1)), dtype)


@pytest.mark.parametrize("tile, dtype, vec", [
    ("24,40,8,8,8", np.float32, "1"),     # work items that do not divide the tiles (15 of them)
    ("64,128,16,8,8", np.float32, "1"),   # the GPU defaults
    ("64,128,16,8,8", np.float32, "0"),
    ("32,128,16,8,8", np.float32, "1"),
    ("128,128,8,8,8", np.float64, "1"),
    ("16,16,8,4,2", np.float64, "1"),
])
def test_other_tiles(monkeypatch, tile, dtype, vec):
    """CARRAY_OPENCL_CONV_TILE picks the tile of all three kernels, CARRAY_OPENCL_CONV_VEC whether
    8 x 8 blocks read 4-vectors (both read per call)."""
    monkeypatch.setenv("CARRAY_OPENCL_CONV_TILE", tile)
    monkeypatch.setenv("CARRAY_OPENCL_CONV_VEC", vec)
    x, w, b, s, p, d = _case(CASES[1], dtype, 8)
    xg, wg, bg = (ca.asarray(a, device="gpu") for a in (x, w, b))
    close(nn.conv2d(xg, wg, bg, stride=s, padding=p, dilation=d), ref_forward(x, w, b, s, p, d),
          ref_forward(np.abs(x), np.abs(w), np.abs(b), s, p, d), dtype)
    g = np.random.default_rng(9).standard_normal(ref_forward(x, w, None, s, p, d).shape)
    g = g.astype(dtype)
    gg = ca.asarray(g, device="gpu")
    close(nn.conv2d_grad_input(gg, wg, x.shape, stride=s, padding=p, dilation=d),
          ref_grad_input(g, w, x.shape, s, p, d),
          ref_grad_input(np.abs(g), np.abs(w), x.shape, s, p, d), dtype)
    close(nn.conv2d_grad_weight(xg, gg, w.shape, stride=s, padding=p, dilation=d),
          ref_grad_weight(x, g, w.shape, s, p, d),
          ref_grad_weight(np.abs(x), np.abs(g), w.shape, s, p, d), dtype)


def test_bad_tile(monkeypatch):
    """A malformed CARRAY_OPENCL_CONV_TILE is a ValueError naming the expected form."""
    x, w, b, s, p, d = _case(CASES[0], np.float32, 8)
    for bad in ("16,16,8", "16,16,8,3,2", "a,b,c,d,e", "16,16,0,4,4"):
        monkeypatch.setenv("CARRAY_OPENCL_CONV_TILE_FWD", bad)
        with pytest.raises(ValueError, match="CARRAY_OPENCL_CONV_TILE_FWD: expected 'TM,TN,BK"):
            nn.conv2d(ca.asarray(x, device="gpu"), ca.asarray(w, device="gpu"))


@pytest.mark.parametrize("path", ["im2col", "implicit"])
def test_switch(monkeypatch, path):
    """CARRAY_OPENCL_CONV=im2col takes the old path, read on every call."""
    from carray.opencl import _conv
    calls = []
    for name in ("forward", "grad_input", "grad_weight"):
        real = getattr(_conv, name)
        monkeypatch.setattr(_conv, name, lambda *a, _r=real, _n=name: calls.append(_n) or _r(*a))
    monkeypatch.setenv("CARRAY_OPENCL_CONV", path)
    x, w, b, s, p, d = _case(CASES[0], np.float32, 9)
    xg, wg, bg = (ca.asarray(a, device="gpu") for a in (x, w, b))
    out = nn.conv2d(xg, wg, bg, stride=s, padding=p, dilation=d)
    nn.conv2d_grad_input(out, wg, x.shape, stride=s, padding=p, dilation=d)
    nn.conv2d_grad_weight(xg, out, w.shape, stride=s, padding=p, dilation=d)
    assert calls == ([] if path == "im2col" else ["forward", "grad_input", "grad_weight"])
    close(out, ref_forward(x, w, b, s, p, d),
          ref_forward(np.abs(x), np.abs(w), np.abs(b), s, p, d), np.float32)


def test_fallback_beyond_32_bit_indices(monkeypatch):
    """Operands whose offset + size would overflow the kernels' int indices take the im2col
    path (here with the limit lowered: an input at an offset past it)."""
    from carray.opencl import _conv
    monkeypatch.setattr(_conv, "INT_LIMIT", 2 * 150)
    calls = []
    real = _conv.forward
    monkeypatch.setattr(_conv, "forward", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(10)
    xs = rng.standard_normal((3, 2, 7, 7)).astype(np.float32)
    w = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
    xg, wg = ca.asarray(xs, device="gpu"), ca.asarray(w, device="gpu")
    ref = ref_forward(xs[1:2], w, None, (1, 1), (1, 1), (1, 1))
    scale = ref_forward(np.abs(xs[1:2]), np.abs(w), None, (1, 1), (1, 1), (1, 1))
    close(nn.conv2d(xg[:1], wg, padding=1), ref_forward(xs[:1], w, None, (1, 1), (1, 1), (1, 1)),
          ref_forward(np.abs(xs[:1]), np.abs(w), None, (1, 1), (1, 1), (1, 1)), np.float32)
    assert calls == [1]                        # 98 elements at offset 0
    close(nn.conv2d(xg[1:2], wg, padding=1), ref, scale, np.float32)
    assert calls == [1]                        # 98 elements at offset 98: past 150, im2col
