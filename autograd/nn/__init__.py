"""autograd.nn: neural-network layers and functions (torch.nn)."""

from autograd.nn import (
                              functional,  # noqa: F401
                              init,  # noqa: F401,E402
)
from autograd.nn.activation import LogSoftmax, ReLU, Sigmoid, Softmax, Tanh  # noqa: F401,E402

# area h4: attention and transformers (normalization.LayerNorm: a minimal stand-in until the
# LayerNorm branch merges)
from autograd.nn.attention import MultiheadAttention  # noqa: F401,E402
from autograd.nn.batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401,E402
from autograd.nn.container import ModuleList, Sequential  # noqa: F401,E402
from autograd.nn.conv import AvgPool2d, Conv2d, MaxPool2d  # noqa: F401,E402
from autograd.nn.dropout import Dropout  # noqa: F401,E402
from autograd.nn.linear import Flatten, Identity, Linear  # noqa: F401,E402
from autograd.nn.loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss  # noqa: F401,E402
from autograd.nn.module import Module  # noqa: F401,E402
from autograd.nn.normalization import LayerNorm  # noqa: F401,E402
from autograd.nn.parameter import Parameter  # noqa: F401,E402
from autograd.nn.transformer import (  # noqa: F401,E402
                              Transformer,
                              TransformerDecoder,
                              TransformerDecoderLayer,
                              TransformerEncoder,
                              TransformerEncoderLayer,
)

# -- h1 (PyTorch's surface): nn.parallel and nn.DataParallel, as torch.nn ----------------------
# isort: split
from autograd.nn import parallel  # noqa: F401,E402
from autograd.nn.parallel import DataParallel  # noqa: F401,E402

# recurrent layers (h5)
from autograd.nn.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell  # noqa: F401,E402

# convolutions, pooling, resampling (h6)
# isort: split
from autograd.nn.conv import Conv1d, ConvTranspose1d, ConvTranspose2d  # noqa: F401,E402
from autograd.nn.fold import Fold, Unfold  # noqa: F401,E402
from autograd.nn.padding import (  # noqa: F401,E402
    ConstantPad1d,
    ConstantPad2d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReplicationPad1d,
    ReplicationPad2d,
    ZeroPad1d,
    ZeroPad2d,
)
from autograd.nn.pixelshuffle import PixelShuffle, PixelUnshuffle  # noqa: F401,E402
from autograd.nn.pooling import (  # noqa: F401,E402
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    MaxPool1d,
)
from autograd.nn.upsampling import (  # noqa: F401,E402
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)

# -- h7: nn.utils --
# isort: split
from autograd.nn import utils  # noqa: F401
