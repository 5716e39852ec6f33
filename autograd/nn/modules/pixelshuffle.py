"""torch.nn.modules.pixelshuffle: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.pixelshuffle import (  # noqa: F401
    PixelShuffle,
    PixelUnshuffle,
)
