"""torch.nn.modules.batchnorm: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.batchnorm import (  # noqa: F401
    BatchNorm1d,
    BatchNorm2d,
    _BatchNorm,
    _NormBase,
)
