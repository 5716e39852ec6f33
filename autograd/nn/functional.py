"""autograd.nn.functional: torch.nn.functional's ops on autograd Tensors.

Same names, arguments, results and error types as PyTorch. Each differentiable op is either a
composition of autograd's ops or a Function in this file with its forward and backward side by
side. The Functions work on the carray data directly (one node, few temporaries: the training
loop's hot path) and, when backward runs under create_graph (grad mode on), build their gradient
from differentiable ops instead, so gradients of gradients work.

    linear conv2d max_pool2d avg_pool2d                     layers
    relu leaky_relu gelu sigmoid tanh softplus silu elu ... activations
    softmax log_softmax softmin                             normalised exponentials
    cross_entropy nll_loss mse_loss l1_loss                 losses
    binary_cross_entropy binary_cross_entropy_with_logits
    dropout batch_norm pad one_hot embedding                the rest
"""

import math
import numbers
import operator
import warnings

import carray
from carray import nn as _cnn

from autograd import factories
from autograd.function import Function, scalar_type_name
from autograd.grad_mode import _state
from autograd.ops import (Cat, Index, Mul, Pad, Relu, Where, log_softmax as _log_softmax,
                          sigmoid as _sigmoid, softmax as _softmax, tanh as _tanh)
from autograd.ops.inplace import inplace as _inplace
from autograd.ops._util import reduce_grad, wrap
from autograd.ops.shape import IndexAdd

__all__ = [
    "avg_pool2d", "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "conv2d", "cross_entropy", "dropout", "elu", "embedding", "gelu", "hardtanh", "l1_loss",
    "leaky_relu", "linear", "log_softmax", "max_pool2d", "mse_loss", "nll_loss", "one_hot",
    "pad", "relu", "relu6", "sigmoid", "silu", "softmax", "softmin", "softplus", "tanh",
]


class _Fn(Function):
    """Base of this file's Functions: built-ins whose backward returns exactly shaped grads."""

    _trusted = True



def _size(shape):
    return "torch.Size([" + ", ".join(str(n) for n in shape) + "])"


def _check_float(op, t):
    if t.data.dtype.kind != "f":
        name = scalar_type_name(t.data.dtype)
        raise NotImplementedError(f'"{op}" not implemented for \'{name}\'')


