"""torch.nn.modules.rnn: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.rnn import (  # noqa: F401
    GRU,
    LSTM,
    RNN,
    GRUCell,
    LSTMCell,
    RNNBase,
    RNNCell,
    RNNCellBase,
)
