"""Convolution on the device as implicit GEMM (kernels/conv.cl): conv2d's forward, its input
gradient and its weight gradient each as one tiled GEMM launch whose operand tiles are gathered
from the NCHW images as they load, so no im2col matrix, col2im pass, transpose copy or bias
launch. The input gradient runs one stride phase (h % sh, w % sw) per work-group column, each
with only the kernel taps that reach its pixels (no MACs on zeros). The weight gradient splits
its long K (batch x output pixels) over work groups when the output tiles alone leave the
device idle, and sums the slices with one reduction.

Environment (read on every call, part of the plan key):
- CARRAY_OPENCL_CONV=im2col: carray/opencl/_nn.py's im2col + GEMM (+ col2im) path instead, for
  comparison; anything else (or unset): implicit GEMM.
- CARRAY_OPENCL_CONV_TILE="TM,TN,BK,WM,WN": the tile of all three kernels (TM % WM == TN % WN
  == 0); CARRAY_OPENCL_CONV_TILE_FWD / _GIN / _GW set one kernel's. Defaults: tile() below.
- CARRAY_OPENCL_CONV_VEC=0: 8 x 8 register blocks read from local memory element by element
  rather than as 4-vectors (the default for WM = WN = 8).

Index arithmetic is 32-bit: calls whose arrays (with their buffer offsets) exceed 2**30
elements, or whose images 2**27 rows, take the im2col path."""

import os
import struct

import carray
from carray.opencl import _cache, _matmul, _reduce
from carray.opencl._launch import LAUNCH_LOCK, submit
from carray.opencl._layout import INT_LIMIT
from carray.opencl._runtime import runtime
from carray.opencl._types import CL_TYPES, FLOAT64

FWD, GIN, GW = 0, 1, 2
_ENV_NAMES = {FWD: "CARRAY_OPENCL_CONV_TILE_FWD", GIN: "CARRAY_OPENCL_CONV_TILE_GIN",
              GW: "CARRAY_OPENCL_CONV_TILE_GW"}
# Default tiles (TM, TN, BK, WM, WN): a GPU gets 8 x 8 register blocks, TM 64 (32) when M (output
# or input channels) is at most 64 (32) so most of the tile is not idle, BK 8 for float64 (two
# halves of each tile stay within 48 KiB of local memory); a CPU device (PoCL) 64 x 64 (its
# FMAs on 4-vectors are what PoCL runs fast: 2-3x the speed of 4 x 4 scalar blocks).
GPU_TILE_BIG = (128, 128, 16, 8, 8)
GPU_TILE_64 = (64, 128, 8, 8, 8)       # BK 8: 6-12% faster than 16 on an H100 at M = 64
GPU_TILE_32 = (32, 128, 16, 8, 8)
CPU_TILE = (64, 64, 16, 8, 8)
SIDE_LIMIT = 2**27
SPLIT_MIN_K = 256      # the shortest K slice of grad_weight worth its own work group
SPLIT_MAX = 256


def implicit():
    """Whether conv2d on the device uses these kernels (CARRAY_OPENCL_CONV is not 'im2col')."""
    return os.environ.get("CARRAY_OPENCL_CONV", "implicit") != "im2col"


def tile(mode, M, t=None):
    """The (TM, TN, BK, WM, WN) tile of kernel `mode` for M output rows of type number t."""
    cfg = _matmul.env_tile(_ENV_NAMES[mode]) or _matmul.env_tile("CARRAY_OPENCL_CONV_TILE")
    if cfg:
        return cfg
    if runtime().is_cpu:
        return CPU_TILE
    cfg = GPU_TILE_32 if M <= 32 else GPU_TILE_64 if M <= 64 else GPU_TILE_BIG
    return cfg[:2] + (8,) + cfg[3:] if t == FLOAT64 else cfg


def fits(*operands, sides=()):
    """Whether 32-bit indices cover these operands (device arrays, counting their offsets, or
    shapes) and image sides + padding."""
    for a in operands:
        if isinstance(a, tuple):
            n = 1
            for d in a:
                n *= d
        else:
            n = a._cl()[1] + a.size
        if n > INT_LIMIT // 2:
            return False
    return all(v < SIDE_LIMIT for v in sides)


def vec(cfg):
    """Whether tile cfg's 8 x 8 blocks are read as 4-vectors (CARRAY_OPENCL_CONV_VEC=0: no)."""
    return cfg[3] == cfg[4] == 8 and os.environ.get("CARRAY_OPENCL_CONV_VEC", "1") != "0"


def _kernel(t, cfg, mode, bias, v):
    tm, tn, bk, wm, wn = cfg
    return _cache.kernel(("conv", t, cfg, mode, bias, v), "conv",
                         lambda: _cache.render("conv.cl", t=CL_TYPES[t], t4=CL_TYPES[t] + "4",
                                               tm=tm, tn=tn, bk=bk, wm=wm, wn=wn,
                                               mac="(acc) = fma(a, b, (acc))", mode=mode,
                                               bias=int(bias), vec=int(v), tb=int(mode == GW)),
                         "int", t == FLOAT64)


def _split(M, N, K, cfg):
    """grad_weight's K slice length (0: no split): when its few output tiles leave most compute
    units idle, K (batch x output pixels) is cut into slices of whole BK steps (the GEMM's
    split-K rule with the convolution's numbers)."""
    return _matmul._split_general(M, N, K, cfg, from_k=2 * SPLIT_MIN_K, min_k=SPLIT_MIN_K,
                                  most=SPLIT_MAX)


