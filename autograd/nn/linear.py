"""Linear, Identity and Flatten layers."""

import math

from autograd import factories
from autograd.nn import functional as F
from autograd.nn import init
from autograd.nn.module import Module
from autograd.nn.parameter import Parameter

__all__ = ["Flatten", "Identity", "Linear"]


class Identity(Module):
    """Returns its input (arguments are accepted and ignored)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x @ weight.T + bias, weight (out_features, in_features) ~ kaiming_uniform_(a=sqrt(5))
    and bias ~ U(-1/sqrt(in_features), 1/sqrt(in_features)), as PyTorch."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(factories.empty((out_features, in_features), dtype=dtype,
                                                device=device))
        if bias:
            self.bias = Parameter(factories.empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraw weight and bias with PyTorch's default initialisation."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one (by default all but the batch dim)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
