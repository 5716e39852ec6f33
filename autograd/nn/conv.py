"""Conv2d, MaxPool2d and AvgPool2d layers (NCHW); Conv1d, ConvTranspose1d, ConvTranspose2d."""

import math

from autograd import factories
from autograd.nn import functional as F
from autograd.nn import init
from autograd.nn._pool_base import _AvgPoolNd, _MaxPoolNd
from autograd.nn.module import Module
from autograd.nn.parameter import Parameter

__all__ = ["AvgPool2d", "Conv2d", "MaxPool2d",
           "Conv1d", "ConvTranspose1d", "ConvTranspose2d"]  # h6

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _ConvNd(Module):
    """What Conv1d, Conv2d, ConvTranspose1d and ConvTranspose2d share with PyTorch's _ConvNd
    (their base class, as in torch.nn.modules.conv): argument
    checks, parameters (weight (out, in / groups, *k), or (in, out / groups, *k) transposed),
    default initialisation and repr. ValueError for groups that do not divide the channels, an
    unknown padding string or padding mode, and padding='same' with a stride."""

    _nd = 1
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None, output_padding=0):
        super().__init__()
        n = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _ntuple(padding, n)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        if self._transposed and padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{type(self).__name__}')
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding
        self.dilation = _ntuple(dilation, n)
        self.transposed = self._transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        if self._transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(factories.empty(shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(factories.empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraw weight and bias with PyTorch's default initialisation."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _pad_widths(self):
        """F.pad's widths (last dim first) for self.padding, as Conv2d._pad_widths."""
        if self.padding == "valid":
            return (0, 0) * self._nd
        out = ()
        for i in reversed(range(self._nd)):
            if self.padding == "same":
                t = self.dilation[i] * (self.kernel_size[i] - 1)
                out += (t // 2, t - t // 2)
            else:
                out += (self.padding[i], self.padding[i])
        return out

    def extra_repr(self):
        n = self._nd
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv2d(_ConvNd):
    """2-d cross-correlation of (N, C_in, H, W) inputs with a weight (C_out, C_in / groups,
    kH, kW) plus bias, initialised as PyTorch (kaiming_uniform_(a=sqrt(5)), bias
    U(+-1/sqrt(fan_in))). ValueError for channels not divisible by groups, an unknown padding
    string or padding mode, and padding='same' with a stride."""

    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        """Padding modes other than 'zeros' pad with F.pad first."""
        if self.padding_mode == "zeros":
            return F.conv2d(input, self.weight, self.bias, self.stride, self.padding,
                            self.dilation, self.groups)
        padded = F.pad(input, self._pad_widths(), mode=self.padding_mode)
        return F.conv2d(padded, self.weight, self.bias, self.stride, 0, self.dilation,
                        self.groups)


class MaxPool2d(_MaxPoolNd):
    """Maximum over kernel_size windows moved by stride (default kernel_size)."""

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool2d(_AvgPoolNd):
    """Mean over kernel_size windows moved by stride (default kernel_size); padding counts in
    the mean unless count_include_pad=False."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


# ---------------------------------------------------------------------------------------------
# Conv1d and the transposed convolutions (h6: convolutions, pooling, resampling)
# ---------------------------------------------------------------------------------------------


class Conv1d(_ConvNd):
    """1-d cross-correlation of (N, C_in, L) inputs with a weight (C_out, C_in / groups, k)
    plus bias (torch.nn.Conv1d); initialisation and errors as Conv2d."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        """Padding modes other than 'zeros' pad with F.pad first."""
        if self.padding_mode == "zeros":
            return F.conv1d(input, self.weight, self.bias, self.stride, self.padding,
                            self.dilation, self.groups)
        padded = F.pad(input, self._pad_widths(), mode=self.padding_mode)
        return F.conv1d(padded, self.weight, self.bias, self.stride, 0, self.dilation,
                        self.groups)


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def _output_padding(self, input, output_size):
        """output_padding, or the one that makes the output output_size (PyTorch's rule):
        ValueError for a size outside [min, min + stride - 1] or of the wrong length."""
        if output_size is None:
            return self.output_padding
        n = self._nd
        lead = 2 if input.ndim == n + 2 else 1
        output_size = tuple(output_size)
        if len(output_size) == lead + n:
            output_size = output_size[lead:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must "
                             f"have {n} or {lead + n} elements (got {len(output_size)})")
        mins = [(input.shape[lead + d] - 1) * self.stride[d] - 2 * self.padding[d]
                + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        maxs = [m + s - 1 for m, s in zip(mins, self.stride)]
        for size, lo, hi in zip(output_size, mins, maxs):
            if size < lo or size > hi:
                raise ValueError(f"requested an output size of {list(output_size)}, but valid "
                                 f"sizes range from {mins} to {maxs} (for an input of "
                                 f"{list(input.shape[lead:])})")
        return tuple(s - m for s, m in zip(output_size, mins))


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution of (N, C_in, L) inputs (torch.nn.ConvTranspose1d): weight
    (C_in, C_out / groups, k); forward(input, output_size=None) picks the output_padding that
    gives output_size. ValueError for padding modes other than 'zeros' and sizes that no
    output_padding reaches."""

    def forward(self, input, output_size=None):
        op = self._output_padding(input, output_size)
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  op, self.groups, self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution of (N, C_in, H, W) inputs (torch.nn.ConvTranspose2d): weight
    (C_in, C_out / groups, kH, kW); forward(input, output_size=None) as ConvTranspose1d's."""

    _nd = 2

    def forward(self, input, output_size=None):
        op = self._output_padding(input, output_size)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  op, self.groups, self.dilation)
