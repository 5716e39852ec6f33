"""carray.nn's kernels on the device, with the signatures of carray/cpu/_nn.pyx (carray/nn.py
validates the arguments and calls one or the other): convolution as implicit GEMM (_conv.py;
with CARRAY_OPENCL_CONV=im2col as im2col + GEMM, its input gradient as GEMM + col2im), pooling
and pooling gradients as direct kernels (nn.cl), softmax cross entropy and its gradient as one
kernel each (loss.cl), SGD's update of many parameters as one kernel (optim.cl)."""

import struct
import threading
import time

import carray
from carray.opencl import _cache, _conv, _profiling, _rows, _winograd
from carray.opencl._launch import launch
from carray.opencl._layout import int_arg as _i
from carray.opencl._layout import long_arg as _q
from carray.opencl._layout import whole
from carray.opencl._runtime import runtime
from carray.opencl._types import CL_TYPES, FLOAT32, FLOAT64

NAMES = ("im2col", "col2im", "max_pool", "max_grad", "avg_pool", "avg_grad")


def _kernels(t):
    return _cache.kernel(("nn", t), NAMES,
                         lambda: _cache.render("nn.cl", t=CL_TYPES[t], atomic32=0),
                         "long", t == FLOAT64)


def _scatter_kernel(t):
    """max_scatter for float32 (a compare-and-swap add), else None (pooling takes floats)."""
    mode = {FLOAT32: 2}.get(t)
    if mode is None:
        return None
    return _cache.kernel(("nn-scatter", t), "max_scatter",
                         lambda: _cache.render("nn.cl", t=CL_TYPES[t], atomic32=mode),
                         "long")


BAD_POOL_INDEX, BAD_TARGET = 1, 2
class _Checks(threading.local):
    """Per calling thread: the device flag its kernels set for a bad index (the value says which
    kernel; made on first use) and {flag value: IndexError message} for its calls not checked
    yet. Per thread, so that a bad index is reported by the thread that passed it, at its own
    next read (one shared flag let another thread's read raise it, or clear it unreported)."""

    flag = None

    def __init__(self):
        self.pending = {}


_checks = _Checks()


def _bad_flag():
    """The calling thread's flag (a device int32[1])."""
    if _checks.flag is None:
        _checks.flag = carray.zeros((1,), dtype="int32", device="gpu")
    return _checks.flag


def _expect_check(code, message):
    """Note that a kernel just queued sets the calling thread's flag to `code` on a bad index:
    its next read from the device then raises IndexError(message)."""
    _checks.pending[code] = message


def read_flag_with_next_read():
    """When the calling thread's kernels have index checks pending: queue a read of its flag
    into a host array, so the blocking read the caller queues next returns with it (one wait
    for both); else None."""
    if not _checks.pending:
        return None
    flag = _bad_flag()
    host = carray.empty((1,), dtype="int32")
    rt = runtime()
    # the event is kept (with host) until check_pending: pyopencl may wait when it is dropped
    obs = _profiling.observer
    t0 = time.perf_counter_ns() if obs is not None else 0
    event = rt.cl.enqueue_copy(rt.queue, memoryview(host).cast("B"), flag._cl()[0],
                               src_offset=flag._cl()[1] * 4, is_blocking=False)
    if obs is not None:
        obs.copy("DtoH", 4, event, False, t0)
    return host, event


def check_pending(flag):
    """Raise the IndexError of a kernel that found a bad index (a max_pool2d_grad index outside
    its plane, a cross-entropy target outside its classes), when one ran before the flag was
    read (flag: read_flag_with_next_read's result, after the caller's blocking read). The
    kernels check on the device and the verdict comes back with the calling thread's next host
    read, rather than waiting for the queue on every call."""
    if flag is None:
        return
    messages = dict(_checks.pending)
    _checks.pending.clear()
    code = flag[0].tolist()[0]
    if code:
        _bad_flag().fill(0)
        raise IndexError(messages.get(code, "an index is out of bounds") + " (found on the "
                         "device; reported at the next read from it)")