def _reduction_arg(reduction, size_average=None, reduce=None):
    """The reduction mode, from PyTorch's legacy size_average/reduce flags when given.
    ValueError for a mode other than 'none', 'mean' and 'sum'."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else "mean" if size_average else "sum"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


class _as_runtime_error:
    """Re-raise carray.nn's ValueErrors (bad padding strings, argument lengths) as the
    RuntimeError PyTorch raises for them."""

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if kind is not None and issubclass(kind, ValueError):
            raise RuntimeError(str(exc)) from None
        return False


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# ---------------------------------------------------------------------------------------------
# linear
# ---------------------------------------------------------------------------------------------

class Linear(_Fn):
    """y = x W^T + b over the last dim of x (any leading dims);
    dx = g W, dW = g^T x and db = sum of g, both over all leading dims."""

    @staticmethod
    def forward(ctx, x, w, b):
        xd, wd = x.data, w.data
        n_in, n_out = wd.shape[1], wd.shape[0]
        x2 = xd if xd.ndim == 2 else xd.reshape((-1, n_in))
        y = carray.matmul(x2, wd.T)
        if b is not None:
            carray.add(y, b.data, out=y)
        if xd.ndim != 2:
            y = y.reshape(xd.shape[:-1] + (n_out,))
        need = ctx.needs_input_grad
        if True in need:
            ctx.save_for_backward(x if need[1] else None, w if need[0] else None)
            ctx.shapes = (xd.shape, wd.shape)
            ctx.b = (b.data.shape, b.data.dtype) if b is not None else None
        return wrap(y)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        xshape, (n_out, n_in) = ctx.shapes
        gx = gw = gb = None
        if _state.enabled:  # create_graph: differentiable ops
            g2 = g.reshape((-1, n_out))
            if need[0]:
                gx = g.matmul(w)
            if need[1]:
                gw = g2.t().matmul(x.reshape((-1, n_in)))
            if need[2]:
                gb = reduce_grad(g2.sum(0), ctx.b)
            return gx, gw, gb
        gd = g.data
        g2 = gd if gd.ndim == 2 else gd.reshape((-1, n_out))
        if need[0]:
            gx = carray.matmul(g2, w.data)
            gx = wrap(gx if len(xshape) == 2 else gx.reshape(xshape))
        if need[1]:
            xd = x.data
            x2 = xd if xd.ndim == 2 else xd.reshape((-1, n_in))
            gw = wrap(carray.matmul(g2.T, x2))
        if need[2]:
            gb = reduce_grad(wrap(carray.sum(g2, axis=0)), ctx.b)
        return gx, gw, gb


def linear(input, weight, bias=None):
    """input @ weight^T + bias (torch.nn.functional.linear): input (*, in), weight (out, in),
    bias (out,) or None; the result is (*, out). RuntimeError when the sizes or dtypes do not
    match or input is 0-d."""
    xs, ws = input.shape, weight.shape
    if len(xs) == 0 or len(ws) == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{len(xs)}D and {len(ws)}D")
    if input.dtype != weight.dtype or bias is not None and bias.dtype != input.dtype:
        other = weight.dtype if input.dtype != weight.dtype else bias.dtype
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{scalar_type_name(input.dtype).lower()} != "
                           f"{scalar_type_name(other).lower()}")
    if len(ws) != 2:  # a 1-d weight: a dot product over the last dim
        out = input.matmul(weight)
        return out if bias is None else out + bias
    if xs[-1] != ws[1]:
        m = 1
        for n in xs[:-1]:
            m *= n
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{xs[-1]} and "
                           f"{ws[1]}x{ws[0]})")
    if bias is not None and bias.shape != (ws[0],):
        try:
            carray.broadcast_shapes(bias.shape, xs[:-1] + (ws[0],))
        except ValueError:
            raise RuntimeError(f"The expanded size of the tensor ({ws[0]}) must match the "
                               f"existing size ({bias.shape[-1]}) at non-singleton dimension "
                               f"{len(xs) - 1}.  Target sizes: {list(xs[:-1] + (ws[0],))}.  "
                               f"Tensor sizes: {list(bias.shape)}") from None
        if len(bias.shape) > 1:
            return Linear.apply(input, weight, None) + bias
    return Linear.apply(input, weight, bias)


# ---------------------------------------------------------------------------------------------
# convolution: three Functions, each the others' adjoint, so every order of gradient works
# ---------------------------------------------------------------------------------------------

class Conv2d(_Fn):
    """y = conv2d(x, w) + b (carray.nn.conv2d);  dx = conv2d_grad_input(g, w),
    dw = conv2d_grad_weight(x, g), db = sum of g over (N, H, W)."""

    @staticmethod
    def forward(ctx, x, w, b, stride, padding, dilation):
        with _as_runtime_error():
            out = _cnn.conv2d(x.data, w.data, b.data if b is not None else None, stride,
                              padding, dilation)
        need = ctx.needs_input_grad
        if True in need:
            ctx.save_for_backward(x if need[1] else None, w if need[0] else None)
            ctx.args = (stride, padding, dilation)
            ctx.shapes = (x.data.shape, w.data.shape)
        return wrap(out)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        xshape, wshape = ctx.shapes
        gx = gw = gb = None
        if need[0]:
            gx = Conv2dGradInput.apply(g, w, xshape, *ctx.args)
        if need[1]:
            gw = Conv2dGradWeight.apply(x, g, wshape, *ctx.args)
        if need[2]:
            dims = (0, 2, 3) if len(xshape) == 4 else (1, 2)
            gb = g.sum(dims) if _state.enabled else wrap(carray.sum(g.data, axis=dims))
        return gx, gw, gb, None, None, None


class Conv2dGradInput(_Fn):
    """gi = conv2d_grad_input(g, w) (the transposed convolution); for an upstream h,
    <gi, h> = <g, conv2d(h, w)>, so dg = conv2d(h, w) and dw = conv2d_grad_weight(h, g)."""

    @staticmethod
    def forward(ctx, g, w, xshape, stride, padding, dilation):
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(g, w)
            ctx.args = (stride, padding, dilation)
        return wrap(_cnn.conv2d_grad_input(g.data, w.data, xshape, stride, padding, dilation))

    @staticmethod
    def backward(ctx, h):
        g, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        dg = Conv2d.apply(h, w, None, *ctx.args) if need[0] else None
        dw = Conv2dGradWeight.apply(h, g, w.shape, *ctx.args) if need[1] else None
        return dg, dw, None, None, None, None


class Conv2dGradWeight(_Fn):
    """gw = conv2d_grad_weight(x, g); for an upstream h, <gw, h> = <g, conv2d(x, h)>, so
    dx = conv2d_grad_input(g, h) and dg = conv2d(x, h)."""

    @staticmethod
    def forward(ctx, x, g, wshape, stride, padding, dilation):
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(x, g)
            ctx.args = (stride, padding, dilation)
        return wrap(_cnn.conv2d_grad_weight(x.data, g.data, wshape, stride, padding, dilation))

    @staticmethod
    def backward(ctx, h):
        x, g = ctx.saved_tensors
        need = ctx.needs_input_grad
        dx = Conv2dGradInput.apply(g, h, x.shape, *ctx.args) if need[0] else None
        dg = Conv2d.apply(x, h, None, *ctx.args) if need[1] else None
        return dx, dg, None, None, None, None


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d cross-correlation (torch.nn.functional.conv2d): input (N, C, H, W) or (C, H, W),
    weight (O, C / groups, kH, kW), bias (O,):

        out[n, o, i, j] = bias[o] + sum_{c, u, v} weight[o, c, u, v]
                          * xpad[n, g(o) C/groups + c, i sH + u dH, j sW + v dW]

    stride, padding and dilation are ints or pairs; padding may be 'valid' or 'same' (stride 1).
    Groups run as separate convolutions joined along the channels. Raises RuntimeError for
    sizes, channels, dtypes, strides or padding (strings included) that do not fit, as PyTorch.
    Backward of any order works: the gradients are themselves convolutions."""
    if not isinstance(groups, numbers.Integral) or isinstance(groups, bool):
        raise TypeError(f"conv2d(): argument 'groups' must be int, not {type(groups).__name__}")
    if groups == 1:
        return Conv2d.apply(input, weight, bias, stride, padding, dilation)
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")
    c_in = input.shape[-3] if input.ndim in (3, 4) else -1
    o = weight.shape[0] if weight.ndim == 4 else -1
    if o % groups or weight.ndim != 4 or c_in != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{list(input.shape)} to have "
                           f"{weight.shape[1] * groups if weight.ndim == 4 else '?'} channels, "
                           f"but got {c_in} channels instead")
    cg, og = weight.shape[1], o // groups
    lead = (slice(None),) * (input.ndim - 3)
    outs = []
    for k in range(groups):
        xk = input[lead + (slice(k * cg, (k + 1) * cg),)]
        bk = bias[k * og:(k + 1) * og] if bias is not None else None
        outs.append(Conv2d.apply(xk, weight[k * og:(k + 1) * og], bk, stride, padding, dilation))
    return Cat.apply(input.ndim - 3, *outs)


# ---------------------------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------------------------

class MaxPool2d(_Fn):
    """y = max over each window (carray.nn.max_pool2d);  dx = g added at each window's argmax."""

    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
        want = return_indices or ctx.needs_input_grad[0]
        with _as_runtime_error():
            res = _cnn.max_pool2d(x.data, kernel_size, stride, padding, dilation, ceil_mode,
                                  want)
        out, idx = res if want else (res, None)
        ctx.idx, ctx.shape = idx, x.data.shape
        if return_indices:
            indices = wrap(idx)
            ctx.mark_non_differentiable(indices)
            return wrap(out), indices
        return wrap(out)

    @staticmethod
    def backward(ctx, g, _=None):
        return (MaxPool2dGrad.apply(g, ctx.idx, ctx.shape),) + (None,) * 6


