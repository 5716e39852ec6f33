"""torch.nn.modules.container: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.container import (  # noqa: F401
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
