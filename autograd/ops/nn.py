"""The Functions behind autograd.nn.functional: linear, conv2d, pooling, some activations, the
class-index losses, batch normalisation and embedding, each with its forward and backward side
by side (functional.py, like torch.nn.functional, only checks arguments and calls `.apply`).

They work on the carray data directly (one node, few temporaries: the training loop's hot path)
and, when backward runs under create_graph (grad mode on), build their gradient from
differentiable ops instead, so gradients of gradients work. Their names are PyTorch's node names
where it has one (ConvolutionBackward0, MaxPool2DWithIndicesBackward0, NllLossBackward0, ...),
never a Module's.
"""

import math

import carray
from autograd.grad_mode import _state
from autograd.ops._util import Builtin, reduce_grad, wrap
from autograd.ops.elementwise import Where
from autograd.ops.shape import Index, IndexAdd
from autograd.ops.torch_functions import erf, sigmoid, softmax
from carray import nn as _cnn

__all__ = ["Addmm", "AvgPool2D", "AvgPool2dGrad", "BatchNormTrain", "Conv2dGradInput",
           "Conv2dGradWeight", "Convolution", "CrossEntropy", "Embedding", "Gelu", "LeakyRelu",
           "MaxPool2DWithIndices", "MaxPool2dGrad", "NllLoss", "SoftmaxCrossEntropy", "Softplus",
           "Targets"]


class as_runtime_error:
    """Re-raise carray.nn's ValueErrors (bad padding strings, argument lengths) as the
    RuntimeError PyTorch raises for them."""

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if kind is not None and issubclass(kind, ValueError):
            raise RuntimeError(str(exc)) from None
        return False


# ---------------------------------------------------------------------------------------------
# linear
# ---------------------------------------------------------------------------------------------


class Addmm(Builtin):
    """y = x W^T + b over the last dim of x (any leading dims: addmm on the rows), b may be None;
    dx = g W, dW = g^T x and db = sum of g, both over all leading dims."""

    autocast_policy = "lower"

    @staticmethod
    def forward(ctx, x, w, b):
        xd, wd = x.array, w.array
        n_in, n_out = wd.shape[1], wd.shape[0]
        x2 = xd if xd.ndim == 2 else xd.reshape((-1, n_in))
        y = carray.matmul(x2, wd.T)
        if b is not None:
            carray.add(y, b.array, out=y)
        if xd.ndim != 2:
            y = y.reshape(xd.shape[:-1] + (n_out,))
        need = ctx.needs_input_grad
        if True in need:
            ctx.save_for_backward(x if need[1] else None, w if need[0] else None)
            ctx.shapes = (xd.shape, wd.shape)
            ctx.b = (b.array.shape, b.array.dtype) if b is not None else None
        return wrap(y)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        xshape, (n_out, n_in) = ctx.shapes
        gx = gw = gb = None
        if _state.enabled:  # create_graph: differentiable ops
            g2 = g.reshape((-1, n_out))
            if need[0]:
                gx = g.matmul(w)
            if need[1]:
                gw = g2.t().matmul(x.reshape((-1, n_in)))
            if need[2]:
                gb = reduce_grad(g2.sum(0), ctx.b)
            return gx, gw, gb
        gd = g.array
        g2 = gd if gd.ndim == 2 else gd.reshape((-1, n_out))
        if need[0]:
            gx = carray.matmul(g2, w.array)
            gx = wrap(gx if len(xshape) == 2 else gx.reshape(xshape))
        if need[1]:
            xd = x.array
            x2 = xd if xd.ndim == 2 else xd.reshape((-1, n_in))
            gw = wrap(carray.matmul(g2.T, x2))
        if need[2]:
            gb = reduce_grad(wrap(carray.sum(g2, axis=0)), ctx.b)
        return gx, gw, gb


# ---------------------------------------------------------------------------------------------
# convolution: three Functions, each the others' adjoint, so every order of gradient works
# ---------------------------------------------------------------------------------------------


