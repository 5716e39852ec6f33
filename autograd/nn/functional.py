"""autograd.nn.functional: torch.nn.functional's ops on autograd Tensors.

Same names, arguments, results and error types as PyTorch. This file is the argument-handling
layer, as torch.nn.functional is: it checks shapes, dtypes and options, and each differentiable
op is either a composition of autograd's ops or one `.apply` of a Function of autograd/ops/nn.py,
where its forward and backward sit side by side.

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
from autograd import factories
from autograd._defaults import scalar_type_name
from autograd.ops import Cat, Index, Mul, Pad, Relu, Where
from autograd.ops import log_softmax as _log_softmax
from autograd.ops import sigmoid as _sigmoid
from autograd.ops import softmax as _softmax
from autograd.ops import tanh as _tanh
from autograd.ops._util import wrap
from autograd.ops.inplace import inplace as _inplace
from autograd.ops.nn import (
    Addmm,
    AvgPool2D,
    BatchNormTrain,
    Convolution,
    CrossEntropy,
    Embedding,
    Erf,
    LeakyRelu,
    MaxPool2DWithIndices,
    NllLoss,
    SoftmaxCrossEntropy,
    Softplus,
    Targets,
    leaky_relu_data,
)

__all__ = [
    "avg_pool2d", "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "conv2d", "cross_entropy", "dropout", "elu", "embedding", "gelu", "hardtanh", "l1_loss",
    "leaky_relu", "linear", "log_softmax", "max_pool2d", "mse_loss", "nll_loss", "one_hot",
    "pad", "relu", "relu6", "sigmoid", "silu", "softmax", "softmin", "softplus", "tanh",
]

# convolutions, pooling, resampling (h6)
from autograd.ops.conv import (  # noqa: E402
    conv1d,
    conv2d_groups,
    conv_transpose1d,
    conv_transpose2d,
    fold,
    unfold,
)
from autograd.ops.pooling import (  # noqa: E402
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    max_pool1d,
)
from autograd.ops.resample import interpolate, pixel_shuffle, pixel_unshuffle  # noqa: E402

__all__ += [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "avg_pool1d", "conv1d", "conv_transpose1d", "conv_transpose2d", "fold", "interpolate",
    "max_pool1d", "pixel_shuffle", "pixel_unshuffle", "unfold",
]


def _size(shape):
    return "torch.Size([" + ", ".join(str(n) for n in shape) + "])"


def _check_float(op, t):
    if t.array.dtype.kind != "f":
        name = scalar_type_name(t.array.dtype)
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


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# ---------------------------------------------------------------------------------------------
# linear
# ---------------------------------------------------------------------------------------------


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
            return Addmm.apply(input, weight, None) + bias
    return Addmm.apply(input, weight, bias)


# ---------------------------------------------------------------------------------------------
# convolution
# ---------------------------------------------------------------------------------------------


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d cross-correlation (torch.nn.functional.conv2d): input (N, C, H, W) or (C, H, W),
    weight (O, C / groups, kH, kW), bias (O,):

        out[n, o, i, j] = bias[o] + sum_{c, u, v} weight[o, c, u, v]
                          * xpad[n, g(o) C/groups + c, i sH + u dH, j sW + v dW]

    stride, padding and dilation are ints or pairs; padding may be 'valid' or 'same' (stride 1).
    Groups run as one unfold and one batched matmul (ops/conv.py). Raises RuntimeError for
    sizes, channels, dtypes, strides or padding (strings included) that do not fit, as PyTorch.
    Backward of any order works: the gradients are themselves convolutions."""
    if not isinstance(groups, numbers.Integral) or isinstance(groups, bool):
        raise TypeError(f"conv2d(): argument 'groups' must be int, not {type(groups).__name__}")
    if groups == 1:
        return Convolution.apply(input, weight, bias, stride, padding, dilation)
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")
    c_in = input.shape[-3] if input.ndim in (3, 4) else -1
    o = weight.shape[0] if weight.ndim == 4 else -1
    if o % groups or weight.ndim != 4 or c_in != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{list(input.shape)} to have "
                           f"{weight.shape[1] * groups if weight.ndim == 4 else '?'} channels, "
                           f"but got {c_in} channels instead")
    return conv2d_groups(input, weight, bias, stride, padding, dilation, groups)


