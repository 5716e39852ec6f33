"""torch.nn.modules.sparse: the same classes, from autograd/nn (imports, not copies)."""

from autograd.nn.sparse import (  # noqa: F401
    Embedding,
    EmbeddingBag,
)
