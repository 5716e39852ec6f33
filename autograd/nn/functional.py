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
from autograd import function as _function
from autograd._defaults import is_floating, scalar_type_name
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
    Convolution,
    CrossEntropy,
    Embedding,
    Gelu,
    LeakyRelu,
    MaxPool2DWithIndices,
    NllLoss,
    SoftmaxCrossEntropy,
    Softplus,
    Targets,
    leaky_relu_data,
)
from autograd.ops.nn_composite import BatchNormEval, BatchNormTraining, ModePad  # onnx
from autograd.ops.normalization import NativeLayerNorm, RmsNorm  # h3: normalisation

__all__ = [
    "avg_pool2d", "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "conv2d", "cross_entropy", "dropout", "elu", "embedding", "gelu", "hardtanh", "l1_loss",
    "leaky_relu", "linear", "log_softmax", "max_pool2d", "mse_loss", "nll_loss", "one_hot",
    "pad", "relu", "relu6", "sigmoid", "silu", "softmax", "softmin", "softplus", "tanh",
    # h3: normalisation, activations, channel dropout, losses, distances, embedding_bag
    "celu", "cosine_embedding_loss", "cosine_similarity", "dropout1d", "dropout2d",
    "embedding_bag", "glu", "group_norm", "hardsigmoid", "hardswish", "huber_loss",
    "instance_norm", "kl_div", "layer_norm", "logsigmoid", "mish", "normalize",
    "pairwise_distance", "prelu", "rms_norm", "selu", "smooth_l1_loss", "softsign", "tanhshrink",
    "threshold",
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
    if not is_floating(t.array.dtype):
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
    # (inside an autocast region Addmm casts the operands to one dtype first)
    if _function._autocast is None and (input.dtype != weight.dtype or bias is not None
                                        and bias.dtype != input.dtype):
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
    return Gelu.apply(input)


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
    if is_floating(target.dtype):
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
    if not is_floating(d.dtype):
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
    if training:
        m = input.numel() // n_channels if n_channels else 0
        if m == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {_size(input.shape)}")
        return BatchNormTraining.apply(input, running_mean, running_var, weight, bias, momentum,
                                       eps)
    if running_mean is None or running_var is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    return BatchNormEval.apply(input, running_mean, running_var, weight, bias, eps)


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
    return ModePad.apply(input, pad, mode)


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
    IndexError("index out of range in self") for an index outside [0, V) (on the gpu at the
    next read from the device, e.g. loss.item(): the lookup checks there without waiting),
    AssertionError for padding_idx outside [-V, V)."""
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
    if max_norm is not None:
        if idx.size and (int(carray.min(idx)) < 0 or int(carray.max(idx)) >= v):
            raise IndexError("index out of range in self")
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
        if attn_mask.dtype != carray.bool_ and not is_floating(attn_mask.dtype):
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
    is_float = is_floating(mask.dtype)
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
# h3: normalisation, more activations, channel dropout, more losses, distances, embedding_bag
# ---------------------------------------------------------------------------------------------

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_MACHINE_EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23,
                "float64": 2.0 ** -52}  # torch.finfo(dtype).eps (carray has no finfo)


def _shape_tuple(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(n) for n in normalized_shape)


def _check_normalized(op, input, shape, weight, bias=None):
    """RuntimeError, as PyTorch, when input's trailing dims or weight/bias are not shape."""
    k = len(shape)
    if k == 0 or input.shape[input.ndim - k:] != shape or input.ndim < k:
        star = "*, " if op == "layer_norm" else "*"
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[{star}{', '.join(str(n) for n in shape)}], but got input of size"
                           f"{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.shape != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(shape)}")
        if t is not None and t.dtype != input.dtype:
            raise RuntimeError(f"expected scalar type {scalar_type_name(input.dtype)} but found "
                               f"{scalar_type_name(t.dtype)}")
    _check_float(op, input)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """(x - mean) / sqrt(var + eps) * weight + bias, mean and biased var over the trailing dims
    normalized_shape (torch.nn.functional.layer_norm). RuntimeError when input's trailing dims,
    weight or bias do not match normalized_shape."""
    shape = _shape_tuple(normalized_shape)
    _check_normalized("layer_norm", input, shape, weight, bias)
    return NativeLayerNorm.apply(input, len(shape), weight, bias, float(eps))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) * weight over the trailing dims normalized_shape; eps=None is
    the dtype's machine epsilon (torch.finfo(dtype).eps). Errors as layer_norm."""
    shape = _shape_tuple(normalized_shape)
    _check_normalized("rms_norm", input, shape, weight)
    if eps is None:
        eps = _MACHINE_EPS[str(input.dtype)]
    return RmsNorm.apply(input, len(shape), weight, float(eps))


