"""torch.nn.modules.conv: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.conv import (  # noqa: F401
    Conv1d,
    Conv2d,
    ConvTranspose1d,
    ConvTranspose2d,
    _ConvNd,
    _ConvTransposeNd,
)
