"""torch.nn.modules.pooling: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn._pool_base import (  # noqa: F401
    _AdaptiveAvgPoolNd,
    _AdaptiveMaxPoolNd,
    _AvgPoolNd,
    _MaxPoolNd,
)
from autograd.nn.conv import (  # noqa: F401
    AvgPool2d,
    MaxPool2d,
)
from autograd.nn.pooling import (  # noqa: F401
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    MaxPool1d,
)
