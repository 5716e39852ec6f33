"""torch.nn.modules.transformer: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.transformer import (  # noqa: F401
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
