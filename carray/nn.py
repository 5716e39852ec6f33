"""carray.nn: NCHW primitives for neural networks, with PyTorch's names and arguments.

    conv2d, conv2d_grad_input, conv2d_grad_weight, conv2d_grad_bias
    max_pool2d, max_pool2d_grad
    avg_pool2d, avg_pool2d_grad
    softmax_cross_entropy, softmax_cross_entropy_grad
    softmax, softmax_grad, log_softmax, log_softmax_grad        (any axis)
    layer_norm, layer_norm_grad, rms_norm, rms_norm_grad        (over trailing dims)
    batch_norm, batch_norm_grad                                 (training mode, per channel)
    gelu, gelu_grad, embedding
    lstm_cell, lstm_cell_grad, gru_cell, gru_cell_grad          (one recurrent step)
    lstm_layer, lstm_layer_grad                                 (a whole LSTM layer)
    attention, attention_grad, fused_attention, causal_mask     (scaled dot-product)
    sgd_step, sgd_momentum_step, adam_step                      (many parameters per launch)

Inputs are carray Arrays of float32 or float64 with any strides (views are made contiguous
first); all arrays of one call share one dtype. Inputs are (N, C, H, W), or (C, H, W) for one
unbatched image, as in torch.nn.functional. The gradient functions are the adjoints of the forward
functions (the vector-Jacobian products autograd needs): for every grad_output g,
<g, f(x)> = <f_grad(g), x> for the linear maps, and max pooling's gradient routes each g to the
element its window picked.

Errors follow PyTorch: RuntimeError for shapes, sizes and dtypes that do not fit (the message names
them), TypeError for arguments of the wrong type, ValueError for sequences of the wrong length,
and RuntimeError for groups != 1 (grouped convolution is not supported).

The kernels are in carray/cpu/_nn.pyx: convolution is im2col + GEMM (one image, or a few small
ones, per GEMM), pooling a loop per plane, both across threads with the GIL released; softmax
cross entropy one pass over the rows (one kernel launch on the device for the loss and one for
its gradient, where composing it from elementwise ops and reductions takes about twenty).
"""

import math
import operator

from carray.core._array import (
    Array,
    AxisError,
    DeviceMismatchError,
    ascontiguousarray,
)
from carray.core._array import broadcast_shapes as _broadcast_shapes
from carray.core._array import broadcast_to as _broadcast_to
from carray.cpu import _nn
from carray.ops import _ufunc as _uf
from carray.ops._creation import arange as _arange
from carray.ops._creation import empty
from carray.ops._creation import full as _full
from carray.ops._creation import zeros as _zeros
from carray.ops._join import concatenate as _concatenate
from carray.ops._join import pad as _pad
from carray.ops._matmul import matmul as _matmul

__all__ = [
    "avg_pool2d",
    "avg_pool2d_grad",
    "conv2d",
    "conv2d_grad_bias",
    "conv2d_grad_input",
    "conv2d_grad_weight",
    "max_pool2d",
    "max_pool2d_grad",
    "sgd_step",
    # issue 14 item 4: optimizer updates of many parameters per launch
    "adam_step",
    "sgd_momentum_step",
    # gradient clipping without a launch per gradient
    "scale_all",
    "total_norm",
    "softmax_cross_entropy",
    "softmax_cross_entropy_grad",
    # fused row kernels (h13)
    "layer_norm",
    "layer_norm_grad",
    "log_softmax",
    "log_softmax_grad",
    "rms_norm",
    "rms_norm_grad",
    "softmax",
    "softmax_grad",
    # issue 14: embedding's lookup, checked on the device
    "embedding",
]

_FLOATS = ("float32", "float64")


# ---------------------------------------------------------------------------------------------
# argument checking
# ---------------------------------------------------------------------------------------------

def _int(value, name, op):
    """value as a Python int (bool and float refused, as PyTorch's int arguments)."""
    if isinstance(value, (bool, float)):
        raise TypeError(f"{op}(): argument '{name}' must be an int or a tuple of ints, "
                        f"got {type(value).__name__} {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{op}(): argument '{name}' must be an int or a tuple of ints, "
                        f"got {type(value).__name__} {value!r}") from None


def _pair(value, name, op):
    """An int or a sequence of one or two ints, as the pair (h, w)."""
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            v = _int(value[0], name, op)
            return (v, v)
        if len(value) != 2:
            raise ValueError(f"{op}(): expected {name} to be a single integer value or a list of "
                             f"2 values to match the 2 spatial dimensions, but got "
                             f"{name}={list(value)}")
        return (_int(value[0], name, op), _int(value[1], name, op))
    v = _int(value, name, op)
    return (v, v)


def _array(x, name, op, dtype=None):
    """x, checked to be a carray Array of a float dtype (or of `dtype`), C-contiguous (a copy
    when it is not)."""
    x = _checked(x, name, op, dtype)
    return x if x.is_contiguous() else ascontiguousarray(x)


def _checked(x, name, op, dtype=None):
    """x, checked to be a carray Array of a float dtype (or of `dtype`), any strides."""
    if not isinstance(x, Array):
        raise TypeError(f"{op}(): argument '{name}' must be a carray.Array, "
                        f"not {type(x).__name__}")
    dt = x.dtype.name
    if dtype is None and dt not in _FLOATS:
        raise RuntimeError(f"{op}(): {name} must be float32 or float64, got {dt}")
    if dtype is not None and dt != dtype:
        raise RuntimeError(f"{op}(): {name} has dtype {dt} but the other arguments have {dtype}; "
                           f"they must be the same (use .astype)")
    return x


def _kernels(op, *arrays):
    """The kernels for these arrays' device: carray.cpu._nn on the CPU, carray.opencl.nn on the
    OpenCL device. RuntimeError naming both devices when the arrays are on different ones."""
    devices = {a.device for a in arrays if a is not None}
    if len(devices) > 1:
        raise DeviceMismatchError(f"{op}(): expected all arrays on one device, got "
                                  f"{sorted(devices)}; move them with .to()")
    if devices == {"gpu"}:
        from carray.opencl import nn as gpu_nn
        return gpu_nn
    return _nn


