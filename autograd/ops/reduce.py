"""Reductions (sum, mean, var, std, prod, max, min, amax, amin, logsumexp), softmax and
log_softmax, with their gradients."""

import collections

import carray
from autograd._defaults import is_floating, scalar_type_name
from autograd.grad_mode import _state
from autograd.ops._util import Builtin, norm_dim, norm_dims, wrap
from autograd.ops.elementwise import Where
from carray import nn as _cnn

__all__ = ["AmaxDims", "LogSoftmax", "LogSumExp", "MaxAll", "MaxDim", "MaxValues", "Mean",
           "MinValues", "Prod", "Softmax", "StdSqrt", "Sum", "Var"]


def _kept_shape(shape, dims):
    """shape with the reduced dims set to 1 (the keepdim shape)."""
    return tuple(1 if i in dims else n for i, n in enumerate(shape))


def _count(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _expand_back(g, shape, dims, keepdim):
    """A reduction's output gradient broadcast back over the input's shape."""
    if not _state.enabled:  # not recording (no create_graph): a broadcast view of the data
        d = g.array
        if not keepdim and dims and d.ndim:  # (a 0-d one broadcasts as it is)
            d = d.reshape(_kept_shape(shape, dims))
        return wrap(carray.broadcast_to(d, shape))
    if not keepdim and dims:
        g = g.reshape(_kept_shape(shape, dims))
    return g.expand(shape)


class Sum(Builtin):
    """x.sum(dim, keepdim);  dx = g broadcast over the summed dims."""

    autocast_policy = "float32_gpu"

    @staticmethod
    def forward(ctx, x, dim, keepdim, dtype):
        dims = norm_dims(dim, x.array.ndim)
        ctx.shape, ctx.dims, ctx.keepdim = x.array.shape, dims, keepdim
        ctx.dtype = x.array.dtype
        if dtype is None and x.array.dtype.kind in "biu":
            dtype = carray.int64  # PyTorch sums bool and ints to int64
        return wrap(carray.sum(x.array, axis=dims, dtype=dtype, keepdims=keepdim))

    @staticmethod
    def backward(ctx, g):
        g = _expand_back(g, ctx.shape, ctx.dims, ctx.keepdim)
        if g.array.dtype != ctx.dtype:
            g = g.to(ctx.dtype)
        return g, None, None, None


class Mean(Builtin):
    """x.mean(dim, keepdim);  dx = g / n broadcast over the reduced dims."""

    @staticmethod
    def forward(ctx, x, dim, keepdim, dtype):
        if not is_floating(x.array.dtype) and dtype is None:
            raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either "
                               f"a floating point or complex dtype. "
                               f"Got: {scalar_type_name(x.dtype)}")
        dims = norm_dims(dim, x.array.ndim)
        ctx.shape, ctx.dims, ctx.keepdim = x.array.shape, dims, keepdim
        ctx.n = _count(x.array.shape, dims)
        return wrap(carray.mean(x.array, axis=dims, dtype=dtype, keepdims=keepdim))

    @staticmethod
    def backward(ctx, g):
        return _expand_back(g / ctx.n, ctx.shape, ctx.dims, ctx.keepdim), None, None, None


class Var(Builtin):
    """x.var(dim, correction, keepdim);  dx = g * 2 (x - mean) / (n - correction)."""

    @staticmethod
    def forward(ctx, x, dim, correction, keepdim):
        dims = norm_dims(dim, x.array.ndim)
        ctx.save_for_backward(x)
        ctx.dims, ctx.keepdim, ctx.correction = dims, keepdim, correction
        ctx.n = _count(x.array.shape, dims)
        return wrap(carray.var(x.array, axis=dims, ddof=correction, keepdims=keepdim))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        centred = x - x.mean(dim=ctx.dims, keepdim=True)
        g = _expand_back(g, x.shape, ctx.dims, ctx.keepdim)
        dof = ctx.n - ctx.correction
        scale = 2.0 / dof if dof else float("inf")  # (nan gradients, as PyTorch)
        return g * centred * scale, None, None, None


class StdSqrt(Builtin):
    """sqrt of a variance, for std;  dv = g / (2 out), taken as 0 where out == 0 (PyTorch)."""

    @staticmethod
    def forward(ctx, v):
        out = wrap(carray.sqrt(v.array))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return Where.apply(out == 0, 0.0, g / (out * 2))


