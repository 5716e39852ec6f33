"""Batch normalisation in training mode on the device (batchnorm.cl), for carray.nn.batch_norm
and batch_norm_grad: two launches forward (the statistics of every channel in one pass, with the
running statistics' update, then the normalisation) and two backward (the two sums per channel,
then the input's gradient), and one more each (merging per-channel parts) when few channels
are spread over several work groups each (see _parts)."""

import carray
from carray.opencl import _cache
from carray.opencl._launch import launch
from carray.opencl._layout import dense_operand, optional_operand, whole
from carray.opencl._layout import int_arg as _i
from carray.opencl._layout import long_arg as _q
from carray.opencl._layout import pack_scalar as _s
from carray.opencl._runtime import runtime
from carray.opencl._types import CL_TYPES, FLOAT64

STATS, APPLY, SUMS, GRAD, STATS_MERGE, SUMS_MERGE = range(6)


def _kernels(t):
    wg = runtime().max_group
    return _cache.kernel(("batchnorm", t, wg), ("bn_stats", "bn_apply", "bn_grad_sums",
                                                "bn_grad_input", "bn_stats_merge",
                                                "bn_grad_sums_merge"),
                         lambda: _cache.render("batchnorm.cl", t=CL_TYPES[t], wg=wg), "long",
                         t == FLOAT64)


def _parts(C, N, S):
    """Work groups per channel for the statistics kernels: enough for two per compute unit in
    all (a ResNet's 64-channel layers ran on 64 of an H100's 132 compute units), but never more
    than there are rows of images to share out, nor parts of fewer than 16K values."""
    rows = runtime().max_group // _columns(S)
    want = -(-2 * runtime().device.max_compute_units // C)
    return max(1, min(want, -(-N // rows), N * S // 16384))


def _partial(C, parts, per, unused):
    """The parts' partial results (per values each); with parts == 1 the kernel writes none, and
    `unused` (an array of the call's) stands in, so nothing is allocated."""
    if parts == 1:
        return unused
    return carray.empty((C * parts * per,), dtype=unused.dtype, device="gpu")


def _columns(S):
    """The statistics kernels' columns: a power of two covering S, at most the group's width."""
    wg, sw = runtime().max_group, 1
    while sw < S and sw < wg:
        sw *= 2
    return sw


def _written(a):
    """(buffer, offset) of an array the kernel updates in place (C-contiguous)."""
    buf, off = a._cl()[:2]
    return [buf, _q(off)]


def _dims(x):
    N, C = x.shape[0], x.shape[1]
    S = x.size // (N * C) if N * C else 0
    return N, C, S


def batch_norm(x, weight, bias, eps, running_mean, running_var, momentum):
    """(y, mean, var, invstd) of batch_norm on the device (see batchnorm.cl)."""
    t = x.dtype.num
    N, C, S = _dims(x)
    mean, var, invstd = (carray.empty((C,), dtype=x.dtype, device="gpu") for _ in range(3))
    y = carray.empty(x.shape, dtype=x.dtype, device="gpu")
    if C == 0:
        return y, mean, var, invstd
    kern = _kernels(t)
    xb, xo = dense_operand(x)
    update = running_mean is not None
    total = N * S
    parts = _parts(C, N, S)
    partial = _partial(C, parts, 3, mean)
    outputs = [mean._cl()[0], var._cl()[0], invstd._cl()[0],
               *_written(running_mean if update else mean),
               *_written(running_var if update else var), _i(int(update))]
    factors = [_s(t, eps), _s(t, 1.0 - momentum), _s(t, momentum),
               _s(t, total / (total - 1) if total > 1 else float("inf"))]
    launch(kern[STATS], C * parts * runtime().max_group,
           [xb, xo, *outputs, _q(C), _q(S), _q(total), *factors, _i(_columns(S)), _i(parts),
            partial._cl()[0]], runtime().max_group)
    if parts > 1:
        launch(kern[STATS_MERGE], C, [partial._cl()[0], *outputs, _q(C), *factors, _i(parts)])
    if y.size:
        launch(kern[APPLY], y.size,
               [y._cl()[0], xb, xo, mean._cl()[0], invstd._cl()[0], *optional_operand(weight, mean),
                *optional_operand(bias, mean), _q(C), _q(S), _q(y.size)])
    return y, mean, var, invstd


def batch_norm_grad(g, x, mean, invstd, weight, output_mask):
    """(gx, gw, gb) of batch_norm on the device; entries not in output_mask are None."""
    t = x.dtype.num
    N, C, S = _dims(x)
    sum_g, sum_gx = (carray.empty((C,), dtype=x.dtype, device="gpu") for _ in range(2))
    mean, invstd = whole(mean), whole(invstd)
    kern = _kernels(t)
    gb_, go = dense_operand(g)
    xb, xo = dense_operand(x)
    if C:
        parts = _parts(C, N, S)
        partial = _partial(C, parts, 2, sum_g)
        launch(kern[SUMS], C * parts * runtime().max_group,
               [sum_g._cl()[0], sum_gx._cl()[0], gb_, go, xb, xo, mean._cl()[0],
                invstd._cl()[0], _q(C), _q(S), _q(N * S), _i(_columns(S)), _i(parts),
                partial._cl()[0]], runtime().max_group)
        if parts > 1:
            launch(kern[SUMS_MERGE], C, [partial._cl()[0], sum_g._cl()[0], sum_gx._cl()[0],
                                         _q(C), _i(parts)])
    gx = None
    if output_mask[0]:
        gx = carray.empty(x.shape, dtype=x.dtype, device="gpu")
        m = N * S
        if gx.size:
            launch(kern[GRAD], gx.size,
                   [gx._cl()[0], gb_, go, xb, xo, mean._cl()[0], invstd._cl()[0],
                    sum_g._cl()[0], sum_gx._cl()[0], *optional_operand(weight, mean),
                    _s(t, 1.0 / m if m else 1.0), _q(C), _q(S), _q(gx.size)])
    return (gx, sum_gx if output_mask[1] else None, sum_g if output_mask[2] else None)