def _geom(N, C, H, W, Ho, Wo, kernel, stride, padding, dilation):
    return struct.pack("14q", N, C, H, W, Ho, Wo, kernel[0], kernel[1], stride[0], stride[1],
                       padding[0], padding[1], dilation[0], dilation[1])




def _empty(shape, dtype):
    return carray.empty(shape, dtype=dtype, device="gpu")


def _im2col(x, kshape, out_hw, stride, padding, dilation):
    N, C, H, W = x.shape
    Ho, Wo = out_hw
    col = _empty((C * kshape[0] * kshape[1], N * Ho * Wo), x.dtype)
    if col.size:
        g = _geom(N, C, H, W, Ho, Wo, kshape, stride, padding, dilation)
        buf, off = x._cl()[:2]
        launch(_kernels(x.dtype.num)[0], col.size, [col._cl()[0], buf, g, _q(off)])
    return col


def conv2d_forward(x, w, b, out_shape, stride, padding, dilation):
    """out = conv2d(x, w, b) (4-d contiguous device arrays of one float dtype)."""
    N, O, Ho, Wo = out_shape
    if N * O * Ho * Wo == 0:
        return _empty(out_shape, x.dtype)
    out = _winograd.forward(x, w, b, stride, padding, dilation)
    if out is not None:
        return out
    if x.size and _conv.implicit() and _conv.fits(x, w, out_shape,
                                                 sides=(x.shape[2] + padding[0],
                                                        x.shape[3] + padding[1])):
        return _conv.forward(x, w, b, out_shape, stride, padding, dilation)
    col = _im2col(x, w.shape[2:], (Ho, Wo), stride, padding, dilation)
    out2 = w.reshape(O, -1) @ col                           # (O, N * Ho * Wo)
    out = out2.reshape(O, N, Ho, Wo).transpose(1, 0, 2, 3)
    return out + b.reshape(1, O, 1, 1) if b is not None else out.copy()


def _gout_rows(gout):
    N, O, Ho, Wo = gout.shape
    return gout.transpose(1, 0, 2, 3).reshape(O, N * Ho * Wo)


def conv2d_grad_input(gout, w, input_shape, stride, padding, dilation):
    """The gradient of conv2d with respect to its input of shape input_shape."""
    N, C, H, W = input_shape
    O, _, kh, kw = w.shape
    gin = _winograd.grad_input(gout, w, input_shape, stride, padding, dilation)
    if gin is not None:
        return gin
    if N * C * H * W and gout.size and _conv.implicit() and \
            _conv.fits(input_shape, w, gout, sides=(H + padding[0], W + padding[1])):
        return _conv.grad_input(gout, w, input_shape, stride, padding, dilation)
    gin = _empty(input_shape, gout.dtype)
    if gin.size == 0:
        return gin
    if gout.size == 0:
        gin.fill(0)
        return gin
    gcol = w.reshape(O, -1).T @ _gout_rows(gout)            # (C kh kw, N Ho Wo)
    g = _geom(N, C, H, W, gout.shape[2], gout.shape[3], (kh, kw), stride, padding, dilation)
    launch(_kernels(gout.dtype.num)[1], gin.size, [gin._cl()[0], gcol._cl()[0], g])
    return gin


def conv2d_grad_weight(x, gout, weight_shape, stride, padding, dilation):
    """The gradient of conv2d with respect to its weight of shape weight_shape."""
    O, C, kh, kw = weight_shape
    if gout.size == 0 or x.size == 0:
        return carray.zeros(weight_shape, dtype=x.dtype, device="gpu")
    if _conv.implicit() and _conv.fits(x, weight_shape, gout,
                                       sides=(x.shape[2] + padding[0], x.shape[3] + padding[1])):
        return _conv.grad_weight(x, gout, weight_shape, stride, padding, dilation)
    col = _im2col(x, (kh, kw), gout.shape[2:], stride, padding, dilation)
    return (_gout_rows(gout) @ col.T).reshape(weight_shape)


def conv2d_grad_bias(gout):
    """grad_bias[o] = sum of gout[:, o]."""
    return gout.sum(axis=(0, 2, 3))


