"""Activation layers: ReLU, Sigmoid, Tanh, Softmax, LogSoftmax."""

from autograd.nn import functional as F
from autograd.nn.module import Module

__all__ = ["LogSoftmax", "ReLU", "Sigmoid", "Softmax", "Tanh"]


class ReLU(Module):
    """max(x, 0) elementwise (in place on the input when inplace=True)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    """1 / (1 + exp(-x)) elementwise."""

    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    """tanh(x) elementwise."""

    def forward(self, input):
        return F.tanh(input)


class Softmax(Module):
    """exp(x) / sum(exp(x)) along dim."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """x - logsumexp(x) along dim."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"