class Convolution(Builtin):
    """y = conv2d(x, w) + b (carray.nn.conv2d);  dx = conv2d_grad_input(g, w),
    dw = conv2d_grad_weight(x, g), db = sum of g over (N, H, W)."""

    autocast_policy = "lower"

    @staticmethod
    def forward(ctx, x, w, b, stride, padding, dilation):
        with as_runtime_error():
            out = _cnn.conv2d(x.array, w.array, b.array if b is not None else None, stride,
                              padding, dilation)
        need = ctx.needs_input_grad
        if True in need:
            ctx.save_for_backward(x if need[1] else None, w if need[0] else None)
            ctx.args = (stride, padding, dilation)
            ctx.shapes = (x.array.shape, w.array.shape)
        return wrap(out)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        xshape, wshape = ctx.shapes
        gx = gw = gb = None
        if need[0]:
            gx = Conv2dGradInput.apply(g, w, xshape, *ctx.args)
        if need[1]:
            gw = Conv2dGradWeight.apply(x, g, wshape, *ctx.args)
        if need[2]:
            dims = (0, 2, 3) if len(xshape) == 4 else (1, 2)
            gb = g.sum(dims) if _state.enabled else wrap(carray.sum(g.array, axis=dims))
        return gx, gw, gb, None, None, None


class Conv2dGradInput(Builtin):
    """gi = conv2d_grad_input(g, w) (the transposed convolution); for an upstream h,
    <gi, h> = <g, conv2d(h, w)>, so dg = conv2d(h, w) and dw = conv2d_grad_weight(h, g)."""

    @staticmethod
    def forward(ctx, g, w, xshape, stride, padding, dilation):
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(g, w)
            ctx.args = (stride, padding, dilation)
        return wrap(_cnn.conv2d_grad_input(g.array, w.array, xshape, stride, padding, dilation))

    @staticmethod
    def backward(ctx, h):
        g, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        dg = Convolution.apply(h, w, None, *ctx.args) if need[0] else None
        dw = Conv2dGradWeight.apply(h, g, w.shape, *ctx.args) if need[1] else None
        return dg, dw, None, None, None, None


class Conv2dGradWeight(Builtin):
    """gw = conv2d_grad_weight(x, g); for an upstream h, <gw, h> = <g, conv2d(x, h)>, so
    dx = conv2d_grad_input(g, h) and dg = conv2d(x, h)."""

    @staticmethod
    def forward(ctx, x, g, wshape, stride, padding, dilation):
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(x, g)
            ctx.args = (stride, padding, dilation)
        return wrap(_cnn.conv2d_grad_weight(x.array, g.array, wshape, stride, padding, dilation))

    @staticmethod
    def backward(ctx, h):
        x, g = ctx.saved_tensors
        need = ctx.needs_input_grad
        dx = Conv2dGradInput.apply(g, h, x.shape, *ctx.args) if need[0] else None
        dg = Convolution.apply(x, h, None, *ctx.args) if need[1] else None
        return dx, dg, None, None, None, None


# ---------------------------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------------------------


class MaxPool2DWithIndices(Builtin):
    """y = max over each window (carray.nn.max_pool2d);  dx = g added at each window's argmax."""

    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
        want = return_indices or ctx.needs_input_grad[0]
        with as_runtime_error():
            res = _cnn.max_pool2d(x.array, kernel_size, stride, padding, dilation, ceil_mode,
                                  want)
        out, idx = res if want else (res, None)
        ctx.idx, ctx.shape = idx, x.array.shape
        if return_indices:
            indices = wrap(idx)
            ctx.mark_non_differentiable(indices)
            return wrap(out), indices
        return wrap(out)

    @staticmethod
    def backward(ctx, g, _=None):
        return (MaxPool2dGrad.apply(g, ctx.idx, ctx.shape),) + (None,) * 6


class MaxPool2dGrad(Builtin):
    """gi = zeros(shape) with g added at the flat (H x W) positions idx; the adjoint gathers:
    for an upstream h, dg[n, c, i, j] = h[n, c].flat[idx[n, c, i, j]]."""

    @staticmethod
    def forward(ctx, g, idx, shape):
        ctx.idx, ctx.shape = idx, shape
        return wrap(_cnn.max_pool2d_grad(g.array, idx, shape))

    @staticmethod
    def backward(ctx, h):
        idx, shape = ctx.idx, ctx.shape
        planes = 1
        for n in shape[:-2]:
            planes *= n
        rows = carray.arange(planes, device=idx.device).reshape((planes, 1))
        flat = h.reshape((planes, shape[-2] * shape[-1]))
        picked = Index.apply(flat, (rows, idx.reshape((planes, -1))))
        return picked.reshape(idx.shape), None, None