class MaxPool2dGrad(_Fn):
    """gi = zeros(shape) with g added at the flat (H x W) positions idx; the adjoint gathers:
    for an upstream h, dg[n, c, i, j] = h[n, c].flat[idx[n, c, i, j]]."""

    @staticmethod
    def forward(ctx, g, idx, shape):
        ctx.idx, ctx.shape = idx, shape
        return wrap(_cnn.max_pool2d_grad(g.data, idx, shape))

    @staticmethod
    def backward(ctx, h):
        idx, shape = ctx.idx, ctx.shape
        planes = 1
        for n in shape[:-2]:
            planes *= n
        rows = carray.arange(planes, device=idx.device).reshape((planes, 1))
        flat = h.reshape((planes, shape[-2] * shape[-1]))
        picked = Index.apply(flat, (rows, idx.reshape((planes, -1))))
        return picked.reshape(idx.shape), None, None


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-d max pooling over (N, C, H, W) or (C, H, W) (torch.nn.functional.max_pool2d):
    out[n, c, i, j] = max_{u, v} xpad[n, c, i sH + u dH, j sW + v dW], xpad padded by -inf.
    stride defaults to kernel_size. With return_indices, also the int64 argmax positions, flat in
    each (H x W) plane. RuntimeError for sizes that do not fit (carray.nn's checks)."""
    return MaxPool2d.apply(input, kernel_size, stride, padding, dilation, ceil_mode,
                           bool(return_indices))


class AvgPool2d(_Fn):
    """y = mean over each window (carray.nn.avg_pool2d);  dx = avg_pool2d_grad(g), its adjoint."""

    @staticmethod
    def forward(ctx, x, *args):
        ctx.shape, ctx.args = x.data.shape, args
        with _as_runtime_error():
            return wrap(_cnn.avg_pool2d(x.data, *args))

    @staticmethod
    def backward(ctx, g):
        return (AvgPool2dGrad.apply(g, ctx.shape, *ctx.args),) + (None,) * len(ctx.args)


class AvgPool2dGrad(_Fn):
    """gi = avg_pool2d_grad(g) (linear); its adjoint is avg_pool2d: dg = avg_pool2d(h)."""

    @staticmethod
    def forward(ctx, g, shape, *args):
        ctx.args = args
        return wrap(_cnn.avg_pool2d_grad(g.data, shape, *args))

    @staticmethod
    def backward(ctx, h):
        return (AvgPool2d.apply(h, *ctx.args), None) + (None,) * len(ctx.args)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-d average pooling (torch.nn.functional.avg_pool2d): the sum over each window divided by
    kH kW (count_include_pad), by the number of input elements in it (count_include_pad=False),
    or by divisor_override. RuntimeError for sizes that do not fit or a zero divisor."""
    return AvgPool2d.apply(input, kernel_size, stride, padding, bool(ceil_mode),
                           bool(count_include_pad), divisor_override)


# ---------------------------------------------------------------------------------------------
# activations
# ---------------------------------------------------------------------------------------------

def relu(input, inplace=False):
    """max(x, 0);  dx = g where x > 0."""
    return input.relu_() if inplace else Relu.apply(input)


def relu6(input, inplace=False):
    """min(max(x, 0), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val];  dx = g inside the interval."""
    return input.clamp_(min_val, max_val) if inplace else input.clamp(min_val, max_val)


def sigmoid(input):
    """1 / (1 + exp(-x))."""
    return _sigmoid(input)


def tanh(input):
    return _tanh(input)


class LeakyRelu(_Fn):
    """x where x > 0 else slope x;  dx = g * (1 where x > 0 else slope)."""

    @staticmethod
    def forward(ctx, x, slope):
        if ctx.needs_input_grad[0]:  # 1 - (1 - slope) [x <= 0]
            ctx.factor = carray.add(carray.multiply(carray.less_equal(x.data, 0).astype(
                x.data.dtype), slope - 1.0), 1.0)
        return wrap(_leaky(x.data, slope))

    @staticmethod
    def backward(ctx, g):
        if _state.enabled:
            return g * wrap(ctx.factor), None
        return wrap(carray.multiply(g.data, ctx.factor)), None


def _leaky(d, slope):
    """max(x, slope x) for slope <= 1, else min(x, slope x): leaky relu in two passes."""
    scaled = carray.multiply(d, slope)
    return carray.maximum(d, scaled) if slope <= 1 else carray.minimum(d, scaled)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0 else negative_slope * x (torch.nn.functional.leaky_relu)."""
    if not inplace:
        return LeakyRelu.apply(input, negative_slope)

    def raw():
        input.data[...] = _leaky(input.data, negative_slope)
    return _inplace(input, lambda src: LeakyRelu.apply(src, negative_slope), raw, (), True)


class Erf(_Fn):
    """erf(x) = 2/sqrt(pi) int_0^x exp(-t^2) dt;  dx = g 2/sqrt(pi) exp(-x^2).

    carray has no erf, so it is summed here in float64 from the series
        erf(x) = 2/sqrt(pi) exp(-x^2) sum_{n >= 0} (2 x^2)^n x / (1 * 3 * ... * (2n + 1)),
    whose terms all have the sign of x (no cancellation: float64 accuracy); |x| is capped at 6,
    where 1 - erf(6) < 3e-17."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(_erf(x.data))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x * x).neg().exp() * (2 / math.sqrt(math.pi))


def _erf(a):
    x = carray.clip(a.astype(carray.float64), -6.0, 6.0)
    x2 = carray.multiply(carray.multiply(x, x), 2.0)
    term = x.copy()
    total = x.copy()
    n = 0
    while x.size:
        n += 1
        carray.multiply(term, x2, out=term)
        carray.multiply(term, 1.0 / (2 * n + 1), out=term)
        carray.add(total, term, out=total)
        if n % 8 == 0 and bool(carray.all(carray.less_equal(
                carray.abs(term), carray.multiply(carray.abs(total), 1e-17)))):
            break
    scale = carray.multiply(carray.exp(carray.negative(carray.multiply(x, x))),
                            2 / math.sqrt(math.pi))
    return carray.multiply(total, scale).astype(a.dtype)


def gelu(input, approximate="none"):
    """x Phi(x) (Phi the standard normal CDF, from erf) or, with approximate='tanh',
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). RuntimeError for another approximate."""
    if approximate == "tanh":
        inner = (input + input * input * input * 0.044715) * math.sqrt(2 / math.pi)
        return input * 0.5 * (_tanh(inner) + 1)
    if approximate != "none":
        raise RuntimeError("approximate argument must be either none or tanh.")
    return input * 0.5 * (Erf.apply(input * (1 / math.sqrt(2))) + 1)


class Softplus(_Fn):
    """log(1 + exp(beta x)) / beta, computed as (log1p(exp(-|bx|)) + max(bx, 0)) / beta, and x
    itself where beta x > threshold;  dx = g sigmoid(beta x) (g past the threshold)."""

    @staticmethod
    def forward(ctx, x, beta, threshold):
        ctx.save_for_backward(x)
        ctx.beta, ctx.threshold = beta, threshold
        bx = carray.multiply(x.data, beta)
        soft = carray.add(carray.log1p(carray.exp(carray.negative(carray.abs(bx)))),
                          carray.relu(bx))
        if beta != 1:
            soft = carray.divide(soft, beta)
        over = carray.greater(bx, threshold)
        return wrap(carray.where(over, x.data, soft) if carray.any(over) else soft)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        slope = _sigmoid(x * ctx.beta)
        over = carray.greater(carray.multiply(x.data, ctx.beta), ctx.threshold)
        return g * (Where.apply(over, 1.0, slope) if carray.any(over) else slope), None, None


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, linear (x) where beta x > threshold; stable for any x."""
    return Softplus.apply(input, beta, threshold)