def _size(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _shape_arg(shape, name, op):
    """A shape argument (a sequence of 3 or 4 ints >= 0) as a tuple."""
    if isinstance(shape, Array) or not isinstance(shape, (tuple, list)):
        try:
            shape = tuple(shape)
        except TypeError:
            raise TypeError(f"{op}(): argument '{name}' must be a tuple of ints, "
                            f"got {type(shape).__name__}") from None
    shape = tuple(_int(s, name, op) for s in shape)
    if len(shape) not in (3, 4):
        raise ValueError(f"{op}(): {name} must have 4 entries (N, C, H, W) or 3 (C, H, W), "
                         f"got {shape}")
    if min(shape) < 0:
        raise ValueError(f"{op}(): {name} must not have negative sizes, got {shape}")
    return shape


def _batched(x):
    """(x viewed as 4-d, whether x was a 3-d unbatched image)."""
    if x.ndim == 3:
        return x.reshape((1,) + x.shape), True
    return x, False


def _unbatch(y, unbatched):
    return y.reshape(y.shape[1:]) if unbatched else y


# ---------------------------------------------------------------------------------------------
# convolution
# ---------------------------------------------------------------------------------------------

class _ConvArgs:
    """The validated geometry of one conv2d: shapes, stride, padding, dilation, output size.

    pad_extra (bottom, right) is the padding PyTorch's padding='same' puts after the input
    beyond the symmetric `padding` when the kernel's extent is even.
    """

    def __init__(self, op, input_shape, weight_shape, stride, padding, dilation, groups):
        groups = _int(groups, "groups", op)
        if groups < 1:
            raise RuntimeError(f"{op}(): non-positive groups is not supported, got {groups}")
        if groups != 1:
            raise RuntimeError(f"{op}(): grouped convolution is not supported by carray "
                               f"(groups must be 1), got groups={groups}")
        self.stride = _pair(stride, "stride", op)
        self.dilation = _pair(dilation, "dilation", op)
        if min(self.stride) <= 0:
            raise RuntimeError(f"{op}(): non-positive stride is not supported, "
                               f"got stride={list(self.stride)}")
        if min(self.dilation) <= 0:
            raise RuntimeError(f"{op}(): dilation should be greater than zero, "
                               f"got dilation={list(self.dilation)}")
        if len(weight_shape) != 4:
            raise RuntimeError(f"{op}(): expected a 4-d weight (out_channels, in_channels, kH, "
                               f"kW), but got weight of size {_size(weight_shape)}")
        if min(weight_shape[2:]) <= 0:
            raise RuntimeError(f"{op}(): kernel size should be greater than zero, but got weight "
                               f"of size {_size(weight_shape)}")
        if len(input_shape) not in (3, 4):
            raise RuntimeError(f"{op}(): expected 3D (unbatched) or 4D (batched) input to conv2d, "
                               f"but got input of size: {_size(input_shape)}")
        O, C, kh, kw = weight_shape
        self.extent = (self.dilation[0] * (kh - 1) + 1, self.dilation[1] * (kw - 1) + 1)
        self.pad_extra = (0, 0)
        if isinstance(padding, str):
            if padding == "valid":
                padding = 0
            elif padding == "same":
                if self.stride != (1, 1):
                    raise ValueError(f"{op}(): padding='same' is not supported for strided "
                                     f"convolutions, got stride={list(self.stride)}")
                total = (self.extent[0] - 1, self.extent[1] - 1)
                padding = (total[0] // 2, total[1] // 2)
                self.pad_extra = (total[0] % 2, total[1] % 2)
            else:
                raise ValueError(f"{op}(): invalid padding string {padding!r}, should be one of "
                                 f"'valid' or 'same'")
        self.padding = _pair(padding, "padding", op)
        if min(self.padding) < 0:
            raise RuntimeError(f"{op}(): negative padding is not supported, "
                               f"got padding={list(self.padding)}")
        self.unbatched = len(input_shape) == 3
        shape4 = (1,) + tuple(input_shape) if self.unbatched else tuple(input_shape)
        N, Cx, H, W = shape4
        if Cx != C:
            raise RuntimeError(f"{op}(): given groups=1, weight of size {_size(weight_shape)}, "
                               f"expected input{_size(input_shape)} to have {C} channels, but got "
                               f"{Cx} channels instead")
        # sizes of the input as the kernels see it: with pad_extra added after it
        self.input_shape = shape4
        self.padded_shape = (N, C, H + self.pad_extra[0], W + self.pad_extra[1])
        hp = H + self.pad_extra[0] + 2 * self.padding[0]      # the padded input's size
        wp = W + self.pad_extra[1] + 2 * self.padding[1]
        if hp < self.extent[0] or wp < self.extent[1]:
            raise RuntimeError(f"{op}(): Calculated padded input size per channel: "
                               f"({hp} x {wp}). Kernel size: ({self.extent[0]} x "
                               f"{self.extent[1]}). Kernel size can't be greater than actual "
                               f"input size")
        Ho = (hp - self.extent[0]) // self.stride[0] + 1
        Wo = (wp - self.extent[1]) // self.stride[1] + 1
        self.output_shape = (N, O, Ho, Wo)
        self.weight_shape = tuple(weight_shape)

    def pad_input(self, x):
        """x (4-d) with pad_extra zeros after its H and W (padding='same', even extents)."""
        if self.pad_extra == (0, 0):
            return x
        return _pad(x, ((0, 0), (0, 0), (0, self.pad_extra[0]), (0, self.pad_extra[1])))

    def unpad(self, g):
        """The adjoint of pad_input: g without the pad_extra rows and columns."""
        if self.pad_extra == (0, 0):
            return g
        H, W = self.input_shape[2], self.input_shape[3]
        return ascontiguousarray(g[:, :, :H, :W])

    def kernel_args(self):
        return self.stride, self.padding, self.dilation


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d cross-correlation over an (N, C, H, W) input, as torch.nn.functional.conv2d.

        out[n, o, i, j] = bias[o] + sum_{c, u, v} weight[o, c, u, v]
                          * xpad[n, c, i * sH + u * dH, j * sW + v * dW]

    where xpad is the input with `padding` zeros on each side; weight is (O, C, kH, kW) and the
    output (N, O, Ho, Wo) with Ho = (H + 2 pH - dH (kH - 1) - 1) // sH + 1 (likewise Wo).
    stride, padding and dilation are ints or (h, w) pairs; padding may also be 'valid' (0) or
    'same' (output as large as the input; stride 1). A 3-d input (C, H, W) gives a 3-d output.

    Raises RuntimeError when the channels, dtypes or the bias size do not match, the kernel is
    larger than the padded input, stride/dilation <= 0, padding < 0 or groups != 1;
    TypeError for arguments that are not Arrays or ints.
    """
    x = _array(input, "input", "conv2d")
    w = _array(weight, "weight", "conv2d", x.dtype.name)
    g = _ConvArgs("conv2d", x.shape, w.shape, stride, padding, dilation, groups)
    b = None
    if bias is not None:
        b = _array(bias, "bias", "conv2d", x.dtype.name)
        if b.shape != (g.weight_shape[0],):
            raise RuntimeError(f"conv2d(): given weight of size {_size(w.shape)}, expected bias "
                               f"to be 1-dimensional with {g.weight_shape[0]} elements, but got "
                               f"bias of size {_size(b.shape)} instead")
    x4 = g.pad_input(_batched(x)[0])
    out = _kernels("conv2d", x4, w, b).conv2d_forward(x4, w, b, g.output_shape,
                                                      *g.kernel_args())
    return _unbatch(out, g.unbatched)


def conv2d_grad_input(grad_output, weight, input_shape, stride=1, padding=0, dilation=1,
                      groups=1):
    """Gradient of conv2d with respect to its input (the transposed convolution):

        grad_input[n, c, y, x] = sum_{o, i, j, u, v : i sH + u dH - pH = y, j sW + v dW - pW = x}
                                 weight[o, c, u, v] * grad_output[n, o, i, j]

    grad_output is (N, O, Ho, Wo) (or 3-d); input_shape is the forward input's shape (it fixes H
    and W where a stride leaves them ambiguous). Raises RuntimeError when grad_output's shape is
    not conv2d's output shape for input_shape and weight.
    """
    op = "conv2d_grad_input"
    go = _array(grad_output, "grad_output", op)
    w = _array(weight, "weight", op, go.dtype.name)
    shape = _shape_arg(input_shape, "input_shape", op)
    g = _ConvArgs(op, shape, w.shape, stride, padding, dilation, groups)
    go4 = _check_grad_output(op, go, g.output_shape, g.unbatched, shape, w.shape)
    gin = _kernels(op, go4, w).conv2d_grad_input(go4, w, g.padded_shape, *g.kernel_args())
    return _unbatch(g.unpad(gin), g.unbatched)


def conv2d_grad_weight(input, grad_output, weight_shape, stride=1, padding=0, dilation=1,
                       groups=1):
    """Gradient of conv2d with respect to its weight:

        grad_weight[o, c, u, v] = sum_{n, i, j} grad_output[n, o, i, j]
                                  * xpad[n, c, i sH + u dH, j sW + v dW]

    weight_shape is (O, C, kH, kW). Raises RuntimeError when grad_output's shape is not conv2d's
    output shape for input and weight_shape.
    """
    op = "conv2d_grad_weight"
    x = _array(input, "input", op)
    go = _array(grad_output, "grad_output", op, x.dtype.name)
    wshape = tuple(_int(s, "weight_shape", op) for s in _as_tuple(weight_shape, "weight_shape",
                                                                   op))
    if len(wshape) == 4 and min(wshape) < 0:
        raise ValueError(f"{op}(): weight_shape must not have negative sizes, got {wshape}")
    g = _ConvArgs(op, x.shape, wshape, stride, padding, dilation, groups)
    go4 = _check_grad_output(op, go, g.output_shape, g.unbatched, x.shape, wshape)
    x4 = g.pad_input(_batched(x)[0])
    return _kernels(op, x4, go4).conv2d_grad_weight(x4, go4, wshape, *g.kernel_args())


def conv2d_grad_bias(grad_output):
    """Gradient of conv2d with respect to its bias: grad_bias[o] = sum_{n, i, j}
    grad_output[n, o, i, j] (sum over i, j for a 3-d grad_output)."""
    go = _array(grad_output, "grad_output", "conv2d_grad_bias")
    if go.ndim not in (3, 4):
        raise RuntimeError(f"conv2d_grad_bias(): expected a 3-d or 4-d grad_output, got size "
                           f"{_size(go.shape)}")
    return _kernels("conv2d_grad_bias", go).conv2d_grad_bias(_batched(go)[0])


def _as_tuple(shape, name, op):
    try:
        return tuple(shape)
    except TypeError:
        raise TypeError(f"{op}(): argument '{name}' must be a tuple of ints, "
                        f"got {type(shape).__name__}") from None


def _check_grad_output(op, go, expected4, unbatched, input_shape, weight_shape):
    """grad_output as a 4-d array; RuntimeError unless it has the forward output's shape."""
    expected = expected4[1:] if unbatched else expected4
    if go.shape != expected:
        raise RuntimeError(f"{op}(): grad_output of size {_size(go.shape)} does not match the "
                           f"output size {_size(expected)} of the forward op for input size "
                           f"{_size(input_shape)}" +
                           (f" and weight of size {_size(weight_shape)}" if weight_shape else ""))
    return _batched(go)[0] if unbatched else go


# ---------------------------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------------------------

def _pool_geometry(op, shape, kernel_size, stride, padding, dilation, ceil_mode, avg):
    """(kernel, stride, padding, dilation, output shape as 4-d, unbatched) for a pooling op on
    an input of `shape`, with PyTorch's checks and output size formula."""
    kernel = _pair(kernel_size, "kernel_size", op)
    if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0):
        stride = kernel
    stride = _pair(stride, "stride", op)
    padding = _pair(padding, "padding", op)
    dilation = _pair(dilation, "dilation", op)
    if not isinstance(ceil_mode, (bool, int)):
        raise TypeError(f"{op}(): argument 'ceil_mode' must be bool, got "
                        f"{type(ceil_mode).__name__}")
    if min(kernel) <= 0:
        raise RuntimeError(f"{op}(): kernel size should be greater than zero, but got "
                           f"kH: {kernel[0]} kW: {kernel[1]}")
    if min(stride) <= 0:
        raise RuntimeError(f"{op}(): stride should be greater than zero, but got "
                           f"dH: {stride[0]} dW: {stride[1]}")
    if min(dilation) <= 0:
        raise RuntimeError(f"{op}(): dilation should be greater than zero, but got "
                           f"dilationH: {dilation[0]} dilationW: {dilation[1]}")
    if min(padding) < 0:
        raise RuntimeError(f"{op}(): pad must be non-negative, but got "
                           f"pad={list(padding)}")
    # the kernels index in 64-bit (and PyTorch takes int32 here): refuse values past int32
    for name, v in (("kernel_size", kernel), ("stride", stride), ("padding", padding),
                    ("dilation", dilation)):
        if max(v) > 2**31 - 1:
            raise RuntimeError(f"{op}(): {name}={list(v)} is too large (at most 2**31 - 1)")
    for k, p, d in zip(kernel, padding, dilation):
        if avg and p > k // 2:
            raise RuntimeError(f"{op}(): pad should be at most half of kernel size, but got "
                               f"pad={p} and kernel_size={k}")
        if not avg and p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"{op}(): pad should be at most half of effective kernel size, "
                               f"but got pad={p}, kernel_size={k} and dilation={d}")
    if len(shape) not in (3, 4) or 0 in shape[-3:]:
        raise RuntimeError(f"{op}(): expected 3D or 4D (batch mode) tensor with optional 0 dim "
                           f"batch size for input, but got: {_size(shape)}")
    out_hw = []
    for size, k, s, p, d in zip(shape[-2:], kernel, stride, padding, dilation):
        n = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (n - 1) * s >= size + p:
            n -= 1          # the last window would start in the right padding
        out_hw.append(n)
    C, H, W = shape[-3:]
    if min(out_hw) < 1:
        raise RuntimeError(f"{op}(): given input size: ({C}x{H}x{W}). Calculated output size: "
                           f"({C}x{out_hw[0]}x{out_hw[1]}). Output size is too small")
    unbatched = len(shape) == 3
    N = 1 if unbatched else shape[0]
    return kernel, stride, padding, dilation, (N, C, out_hw[0], out_hw[1]), unbatched


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-d max pooling over an (N, C, H, W) input, as torch.nn.functional.max_pool2d:

        out[n, c, i, j] = max_{u < kH, v < kW} xpad[n, c, i sH + u dH, j sW + v dW]

    with xpad padded by -inf (padding at most half the kernel's extent). stride defaults to
    kernel_size; Ho = (H + 2 pH - dH (kH - 1) - 1) // sH + 1 (rounded up with ceil_mode). The first
    maximum of a window wins and NaN propagates. With return_indices, also returns the int64
    indices of the maxima, each flat in its own (H x W) plane: y * W + x. (A window can miss the
    input altogether when the dilation exceeds the input's height or width: it gives -inf and
    index -1, where PyTorch gives an index outside the window.)
    """
    op = "max_pool2d"
    x = _array(input, "input", op)
    kernel, stride, padding, dilation, out_shape, unbatched = _pool_geometry(
        op, x.shape, kernel_size, stride, padding, dilation, ceil_mode, avg=False)
    out, idx = _kernels(op, x).max_pool2d_forward(_batched(x)[0], out_shape, kernel, stride,
                                                  padding, dilation, bool(return_indices))
    if return_indices:
        return _unbatch(out, unbatched), _unbatch(idx, unbatched)
    return _unbatch(out, unbatched)


def max_pool2d_grad(grad_output, indices, input_shape):
    """Gradient of max_pool2d with respect to its input: zeros, with each grad_output element
    added at the position its window picked,

        grad_input[n, c].flat[indices[n, c, i, j]] += grad_output[n, c, i, j]

    indices is max_pool2d's (int64, same shape as grad_output; -1 adds nowhere). Raises
    RuntimeError for shapes that do not fit and IndexError for an index outside its (H x W) plane.
    """
    op = "max_pool2d_grad"
    go = _array(grad_output, "grad_output", op)
    if isinstance(indices, Array) and indices.dtype.name != "int64":
        raise RuntimeError(f"{op}(): indices must be int64 (as max_pool2d returns them), got "
                           f"{indices.dtype.name}")
    idx = _array(indices, "indices", op, "int64")
    shape = _shape_arg(input_shape, "input_shape", op)
    if idx.shape != go.shape:
        raise RuntimeError(f"{op}(): indices of size {_size(idx.shape)} do not match "
                           f"grad_output of size {_size(go.shape)}")
    if go.ndim != len(shape) or go.shape[:-2] != shape[:-2]:
        raise RuntimeError(f"{op}(): grad_output of size {_size(go.shape)} does not fit the "
                           f"input size {_size(shape)} (their leading N, C must agree)")
    unbatched = len(shape) == 3
    shape4 = (1,) + shape if unbatched else shape
    gin = _kernels(op, go, idx).max_pool2d_backward(_batched(go)[0], _batched(idx)[0], shape4)
    return _unbatch(gin, unbatched)


def _avg_divisor(op, divisor_override):
    if divisor_override is None:
        return 0
    d = _int(divisor_override, "divisor_override", op)
    if d == 0:
        raise RuntimeError(f"{op}(): divisor must be not zero")
    if d < 0:
        raise RuntimeError(f"{op}(): divisor_override must be positive, got {d}")
    return d


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-d average pooling over an (N, C, H, W) input, as torch.nn.functional.avg_pool2d:

        out[n, c, i, j] = (1 / D) sum_{u < kH, v < kW} xpad[n, c, i sH + u, j sW + v]

    with xpad padded by zeros (at most half the kernel) and D = kH * kW (count_include_pad=True,
    PyTorch's default; windows that ceil_mode lets run past the padding count only up to it),
    the number of input elements in the window (count_include_pad=False), or divisor_override.
    stride defaults to kernel_size.
    """
    op = "avg_pool2d"
    x = _array(input, "input", op)
    kernel, stride, padding, _, out_shape, unbatched = _pool_geometry(
        op, x.shape, kernel_size, stride, padding, 1, ceil_mode, avg=True)
    out = _kernels(op, x).avg_pool2d_forward(_batched(x)[0], out_shape, kernel, stride,
                                             padding, bool(count_include_pad),
                                             _avg_divisor(op, divisor_override))
    return _unbatch(out, unbatched)


def avg_pool2d_grad(grad_output, input_shape, kernel_size, stride=None, padding=0,
                    ceil_mode=False, count_include_pad=True, divisor_override=None):
    """Gradient of avg_pool2d with respect to its input (its adjoint): each grad_output element,
    divided by its window's divisor D, added to every input element of its window,

        grad_input[n, c, y, x] = sum_{i, j : (y, x) in window (i, j)} grad_output[n, c, i, j] / D

    Raises RuntimeError when grad_output's shape is not avg_pool2d's output shape.
    """
    op = "avg_pool2d_grad"
    go = _array(grad_output, "grad_output", op)
    shape = _shape_arg(input_shape, "input_shape", op)
    kernel, stride, padding, _, out_shape, unbatched = _pool_geometry(
        op, shape, kernel_size, stride, padding, 1, ceil_mode, avg=True)
    go4 = _check_grad_output(op, go, out_shape, unbatched, shape, None)
    shape4 = (1,) + shape if unbatched else shape
    gin = _kernels(op, go4).avg_pool2d_backward(go4, shape4, kernel, stride, padding,
                                                bool(count_include_pad),
                                                _avg_divisor(op, divisor_override))
    return _unbatch(gin, unbatched)


# ---------------------------------------------------------------------------------------------
# softmax cross entropy
# ---------------------------------------------------------------------------------------------

_REDUCTIONS = ("none", "mean", "sum")


def _targets(target, m, op):
    """target checked to be an int64 (m,) Array, C-contiguous."""
    if not isinstance(target, Array):
        raise TypeError(f"{op}(): argument 'target' must be a carray.Array, "
                        f"not {type(target).__name__}")
    if target.dtype.name != "int64":
        raise RuntimeError(f"{op}(): target must be int64 class indices, got "
                           f"{target.dtype.name}")
    if target.shape != (m,):
        raise RuntimeError(f"{op}(): target of size {_size(target.shape)} does not fit an input "
                           f"of {m} rows (expected size [{m}])")
    return target if target.is_contiguous() else ascontiguousarray(target)


def softmax_cross_entropy(input, target, ignore_index=-100, reduction="mean"):
    """Cross entropy of the softmax of each row of input (M, C) at int64 class targets (M,):
    loss_i = logsumexp(input[i]) - input[i, target[i]], 0 for rows whose target is ignore_index.

    Returns (loss, probs, count): loss per row (M,) for reduction 'none', else a 0-d array of
    their sum ('sum') or of the sum over the number of counted rows ('mean'; NaN when none);
    probs = softmax(input) by rows (for the gradient); count the 0-d number of counted rows
    (None for 'none'). Raises IndexError for a target outside [0, C) that is not ignore_index
    (on the OpenCL device at the next read from the device, as the check runs there),
    RuntimeError for shapes or dtypes that do not fit, ValueError for an unknown reduction or
    C == 0."""
    op = "softmax_cross_entropy"
    x = _array(input, "input", op)
    if x.ndim != 2:
        raise RuntimeError(f"{op}(): input must be 2-d (rows, classes), got size {_size(x.shape)}")
    if x.shape[1] == 0:
        raise ValueError(f"{op}(): input has no classes (size {_size(x.shape)})")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction!r} is not a valid value for reduction")
    t = _targets(target, x.shape[0], op)
    return _kernels(op, x, t).softmax_nll(x, t, _int(ignore_index, "ignore_index", op),
                                          reduction)