class AvgPool2D(Builtin):
    """y = mean over each window (carray.nn.avg_pool2d);  dx = avg_pool2d_grad(g), its adjoint."""

    @staticmethod
    def forward(ctx, x, *args):
        ctx.shape, ctx.args = x.array.shape, args
        with as_runtime_error():
            return wrap(_cnn.avg_pool2d(x.array, *args))

    @staticmethod
    def backward(ctx, g):
        return (AvgPool2dGrad.apply(g, ctx.shape, *ctx.args),) + (None,) * len(ctx.args)


class AvgPool2dGrad(Builtin):
    """gi = avg_pool2d_grad(g) (linear); its adjoint is avg_pool2d: dg = avg_pool2d(h)."""

    @staticmethod
    def forward(ctx, g, shape, *args):
        ctx.args = args
        return wrap(_cnn.avg_pool2d_grad(g.array, shape, *args))

    @staticmethod
    def backward(ctx, h):
        return (AvgPool2D.apply(h, *ctx.args), None) + (None,) * len(ctx.args)


# ---------------------------------------------------------------------------------------------
# activations
# ---------------------------------------------------------------------------------------------

class LeakyRelu(Builtin):
    """x where x > 0 else slope x;  dx = g * (1 where x > 0 else slope)."""

    @staticmethod
    def forward(ctx, x, slope):
        if ctx.needs_input_grad[0]:  # 1 - (1 - slope) [x <= 0]
            ctx.factor = carray.add(carray.multiply(carray.less_equal(x.array, 0).astype(
                x.array.dtype), slope - 1.0), 1.0)
        return wrap(leaky_relu_data(x.array, slope))

    @staticmethod
    def backward(ctx, g):
        if _state.enabled:
            return g * wrap(ctx.factor), None
        return wrap(carray.multiply(g.array, ctx.factor)), None


def leaky_relu_data(d, slope):
    """max(x, slope x) for slope <= 1, else min(x, slope x): leaky relu in two passes."""
    scaled = carray.multiply(d, slope)
    return carray.maximum(d, scaled) if slope <= 1 else carray.minimum(d, scaled)