def silu(input, inplace=False):
    """x sigmoid(x)."""
    out = input * _sigmoid(input)
    return input.copy_(out) if inplace else out


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0 else alpha (exp(x) - 1)."""
    neg = input.clamp(max=0.0).expm1() * alpha  # clamped so exp never overflows
    out = Where.apply(input.detach() > 0, input, neg)
    return input.copy_(out) if inplace else out


# ---------------------------------------------------------------------------------------------
# softmax
# ---------------------------------------------------------------------------------------------

def _softmax_dim(name, ndim):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  f"to include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along dim (computed from x - max: stable for any x)."""
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim)
    return _softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along dim."""
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim)
    return _softmax(-input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """x - max - log(sum(exp(x - max))) along dim."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim)
    return _log_softmax(input, dim, dtype=dtype)


# ---------------------------------------------------------------------------------------------
# class-index losses: nll_loss and cross_entropy
#
# Both see the input as a matrix (M, C): the class dim moved last and the others flattened.
# Row i has target t_i; rows with t_i == ignore_index count for nothing. With class weights w
# (ones by default) and label smoothing eps, cross entropy's loss of row i is
#     loss_i = -sum_c B_ic logp_ic,  B_ic = valid_i ((1 - eps) w_{t_i} [c == t_i] + eps/C w_c),
# 'mean' divides the sum by D = sum_i valid_i w_{t_i}, and d loss_i / d x_ic = p_ic a_i - B_ic
# with a_i = sum_c B_ic and p = softmax(x). nll_loss is the eps = 0 case on given log-probs.
# ---------------------------------------------------------------------------------------------

class _Targets:
    """Class-index targets checked against an input of C classes: flat targets `t` (M,), the
    same with ignored rows set to 0 (`safe`), the valid mask (None when every row counts), the
    per-row weights c_i = valid_i w_{t_i} (None when all are 1) and the 'mean' divisor D."""

    def __init__(self, target, n_classes, weight, ignore_index):
        t = target.data.reshape(-1)
        self.t, self.valid, self.safe = t, None, t
        m = t.size
        lo = hi = 0
        if m and t.device != "cpu":  # one read from the device, not two
            lo, hi = carray.stack([carray.min(t), carray.max(t)]).tolist()
        elif m:
            lo, hi = int(carray.min(t)), int(carray.max(t))
        if not (0 <= lo and hi < n_classes and not lo <= ignore_index <= hi):
            valid = carray.not_equal(t, ignore_index)
            safe = carray.multiply(t, valid.astype(t.dtype))  # ignored rows read class 0
            if m and (int(carray.min(safe)) < 0 or int(carray.max(safe)) >= n_classes):
                bad = [v for v, ok in zip(t.tolist(), valid.tolist())
                       if ok and not 0 <= v < n_classes]
                raise IndexError(f"Target {bad[0]} is out of bounds.")
            self.valid, self.safe = valid, safe
        self.w = weight.data if weight is not None else None
        c = None
        if self.w is not None:
            c = self.w[self.safe]
        if self.valid is not None:
            v = self.valid.astype(c.dtype if c is not None else carray.float64)
            c = v if c is None else carray.multiply(c, v)
        self.c = c
        self.divisor = float(carray.sum(c)) if c is not None else float(m)

    def row_weights(self, dtype):
        return None if self.c is None else self.c.astype(dtype)

    def mask(self, n_classes):
        """(M, C) bool: [c == safe_i], made once (the forward's pick and the backward share it)."""
        k = getattr(self, "_mask", None)
        if k is None or k.shape[1] != n_classes:
            cls = carray.arange(n_classes, device=self.safe.device)
            k = self._mask = carray.equal(carray.expand_dims(self.safe, 1), cls)
        return k


def _as_rows(x, class_dim):
    """The carray x as (M, C): its class dim moved last and the other dims flattened."""
    if x.ndim == 1:
        return x.reshape((1, x.shape[0]))
    if x.ndim == 2:
        return x
    return carray.moveaxis(x, class_dim, -1).reshape((-1, x.shape[class_dim]))


def _from_rows(rows, shape):
    """The inverse of _as_rows for a carray (M, C) array and the original shape."""
    if len(shape) <= 2:
        return rows.reshape(shape)
    moved = shape[:1] + shape[2:] + shape[1:2]
    return carray.moveaxis(rows.reshape(moved), -1, 1)


def _t_as_rows(x):
    """_as_rows for a Tensor (differentiable)."""
    if x.ndim == 1:
        return x.reshape((1, x.shape[0]))
    if x.ndim == 2:
        return x
    return x.permute((0,) + tuple(range(2, x.ndim)) + (1,)).reshape((-1, x.shape[1]))


def _t_from_rows(rows, shape):
    """_from_rows for a Tensor (differentiable)."""
    if len(shape) <= 2:
        return rows.reshape(shape)
    moved = shape[:1] + shape[2:] + shape[1:2]
    nd = len(shape)
    return rows.reshape(moved).permute((0, nd - 1) + tuple(range(1, nd - 1)))


def _row_scale(g, reduction, tg, m):
    """The gradient reaching each row's loss: g per row ('none'), g ('sum'), g / D ('mean'); a
    carray (M, 1) array or a Python float."""
    if reduction == "none":
        return g.data.reshape((m, 1))
    if reduction == "mean" and not tg.divisor:
        return _zero_divisor_scale(tg, m, g.data.dtype)
    if g.data.device != "cpu":  # a 0-d device array: reading it would wait for the queue
        return g.data if reduction == "sum" else carray.multiply(g.data, 1.0 / tg.divisor)
    s = g.data.item()
    return s if reduction == "sum" else s / tg.divisor


def _zero_divisor_scale(tg, m, dtype):
    """The row scales of a 'mean' over a zero weight sum: NaN for the counted rows and 0 for the
    ignored ones (PyTorch's gradient is 0, not NaN, when every target is ignored)."""
    if tg.valid is None:
        return float("nan")
    return carray.where(tg.valid, float("nan"), 0.0).astype(dtype).reshape((m, 1))


def _t_row_scale(g, reduction, tg, m):
    """_row_scale for a Tensor g (create_graph): a Tensor (M, 1) or scalar Tensor."""
    if reduction == "none":
        return g.reshape((m, 1))
    if reduction == "mean" and not tg.divisor:
        return g * wrap(carray.asarray(_zero_divisor_scale(tg, m, g.data.dtype),
                                       dtype=g.data.dtype, device=g.data.device))
    return g / tg.divisor if reduction == "mean" else g


def _targets_matrix(tg, n_classes, eps, dtype):
    """B (M, C) of the header comment, as a carray array of dtype."""
    onehot = tg.mask(n_classes).astype(dtype)
    c = tg.row_weights(dtype)
    if c is not None:
        onehot = carray.multiply(onehot, carray.expand_dims(c, 1))
    if not eps:
        return onehot
    b = carray.multiply(onehot, 1 - eps)
    w = tg.w.astype(dtype) if tg.w is not None else \
        carray.ones((n_classes,), dtype=dtype, device=tg.safe.device)
    spread = carray.multiply(w, eps / n_classes)
    if tg.valid is not None:
        spread = carray.multiply(spread, carray.expand_dims(tg.valid.astype(dtype), 1))
    return carray.add(b, spread)


