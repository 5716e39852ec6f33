"""Winograd F(2x2, 3x3) convolutions on the device (carray/opencl/_winograd.py, reached through
carray.nn.conv2d / conv2d_grad_input), against NumPy float64 references.

CARRAY_OPENCL_CONV_WINOGRAD=1 sends every convolution the path can take through it on any
device (PoCL in CI); unset, only float32 GPUs with at least 64 channels in and out take it."""

import numpy as np
import pytest

import carray as ca
import carray.nn as cnn
from carray.opencl import _winograd

from conftest import have_gpu

pytestmark = pytest.mark.skipif(not have_gpu(), reason="no OpenCL device")


@pytest.fixture
def winograd(monkeypatch):
    """Force the path and count its convolutions."""
    monkeypatch.setenv("CARRAY_OPENCL_CONV_WINOGRAD", "1")
    calls = []
    real = _winograd._convolve

    def counting(x, w, bias, flip, O, padding):
        calls.append((tuple(x.shape), flip, padding))
        return real(x, w, bias, flip, O, padding)
    monkeypatch.setattr(_winograd, "_convolve", counting)
    return calls


def _ref_conv(x, w, b, p):
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))
    y = np.einsum("nchwuv,ocuv->nohw", win, w.astype(np.float64))
    return y + b.reshape(1, -1, 1, 1) if b is not None else y


def _ref_grad_input(go, w, input_shape, p):
    N, C, H, W = input_shape
    Ho, Wo = go.shape[2:]
    gp = np.zeros((N, C, H + 2 * p[0], W + 2 * p[1]))
    for u in range(3):
        for v in range(3):
            gp[:, :, u:u + Ho, v:v + Wo] += np.einsum("nohw,oc->nchw", go.astype(np.float64),
                                                      w[:, :, u, v].astype(np.float64))
    return gp[:, :, p[0]:p[0] + H, p[1]:p[1] + W]


def _close(got, ref, scale):
    got = np.asarray(got if isinstance(got, np.ndarray) else got.to("cpu"), dtype=np.float64)
    assert got.shape == ref.shape
    err = np.abs(got - ref)
    assert (err <= 1e-5 * scale + 1e-6).all(), f"max error {err.max()}"


SHAPES = [  # N, C, O, H, W, padding
    (2, 3, 5, 7, 9, (1, 1)), (1, 4, 4, 8, 8, (0, 0)), (2, 2, 3, 5, 6, (2, 2)),
    (3, 6, 2, 4, 4, (1, 1)), (1, 5, 7, 3, 3, (1, 0)), (2, 8, 16, 12, 10, (0, 2)),
    (1, 1, 1, 1, 1, (1, 1))]


@pytest.mark.parametrize("N,C,O,H,W,p", SHAPES)
@pytest.mark.parametrize("bias", [False, True])
def test_forward_and_input_gradient(winograd, N, C, O, H, W, p, bias):
    rng = np.random.default_rng(N * 100 + C * 10 + H)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = rng.standard_normal((O, C, 3, 3)).astype(np.float32)
    b = rng.standard_normal(O).astype(np.float32) if bias else None
    y = cnn.conv2d(ca.asarray(x, device="gpu"), ca.asarray(w, device="gpu"),
                   ca.asarray(b, device="gpu") if bias else None, padding=p)
    ref = _ref_conv(x, w, b, p)
    _close(y, ref, _ref_conv(np.abs(x), np.abs(w), np.abs(b) if bias else None, p))
    go = rng.standard_normal(ref.shape).astype(np.float32)
    gi = cnn.conv2d_grad_input(ca.asarray(go, device="gpu"), ca.asarray(w, device="gpu"),
                               x.shape, padding=p)
    _close(gi, _ref_grad_input(go, w, x.shape, p),
           _ref_grad_input(np.abs(go), np.abs(w), x.shape, p))
    assert [c[1] for c in winograd] == [False, True]            # both through Winograd


def test_views_at_offsets(winograd):
    """Operands that are views into bigger buffers (non-zero offsets) and non-contiguous
    inputs (copied contiguous before the kernels)."""
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((3, 4, 9, 11)).astype(np.float32)
    ws = rng.standard_normal((2, 6, 4, 3, 3)).astype(np.float32)
    bs = rng.standard_normal(8).astype(np.float32)
    dx, dw, db = (ca.asarray(a, device="gpu") for a in (xs, ws, bs))
    y = cnn.conv2d(dx[1:], dw[1], db[2:], padding=1)
    _close(y, _ref_conv(xs[1:], ws[1], bs[2:], (1, 1)),
           _ref_conv(np.abs(xs[1:]), np.abs(ws[1]), np.abs(bs[2:]), (1, 1)))
    y2 = cnn.conv2d(dx[:, :, ::2, 1:], dw[0], None, padding=1)       # a strided view
    _close(y2, _ref_conv(xs[:, :, ::2, 1:], ws[0], None, (1, 1)),
           _ref_conv(np.abs(xs[:, :, ::2, 1:]), np.abs(ws[0]), None, (1, 1)))
    assert len(winograd) == 2


