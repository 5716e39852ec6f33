"""torch.nn.modules.fold: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.fold import (  # noqa: F401
    Fold,
    Unfold,
)
