"""1-d and adaptive pooling layers (MaxPool2d and AvgPool2d are in conv.py)."""

from autograd.nn import functional as F
from autograd.nn._pool_base import (
    _AdaptiveAvgPoolNd,
    _AdaptiveMaxPoolNd,
    _AvgPoolNd,
    _MaxPoolNd,
)

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AvgPool1d", "MaxPool1d"]


class MaxPool1d(_MaxPoolNd):
    """Maximum over kernel_size windows of (N, C, L) moved by stride (default kernel_size)
    (torch.nn.MaxPool1d); with return_indices also the argmax positions."""

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool1d(_AvgPoolNd):
    """Mean over kernel_size windows of (N, C, L) moved by stride (default kernel_size)
    (torch.nn.AvgPool1d); padding counts in the mean unless count_include_pad=False."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


def _single(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, L) to output_size windows of adaptive size
    (torch.nn.AdaptiveAvgPool1d)."""

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, H, W) to output_size (an int, a pair, None for the input's
    size) windows of adaptive size (torch.nn.AdaptiveAvgPool2d)."""

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, L) to output_size windows of adaptive size, optionally with the
    argmax positions (torch.nn.AdaptiveMaxPool1d)."""

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, H, W) to output_size windows of adaptive size, optionally with
    the flat (H x W) argmax positions (torch.nn.AdaptiveMaxPool2d)."""

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)