class Prod(Builtin):
    """x.prod(dim, keepdim);  dx_i = g * prod_{j != i} x_j (exact with zeros in x)."""

    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, x, dim, keepdim, dtype):
        nd = x.array.ndim
        dims = norm_dims(norm_dim(dim, nd), nd) if dim is not None else tuple(range(nd))
        ctx.save_for_backward(x)
        ctx.dims, ctx.keepdim, ctx.dim = dims, keepdim, dim
        if dtype is None and x.array.dtype.kind in "biu":
            dtype = carray.int64
        return wrap(carray.prod(x.array, axis=dims, dtype=dtype, keepdims=keepdim))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        dims = ctx.dims
        zero = x == 0
        nonzero_x = Where.apply(zero, 1.0, x)
        prod_nz = Prod.apply(nonzero_x, ctx.dim, True, None)
        zeros = zero.sum(dim=dims, keepdim=True)
        others = Where.apply(zero, Where.apply(zeros == 1, prod_nz, 0.0),
                             Where.apply(zeros == 0, prod_nz / nonzero_x, 0.0))
        g = _expand_back(g, x.shape, dims, ctx.keepdim)
        return g * others, None, None, None


class MaxAll(Builtin):
    """x.max() / x.min() over all elements; the gradient is split evenly among ties."""

    @staticmethod
    def forward(ctx, x, largest):
        if x.array.size == 0:
            raise RuntimeError("max(): Expected reduction dim to be specified for input.numel() "
                               "== 0. Specify the reduction dim with the 'dim' argument.")
        out = wrap(carray.max(x.array) if largest else carray.min(x.array))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        mask = (x == out).to(g.dtype)
        return g * mask / mask.sum(), None


class AmaxDims(Builtin):
    """x.amax(dim, keepdim) / amin; the gradient is split evenly among ties."""

    @staticmethod
    def forward(ctx, x, dim, keepdim, largest):
        dims = norm_dims(dim, x.array.ndim)
        fn = carray.max if largest else carray.min
        if x.array.size == 0 and any(x.array.shape[d] == 0 for d in dims):
            raise IndexError(f"amax(): Expected reduction dim {dims[0]} to have non-zero size.")
        out = wrap(fn(x.array, axis=dims, keepdims=keepdim))
        ctx.save_for_backward(x, out)
        ctx.dims, ctx.keepdim = dims, keepdim
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        dims, keep = ctx.dims, ctx.keepdim
        mask = (x == _expand_back(out, x.shape, dims, keep)).to(g.dtype)
        count = mask.sum(dim=dims, keepdim=True)
        return _expand_back(g, x.shape, dims, keep) * mask / count, None, None, None


# what max(dim) / min(dim) return (torch.return_types.max / .min)
MaxValues = collections.namedtuple("max", ["values", "indices"])
MinValues = collections.namedtuple("min", ["values", "indices"])


class MaxDim(Builtin):
    """x.max(dim, keepdim) / x.min(dim, keepdim) -> (values, indices); the gradient goes to the
    element at the index."""

    @staticmethod
    def forward(ctx, x, dim, keepdim, largest):
        nd = x.array.ndim
        d = norm_dim(dim, nd)
        if x.array.ndim and x.array.shape[d] == 0:
            raise IndexError(f"max(): Expected reduction dim {d} to have non-zero size.")
        arg = carray.argmax if largest else carray.argmin
        idx = arg(x.array, axis=d if nd else None, keepdims=True) if nd else \
            carray.zeros((), dtype=carray.int64, device=x.array.device)
        fn = carray.max if largest else carray.min
        values = fn(x.array, axis=d, keepdims=True) if nd else x.array.copy()
        if not keepdim and nd:
            idx = idx.squeeze(d)
            values = values.squeeze(d)
        ctx.d, ctx.keepdim, ctx.shape, ctx.idx = d, keepdim, x.array.shape, idx
        indices = wrap(idx)
        ctx.mark_non_differentiable(indices)
        return wrap(values), indices

    @staticmethod
    def backward(ctx, g, _):
        shape, d = ctx.shape, ctx.d
        if not shape:
            return g, None, None, None
        idx = ctx.idx if ctx.keepdim else carray.expand_dims(ctx.idx, d)
        positions = carray.arange(shape[d], device=g.array.device).reshape(
            (-1,) + (1,) * (len(shape) - d - 1))
        mask = wrap(carray.equal(positions, idx).astype(g.array.dtype))
        gk = g if ctx.keepdim else g.unsqueeze(d)
        return gk * mask, None, None, None


