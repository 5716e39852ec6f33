"""Embedding layers: Embedding (a lookup table of rows) and EmbeddingBag (sums, means or maxes
of bags of rows), with PyTorch's parameters, initialisation and checks."""

from autograd import factories
from autograd.grad_mode import no_grad
from autograd.nn import functional as F
from autograd.nn import init
from autograd.nn.module import Module
from autograd.nn.parameter import Parameter

__all__ = ["Embedding", "EmbeddingBag"]


def _padding_index(padding_idx, num_embeddings):
    """padding_idx wrapped into [0, num_embeddings) (AssertionError outside [-V, V))."""
    if padding_idx is None:
        return None
    if padding_idx > 0 and padding_idx >= num_embeddings or \
            padding_idx < 0 and padding_idx < -num_embeddings:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx % num_embeddings


def _check_not_sparse(sparse):
    if sparse:
        raise RuntimeError("sparse gradients are not supported by autograd; use sparse=False")


def _make_weight(num_embeddings, embedding_dim, given, device, dtype):
    """(the weight Parameter, whether it is fresh and needs initialising)."""
    if given is None:
        return Parameter(factories.empty((num_embeddings, embedding_dim), dtype=dtype,
                                         device=device)), True
    if tuple(given.shape) != (num_embeddings, embedding_dim):
        raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
    return Parameter(given), False


def _check_pretrained(embeddings):
    if embeddings.ndim != 2:
        raise AssertionError("Embeddings parameter is expected to be 2-dimensional")


class Embedding(Module):
    """A (num_embeddings, embedding_dim) table `weight` (drawn from N(0, 1); the padding_idx row
    is 0 and gets no gradient); forward looks up the rows at int64 indices. max_norm rescales
    the looked-up rows in place to at most that norm. AssertionError for a padding_idx outside
    [-num_embeddings, num_embeddings), RuntimeError for sparse=True (not supported)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        _check_not_sparse(sparse)
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _padding_index(padding_idx, num_embeddings)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.weight, fresh = _make_weight(num_embeddings, embedding_dim, _weight, device, dtype)
        self.weight.requires_grad_(not _freeze)
        self.sparse = sparse
        if fresh:
            self.reset_parameters()

    def reset_parameters(self):
        """weight ~ N(0, 1), with the padding_idx row zeroed."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is embeddings (2-d; shared, not copied), frozen unless
        freeze=False. AssertionError for a tensor that is not 2-d."""
        _check_pretrained(embeddings)
        rows, cols = embeddings.shape
        return cls(rows, cols, _weight=embeddings, _freeze=freeze, padding_idx=padding_idx,
                   max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    """Sums, means (default) or maxes of bags of rows of a (num_embeddings, embedding_dim) table
    `weight` (drawn from N(0, 1), padding_idx row 0): forward(input, offsets=None,
    per_sample_weights=None) as autograd.nn.functional.embedding_bag."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        _check_not_sparse(sparse)
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
            raise AssertionError("padding_idx must be within num_embeddings")
        self.padding_idx = None if padding_idx is None else padding_idx % num_embeddings
        self.weight, fresh = _make_weight(num_embeddings, embedding_dim, _weight, device, dtype)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset
        if fresh:
            self.reset_parameters()

    def reset_parameters(self):
        """weight ~ N(0, 1), with the padding_idx row zeroed."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):
        """An EmbeddingBag whose weight is embeddings (2-d), frozen unless freeze=False."""
        _check_pretrained(embeddings)
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  embeddings, include_last_offset, padding_idx)
        bag.weight.requires_grad_(not freeze)
        return bag