class Gelu(Builtin):
    """Exact GELU y = x Phi(x), Phi(x) = (1 + erf(x / sqrt(2))) / 2 the standard normal CDF;
    dx = g (Phi(x) + x phi(x)), phi(x) = exp(-x^2 / 2) / sqrt(2 pi) its density."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(_cnn.gelu(x.array))       # one kernel on the device

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        if _state.enabled:  # create_graph: from differentiable ops
            cdf = (erf(x * _SQRT_HALF) + 1) * 0.5
            return g * (cdf + x * (x * x * -0.5).exp() * _INV_SQRT_2PI)
        return wrap(_cnn.gelu_grad(g.array, x.array))


_SQRT_HALF = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


class Softplus(Builtin):
    """log(1 + exp(beta x)) / beta, computed as (log1p(exp(-|bx|)) + max(bx, 0)) / beta, and x
    itself where beta x > threshold;  dx = g sigmoid(beta x) (g past the threshold)."""

    @staticmethod
    def forward(ctx, x, beta, threshold):
        ctx.save_for_backward(x)
        ctx.beta, ctx.threshold = beta, threshold
        bx = carray.multiply(x.array, beta)
        soft = carray.add(carray.log1p(carray.exp(carray.negative(carray.abs(bx)))),
                          carray.relu(bx))
        if beta != 1:
            soft = carray.divide(soft, beta)
        over = carray.greater(bx, threshold)
        return wrap(carray.where(over, x.array, soft) if carray.any(over) else soft)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        slope = sigmoid(x * ctx.beta)
        over = carray.greater(carray.multiply(x.array, ctx.beta), ctx.threshold)
        return g * (Where.apply(over, 1.0, slope) if carray.any(over) else slope), None, None


# ---------------------------------------------------------------------------------------------
# class-index losses: nll_loss and cross_entropy
#
# Both see the input as a matrix (M, C): the class dim moved last and the others flattened.
# Row i has target t_i; rows with t_i == ignore_index count for nothing. With class weights w
# (ones by default) and label smoothing eps, cross entropy's loss of row i is
#     loss_i = -sum_c B_ic logp_ic,  B_ic = valid_i ((1 - eps) w_{t_i} [c == t_i] + eps/C w_c),
# 'mean' divides the sum by D = sum_i valid_i w_{t_i}, and d loss_i / d x_ic = p_ic a_i - B_ic
# with a_i = sum_c B_ic and p = softmax(x). nll_loss is the eps = 0 case on given log-probs.
# ---------------------------------------------------------------------------------------------


class Targets:
    """Class-index targets checked against an input of C classes: flat targets `t` (M,), the
    same with ignored rows set to 0 (`safe`), the valid mask (None when every row counts), the
    per-row weights c_i = valid_i w_{t_i} (None when all are 1) and the 'mean' divisor D."""

    def __init__(self, target, n_classes, weight, ignore_index):
        t = target.array.reshape(-1)
        self.t, self.valid, self.safe = t, None, t
        m = t.size
        lo = hi = 0
        if m and t.device != "cpu":  # one read from the device, not two
            lo, hi = carray.stack([carray.min(t), carray.max(t)]).tolist()
        elif m:
            lo, hi = int(carray.min(t)), int(carray.max(t))
        if not (0 <= lo and hi < n_classes and not lo <= ignore_index <= hi):
            valid = carray.not_equal(t, ignore_index)
            safe = carray.multiply(t, valid.astype(t.dtype))  # ignored rows read class 0
            if m and (int(carray.min(safe)) < 0 or int(carray.max(safe)) >= n_classes):
                bad = [v for v, ok in zip(t.tolist(), valid.tolist())
                       if ok and not 0 <= v < n_classes]
                raise IndexError(f"Target {bad[0]} is out of bounds.")
            self.valid, self.safe = valid, safe
        self.w = weight.array if weight is not None else None
        c = None
        if self.w is not None:
            c = self.w[self.safe]
        if self.valid is not None:
            v = self.valid.astype(c.dtype if c is not None else carray.float64)
            c = v if c is None else carray.multiply(c, v)
        self.c = c
        self.divisor = float(carray.sum(c)) if c is not None else float(m)

    def row_weights(self, dtype):
        return None if self.c is None else self.c.astype(dtype)

    def mask(self, n_classes):
        """(M, C) bool: [c == safe_i], made once (the forward's pick and the backward share it)."""
        k = getattr(self, "_mask", None)
        if k is None or k.shape[1] != n_classes:
            cls = carray.arange(n_classes, device=self.safe.device)
            k = self._mask = carray.equal(carray.expand_dims(self.safe, 1), cls)
        return k


def _as_rows(x, class_dim):
    """The carray x as (M, C): its class dim moved last and the other dims flattened."""
    if x.ndim == 1:
        return x.reshape((1, x.shape[0]))
    if x.ndim == 2:
        return x
    return carray.moveaxis(x, class_dim, -1).reshape((-1, x.shape[class_dim]))


def _from_rows(rows, shape):
    """The inverse of _as_rows for a carray (M, C) array and the original shape."""
    if len(shape) <= 2:
        return rows.reshape(shape)
    moved = shape[:1] + shape[2:] + shape[1:2]
    return carray.moveaxis(rows.reshape(moved), -1, 1)


def _t_as_rows(x):
    """_as_rows for a Tensor (differentiable)."""
    if x.ndim == 1:
        return x.reshape((1, x.shape[0]))
    if x.ndim == 2:
        return x
    return x.permute((0,) + tuple(range(2, x.ndim)) + (1,)).reshape((-1, x.shape[1]))


def _t_from_rows(rows, shape):
    """_from_rows for a Tensor (differentiable)."""
    if len(shape) <= 2:
        return rows.reshape(shape)
    moved = shape[:1] + shape[2:] + shape[1:2]
    nd = len(shape)
    return rows.reshape(moved).permute((0, nd - 1) + tuple(range(1, nd - 1)))


def _row_scale(g, reduction, tg, m):
    """The gradient reaching each row's loss: g per row ('none'), g ('sum'), g / D ('mean'); a
    carray (M, 1) array or a Python float."""
    if reduction == "none":
        return g.array.reshape((m, 1))
    if reduction == "mean" and not tg.divisor:
        return _zero_divisor_scale(tg, m, g.array.dtype)
    if g.array.device != "cpu":  # a 0-d device array: reading it would wait for the queue
        return g.array if reduction == "sum" else carray.multiply(g.array, 1.0 / tg.divisor)
    s = g.array.item()
    return s if reduction == "sum" else s / tg.divisor


def _zero_divisor_scale(tg, m, dtype):
    """The row scales of a 'mean' over a zero weight sum: NaN for the counted rows and 0 for the
    ignored ones (PyTorch's gradient is 0, not NaN, when every target is ignored)."""
    if tg.valid is None:
        return float("nan")
    return carray.where(tg.valid, float("nan"), 0.0).astype(dtype).reshape((m, 1))


def _t_row_scale(g, reduction, tg, m):
    """_row_scale for a Tensor g (create_graph): a Tensor (M, 1) or scalar Tensor."""
    if reduction == "none":
        return g.reshape((m, 1))
    if reduction == "mean" and not tg.divisor:
        return g * wrap(carray.asarray(_zero_divisor_scale(tg, m, g.array.dtype),
                                       dtype=g.array.dtype, device=g.array.device))
    return g / tg.divisor if reduction == "mean" else g


def _targets_matrix(tg, n_classes, eps, dtype):
    """B (M, C) of the header comment, as a carray array of dtype."""
    onehot = tg.mask(n_classes).astype(dtype)
    c = tg.row_weights(dtype)
    if c is not None:
        onehot = carray.multiply(onehot, carray.expand_dims(c, 1))
    if not eps:
        return onehot
    b = carray.multiply(onehot, 1 - eps)
    w = tg.w.astype(dtype) if tg.w is not None else \
        carray.ones((n_classes,), dtype=dtype, device=tg.safe.device)
    spread = carray.multiply(w, eps / n_classes)
    if tg.valid is not None:
        spread = carray.multiply(spread, carray.expand_dims(tg.valid.astype(dtype), 1))
    return carray.add(b, spread)


def _pick(rows, safe, tg=None):
    """rows[i, safe[i]] for a carray (M, C) array. On the device, a masked row sum over tg's
    one-hot mask: advanced indexing would read the indices to the host."""
    m, n = rows.shape
    if tg is not None and rows.device != "cpu":
        return carray.sum(carray.where(tg.mask(n), rows, 0.0), axis=1)
    if rows.flags.c_contiguous:
        return rows.reshape(-1)[carray.add(carray.multiply(carray.arange(m, device=safe.device),
                                                           n), safe)]
    return rows[carray.arange(m, device=safe.device), safe]


def _finish_loss(per_row, tg, reduction, target_shape):
    """per_row (M,) losses reduced: as a target-shaped array, their sum, or sum / D."""
    if reduction == "none":
        return wrap(per_row.reshape(target_shape))
    total = carray.sum(per_row)
    if reduction == "mean":
        total = carray.divide(total, tg.divisor) if tg.divisor else \
            carray.full((), float("nan"), dtype=per_row.dtype, device=per_row.device)
    return wrap(total)


class CrossEntropy(Builtin):
    """Cross entropy of logits x (N, C, ...) against class indices, with class weights, an
    ignored index and label smoothing (see the header comment);
    dx_ic = s_i (softmax(x)_ic a_i - B_ic), s_i the gradient of row i's loss."""

    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, x, tg, reduction, eps, target_shape):
        rows = _as_rows(x.array, 1)
        n_classes = rows.shape[1]
        m = carray.max(rows, axis=1, keepdims=True) if rows.size else rows
        shifted = carray.subtract(rows, m)
        e = carray.exp(shifted)
        s = carray.sum(e, axis=1, keepdims=True)
        logp = carray.subtract(shifted, carray.log(s))
        per_row = carray.negative(_pick(logp, tg.safe, tg))
        c = tg.row_weights(logp.dtype)
        if c is not None:
            per_row = carray.multiply(per_row, c)
        if eps:
            w = tg.w.astype(logp.dtype) if tg.w is not None else None
            smooth = carray.negative(carray.sum(logp if w is None else carray.multiply(logp, w),
                                                axis=1))
            if tg.valid is not None:
                smooth = carray.where(tg.valid, smooth, 0.0)
            per_row = carray.add(carray.multiply(per_row, 1 - eps),
                                 carray.multiply(smooth, eps / n_classes))
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(x)
            ctx.p = carray.divide(e, s)
            ctx.tg, ctx.reduction, ctx.eps = tg, reduction, eps
        return _finish_loss(per_row, tg, reduction, target_shape)

    @staticmethod
    def backward(ctx, g):
        tg, eps = ctx.tg, ctx.eps
        p = ctx.p
        m, n_classes = p.shape
        b = _targets_matrix(tg, n_classes, eps, p.dtype)
        if _state.enabled:  # create_graph: softmax and the row scales from differentiable ops
            (x,) = ctx.saved_tensors
            probs = softmax(_t_as_rows(x), 1)
            a = carray.sum(b, axis=1, keepdims=True)
            s = _t_row_scale(g, ctx.reduction, tg, m)
            gx = (probs * wrap(a) - wrap(b)) * s
            return _t_from_rows(gx, x.shape), None, None, None, None
        s = _row_scale(g, ctx.reduction, tg, m)
        if tg.c is None and not eps:  # every row has weight 1: a_i = 1
            gx = carray.subtract(p, b)
        else:
            gx = carray.subtract(carray.multiply(p, carray.sum(b, axis=1, keepdims=True)), b)
        carray.multiply(gx, s, out=gx)
        return wrap(_from_rows(gx, ctx.saved_tensors[0].shape)), None, None, None, None


