"""nn.init: fill a tensor in place with PyTorch's initialisation schemes (torch.nn.init).

Every function writes under no_grad (so it works on parameters), draws from the global
generator unless `generator` is given, and returns the tensor.
"""

import math
import warnings

import carray
from autograd.factories import randperm
from autograd.grad_mode import no_grad
from autograd.tensor import Tensor

__all__ = ["calculate_gain", "constant_", "eye_", "kaiming_normal_", "kaiming_uniform_",
           "normal_", "ones_", "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_"]
__all__ += ["constant", "dirac", "dirac_", "eye", "kaiming_normal", "kaiming_uniform",  # h7
            "normal", "orthogonal", "orthogonal_", "sparse", "sparse_", "trunc_normal_",
            "uniform", "xavier_normal", "xavier_uniform"]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity: 1 for linear/conv/sigmoid, 5/3 tanh, sqrt(2)
    relu, sqrt(2 / (1 + slope**2)) leaky_relu (slope = param, default 0.01), 3/4 selu.
    ValueError for other names or a non-number slope."""
    if nonlinearity in _LINEAR:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    """(fan_in, fan_out) = (size(1), size(0)) times the receptive field (product of the
    remaining dims). ValueError for tensors of fewer than 2 dims."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with samples of U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with samples of N(mean, std**2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor, val):
    """Fill with val."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fill a 2-d tensor with the identity matrix (ValueError for other ranks)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.array[...] = carray.eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype,
                                     device=tensor.device)
        tensor._vc[0] += 1
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Fill with U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Fill with N(0, std**2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    """gain / sqrt(fan), or None (with a warning) for a zero-element tensor."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """Fill with U(-b, b), b = sqrt(3) * gain / sqrt(fan) (He et al.); `a` is leaky_relu's
    negative slope, mode 'fan_in' or 'fan_out'. ValueError for a bad mode or nonlinearity."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """Fill with N(0, std**2), std = gain / sqrt(fan) (He et al.)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


# -- h7: the rest of torch.nn.init ----------------------------------------------------------------

def _draw(like, kind, a, b, generator):
    """A new array shaped like the carray array `like` of uniform(a, b) or normal(a, b) draws."""
    t = Tensor._wrap(carray.empty_like(like))
    if kind == "uniform":
        return t.uniform_(a, b, generator=generator).array
    return t.normal_(a, b, generator=generator).array


def _norm_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std**2) truncated to [a, b], by PyTorch's rejection sampling: normal
    draws redrawn where outside [a, b] when that interval holds more than 30% of the mass,
    else uniform draws on [a, b] accepted with the normal density's ratio to its peak. Warns
    when mean is more than 2 std from [a, b]."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    x = tensor.array
    if x.size == 0:
        return tensor
    mass = _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std)
    if mass > 0.3:
        lo = carray.asarray(a, dtype=x.dtype).item()
        hi = carray.asarray(b, dtype=x.dtype).item()
        result = _draw(x, "normal", mean, std, generator)
        while True:
            reject = carray.logical_or(carray.less(result, lo), carray.greater(result, hi))
            if not bool(carray.any(reject)):
                break
            result = carray.where(reject, _draw(x, "normal", mean, std, generator), result)
    else:
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2

        def log_ratio(v):  # log of the normal density at v over its peak on [a, b]
            z = carray.divide(carray.subtract(v, mean), std)
            return carray.subtract(carray.multiply(carray.multiply(z, z), -0.5), log_peak)

        result = _draw(x, "uniform", a, b, generator)
        pending = carray.greater(carray.log(_draw(x, "uniform", 0.0, 1.0, generator)),
                                 log_ratio(result))
        while bool(carray.any(pending)):
            candidates = _draw(x, "uniform", a, b, generator)
            result = carray.where(pending, candidates, result)
            rejected = carray.greater(carray.log(_draw(x, "uniform", 0.0, 1.0, generator)),
                                      log_ratio(candidates))
            pending = carray.logical_and(pending, rejected)
    with no_grad():
        x[...] = result
        tensor._vc[0] += 1
    return tensor