def softmax_cross_entropy_grad(probs, target, grad_output, count=None, ignore_index=-100):
    """Gradient of softmax_cross_entropy with respect to its input: by rows,
    (probs - one_hot(target)) * grad_output / count, 0 for rows whose target is ignore_index.

    grad_output is 0-d (reductions 'sum' and 'mean') or (M,) ('none'); count is
    softmax_cross_entropy's count for 'mean', None otherwise. Raises RuntimeError for shapes or
    dtypes that do not fit."""
    op = "softmax_cross_entropy_grad"
    p = _array(probs, "probs", op)
    if p.ndim != 2:
        raise RuntimeError(f"{op}(): probs must be 2-d (rows, classes), got size {_size(p.shape)}")
    t = _targets(target, p.shape[0], op)
    g = _array(grad_output, "grad_output", op, p.dtype.name)
    if g.shape not in ((), (p.shape[0],)):
        raise RuntimeError(f"{op}(): grad_output of size {_size(g.shape)} does not fit "
                           f"{p.shape[0]} rows (expected size [] or [{p.shape[0]}])")
    if count is not None:
        count = _array(count, "count", op, p.dtype.name)
        if count.shape != ():
            raise RuntimeError(f"{op}(): count must be 0-d, got size {_size(count.shape)}")
    return _kernels(op, p, t, g, count).softmax_nll_grad(
        p, t, g, count, _int(ignore_index, "ignore_index", op))


# ---------------------------------------------------------------------------------------------
# SGD's update
# ---------------------------------------------------------------------------------------------

def sgd_step(params, grads, lr):
    """Plain SGD's update of many parameters in place: params[k] -= lr * grads[k], as
    subtract(p, multiply(g, lr), out=p) computes it, in one pass over each parameter (one
    kernel launch for up to 16 parameters on the device).

    params and grads are sequences of equally many Arrays, pairwise of one float dtype and shape,
    all on one device; parameters must be C-contiguous (they are written in place), gradients
    may be any views. Raises ValueError for sequences of different lengths or a non-contiguous or
    read-only parameter, RuntimeError for dtypes or shapes that do not fit, DeviceMismatchError for
    arrays on different devices."""
    op = "sgd_step"
    params, grads, _ = _foreach_args(op, params, grads, {})
    if params:      # the CPU loop reads gradients densely
        grads = [g if g.is_contiguous() else ascontiguousarray(g) for g in grads]
        _kernels(op, *params, *grads).sgd_step(params, grads, float(lr))