class SoftmaxCrossEntropy(Builtin):
    """cross_entropy's common case (no class weights, no label smoothing) as one carray.nn
    primitive each way: one kernel launch for the loss and one for its gradient on the device,
    where CrossEntropy's composition takes about twenty (and reads the targets' range to the
    host); dx_ic = s_i (softmax(x)_ic - [c == t_i]) for counted rows, 0 for ignored ones."""

    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, x, target, ignore_index, reduction, target_shape):
        t = target.reshape(-1)
        loss, probs, count = _cnn.softmax_cross_entropy(_as_rows(x.array, 1), t, ignore_index,
                                                        reduction)
        if ctx.needs_input_grad[0]:  # saved tensors: freed after backward
            ctx.save_for_backward(x, wrap(probs), wrap(t),
                                  wrap(count) if reduction == "mean" else None)
            ctx.ignore, ctx.reduction = ignore_index, reduction
        return wrap(loss.reshape(target_shape) if reduction == "none" else loss)

    @staticmethod
    def backward(ctx, g):
        x, probs, t, count = ctx.saved_tensors
        probs, t = probs.array, t.array
        m, n_classes = probs.shape
        if _state.enabled:  # create_graph: the same gradient from differentiable ops
            t2 = carray.expand_dims(t, 1)
            counted = carray.not_equal(t2, ctx.ignore).astype(probs.dtype)
            onehot = carray.multiply(carray.equal(t2, carray.arange(n_classes, device=t.device))
                                     .astype(probs.dtype), counted)
            s = g.reshape((m, 1)) if ctx.reduction == "none" else g
            if count is not None:  # no counted rows: every row's gradient is 0, not NaN
                s = s / wrap(carray.maximum(count.array, 1))
            gx = (softmax(_t_as_rows(x), 1) * wrap(counted) - wrap(onehot)) * s
            return _t_from_rows(gx, x.shape), None, None, None, None
        gout = g.array.reshape((m,)) if ctx.reduction == "none" else g.array
        if gout.dtype != probs.dtype:
            gout = gout.astype(probs.dtype)
        gx = _cnn.softmax_cross_entropy_grad(probs, t, gout,
                                             None if count is None else count.array, ctx.ignore)
        return wrap(_from_rows(gx, x.shape)), None, None, None, None