def dirac_(tensor, groups=1):
    """Fill a 3-, 4- or 5-d convolution weight with the Dirac delta (the identity map for each
    of `groups` groups of output channels). ValueError for other ranks or when dim 0 is not
    divisible by groups."""
    nd = tensor.dim()
    if nd not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    centre = tuple(n // 2 for n in sizes[2:])
    with no_grad():
        x = tensor.array
        x.fill(0)
        for g in range(groups):
            for d in range(min(per_group, sizes[1])):
                x[(g * per_group + d, d) + centre] = 1
        tensor._vc[0] += 1
    return tensor


def _orthonormal_columns(a):
    """Q of the reduced QR decomposition a = QR (a: m x n float64 array on the host, m >= n),
    by Householder reflections, with Q's columns signed so that R's diagonal is non-negative
    (zero where R's is zero, as PyTorch's q * sign(diag(r)))."""
    m, n = a.shape
    r = a.copy()
    reflectors = []
    signs = []
    for k in range(n):
        x = r[k:, k]
        norm = math.sqrt(float(carray.sum(carray.multiply(x, x))))
        alpha = -norm if float(x[0]) >= 0 else norm
        v = x.copy()
        v[0] = float(v[0]) - alpha
        vnorm = math.sqrt(float(carray.sum(carray.multiply(v, v))))
        if vnorm == 0.0:  # the column is zero below the diagonal already
            reflectors.append(None)
            diag = float(x[0])
        else:
            carray.divide(v, vnorm, out=v)
            block = r[k:, k:]
            w = carray.matmul(v, block)
            carray.subtract(block, carray.multiply(carray.expand_dims(v, 1),
                                                   carray.multiply(w, 2.0)), out=block)
            reflectors.append(v)
            diag = alpha
        signs.append((diag > 0) - (diag < 0))
    q = carray.eye(m, n, dtype=carray.float64)
    for k in range(n - 1, -1, -1):
        v = reflectors[k]
        if v is not None:
            block = q[k:, :]
            w = carray.matmul(v, block)
            carray.subtract(block, carray.multiply(carray.expand_dims(v, 1),
                                                   carray.multiply(w, 2.0)), out=block)
    return carray.multiply(q, carray.asarray(signs, dtype=carray.float64))


def orthogonal_(tensor, gain=1, generator=None):
    """Fill with a (semi-)orthogonal matrix times gain (Saxe et al.): the Q of a Gaussian
    matrix's QR decomposition, dims after the first flattened. ValueError for fewer than 2
    dims."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    x = tensor.array
    flat = _draw(carray.empty((rows, cols), dtype=x.dtype), "normal", 0.0, 1.0, generator)
    flat = flat.astype(carray.float64)
    if rows < cols:
        flat = flat.T.copy()
    q = _orthonormal_columns(flat)
    if rows < cols:
        q = q.T
    q = carray.multiply(q, gain).astype(x.dtype)
    if q.device != x.device:
        q = q.to(x.device)
    with no_grad():
        x[...] = carray.reshape(q, x.shape)
        tensor._vc[0] += 1
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill a 2-d tensor with N(0, std**2) draws and zero ceil(sparsity * rows) random entries
    of each column (Martens). ValueError for other ranks."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        x = tensor.array
        for col in range(cols):
            zero_rows = randperm(rows, generator=generator).array[:num_zeros]
            if x.device != "cpu":
                zero_rows = zero_rows.to(x.device)
            x[zero_rows, col] = 0
        tensor._vc[0] += 1
    return tensor


def _deprecated(new):
    old = new.__name__[:-1]

    def alias(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
                      FutureWarning, stacklevel=2)
        return new(*args, **kwargs)

    alias.__name__ = old
    alias.__doc__ = f"Deprecated alias of {new.__name__} (FutureWarning)."
    return alias


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