# ---------------------------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------------------------


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-d max pooling over (N, C, H, W) or (C, H, W) (torch.nn.functional.max_pool2d):
    out[n, c, i, j] = max_{u, v} xpad[n, c, i sH + u dH, j sW + v dW], xpad padded by -inf.
    stride defaults to kernel_size. With return_indices, also the int64 argmax positions, flat in
    each (H x W) plane. RuntimeError for sizes that do not fit (carray.nn's checks)."""
    return MaxPool2DWithIndices.apply(input, kernel_size, stride, padding, dilation, ceil_mode,
                           bool(return_indices))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-d average pooling (torch.nn.functional.avg_pool2d): the sum over each window divided by
    kH kW (count_include_pad), by the number of input elements in it (count_include_pad=False),
    or by divisor_override. RuntimeError for sizes that do not fit or a zero divisor."""
    return AvgPool2D.apply(input, kernel_size, stride, padding, bool(ceil_mode),
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


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0 else negative_slope * x (torch.nn.functional.leaky_relu)."""
    if not inplace:
        return LeakyRelu.apply(input, negative_slope)

    def raw():
        input.array[...] = leaky_relu_data(input.array, negative_slope)
    return _inplace(input, lambda src: LeakyRelu.apply(src, negative_slope), raw, (), True)


def gelu(input, approximate="none"):
    """x Phi(x) (Phi the standard normal CDF, from erf) or, with approximate='tanh',
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). RuntimeError for another approximate."""
    if approximate == "tanh":
        inner = (input + input * input * input * 0.044715) * math.sqrt(2 / math.pi)
        return input * 0.5 * (_tanh(inner) + 1)
    if approximate != "none":
        raise RuntimeError("approximate argument must be either none or tanh.")
    return input * 0.5 * (Erf.apply(input * (1 / math.sqrt(2))) + 1)


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
    tg = Targets(target, n_classes, weight, ignore_index)
    return NllLoss.apply(input, tg, reduction, target.shape)


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
        return SoftmaxCrossEntropy.apply(input, target.array, int(ignore_index), reduction,
                                         target.shape)
    tg = Targets(target, n_classes, weight, ignore_index)
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
    d = input.array
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
    d = input.array
    if d.dtype.kind != "f":
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{scalar_type_name(d.dtype)}")
    u = factories._rng(None).random(d.shape, dtype=d.dtype, device=d.device)
    scale = 1.0 / (1.0 - p) if p < 1 else 0.0
    mask = wrap(carray.multiply(carray.less(u, 1.0 - p).astype(d.dtype), scale))
    return input.mul_(mask) if inplace else Mul.apply(input, mask)


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
    d = r.array
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
    d = tensor.array
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


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of weight (V, D) at the int64/int32 indices input (*,): a (*, D) tensor. Rows at
    padding_idx get no gradient; max_norm renormalises the looked-up rows of weight in place to
    at most that norm. RuntimeError for float indices, a weight that is not 2-d or sparse=True,
    IndexError for an index outside [0, V), AssertionError for padding_idx outside [-V, V)."""
    idx = input.array
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
    """Scale the rows of weight.array listed in rows to norm <= max_norm, in place (no graph)."""
    w = weight.array
    picked = w[rows]
    norms = carray.power(carray.sum(carray.power(carray.abs(picked), norm_type), axis=1,
                                    keepdims=True), 1.0 / norm_type)
    scale = carray.where(carray.greater(norms, max_norm),
                         carray.divide(max_norm, carray.add(norms, 1e-7)), 1.0)
    w[rows] = carray.multiply(picked, scale.astype(w.dtype))
    weight._vc[0] += 1


# ---------------------------------------------------------------------------------------------
# attention (area h4: scaled_dot_product_attention, multi_head_attention_forward)
# ---------------------------------------------------------------------------------------------

from autograd.grad_mode import is_grad_enabled as autograd_grad_enabled  # noqa: E402
from autograd.ops.attention import ScaledDotProductAttention  # noqa: E402

__all__ += ["multi_head_attention_forward", "scaled_dot_product_attention"]


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(query key^T * scale + mask) value, with dropout on the attention probabilities
    (torch.nn.functional.scaled_dot_product_attention): query (..., L, E), key (..., S, E),
    value (..., S, Ev) -> (..., L, Ev), the leading dims broadcasting; scale defaults to
    1/sqrt(E). attn_mask broadcasts to (..., L, S): bool (True = takes part) or float (added).
    is_causal lets query i see keys 0..i only (with attn_mask too, both apply). enable_gqa
    shares each key/value head among query.size(-3) / key.size(-3) query heads. A query whose
    keys are all masked out gets 0, as PyTorch on the CPU. One node: its backward saves q, k, v
    and the probabilities. Raises RuntimeError for inputs below 2-d, mixed dtypes, mismatched
    sizes, a mask that is neither bool nor float or that does not broadcast, dropout_p outside
    [0, 1]."""
    tensors = (query, key, value)
    if any(t.ndim < 2 for t in tensors):
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: "
                           f"{value.ndim} instead.")
    if not query.dtype == key.dtype == value.dtype:
        names = [scalar_type_name(t.dtype).lower() for t in tensors]
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {names[0]} key.dtype: {names[1]} and value.dtype: "
                           f"{names[2]} instead.")
    _check_float("scaled_dot_product_attention", query)
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention(): expected query and key to have the "
                           f"same embedding size (last dim), but got query.size(-1)="
                           f"{query.shape[-1]} and key.size(-1)={key.shape[-1]}")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention(): expected key and value to have the "
                           f"same sequence length (dim -2), but got key.size(-2)="
                           f"{key.shape[-2]} and value.size(-2)={value.shape[-2]}")
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if attn_mask is not None:
        if attn_mask.dtype != carray.bool_ and attn_mask.dtype.kind != "f":
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                               f"dtype, but got attn_mask.dtype: "
                               f"{scalar_type_name(attn_mask.dtype).lower()} and  query.dtype: "
                               f"{scalar_type_name(query.dtype).lower()} instead.")
        scores = carray.broadcast_shapes(query.shape[:-2], key.shape[:-2]) + \
            (query.shape[-2], key.shape[-2])
        try:
            if carray.broadcast_shapes(scores, attn_mask.shape) != scores:
                raise ValueError
        except ValueError:
            _mask_size_error(scores, attn_mask.shape)
    if is_causal and attn_mask is not None and attn_mask.requires_grad and \
            autograd_grad_enabled():
        # PyTorch's math kernel (the one that differentiates a mask) refuses both
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        key, value = _repeat_heads(key, query.shape[-3]), _repeat_heads(value, query.shape[-3])
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else 1.0
    return ScaledDotProductAttention.apply(query, key, value, attn_mask, bool(is_causal),
                                           float(scale), float(dropout_p))


