"""torch.nn.modules.loss: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.loss import (  # noqa: F401
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
    _Loss,
    _WeightedLoss,
)
