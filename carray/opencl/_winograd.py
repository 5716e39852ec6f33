"""3x3, stride-1 convolutions on the device by Winograd F(2x2, 3x3) (kernels/winograd.cl): the
filters and the input patches are transformed into 16 matrices each, multiplied by one batched
matmul (carray's GEMM: the staged kernel where it fits), and the 16 products transformed back
into 2 x 2 output blocks: 2.25x fewer multiply-adds than the implicit GEMM (_conv.py), for the
price of three memory-bound passes. On an H100 at batch 128 (64 to 256 channels, 32x32 to 8x8
images) the forward pass and the input gradient take about half the implicit GEMM's time
(bench/RESULTS.md). The input gradient of a 3x3, stride-1 convolution with padding p is the
convolution of the output gradient, padded by 2 - p, with the filters turned by 180 degrees and
their channel axes swapped, so it takes the same path.

Environment (read on every call): CARRAY_OPENCL_CONV_WINOGRAD=0 never, =1 for every
convolution it can take on any device (how the tests run it on PoCL); unset: float32 on GPUs,
at least MIN_CHANNELS channels in and out."""

import os

import carray
from carray.opencl import _cache
from carray.opencl._launch import LAUNCH_LOCK, submit
from carray.opencl._layout import INT_LIMIT, numbered
from carray.opencl._runtime import runtime
from carray.opencl._types import FLOAT32

MIN_CHANNELS = 64       # measured to pay from 64 channels (H100); fewer: the implicit GEMM
GROUP = 64              # work items per group along the tiles


def wanted(dtype_num, C, O, kernel, stride, dilation, padding, images):
    """Whether a convolution with C input and O output channels (of the pass: the input
    gradient's are swapped), filter size `kernel`, stride, dilation and padding (pairs) over
    `images` (N, H, W of the pass's input) takes this path."""
    env = os.environ.get("CARRAY_OPENCL_CONV_WINOGRAD")
    if env == "0" or dtype_num != FLOAT32 or tuple(kernel) != (3, 3) or \
            tuple(stride) != (1, 1) or tuple(dilation) != (1, 1) or max(padding) > 2 or \
            min(padding) < 0:
        return False
    N, H, W = images
    Ho, Wo = H + 2 * padding[0] - 2, W + 2 * padding[1] - 2
    if Ho <= 0 or Wo <= 0:
        return False
    P = N * -(-Ho // 2) * -(-Wo // 2)
    # the transformed filters (16 x O x C), patches (16 x C x P) and products (16 x O x P):
    # 32-bit indices in the kernels, and each within the device's largest buffer (else the
    # implicit GEMM, which needs no such buffers)
    most = 16 * max(O * C, C * P, O * P)
    if most > INT_LIMIT or N * max(C, O) * (H + 4) * (W + 4) > INT_LIMIT or \
            4 * most > runtime().max_alloc:
        return False
    if env == "1":
        return True
    return not runtime().is_cpu and min(C, O) >= MIN_CHANNELS


def _kernels(flip, bias):
    return _cache.kernel(("winograd", flip, bias), ("wino_weight", "wino_input", "wino_output"),
                         lambda: _cache.render("winograd.cl", flip=int(flip), bias=int(bias)))


def _convolve(x, w, bias, flip, O, padding):
    """The 3x3 stride-1 correlation of x (N, C, H, W) with padding (ph, pw) and O filters: w's
    (O, C, 3, 3) as they are, or with flip w (C_w = O, O_w = C) turned and swapped; plus bias."""
    N, C, H, W = x.shape
    ph, pw = padding
    Ho, Wo = H + 2 * ph - 2, W + 2 * pw - 2
    TH, TW = -(-Ho // 2), -(-Wo // 2)
    P = N * TH * TW
    k_weight, k_input, k_output = _kernels(flip, bias is not None)
    # (32-bit offsets: an operand far into a big buffer is copied to a buffer of its own)
    x, w = (a if a._cl()[1] + a.size <= INT_LIMIT else a.copy() for a in (x, w))
    if bias is not None and bias._cl()[1] + bias.size > INT_LIMIT:
        bias = bias.copy()
    U = carray.empty((16, O, C), dtype="float32", device="gpu")
    V = carray.empty((16, C, P), dtype="float32", device="gpu")
    y = carray.empty((N, O, Ho, Wo), dtype="float32", device="gpu")
    wbuf, woff = w._cl()[:2]
    xbuf, xoff = x._cl()[:2]
    rt = runtime()
    q, g = rt.queue, rt.max_group
    t = min(GROUP, g)
    with LAUNCH_LOCK:
        submit(q, k_weight, [0, U._cl()[0], 1, wbuf], numbered("i", 2, (O, C, woff)),
               (-(-(O * C) // g) * g,), (g,))
        submit(q, k_input, [0, V._cl()[0], 1, xbuf],
               numbered("i", 2, (C, H, W, TH, TW, ph, pw, P, xoff)), (-(-P // t) * t, C), (t, 1))
    M = U @ V                                           # (16, O, P)
    bbuf, boff = bias._cl()[:2] if bias is not None else (M._cl()[0], 0)
    with LAUNCH_LOCK:
        submit(q, k_output, [0, y._cl()[0], 1, M._cl()[0], 2, bbuf],
               numbered("i", 3, (O, Ho, Wo, TH, TW, P, boff)), (-(-P // t) * t, O), (t, 1))
    return y


def _attempt(x, w, bias, flip, O, padding):
    """_convolve, or None when its transformed tensors (about 4x the input and the output) do
    not fit in device memory: the caller then takes the implicit GEMM."""
    try:
        return _convolve(x, w, bias, flip, O, padding)
    except MemoryError:
        return None


def forward(x, w, b, stride, padding, dilation):
    """conv2d(x, w, b) by Winograd (x, w, b: contiguous device arrays of one float dtype, w of
    (O, C, kh, kw), b None or (O,)), or None when wanted() declines it or it does not fit."""
    N, C, H, W = x.shape
    O = w.shape[0]
    if x.size == 0 or not wanted(x.dtype.num, C, O, w.shape[2:], stride, dilation, padding,
                                 (N, H, W)):
        return None
    return _attempt(x, w, b, False, O, padding)


def grad_input(gout, w, input_shape, stride, padding, dilation):
    """The gradient of conv2d with respect to its input of shape input_shape by Winograd (the
    correlation of gout, padded by 2 - p, with w turned by 180 degrees, channels swapped), or
    None when wanted() declines it or it does not fit."""
    N, C = input_shape[:2]
    O = w.shape[0]
    pad = (2 - padding[0], 2 - padding[1])
    if 0 in input_shape or gout.size == 0 or not wanted(
            gout.dtype.num, O, C, w.shape[2:], stride, dilation, pad, (N,) + gout.shape[2:]):
        return None
    return _attempt(gout, w, None, True, C, pad)
