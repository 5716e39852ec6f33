"""torch.nn.modules.flatten: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.linear import (  # noqa: F401
    Flatten,
    Unflatten,
)