def _foreach_args(op, params, grads, states):
    """Check an optimizer update's arrays: equally many of each; parameters and states (written
    in place) C-contiguous, writeable, of one float dtype with their gradient and state, and of
    one shape with them; all on one device. Returns the gradients (views allowed)."""
    params, grads = list(params), list(grads)
    states = {name: list(s) for name, s in states.items()}
    for name, seq in (("gradients", grads), *states.items()):
        if len(seq) != len(params):
            raise ValueError(f"{op}(): got {len(params)} parameters but {len(seq)} {name}")
    for k, p in enumerate(params):
        for name, a in ((f"params[{k}]", p), *((f"{n}[{k}]", s[k]) for n, s in
                                               states.items())):
            if not _checked(a, name, op, None if a is p else p.dtype.name).is_contiguous():
                raise ValueError(f"{op}(): {name} must be C-contiguous (it is updated in place)")
            if not a.flags.writeable:
                raise ValueError(f"{op}(): {name} is read-only (it is updated in place)")
            if a.shape != p.shape:
                raise RuntimeError(f"{op}(): {name} of size {_size(a.shape)} does not match "
                                   f"params[{k}] of size {_size(p.shape)}")
        g = _checked(grads[k], f"grads[{k}]", op, p.dtype.name)
        if g.shape != p.shape:
            raise RuntimeError(f"{op}(): grads[{k}] of size {_size(g.shape)} does not match "
                               f"params[{k}] of size {_size(p.shape)}")
        grads[k] = g
    _kernels(op, *params, *grads, *(a for s in states.values() for a in s))
    return params, grads, states


def sgd_momentum_step(params, grads, momentum_buffers, lr, momentum, dampening=0.0,
                      weight_decay=0.0, nesterov=False, maximize=False):
    """SGD with momentum after its first step, in place, as torch.optim.SGD: for each parameter
    p, gradient g and momentum buffer b:
        g = -g if maximize;  g = g + weight_decay p;  b = momentum b + (1 - dampening) g
        p = p - lr (g + momentum b if nesterov else b)
    One pass over each parameter (one kernel launch for up to 16 on the device), rounding as
    the composition of those elementwise ops does. Raises as sgd_step."""
    op = "sgd_momentum_step"
    params, grads, st = _foreach_args(op, params, grads, {"momentum_buffers": momentum_buffers})
    bufs = st["momentum_buffers"]
    if not params:
        return
    kern = _kernels(op, *params)
    if kern is not _nn:
        kern.sgd_momentum_step(params, grads, bufs, float(lr), float(momentum),
                               float(dampening), float(weight_decay), bool(nesterov),
                               bool(maximize))
        return
    for p, g, b in zip(params, grads, bufs):
        if maximize:
            g = _uf.negative(g)
        if weight_decay != 0:
            g = _uf.add(g, _uf.multiply(p, weight_decay))
        _uf.multiply(b, momentum, out=b)
        _uf.add(b, _uf.multiply(g, 1 - dampening) if dampening != 0 else g, out=b)
        g = _uf.add(g, _uf.multiply(b, momentum)) if nesterov else b
        _uf.subtract(p, _uf.multiply(g, lr), out=p)


def adam_step(params, grads, exp_avgs, exp_avg_sqs, steps, lr, beta1, beta2, eps,
              weight_decay=0.0, decoupled_weight_decay=False, maximize=False):
    """Adam's (AdamW's with decoupled_weight_decay) update in place, as torch.optim.Adam
    without amsgrad: for each parameter p, gradient g, moments m and v, and its step count t
    (already incremented):
        g = -g if maximize;  p = p (1 - lr wd) if decoupled, else g = g + wd p
        m = lerp(m, g, 1 - beta1);  v = beta2 v + (1 - beta2) g g
        p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
    One pass over each parameter (one kernel launch for up to 16 on the device), rounding as
    the composition of those elementwise ops does. Raises as sgd_step, and ValueError for a
    step count below 1."""
    op = "adam_step"
    params, grads, st = _foreach_args(op, params, grads, {"exp_avgs": exp_avgs,
                                                          "exp_avg_sqs": exp_avg_sqs})
    steps = [int(t) for t in steps]
    if len(steps) != len(params):
        raise ValueError(f"{op}(): got {len(params)} parameters but {len(steps)} steps")
    if any(t < 1 for t in steps):
        raise ValueError(f"{op}(): step counts must be at least 1, got {min(steps)}")
    if not params:
        return
    step_sizes = [lr / (1 - beta1 ** t) for t in steps]
    bc2s = [math.sqrt(1 - beta2 ** t) for t in steps]
    kern = _kernels(op, *params)
    if kern is not _nn:
        kern.adam_step(params, grads, st["exp_avgs"], st["exp_avg_sqs"], step_sizes, bc2s,
                       float(lr), float(beta1), float(beta2), float(eps), float(weight_decay),
                       bool(decoupled_weight_decay), bool(maximize))
        return
    w = 1 - beta1
    for p, g, m, v, step_size, bc2 in zip(params, grads, st["exp_avgs"], st["exp_avg_sqs"],
                                          step_sizes, bc2s):
        if maximize:
            g = _uf.negative(g)
        if weight_decay != 0:
            if decoupled_weight_decay:
                _uf.multiply(p, 1 - lr * weight_decay, out=p)
            else:
                g = _uf.add(g, _uf.multiply(p, weight_decay))
        diff = _uf.subtract(g, m)           # m = lerp(m, g, w), PyTorch's two formulas
        if w < 0.5:
            _uf.add(m, _uf.multiply(diff, w, out=diff), out=m)
        else:
            _uf.subtract(g, _uf.multiply(diff, 1 - w, out=diff), out=m)
        _uf.multiply(v, beta2, out=v)
        gg = _uf.multiply(g, 1 - beta2)
        _uf.add(v, _uf.multiply(gg, g, out=gg), out=v)
        denom = _uf.sqrt(v)
        _uf.divide(denom, bc2, out=denom)
        _uf.add(denom, eps, out=denom)
        _uf.divide(m, denom, out=denom)
        _uf.subtract(p, _uf.multiply(denom, step_size, out=denom), out=p)


def total_norm(arrays):
    """The 2-norm of all the elements of arrays together (as if they were one vector), a 0-d
    array of their dtype on their device: sqrt of the sum of every array's sum of squares. On
    the device one launch per 16 arrays plus two for the total, whatever their number (gradient
    clipping's norm without a launch per gradient).

    arrays: a non-empty sequence of Arrays of one float dtype (float32 or float64), any shapes
    and strides, all on one device. Raises ValueError for an empty sequence, TypeError for a
    non-Array, RuntimeError for other dtypes, DeviceMismatchError for several devices."""
    op = "total_norm"
    arrays = list(arrays)
    if not arrays:
        raise ValueError(f"{op}(): expected at least one array, got none")
    dt = _checked(arrays[0], "arrays[0]", op).dtype.name
    arrays = [_checked(a, f"arrays[{k}]", op, dt) for k, a in enumerate(arrays)]
    kern = _kernels(op, *arrays)
    if kern is _nn:
        squares = empty((len(arrays),), dtype=dt)
        for k, a in enumerate(arrays):
            _uf.sum(_uf.multiply(a, a), out=squares[k])
        return _uf.sqrt(_uf.sum(squares))
    return _uf.sqrt(_uf.sum(kern.sum_squares_partials(arrays)))


def scale_all(arrays, factor):
    """Multiply every array of arrays in place by factor (a Python number, or a one-element
    Array on their device, e.g. a clipping coefficient computed there, which is then never read
    back to the host), as multiply(a, factor, out=a) does: one launch per 16 arrays on the
    device.

    arrays: C-contiguous, writeable Arrays of one float dtype on one device. Raises TypeError
    for a non-Array, ValueError for a non-contiguous or read-only array or a factor of more than
    one element, RuntimeError for other dtypes, DeviceMismatchError for several devices."""
    op = "scale_all"
    arrays = list(arrays)
    if not arrays:
        return
    dt = _checked(arrays[0], "arrays[0]", op).dtype.name
    for k, a in enumerate(arrays):
        if not _checked(a, f"arrays[{k}]", op, dt).flags.c_contiguous:
            raise ValueError(f"{op}(): arrays[{k}] must be C-contiguous (it is scaled in place)")
        if not a.flags.writeable:
            raise ValueError(f"{op}(): arrays[{k}] is read-only (it is scaled in place)")
    if isinstance(factor, Array):
        if factor.size != 1:
            raise ValueError(f"{op}(): factor must have one element, got size "
                             f"{_size(factor.shape)}")
        kern = _kernels(op, *arrays, factor)
        if factor.dtype.name != dt:
            factor = factor.astype(dt)
    else:
        kern = _kernels(op, *arrays)
        if kern is not _nn:
            factor = _full((1,), float(factor), dtype=dt, device=arrays[0].device)
    if kern is _nn:
        for a in arrays:
            _uf.multiply(a, factor if not isinstance(factor, Array) else factor.reshape(()),
                         out=a)
        return
    kern.scale_all(arrays, factor.reshape((1,)))


# ---------------------------------------------------------------------------------------------
# fused row kernels (h13): softmax, log_softmax, layer norm, RMS norm and their gradients
# ---------------------------------------------------------------------------------------------

def _axis_split(shape, axis, op):
    """(outer, n, inner) of shape around axis (AxisError, as NumPy, when out of range)."""
    nd = len(shape)
    axis = _int(axis, "axis", op)
    if not -max(nd, 1) <= axis < max(nd, 1):
        raise AxisError(f"axis {axis} is out of bounds for array of dimension {nd}")
    if nd == 0:
        return 1, 1, 1
    axis %= nd
    outer = inner = 1
    for s in shape[:axis]:
        outer *= s
    for s in shape[axis + 1:]:
        inner *= s
    return outer, shape[axis], inner


def softmax(x, axis=-1, *, masked=False):
    """exp(x - max) / sum(exp(x - max)) along axis, in one pass per row (float32/float64, any
    strides; a 0-d x counts as one element). masked=True makes a row that is all -inf give 0
    (attention's convention) instead of NaN. Raises AxisError for an axis out of range,
    RuntimeError for a non-float dtype, TypeError for a non-Array."""
    op = "softmax"
    a = _array(x, "x", op)
    outer, n, inner = _axis_split(a.shape, axis, op)
    return _kernels(op, a).softmax_rows(a, outer, n, inner, bool(masked))