def _pick(rows, safe, tg=None):
    """rows[i, safe[i]] for a carray (M, C) array. On the device, a masked row sum over tg's
    one-hot mask: advanced indexing would read the indices to the host."""
    m, n = rows.shape
    if tg is not None and rows.device != "cpu":
        return carray.sum(carray.where(tg.mask(n), rows, 0.0), axis=1)
    if rows.flags.c_contiguous:
        return rows.reshape(-1)[carray.add(carray.multiply(carray.arange(m, device=safe.device),
                                                           n), safe)]
    return rows[carray.arange(m, device=safe.device), safe]


def _finish_loss(per_row, tg, reduction, target_shape):
    """per_row (M,) losses reduced: as a target-shaped array, their sum, or sum / D."""
    if reduction == "none":
        return wrap(per_row.reshape(target_shape))
    total = carray.sum(per_row)
    if reduction == "mean":
        total = carray.divide(total, tg.divisor) if tg.divisor else \
            carray.full((), float("nan"), dtype=per_row.dtype, device=per_row.device)
    return wrap(total)


class CrossEntropy(_Fn):
    """Cross entropy of logits x (N, C, ...) against class indices, with class weights, an
    ignored index and label smoothing (see the header comment);
    dx_ic = s_i (softmax(x)_ic a_i - B_ic), s_i the gradient of row i's loss."""

    @staticmethod
    def forward(ctx, x, tg, reduction, eps, target_shape):
        rows = _as_rows(x.data, 1)
        n_classes = rows.shape[1]
        m = carray.max(rows, axis=1, keepdims=True) if rows.size else rows
        shifted = carray.subtract(rows, m)
        e = carray.exp(shifted)
        s = carray.sum(e, axis=1, keepdims=True)
        logp = carray.subtract(shifted, carray.log(s))
        per_row = carray.negative(_pick(logp, tg.safe, tg))
        c = tg.row_weights(logp.dtype)
        if c is not None:
            per_row = carray.multiply(per_row, c)
        if eps:
            w = tg.w.astype(logp.dtype) if tg.w is not None else None
            smooth = carray.negative(carray.sum(logp if w is None else carray.multiply(logp, w),
                                                axis=1))
            if tg.valid is not None:
                smooth = carray.where(tg.valid, smooth, 0.0)
            per_row = carray.add(carray.multiply(per_row, 1 - eps),
                                 carray.multiply(smooth, eps / n_classes))
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(x)
            ctx.p = carray.divide(e, s)
            ctx.tg, ctx.reduction, ctx.eps = tg, reduction, eps
        return _finish_loss(per_row, tg, reduction, target_shape)

    @staticmethod
    def backward(ctx, g):
        tg, eps = ctx.tg, ctx.eps
        p = ctx.p
        m, n_classes = p.shape
        b = _targets_matrix(tg, n_classes, eps, p.dtype)
        if _state.enabled:  # create_graph: softmax and the row scales from differentiable ops
            (x,) = ctx.saved_tensors
            probs = _softmax(_t_as_rows(x), 1)
            a = carray.sum(b, axis=1, keepdims=True)
            s = _t_row_scale(g, ctx.reduction, tg, m)
            gx = (probs * wrap(a) - wrap(b)) * s
            return _t_from_rows(gx, x.shape), None, None, None, None
        s = _row_scale(g, ctx.reduction, tg, m)
        if tg.c is None and not eps:  # every row has weight 1: a_i = 1
            gx = carray.subtract(p, b)
        else:
            gx = carray.subtract(carray.multiply(p, carray.sum(b, axis=1, keepdims=True)), b)
        carray.multiply(gx, s, out=gx)
        return wrap(_from_rows(gx, ctx.saved_tensors[0].shape)), None, None, None, None


class SoftmaxCrossEntropy(_Fn):
    """cross_entropy's common case (no class weights, no label smoothing) as one carray.nn
    primitive each way: one kernel launch for the loss and one for its gradient on the device,
    where CrossEntropy's composition takes about twenty (and reads the targets' range to the
    host); dx_ic = s_i (softmax(x)_ic - [c == t_i]) for counted rows, 0 for ignored ones."""

    @staticmethod
    def forward(ctx, x, target, ignore_index, reduction, target_shape):
        t = target.reshape(-1)
        loss, probs, count = _cnn.softmax_cross_entropy(_as_rows(x.data, 1), t, ignore_index,
                                                        reduction)
        if ctx.needs_input_grad[0]:  # saved tensors: freed after backward
            ctx.save_for_backward(x, wrap(probs), wrap(t),
                                  wrap(count) if reduction == "mean" else None)
            ctx.ignore, ctx.reduction = ignore_index, reduction
        return wrap(loss.reshape(target_shape) if reduction == "none" else loss)

    @staticmethod
    def backward(ctx, g):
        x, probs, t, count = ctx.saved_tensors
        probs, t = probs.data, t.data
        m, n_classes = probs.shape
        if _state.enabled:  # create_graph: the same gradient from differentiable ops
            t2 = carray.expand_dims(t, 1)
            counted = carray.not_equal(t2, ctx.ignore).astype(probs.dtype)
            onehot = carray.multiply(carray.equal(t2, carray.arange(n_classes, device=t.device))
                                     .astype(probs.dtype), counted)
            s = g.reshape((m, 1)) if ctx.reduction == "none" else g
            if count is not None:  # no counted rows: every row's gradient is 0, not NaN
                s = s / wrap(carray.maximum(count.data, 1))
            gx = (_softmax(_t_as_rows(x), 1) * wrap(counted) - wrap(onehot)) * s
            return _t_from_rows(gx, x.shape), None, None, None, None
        gout = g.data.reshape((m,)) if ctx.reduction == "none" else g.data
        if gout.dtype != probs.dtype:
            gout = gout.astype(probs.dtype)
        gx = _cnn.softmax_cross_entropy_grad(probs, t, gout,
                                             None if count is None else count.data, ctx.ignore)
        return wrap(_from_rows(gx, x.shape)), None, None, None, None


