"""Sampling ops: bernoulli, normal, multinomial (no gradient, as PyTorch: normal's result
carries a zero gradient to its mean and std)."""

import carray
from autograd import factories
from autograd._defaults import is_floating
from autograd.grad_mode import no_grad
from autograd.ops._util import wrap
from autograd.tensor import Tensor

__all__ = ["bernoulli_out", "multinomial_out", "normal_out"]


def bernoulli_out(input, p=None, *, generator=None):
    """0/1 draws, 1 with probability input (or p), in input's dtype. RuntimeError for
    probabilities outside [0, 1]."""
    a = input.array
    prob = a if p is None else p
    if isinstance(prob, carray.Array) and prob.size:
        lo, hi = float(carray.min(prob)), float(carray.max(prob))
        if not (0 <= lo and hi <= 1):
            raise RuntimeError("bernoulli(): Expected p_in >= 0 && p_in <= 1 to be true, but "
                               "got false.")
    elif not isinstance(prob, carray.Array) and not 0 <= prob <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={prob}")
    u = factories._random_array("uniform", a.shape, carray.float64, a.device, generator=generator)
    return wrap(carray.less(u, prob).astype(a.dtype))


def normal_out(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None):
    """Draws of N(mean, std) (either may be a tensor: shapes broadcast), or of `size` for two
    numbers. RuntimeError for a negative std."""
    tm, ts = isinstance(mean, Tensor), isinstance(std, Tensor)
    if ts:
        if std.array.size and float(carray.min(std.array)) < 0:
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    if not tm and not ts:
        if size is None:
            raise TypeError("normal() missing required argument 'size' for float mean and std")
        shape = tuple(size)
        dt = dtype or factories.get_default_dtype()
        return wrap(factories._random_array("normal", shape, dt,
                                            factories._device(device) if device else "cpu",
                                            mean, std, generator))
    like = mean if tm else std
    shape = carray.broadcast_shapes(mean.array.shape if tm else (), std.array.shape if ts else ())
    a = like.array
    with no_grad():
        eps = factories._random_array("normal", shape, a.dtype, a.device, 0.0, 1.0, generator)
        out = carray.add(carray.multiply(eps, std.array if ts else std),
                         mean.array if tm else mean)
    out = wrap(out)
    # PyTorch records the draw with zero gradients to mean and std
    if (tm and mean.requires_grad) or (ts and std.requires_grad):
        out = out + (mean * 0 if tm else 0) + (std * 0 if ts else 0)
    return out


def multinomial_out(input, num_samples, replacement=False, *, generator=None):
    """num_samples indices drawn from each row of the non-negative weights input (1-d or 2-d),
    with or without replacement (int64). RuntimeError for bad weights or sample counts."""
    a = input.array
    if a.ndim not in (1, 2):
        raise RuntimeError("multinomial(): prob_dist must be 1 or 2 dim")
    if not is_floating(a.dtype):
        raise RuntimeError("multinomial(): only floating-point dtypes are supported for "
                           "prob_dist")
    n = a.shape[-1]
    if num_samples <= 0:
        raise RuntimeError("multinomial(): cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > n:
        raise RuntimeError("multinomial(): cannot sample n_sample > prob_dist.size(-1) samples "
                           "without replacement")
    w = a.reshape((1, n)) if a.ndim == 1 else a
    w64 = w.astype(carray.float64)
    if w.size:
        bad = carray.any(carray.logical_not(carray.isfinite(w64))) or \
            float(carray.min(w64)) < 0
        if bad:
            raise RuntimeError("multinomial(): probability tensor contains either `inf`, `nan` "
                               "or element < 0")
    sums = carray.sum(w64, axis=-1, keepdims=True)
    if w.shape[0] and float(carray.min(sums)) <= 0:
        raise RuntimeError("multinomial(): invalid multinomial distribution (sum of "
                           "probabilities <= 0)")
    rows = w.shape[0]
    if replacement:
        cdf = carray.cumsum(carray.divide(w64, sums), axis=-1)
        u = factories._random_array("uniform", (rows, num_samples, 1), carray.float64, a.device,
                                    generator=generator)
        # the index of the first cdf entry above u (counting those at or below it)
        idx = carray.sum(carray.less_equal(carray.expand_dims(cdf, 1), u), axis=-1)
        idx = carray.minimum(idx, n - 1).astype(carray.int64)
    else:
        # exponential races: the k smallest of E_i / w_i are a draw without replacement
        u = factories._random_array("uniform", (rows, n), carray.float64, a.device,
                                    generator=generator)
        keys = carray.divide(carray.negative(carray.log1p(carray.negative(u))), w64)
        order = carray.argsort(keys, axis=-1)
        idx = order[:, :num_samples].astype(carray.int64)
    return wrap(idx.reshape((num_samples,)) if a.ndim == 1 else idx.copy())