def log_softmax(x, axis=-1):
    """x - max - log(sum(exp(x - max))) along axis, in one pass per row (see softmax)."""
    op = "log_softmax"
    a = _array(x, "x", op)
    outer, n, inner = _axis_split(a.shape, axis, op)
    return _kernels(op, a).log_softmax_rows(a, outer, n, inner)


def _same(a, b, op):
    if a.shape != b.shape:
        raise RuntimeError(f"{op}(): grad of size {_size(b.shape)} does not match the output of "
                           f"size {_size(a.shape)}")


def softmax_grad(y, g, axis=-1):
    """The gradient of softmax given its output y and the output gradient g:
    y * (g - sum(g * y, axis)). Raises as softmax, RuntimeError when the shapes differ."""
    op = "softmax_grad"
    y_ = _array(y, "y", op)
    g_ = _array(g, "g", op, y_.dtype.name)
    _same(y_, g_, op)
    outer, n, inner = _axis_split(y_.shape, axis, op)
    return _kernels(op, y_, g_).softmax_grad_rows(y_, g_, outer, n, inner)


def log_softmax_grad(y, g, axis=-1):
    """The gradient of log_softmax given its output y and the output gradient g:
    g - exp(y) * sum(g, axis). Raises as softmax_grad."""
    op = "log_softmax_grad"
    y_ = _array(y, "y", op)
    g_ = _array(g, "g", op, y_.dtype.name)
    _same(y_, g_, op)
    outer, n, inner = _axis_split(y_.shape, axis, op)
    return _kernels(op, y_, g_).log_softmax_grad_rows(y_, g_, outer, n, inner)


def _norm_split(x, normalized_ndim, op):
    """(rows, n, kept stats shape, normalised shape) for normalising x over its last
    normalized_ndim dims."""
    k = _int(normalized_ndim, "normalized_ndim", op)
    if not 0 <= k <= x.ndim:
        raise RuntimeError(f"{op}(): normalized_ndim must be in [0, {x.ndim}] for an input of "
                           f"size {_size(x.shape)}, got {k}")
    lead, norm = x.shape[:x.ndim - k], x.shape[x.ndim - k:]
    rows = n = 1
    for s in lead:
        rows *= s
    for s in norm:
        n *= s
    return rows, n, lead + (1,) * k, norm


def _affine(p, name, x, nshape, op):
    """weight or bias: None, or an Array of x's dtype and the normalised shape, as (n,)."""
    if p is None:
        return None
    p = _array(p, name, op, x.dtype.name)
    if p.shape != nshape:
        raise RuntimeError(f"{op}(): {name} of size {_size(p.shape)} does not match the "
                           f"normalized shape {_size(nshape)}")
    return p.reshape((p.size,))


def _stats_k(stat, x, weight, op):
    """The number of normalised dims for a gradient call: weight's ndim when given, else the
    fewest trailing dims of x whose leading dims hold as many rows as the statistics."""
    if not isinstance(stat, Array):
        raise TypeError(f"{op}(): argument 'rstd' must be a carray.Array, "
                        f"not {type(stat).__name__}")
    if isinstance(weight, Array):
        return weight.ndim
    for k in range(x.ndim + 1):
        rows = 1
        for s in x.shape[:x.ndim - k]:
            rows *= s
        if rows == stat.size:
            return k
    raise RuntimeError(f"{op}(): statistics of size {_size(stat.shape)} fit no split of an "
                       f"input of size {_size(x.shape)} into rows")


def _stat(s, name, rows, x, op):
    s = _array(s, name, op, x.dtype.name)
    if s.size != rows:
        raise RuntimeError(f"{op}(): {name} of size {_size(s.shape)} does not fit {rows} rows")
    return s.reshape((rows,))


def layer_norm(x, normalized_ndim, weight=None, bias=None, eps=1e-5):
    """Layer norm over the last normalized_ndim dims of x: (y, mean, rstd) with
    y = (x - mean) * rstd * weight + bias, rstd = 1 / sqrt(var + eps) (biased var); mean and
    rstd keep the normalised dims as 1 (as torch.native_layer_norm). weight and bias are None or
    of the normalised shape. One pass per row. Raises RuntimeError for shapes or dtypes that do
    not fit, TypeError for non-Arrays, DeviceMismatchError for arrays on different devices."""
    op = "layer_norm"
    a = _array(x, "x", op)
    rows, n, kept, nshape = _norm_split(a, normalized_ndim, op)
    w, b = _affine(weight, "weight", a, nshape, op), _affine(bias, "bias", a, nshape, op)
    y, mean, rstd = _kernels(op, a, w, b).layer_norm_rows(a, rows, n, w, b, float(eps))
    return y, mean.reshape(kept), rstd.reshape(kept)


def layer_norm_grad(g, x, mean, rstd, weight=None, output_mask=(True, True, True)):
    """The gradients (dx, dweight, dbias) of layer_norm, given the output gradient g, the input
    x and layer_norm's mean and rstd (the normalised dims: weight's, else the fewest trailing
    dims that leave as many rows as mean has elements):
    dx = rstd (gh - mean(gh) - xhat mean(gh xhat)), gh = g weight, xhat = (x - mean) rstd;
    dweight = sum(g xhat), dbias = sum(g) over the leading dims (of the normalised shape).
    output_mask says which to compute (None for the others). Raises as layer_norm."""
    op = "layer_norm_grad"
    a = _array(x, "x", op)
    g_ = _array(g, "g", op, a.dtype.name)
    _same(a, g_, op)
    rows, n, _, nshape = _norm_split(a, _stats_k(rstd, a, weight, op), op)
    m, r = _stat(mean, "mean", rows, a, op), _stat(rstd, "rstd", rows, a, op)
    w = _affine(weight, "weight", a, nshape, op)
    need = tuple(bool(v) for v in output_mask)
    gx, gw, gb = _kernels(op, a, g_, m, r, w).layer_norm_grad_rows(g_, a, m, r, w, rows, n,
                                                                    *need)
    return (None if gx is None else gx.reshape(a.shape),
            None if gw is None else gw.reshape(nshape),
            None if gb is None else gb.reshape(nshape))


def rms_norm(x, normalized_ndim, weight=None, eps=1e-6):
    """RMS norm over the last normalized_ndim dims of x: (y, rstd) with y = x * rstd * weight,
    rstd = 1 / sqrt(mean(x^2) + eps) (the normalised dims kept as 1). Raises as layer_norm."""
    op = "rms_norm"
    a = _array(x, "x", op)
    rows, n, kept, nshape = _norm_split(a, normalized_ndim, op)
    w = _affine(weight, "weight", a, nshape, op)
    y, rstd = _kernels(op, a, w).rms_norm_rows(a, rows, n, w, float(eps))
    return y, rstd.reshape(kept)


def rms_norm_grad(g, x, rstd, weight=None, output_mask=(True, True)):
    """The gradients (dx, dweight) of rms_norm, given the output gradient g, the input x and
    rms_norm's rstd: dx = rstd (gh - xhat mean(gh xhat)), gh = g weight, xhat = x rstd;
    dweight = sum(g xhat) over the leading dims. Raises as layer_norm_grad."""
    op = "rms_norm_grad"
    a = _array(x, "x", op)
    g_ = _array(g, "g", op, a.dtype.name)
    _same(a, g_, op)
    rows, n, _, nshape = _norm_split(a, _stats_k(rstd, a, weight, op), op)
    r = _stat(rstd, "rstd", rows, a, op)
    w = _affine(weight, "weight", a, nshape, op)
    need = tuple(bool(v) for v in output_mask)
    gx, gw = _kernels(op, a, g_, r, w).rms_norm_grad_rows(g_, a, r, w, rows, n, *need)
    return (None if gx is None else gx.reshape(a.shape),
            None if gw is None else gw.reshape(nshape))


# ---------------------------------------------------------------------------------------------
# issue 14: embedding's lookup (its index check on the device, without a wait)
# ---------------------------------------------------------------------------------------------

_EMBEDDING_RANGE = "index out of range in self"


def embedding(weight, indices):
    """The rows of the 2-d weight (V, D) at the int32/int64 indices (any shape): an array of
    shape indices.shape + (D,), as torch.nn.functional.embedding's forward. An index outside
    [0, V) raises IndexError("index out of range in self"), as PyTorch: on the CPU now; on the
    device at the next read from it (item(), tolist(), .to("cpu")...), since the lookup checks
    there rather than waiting for the device (the looked-up row is zeros meanwhile).
    TypeError for other index dtypes, ValueError for a weight that is not 2-d,
    DeviceMismatchError for arrays on different devices."""
    op = "embedding"
    if not isinstance(weight, Array) or not isinstance(indices, Array):
        raise TypeError(f"{op}(): weight and indices must be carray Arrays, got "
                        f"{type(weight).__name__} and {type(indices).__name__}")
    if weight.ndim != 2:
        raise ValueError(f"{op}(): weight must be 2-d (num_embeddings, embedding_dim), got "
                         f"shape {weight.shape}")
    if indices.dtype.name not in ("int32", "int64"):
        raise TypeError(f"{op}(): indices must be int32 or int64, got {indices.dtype.name}")
    if weight.device != indices.device:
        raise DeviceMismatchError(f"{op}(): expected all arrays on one device, got "
                                  f"{sorted({weight.device, indices.device})}; move them with "
                                  f".to()")
    if weight.device == "gpu":
        from carray.opencl import _index
        return _index.take_rows(weight, indices, _EMBEDDING_RANGE)
    v = weight.shape[0]
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= v):
        raise IndexError(_EMBEDDING_RANGE)
    return weight[indices]
# exact GELU in one pass (issue 14 item 3): one kernel launch each on the device
# ---------------------------------------------------------------------------------------------

__all__ += ["gelu", "gelu_grad"]

def gelu(x):
    """Exact GELU x Phi(x), Phi the standard normal CDF (float32/float64, any strides): one
    kernel on the OpenCL device (float32's erf a polynomial within about 1 ulp), one vectorised
    pass on the CPU (the same polynomial). Raises RuntimeError for a non-float dtype, TypeError
    for a non-Array."""
    op = "gelu"
    a = _array(x, "x", op)
    if a.device == "gpu":
        return _kernels(op, a).gelu(a)
    return _nn.gelu_rows(a)


