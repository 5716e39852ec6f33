"""The Functions behind scaled dot-product attention (autograd.nn.functional.
scaled_dot_product_attention, the hot path of every transformer):

    s   = q k^T * scale  (+ float mask, or -inf where a bool mask is False or above the diagonal)
    p   = softmax(s) over the keys, a row whose keys are all masked out giving 0 (as PyTorch 2.13
          on the CPU, not NaN)
    out = (p * keep / (1 - dropout_p)) v

One node with an explicit backward that saves q, k, v and p (PyTorch's math kernel keeps the
same), instead of a chain of autograd ops that would keep every intermediate alive. Under
create_graph the backward rebuilds p from q and k with differentiable ops so higher-order
gradients work.
"""

import carray
from autograd import factories
from autograd.grad_mode import _state
from autograd.ops._util import Builtin, meta, reduce_grad, wrap
from carray import nn as _cnn

__all__ = ["MaskedSoftmax", "ScaledDotProductAttention"]

_NEG_INF = float("-inf")


def _masked_softmax(s):
    """softmax of the array s over its last dim, in place (float arrays on the device: a new
    array, in one pass per row); rows that are all -inf become 0."""
    if s.dtype.name in ("float32", "float64") and s.device == "gpu":
        # one pass per row; the CPU keeps the composed SIMD ops (faster there for now)
        return _cnn.softmax(s, -1, masked=True)
    mx = carray.max(s, axis=-1, keepdims=True)
    mx = carray.where(carray.equal(mx, _NEG_INF), 0.0, mx)
    carray.subtract(s, mx, out=s)
    carray.exp(s, out=s)
    total = carray.sum(s, axis=-1, keepdims=True)
    carray.divide(s, carray.where(carray.equal(total, 0.0), 1.0, total), out=s)
    return s


def _apply_mask(s, mask, causal):
    """s with the attention mask applied (a new or the same array): a bool mask keeps s where
    True and puts -inf elsewhere, a float mask is added; causal masks out keys after the
    query's position."""
    if mask is not None:
        if mask.dtype == carray.bool_:
            s = carray.where(mask, s, _NEG_INF)
        else:
            s = carray.add(s, mask.astype(s.dtype) if mask.dtype != s.dtype else mask)
    if causal:
        s = carray.where(_cnn.causal_mask(s.shape[-2], s.shape[-1], s.device), s, _NEG_INF)
    return s


class MaskedSoftmax(Builtin):
    """p = softmax(s) over the last dim with all -inf rows giving 0;  ds = p * (g - sum(g p)).
    Used by the create_graph backward of ScaledDotProductAttention (its backward is made of
    differentiable ops, so gradients of any order work)."""

    autocast_policy = "float32_gpu"

    @staticmethod
    def forward(ctx, s):
        out = wrap(_masked_softmax(s.array.copy()))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (p,) = ctx.saved_tensors
        return p * (g - (g * p).sum(dim=-1, keepdim=True))


class ScaledDotProductAttention(Builtin):
    """out = dropout(softmax(q k^T * scale + mask)) v over the last two dims of q (..., L, E),
    k (..., S, E) and v (..., S, Ev), the leading dims broadcasting; mask is None or a Tensor
    broadcasting to (..., L, S), bool (True takes part) or float (added); causal hides the keys
    after each query's position. Backward, with P the dropped-out probabilities:
        dv = P^T g,  dP = g v^T,  ds = p * (dp - sum(dp p)),  dq = ds k scale,  dk = ds^T q scale,
    and dmask = ds for a float mask. Without a mask and dropout, on the OpenCL device, the
    memory-efficient kernels of carray.nn.attention run instead: they save the output and the
    log-sum-exp rows, not the L x S probabilities."""

    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, q, k, v, mask, causal, scale, dropout_p):
        qd, kd, vd = q.array, k.array, v.array
        if mask is None and dropout_p == 0 and _cnn.fused_attention(qd, vd):
            out, lse = _cnn.attention(qd, kd, vd, scale, causal)
            if True in ctx.needs_input_grad:
                ctx.save_for_backward(q, k, v, None)
                ctx.p, ctx.keep, ctx.fused = None, None, (out, lse)
                ctx.args = (causal, scale)
                ctx.metas = (meta(q), meta(k), meta(v), None)
            return wrap(out)
        md = mask.array if mask is not None else None
        s = carray.matmul(qd, carray.swapaxes(kd, -1, -2))
        carray.multiply(s, scale, out=s)
        s = _apply_mask(s, md, causal)
        if s.size and s.shape[-1]:
            if s.base is not None or not s.flags.c_contiguous:
                s = s.copy()
            p = _masked_softmax(s)
        else:
            p = carray.zeros(s.shape, dtype=s.dtype, device=s.device)
        keep = None
        if dropout_p > 0:
            u = factories._rng(None).random(p.shape, dtype=p.dtype, device=p.device)
            keep = carray.less(u, 1.0 - dropout_p).astype(p.dtype)
            carray.multiply(keep, 1.0 / (1.0 - dropout_p) if dropout_p < 1 else 0.0, out=keep)
            pd = carray.multiply(p, keep)
        else:
            pd = p
        out = carray.matmul(pd, vd)
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(q, k, v, mask)
            ctx.p, ctx.keep, ctx.fused = p, keep, None
            ctx.args = (causal, scale)
            ctx.metas = (meta(q), meta(k), meta(v), meta(mask))
        return wrap(out)

    @staticmethod
    def backward(ctx, g):
        q, k, v, mask = ctx.saved_tensors
        causal, scale = ctx.args
        need = ctx.needs_input_grad
        if ctx.fused is not None and not _state.enabled:     # the memory-efficient kernels
            out, lse = ctx.fused
            grads = _cnn.attention_grad(q.array, k.array, v.array, out, lse, g.array, scale,
                                        causal)
            return (*(reduce_grad(wrap(d), m) if n else None
                      for d, m, n in zip(grads, ctx.metas, need)), None, None, None, None)
        if _state.enabled:  # create_graph: p again, from differentiable ops
            s = q.matmul(k.transpose(-2, -1)) * scale
            if mask is not None:
                s = s.masked_fill(mask.logical_not(), _NEG_INF) if mask.dtype == carray.bool_ \
                    else s + mask.to(s.dtype)
            if causal:
                allowed = wrap(_cnn.causal_mask(s.shape[-2], s.shape[-1], s.array.device))
                s = s.masked_fill(allowed.logical_not(), _NEG_INF)
            p = MaskedSoftmax.apply(s)
        else:
            p = wrap(ctx.p)
        keep = wrap(ctx.keep) if ctx.keep is not None else None
        pd = p * keep if keep is not None else p
        gq = gk = gv = gm = None
        if need[2]:
            gv = reduce_grad(pd.transpose(-2, -1).matmul(g), ctx.metas[2])
        if need[0] or need[1] or need[3]:
            dp = g.matmul(v.transpose(-2, -1))
            if keep is not None:
                dp = dp * keep
            if not _state.enabled and p.dtype == dp.dtype:     # fused: one pass per row
                ds = wrap(_cnn.softmax_grad(p.array, dp.array, -1))
            else:
                ds = p * (dp - (dp * p).sum(dim=-1, keepdim=True))
            if need[3]:
                gm = reduce_grad(ds, ctx.metas[3])
            if need[0] or need[1]:
                ds = ds * scale
            if need[0]:
                gq = reduce_grad(ds.matmul(k), ctx.metas[0])
            if need[1]:
                gk = reduce_grad(ds.transpose(-2, -1).matmul(q), ctx.metas[1])
        return gq, gk, gv, gm, None, None, None
