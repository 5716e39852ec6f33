"""LayerNorm (torch.nn.LayerNorm).

A minimal version composed of differentiable ops, written for the transformer layers (area h4);
the full one (with its own Function and F.layer_norm) being written in another branch replaces
this file when the branches merge.
"""

import numbers

from autograd import factories
from autograd.nn import init
from autograd.nn.module import Module
from autograd.nn.parameter import Parameter

__all__ = ["LayerNorm"]


class LayerNorm(Module):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape) dims
    (biased variance), weight ones and bias zeros of normalized_shape when elementwise_affine
    (bias only when bias=True). RuntimeError when the input's trailing dims differ from
    normalized_shape."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(factories.empty(self.normalized_shape, device=device,
                                                    dtype=dtype))
            if bias:
                self.bias = Parameter(factories.empty(self.normalized_shape, device=device,
                                                      dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """weight = 1, bias = 0."""
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        shape = self.normalized_shape
        n = len(shape)
        if tuple(input.shape[input.ndim - n:]) != shape or input.ndim < n:
            raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                               f"[*, {', '.join(str(s) for s in shape)}], but got input of size"
                               f"{list(input.shape)}")
        dims = tuple(range(input.ndim - n, input.ndim))
        mean = input.mean(dim=dims, keepdim=True)
        centred = input - mean
        var = (centred * centred).mean(dim=dims, keepdim=True)
        out = centred * (var + self.eps).rsqrt()
        if self.weight is not None:
            out = out * self.weight
        if self.bias is not None:
            out = out + self.bias
        return out

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