class NllLoss(Builtin):
    """-w_{t_i} x[i, t_i] per row (x holds log-probabilities);  dx = -s_i B_ic."""

    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, x, tg, reduction, target_shape):
        rows = _as_rows(x.array, 1)
        per_row = carray.negative(_pick(rows, tg.safe, tg))
        c = tg.row_weights(rows.dtype)
        if c is not None:
            per_row = carray.multiply(per_row, c)
        if ctx.needs_input_grad[0]:
            ctx.tg, ctx.reduction = tg, reduction
            ctx.shape, ctx.dtype = x.array.shape, x.array.dtype
            ctx.m, ctx.n = rows.shape
        return _finish_loss(per_row, tg, reduction, target_shape)

    @staticmethod
    def backward(ctx, g):
        b = _targets_matrix(ctx.tg, ctx.n, 0.0, ctx.dtype)
        if _state.enabled:
            s = _t_row_scale(g, ctx.reduction, ctx.tg, ctx.m)
            return _t_from_rows(-(wrap(b) * s), ctx.shape), None, None, None
        s = _row_scale(g, ctx.reduction, ctx.tg, ctx.m)
        carray.multiply(b, -s if isinstance(s, float) else carray.negative(s), out=b)
        return wrap(_from_rows(b, ctx.shape)), None, None, None


# ---------------------------------------------------------------------------------------------
# batch normalisation
# ---------------------------------------------------------------------------------------------