def _check_spatial(input):
    size = 1
    for n in input.shape[2:]:
        size *= n
    if size == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{_size(input.shape)}")


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise input (N, C, *) over each group of C / num_groups channels and the other dims,
    then scale and shift per channel. RuntimeError when C is not divisible by num_groups or
    weight/bias do not have C elements; ValueError for one value per group."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[:2]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for t in (weight, bias):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected weight to be a vector of size equal to the number of "
                               f"channels in input, but got weight of shape {list(t.shape)} and "
                               f"input of shape {list(input.shape)}")
    spatial = 1
    for d in input.shape[2:]:
        spatial *= d
    if n * (c // num_groups) * spatial == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{[c // num_groups * n, num_groups] + list(input.shape[2:])}")
    _check_float("group_norm", input)
    per_group = c // num_groups * spatial
    out = NativeLayerNorm.apply(input.reshape((n, num_groups, per_group)), 1, None, None,
                                float(eps)).reshape(input.shape)
    cshape = (c,) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(cshape)
    if bias is not None:
        out = out + bias.reshape(cshape)
    return out


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """batch_norm of each (sample, channel) plane of input (N, C, *) on its own (the input seen
    as (1, N C, *)); running stats, when given, are updated with the mean over the batch of the
    per-sample statistics. ValueError for a single spatial element when use_input_stats."""
    if use_input_stats:
        _check_spatial(input)
    n, c = input.shape[:2]

    def repeat(t, detach):
        if t is None:
            return None
        t = t.detach() if detach else t
        return t.reshape((1, c)).expand((n, c)).reshape((n * c,))

    rm = repeat(running_mean, True)
    rv = repeat(running_var, True)
    if rm is not None:
        rm, rv = rm.clone(), rv.clone()
    x = input.reshape((1, n * c) + tuple(input.shape[2:]))
    out = batch_norm(x, rm, rv, repeat(weight, False), repeat(bias, False), use_input_stats,
                     momentum, eps)
    for r, rep in ((running_mean, rm), (running_var, rv)):
        if r is not None and use_input_stats:
            r.array[...] = carray.mean(rep.array.reshape((n, c)), axis=0)
            r._vc[0] += 1
    return out.reshape(input.shape)


def celu(input, alpha=1.0, inplace=False):
    """x where x > 0 else alpha (exp(x / alpha) - 1)."""
    neg = (input.clamp(max=0.0) / alpha).expm1() * alpha
    out = Where.apply(input.detach() > 0, input, neg)
    return input.copy_(out) if inplace else out


def selu(input, inplace=False):
    """scale * elu(x, alpha) with SELU's fixed alpha and scale."""
    out = elu(input, _SELU_ALPHA) * _SELU_SCALE
    return input.copy_(out) if inplace else out


def mish(input, inplace=False):
    """x tanh(softplus(x))."""
    out = input * _tanh(Softplus.apply(input, 1.0, 20.0))
    return input.copy_(out) if inplace else out


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6;  dx = g / 6 for -3 < x < 3, else 0."""
    inside = (input.detach() > -3) & (input.detach() < 3)
    out = Where.apply(inside, input / 6 + 0.5, (input.detach() >= 3).to(input.dtype))
    return input.copy_(out) if inplace else out


def hardswish(input, inplace=False):
    """x relu6(x + 3) / 6;  dx = g (2x + 3) / 6 for -3 < x < 3 (0 below, g above)."""
    x = input.detach()
    out = Where.apply(x <= -3, 0.0, Where.apply(x >= 3, input, input * (input + 3) / 6))
    return input.copy_(out) if inplace else out


def prelu(input, weight):
    """x where x > 0 else weight x, weight with one value or one per channel (dim 1).
    RuntimeError when weight's size is neither 1 nor the number of channels."""
    if weight.numel() != 1:
        c = input.shape[1] if input.ndim >= 2 else (input.shape[0] if input.ndim else 1)
        if weight.numel() != c:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = {c}.")
        if input.ndim >= 2:
            weight = weight.reshape((c,) + (1,) * (input.ndim - 2))
    else:
        weight = weight.reshape(())
    return Where.apply(input.detach() > 0, input, input * weight)


def glu(input, dim=-1):
    """a sigmoid(b), a and b the two halves of input along dim. RuntimeError for an odd size
    or a 0-d input."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim % input.ndim if -input.ndim <= dim < input.ndim else dim
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a = input.narrow(d, 0, n // 2)
    b = input.narrow(d, n // 2, n // 2)
    return a * _sigmoid(b)


def logsigmoid(input):
    """log(sigmoid(x)) = -softplus(-x), stable for any x."""
    return -Softplus.apply(-input, 1.0, math.inf)


def softsign(input):
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """x - tanh(x)."""
    return input - _tanh(input)


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold else value."""
    out = Where.apply(input.detach() > threshold, input, value)
    return input.copy_(out) if inplace else out


def _feature_dropout(input, p, training, inplace):
    """Zero whole channels (input[n, c] for every n, c) with probability p, scale the rest by
    1 / (1 - p)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    d = input.array
    if not is_floating(d.dtype):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{scalar_type_name(d.dtype)}")
    mshape = tuple(d.shape[:2]) + (1,) * (d.ndim - 2)
    u = factories._rng(None).random(mshape, dtype=d.dtype, device=d.device)
    scale = 1.0 / (1.0 - p) if p < 1 else 0.0
    mask = wrap(carray.multiply(carray.less(u, 1.0 - p).astype(d.dtype), scale))
    return input.mul_(mask) if inplace else Mul.apply(input, mask)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channel dropout for (N, C, L) or (C, L) inputs: each channel is zeroed with probability
    p. ValueError for p outside [0, 1], RuntimeError for another rank."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                           f"input. Note that dropout1d exists to provide channel-wise dropout "
                           f"on inputs with 1 spatial dimension, a channel dimension, and an "
                           f"optional batch dimension (i.e. 2D or 3D inputs).")
    if input.ndim == 2:
        out = _feature_dropout(input.unsqueeze(0), p, training, False).squeeze(0)
        return input.copy_(out) if inplace and out is not input else out
    return _feature_dropout(input, p, training, inplace)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Channel dropout for (N, C, H, W) inputs (dims 0 and 1 index the channels, as PyTorch's,
    which warns for other ranks). ValueError for p outside [0, 1]."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is "
                      f"deprecated and will result in an error in a future release. To retain "
                      f"the behavior and silence this warning, please use dropout instead. Note "
                      f"that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      f"spatial dimensions, a channel dimension, and an optional batch dimension "
                      f"(i.e. 3D or 4D inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape (C, "
                      "H, W). To maintain the 1D channel-wise dropout behavior, please switch to "
                      "using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 z^2 / beta where |z| < beta else |z| - 0.5 beta, z = input - target (l1 for
    beta = 0). RuntimeError for a negative beta, ValueError for an unknown reduction."""
    reduction = _reduction_arg(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_float("smooth_l1", input)
    _check_same_size("smooth_l1_loss", input, target)
    z = input - target
    if beta == 0:
        return _reduce(z.abs(), reduction)
    small = z.detach().abs() < beta
    return _reduce(Where.apply(small, z * z * (0.5 / beta), z.abs() - 0.5 * beta), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 z^2 where |z| < delta else delta (|z| - 0.5 delta), z = input - target, optionally
    times weight (input's size). RuntimeError for delta <= 0, ValueError for an unknown
    reduction or a weight of another size."""
    reduction = _reduction_arg(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _check_float("huber", input)
    _check_same_size("huber_loss", input, target)
    z = input - target
    small = z.detach().abs() < delta
    loss = Where.apply(small, z * z * 0.5, (z.abs() - 0.5 * delta) * delta)
    if weight is not None:
        if weight.shape != input.shape:
            raise ValueError("Weights and input must have the same size.")
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise KL divergence of log-probabilities input from target: target (log target -
    input) (0 where target is 0), or exp(target) (target - input) with log_target. 'batchmean'
    divides the sum by input.size(0); 'mean' (which warns, as PyTorch) by the element count."""
    if size_average is not None or reduce is not None:
        reduction = _reduction_arg(reduction, size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check_float("kl_div", input)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        pos = target.detach() > 0
        safe = Where.apply(pos, target, 1.0)
        loss = Where.apply(pos, target * safe.log(), 0.0) - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.ndim else total
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1 (cosine
    over dim 1 of (N, D) inputs, or of (D,) inputs with a 0-d target). RuntimeError for shapes
    that do not fit."""
    reduction = _reduction_arg(reduction, size_average, reduce)
    td = target.ndim
    if td > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if td == 1 and (input1.ndim != 2 or input2.ndim != 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    if td == 0 and (input1.ndim != 1 or input2.ndim != 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    dim = input1.ndim - 1
    eps = 1e-12
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = prod / (mag1 * mag2).sqrt()
    t = target.detach()
    pos = Where.apply(t == 1, 1 - cos, 0.0)
    neg = Where.apply(t == -1, (cos - margin).clamp(min=0.0), 0.0)
    return _reduce(pos + neg, reduction)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p, eps) along dim."""
    result = input / input.norm(p, dim, keepdim=True).clamp(min=eps)
    return result if out is None else out.copy_(result)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 x2) / (max(||x1||, eps) max(||x2||, eps)) along dim, the inputs broadcast to one
    shape first (as PyTorch: a broadcast input's norm counts its repeats)."""
    shape = carray.broadcast_shapes(x1.shape, x2.shape)
    x1, x2 = x1.expand(shape), x2.expand(shape)
    n1 = x1.norm(2, dim, keepdim=True).clamp(min=eps)
    n2 = x2.norm(2, dim, keepdim=True).clamp(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim (the inputs broadcast)."""
    nd = max(x1.ndim, x2.ndim)
    d = x1 - x2 + eps
    if nd == 0:
        return d.abs()
    return d.norm(p, nd - 1, keepdim=keepdim)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sums, means or maxes of bags of embedding rows: a 2-d input (B, L) is B bags of L
    indices; a 1-d input is cut into bags at offsets (offsets[0] must be 0; with
    include_last_offset the last offset ends the last bag). Indices equal to padding_idx are
    left out (of the mean's count too); an empty bag gives zeros. per_sample_weights (input's
    shape) scales each row, for mode='sum' only. ValueError / NotImplementedError /
    RuntimeError / IndexError as PyTorch for arguments that do not fit."""
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({_size(per_sample_weights.shape)})"
                         f" is not None, then it must have the same shape as the input "
                         f"({_size(input.shape)})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        b, length = input.shape
        starts = list(range(0, b * length, length)) if length else [0] * b
        include_last_offset = False
        input = input.reshape((-1,))
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape((-1,))
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = [int(o) for o in offsets.array.tolist()]
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if sparse:
        raise RuntimeError("embedding_bag(): sparse gradients are not supported; use "
                           "sparse=False")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    n = input.shape[0]
    if starts and starts[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {starts[0]}")
    if starts and starts[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {starts[-1]}")
    if any(a > b for a, b in zip(starts, starts[1:])):
        raise RuntimeError("offsets must be non-decreasing")
    ends = starts[1:] + ([] if include_last_offset else [n])
    starts = starts[:len(ends)]
    return _bags(input, weight, starts, ends, max_norm, norm_type, scale_grad_by_freq, mode,
                 per_sample_weights, padding_idx)


def _bags(input, weight, starts, ends, max_norm, norm_type, by_freq, mode, psw, padding_idx):
    """embedding_bag's reduction, once the bags are known as [starts[b], ends[b]) ranges: the
    rows are gathered into a (B, longest bag, D) block (padded), masked and reduced."""
    v, dim = weight.shape
    idx = input.array
    if idx.dtype not in (carray.int64, carray.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"torch.{scalar_type_name(idx.dtype)}Tensor instead")
    if padding_idx is not None:
        if not -v <= padding_idx < v:
            raise AssertionError("padding_idx must be within the number of embeddings")
        padding_idx %= v
    if idx.size and (int(carray.min(idx)) < 0 or int(carray.max(idx)) >= v):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    dev = idx.device
    nb = len(starts)
    lengths = [e - s for s, e in zip(starts, ends)]
    longest = max(lengths, default=0)
    rows = Embedding.apply(weight, idx, padding_idx, bool(by_freq))  # (n, D)
    if psw is not None:
        rows = rows * psw.reshape((-1, 1))
    if nb == 0 or longest == 0:
        return wrap(carray.zeros((nb, dim), dtype=weight.array.dtype, device=dev)) + \
            rows.sum() * 0.0
    start = carray.asarray(starts, dtype=carray.int64, device=dev).reshape((nb, 1))
    length = carray.asarray(lengths, dtype=carray.int64, device=dev).reshape((nb, 1))
    j = carray.arange(longest, dtype=carray.int64, device=dev).reshape((1, longest))
    valid = carray.less(j, length)  # (B, longest)
    pos = carray.where(valid, carray.add(start, j), 0)
    if padding_idx is not None:
        valid = carray.logical_and(valid, carray.not_equal(idx.reshape(-1)[pos], padding_idx))
    block = Index.apply(rows, (pos,))  # (B, longest, D)
    keep = wrap(carray.expand_dims(valid, 2))
    if mode == "max":
        block = Where.apply(keep, block, -math.inf)
        out = block.max(1)[0]
        any_row = wrap(carray.expand_dims(carray.any(valid, axis=1), 1))
        return Where.apply(any_row, out, 0.0)
    out = Where.apply(keep, block, 0.0).sum(1)
    if mode == "mean":
        count = carray.maximum(carray.sum(valid.astype(weight.array.dtype), axis=1,
                                          keepdims=True), 1.0)
        out = out / wrap(count)
    return out