class NLLLoss(_Fn):
    """-w_{t_i} x[i, t_i] per row (x holds log-probabilities);  dx = -s_i B_ic."""

    @staticmethod
    def forward(ctx, x, tg, reduction, target_shape):
        rows = _as_rows(x.data, 1)
        per_row = carray.negative(_pick(rows, tg.safe, tg))
        c = tg.row_weights(rows.dtype)
        if c is not None:
            per_row = carray.multiply(per_row, c)
        if ctx.needs_input_grad[0]:
            ctx.tg, ctx.reduction = tg, reduction
            ctx.shape, ctx.dtype = x.data.shape, x.data.dtype
            ctx.m, ctx.n = rows.shape
        return _finish_loss(per_row, tg, reduction, target_shape)

    @staticmethod
    def backward(ctx, g):
        b = _targets_matrix(ctx.tg, ctx.n, 0.0, ctx.dtype)
        if _state.enabled:
            s = _t_row_scale(g, ctx.reduction, ctx.tg, ctx.m)
            return _t_from_rows(-(wrap(b) * s), ctx.shape), None, None, None
        s = _row_scale(g, ctx.reduction, ctx.tg, ctx.m)
        carray.multiply(b, -s if isinstance(s, float) else carray.negative(s), out=b)
        return wrap(_from_rows(b, ctx.shape)), None, None, None


def _check_class_input(op, input, target, weight):
    """The number of classes; ValueError/RuntimeError as PyTorch for targets and weights whose
    shape or dtype do not fit an input (N, C, d1, ...) or (C,)."""
    xs, ts = input.shape, target.shape
    if len(xs) == 0:
        raise ValueError(f"Expected 1 or more dimensions (got {len(xs)})")
    if target.dtype != carray.int64:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{scalar_type_name(target.dtype)}")
    if len(xs) == 1:
        if len(ts) != 0:
            raise RuntimeError(f"0D target tensor expected for 1D input, got target of size "
                               f"{list(ts)}")
    elif len(xs) == 2 and len(ts) != 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif ts[:1] != xs[:1]:
        raise ValueError(f"Expected input batch_size ({xs[0]}) to match target batch_size "
                         f"({ts[0] if ts else 0}).")
    elif ts != xs[:1] + xs[2:]:
        raise RuntimeError(f"Expected target size {list(xs[:1] + xs[2:])}, got {list(ts)}")
    n_classes = xs[0] if len(xs) == 1 else xs[1]
    if weight is not None and (weight.shape != (n_classes,)):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes "
                           f"or no classes but got weight tensor of shape: {list(weight.shape)}")
    _check_float(op, input)
    _check_weight_dtype(input, weight)
    return n_classes


def _check_weight_dtype(input, weight):
    """RuntimeError, as PyTorch, for class weights of another dtype than input's."""
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input.dtype)} but found "
                           f"{scalar_type_name(weight.dtype)}")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood of log-probabilities input (N, C, d1, ...) or (C,) at int64 class
    targets (N, d1, ...) or (): loss_i = -weight[t_i] input[i, t_i], 0 where t_i == ignore_index;
    'mean' divides the sum by the sum of the weights of the counted targets (NaN when none).
    Raises IndexError for a target outside [0, C), ValueError for a batch size mismatch or an
    unknown reduction, RuntimeError for other shapes or dtypes that do not fit."""
    reduction = _reduction_arg(reduction, size_average, reduce)
    n_classes = _check_class_input("nll_loss", input, target, weight)
    tg = _Targets(target, n_classes, weight, ignore_index)
    return NLLLoss.apply(input, tg, reduction, target.shape)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross entropy between logits input (N, C, d1, ...) or (C,) and targets: int64 class
    indices (N, d1, ...) (with weight, ignore_index and label_smoothing as nll_loss of
    log_softmax, mixed with eps/C of the uniform distribution), or class probabilities of the
    input's shape (float). Computed from log_softmax (stable for logits of any size).
    Raises as nll_loss, and RuntimeError for label_smoothing outside [0, 1]."""
    reduction = _reduction_arg(reduction, size_average, reduce)
    eps = float(label_smoothing)
    if not 0.0 <= eps <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {eps}")
    if target.dtype.kind == "f":
        return _cross_entropy_probs(input, target, weight, reduction, eps)
    n_classes = _check_class_input("cross_entropy", input, target, weight)
    if weight is None and not eps and n_classes:
        return SoftmaxCrossEntropy.apply(input, target.data, int(ignore_index), reduction,
                                         target.shape)
    tg = _Targets(target, n_classes, weight, ignore_index)
    return CrossEntropy.apply(input, tg, reduction, eps, target.shape)


def _cross_entropy_probs(input, target, weight, reduction, eps):
    """-sum_c w_c q_ic log_softmax(x)_ic per position, q = (1 - eps) target + eps / C; 'mean'
    divides by the number of positions (composed of differentiable ops)."""
    if target.shape != input.shape:
        raise RuntimeError(f"Expected target size {list(input.shape)}, got {list(target.shape)}"
                           if input.ndim == target.ndim else
                           "0D or 1D target tensor expected, multi-target not supported")
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    dim = 0 if input.ndim == 1 else 1
    n_classes = input.shape[dim]
    if weight is not None and weight.shape != (n_classes,):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes "
                           f"or no classes but got weight tensor of shape: {list(weight.shape)}")
    q = target * (1 - eps) + eps / n_classes if eps else target
    prod = _log_softmax(input, dim) * q
    if weight is not None:
        prod = prod * weight.reshape((n_classes,) + (1,) * (input.ndim - dim - 1))
    if reduction == "none":
        return -prod.sum(dim)
    total = -prod.sum()
    if reduction == "sum":
        return total
    positions = input.numel() // n_classes if n_classes else 0
    return total / positions if positions else total * float("nan")


# ---------------------------------------------------------------------------------------------
# other losses
# ---------------------------------------------------------------------------------------------

