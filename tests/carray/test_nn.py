"""carray.nn (conv2d, max_pool2d, avg_pool2d and their gradients) against references written with
NumPy here, on random shapes, strides, paddings and dilations.

- forward: float64 references (np.einsum over the windows of an explicitly padded input; plain
  loops for pooling), float32 within 1e-4 of the scale |w| * |x|, float64 within 1e-12;
- gradients: central finite differences in float64 of <g, f(x)>, and the adjoint identities
  <g, f(x)> = <f_grad(g), x> (and = <grad_weight, w> for conv2d);
- non-contiguous inputs (transposed, strided, reversed views), unbatched 3-d inputs, empty
  batches, one thread and all threads, and the errors PyTorch raises;
- torch.nn.functional, when torch is installed.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carray as ca
from carray import nn

from conftest import gpu_examples, on

SET = settings(max_examples=150, deadline=None)
FEW = settings(max_examples=40, deadline=None)


# ---------------------------------------------------------------------------------------------
# references
# ---------------------------------------------------------------------------------------------

def pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def ref_conv2d(x, w, b=None, stride=1, padding=0, dilation=1):
    """Cross-correlation in float64: a sum over kernel taps of einsum over strided windows."""
    (sh, sw), (ph, pw), (dh, dw) = pair(stride), pair(padding), pair(dilation)
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    O, C, kh, kw = w.shape
    Ho = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    Wo = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((x.shape[0], O, Ho, Wo))
    for u in range(kh):
        for v in range(kw):
            win = xp[:, :, u * dh: u * dh + sh * (Ho - 1) + 1: sh,
                     v * dw: v * dw + sw * (Wo - 1) + 1: sw]
            out += np.einsum("nchw,oc->nohw", win, w[:, :, u, v])
    if b is not None:
        out += np.asarray(b, np.float64)[None, :, None, None]
    return out


def pool_out(size, k, s, p, d, ceil):
    n = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (n - 1) * s >= size + p:
        n -= 1
    return n


def ref_max_pool(x, k, s=None, p=0, d=1, ceil=False):
    """(values, flat indices) by loops over each window's valid elements (first max wins)."""
    (kh, kw) = pair(k)
    (sh, sw) = pair(k if s is None else s)
    (ph, pw), (dh, dw) = pair(p), pair(d)
    N, C, H, W = x.shape
    Ho, Wo = pool_out(H, kh, sh, ph, dh, ceil), pool_out(W, kw, sw, pw, dw, ceil)
    out = np.empty((N, C, Ho, Wo), x.dtype)
    idx = np.empty((N, C, Ho, Wo), np.int64)
    for n in range(N):
        for c in range(C):
            for i in range(Ho):
                for j in range(Wo):
                    best, bi = -np.inf, -1          # -1: the window misses the input
                    for u in range(kh):
                        for v in range(kw):
                            y, z = i * sh - ph + u * dh, j * sw - pw + v * dw
                            if 0 <= y < H and 0 <= z < W:
                                if bi < 0 or x[n, c, y, z] > best or np.isnan(x[n, c, y, z]):
                                    best, bi = x[n, c, y, z], y * W + z
                    out[n, c, i, j], idx[n, c, i, j] = best, bi
    return out, idx


def ref_avg_pool(x, k, s=None, p=0, ceil=False, count_include_pad=True, divisor=None):
    """Loops over windows; the divisor as PyTorch computes it."""
    (kh, kw) = pair(k)
    (sh, sw) = pair(k if s is None else s)
    (ph, pw) = pair(p)
    N, C, H, W = x.shape
    Ho, Wo = pool_out(H, kh, sh, ph, 1, ceil), pool_out(W, kw, sw, pw, 1, ceil)
    out = np.zeros((N, C, Ho, Wo))
    for i in range(Ho):
        for j in range(Wo):
            y0, z0 = i * sh - ph, j * sw - pw
            y1, z1 = min(y0 + kh, H + ph), min(z0 + kw, W + pw)
            size = (y1 - y0) * (z1 - z0)
            y0, z0, y1, z1 = max(y0, 0), max(z0, 0), min(y1, H), min(z1, W)
            if not count_include_pad:
                size = (y1 - y0) * (z1 - z0)
            if divisor:
                size = divisor
            out[:, :, i, j] = x[:, :, y0:y1, z0:z1].astype(np.float64).sum(axis=(2, 3)) / size
    return out


def numeric_grad(f, x, g, eps=1e-6):
    """d<g, f(x)>/dx by central differences (f linear or piecewise linear: exact up to rounding)."""
    out = np.zeros_like(x)
    flat, gflat = x.reshape(-1), out.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = float((g * f(x)).sum())
        flat[i] = old - eps
        down = float((g * f(x)).sum())
        flat[i] = old
        gflat[i] = (up - down) / (2 * eps)
    return out


# ---------------------------------------------------------------------------------------------
# random cases
# ---------------------------------------------------------------------------------------------

