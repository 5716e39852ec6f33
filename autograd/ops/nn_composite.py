"""torch.nn.functional's batch_norm and non-constant pad as Composite ops (ops/_composite.py),
so that autograd.onnx records each as one application: BatchNormalization and Pad nodes."""

import carray
from autograd.ops._composite import Composite
from autograd.ops.nn import BatchNormTrain
from autograd.ops.shape import Index

__all__ = ["BatchNormEval", "BatchNormTraining", "ModePad"]


class BatchNormEval(Composite):
    """(x - running_mean) / sqrt(running_var + eps) * weight + bias per channel (dim 1), the
    running statistics taken as constants (arguments checked by F.batch_norm)."""

    @staticmethod
    def compute(input, running_mean, running_var, weight, bias, eps):
        cshape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
        scale = (running_var.detach() + eps).rsqrt()
        if weight is not None:
            scale = scale * weight
        shift = -running_mean.detach() * scale
        if bias is not None:
            shift = shift + bias
        return input * scale.reshape(cshape) + shift.reshape(cshape)


class BatchNormTraining(Composite):
    """Batch statistics normalisation (BatchNormTrain); running_mean and running_var (when both
    given) are updated in place with momentum, running_var with the unbiased variance."""

    @staticmethod
    def compute(input, running_mean, running_var, weight, bias, momentum, eps):
        running = None
        if running_mean is not None and running_var is not None:
            running = (running_mean, running_var, momentum)
        return BatchNormTrain.apply(input, weight, bias, eps, running)


class ModePad(Composite):
    """F.pad in mode 'reflect', 'replicate' or 'circular' (pad checked to be even and to fit the
    rank): one gather per padded dim. RuntimeError for a reflect pad >= the dim's size, a
    circular one > it, or an empty padded dim."""

    @staticmethod
    def compute(input, pad, mode):
        out = input
        nd = input.ndim
        for i in range(len(pad) // 2):
            dim = nd - 1 - i
            lo, hi = pad[2 * i], pad[2 * i + 1]
            idx = _pad_index(mode, out.shape[dim], lo, hi, dim, input.shape, input.device)
            out = Index.apply(out, (slice(None),) * dim + (idx,))
        return out


def _pad_index(mode, n, lo, hi, dim, shape, device="cpu"):
    """Source positions along a dim of size n padded by (lo, hi) in mode, as an int64 array."""
    if mode == "reflect" and (lo >= n or hi >= n):
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                           f"input dimension, but got: padding ({lo}, {hi}) at dimension {dim} "
                           f"of input {list(shape)}")
    if mode == "circular" and (lo > n or hi > n):
        raise RuntimeError("Padding value causes wrapping around more than once.")
    if n == 0:
        raise RuntimeError(f"{mode} padding of an empty dimension {dim} of input "
                           f"{list(shape)}")
    j = carray.arange(-lo, n + hi, device=device)
    if mode == "replicate":
        return carray.clip(j, 0, n - 1)
    if mode == "circular":
        return carray.remainder(j, n)
    j = carray.abs(j)  # reflect: -j before the start, 2 (n - 1) - j past the end
    return carray.where(carray.greater(j, n - 1), carray.subtract(2 * (n - 1), j), j)
