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

# -- h7: nn.utils --
# isort: split
from autograd.nn import utils  # noqa: F401
