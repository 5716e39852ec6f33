"""torch.nn.modules' layout (h12): submodules (activation, conv, loss, ...) that re-export
autograd.nn's classes, for programs that import e.g. `from torch.nn.modules.loss import _Loss`."""

from autograd.nn.modules import (  # noqa: F401
    activation,
    batchnorm,
    container,
    conv,
    dropout,
    flatten,
    fold,
    instancenorm,
    linear,
    loss,
    module,
    normalization,
    padding,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    transformer,
    upsampling,
)
