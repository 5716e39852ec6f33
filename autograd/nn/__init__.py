"""autograd.nn: neural-network layers and functions (torch.nn)."""

from autograd.nn import (
                              functional,  # noqa: F401
                              init,  # noqa: F401,E402
)
from autograd.nn.activation import LogSoftmax, ReLU, Sigmoid, Softmax, Tanh  # noqa: F401,E402
from autograd.nn.batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401,E402
from autograd.nn.container import ModuleList, Sequential  # noqa: F401,E402
from autograd.nn.conv import AvgPool2d, Conv2d, MaxPool2d  # noqa: F401,E402
from autograd.nn.dropout import Dropout  # noqa: F401,E402
from autograd.nn.linear import Flatten, Identity, Linear  # noqa: F401,E402
from autograd.nn.loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss  # noqa: F401,E402
from autograd.nn.module import Module  # noqa: F401,E402
from autograd.nn.parameter import Parameter  # noqa: F401,E402

# isort: split
# h3: normalisation, activations, embeddings, containers, losses
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
    Mish,
    PReLU,
    ReLU6,
    SiLU,
    Softplus,
    Softsign,
    Tanhshrink,
    Threshold,
)
from autograd.nn.container import ModuleDict, ParameterDict, ParameterList  # noqa: F401
from autograd.nn.dropout import Dropout1d, Dropout2d  # noqa: F401
from autograd.nn.linear import Unflatten  # noqa: F401
from autograd.nn.loss import CosineEmbeddingLoss, HuberLoss, KLDivLoss, SmoothL1Loss  # noqa: F401
from autograd.nn.normalization import (  # noqa: F401
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    LayerNorm,
    RMSNorm,
)
from autograd.nn.sparse import Embedding, EmbeddingBag  # noqa: F401
