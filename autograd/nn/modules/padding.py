"""torch.nn.modules.padding: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.padding import (  # noqa: F401
    ConstantPad1d,
    ConstantPad2d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReplicationPad1d,
    ReplicationPad2d,
    ZeroPad1d,
    ZeroPad2d,
    _ConstantPadNd,
    _ReflectionPadNd,
    _ReplicationPadNd,
)