def test_autograd_conv_backward(winograd):
    """A 3x3 convolution's forward and input gradient in an autograd graph."""
    import autograd
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    xt = autograd.tensor(x, device="gpu", requires_grad=True)
    wt = autograd.tensor(w, device="gpu", requires_grad=True)
    y = autograd.nn.functional.conv2d(xt, wt, padding=1)
    g = rng.standard_normal(y.shape).astype(np.float32)
    y.backward(autograd.tensor(g, device="gpu"))
    _close(y.detach().cpu().numpy(), _ref_conv(x, w, None, (1, 1)),
           _ref_conv(np.abs(x), np.abs(w), None, (1, 1)))
    _close(xt.grad.cpu().numpy(), _ref_grad_input(g, w, x.shape, (1, 1)),
           _ref_grad_input(np.abs(g), np.abs(w), x.shape, (1, 1)))
    assert [c[1] for c in winograd] == [False, True]


def test_which_convolutions_take_it(monkeypatch):
    want = _winograd.wanted
    f32, f64 = ca.dtype("float32").num, ca.dtype("float64").num
    monkeypatch.setenv("CARRAY_OPENCL_CONV_WINOGRAD", "1")
    args = dict(kernel=(3, 3), stride=(1, 1), dilation=(1, 1), padding=(1, 1), images=(2, 8, 8))
    assert want(f32, 3, 5, **args)
    assert not want(f64, 3, 5, **args)
    assert not want(f32, 3, 5, **{**args, "kernel": (5, 5)})
    assert not want(f32, 3, 5, **{**args, "stride": (2, 1)})
    assert not want(f32, 3, 5, **{**args, "dilation": (1, 2)})
    assert not want(f32, 3, 5, **{**args, "padding": (3, 1)})
    assert not want(f32, 3, 5, **{**args, "padding": (-1, 1)})   # grad_input of padding 3
    assert not want(f32, 3, 5, **{**args, "padding": (0, 0), "images": (2, 1, 8)})  # no output
    assert not want(f32, 2**20, 5, **{**args, "images": (2**10, 8, 8)})             # int32
    # the transformed filters (16 x O x C) alone past 32-bit indices: small images, huge layer
    assert not want(f32, 2**14, 2**14, **{**args, "images": (1, 8, 8)})
    monkeypatch.setenv("CARRAY_OPENCL_CONV_WINOGRAD", "0")
    assert not want(f32, 64, 64, **args)
    monkeypatch.delenv("CARRAY_OPENCL_CONV_WINOGRAD")
    rt = ca.opencl.runtime()
    monkeypatch.setattr(rt, "is_cpu", False)            # as on a GPU
    assert want(f32, 64, 128, **args)
    assert not want(f32, 32, 128, **args)               # too few channels to pay
    monkeypatch.setattr(rt, "is_cpu", True)
    assert not want(f32, 64, 128, **args)               # CPU devices keep the implicit GEMM


def test_buffers_past_the_largest_allocation_keep_the_implicit_gemm(winograd, monkeypatch):
    """The transformed patches (16 x C x P) and products (16 x O x P) are each several times
    the input or output: a convolution whose transforms would not fit in the device's largest
    buffer does not take the path (it raised MemoryError where the implicit GEMM runs)."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    args = dict(kernel=(3, 3), stride=(1, 1), dilation=(1, 1), padding=(1, 1), images=(2, 8, 8))
    f32 = ca.dtype("float32").num
    assert _winograd.wanted(f32, 3, 5, **args)
    rt = ca.opencl.runtime()
    monkeypatch.setattr(rt, "max_alloc", 16 * 5 * 32 * 4 - 4)   # products: 16 x 5 x 32 floats
    assert not _winograd.wanted(f32, 3, 5, **args)
    y = cnn.conv2d(ca.asarray(x, device="gpu"), ca.asarray(w, device="gpu"), padding=1)
    _close(y, _ref_conv(x, w, None, (1, 1)), _ref_conv(np.abs(x), np.abs(w), None, (1, 1)))
    assert winograd == []


def test_out_of_device_memory_falls_back_to_the_implicit_gemm(winograd, monkeypatch):
    """When the transformed tensors do not fit (MemoryError), the convolution runs on the
    implicit GEMM instead of failing."""
    def no_memory(*args):
        raise MemoryError("out of device memory (test)")
    monkeypatch.setattr(_winograd, "_convolve", no_memory)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    y = cnn.conv2d(ca.asarray(x, device="gpu"), ca.asarray(w, device="gpu"), padding=1)
    _close(y, _ref_conv(x, w, None, (1, 1)), _ref_conv(np.abs(x), np.abs(w), None, (1, 1)))
    go = rng.standard_normal(y.shape).astype(np.float32)
    gi = cnn.conv2d_grad_input(ca.asarray(go, device="gpu"), ca.asarray(w, device="gpu"),
                               x.shape, padding=1)
    _close(gi, _ref_grad_input(go, w, x.shape, (1, 1)),
           _ref_grad_input(np.abs(go), np.abs(w), x.shape, (1, 1)))
