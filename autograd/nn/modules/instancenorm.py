"""torch.nn.modules.instancenorm: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.normalization import (  # noqa: F401
    InstanceNorm1d,
    InstanceNorm2d,
    _InstanceNorm,
)
