"""torch.nn.modules.normalization: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.normalization import (  # noqa: F401
    GroupNorm,
    LayerNorm,
    RMSNorm,
)