def gelu_grad(g, x):
    """The gradient of gelu given the output gradient g and the input x:
    g (Phi(x) + x phi(x)), phi(x) = exp(-x^2 / 2) / sqrt(2 pi). Raises as gelu, RuntimeError
    when the shapes or dtypes differ."""
    op = "gelu_grad"
    a = _array(x, "x", op)
    g_ = _array(g, "g", op, a.dtype.name)
    _same(a, g_, op)
    if _kernels(op, a, g_) is not _nn:
        return _kernels(op, a, g_).gelu_grad(g_, a)
    return _nn.gelu_rows(a, g_)


# ---------------------------------------------------------------------------------------------
# issue 12 item 5: one LSTM / GRU cell step (the gate math of a recurrent layer) and its
# gradient, one kernel each on the OpenCL device, a few vectorised passes on the CPU
#   LSTM: a = gi + gh = [i f g o] (B, 4H); i, f, o = sigmoid, g = tanh; c' = f c + i g;
#         h' = o tanh(c')
#   GRU:  r = s(gi_r + gh_r), z = s(gi_z + gh_z), n = tanh(gi_n + r gh_n), h' = n + z (h - n)
# ---------------------------------------------------------------------------------------------

__all__ += ["lstm_cell", "lstm_cell_grad", "gru_cell", "gru_cell_grad"]


def _cell_args(op, gi, gh, state, k, name):
    """gi, gh (B, kH) and the state `name` (B, H) checked: one float dtype and device, matching
    shapes. RuntimeError naming the argument otherwise (TypeError for non-Arrays)."""
    s = _array(state, name, op)
    gi_ = _array(gi, "gi", op, s.dtype.name)
    gh_ = _array(gh, "gh", op, s.dtype.name)
    want = s.shape[:-1] + (k * s.shape[-1],) if s.ndim else None
    for name, a in (("gi", gi_), ("gh", gh_)):
        if s.ndim == 0 or a.shape != want:
            raise RuntimeError(f"{op}(): {name} must have shape {_size(want or (k,))} for a "
                               f"state of shape {_size(s.shape)}, got {_size(a.shape)}")
    _kernels(op, gi_, gh_, s)
    return gi_, gh_, s


def lstm_cell(gi, gh, c):
    """One LSTM step from the input projection gi and hidden projection gh (B, 4H, gates in
    PyTorch's order i f g o) and the cell state c (B, H): (h', c', act, tanh(c')), where act
    (B, 4H) holds the activated gates; act and tanh(c') are what lstm_cell_grad needs. Raises
    RuntimeError for mismatched shapes or dtypes, DeviceMismatchError across devices."""
    op = "lstm_cell"
    gi_, gh_, c_ = _cell_args(op, gi, gh, c, 4, "c")
    if c_.device == "gpu":
        return _kernels(op, c_).lstm_cell(gi_, gh_, c_)
    n = c_.shape[-1]
    act = _uf.add(gi_, gh_)
    g = act[..., 2 * n:3 * n]
    _uf.sigmoid(act[..., :2 * n], out=act[..., :2 * n])
    _uf.sigmoid(act[..., 3 * n:], out=act[..., 3 * n:])
    _uf.tanh(g, out=g)
    i, f, o = act[..., :n], act[..., n:2 * n], act[..., 3 * n:]
    c_new = _uf.multiply(f, c_)
    _uf.add(c_new, _uf.multiply(i, g), out=c_new)
    tc = _uf.tanh(c_new)
    return _uf.multiply(o, tc), c_new, act, tc


def lstm_cell_grad(act, tc, c, dh, dc):
    """The gradients of lstm_cell: (dgates (B, 4H), the same for gi and gh; dc_prev (B, H)),
    from its act and tanh(c') outputs, the input c and the upstream gradients dh and dc of h'
    and c' (either may be None, not both). Raises as lstm_cell."""
    op = "lstm_cell_grad"
    if dh is None and dc is None:
        raise ValueError(f"{op}(): dh and dc cannot both be None")
    c_ = _array(c, "c", op)
    tc_ = _array(tc, "tc", op, c_.dtype.name)
    act_ = _array(act, "act", op, c_.dtype.name)
    ups = [None if u is None else _array(u, name, op, c_.dtype.name)
           for name, u in (("dh", dh), ("dc", dc))]
    for name, a in (("tc", tc_), ("dh", ups[0]), ("dc", ups[1])):
        if a is not None and a.shape != c_.shape:
            raise RuntimeError(f"{op}(): {name} must have the shape {_size(c_.shape)} of c, "
                               f"got {_size(a.shape)}")
    if act_.shape != c_.shape[:-1] + (4 * c_.shape[-1],):
        raise RuntimeError(f"{op}(): act must have shape "
                           f"{_size(c_.shape[:-1] + (4 * c_.shape[-1],))}, got "
                           f"{_size(act_.shape)}")
    dh_, dc_ = ups
    kern = _kernels(op, act_, tc_, c_, dh_, dc_)
    if kern is not _nn:
        return kern.lstm_cell_grad(act_, tc_, c_, dh_, dc_)
    n = c_.shape[-1]
    i, f, g, o = (act_[..., k * n:(k + 1) * n] for k in range(4))
    up = empty(act_.shape, dtype=act_.dtype)
    if dh_ is not None:
        d = _uf.multiply(tc_, tc_)                 # dc = dc' + dh o (1 - tc^2)
        _uf.subtract(1.0, d, out=d)
        _uf.multiply(d, o, out=d)
        _uf.multiply(d, dh_, out=d)
        if dc_ is not None:
            _uf.add(d, dc_, out=d)
        _uf.multiply(dh_, tc_, out=up[..., 3 * n:])
    else:
        d = dc_
        up[..., 3 * n:] = 0.0
    _uf.multiply(d, g, out=up[..., :n])
    _uf.multiply(d, c_, out=up[..., n:2 * n])
    _uf.multiply(d, i, out=up[..., 2 * n:3 * n])
    # the activations' derivatives: s (1 - s) for the sigmoids, 1 - g^2 for the tanh
    deriv = _uf.subtract(1.0, act_)
    _uf.multiply(deriv, act_, out=deriv)
    _uf.subtract(1.0, _uf.multiply(g, g), out=deriv[..., 2 * n:3 * n])
    _uf.multiply(up, deriv, out=up)
    return up, _uf.multiply(d, f)


def gru_cell(gi, gh, h):
    """One GRU step from the input projection gi and hidden projection gh (B, 3H, PyTorch's
    order r z n, biases included) and the hidden state h (B, H): (h', rz, n) where rz (B, 2H)
    holds the activated r and z gates and n (B, H) the candidate; rz and n are what
    gru_cell_grad needs. Raises as lstm_cell."""
    op = "gru_cell"
    gi_, gh_, h_ = _cell_args(op, gi, gh, h, 3, "h")
    if h_.device == "gpu":
        return _kernels(op, h_).gru_cell(gi_, gh_, h_)
    n = h_.shape[-1]
    rz = _uf.add(gi_[..., :2 * n], gh_[..., :2 * n])
    _uf.sigmoid(rz, out=rz)
    r, z = rz[..., :n], rz[..., n:]
    nt = _uf.multiply(r, gh_[..., 2 * n:])
    _uf.add(nt, gi_[..., 2 * n:], out=nt)
    _uf.tanh(nt, out=nt)
    h_new = _uf.subtract(h_, nt)                   # n + z (h - n)
    _uf.multiply(h_new, z, out=h_new)
    _uf.add(h_new, nt, out=h_new)
    return h_new, rz, nt


def gru_cell_grad(rz, nt, gh, h, dh):
    """The gradients of gru_cell: (dgi, dgh (B, 3H), dh_prev (B, H)) from its rz and n
    outputs, the inputs gh and h and the upstream gradient dh of h'. Raises as gru_cell."""
    op = "gru_cell_grad"
    h_ = _array(h, "h", op)
    rz_, nt_, gh_, dh_ = (_array(a, name, op, h_.dtype.name) for name, a in
                          (("rz", rz), ("n", nt), ("gh", gh), ("dh", dh)))
    lead, n = h_.shape[:-1], h_.shape[-1] if h_.ndim else 0
    for name, a, k in (("rz", rz_, 2), ("n", nt_, 1), ("gh", gh_, 3), ("dh", dh_, 1)):
        if h_.ndim == 0 or a.shape != lead + (k * n,):
            raise RuntimeError(f"{op}(): {name} must have shape {_size(lead + (k * n,))}, got "
                               f"{_size(a.shape)}")
    kern = _kernels(op, rz_, nt_, gh_, h_, dh_)
    if kern is not _nn:
        return kern.gru_cell_grad(rz_, nt_, gh_, h_, dh_)
    r, z = rz_[..., :n], rz_[..., n:]
    dgi = empty(lead + (3 * n,), dtype=h_.dtype)
    dn = dgi[..., 2 * n:]
    _uf.multiply(nt_, nt_, out=dn)                 # dn = dh (1 - z) (1 - n^2)
    _uf.subtract(1.0, dn, out=dn)
    _uf.multiply(dn, _uf.subtract(1.0, z), out=dn)
    _uf.multiply(dn, dh_, out=dn)
    deriv = _uf.subtract(1.0, rz_)                 # s (1 - s) for r and z
    _uf.multiply(deriv, rz_, out=deriv)
    dr = dgi[..., :n]
    _uf.multiply(dn, gh_[..., 2 * n:], out=dr)
    dz = dgi[..., n:2 * n]
    _uf.subtract(h_, nt_, out=dz)
    _uf.multiply(dz, dh_, out=dz)
    _uf.multiply(dgi[..., :2 * n], deriv, out=dgi[..., :2 * n])
    dgh = dgi.copy()
    _uf.multiply(dn, r, out=dgh[..., 2 * n:])
    return dgi, dgh, _uf.multiply(dh_, z)


# ---------------------------------------------------------------------------------------------
# issue 12 item 5: a whole LSTM layer over a sequence, one kernel launch per time step each way
# on the OpenCL device (the hidden projection summed inside it); the CPU loops over matmul and
# lstm_cell. Steps run from 0 to T - 1, or from T - 1 down to 0 with reverse.
# ---------------------------------------------------------------------------------------------

