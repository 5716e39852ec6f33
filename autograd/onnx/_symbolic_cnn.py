"""ONNX nodes for the convolutional-network ops beyond Conv (groups=1) and pooling: grouped
Conv, ConvTranspose, BatchNormalization (eval and training), Pad (constant, reflect, edge;
circular as Slice + Concat) and flip (Slice with step -1, as torch.onnx). SYMBOLICS as in
_symbolic.py (which merges this table into its own)."""

from autograd.onnx._errors import UnsupportedOperatorError
from autograd.onnx._graph import np_dtype
from autograd.ops import conv, inplace, nn_composite, shape
from autograd.tensor import norm_dim

_INT64_MAX = 2 ** 63 - 1


def _np():
    """NumPy, imported when an export runs (`import autograd` never imports it)."""
    import numpy
    return numpy


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def conv_node(g, x, w, b, stride, padding, dilation, groups=1):
    """A Conv node for conv2d of a (N, C, H, W) or unbatched (C, H, W) x; padding as conv2d's
    (ints, pairs, 'same' or 'valid')."""
    k = w.shape[2:]
    d = _pair(dilation)
    if isinstance(padding, str):
        if padding == "same":
            pads = []
            for dd, kk in zip(d, k):
                total = dd * (kk - 1)
                pads.append((total // 2, total - total // 2))
            pads = [pads[0][0], pads[1][0], pads[0][1], pads[1][1]]
        else:
            pads = [0, 0, 0, 0]
    else:
        p = _pair(padding)
        pads = [p[0], p[1], p[0], p[1]]
    xn = g.value(x)
    if x.ndim == 3:
        xn = g.node("Unsqueeze", [xn, g.ints([0])])
    ins = [xn, g.value(w)] + ([g.value(b)] if b is not None else [])
    out = g.node("Conv", ins, kernel_shape=list(k), strides=list(_pair(stride)), pads=pads,
                 dilations=list(d), group=int(groups))
    return g.node("Squeeze", [out, g.ints([0])]) if x.ndim == 3 else out


def _grouped_conv(g, op):
    x, w, b, stride, padding, dilation, groups = op.args
    return conv_node(g, x, w, b, stride, padding, dilation, groups)


def _conv_transpose(g, op):
    x, w, b, s, p, o, d, groups = op.args
    ins = [g.value(x), g.value(w)] + ([g.value(b)] if b is not None else [])
    return g.node("ConvTranspose", ins, kernel_shape=list(w.shape[2:]), strides=list(s),
                  pads=list(p) + list(p), output_padding=list(o), dilations=list(d),
                  group=int(groups))


def _channel_constant(g, t, x, fill):
    """The name of t, or (t None) a constant of `fill` per channel of x."""
    if t is not None:
        return g.value(t)
    return g.constant(_np().full((x.shape[1],), fill, dtype=np_dtype(x.array.dtype)))


def _batch_norm_ins(g, x, rm, rv, w, b):
    return [g.value(x), _channel_constant(g, w, x, 1.0), _channel_constant(g, b, x, 0.0),
            _channel_constant(g, rm, x, 0.0), _channel_constant(g, rv, x, 1.0)]


def _unbatched_1d(g, x, ins, emit):
    """ONNX's BatchNormalization wants (N, C, D1, ...): a (N, C) input runs as (N, C, 1)."""
    if x.ndim != 2:
        return emit(ins)
    ins = [g.node("Unsqueeze", [ins[0], g.ints([2])])] + ins[1:]
    out = emit(ins)
    if isinstance(out, list):
        return [g.node("Squeeze", [out[0], g.ints([2])])] + out[1:]
    return g.node("Squeeze", [out, g.ints([2])])


def _batch_norm_eval(g, op):
    x, rm, rv, w, b, eps = op.args
    return _unbatched_1d(g, x, _batch_norm_ins(g, x, rm, rv, w, b),
                         lambda ins: g.node("BatchNormalization", ins, epsilon=float(eps)))


def _batch_norm_training(g, op):
    """torch.onnx's training-mode export: BatchNormalization with training_mode=1 (opset 14+),
    its running mean and variance outputs left unused."""
    x, rm, rv, w, b, momentum, eps = op.args
    if op.opset < 14:
        raise UnsupportedOperatorError(f"Exporting the operator 'batch_norm' in training mode "
                                       f"to ONNX opset version {op.opset} is not supported: "
                                       f"BatchNormalization's training_mode needs opset 14 or "
                                       f"later")
    out = _unbatched_1d(g, x, _batch_norm_ins(g, x, rm, rv, w, b),
                        lambda ins: g.node("BatchNormalization", ins, n_out=3,
                                           epsilon=float(eps), momentum=1.0 - float(momentum),
                                           training_mode=1))
    return out[0]


def _full_pads(pad, ndim):
    """PyTorch's pad list (last dim first, (lo, hi) pairs) as ONNX's [begins..., ends...]."""
    begins, ends = [0] * ndim, [0] * ndim
    for i in range(len(pad) // 2):
        begins[ndim - 1 - i], ends[ndim - 1 - i] = pad[2 * i], pad[2 * i + 1]
    return begins + ends


def _constant_pad(g, op):
    x, pad, value = op.args
    dt = x.array.dtype
    fill = g.constant(_np().asarray(value, dtype=np_dtype(dt)), "pad_value")
    return g.node("Pad", [g.value(x), g.ints(_full_pads(pad, x.ndim)), fill], mode="constant")


def _mode_pad(g, op):
    x, pad, mode = op.args
    if mode == "circular":
        return _circular_pad(g, x, pad)
    return g.node("Pad", [g.value(x), g.ints(_full_pads(pad, x.ndim))],
                  mode="reflect" if mode == "reflect" else "edge")


def _circular_pad(g, x, pad):
    """Each padded dim as Concat(its last lo entries, x, its first hi entries)."""
    if min(pad) < 0:
        raise UnsupportedOperatorError("Exporting the operator 'pad' in mode 'circular' with "
                                       "negative padding to ONNX is not supported")
    out = xin = g.value(x)
    for i in range(len(pad) // 2):
        dim, (lo, hi) = x.ndim - 1 - i, pad[2 * i:2 * i + 2]
        parts = [out]
        if lo:
            parts.insert(0, g.node("Slice", [out, g.ints([-lo]), g.ints([_INT64_MAX]),
                                             g.ints([dim])]))
        if hi:
            parts.append(g.node("Slice", [out, g.ints([0]), g.ints([hi]), g.ints([dim])]))
        out = g.node("Concat", parts, axis=dim) if len(parts) > 1 else out
    return out if out != xin else g.node("Identity", [out])


def _flip(g, op):
    x, dims = op.args
    axes = [norm_dim(d, x.ndim) for d in dims]
    if not axes:
        return g.node("Identity", [g.value(x)])
    n = len(axes)
    return g.node("Slice", [g.value(x), g.ints([-1] * n), g.ints([-_INT64_MAX] * n),
                            g.ints(axes), g.ints([-1] * n)])


def _traced_commit(g, op):
    """An in-place op: its target is from now on the op's result."""
    return g.node("Identity", [g.value(op.args[1])])


SYMBOLICS = {
    conv.GroupedConv2d: _grouped_conv, conv.ConvTranspose: _conv_transpose,
    nn_composite.BatchNormEval: _batch_norm_eval,
    nn_composite.BatchNormTraining: _batch_norm_training,
    nn_composite.ModePad: _mode_pad, shape.Pad: _constant_pad, shape.Flip: _flip,
    inplace.TracedCommit: _traced_commit,
}
