"""torch.* functions composed from autograd's differentiable ops (h12): dist, exp2, erfc, logit,
kron, cross, pdist, relu_. Gradients come from the ops they are built of."""

import carray
from autograd.ops import torch_functions as tf
from autograd.ops._util import norm_dim

__all__ = ["cross", "dist", "erfc", "exp2", "kron", "logit", "pdist", "relu_"]


def dist(input, other, p=2):
    """||input - other||_p over all elements (the inputs broadcast)."""
    return tf.norm(input - other, p)


def exp2(input):
    """2 ** input elementwise."""
    return 2.0 ** input


def erfc(input):
    """1 - erf(input). Computed as that difference: accurate to float64 rounding in absolute
    terms, so erfc(x) for x > ~5 (tiny values) loses relative accuracy."""
    return 1 - tf.erf(input)


def logit(input, eps=None):
    """log(p / (1 - p)), with p = input clamped to [eps, 1 - eps] when eps is given."""
    if eps is not None:
        input = tf.clamp(input, eps, 1 - eps)
    return tf.log(input / (1 - input))


def kron(input, other):
    """The Kronecker product: out[i * B + j] = input[i] * other[j] per dim (the fewer-dim
    argument padded with leading 1s)."""
    nd = max(input.ndim, other.ndim)
    a = input.reshape((1,) * (nd - input.ndim) + tuple(input.shape))
    b = other.reshape((1,) * (nd - other.ndim) + tuple(other.shape))
    sa, sb = tuple(a.shape), tuple(b.shape)
    a = a.reshape(tuple(x for n in sa for x in (n, 1)))
    b = b.reshape(tuple(x for n in sb for x in (1, n)))
    return (a * b).reshape(tuple(m * n for m, n in zip(sa, sb)))


def cross(input, other, dim=None):
    """The 3-vector cross product along dim (None: the first dim of size 3, as torch.cross);
    the inputs broadcast. RuntimeError when that dim does not have size 3."""
    shape = tuple(carray.broadcast_shapes(tuple(input.shape), tuple(other.shape)))
    a, b = input.expand(shape), other.expand(shape)
    if dim is None:
        dims = [i for i, n in enumerate(shape) if n == 3]
        if not dims:
            raise RuntimeError("no dimension of size 3 in input")
        d = dims[0]
    else:
        d = norm_dim(dim, len(shape))
    if shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {d - len(shape)} must have length "
                           f"3. Got {input.shape[d] if input.ndim == len(shape) else 1} and "
                           f"{other.shape[d] if other.ndim == len(shape) else 1}")
    a0, a1, a2 = a.unbind(d)
    b0, b1, b2 = b.unbind(d)
    return tf.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


def pdist(input, p=2):
    """The p-norm distances between the rows of a 2-d input (N, M), for the pairs i < j in
    row-major order: N (N - 1) / 2 values. RuntimeError for another ndim or p < 0."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = tf.triu_indices(n, n, 1, device=input.device)
    return tf.norm(input[i] - input[j], p, 1)


def relu_(input):
    """relu in place: input.relu_()."""
    return input.relu_()