def max_pool2d_forward(x, out_shape, kernel, stride, padding, dilation, with_indices):
    """(out, indices or None) of max pooling."""
    N, C, H, W = x.shape
    out = _empty(out_shape, x.dtype)
    idx = _empty(out_shape, "int64") if with_indices else None
    if out.size:
        g = _geom(N, C, H, W, out_shape[2], out_shape[3], kernel, stride, padding, dilation)
        buf, off = x._cl()[:2]
        launch(_kernels(x.dtype.num)[2], out.size,
               [out._cl()[0], idx._cl()[0] if with_indices else out._cl()[0], buf, g, _q(off),
                _i(1 if with_indices else 0)])
    return out, idx


def max_pool2d_backward(gout, idx, input_shape):
    """gin[n, c].flat[idx[n, c, i, j]] += gout[n, c, i, j]. float32 scatters in
    parallel (one work item per output element, atomic adds) and check the indices on the
    device: an index outside its plane raises IndexError at the next read from the device (see
    check_pending). Other types run one work item per plane and check on the host first."""
    N, C, H, W = input_shape
    HW = H * W
    gin = _empty(input_shape, gout.dtype)
    scatter = _scatter_kernel(gout.dtype.num) if gin.size and gout.size else None
    if scatter is not None:
        gout, idx = whole(gout), whole(idx)
        gin.fill(0)
        g = _geom(N, C, H, W, gout.shape[2], gout.shape[3], (1, 1), (1, 1), (0, 0), (1, 1))
        launch(scatter, gout.size, [gin._cl()[0], gout._cl()[0], idx._cl()[0], g,
                                    _bad_flag()._cl()[0]])
        _expect_check(BAD_POOL_INDEX, f"max_pool2d_grad: an index is out of bounds for an "
                      f"input plane of {H}x{W} = {HW} elements")
        return gin
    if idx.size and bool(((idx < -1) | (idx >= HW)).any()):
        bad = idx[(idx < -1) | (idx >= HW)][0].item()
        raise IndexError(f"max_pool2d_grad: index {bad} is out of bounds for an input plane of "
                         f"{H}x{W} = {HW} elements")
    gout, idx = whole(gout), whole(idx)
    if gin.size:
        g = _geom(N, C, H, W, gout.shape[2], gout.shape[3], (1, 1), (1, 1), (0, 0), (1, 1))
        launch(_kernels(gout.dtype.num)[3], N * C,
               [gin._cl()[0], gout._cl()[0], idx._cl()[0], g], 64)
    return gin


def avg_pool2d_forward(x, out_shape, kernel, stride, padding, count_include_pad, divisor):
    """Average pooling (divisor > 0 overrides the window size)."""
    N, C, H, W = x.shape
    out = _empty(out_shape, x.dtype)
    if out.size:
        g = _geom(N, C, H, W, out_shape[2], out_shape[3], kernel, stride, padding, (1, 1))
        buf, off = x._cl()[:2]
        launch(_kernels(x.dtype.num)[4], out.size,
               [out._cl()[0], buf, g, _q(off), _i(int(count_include_pad)), _q(divisor)])
    return out


def avg_pool2d_backward(gout, input_shape, kernel, stride, padding, count_include_pad, divisor):
    """The gradient of average pooling with respect to its input of shape input_shape."""
    N, C, H, W = input_shape
    gin = _empty(input_shape, gout.dtype)
    gout = whole(gout)
    if gin.size:
        g = _geom(N, C, H, W, gout.shape[2], gout.shape[3], kernel, stride, padding, (1, 1))
        launch(_kernels(gout.dtype.num)[5], gin.size,
               [gin._cl()[0], gout._cl()[0], g, _i(int(count_include_pad)), _q(divisor)])
    return gin


def _loss_kernels(t, wg):
    return _cache.kernel(("loss", t, wg), ("softmax_nll_rows", "nll_total", "softmax_nll_grad"),
                         lambda: _cache.render("loss.cl", t=CL_TYPES[t], wg=wg),
                         "long", t == FLOAT64)


_NLL_MODES = {"none": 0, "sum": 1, "mean": 2}