class BatchNormTrain(Builtin):
    """y = xhat w + b, xhat = (x - mean) / sqrt(var + eps), mean and (biased) var per channel
    (dim 1) over every other dim (M values each);
    dx = w / sqrt(var + eps) (g - mean(g) - xhat mean(g xhat)), dw = sum(g xhat), db = sum(g).
    running is None or (running_mean, running_var, momentum): updated in place in the same
    pass (carray.nn.batch_norm: two launches forward and two backward on the GPU)."""

    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, x, w, b, eps, running):
        d = x.array
        rm, rv, momentum = running if running is not None else (None, None, 0.1)
        y, mean, var, invstd = _cnn.batch_norm(
            d, None if w is None else w.array, None if b is None else b.array, eps,
            None if rm is None else rm.array, None if rv is None else rv.array, momentum)
        if rm is not None:
            rm._vc[0] += 1
            rv._vc[0] += 1
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(x, w)
            ctx.mean, ctx.invstd, ctx.eps = mean, invstd, eps
            ctx.axes = (0,) + tuple(range(2, d.ndim))
            ctx.cshape = (1, d.shape[1]) + (1,) * (d.ndim - 2)
        return wrap(y)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        if _state.enabled:
            return _batch_norm_grads_composed(ctx, x, w, g)
        grads = _cnn.batch_norm_grad(g.array, x.array, ctx.mean, ctx.invstd,
                                     None if w is None else w.array, need[:3])
        return (*(None if a is None else wrap(a) for a in grads), None, None)


def _batch_norm_grads_composed(ctx, x, w, g):
    """BatchNormTrain's gradients from differentiable ops (backward under create_graph)."""
    need = ctx.needs_input_grad
    axes, cshape = ctx.axes, ctx.cshape
    mean = x.mean(axes, keepdim=True)
    xc = x - mean
    invstd = ((xc * xc).mean(axes, keepdim=True) + ctx.eps).rsqrt()
    xhat = xc * invstd
    gx = gw = gb = None
    if need[0]:
        gxhat = g if w is None else g * w.reshape(cshape)
        gx = (gxhat - gxhat.mean(axes, keepdim=True)
              - xhat * (gxhat * xhat).mean(axes, keepdim=True)) * invstd
    if need[1]:
        gw = (g * xhat).sum(axes)
    if need[2]:
        gb = g.sum(axes)
    return gx, gw, gb, None, None


# ---------------------------------------------------------------------------------------------
# embedding
# ---------------------------------------------------------------------------------------------

class Embedding(Builtin):
    """y = weight[idx] (rows gathered);  dweight = zeros with g's rows added at idx (rows at
    padding_idx get nothing; with scale_grad_by_freq each is divided by its index's count)."""

    @staticmethod
    def forward(ctx, weight, idx, padding_idx, by_freq):
        if ctx.needs_input_grad[0]:
            ctx.idx, ctx.padding_idx, ctx.by_freq = idx, padding_idx, by_freq
            ctx.shape = weight.array.shape
        return wrap(_cnn.embedding(weight.array, idx))

    @staticmethod
    def backward(ctx, g):
        v, dim = ctx.shape
        flat = ctx.idx.reshape(-1)
        scale = None
        if ctx.by_freq or ctx.padding_idx is not None:
            dev = g.array.device
            scale = carray.ones((flat.size,), dtype=g.array.dtype, device=dev)
            if ctx.by_freq:
                counts = carray.zeros((v,), dtype=g.array.dtype, device=dev)
                carray.add_at(counts, flat, carray.ones((flat.size,), dtype=g.array.dtype,
                                                        device=dev))
                scale = carray.reciprocal(counts[flat])
            if ctx.padding_idx is not None:
                scale = carray.where(carray.equal(flat, ctx.padding_idx), 0.0, scale)
            scale = carray.expand_dims(scale.astype(g.array.dtype), 1)
        if _state.enabled:
            rows = g.reshape((-1, dim))
            if scale is not None:
                rows = rows * wrap(scale)
            return IndexAdd.apply(ctx.shape, (flat,), rows), None, None, None
        rows = g.array.reshape((-1, dim))
        if scale is not None:
            rows = carray.multiply(rows, scale)
        out = carray.zeros(ctx.shape, dtype=g.array.dtype, device=g.array.device)
        carray.add_at(out, flat, rows)
        return wrap(out), None, None, None
