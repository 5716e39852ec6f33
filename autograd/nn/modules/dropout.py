"""torch.nn.modules.dropout: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.dropout import (  # noqa: F401
    Dropout,
    Dropout1d,
    Dropout2d,
)
