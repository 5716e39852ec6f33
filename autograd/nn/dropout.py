"""Dropout: zeroes elements with probability p while training; Dropout1d/Dropout2d zero whole
channels."""

from autograd.nn import functional as F
from autograd.nn.module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d"]


class Dropout(Module):
    """In training mode, zero each element with probability p and scale the rest by 1/(1-p);
    identity in eval mode. ValueError when p is outside [0, 1]."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


# h3: channel dropout


class Dropout1d(Dropout):
    """In training mode, zero each channel of an (N, C, L) or (C, L) input with probability p and
    scale the rest by 1/(1-p)."""

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    """In training mode, zero each channel of an (N, C, H, W) input with probability p and scale
    the rest by 1/(1-p)."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)