class LogSumExp(Builtin):
    """log(sum(exp(x), dim)) computed as m + log(sum(exp(x - m)));  dx = g * softmax(x)."""

    autocast_policy = "float32_gpu"

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        dims = norm_dims(dim, x.array.ndim)
        m = carray.max(x.array, axis=dims, keepdims=True) if x.array.size else \
            carray.zeros(_kept_shape(x.array.shape, dims), dtype=x.array.dtype,
                         device=x.array.device)
        m = carray.where(carray.isfinite(m), m, 0)
        s = carray.sum(carray.exp(x.array - m), axis=dims, keepdims=True)
        out = carray.log(s) + m
        if not keepdim:
            out = out.reshape(tuple(n for i, n in enumerate(x.array.shape) if i not in dims))
        out = wrap(out)
        ctx.save_for_backward(x, out)
        ctx.dims, ctx.keepdim = dims, keepdim
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        dims, keep = ctx.dims, ctx.keepdim
        soft = (x - _expand_back(out, x.shape, dims, keep)).exp()
        return _expand_back(g, x.shape, dims, keep) * soft, None, None


def _fused(*arrays):
    """Whether carray.nn's fused softmax kernels take these arrays: float32 or float64, all of
    one dtype."""
    dts = {a.dtype.name for a in arrays}
    return len(dts) == 1 and dts <= {"float32", "float64"}


class Softmax(Builtin):
    """exp(x - max) / sum(exp(x - max)) along dim;  dx = y * (g - sum(g * y, dim))."""

    autocast_policy = "float32_gpu"

    @staticmethod
    def forward(ctx, x, dim):
        d = norm_dim(dim, x.array.ndim)
        if _fused(x.array) and x.array.device == "gpu":    # one pass per row (carray.nn.softmax;
            # on the CPU still slower than the composed SIMD ops, see h13's report)
            out = wrap(_cnn.softmax(x.array, d))
            ctx.save_for_backward(out)
            ctx.d = d
            return out
        a = x.array if x.array.ndim else x.array.reshape((1,))  # (a 0-d x: as one element)
        m = carray.max(a, axis=d, keepdims=True) if a.size else a
        e = carray.exp(carray.subtract(a, m))
        out = wrap(carray.divide(e, carray.sum(e, axis=d, keepdims=True)).reshape(x.array.shape))
        ctx.save_for_backward(out)
        ctx.d = d
        return out

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        if not _state.enabled and _fused(y.array, g.array):
            return wrap(_cnn.softmax_grad(y.array, g.array, ctx.d)), None
        return y * (g - (g * y).sum(dim=ctx.d, keepdim=True)), None


class LogSoftmax(Builtin):
    """x - max - log(sum(exp(x - max))) along dim;  dx = g - exp(y) * sum(g, dim)."""

    autocast_policy = "float32_gpu"

    @staticmethod
    def forward(ctx, x, dim):
        d = norm_dim(dim, x.array.ndim)
        if _fused(x.array) and x.array.device == "gpu":    # one pass per row (as Softmax)
            out = wrap(_cnn.log_softmax(x.array, d))
            ctx.save_for_backward(out)
            ctx.d = d
            return out
        a = x.array if x.array.ndim else x.array.reshape((1,))  # (a 0-d x: as one element)
        m = carray.max(a, axis=d, keepdims=True) if a.size else a
        shifted = carray.subtract(a, m)
        lse = carray.log(carray.sum(carray.exp(shifted), axis=d, keepdims=True))
        out = wrap(carray.subtract(shifted, lse).reshape(x.array.shape))
        ctx.save_for_backward(out)
        ctx.d = d
        return out

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        if not _state.enabled and _fused(y.array, g.array):
            return wrap(_cnn.log_softmax_grad(y.array, g.array, ctx.d)), None
        return g - y.exp() * g.sum(dim=ctx.d, keepdim=True), None
