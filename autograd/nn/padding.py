"""Padding layers: ZeroPad1d/2d, ConstantPad1d/2d, ReflectionPad1d/2d, ReplicationPad1d/2d,
each F.pad with a fixed mode; padding is an int (every side) or a tuple (left, right[, top,
bottom]), as in PyTorch."""

from autograd.nn import functional as F
from autograd.nn.module import Module

__all__ = ["ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d",
           "ReplicationPad1d", "ReplicationPad2d", "ZeroPad1d", "ZeroPad2d"]


class _PadNd(Module):
    _n = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        if isinstance(padding, (tuple, list)):
            if len(padding) != 2 * self._n:
                raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple of "
                                 f"{2 * self._n} ints, got {padding!r}")
            self.padding = tuple(padding)
        else:
            self.padding = (padding,) * (2 * self._n)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with value (torch.nn.ConstantPad1d)."""


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dims with value (torch.nn.ConstantPad2d)."""

    _n = 2


class ZeroPad1d(ConstantPad1d):
    """Pads the last dim with zeros (torch.nn.ZeroPad1d)."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pads the last two dims with zeros (torch.nn.ZeroPad2d)."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class _ReflectionPadNd(_PadNd):
    """ReflectionPad1d/2d's base (as torch.nn.modules.padding's)."""

    _mode = "reflect"


class _ReplicationPadNd(_PadNd):
    """ReplicationPad1d/2d's base (as torch.nn.modules.padding's)."""

    _mode = "replicate"


class ReflectionPad1d(_ReflectionPadNd):
    """Pads the last dim with its mirror image, edge not repeated (torch.nn.ReflectionPad1d)."""


class ReflectionPad2d(_ReflectionPadNd):
    """Pads the last two dims by reflection (torch.nn.ReflectionPad2d)."""

    _n = 2


class ReplicationPad1d(_ReplicationPadNd):
    """Pads the last dim by repeating its edge values (torch.nn.ReplicationPad1d)."""


class ReplicationPad2d(_ReplicationPadNd):
    """Pads the last two dims by repeating the edges (torch.nn.ReplicationPad2d)."""

    _n = 2
