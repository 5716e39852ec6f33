"""torch.nn.modules.activation: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.activation import (  # noqa: F401
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from autograd.nn.attention import (  # noqa: F401
    MultiheadAttention,
)
