"""torch.nn.modules.module: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.module import (  # noqa: F401
    Module,
)