@st.composite
def conv_cases(draw, max_n=3):
    """(x shape, w shape, stride, padding, dilation, seed) with a valid output size."""
    N, C, O = draw(st.integers(1, max_n)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    stride = draw(st.one_of(st.integers(1, 3), st.tuples(st.integers(1, 3), st.integers(1, 3))))
    padding = draw(st.one_of(st.integers(0, 2), st.tuples(st.integers(0, 2), st.integers(0, 2))))
    dilation = draw(st.one_of(st.integers(1, 2), st.tuples(st.integers(1, 2), st.integers(1, 2))))
    (ph, pw), (dh, dw) = pair(padding), pair(dilation)
    H = draw(st.integers(max(1, dh * (kh - 1) + 1 - 2 * ph), 9))
    W = draw(st.integers(max(1, dw * (kw - 1) + 1 - 2 * pw), 9))
    return (N, C, H, W), (O, C, kh, kw), stride, padding, dilation, draw(st.integers(0, 2**31))


@st.composite
def pool_cases(draw, avg=False):
    """(x shape, kernel, stride or None, padding, dilation, ceil_mode, seed), PyTorch-valid."""
    N, C = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    k = draw(st.one_of(st.integers(1, 3), st.tuples(st.integers(1, 3), st.integers(1, 3))))
    s = draw(st.one_of(st.none(), st.integers(1, 3), st.tuples(st.integers(1, 3),
                                                               st.integers(1, 3))))
    d = (1, 1) if avg else pair(draw(st.one_of(st.integers(1, 2),
                                               st.tuples(st.integers(1, 2), st.integers(1, 2)))))
    kk = pair(k)
    ext = [(kk[i] - 1) * d[i] + 1 for i in range(2)]
    p = tuple(draw(st.integers(0, (kk[i] if avg else ext[i]) // 2)) for i in range(2))
    ceil = draw(st.booleans())
    H = draw(st.integers(max(1, ext[0] - 2 * p[0]), 9))
    W = draw(st.integers(max(1, ext[1] - 2 * p[1]), 9))
    return (N, C, H, W), k, s, p, d, ceil, draw(st.integers(0, 2**31))


def rand(shape, seed, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def distinct(shape, seed):
    """Values with no ties (a permutation of a spaced grid): max pooling has one argmax."""
    n = int(np.prod(shape))
    return np.random.default_rng(seed).permutation(n).reshape(shape).astype(np.float64) * 0.1


def close(got, ref, scale, dtype):
    tol = 1e-4 if dtype == np.float32 else 1e-12
    got = np.asarray(got)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    assert got.dtype == dtype
    err = np.abs(got.astype(np.float64) - ref)
    assert (err <= tol * (scale + 1e-30) + tol).all(), f"max error {err.max()}"


def view_of(n, how, seed, device="cpu"):
    """A carray view on `device` with n's values: 'plain', 'nhwc' (a permuted NHWC array),
    'strided' (every other element) or 'reversed' (negative steps)."""
    if how == "plain":
        return on(n, device)
    if how == "nhwc":
        return on(np.ascontiguousarray(n.transpose(0, 2, 3, 1)), device).transpose(0, 3, 1, 2)
    if how == "strided":
        big = np.zeros(tuple(2 * s for s in n.shape), n.dtype)
        big[::2, ::2, ::2, ::2] = n
        return on(big, device)[::2, ::2, ::2, ::2]
    assert how == "reversed"
    return on(np.ascontiguousarray(n[::-1, :, ::-1, ::-1]), device)[::-1, :, ::-1, ::-1]


def host(a, device):
    """The device result a (checked to be on `device`) as a NumPy array."""
    assert a.device == device, (a.device, device)
    return np.asarray(a.to("cpu"))


LAYOUTS = ("plain", "nhwc", "strided", "reversed")


# ---------------------------------------------------------------------------------------------
# conv2d forward
# ---------------------------------------------------------------------------------------------

@gpu_examples(10)
@SET
@given(conv_cases(), st.sampled_from([np.float32, np.float64]), st.booleans(),
       st.sampled_from(LAYOUTS))
def test_conv2d_forward(device, case, dtype, with_bias, layout):
    xs, ws, stride, padding, dilation, seed = case
    x, w, b = rand(xs, seed, dtype), rand(ws, seed + 1, dtype), rand(ws[:1], seed + 2, dtype)
    got = nn.conv2d(view_of(x, layout, seed, device), on(w, device),
                    on(b, device) if with_bias else None,
                    stride=stride, padding=padding, dilation=dilation)
    got = host(got, device)
    ref = ref_conv2d(x, w, b if with_bias else None, stride, padding, dilation)
    scale = ref_conv2d(np.abs(x), np.abs(w), np.abs(b) if with_bias else None, stride, padding,
                       dilation)
    close(got, ref, scale, dtype)


@pytest.mark.parametrize("threads", [1, None])
@pytest.mark.parametrize("N", [1, 2, 5])
def test_conv2d_threads_and_batch_sizes(N, threads):
    """Both paths: images across threads (N >= threads) and one image at a time."""
    x, w, b = rand((N, 3, 11, 10), 1), rand((6, 3, 3, 3), 2), rand((6,), 3)
    prev = ca.get_num_threads()
    ca.set_num_threads(threads or max(2, prev))
    try:
        out = nn.conv2d(ca.array(x), ca.array(w), ca.array(b), padding=1)
        gi = nn.conv2d_grad_input(ca.array(out), ca.array(w), x.shape, padding=1)
        gw = nn.conv2d_grad_weight(ca.array(x), ca.array(out), w.shape, padding=1)
    finally:
        ca.set_num_threads(prev)
    ref = ref_conv2d(x, w, b, 1, 1, 1)
    close(out, ref, np.abs(ref) + 10, np.float64)
    g = np.asarray(out)
    # adjoints: <g, conv(x)> (no bias) = <gi, x> = <gw, w>
    lin = float((g * ref_conv2d(x, w, None, 1, 1, 1)).sum())
    assert np.isclose(float((np.asarray(gi) * x).sum()), lin, rtol=1e-10)
    assert np.isclose(float((np.asarray(gw) * w).sum()), lin, rtol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_pointwise_and_large(dtype):
    """A 1x1 kernel (no im2col) and a W9-like layer (GEMM blocking with large K and L)."""
    x, w = rand((2, 16, 12, 12), 4, dtype), rand((8, 16, 1, 1), 5, dtype)
    close(nn.conv2d(ca.array(x), ca.array(w)), ref_conv2d(x, w),
          ref_conv2d(np.abs(x), np.abs(w)), dtype)
    x, w = rand((3, 16, 20, 20), 6, dtype), rand((32, 16, 3, 3), 7, dtype)
    close(nn.conv2d(ca.array(x), ca.array(w), padding=1), ref_conv2d(x, w, padding=1),
          ref_conv2d(np.abs(x), np.abs(w), padding=1), dtype)


@pytest.mark.parametrize("hw, kernel, padding, dilation", [
    ((5, 7), (3, 3), (1, 1), 1), ((4, 6), (3, 5), (1, 2), 1), ((6, 5), (3, 3), (2, 2), 2),
    ((1, 1), (3, 3), (1, 1), 1), ((2, 9), (5, 1), (2, 0), 1), ((3, 4), (3, 3), (4, 2), (4, 2)),
    ((4, 1), (5, 5), (2, 2), 1), ((3, 2), (3, 7), (1, 6), (1, 2))])
def test_conv2d_same_size(hw, kernel, padding, dilation):
    """Stride 1 with output rows as long as the input's: col's rows are copied as blocks of
    shifted input rows (rows above, below and beside the input zeroed)."""
    x, w = rand((2, 3) + hw, 1), rand((4, 3) + kernel, 2)
    out = nn.conv2d(ca.array(x), ca.array(w), padding=padding, dilation=dilation)
    assert out.shape[3] == hw[1]
    ref = ref_conv2d(x, w, None, 1, padding, dilation)
    close(out, ref, np.abs(ref) + 10, np.float64)
    g = rand(ref.shape, 3)
    gw = nn.conv2d_grad_weight(ca.array(x), ca.array(g), w.shape, padding=padding,
                               dilation=dilation)
    ref_gw = numeric_grad(lambda v: ref_conv2d(x, v, None, 1, padding, dilation), w.copy(), g)
    np.testing.assert_allclose(gw, ref_gw, atol=1e-7)


@pytest.mark.parametrize("images_per_chunk", [1, 2, 3, None])
@pytest.mark.parametrize("kernel, stride, padding", [((3, 2), (1, 2), (1, 0)), ((1, 1), 1, 0)])
@pytest.mark.parametrize("N", [7, 8])
def test_conv2d_chunks(images_per_chunk, kernel, stride, padding, N):
    """The images go in chunks sized by a col budget: one image per chunk (the pointwise case
    then multiplies the image itself), several with a shorter last chunk, or all at once; with
    8 images each of 2 threads runs its own 4, with 7 all threads work on each chunk."""
    from carray.cpu import _nn
    C, H, W, O = 3, 6, 5, 4
    x, w, b = rand((N, C, H, W), 1), rand((O, C) + kernel, 2), rand((O,), 3)
    kw = dict(stride=stride, padding=padding)
    ref = ref_conv2d(x, w, b, stride, padding, 1)
    g = rand(ref.shape, 4)
    col_bytes = C * kernel[0] * kernel[1] * ref.shape[2] * ref.shape[3] * 8
    prev = _nn._set_col_budget(col_bytes * images_per_chunk if images_per_chunk else 1 << 30)
    try:
        out = nn.conv2d(ca.array(x), ca.array(w), ca.array(b), **kw)
        gi = nn.conv2d_grad_input(ca.array(g), ca.array(w), x.shape, **kw)
        gw = nn.conv2d_grad_weight(ca.array(x), ca.array(g), w.shape, **kw)
    finally:
        _nn._set_col_budget(prev)
    close(out, ref, np.abs(ref) + 10, np.float64)
    gi_ref = numeric_grad(lambda v: ref_conv2d(v, w, None, stride, padding, 1), x.copy(), g)
    gw_ref = numeric_grad(lambda v: ref_conv2d(x, v, None, stride, padding, 1), w.copy(), g)
    np.testing.assert_allclose(gi, gi_ref, atol=1e-7)
    np.testing.assert_allclose(gw, gw_ref, atol=1e-7)


def test_conv2d_unbatched_empty_and_same_padding():
    x, w, b = rand((3, 7, 6), 1), rand((4, 3, 2, 3), 2), rand((4,), 3)
    out = nn.conv2d(ca.array(x), ca.array(w), ca.array(b), padding=(1, 0))
    assert out.shape == (4, 8, 4)
    close(out, ref_conv2d(x[None], w, b, 1, (1, 0))[0], np.full(out.shape, 10.0), np.float64)
    # no input channels: the bias alone; no output channels: an empty result
    out = nn.conv2d(ca.zeros((2, 0, 5, 5), dtype="float64"), ca.zeros((4, 0, 3, 3),
                    dtype="float64"), ca.array(b))
    assert np.array_equal(np.asarray(out), np.broadcast_to(b[None, :, None, None], (2, 4, 3, 3)))
    assert nn.conv2d_grad_weight(ca.zeros((2, 0, 5, 5), dtype="float64"), out,
                                 (4, 0, 3, 3)).shape == (4, 0, 3, 3)
    assert nn.conv2d_grad_input(out, ca.zeros((4, 0, 3, 3), dtype="float64"),
                                (2, 0, 5, 5)).shape == (2, 0, 5, 5)
    assert nn.conv2d(ca.array(x), ca.zeros((0, 3, 2, 2), dtype="float64")).shape == (0, 6, 5)
    empty = nn.conv2d(ca.zeros((0, 3, 5, 5), dtype="float64"), ca.array(w))
    assert empty.shape == (0, 4, 4, 3)
    assert nn.conv2d_grad_weight(ca.zeros((0, 3, 5, 5), dtype="float64"), empty,
                                 w.shape).tolist() == np.zeros(w.shape).tolist()
    # 'same' (even extents pad one more after, as PyTorch) and 'valid'
    for ws, dil in (((4, 3, 2, 3), 1), ((4, 3, 3, 3), 2), ((4, 3, 2, 2), (2, 1))):
        w = rand(ws, 4)
        out = nn.conv2d(ca.array(x[None]), ca.array(w), padding="same", dilation=dil)
        assert out.shape == (1, 4, 7, 6)
        eh, ew = [(k - 1) * d for k, d in zip(ws[2:], pair(dil))]
        xp = np.pad(x[None], ((0, 0), (0, 0), (eh // 2, eh - eh // 2), (ew // 2, ew - ew // 2)))
        close(out, ref_conv2d(xp, w, dilation=dil), np.full(out.shape, 10.0), np.float64)
        g = rand(out.shape, 5)
        gi = nn.conv2d_grad_input(ca.array(g), ca.array(w), (1, 3, 7, 6), padding="same",
                                  dilation=dil)
        gw = nn.conv2d_grad_weight(ca.array(x[None]), ca.array(g), ws, padding="same",
                                   dilation=dil)
        lin = float((g * np.asarray(out)).sum())
        assert np.isclose(float((np.asarray(gi) * x[None]).sum()), lin, rtol=1e-10)
        assert np.isclose(float((np.asarray(gw) * w).sum()), lin, rtol=1e-10)
    assert nn.conv2d(ca.array(x), ca.array(w), padding="valid").shape == (4, 6, 5)


# ---------------------------------------------------------------------------------------------
# conv2d gradients
# ---------------------------------------------------------------------------------------------

@FEW
@given(conv_cases(max_n=2))
def test_conv2d_gradients_finite_differences(case):
    xs, ws, stride, padding, dilation, seed = case
    x, w, b = rand(xs, seed), rand(ws, seed + 1), rand(ws[:1], seed + 2)
    kw = dict(stride=stride, padding=padding, dilation=dilation)
    out_shape = nn.conv2d(ca.array(x), ca.array(w), **kw).shape
    g = rand(out_shape, seed + 3)
    conv = lambda x_, w_, b_: np.asarray(nn.conv2d(ca.array(x_), ca.array(w_), ca.array(b_), **kw))
    gi = nn.conv2d_grad_input(ca.array(g), ca.array(w), xs, **kw)
    gw = nn.conv2d_grad_weight(ca.array(x), ca.array(g), ws, **kw)
    gb = nn.conv2d_grad_bias(ca.array(g))
    np.testing.assert_allclose(gi, numeric_grad(lambda v: conv(v, w, b), x.copy(), g), atol=1e-7)
    np.testing.assert_allclose(gw, numeric_grad(lambda v: conv(x, v, b), w.copy(), g), atol=1e-7)
    np.testing.assert_allclose(gb, numeric_grad(lambda v: conv(x, w, v), b.copy(), g), atol=1e-7)


@gpu_examples(10)
@SET
@given(conv_cases(), st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS))
def test_conv2d_gradients_adjoint(device, case, layout_g, layout_x):
    """<g, conv(x, w)> = <grad_input(g, w), x> = <grad_weight(x, g), w>, any input layouts."""
    xs, ws, stride, padding, dilation, seed = case
    x, w = rand(xs, seed), rand(ws, seed + 1)
    kw = dict(stride=stride, padding=padding, dilation=dilation)
    out = ref_conv2d(x, w, None, stride, padding, dilation)
    g = rand(out.shape, seed + 2)
    lin = float((g * out).sum())
    gv, xv = view_of(g, layout_g, seed, device), view_of(x, layout_x, seed, device)
    gi = host(nn.conv2d_grad_input(gv, on(w, device), xs, **kw), device)
    gw = host(nn.conv2d_grad_weight(xv, gv, ws, **kw), device)
    assert gi.shape == xs and gw.shape == ws
    tol = 1e-12 * (np.abs(g) * ref_conv2d(np.abs(x), np.abs(w), None, **kw)).sum() + 1e-12
    assert abs(float((gi * x).sum()) - lin) <= tol
    assert abs(float((gw * w).sum()) - lin) <= tol
    gb = host(nn.conv2d_grad_bias(gv), device)
    np.testing.assert_allclose(gb, g.sum(axis=(0, 2, 3)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_gradients_float32_and_weight_views(dtype, device):
    """float32 gradients match float64 references; weight given as a transposed view."""
    x, w = rand((2, 3, 8, 7), 1, dtype), rand((5, 3, 3, 2), 2, dtype)
    g = rand((2, 5, 4, 8), 3, dtype)
    wview = on(np.ascontiguousarray(w.transpose(3, 2, 1, 0)), device).transpose(3, 2, 1, 0)
    gi = nn.conv2d_grad_input(on(g, device), wview, x.shape, stride=(2, 1), padding=1)
    gw = nn.conv2d_grad_weight(on(x, device), on(g, device), w.shape, stride=(2, 1), padding=1)
    x64, w64, g64 = (v.astype(np.float64) for v in (x, w, g))
    f_x = lambda v: ref_conv2d(v, w64, None, (2, 1), 1)
    f_w = lambda v: ref_conv2d(x64, v, None, (2, 1), 1)
    atol = 3e-3 if dtype == np.float32 else 1e-7        # float32 rounding / the differences'
    for got, ref in ((gi, numeric_grad(f_x, x64.copy(), g64)),
                     (gw, numeric_grad(f_w, w64.copy(), g64))):
        assert got.dtype.name == np.dtype(dtype).name
        np.testing.assert_allclose(host(got, device).astype(np.float64), ref, atol=atol)
    gb = nn.conv2d_grad_bias(on(g, device))
    assert gb.dtype.name == np.dtype(dtype).name
    close(host(gb, device), g64.sum(axis=(0, 2, 3)), np.full(5, 30.0), dtype)


# ---------------------------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------------------------

@gpu_examples(10)
@SET
@given(pool_cases(), st.sampled_from([np.float32, np.float64]), st.sampled_from(LAYOUTS))
def test_max_pool2d(device, case, dtype, layout):
    xs, k, s, p, d, ceil, seed = case
    x = rand(xs, seed, dtype)
    out, idx = nn.max_pool2d(view_of(x, layout, seed, device), k, s, p, d, ceil,
                             return_indices=True)
    ref, ref_idx = ref_max_pool(x, k, s, p, d, ceil)
    assert np.array_equal(host(out, device), ref)
    assert idx.dtype.name == "int64" and np.array_equal(host(idx, device), ref_idx)
    assert np.array_equal(host(nn.max_pool2d(on(x, device), k, s, p, d, ceil), device), ref)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ceil", [False, True])
@pytest.mark.parametrize("hw", [(2, 2), (5, 4), (4, 7), (9, 9), (1, 6)])
def test_max_pool2d_2x2(hw, ceil, dtype, device):
    """The 2x2, stride-2 fast path (and its fallback when ceil_mode lets a window hang over),
    with ties from rounding values to a few levels."""
    x = np.round(rand((2, 3) + hw, sum(hw)) * 2).astype(dtype)
    if hw[0] < 2 and not ceil:
        with pytest.raises(RuntimeError):
            nn.max_pool2d(on(x, device), 2, ceil_mode=ceil)
        return
    out, idx = nn.max_pool2d(on(x, device), 2, ceil_mode=ceil, return_indices=True)
    ref, ref_idx = ref_max_pool(x, 2, ceil=ceil)
    assert np.array_equal(host(out, device), ref) and np.array_equal(host(idx, device), ref_idx)


@gpu_examples(10)
@SET
@given(pool_cases(), st.sampled_from(LAYOUTS))
def test_max_pool2d_grad(device, case, layout):
    """Finite differences (distinct values: no ties) and the adjoint <g, pool(x)> =
    <grad(g), x>."""
    xs, k, s, p, d, ceil, seed = case
    x = distinct(xs, seed)
    out, idx = nn.max_pool2d(on(x, device), k, s, p, d, ceil, return_indices=True)
    out = host(out, device)
    g = rand(out.shape, seed + 1)
    g[host(idx, device) < 0] = 0          # windows that miss the input (value -inf)
    gi = host(nn.max_pool2d_grad(view_of(g, layout, seed, device), idx, xs), device)
    finite = host(idx, device) >= 0
    assert abs(float((gi * x).sum()) - float((g * np.where(finite, out, 0)).sum())) <= 1e-9
    if x.size <= 150:
        pool = lambda v: np.where(finite, np.asarray(nn.max_pool2d(ca.array(v), k, s, p, d,
                                                                    ceil)), 0)
        np.testing.assert_allclose(gi, numeric_grad(pool, x.copy(), g, eps=1e-4), atol=1e-8)


@gpu_examples(10)
@SET
@given(pool_cases(avg=True), st.sampled_from([np.float32, np.float64]),
       st.sampled_from(LAYOUTS), st.booleans(), st.sampled_from([None, 1, 5]))
def test_avg_pool2d(device, case, dtype, layout, count_include_pad, divisor):
    xs, k, s, p, _, ceil, seed = case
    x = rand(xs, seed, dtype)
    out = nn.avg_pool2d(view_of(x, layout, seed, device), k, s, p, ceil, count_include_pad,
                        divisor)
    out = host(out, device)
    ref = ref_avg_pool(x, k, s, p, ceil, count_include_pad, divisor)
    close(out, ref, ref_avg_pool(np.abs(x), k, s, p, ceil, count_include_pad, divisor), dtype)


@gpu_examples(10)
@SET
@given(pool_cases(avg=True), st.sampled_from(LAYOUTS), st.booleans(),
       st.sampled_from([None, 3]))
def test_avg_pool2d_grad(device, case, layout, count_include_pad, divisor):
    xs, k, s, p, _, ceil, seed = case
    x = rand(xs, seed)
    args = (k, s, p, ceil, count_include_pad, divisor)
    out = ref_avg_pool(x, *args)
    g = rand(out.shape, seed + 1)
    gi = host(nn.avg_pool2d_grad(view_of(g, layout, seed, device), xs, *args), device)
    assert gi.shape == xs
    assert abs(float((gi * x).sum()) - float((g * out).sum())) <= 1e-12 * np.abs(g).sum() * \
        np.abs(x).max() + 1e-12
    if x.size <= 150:
        pool = lambda v: ref_avg_pool(v, *args)
        np.testing.assert_allclose(gi, numeric_grad(pool, x.copy(), g), atol=1e-7)


def test_pooling_special_values_unbatched_and_threads():
    # NaN propagates through max pooling (PyTorch), -inf is a value like any other
    x = np.array([[[[1.0, np.nan, 2.0, 3.0], [-np.inf, -np.inf, 0.0, 5.0]]]])
    out, idx = nn.max_pool2d(ca.array(x), 2, return_indices=True)
    assert np.isnan(np.asarray(out)[0, 0, 0, 0]) and np.asarray(out)[0, 0, 0, 1] == 5.0
    assert np.asarray(idx).tolist() == [[[[1, 7]]]]
    out, idx = nn.max_pool2d(ca.array(np.full((1, 1, 2, 2), -np.inf)), 2, padding=1,
                             return_indices=True)
    assert np.asarray(out).tolist() == [[[[-np.inf] * 2] * 2]]
    assert np.asarray(idx).tolist() == [[[[0, 1], [2, 3]]]]
    # ties: the first maximum in the window wins
    _, idx = nn.max_pool2d(ca.ones((1, 1, 3, 3), dtype="float32"), 2, 1, return_indices=True)
    assert np.asarray(idx).tolist() == [[[[0, 1], [3, 4]]]]
    # 2x2 windows with ceil_mode: the last one hangs over the input (not the fast path)
    x = np.arange(18.0).reshape(1, 1, 2, 9)
    out, idx = nn.max_pool2d(ca.array(x), 2, ceil_mode=True, return_indices=True)
    assert np.asarray(out).tolist() == [[[[10, 12, 14, 16, 17]]]]
    assert np.asarray(idx).tolist() == [[[[10, 12, 14, 16, 17]]]]
    # the same rules on the 2x2, stride-2 fast path (ties, NaNs, -0.0 before +0.0)
    for dtype in ("float32", "float64"):
        x = np.array([[[[1.0, 3.0, 3.0, 0.0, -0.0, 0.0],
                        [3.0, -np.inf, np.nan, np.nan, 0.0, -0.0]]]])
        out, idx = nn.max_pool2d(ca.array(x, dtype=dtype), 2, return_indices=True)
        out = np.asarray(out)
        assert out[0, 0, 0, 0] == 3 and np.isnan(out[0, 0, 0, 1]) and out[0, 0, 0, 2] == 0
        assert np.signbit(out[0, 0, 0, 2])
        assert np.asarray(idx).tolist() == [[[[1, 9, 4]]]]
    # a window that misses the input (dilation wider than it): -inf, index -1, no gradient
    out, idx = nn.max_pool2d(ca.array(np.arange(3.0).reshape(1, 1, 3, 1)), 2, None, (0, 1),
                             (2, 2), return_indices=True)
    assert np.asarray(out).tolist() == [[[[-np.inf]]]] and np.asarray(idx).tolist() == [[[[-1]]]]
    assert nn.max_pool2d_grad(ca.ones((1, 1, 1, 1), dtype="float64"), idx,
                              (1, 1, 3, 1)).tolist() == [[[[0.0], [0.0], [0.0]]]]
    # unbatched (C, H, W)
    x = rand((3, 6, 5), 1)
    out, idx = nn.max_pool2d(ca.array(x), 2, return_indices=True)
    assert out.shape == idx.shape == (3, 3, 2)
    assert np.array_equal(np.asarray(out), ref_max_pool(x[None], 2)[0][0])
    g = rand(out.shape, 2)
    assert nn.max_pool2d_grad(ca.array(g), idx, x.shape).shape == x.shape
    avg = nn.avg_pool2d(ca.array(x), 3, 2, 1)
    close(avg, ref_avg_pool(x[None], 3, 2, 1)[0], np.full(avg.shape, 10.0), np.float64)
    assert nn.avg_pool2d_grad(ca.array(rand(avg.shape, 3)), x.shape, 3, 2, 1).shape == x.shape
    # empty batch
    assert nn.max_pool2d(ca.zeros((0, 2, 4, 4)), 2).shape == (0, 2, 2, 2)
    # one thread and all threads agree bit for bit
    x = ca.array(rand((4, 8, 17, 15), 4, np.float32))
    prev = ca.get_num_threads()
    results = []
    for nt in (1, max(2, prev)):
        ca.set_num_threads(nt)
        try:
            m, i = nn.max_pool2d(x, 3, 2, 1, return_indices=True)
            results.append([np.asarray(m), np.asarray(i), np.asarray(nn.avg_pool2d(x, 2)),
                            np.asarray(nn.max_pool2d_grad(m, i, x.shape)),
                            np.asarray(nn.avg_pool2d_grad(nn.avg_pool2d(x, 2), x.shape, 2))])
        finally:
            ca.set_num_threads(prev)
    for a, b in zip(*results):
        assert np.array_equal(a, b)


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------

X = ca.zeros((2, 3, 5, 5))
W = ca.zeros((4, 3, 3, 3))

ERRORS = [
    # (call, exception, fragment of the message)
    (lambda: nn.conv2d(X, ca.zeros((4, 2, 3, 3))), RuntimeError, "to have 2 channels, but got 3"),
    (lambda: nn.conv2d(X, W, ca.zeros(3)), RuntimeError, "bias to be 1-dimensional with 4"),
    (lambda: nn.conv2d(X, W, stride=0), RuntimeError, "non-positive stride"),
    (lambda: nn.conv2d(X, W, stride=(1, -1)), RuntimeError, "non-positive stride"),
    (lambda: nn.conv2d(X, W, padding=-1), RuntimeError, "negative padding"),
    (lambda: nn.conv2d(X, W, dilation=0), RuntimeError, "dilation should be greater than zero"),
    (lambda: nn.conv2d(X, ca.zeros((4, 3, 7, 7))), RuntimeError, "Kernel size: (7 x 7)"),
    (lambda: nn.conv2d(X, W, dilation=3), RuntimeError, "Kernel size can't be greater"),
    (lambda: nn.conv2d(X, W, groups=3), RuntimeError, "groups must be 1"),
    (lambda: nn.conv2d(X, W, groups=0), RuntimeError, "non-positive groups"),
    (lambda: nn.conv2d(X, ca.zeros((4, 3, 3, 3), dtype="float64")), RuntimeError, "float64"),
    (lambda: nn.conv2d(X.astype("int64"), W), RuntimeError, "float32 or float64"),
    (lambda: nn.conv2d(ca.zeros((3, 5)), W), RuntimeError, "input of size: [3, 5]"),
    (lambda: nn.conv2d(X, ca.zeros((4, 3, 3))), RuntimeError, "4-d weight"),
    (lambda: nn.conv2d(X, ca.zeros((4, 3, 0, 3))), RuntimeError, "kernel size should be greater"),
    (lambda: nn.conv2d(np.zeros((2, 3, 5, 5)), W), TypeError, "carray.Array"),
    (lambda: nn.conv2d(X, W, stride=1.0), TypeError, "stride"),
    (lambda: nn.conv2d(X, W, stride=(1, 1, 1)), ValueError, "stride"),
    (lambda: nn.conv2d(X, W, padding="full"), ValueError, "padding"),
    (lambda: nn.conv2d(X, W, stride=2, padding="same"), ValueError, "same"),
    (lambda: nn.conv2d_grad_input(ca.zeros((2, 4, 4, 4)), W, (2, 3, 5, 5)), RuntimeError,
     "does not match the output size [2, 4, 3, 3]"),
    (lambda: nn.conv2d_grad_input(ca.zeros((2, 4, 3, 3)), W, (2, 3, 5)), RuntimeError,
     "channels"),
    (lambda: nn.conv2d_grad_input(ca.zeros((2, 4, 3, 3)), W, "abc"), TypeError, "input_shape"),
    (lambda: nn.conv2d_grad_input(ca.zeros((2, 4, 3, 3)), W, (2, 3, -5, 5)), ValueError,
     "negative"),
    (lambda: nn.conv2d_grad_weight(X, ca.zeros((2, 4, 3, 3)), (4, 3, 2, 2)), RuntimeError,
     "does not match"),
    (lambda: nn.conv2d_grad_weight(X, ca.zeros((2, 4, 3, 3), dtype="float64"), (4, 3, 3, 3)),
     RuntimeError, "float64"),
    (lambda: nn.conv2d_grad_bias(ca.zeros((2, 4))), RuntimeError, "3-d or 4-d"),
    (lambda: nn.max_pool2d(X, 0), RuntimeError, "kernel size should be greater than zero"),
    (lambda: nn.max_pool2d(X, 2, 0), RuntimeError, "stride should be greater than zero"),
    (lambda: nn.max_pool2d(X, 2, padding=2), RuntimeError, "at most half"),
    (lambda: nn.max_pool2d(X, 6), RuntimeError, "Output size is too small"),
    (lambda: nn.max_pool2d(X, 2, dilation=0), RuntimeError, "dilation"),
    (lambda: nn.max_pool2d(ca.zeros((2, 0, 5, 5)), 2), RuntimeError, "3D or 4D"),
    (lambda: nn.max_pool2d(X, (2, 2, 2)), ValueError, "kernel_size"),
    (lambda: nn.max_pool2d(X, 2.5), TypeError, "kernel_size"),
    (lambda: nn.max_pool2d(X.astype("int32"), 2), RuntimeError, "float32 or float64"),
    (lambda: nn.avg_pool2d(X, 3, padding=2), RuntimeError, "at most half of kernel size"),
    (lambda: nn.avg_pool2d(X, 2, divisor_override=0), RuntimeError, "divisor must be not zero"),
    (lambda: nn.avg_pool2d_grad(ca.zeros((2, 3, 3, 3)), (2, 3, 5, 5), 2), RuntimeError,
     "does not match the output size [2, 3, 2, 2]"),
    (lambda: nn.max_pool2d_grad(ca.zeros((2, 3, 2, 2)), ca.zeros((2, 3, 2, 2), dtype="int32"),
                                (2, 3, 5, 5)), RuntimeError, "int64"),
    (lambda: nn.max_pool2d_grad(ca.zeros((2, 3, 2, 2)), ca.zeros((2, 3, 2, 1), dtype="int64"),
                                (2, 3, 5, 5)), RuntimeError, "do not match"),
    (lambda: nn.max_pool2d_grad(ca.zeros((2, 3, 2, 2)), ca.zeros((2, 3, 2, 2), dtype="int64"),
                                (2, 4, 5, 5)), RuntimeError, "leading N, C"),
    (lambda: nn.max_pool2d_grad(ca.zeros((1, 1, 1, 1)), ca.full((1, 1, 1, 1), 25),
                                (1, 1, 5, 5)), IndexError, "out of bounds"),
    (lambda: nn.max_pool2d_grad(ca.zeros((1, 1, 1, 1)), ca.full((1, 1, 1, 1), -2),
                                (1, 1, 5, 5)), IndexError, "out of bounds"),
]


@pytest.mark.parametrize("call, exc, fragment", ERRORS)
def test_errors(call, exc, fragment):
    with pytest.raises(exc) as info:
        call()
    assert fragment in str(info.value)


def test_internal_entry_points_refuse_inconsistent_arrays():
    """The Cython entry points re-check what memory safety depends on."""
    from carray.cpu import _nn
    x = ca.zeros((2, 3, 5, 5))
    with pytest.raises(ValueError):
        _nn.conv2d_forward(x, ca.zeros((4, 3, 3, 3)), None, (3, 4, 3, 3), (1, 1), (0, 0), (1, 1))
    with pytest.raises(ValueError):
        _nn.conv2d_forward(x.transpose(0, 1, 3, 2), ca.zeros((4, 3, 3, 3)), None,
                           (2, 4, 3, 3), (1, 1), (0, 0), (1, 1))
    with pytest.raises(ValueError):
        _nn.conv2d_forward(x, ca.zeros((4, 2, 3, 3)), None, (2, 4, 3, 3), (1, 1), (0, 0), (1, 1))
    with pytest.raises(ValueError):
        _nn.conv2d_forward(x, ca.zeros((4, 3, 3, 3)), ca.zeros(3), (2, 4, 3, 3), (1, 1), (0, 0),
                           (1, 1))
    with pytest.raises(ValueError):
        _nn.max_pool2d_backward(ca.zeros((2, 3, 2, 2)), ca.zeros((2, 3, 2, 2), dtype="int32"),
                                (2, 3, 5, 5))
    with pytest.raises(ValueError):
        _nn.avg_pool2d_forward(x, (2, 4, 2, 2), (2, 2), (2, 2), (0, 0), True, 0)
    with pytest.raises(ValueError):
        _nn.conv2d_grad_input(ca.zeros((2, 4, 3, 3)), ca.zeros((4, 3, 3, 3)), (2, 3, -5, 5),
                              (1, 1), (0, 0), (1, 1))
    with pytest.raises(ValueError):
        _nn.conv2d_grad_weight(x, ca.zeros((2, 4, 3, 3)), (4, 3, 3, -3), (1, 1), (0, 0), (1, 1))
    with pytest.raises(ValueError):
        _nn.conv2d_forward(x, ca.zeros((4, 3, 3, 3)), None, (2, 4, 3, 3), (0, 1), (0, 0), (1, 1))


# ---------------------------------------------------------------------------------------------
# PyTorch
# ---------------------------------------------------------------------------------------------

def test_against_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(0)
    for trial in range(30):
        N, C, O = rng.integers(1, 4), rng.integers(1, 5), rng.integers(1, 5)
        k = tuple(int(v) for v in rng.integers(1, 4, 2))
        s = tuple(int(v) for v in rng.integers(1, 4, 2))
        p = tuple(int(v) for v in rng.integers(0, 3, 2))
        d = tuple(int(v) for v in rng.integers(1, 3, 2))
        H = int(rng.integers(max(1, d[0] * (k[0] - 1) + 1 - 2 * p[0]), 10))
        W = int(rng.integers(max(1, d[1] * (k[1] - 1) + 1 - 2 * p[1]), 10))
        x, w, b = rand((N, C, H, W), trial), rand((O, C) + k, trial + 1), rand((O,), trial + 2)
        tx, tw, tb = (torch.tensor(v, requires_grad=True) for v in (x, w, b))
        ty = F.conv2d(tx, tw, tb, s, p, d)
        g = rand(tuple(ty.shape), trial + 3)
        ty.backward(torch.tensor(g))
        y = nn.conv2d(ca.array(x), ca.array(w), ca.array(b), s, p, d)
        np.testing.assert_allclose(y, ty.detach().numpy(), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(nn.conv2d_grad_input(ca.array(g), ca.array(w), x.shape, s, p, d),
                                   tx.grad.numpy(), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(nn.conv2d_grad_weight(ca.array(x), ca.array(g), w.shape, s, p,
                                                         d), tw.grad.numpy(), rtol=1e-10,
                                   atol=1e-10)
        np.testing.assert_allclose(nn.conv2d_grad_bias(ca.array(g)), tb.grad.numpy(), rtol=1e-10,
                                   atol=1e-10)
        # pooling: kernel k, padding at most half of it, ceil_mode either way
        pp = tuple(min(pi, ki // 2) for pi, ki in zip(p, k))
        ceil = bool(trial % 2)
        if min((H + 2 * pp[0] - k[0]), (W + 2 * pp[1] - k[1])) < 0:
            continue
        tx = torch.tensor(x, requires_grad=True)
        tm, ti = F.max_pool2d(tx, k, s, pp, 1, ceil, return_indices=True)
        gm = rand(tuple(tm.shape), trial + 4)
        tm.backward(torch.tensor(gm))
        m, i = nn.max_pool2d(ca.array(x), k, s, pp, 1, ceil, return_indices=True)
        assert np.array_equal(np.asarray(m), tm.detach().numpy())
        assert np.array_equal(np.asarray(i), ti.numpy())
        np.testing.assert_allclose(nn.max_pool2d_grad(ca.array(gm), i, x.shape), tx.grad.numpy())
        for cip in (True, False):
            tx = torch.tensor(x, requires_grad=True)
            ta = F.avg_pool2d(tx, k, s, pp, ceil, cip)
            ga = rand(tuple(ta.shape), trial + 5)
            ta.backward(torch.tensor(ga))
            a = nn.avg_pool2d(ca.array(x), k, s, pp, ceil, cip)
            np.testing.assert_allclose(a, ta.detach().numpy(), rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(nn.avg_pool2d_grad(ca.array(ga), x.shape, k, s, pp, ceil,
                                                          cip), tx.grad.numpy(), rtol=1e-12,
                                       atol=1e-12)


# ---------------------------------------------------------------------------------------------
# softmax cross entropy
# ---------------------------------------------------------------------------------------------

def ref_softmax_nll(x, t, ignore, reduction):
    """(loss, probs, count) in float64 with NumPy: logsumexp - the target's logit by rows."""
    x = np.asarray(x, np.float64)
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    s = e.sum(axis=1, keepdims=True)
    counted = t != ignore
    picked = x[np.arange(len(t)), np.where(counted, t, 0)]
    per_row = np.where(counted, np.log(s[:, 0]) + m[:, 0] - picked, 0.0)
    count = counted.sum()
    if reduction == "none":
        return per_row, e / s, None
    total = per_row.sum()
    return (total / count if count else np.nan) if reduction == "mean" else total, e / s, count


def ref_softmax_nll_grad(p, t, g, count, ignore):
    counted = (t != ignore)[:, None]
    onehot = np.arange(p.shape[1])[None, :] == t[:, None]
    scale = np.broadcast_to(np.asarray(g, np.float64).reshape(-1, 1) if np.ndim(g) else g,
                            (len(t), 1)) / (count or 1)   # count 0: no counted rows
    return np.where(counted, (p - onehot) * scale, 0.0)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_cross_entropy(device, reduction, dtype):
    rng = np.random.default_rng(7)
    tol = 2e-5 if dtype == "float32" else 1e-12
    for M, C, layout in [(1, 1, "c"), (5, 3, "c"), (64, 10, "t"), (7, 1000, "s"), (300, 4, "c"),
                         (0, 3, "c")]:
        x = (rng.standard_normal((M, C)) * 4).astype(dtype)
        t = rng.integers(0, C, M)
        t[::4] = -100                                    # ignored rows
        if layout == "t":                                # a transposed view
            xa = on(np.ascontiguousarray(x.T), device).T
        elif layout == "s":                              # every other column of a wider array
            wide = np.zeros((M, 2 * C), dtype)
            wide[:, ::2] = x
            xa = on(wide, device)[:, ::2]
        else:
            xa = on(x, device)
        loss, probs, count = nn.softmax_cross_entropy(xa, on(t, device), reduction=reduction)
        rl, rp, rc = ref_softmax_nll(x, t, -100, reduction)
        np.testing.assert_allclose(np.asarray(loss.to("cpu")), rl, rtol=tol, atol=tol)
        np.testing.assert_allclose(np.asarray(probs.to("cpu")), rp, rtol=tol, atol=tol)
        assert loss.dtype.name == dtype and probs.shape == (M, C)
        assert (count is None) == (reduction == "none")
        if count is not None:
            assert count.shape == () and count.item() == rc
        g = rng.standard_normal(M if reduction == "none" else ()).astype(dtype)
        gx = nn.softmax_cross_entropy_grad(probs, on(t, device), on(g, device),
                                           count if reduction == "mean" else None)
        np.testing.assert_allclose(np.asarray(gx.to("cpu")),
                                   ref_softmax_nll_grad(rp, t, g, rc if reduction == "mean"
                                                        else None, -100), rtol=tol, atol=tol)


def test_softmax_cross_entropy_gradient_is_the_loss_derivative():
    """Central differences of the float64 'sum' loss against the gradient."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5))
    t = np.array([1, -100, 4, 0])
    loss, probs, _ = nn.softmax_cross_entropy(ca.asarray(x), ca.asarray(t), reduction="sum")
    gx = np.asarray(nn.softmax_cross_entropy_grad(probs, ca.asarray(t),
                                                  ca.ones((), dtype="float64")))
    h = 1e-6
    for i, j in [(0, 1), (0, 3), (1, 2), (2, 4), (3, 0)]:
        xp, xm = x.copy(), x.copy()
        xp[i, j] += h
        xm[i, j] -= h
        lp = nn.softmax_cross_entropy(ca.asarray(xp), ca.asarray(t), reduction="sum")[0].item()
        lm = nn.softmax_cross_entropy(ca.asarray(xm), ca.asarray(t), reduction="sum")[0].item()
        assert abs((lp - lm) / (2 * h) - gx[i, j]) < 1e-6


def test_softmax_cross_entropy_ignore_index_and_no_counted_rows(device):
    x = on(np.arange(6.0, dtype=np.float32).reshape(2, 3), device)
    loss, _, count = nn.softmax_cross_entropy(x, on(np.array([2, 1]), device), ignore_index=2)
    assert count.item() == 1
    assert abs(loss.item() - (np.log(np.exp([3.0, 4, 5]).sum()) - 4)) < 1e-5
    loss, _, count = nn.softmax_cross_entropy(x, on(np.array([-100, -100]), device))
    assert np.isnan(loss.item()) and count.item() == 0


def test_softmax_cross_entropy_target_out_of_bounds(device):
    x = on(np.zeros((3, 4), np.float32), device)
    for bad in (4, -1):
        t = on(np.array([0, bad, 1]), device)
        with pytest.raises(IndexError, match="out of bounds"):
            loss = nn.softmax_cross_entropy(x, t)[0]
            loss.to("cpu")           # on the device the check is read with the next read
    assert nn.softmax_cross_entropy(x, on(np.array([0, 3, 1]), device))[0].to("cpu").item() > 0


@pytest.mark.parametrize("call, exc, fragment", [
    (lambda: nn.softmax_cross_entropy(ca.zeros((2, 3)), ca.zeros(2, dtype="int32")),
     RuntimeError, "int64"),
    (lambda: nn.softmax_cross_entropy(ca.zeros((2, 3)), ca.zeros(3, dtype="int64")),
     RuntimeError, "expected size [2]"),
    (lambda: nn.softmax_cross_entropy(ca.zeros(3), ca.zeros(3, dtype="int64")),
     RuntimeError, "2-d"),
    (lambda: nn.softmax_cross_entropy(ca.zeros((2, 0)), ca.zeros(2, dtype="int64")),
     ValueError, "no classes"),
    (lambda: nn.softmax_cross_entropy(ca.zeros((2, 3), dtype="int64"), ca.zeros(2, dtype="int64")),
     RuntimeError, "float32 or float64"),
    (lambda: nn.softmax_cross_entropy(ca.zeros((2, 3)), ca.zeros(2, dtype="int64"),
                                      reduction="avg"), ValueError, "reduction"),
    (lambda: nn.softmax_cross_entropy_grad(ca.zeros((2, 3)), ca.zeros(2, dtype="int64"),
                                           ca.zeros(3)), RuntimeError, "grad_output"),
    (lambda: nn.softmax_cross_entropy_grad(ca.zeros((2, 3)), ca.zeros(2, dtype="int64"),
                                           ca.zeros((), dtype="float64")), RuntimeError, "dtype"),
    (lambda: nn.softmax_cross_entropy_grad(ca.zeros((2, 3)), ca.zeros(2, dtype="int64"),
                                           ca.zeros(()), ca.zeros(1)), RuntimeError, "0-d"),
])
def test_softmax_cross_entropy_errors(call, exc, fragment):
    with pytest.raises(exc) as info:
        call()
    assert fragment in str(info.value)


def test_softmax_cross_entropy_matches_torch(device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    x = rng.standard_normal((33, 7)).astype(np.float32)
    t = rng.integers(0, 7, 33)
    t[3] = 5
    for reduction in ("none", "sum", "mean"):
        ref = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(t),
                                                ignore_index=5, reduction=reduction)
        loss = nn.softmax_cross_entropy(on(x, device), on(t, device), 5, reduction)[0]
        np.testing.assert_allclose(np.asarray(loss.to("cpu")), ref.numpy(), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# SGD's update
# ---------------------------------------------------------------------------------------------

def test_sgd_step_equals_subtract_of_multiply(device):
    """Bit for bit what subtract(p, multiply(g, lr)) gives, for many parameters of both float
    dtypes (more than one launch's worth on the device), empty ones and gradient views."""
    rng = np.random.default_rng(5)
    shapes = [(3, 4), (5,), (0,), (2, 2, 2), ()] * 4
    params = [rng.standard_normal(s).astype(("float32", "float64")[k % 2])
              for k, s in enumerate(shapes)]
    grads = [rng.standard_normal(p.shape[::-1]).astype(p.dtype).T for p in params]  # views
    ps = [on(p.copy(), device) for p in params]
    nn.sgd_step(ps, [on(g, device) for g in grads], 0.1)
    for a, p, g in zip(ps, params, grads):
        expected = np.subtract(p, np.multiply(g, p.dtype.type(0.1)))
        assert np.array_equal(np.asarray(a.to("cpu")), expected)
        assert a.dtype.name == p.dtype.name
    nn.sgd_step([], [], 0.1)                                      # nothing to do


def _read_only(n):
    """A float32 carray Array over a read-only NumPy buffer."""
    buf = np.zeros(n, np.float32)
    buf.setflags(write=False)
    a = ca.asarray(buf)
    assert not a.flags.writeable
    return a


def test_sgd_step_same_parameter_twice(device):
    """A parameter given twice is updated twice (in two launches on the device: two work items
    on one element would race)."""
    p = on(np.ones(1000, np.float32), device)
    g = on(np.full(1000, 0.5, np.float32), device)
    nn.sgd_step([p, p, p], [g, g, g], 1.0)
    assert np.asarray(p.to("cpu")).tolist() == [-0.5] * 1000


@pytest.mark.parametrize("call, exc, fragment", [
    (lambda: nn.sgd_step([ca.zeros(3)], [], 0.1), ValueError, "1 parameters but 0 gradients"),
    (lambda: nn.sgd_step([ca.zeros((3, 2)).T], [ca.zeros((2, 3))], 0.1), ValueError,
     "C-contiguous"),
    (lambda: nn.sgd_step([ca.zeros(3)], [ca.zeros(4)], 0.1), RuntimeError, "does not match"),
    (lambda: nn.sgd_step([ca.zeros(3)], [ca.zeros(3, dtype="float64")], 0.1), RuntimeError,
     "dtype"),
    (lambda: nn.sgd_step([ca.zeros(3, dtype="int64")], [ca.zeros(3, dtype="int64")], 0.1),
     RuntimeError, "float32 or float64"),
    (lambda: nn.sgd_step([_read_only(3)], [ca.zeros(3)], 0.1), ValueError, "read-only"),
])
def test_sgd_step_errors(call, exc, fragment):
    """(A read-only parameter would be written through a read-only mapping: refused first.)"""
    with pytest.raises(exc) as info:
        call()
    assert fragment in str(info.value)