__all__ += ["lstm_layer", "lstm_layer_grad"]


def _layer_steps(n, reverse):
    return range(n - 1, -1, -1) if reverse else range(n)


def _layer_args(op, gi, w_hh, h0, c0):
    """(T, B, H) after checking gi (T, B, 4H), w_hh (4H, H), h0 and c0 (B, H): one float dtype
    and device. TypeError / RuntimeError naming the argument."""
    c = _checked(c0, "c0", op)
    for name, a in (("gi", gi), ("w_hh", w_hh), ("h0", h0)):
        _checked(a, name, op, c.dtype.name)
    if c.ndim != 2:
        raise RuntimeError(f"{op}(): c0 must be (B, H), got {_size(c.shape)}")
    B, H = c.shape
    for name, a, want in (("h0", h0, (B, H)), ("w_hh", w_hh, (4 * H, H))):
        if a.shape != want:
            raise RuntimeError(f"{op}(): {name} must have shape {_size(want)}, got "
                               f"{_size(a.shape)}")
    if gi.ndim != 3 or gi.shape[1:] != (B, 4 * H):
        raise RuntimeError(f"{op}(): gi must have shape [T, {B}, {4 * H}], got "
                           f"{_size(gi.shape)}")
    _kernels(op, gi, w_hh, h0, c0)
    return gi.shape[0], B, H


def lstm_layer(gi, w_hh, h0, c0, reverse=False):
    """An LSTM layer over a sequence: gi (T, B, 4H) the input projections of every step (biases
    included, gates in PyTorch's order i f g o), w_hh (4H, H) the hidden weights, h0 and c0
    (B, H) the initial state. Returns (out (T, B, H), h_n, c_n, act (T, B, 4H), tc (T, B, H),
    cs (T, B, H)): the hidden state of every step, the final state, and what lstm_layer_grad
    needs (the activated gates, tanh(c_t) and c_t of every step). Raises as lstm_cell."""
    op = "lstm_layer"
    n, B, H = _layer_args(op, gi, w_hh, h0, c0)
    if c0.device == "gpu":
        return _kernels(op, c0).lstm_layer(gi, w_hh, h0, c0, bool(reverse))
    dt = c0.dtype
    out, cs, tc = (empty((n, B, H), dtype=dt) for _ in range(3))
    act = empty((n, B, 4 * H), dtype=dt)
    wt = w_hh.transpose((1, 0))
    h, c = h0, c0
    for t in _layer_steps(n, reverse):
        h, c, act[t], tc[t] = lstm_cell(gi[t], _matmul(h, wt), c)
        out[t] = h
        cs[t] = c
    return out, h.copy(), c.copy(), act, tc, cs


def lstm_layer_grad(w_hh, h0, c0, out, act, tc, cs, dout, dh_n, dc_n, reverse=False):
    """The gradients (dgi (T, B, 4H), dw_hh (4H, H), dh0, dc0 (B, H)) of lstm_layer from its
    inputs w_hh, h0, c0, its outputs out, act, tc, cs and the upstream gradients dout of out,
    dh_n and dc_n of the final state (each may be None). Raises as lstm_cell."""
    op = "lstm_layer_grad"
    n, B, H = _layer_args(op, act, w_hh, h0, c0)
    for name, a, want in (("out", out, (n, B, H)), ("tc", tc, (n, B, H)), ("cs", cs, (n, B, H)),
                          ("dout", dout, (n, B, H)), ("dh_n", dh_n, (B, H)),
                          ("dc_n", dc_n, (B, H))):
        if a is not None and (_checked(a, name, op, c0.dtype.name).shape != want):
            raise RuntimeError(f"{op}(): {name} must have shape {_size(want)}, got "
                               f"{_size(a.shape)}")
    _kernels(op, c0, out, dout, dh_n, dc_n)
    if c0.device == "gpu":
        return _kernels(op, c0).lstm_layer_grad(w_hh, h0, c0, out, act, tc, cs, dout, dh_n,
                                                dc_n, bool(reverse))
    dt = c0.dtype
    dg = empty((n, B, 4 * H), dtype=dt)
    dh = dh_n
    dc = dc_n
    order = list(_layer_steps(n, not reverse))
    for t in order:
        up = dh if dout is None else dout[t] if dh is None else _uf.add(dout[t], dh)
        if up is None and dc is None:
            up = _zeros((B, H), dtype=dt)
        c_prev = c0 if t == order[-1] else cs[t + 1 if reverse else t - 1]
        dgates, dc = lstm_cell_grad(act[t], tc[t], c_prev, up, dc)
        dg[t] = dgates
        dh = _matmul(dgates, w_hh)
    if n == 0:
        return dg, _zeros(w_hh.shape, dtype=dt), _zeros((B, H), dtype=dt), \
            _zeros((B, H), dtype=dt)
    h0a = h0.reshape((1, B, H))
    prev = _concatenate([out[1:], h0a]) if reverse else _concatenate([h0a, out[:-1]])
    dw = _matmul(dg.reshape((n * B, 4 * H)).transpose((1, 0)), prev.reshape((n * B, H)))
    return dg, dw, dh, dc


# ---------------------------------------------------------------------------------------------
# issue 12 item 5: scaled dot-product attention without a mask, causal or not, in one pass that
# never stores the L x S scores on the OpenCL device (attention.cl); the CPU (and head dims the
# kernels do not take) compose it from matmul and row ops, saving nothing between the calls:
#   out = softmax(scale q k^T) v,  lse = log sum_j exp(scale q k_j)  (per query row)
# ---------------------------------------------------------------------------------------------

__all__ += ["attention", "attention_grad", "causal_mask", "fused_attention"]


def _attention_args(op, arrays, names):
    """The leading shape the arrays broadcast to, after checking that they are Arrays of one
    float dtype and device with at least 2 dims. TypeError / RuntimeError naming the argument."""
    first = None
    for name, a in zip(names, arrays):
        if not isinstance(a, Array):
            raise TypeError(f"{op}(): argument '{name}' must be a carray.Array, "
                            f"not {type(a).__name__}")
        if a.dtype.name not in _FLOATS:
            raise RuntimeError(f"{op}(): {name} must be float32 or float64, got {a.dtype.name}")
        if a.ndim < 2:
            raise RuntimeError(f"{op}(): {name} must have at least 2 dims (..., rows, E), got "
                               f"shape {_size(a.shape)}")
        if first is None:
            first = (name, a)
        elif a.dtype != first[1].dtype:
            raise RuntimeError(f"{op}(): {name} has dtype {a.dtype.name} but {first[0]} has "
                               f"{first[1].dtype.name}; they must be the same")
    _kernels(op, *arrays)
    try:
        return _broadcast_shapes(*(a.shape[:-2] for a in arrays))
    except ValueError:
        raise RuntimeError(f"{op}(): the leading dims of "
                           f"{', '.join(f'{n} {_size(a.shape)}' for n, a in zip(names, arrays))}"
                           f" do not broadcast") from None


def _attention_sizes(op, q, k, v):
    if q.shape[-1] != k.shape[-1]:
        raise RuntimeError(f"{op}(): query and key must have the same last dim, got "
                           f"{q.shape[-1]} and {k.shape[-1]}")
    if k.shape[-2] != v.shape[-2]:
        raise RuntimeError(f"{op}(): key and value must have the same number of rows (dim -2), "
                           f"got {k.shape[-2]} and {v.shape[-2]}")


def _fused_attention(q, v):
    if q.device != "gpu":
        return None
    from carray.opencl import _attention
    return _attention if _attention.supported(q.shape[-1], v.shape[-1]) else None


def fused_attention(query, value):
    """Whether attention() on these arrays (query (..., L, E), value (..., S, Ev)) runs the
    memory-efficient kernels (on the OpenCL device, float E and Ev <= 128) rather than the
    composed matmul + softmax path."""
    return (isinstance(query, Array) and isinstance(value, Array) and query.ndim >= 2
            and value.ndim >= 2 and query.dtype.name in _FLOATS
            and _fused_attention(query, value) is not None)


def causal_mask(n_query, n_key, device="cpu"):
    """The (n_query, n_key) bool Array that is True on and below the diagonal: query i sees
    keys 0..i (aligned at the top left, as PyTorch's is_causal)."""
    rows = _arange(n_query, device=device).reshape((n_query, 1))
    return _uf.greater_equal(rows, _arange(n_key, device=device).reshape((1, n_key)))


def _scores(q, k, scale, causal):
    """scale q k^T with the keys after each query's position at -inf when causal."""
    s = _matmul(q, _swap_last(k))
    _uf.multiply(s, scale, out=s)
    if causal:
        s = _uf.where(causal_mask(s.shape[-2], s.shape[-1], s.device), s, float("-inf"))
    return s