_plans = _cache.PlanCache()     # launch plans: _matmul's _Plan (kernel, arguments, sizes, split-K)


def _plan(mode, t, geom, M, N, K, offs, bias):
    """The plan of one launch of kernel `mode` for an M x N x K product (grad_input: N and K of
    its largest phase) over geometry geom, with these buffer offsets."""
    env = (os.environ.get(_ENV_NAMES[mode]), os.environ.get("CARRAY_OPENCL_CONV_TILE"),
           os.environ.get("CARRAY_OPENCL_CONV_VEC"))
    key = (mode, t, geom, offs, bias, env)
    plan = _plans.get(key)
    if plan is not None:
        return plan
    cfg = tile(mode, M, t)
    tm, tn, bk, wm, wn = cfg
    split = _split(M, N, K, cfg) if mode == GW else 0
    slices = -(-K // split) if split else 1
    if split and slices * M * N > INT_LIMIT // 2:
        split, slices = 0, 1
    if mode == GIN:
        slices = geom[9] * geom[10]      # one phase (h % sh, w % sw) per slice
    knl = _kernel(t, cfg, mode, bias, vec(cfg))
    args = [struct.pack("15i", *geom)] + [struct.pack("i", v) for v in offs + (split,)]
    consts = [v for i, a in enumerate(args, 4) for v in (i, a)]
    nx, ny = tn // wn, tm // wm
    gsize, lsize = (-(-N // tn) * nx, -(-M // tm) * ny, slices), (nx, ny, 1)
    return _plans.put(key, _matmul._Plan(knl, consts, gsize, lsize,
                                 (slices, M, N) if split else None))


def _run(plan, out, a, b, bias):
    with LAUNCH_LOCK:
        submit(runtime().queue, plan.knl, [0, out, 1, a, 2, b, 3, bias], plan.consts, plan.gsize,
               plan.lsize)


def _geom(N, C, H, W, O, Ho, Wo, kh, kw, stride, padding, dilation):
    return (N, C, H, W, O, Ho, Wo, kh, kw, stride[0], stride[1], padding[0], padding[1],
            dilation[0], dilation[1])


def forward(x, w, b, out_shape, stride, padding, dilation):
    """out = conv2d(x, w, b) in one launch (x, w, b: contiguous device arrays of one float
    dtype, b may be None; out_shape (N, O, Ho, Wo) not empty)."""
    N, C, H, W = x.shape
    O, _, kh, kw = w.shape
    Ho, Wo = out_shape[2:]
    out = carray.empty(out_shape, dtype=x.dtype, device="gpu")
    xb, xo = x._cl()[:2]
    wb, wo = w._cl()[:2]
    bb, bo = b._cl()[:2] if b is not None else (wb, 0)
    geom = _geom(N, C, H, W, O, Ho, Wo, kh, kw, stride, padding, dilation)
    plan = _plan(FWD, x.dtype.num, geom, O, N * Ho * Wo, C * kh * kw,
                 (out._cl()[1], wo, xo, bo), b is not None)
    _run(plan, out._cl()[0], wb, xb, bb)
    return out


def grad_input(gout, w, input_shape, stride, padding, dilation):
    """The gradient of conv2d with respect to its (N, C, H, W) input, in one launch (gout, w:
    contiguous device arrays; input_shape and gout not empty)."""
    N, C, H, W = input_shape
    O, _, kh, kw = w.shape
    Ho, Wo = gout.shape[2:]
    gin = carray.empty(input_shape, dtype=gout.dtype, device="gpu")
    gb, go = gout._cl()[:2]
    wb, wo = w._cl()[:2]
    sh, sw = stride
    plan = _plan(GIN, gout.dtype.num, _geom(N, C, H, W, O, Ho, Wo, kh, kw, stride, padding,
                                            dilation),
                 C, N * -(-H // sh) * -(-W // sw), O * kh * kw, (gin._cl()[1], wo, go, 0), False)
    _run(plan, gin._cl()[0], wb, gb, wb)
    return gin


def grad_weight(x, gout, weight_shape, stride, padding, dilation):
    """The gradient of conv2d with respect to its (O, C, kh, kw) weight: one launch, plus one
    reduction when K is split (x, gout: contiguous device arrays, not empty)."""
    N, C, H, W = x.shape
    O, _, kh, kw = weight_shape
    Ho, Wo = gout.shape[2:]
    gw = carray.empty(weight_shape, dtype=x.dtype, device="gpu")
    xb, xo = x._cl()[:2]
    gb, go = gout._cl()[:2]
    M, Nn = O, C * kh * kw
    plan = _plan(GW, x.dtype.num, _geom(N, C, H, W, O, Ho, Wo, kh, kw, stride, padding,
                                        dilation), M, Nn, N * Ho * Wo, (0, go, xo, 0), False)
    if plan.part_shape is None:
        _run(plan, gw._cl()[0], gb, xb, gb)
        return gw
    part = carray.empty(plan.part_shape, dtype=x.dtype, device="gpu")
    _run(plan, part._cl()[0], gb, xb, gb)
    _reduce.reduce(part, _reduce.R_SUM, (True, False, False), out=gw)
    return gw
