"""Conv2d, MaxPool2d and AvgPool2d layers (NCHW)."""

import math

from autograd import factories
from autograd.nn import functional as F
from autograd.nn import init
from autograd.nn.module import Module
from autograd.nn.parameter import Parameter

__all__ = ["AvgPool2d", "Conv2d", "MaxPool2d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


class Conv2d(Module):
    """2-d cross-correlation of (N, C_in, H, W) inputs with a weight (C_out, C_in / groups,
    kH, kW) plus bias, initialised as PyTorch (kaiming_uniform_(a=sqrt(5)), bias
    U(+-1/sqrt(fan_in))). ValueError for channels not divisible by groups, an unknown padding
    string or padding mode, and padding='same' with a stride."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__()
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
            if padding == "same" and any(s != 1 for s in _pair(stride)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _pair(padding)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride)
        self.padding = padding
        self.dilation = _pair(dilation)
        self.groups = groups
        self.padding_mode = padding_mode
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

    def forward(self, input):
        """Padding modes other than 'zeros' pad with F.pad first."""
        if self.padding_mode == "zeros":
            return F.conv2d(input, self.weight, self.bias, self.stride, self.padding,
                            self.dilation, self.groups)
        padded = F.pad(input, self._pad_widths(), mode=self.padding_mode)
        return F.conv2d(padded, self.weight, self.bias, self.stride, 0, self.dilation,
                        self.groups)

    def _pad_widths(self):
        """F.pad's (left, right, top, bottom) for self.padding; 'same' puts the odd one of
        dilation * (kernel - 1) on the right/bottom, as PyTorch."""
        if self.padding == "valid":
            return (0, 0, 0, 0)
        if self.padding == "same":
            th, tw = (d * (k - 1) for d, k in zip(self.dilation, self.kernel_size))
            return (tw // 2, tw - tw // 2, th // 2, th - th // 2)
        ph, pw = self.padding
        return (pw, pw, ph, ph)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class MaxPool2d(Module):
    """Maximum over kernel_size windows moved by stride (default kernel_size)."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
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

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