def _mask_size_error(target, shape):
    """PyTorch's RuntimeError for a mask of `shape` that does not broadcast to `target`."""
    n = len(target)
    for k in range(1, n + 1):
        x = target[-k]
        y = shape[-k] if k <= len(shape) else 1
        if x != y and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {n - k}") from None
    raise RuntimeError(f"attn_mask of shape {tuple(shape)} does not broadcast to the attention "
                       f"scores' shape {tuple(target)}") from None


def _repeat_heads(t, n_heads):
    """Key/value heads (..., Hkv, S, E) repeated to n_heads (each head rep times in a row, as
    repeat_interleave): RuntimeError when n_heads is not a multiple of Hkv."""
    hkv = t.shape[-3]
    if hkv == 0 or n_heads % hkv:
        raise RuntimeError(f"scaled_dot_product_attention(): with enable_gqa=True the number of "
                           f"query heads ({n_heads}) must be a multiple of the number of "
                           f"key/value heads ({hkv})")
    rep = n_heads // hkv
    lead = t.shape[:-3]
    return t.unsqueeze(-3).expand(*lead, hkv, rep, *t.shape[-2:]).reshape(
        *lead, n_heads, *t.shape[-2:])


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = masked out) as a float mask of target_type with -inf where True; a
    float mask as it is. AssertionError for other dtypes; a warning when its dtype differs
    from the other mask's (as PyTorch's torch.nn.functional._canonical_mask)."""
    if mask is None:
        return None
    is_float = mask.dtype.kind == "f"
    if mask.dtype != carray.bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      f"same type for both instead.", stacklevel=3)
    if not is_float:
        d = mask.array
        mask = wrap(carray.where(d, float("-inf"), 0.0).astype(target_type))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the inputs are batched (3-d query); AssertionError for dims that do not fit."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.ndim}-D tensor "
                                 f"instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.ndim}-D tensor instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be "
                                 f"2-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.ndim}-D tensor "
                                 f"instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.ndim}-D tensor "
                                     f"instead")
            want = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.ndim == 3 and attn_mask.shape != want:
                raise AssertionError(f"Expected `attn_mask` shape to be {want} but got "
                                     f"{_size(attn_mask.shape)}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.ndim}-D query tensor")


def _in_projection(query, key, value, w_q, w_k, w_v, b_q, b_k, b_v):
    """The query, key and value projections (linear with each weight and bias)."""
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention over sequence-first inputs, as torch.nn.functional's: query (L, N, E)
    or (L, E), key/value (S, N, E*) or (S, E*). Returns (output (L, N, E), weights) where the
    weights (N, L, S), averaged over heads (or (N, num_heads, L, S)), come only with
    need_weights (then computed by an explicit softmax, so a fully masked row is NaN, as in
    PyTorch); without it the heads run through scaled_dot_product_attention and weights is
    None. Masks: key_padding_mask (N, S) and attn_mask (L, S) or (N*num_heads, L, S), bool with
    True = masked out, or float (added). is_causal is a hint that attn_mask is causal (it must
    be given). AssertionError / RuntimeError for shapes that do not fit, as PyTorch."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       None if attn_mask is None else attn_mask.dtype,
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint alone: sdpa builds the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {_size(key.shape[:2])} do not "
                                 f"match value's {_size(value.shape[:2])}")
        for name, w in (("q_proj_weight", q_proj_weight), ("k_proj_weight", k_proj_weight),
                        ("v_proj_weight", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name} is None")
        b_q, b_k, b_v = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, b_q, b_k, b_v)
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {_size(key.shape)} does not match value shape "
                                 f"{_size(value.shape)}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if query is key and key is value:  # self-attention: one matmul for the three
            q, k, v = linear(query, in_proj_weight, in_proj_bias).chunk(3, dim=-1)
        else:
            w_q, w_k, w_v = in_proj_weight.chunk(3)
            b_q, b_k, b_v = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
            q, k, v = _in_projection(query, key, value, w_q, w_k, w_v, b_q, b_k, b_v)
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if attn_mask.shape != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {_size(attn_mask.shape)}, "
                                   f"but should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if attn_mask.shape != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {_size(attn_mask.shape)}, "
                                   f"but should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = Cat.apply(0, k, bias_k.expand(1, bsz, embed_dim))
        v = Cat.apply(0, v, bias_v.expand(1, bsz, embed_dim))
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _static_or_heads(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _static_or_heads(v, static_v, "static_v", bsz * num_heads, head_dim)
    if add_zero_attn:
        zeros = factories.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k, v = Cat.apply(1, k, zeros), Cat.apply(1, v, zeros)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(
            -1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(head_dim))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        scores = q_scaled.matmul(k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = _softmax(scores, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = weights.matmul(v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    return out, None


def _static_or_heads(t, static, name, n, head_dim):
    """t (S, N, E) split into heads (N*num_heads, S, head_dim), or the given static tensor
    (checked to be (N*num_heads, S, head_dim))."""
    if static is None:
        return t.reshape(t.shape[0], n, head_dim).transpose(0, 1)
    if static.shape[0] != n:
        raise AssertionError(f"expecting {name}.size(0) of {n}, but got {static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got "
                             f"{static.shape[2]}")
    return static