def softmax_nll(x, target, ignore_index, reduction):
    """(loss, probs, count) of softmax cross entropy over the rows of x (M, C) at target (M,):
    each row's softmax and loss in one launch over many work groups (_rows.lanes: a local-memory
    tree per row, several short rows per group), then, for 'sum' and 'mean', one small launch
    summing the M row losses and counts. A target outside [0, C) raises IndexError at the next
    read from the device."""
    M, C = x.shape
    mode = _NLL_MODES[reduction]
    probs = _empty((M, C), x.dtype)
    loss = _empty((M,) if mode == 0 else (), x.dtype)
    count = _empty((), x.dtype) if mode else None
    if M == 0:
        if mode:
            loss.fill(float("nan") if mode == 2 else 0.0)
            count.fill(0)
        return loss, probs, count
    wg, w = _rows.lanes(C)
    rows_knl, total_knl, _ = _loss_kernels(x.dtype.num, wg)
    x = x if x.flags.c_contiguous else x.copy()
    xbuf, xoff = x._cl()[:2]
    tbuf, toff = target._cl()[:2]
    per_row = loss if mode == 0 else _empty((2 * M,), x.dtype)    # losses, then counts
    rbuf = per_row._cl()[0]
    launch(rows_knl, _rows.groups(M, wg, w),
           [rbuf, probs._cl()[0], xbuf, _q(xoff), tbuf, _q(toff), _q(M), _q(C),
            _q(ignore_index), _i(mode != 0), _bad_flag()._cl()[0], _i(w)], wg)
    if mode:
        launch(total_knl, wg, [loss._cl()[0], count._cl()[0], rbuf, _q(M), _i(mode)], wg)
    _expect_check(BAD_TARGET, f"cross_entropy: a target is out of bounds for {C} classes")
    return loss, probs, count


def softmax_nll_grad(probs, target, grad_output, count, ignore_index):
    """(probs - one_hot(target)) * grad_output [/ count] by rows, 0 for rows not counted (rows
    spread over work groups as in softmax_nll)."""
    M, C = probs.shape
    gx = _empty((M, C), probs.dtype)
    if gx.size:
        wg, w = _rows.lanes(C)
        knl = _loss_kernels(probs.dtype.num, wg)[2]
        tbuf, toff = target._cl()[:2]
        gbuf, goff = grad_output._cl()[:2]
        gstep = grad_output.strides[0] // grad_output.itemsize if grad_output.ndim else 0
        launch(knl, _rows.groups(M, wg, w),
               [gx._cl()[0], probs._cl()[0], tbuf, _q(toff), _q(M), _q(C), _q(ignore_index),
                gbuf, _q(goff), _q(gstep), (count if count is not None else grad_output)._cl()[0],
                _i(count is not None), _i(w)], wg)
    return gx


# the fused kernels of other modules: memory-efficient attention (_attention.py: one launch
# forward, two backward), batch normalisation (_batchnorm.py), optimizer updates of many
# parameters per launch (_foreach.py), exact GELU (_gelu.py), softmax / log_softmax / layer norm
# / RMS norm rows (_nn_norm.py), the LSTM/GRU cells and layers (_rnn.py)
from carray.opencl._attention import attention, attention_grad  # noqa: E402, F401
from carray.opencl._batchnorm import batch_norm, batch_norm_grad  # noqa: E402, F401
from carray.opencl._foreach import (  # noqa: E402, F401
    adam_step,
    scale_all,
    sgd_momentum_step,
    sgd_step,
    sum_squares_partials,
)
from carray.opencl._gelu import gelu, gelu_grad  # noqa: E402, F401
from carray.opencl._nn_norm import (  # noqa: E402, F401
    layer_norm_grad_rows,
    layer_norm_rows,
    log_softmax_grad_rows,
    log_softmax_rows,
    rms_norm_grad_rows,
    rms_norm_rows,
    softmax_grad_rows,
    softmax_rows,
)
from carray.opencl._rnn import (  # noqa: E402, F401
    gru_cell,
    gru_cell_grad,
    lstm_cell,
    lstm_cell_grad,
    lstm_layer,
    lstm_layer_grad,
)
