"""autograd.nn: neural-network layers and functions (torch.nn).

The Modules live in one file per family (linear, conv, pooling, normalization, activation,
attention, transformer, rnn, sparse, ...); nn.functional holds the functions, nn.init the
initialisations, nn.utils the gradient clipping and parameter conversions, nn.parallel
DataParallel.
"""

from autograd.nn import functional, init, parallel, utils
from autograd.nn.activation import (
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
from autograd.nn.attention import MultiheadAttention
from autograd.nn.batchnorm import BatchNorm1d, BatchNorm2d
from autograd.nn.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from autograd.nn.conv import AvgPool2d, Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d, MaxPool2d
from autograd.nn.dropout import Dropout, Dropout1d, Dropout2d
from autograd.nn.fold import Fold, Unfold
from autograd.nn.linear import Flatten, Identity, Linear, Unflatten
from autograd.nn.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from autograd.nn.module import Module
from autograd.nn.normalization import GroupNorm, InstanceNorm1d, InstanceNorm2d, LayerNorm, RMSNorm
from autograd.nn.padding import (
    ConstantPad1d,
    ConstantPad2d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReplicationPad1d,
    ReplicationPad2d,
    ZeroPad1d,
    ZeroPad2d,
)
from autograd.nn.parallel import DataParallel
from autograd.nn.parameter import Parameter
from autograd.nn.pixelshuffle import PixelShuffle, PixelUnshuffle
from autograd.nn.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    MaxPool1d,
)
from autograd.nn.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from autograd.nn.sparse import Embedding, EmbeddingBag
from autograd.nn.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from autograd.nn.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

# -- torch.nn.modules layout (h12) --
# isort: split
from autograd.nn import modules  # noqa: E402,F401