def _swap_last(a):
    axes = list(range(a.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return a.transpose(axes)


def _broadcast_lead(a, lead):
    return a if a.shape[:-2] == tuple(lead) else _broadcast_to(a, tuple(lead) + a.shape[-2:])


def attention(query, key, value, scale=None, is_causal=False):
    """softmax(scale query key^T) value over the last two dims, with query (..., L, E), key
    (..., S, E), value (..., S, Ev) whose leading dims broadcast; scale defaults to 1/sqrt(E);
    is_causal lets query i see keys 0..i only. Returns (out (..., L, Ev), lse (..., L)), lse the
    log-sum-exp of each query's scores (what attention_grad needs); a query that sees no key
    gets out 0 and lse -inf. On the OpenCL device with E and Ev <= 128 one kernel that never
    stores the L x S scores. Raises TypeError for non-Arrays, RuntimeError for mismatched
    sizes, dtypes or leading dims, DeviceMismatchError across devices."""
    op = "attention"
    lead = _attention_args(op, (query, key, value), ("query", "key", "value"))
    _attention_sizes(op, query, key, value)
    e = query.shape[-1]
    scale = float(1.0 / e ** 0.5 if scale is None and e else 1.0 if scale is None else scale)
    fused = _fused_attention(query, value)
    if fused is not None:
        return fused.attention(query, key, value, lead, scale, bool(is_causal))
    L, S, ev = query.shape[-2], key.shape[-2], value.shape[-1]
    if L == 0 or S == 0 or 0 in lead:
        out = _zeros(tuple(lead) + (L, ev), dtype=query.dtype, device=query.device)
        lse = _full(tuple(lead) + (L,), float("-inf"), dtype=query.dtype,
                       device=query.device)
        return out, lse
    s = _scores(query, key, scale, bool(is_causal))
    mx = _uf.max(s, axis=-1, keepdims=True)
    mx = _uf.where(_uf.equal(mx, float("-inf")), 0.0, mx)
    _uf.subtract(s, mx, out=s)
    _uf.exp(s, out=s)
    total = _uf.sum(s, axis=-1, keepdims=True)
    _uf.divide(s, _uf.where(_uf.equal(total, 0.0), 1.0, total), out=s)
    lse = _uf.add(_uf.log(total), mx)
    out = _matmul(s, value)
    if out.shape[:-2] != tuple(lead):
        out = ascontiguousarray(_broadcast_to(out, tuple(lead) + out.shape[-2:]))
    return out, lse.reshape(lse.shape[:-1])


def attention_grad(query, key, value, out, lse, grad_out, scale=None, is_causal=False):
    """The gradients (dquery, dkey, dvalue) of attention's out for the upstream grad_out, from
    attention's inputs and its outputs out and lse; each at the broadcast leading shape (sum
    over the broadcast dims to reduce to an input's shape). Raises as attention, and
    RuntimeError when out, lse or grad_out do not have attention's output shapes."""
    op = "attention_grad"
    lead = _attention_args(op, (query, key, value, out, grad_out),
                           ("query", "key", "value", "out", "grad_out"))
    _attention_sizes(op, query, key, value)
    L, S, e, ev = query.shape[-2], key.shape[-2], query.shape[-1], value.shape[-1]
    want = tuple(lead) + (L, ev)
    for name, a in (("out", out), ("grad_out", grad_out)):
        if a.shape != want:
            raise RuntimeError(f"{op}(): {name} must have shape {_size(want)}, got "
                               f"{_size(a.shape)}")
    if not isinstance(lse, Array) or lse.shape != tuple(lead) + (L,) or lse.dtype != out.dtype:
        raise RuntimeError(f"{op}(): lse must be a {out.dtype.name} Array of shape "
                           f"{_size(tuple(lead) + (L,))}")
    _kernels(op, query, lse)
    scale = float(1.0 / e ** 0.5 if scale is None and e else 1.0 if scale is None else scale)
    fused = _fused_attention(query, value)
    if fused is not None:
        return fused.attention_grad(query, key, value, out, lse, grad_out, lead, scale,
                                    bool(is_causal))
    q, k, v = (_broadcast_lead(a, lead) for a in (query, key, value))
    if L == 0 or S == 0 or 0 in lead:
        return (_zeros(tuple(lead) + (L, e), dtype=out.dtype, device=out.device),
                _zeros(tuple(lead) + (S, e), dtype=out.dtype, device=out.device),
                _zeros(tuple(lead) + (S, ev), dtype=out.dtype, device=out.device))
    s = _scores(q, k, scale, bool(is_causal))
    shift = lse.reshape(lse.shape + (1,))
    seen = _uf.not_equal(shift, float("-inf"))
    _uf.subtract(s, _uf.where(seen, shift, 0.0), out=s)
    p = _uf.where(seen, _uf.exp(s), 0.0)                        # exp(s - lse)
    d = _uf.sum(_uf.multiply(grad_out, out), axis=-1, keepdims=True)
    ds = _matmul(grad_out, _swap_last(v))                        # dp, then ds = p (dp - D)
    _uf.subtract(ds, d, out=ds)
    _uf.multiply(ds, p, out=ds)
    dq = _matmul(ds, k)
    _uf.multiply(dq, scale, out=dq)
    dk = _matmul(_swap_last(ds), q)
    _uf.multiply(dk, scale, out=dk)
    return dq, dk, _matmul(_swap_last(p), grad_out)


# ---------------------------------------------------------------------------------------------
# issue 14 item 3: batch normalisation in training mode, the statistics in one pass and the
# running statistics updated in the same launch on the device (two launches forward, two
# backward); the CPU composes the same formulas from reductions and elementwise ops
# ---------------------------------------------------------------------------------------------

__all__ += ["batch_norm", "batch_norm_grad"]


def _bn_args(op, x, weight, bias, stats):
    """x (N, C, ...) checked, with the per-channel arrays `stats` ({name: array or None}) of
    size C, weight and bias; one float dtype and device. Returns x (any strides)."""
    if not isinstance(x, Array):
        raise TypeError(f"{op}(): argument 'input' must be a carray.Array, not "
                        f"{type(x).__name__}")
    if x.dtype.name not in _FLOATS:
        raise RuntimeError(f"{op}(): input must be float32 or float64, got {x.dtype.name}")
    if x.ndim < 2:
        raise RuntimeError(f"{op}(): input must be (N, C, ...), got shape {_size(x.shape)}")
    C = x.shape[1]
    for name, a in (("weight", weight), ("bias", bias), *stats.items()):
        if a is None:
            continue
        if not _checked(a, name, op, x.dtype.name).is_contiguous() and \
                name.startswith("running"):
            raise ValueError(f"{op}(): {name} must be C-contiguous (it is updated in place)")
        if a.shape != (C,):
            raise RuntimeError(f"{op}(): {name} must have shape [{C}] (one value per channel), "
                               f"got {_size(a.shape)}")
    _kernels(op, x, weight, bias, *stats.values())
    return x


def batch_norm(input, weight=None, bias=None, eps=1e-5, running_mean=None, running_var=None,
               momentum=0.1):
    """Batch normalisation with the batch's statistics (training mode) over input (N, C, ...):
    y = (x - mean) / sqrt(var + eps) * weight + bias, mean and the biased var per channel over
    every other dim. Returns (y, mean, var, invstd), the last three of shape (C,), invstd =
    1 / sqrt(var + eps). With running_mean and running_var (C,) given, they are updated in
    place: r = (1 - momentum) r + momentum s, with the unbiased variance for running_var.
    Raises TypeError for a non-Array, RuntimeError for dtypes or sizes that do not fit,
    ValueError for only one of the running statistics or one value per channel, and
    DeviceMismatchError across devices."""
    op = "batch_norm"
    x = _bn_args(op, input, weight, bias, {"running_mean": running_mean,
                                           "running_var": running_var})
    if (running_mean is None) != (running_var is None):
        raise ValueError(f"{op}(): give both running_mean and running_var, or neither")
    m = x.size // x.shape[1] if x.shape[1] else 0
    if m <= 1 and x.shape[1]:
        raise ValueError(f"{op}(): expected more than 1 value per channel, got input size "
                         f"{_size(x.shape)}")
    eps, momentum = float(eps), float(momentum)
    if x.device == "gpu":
        return _kernels(op, x).batch_norm(x, weight, bias, eps, running_mean, running_var,
                                          momentum)
    axes = (0,) + tuple(range(2, x.ndim))
    cshape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    mean = _uf.mean(x, axis=axes, keepdims=True)
    xc = _uf.subtract(x, mean)
    var = _uf.mean(_uf.multiply(xc, xc), axis=axes, keepdims=True)
    invstd = _uf.reciprocal(_uf.sqrt(_uf.add(var, eps)))
    y = _uf.multiply(xc, invstd, out=xc)
    if weight is not None:
        _uf.multiply(y, weight.reshape(cshape), out=y)
    if bias is not None:
        _uf.add(y, bias.reshape(cshape), out=y)
    mean, var, invstd = (a.reshape((x.shape[1],)) for a in (mean, var, invstd))
    if running_mean is not None:
        for r, s in ((running_mean, mean), (running_var, _uf.multiply(var, m / (m - 1)))):
            _uf.multiply(r, 1.0 - momentum, out=r)
            _uf.add(r, _uf.multiply(s, momentum), out=r)
    return y, mean, var, invstd


def batch_norm_grad(grad_output, input, mean, invstd, weight=None,
                    output_mask=(True, True, True)):
    """The gradients (dinput, dweight, dbias) of batch_norm from grad_output, the input and the
    mean and invstd batch_norm returned: with xhat = (x - mean) invstd and M values per channel,
        dinput = (g - sum(g) / M - xhat sum(g xhat) / M) invstd weight
        dweight = sum(g xhat),  dbias = sum(g)    (sums over every dim but the channels')
    Entries whose output_mask is False are None. Raises as batch_norm."""
    op = "batch_norm_grad"
    x = _bn_args(op, input, weight, None, {"mean": mean, "invstd": invstd})
    g = _checked(grad_output, "grad_output", op, x.dtype.name)
    if g.shape != x.shape:
        raise RuntimeError(f"{op}(): grad_output must have the input's shape "
                           f"{_size(x.shape)}, got {_size(g.shape)}")
    _kernels(op, g, x)
    if x.device == "gpu":
        return _kernels(op, x).batch_norm_grad(g, x, mean, invstd, weight, tuple(output_mask))
    axes = (0,) + tuple(range(2, x.ndim))
    cshape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    xhat = _uf.multiply(_uf.subtract(x, mean.reshape(cshape)), invstd.reshape(cshape))
    sum_g = _uf.sum(g, axis=axes, keepdims=True)
    sum_gx = _uf.sum(_uf.multiply(g, xhat), axis=axes, keepdims=True)
    gx = None
    if output_mask[0]:
        m = g.size // g.shape[1] if g.size else 1
        scale = invstd if weight is None else _uf.multiply(invstd, weight)
        gx = _uf.subtract(g, _uf.multiply(sum_g, 1.0 / m))
        _uf.subtract(gx, _uf.multiply(xhat, _uf.multiply(sum_gx, 1.0 / m)), out=gx)
        _uf.multiply(gx, scale.reshape(cshape), out=gx)
    c = x.shape[1]
    return (gx, sum_gx.reshape((c,)) if output_mask[1] else None,
            sum_g.reshape((c,)) if output_mask[2] else None)


# float16/bfloat16 arrays: every function that returns new arrays computes them in float32 and
# rounds the results back (carray/ops/_half.py); the in-place optimizer updates take float32/64
def _accept_half():
    from carray.ops._half import accepting_half
    for name in __all__:
        if not name.endswith("_step") and name != "causal_mask":
            globals()[name] = accepting_half(globals()[name])


_accept_half()
