"""torch.nn.modules.upsampling: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.upsampling import (  # noqa: F401
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)
