"""The pooling layers' base classes, as torch.nn.modules.pooling's (programs isinstance-check
them): _MaxPoolNd (MaxPool1d/2d), _AvgPoolNd (AvgPool1d/2d), _AdaptiveAvgPoolNd and
_AdaptiveMaxPoolNd."""

from autograd.nn.module import Module


class _MaxPoolNd(Module):
    """kernel_size, stride (default kernel_size), padding, dilation, return_indices and
    ceil_mode, kept as given."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class _AvgPoolNd(Module):
    """The average pools' base: their repr."""

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AdaptivePoolNd(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveAvgPoolNd(_AdaptivePoolNd):
    """AdaptiveAvgPool1d/2d's base: output_size."""

    def __init__(self, output_size):
        super().__init__(output_size)
        del self.return_indices


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    """AdaptiveMaxPool1d/2d's base: output_size and return_indices."""