def _check_same_size(op, input, target):
    if input.shape != target.shape:
        warnings.warn(f"Using a target size ({_size(target.shape)}) that is different to the "
                      f"input size ({_size(input.shape)}). This will likely lead to incorrect "
                      f"results due to broadcasting. Please ensure they have the same size.",
                      stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """(input - target)^2, reduced (broadcasting, with a warning, when the shapes differ).
    ValueError for an unknown reduction, NotImplementedError for integer inputs."""
    reduction = _reduction_arg(reduction, size_average, reduce)
    _check_float("mse", input)
    _check_same_size("mse_loss", input, target)
    d = input - target
    return _reduce(d * d, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """|input - target|, reduced (see mse_loss); the gradient at 0 is 0."""
    reduction = _reduction_arg(reduction, size_average, reduce)
    _check_float("l1", input)
    _check_same_size("l1_loss", input, target)
    return _reduce((input - target).abs(), reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-weight (t log(x) + (1 - t) log(1 - x)) with each log clamped to >= -100 (as PyTorch).
    ValueError when target's size differs from input's, RuntimeError for input outside
    [0, 1]."""
    reduction = _reduction_arg(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({_size(target.shape)}) that is different to the "
                         f"input size ({_size(input.shape)}) is deprecated. Please ensure they "
                         f"have the same size.")
    _check_float("binary_cross_entropy", input)
    d = input.data
    if d.size and (float(carray.min(d)) < 0 or float(carray.max(d)) > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = -(target * input.log().clamp(min=-100) + (1 - target) * (1 - input).log().clamp(
        min=-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """binary_cross_entropy(sigmoid(x), t) computed stably from the logits x:
        (1 - t) x + (1 + (pos_weight - 1) t) softplus(-x), times weight,
    exact for logits of any size (the gradient is sigmoid(x) - t without pos_weight).
    ValueError when target's size differs from input's."""
    reduction = _reduction_arg(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({_size(target.shape)}) must be the same as input size "
                         f"({_size(input.shape)})")
    _check_float("binary_cross_entropy_with_logits", input)
    sp = Softplus.apply(-input, 1.0, math.inf)
    if pos_weight is not None:
        sp = sp * ((pos_weight - 1) * target + 1)
    loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# ---------------------------------------------------------------------------------------------
# dropout and batch normalisation
# ---------------------------------------------------------------------------------------------

def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the others by 1/(1-p) (a fresh mask from
    autograd's global generator, autograd.manual_seed); input itself when not training or
    p == 0. ValueError for p outside [0, 1], RuntimeError for a non-float input."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    d = input.data
    if d.dtype.kind != "f":
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{scalar_type_name(d.dtype)}")
    u = factories._rng(None).random(d.shape, dtype=d.dtype, device=d.device)
    scale = 1.0 / (1.0 - p) if p < 1 else 0.0
    mask = wrap(carray.multiply(carray.less(u, 1.0 - p).astype(d.dtype), scale))
    return input.mul_(mask) if inplace else Mul.apply(input, mask)


class BatchNormTrain(_Fn):
    """y = xhat w + b, xhat = (x - mean) / sqrt(var + eps), mean and (biased) var per channel
    (dim 1) over every other dim (M values each);
    dx = w / sqrt(var + eps) (g - mean(g) - xhat mean(g xhat)), dw = sum(g xhat), db = sum(g)."""

    @staticmethod
    def forward(ctx, x, w, b, eps, stats):
        d = x.data
        axes = (0,) + tuple(range(2, d.ndim))
        mean = carray.mean(d, axis=axes, keepdims=True)
        xc = carray.subtract(d, mean)
        var = carray.mean(carray.multiply(xc, xc), axis=axes, keepdims=True)
        invstd = carray.reciprocal(carray.sqrt(carray.add(var, eps)))
        xhat = carray.multiply(xc, invstd)
        cshape = (1, d.shape[1]) + (1,) * (d.ndim - 2)
        y = xhat
        if w is not None:
            y = carray.multiply(xhat, w.data.reshape(cshape))
        if b is not None:
            y = carray.add(y, b.data.reshape(cshape), out=y if y is not xhat else None)
        stats.extend((mean, var))
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(x, w)
            ctx.xhat, ctx.invstd, ctx.axes, ctx.cshape, ctx.eps = xhat, invstd, axes, cshape, eps
        return wrap(y if y is not xhat else xhat.copy())

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        axes, cshape = ctx.axes, ctx.cshape
        if _state.enabled:
            return _batch_norm_grads_composed(ctx, x, w, g)
        gd, xhat = g.data, ctx.xhat
        sum_g = carray.sum(gd, axis=axes, keepdims=True)
        sum_gx = carray.sum(carray.multiply(gd, xhat), axis=axes, keepdims=True)
        gx = gw = gb = None
        if need[0]:
            m = gd.size // gd.shape[1] if gd.size else 1
            scale = ctx.invstd if w is None else carray.multiply(ctx.invstd, w.data.reshape(cshape))
            gx = carray.subtract(gd, carray.multiply(sum_g, 1.0 / m))
            carray.subtract(gx, carray.multiply(xhat, carray.multiply(sum_gx, 1.0 / m)), out=gx)
            carray.multiply(gx, scale, out=gx)
            gx = wrap(gx)
        if need[1]:
            gw = wrap(sum_gx.reshape(-1))
        if need[2]:
            gb = wrap(sum_g.reshape(-1))
        return gx, gw, gb, None, None


def _batch_norm_grads_composed(ctx, x, w, g):
    """BatchNormTrain's gradients from differentiable ops (backward under create_graph)."""
    need = ctx.needs_input_grad
    axes, cshape = ctx.axes, ctx.cshape
    mean = x.mean(axes, keepdim=True)
    xc = x - mean
    invstd = ((xc * xc).mean(axes, keepdim=True) + ctx.eps).rsqrt()
    xhat = xc * invstd
    gx = gw = gb = None
    if need[0]:
        gxhat = g if w is None else g * w.reshape(cshape)
        gx = (gxhat - gxhat.mean(axes, keepdim=True)
              - xhat * (gxhat * xhat).mean(axes, keepdim=True)) * invstd
    if need[1]:
        gw = (g * xhat).sum(axes)
    if need[2]:
        gb = g.sum(axes)
    return gx, gw, gb, None, None


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    """Normalise each channel (dim 1) of input (N, C, ...): (x - mean) / sqrt(var + eps) * weight
    + bias. Training uses the batch's mean and biased variance and, when running stats are
    given, updates them in place: r = (1 - momentum) r + momentum s, with the unbiased variance
    for running_var; evaluation uses the running stats. Raises ValueError for one value per
    channel when training, RuntimeError for missing running stats in evaluation or sizes that
    do not match C or dtypes that differ from input's, TypeError for momentum=None (as
    PyTorch's functional form)."""
    if input.ndim < 2:
        raise ValueError(f"expected 2D or more input (got {input.ndim}D input)")
    n_channels = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != n_channels:
            raise RuntimeError(f"{name} should contain {n_channels} elements not {t.numel()}")
        if t is not None and t.dtype != input.dtype:
            raise RuntimeError(f"mixed dtype: all inputs must share same datatype, but {name} "
                               f"is {scalar_type_name(t.dtype)} and input "
                               f"{scalar_type_name(input.dtype)}")
    if not isinstance(momentum, numbers.Real):
        raise TypeError(f"batch_norm(): argument 'momentum' must be float, not "
                        f"{type(momentum).__name__}")
    _check_float("batch_norm", input)
    cshape = (1, n_channels) + (1,) * (input.ndim - 2)
    if training:
        m = input.numel() // n_channels if n_channels else 0
        if m == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {_size(input.shape)}")
        stats = []
        out = BatchNormTrain.apply(input, weight, bias, eps, stats)
        if running_mean is not None and running_var is not None and stats:
            mean, var = stats
            _update_running(running_mean, mean, momentum)
            _update_running(running_var, carray.multiply(var, m / (m - 1)), momentum)
        return out
    if running_mean is None or running_var is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    scale = (running_var.detach() + eps).rsqrt()
    if weight is not None:
        scale = scale * weight
    shift = -running_mean.detach() * scale
    if bias is not None:
        shift = shift + bias
    return input * scale.reshape(cshape) + shift.reshape(cshape)


def _update_running(r, batch, momentum):
    """r = (1 - momentum) r + momentum batch, in place (no graph) and counted as a change."""
    d = r.data
    carray.multiply(d, 1.0 - momentum, out=d)
    carray.add(d, carray.multiply(batch.reshape(d.shape).astype(d.dtype), momentum), out=d)
    r._vc[0] += 1


# ---------------------------------------------------------------------------------------------
# padding, one_hot, embedding
# ---------------------------------------------------------------------------------------------

def pad(input, pad, mode="constant", value=None):
    """Pad the last len(pad) // 2 dims (pad is (left, right, top, bottom, ...), last dim first).
    mode 'constant' fills with value (negative pads crop); 'reflect' mirrors without repeating
    the edge, 'replicate' repeats the edge, 'circular' wraps around. RuntimeError for an odd or
    too long pad, a reflect pad >= the dim's size or a circular one > it; NotImplementedError for
    an unknown mode or a non-constant pad of more dims than PyTorch supports."""
    try:
        pad = tuple(operator.index(p) for p in pad)
    except TypeError:
        raise TypeError(f"pad(): argument 'pad' must be a tuple of ints, got {pad!r}") from None
    if mode == "constant":
        return Pad.apply(input, pad, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k, nd = len(pad) // 2, input.ndim
    if len(pad) % 2 or k not in (1, 2, 3) or nd not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {nd}D input "
                                  f"tensor.")
    out = input
    for i in range(k):
        dim = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        out = Index.apply(out, (slice(None),) * dim + (_pad_index(mode, out.shape[dim], lo, hi,
                                                                  dim, input.shape,
                                                                  input.device),))
    return out


def _pad_index(mode, n, lo, hi, dim, shape, device="cpu"):
    """Source positions along a dim of size n padded by (lo, hi) in mode, as an int64 array."""
    if mode == "reflect" and (lo >= n or hi >= n):
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                           f"input dimension, but got: padding ({lo}, {hi}) at dimension {dim} "
                           f"of input {list(shape)}")
    if mode == "circular" and (lo > n or hi > n):
        raise RuntimeError("Padding value causes wrapping around more than once.")
    if n == 0:
        raise RuntimeError(f"{mode} padding of an empty dimension {dim} of input "
                           f"{list(shape)}")
    j = carray.arange(-lo, n + hi, device=device)
    if mode == "replicate":
        return carray.clip(j, 0, n - 1)
    if mode == "circular":
        return carray.remainder(j, n)
    j = carray.abs(j)  # reflect: -j before the start, 2 (n - 1) - j past the end
    return carray.where(carray.greater(j, n - 1), carray.subtract(2 * (n - 1), j), j)


def one_hot(tensor, num_classes=-1):
    """int64 tensor (*,) -> int64 (*, num_classes) with a 1 at each value (num_classes=-1: the
    largest value + 1). RuntimeError for a non-int64 tensor, negative values or values >=
    num_classes."""
    d = tensor.data
    if d.dtype != carray.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if d.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(carray.max(d)) + 1
    if d.size:
        if int(carray.min(d)) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(carray.max(d)) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    hot = carray.equal(carray.expand_dims(d, -1), carray.arange(num_classes, device=d.device))
    return wrap(hot.astype(carray.int64))


class Embedding(_Fn):
    """y = weight[idx] (rows gathered);  dweight = zeros with g's rows added at idx (rows at
    padding_idx get nothing; with scale_grad_by_freq each is divided by its index's count)."""

    @staticmethod
    def forward(ctx, weight, idx, padding_idx, by_freq):
        if ctx.needs_input_grad[0]:
            ctx.idx, ctx.padding_idx, ctx.by_freq = idx, padding_idx, by_freq
            ctx.shape = weight.data.shape
        return wrap(weight.data[idx])

    @staticmethod
    def backward(ctx, g):
        v, dim = ctx.shape
        flat = ctx.idx.reshape(-1)
        scale = None
        if ctx.by_freq or ctx.padding_idx is not None:
            dev = g.data.device
            scale = carray.ones((flat.size,), dtype=g.data.dtype, device=dev)
            if ctx.by_freq:
                counts = carray.zeros((v,), dtype=g.data.dtype, device=dev)
                carray.add_at(counts, flat, carray.ones((flat.size,), dtype=g.data.dtype,
                                                        device=dev))
                scale = carray.reciprocal(counts[flat])
            if ctx.padding_idx is not None:
                scale = carray.where(carray.equal(flat, ctx.padding_idx), 0.0, scale)
            scale = carray.expand_dims(scale.astype(g.data.dtype), 1)
        if _state.enabled:
            rows = g.reshape((-1, dim))
            if scale is not None:
                rows = rows * wrap(scale)
            return IndexAdd.apply(ctx.shape, (flat,), rows), None, None, None
        rows = g.data.reshape((-1, dim))
        if scale is not None:
            rows = carray.multiply(rows, scale)
        out = carray.zeros(ctx.shape, dtype=g.data.dtype, device=g.data.device)
        carray.add_at(out, flat, rows)
        return wrap(out), None, None, None


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of weight (V, D) at the int64/int32 indices input (*,): a (*, D) tensor. Rows at
    padding_idx get no gradient; max_norm renormalises the looked-up rows of weight in place to
    at most that norm. RuntimeError for float indices, a weight that is not 2-d or sparse=True,
    IndexError for an index outside [0, V), AssertionError for padding_idx outside [-V, V)."""
    idx = input.data
    if idx.dtype not in (carray.int64, carray.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"torch.{scalar_type_name(idx.dtype)}Tensor instead")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if sparse:
        raise RuntimeError("embedding(): sparse gradients are not supported; use sparse=False")
    v = weight.shape[0]
    if padding_idx is not None:
        if not -v <= padding_idx < v:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= v
    if idx.size and (int(carray.min(idx)) < 0 or int(carray.max(idx)) >= v):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_rows(weight, idx.reshape(-1), max_norm, norm_type)
    return Embedding.apply(weight, idx, padding_idx, bool(scale_grad_by_freq))


def _renorm_rows(weight, rows, max_norm, norm_type):
    """Scale the rows of weight.data listed in rows to norm <= max_norm, in place (no graph)."""
    w = weight.data
    picked = w[rows]
    norms = carray.power(carray.sum(carray.power(carray.abs(picked), norm_type), axis=1,
                                    keepdims=True), 1.0 / norm_type)
    scale = carray.where(carray.greater(norms, max_norm),
                         carray.divide(max_norm, carray.add(norms, 1e-7)), 1.0)
    w[rows] = carray.multiply(picked, scale.astype(w.dtype))
    weight._vc[0] += 1
