"""The Functions behind layer_norm and rms_norm (and so group_norm): normalise over the trailing
dims, with forward and backward side by side.

They are the hot path of transformers, so forward and backward work on the carray data directly
(a handful of whole-array ops, no graph of small nodes); when backward runs under create_graph
(grad mode on) the gradients are built from differentiable ops instead, so gradients of
gradients work (as PyTorch's do). Names are PyTorch's node names.
"""

import carray
from autograd.grad_mode import _state
from autograd.ops._util import Builtin, wrap
from carray import nn as _cnn

__all__ = ["NativeLayerNorm", "RmsNorm"]


def _lead_axes(nd, k):
    return tuple(range(nd - k))


def _fused(*arrays):
    """Whether carray.nn's fused row kernels take these arrays (None skipped): float32 or
    float64, all of one dtype (others go the composed way, which promotes)."""
    dts = {a.dtype.name for a in arrays if a is not None}
    return len(dts) == 1 and dts <= {"float32", "float64"}


class NativeLayerNorm(Builtin):
    """y = xhat w + b, xhat = (x - mean) / sqrt(var + eps), mean and (biased) var over the last
    k dims (n values each);
    dx = rstd (gh - mean(gh) - xhat mean(gh xhat)) with gh = g w, dw = sum(g xhat), db = sum(g)
    over the leading dims."""

    autocast_policy = "float32_gpu"

    @staticmethod
    def forward(ctx, x, k, w, b, eps):
        d = x.array
        axes = tuple(range(d.ndim - k, d.ndim))
        wd, bd = (w.array if w is not None else None), (b.array if b is not None else None)
        if _fused(d, wd, bd):       # one pass per row (carray.nn.layer_norm)
            y, mean, rstd = _cnn.layer_norm(d, k, wd, bd, eps)
            if True in ctx.needs_input_grad:
                ctx.save_for_backward(x, w)
                ctx.xhat, ctx.mean, ctx.rstd, ctx.axes, ctx.eps = None, mean, rstd, axes, eps
            return wrap(y)
        mean = carray.mean(d, axis=axes, keepdims=True)
        xc = carray.subtract(d, mean)
        var = carray.mean(carray.multiply(xc, xc), axis=axes, keepdims=True)
        rstd = carray.reciprocal(carray.sqrt(carray.add(var, eps)))
        xhat = carray.multiply(xc, rstd, out=xc)
        y = xhat
        if w is not None:
            y = carray.multiply(xhat, w.array)
        if b is not None:
            y = carray.add(y, b.array, out=None if y is xhat else y)
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(x, w)
            ctx.xhat, ctx.mean, ctx.rstd, ctx.axes, ctx.eps = xhat, None, rstd, axes, eps
        return wrap(xhat.copy() if y is xhat else y)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        axes = ctx.axes
        lead = _lead_axes(x.ndim, len(axes))
        if _state.enabled:
            mean = x.mean(axes, keepdim=True)
            xc = x - mean
            rstd = ((xc * xc).mean(axes, keepdim=True) + ctx.eps).rsqrt()
            xhat = xc * rstd
            gh = g if w is None else g * w
            gx = gw = gb = None
            if need[0]:
                gx = (gh - gh.mean(axes, keepdim=True)
                      - xhat * (gh * xhat).mean(axes, keepdim=True)) * rstd
            if need[2]:
                gw = (g * xhat).sum(lead) if lead else g * xhat
            if need[3]:
                gb = g.sum(lead) if lead else g
            return gx, None, gw, gb, None
        if ctx.xhat is None:        # the fused forward ran: its fused gradient
            gx, gw, gb = _cnn.layer_norm_grad(
                g.array, x.array, ctx.mean, ctx.rstd, None if w is None else w.array,
                (need[0], need[2], need[3]))
            return (None if gx is None else wrap(gx), None, None if gw is None else wrap(gw),
                    None if gb is None else wrap(gb), None)
        gd, xhat = g.array, ctx.xhat
        gx = gw = gb = None
        if need[0]:
            gh = gd if w is None else carray.multiply(gd, w.array)
            mean_gh = carray.mean(gh, axis=axes, keepdims=True)
            mean_ghx = carray.mean(carray.multiply(gh, xhat), axis=axes, keepdims=True)
            gx = carray.subtract(gh, mean_gh)
            carray.subtract(gx, carray.multiply(xhat, mean_ghx), out=gx)
            carray.multiply(gx, ctx.rstd, out=gx)
            gx = wrap(gx)
        if need[2]:
            gw = wrap(carray.sum(carray.multiply(gd, xhat), axis=lead) if lead
                      else carray.multiply(gd, xhat))
        if need[3]:
            gb = wrap(carray.sum(gd, axis=lead) if lead else gd.copy())
        return gx, None, gw, gb, None


class RmsNorm(Builtin):
    """y = xhat w, xhat = x / sqrt(mean(x^2) + eps) over the last k dims;
    dx = rstd (gh - xhat mean(gh xhat)) with gh = g w, dw = sum(g xhat) over the leading dims."""

    autocast_policy = "float32_gpu"

    @staticmethod
    def forward(ctx, x, k, w, eps):
        d = x.array
        axes = tuple(range(d.ndim - k, d.ndim))
        wd = w.array if w is not None else None
        if _fused(d, wd):           # one pass per row (carray.nn.rms_norm)
            y, rstd = _cnn.rms_norm(d, k, wd, eps)
            if True in ctx.needs_input_grad:
                ctx.save_for_backward(x, w)
                ctx.xhat, ctx.rstd, ctx.axes, ctx.eps = None, rstd, axes, eps
            return wrap(y)
        ms = carray.mean(carray.multiply(d, d), axis=axes, keepdims=True)
        rstd = carray.reciprocal(carray.sqrt(carray.add(ms, eps)))
        xhat = carray.multiply(d, rstd)
        y = xhat if w is None else carray.multiply(xhat, w.array)
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(x, w)
            ctx.xhat, ctx.rstd, ctx.axes, ctx.eps = xhat, rstd, axes, eps
        return wrap(y)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        axes = ctx.axes
        lead = _lead_axes(x.ndim, len(axes))
        if _state.enabled:
            rstd = ((x * x).mean(axes, keepdim=True) + ctx.eps).rsqrt()
            xhat = x * rstd
            gh = g if w is None else g * w
            gx = gw = None
            if need[0]:
                gx = (gh - xhat * (gh * xhat).mean(axes, keepdim=True)) * rstd
            if need[2]:
                gw = (g * xhat).sum(lead) if lead else g * xhat
            return gx, None, gw, None
        if ctx.xhat is None:        # the fused forward ran: its fused gradient
            gx, gw = _cnn.rms_norm_grad(g.array, x.array, ctx.rstd,
                                        None if w is None else w.array, (need[0], need[2]))
            return (None if gx is None else wrap(gx), None, None if gw is None else wrap(gw),
                    None)
        gd, xhat = g.array, ctx.xhat
        gx = gw = None
        if need[0]:
            gh = gd if w is None else carray.multiply(gd, w.array)
            mean_ghx = carray.mean(carray.multiply(gh, xhat), axis=axes, keepdims=True)
            gx = carray.subtract(gh, carray.multiply(xhat, mean_ghx))
            carray.multiply(gx, ctx.rstd, out=gx)
            gx = wrap(gx)
        if need[2]:
            gw = wrap(carray.sum(carray.multiply(gd, xhat), axis=lead) if lead
                      else carray.multiply(gd, xhat))
        return gx, None, gw, None
