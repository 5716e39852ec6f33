"""The torch.* (top-level) forms of nn functions (h12): torch.conv2d, torch.layer_norm,
torch.batch_norm, torch.embedding, torch.dropout ... with torch's own argument orders, calling
autograd.nn.functional."""

from autograd.nn import functional as F

__all__ = ["batch_norm", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d",
           "cosine_similarity", "dropout", "embedding", "group_norm", "instance_norm",
           "layer_norm", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle"]

# the same arguments as in torch.nn.functional
conv1d = F.conv1d
conv2d = F.conv2d
conv_transpose1d = F.conv_transpose1d
conv_transpose2d = F.conv_transpose2d
pixel_shuffle = F.pixel_shuffle
pixel_unshuffle = F.pixel_unshuffle
cosine_similarity = F.cosine_similarity
pairwise_distance = F.pairwise_distance


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    """torch.layer_norm: F.layer_norm (cudnn_enable is ignored)."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """torch.group_norm: F.group_norm (cudnn_enabled is ignored)."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """torch.batch_norm (every argument required, weight and bias first): F.batch_norm."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled):
    """torch.instance_norm (every argument required): F.instance_norm."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def embedding(weight, input, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """torch.embedding (weight first; padding_idx -1 means none): F.embedding."""
    return F.embedding(input, weight, None if padding_idx < 0 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def dropout(input, p, train):
    """torch.dropout (p and train required): F.dropout."""
    return F.dropout(input, p, train)
