"""Gradient clipping (torch.nn.utils.clip_grad): the norm and the scaling stay on the
gradients' device; nothing is read back to the host unless error_if_nonfinite asks for it."""

import math

import carray as ca
from autograd.tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _vector_norm(x, p):
    """The p-norm of all of x's elements as a 0-d array on x's device (torch.linalg.vector_norm
    orders: inf, -inf, 0 = count of nonzeros, any other float)."""
    if p == math.inf:
        return ca.amax(ca.abs(x)) if x.size else ca.zeros((), dtype=x.dtype, device=x.device)
    if p == -math.inf:
        return ca.amin(ca.abs(x))
    if p == 0:
        return ca.sum(ca.not_equal(x, 0)).astype(x.dtype)
    if p == 1:
        return ca.sum(ca.abs(x))
    if p == 2:
        return ca.sqrt(ca.sum(ca.multiply(x, x)))
    return ca.power(ca.sum(ca.power(ca.abs(x), p)), 1.0 / p)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of tensors (as if all were one vector), a 0-d tensor on the first
    tensor's device; 0.0 for no tensors. RuntimeError when error_if_nonfinite and the norm is
    nan or inf."""
    arrays = [t.array for t in _as_list(tensors)]
    norm_type = float(norm_type)
    if not arrays:
        return Tensor._wrap(ca.asarray(0.0, dtype=ca.float32))
    device = arrays[0].device
    dtype = arrays[0].dtype
    if norm_type == 2.0 and all(a.device == device and a.dtype == dtype for a in arrays) \
            and dtype in (ca.float32, ca.float64):
        # every sum of squares and the total in a few launches, not several per tensor: the
        # same norm as the norm of the tensors' norms
        total = ca.nn.total_norm(arrays)
    else:
        norms = [_vector_norm(a, norm_type) for a in arrays]
        norms = ca.stack([n if n.device == device else n.to(device) for n in norms])
        total = _vector_norm(norms, norm_type)
    if error_if_nonfinite and not bool(ca.isfinite(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable "
                           "this error and scale the gradients by the non-finite norm anyway, "
                           "set `error_if_nonfinite=False`")
    return Tensor._wrap(total)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the parameters' gradients in place by min(max_norm / (total_norm + 1e-6), 1)."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    norm = total_norm.array if isinstance(total_norm, Tensor) else \
        ca.asarray(float(total_norm), dtype=ca.float32)
    coef = ca.minimum(ca.divide(float(max_norm), ca.add(norm, 1e-6)), 1.0)
    groups = {}     # the gradients of one device and dtype, scaled together
    for g in grads:
        groups.setdefault((g.array.device, g.array.dtype), []).append(g)
    for (device, dtype), group in groups.items():
        c = coef if coef.device == device else coef.to(device)
        c = c if c.dtype == dtype else c.astype(dtype)
        arrays = [g.array for g in group]
        if dtype in (ca.float32, ca.float64) and all(a.flags.c_contiguous for a in arrays):
            ca.nn.scale_all(arrays, c)
        else:
            for a in arrays:
                ca.multiply(a, c, out=a)
        for g in group:
            g._vc[0] += 1


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale the gradients of parameters (a tensor or an iterable of them) in place so that
    their total norm_type-norm is at most max_norm; returns the total norm before clipping (a
    0-d tensor on the gradients' device). RuntimeError for a non-finite norm when
    error_if_nonfinite."""
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp the gradients of parameters in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            ca.clip(p.grad.array, -clip_value, clip_value, out=p.grad.array)
            p.grad._vc[0] += 1
