"""torch.special's functions that autograd has (h12): expit, logit, erf, erfc, erfinv, softmax,
log_softmax, logsumexp, exp2, each an autograd op or a composition of them."""

from autograd.ops import extra_functions as _extra
from autograd.ops import torch_functions as _tf

__all__ = ["erf", "erfc", "erfinv", "exp2", "expit", "log_softmax", "logit", "logsumexp",
           "softmax"]

expit = _tf.sigmoid
erf = _tf.erf
erfinv = _tf.erfinv
erfc = _extra.erfc
exp2 = _extra.exp2
logit = _extra.logit
logsumexp = _tf.logsumexp


def softmax(input, dim, *, dtype=None):
    """exp(x) / sum(exp(x)) along dim (torch.special.softmax)."""
    return _tf.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """log(softmax(x)) along dim (torch.special.log_softmax)."""
    return _tf.log_softmax(input, dim, dtype)
