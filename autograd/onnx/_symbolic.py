"""ONNX nodes for each recorded autograd Function: SYMBOLICS maps a Function class to
emit(g, op), which adds nodes to the Graph g and returns the name of the result (a list of
names for a tuple result). `op` holds the application: args, result, the opset and, with
dynamic axes, `alt`: the result's shape(s) in a second trace with other sizes on those axes
(the dims of a Reshape/Expand target that differ are the dynamic ones).
"""

import math

from autograd.onnx._errors import UnsupportedOperatorError
from autograd.onnx._graph import np_dtype
from autograd.onnx._symbolic_cnn import SYMBOLICS as _CNN_SYMBOLICS
from autograd.onnx._symbolic_cnn import conv_node
from autograd.ops import elementwise as E
from autograd.ops import linalg, normalization, reduce, shape
from autograd.ops import nn as N
from autograd.ops._util import norm_dims
from autograd.ops.attention import MaskedSoftmax, ScaledDotProductAttention
from autograd.tensor import Tensor, norm_dim

_INT64_MAX = 2 ** 63 - 1


def _np():
    """NumPy, imported when an export runs (`import autograd` never imports it)."""
    import numpy
    return numpy


def _out_dtype(op):
    r = op.result
    return (r[0] if isinstance(r, tuple) else r).array.dtype


def _binary(onnx_op):
    def emit(g, op):
        a, b = op.args
        dt = _out_dtype(op)
        return g.node(onnx_op, [g.value(a, dt), g.value(b, dt)])
    return emit


def _unary(onnx_op):
    def emit(g, op):
        return g.node(onnx_op, [g.value(op.args[0], _out_dtype(op))])
    return emit


def _identity(g, op):
    return g.node("Identity", [g.value(op.args[0])])


def _pow(g, op):
    a, b = op.args
    dt = _out_dtype(op)
    return g.node("Pow", [g.value(a, dt), g.value(b, dt)])


def _where(g, op):
    cond, x, y = op.args
    dt = _out_dtype(op)
    c = g.value(cond)
    if (cond.array if isinstance(cond, Tensor) else cond).dtype.kind != "b":
        c = g.node("Cast", [c], to=g.onnx.TensorProto.BOOL)
    return g.node("Where", [c, g.value(x, dt), g.value(y, dt)])


def _clamp(g, op):
    x, lo, hi = op.args
    dt = _out_dtype(op)
    out = g.value(x, dt)
    if lo is not None:
        out = g.node("Max", [out, g.value(lo, dt)])
    if hi is not None:
        out = g.node("Min", [out, g.value(hi, dt)])
    return out if out != g.names.get(id(x)) else g.node("Identity", [out])


def _leaky_relu(g, op):
    x, slope = op.args
    return g.node("LeakyRelu", [g.value(x)], alpha=float(slope))


def _softplus(g, op):
    x, beta, threshold = op.args
    dt = _out_dtype(op)
    xn = g.value(x)
    bx = xn if beta == 1 else g.node("Mul", [xn, g.value(float(beta), dt)])
    sp = g.node("Softplus", [bx])
    if beta != 1:
        sp = g.node("Div", [sp, g.value(float(beta), dt)])
    if math.isinf(threshold):
        return sp
    over = g.node("Greater", [bx, g.value(float(threshold), dt)])
    return g.node("Where", [over, xn, sp])


def _gelu(g, op):
    """Exact GELU as x * (1 + erf(x / sqrt(2))) / 2 (ONNX's Gelu node needs opset 20)."""
    dt = _out_dtype(op)
    x = g.value(op.args[0], dt)
    e = g.node("Erf", [g.node("Div", [x, g.value(math.sqrt(2.0), dt)])])
    half = g.node("Mul", [x, g.value(0.5, dt)])
    return g.node("Mul", [half, g.node("Add", [e, g.value(1.0, dt)])])


def _softmax(onnx_op):
    def emit(g, op):
        x, dim = op.args
        return g.node(onnx_op, [g.value(x)], axis=norm_dim(dim, max(x.ndim, 1)))
    return emit


def _masked_softmax(g, op):
    return g.node("Softmax", [g.value(op.args[0])], axis=-1)


def _matmul(g, op):
    a, b = op.args
    return g.node("MatMul", [g.value(a), g.value(b)])


def _addmm(g, op):
    x, w, b = op.args
    if x.ndim == 2:
        ins = [g.value(x), g.value(w)] + ([g.value(b)] if b is not None else [])
        return g.node("Gemm", ins, transB=1)
    y = g.node("MatMul", [g.value(x), g.node("Transpose", [g.value(w)], perm=[1, 0])])
    return g.node("Add", [y, g.value(b)]) if b is not None else y


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _conv(g, op):
    x, w, b, stride, padding, dilation = op.args
    return conv_node(g, x, w, b, stride, padding, dilation)


def _pool_input(g, x):
    xn = g.value(x)
    return g.node("Unsqueeze", [xn, g.ints([0])]) if x.ndim == 3 else xn


def _pool_output(g, x, out):
    return g.node("Squeeze", [out, g.ints([0])]) if x.ndim == 3 else out


def _max_pool(g, op):
    x, k, s, p, d, ceil_mode, return_indices = op.args
    if return_indices:
        raise UnsupportedOperatorError("Exporting the operator 'max_pool2d' with "
                                       "return_indices=True to ONNX is not supported")
    k = _pair(k)
    s = _pair(s) if s is not None and s != () and s != [] else k
    p, d = _pair(p), _pair(d)
    out = g.node("MaxPool", [_pool_input(g, x)], kernel_shape=list(k), strides=list(s),
                 pads=[p[0], p[1], p[0], p[1]], dilations=list(d), ceil_mode=int(ceil_mode))
    return _pool_output(g, x, out)


def _avg_pool(g, op):
    x, k, s, p, ceil_mode, count_include_pad, divisor = op.args
    if divisor is not None:
        raise UnsupportedOperatorError("Exporting the operator 'avg_pool2d' with "
                                       "divisor_override to ONNX is not supported")
    k = _pair(k)
    s = _pair(s) if s is not None and s != () and s != [] else k
    p = _pair(p)
    if tuple(x.shape[-2:]) == k and p == (0, 0):
        out = g.node("GlobalAveragePool", [_pool_input(g, x)])
    else:
        out = g.node("AveragePool", [_pool_input(g, x)], kernel_shape=list(k), strides=list(s),
                     pads=[p[0], p[1], p[0], p[1]], ceil_mode=int(ceil_mode),
                     count_include_pad=int(count_include_pad))
    return _pool_output(g, x, out)


def _layer_norm(g, op):
    x, k, w, b, eps = op.args
    if op.opset < 17:
        raise UnsupportedOperatorError(f"Exporting the operator 'layer_norm' to ONNX opset "
                                       f"version {op.opset} is not supported: "
                                       f"LayerNormalization needs opset 17 or later")
    dt = x.array.dtype
    norm_shape = x.shape[x.ndim - k:]
    scale = g.value(w) if w is not None else g.constant(_np().ones(norm_shape, np_dtype(dt)))
    bias = g.value(b) if b is not None else g.constant(_np().zeros(norm_shape, np_dtype(dt)))
    return g.node("LayerNormalization", [g.value(x), scale, bias], axis=-k, epsilon=float(eps))


def _embedding(g, op):
    w, idx = op.args[:2]
    i = g.node("Cast", [g.value(idx)], to=g.onnx.TensorProto.INT64)
    return g.node("Gather", [g.value(w), i], axis=0)


def _reduce(onnx_op, axes_input_from):
    def emit(g, op):
        x, dim, keepdim = op.args[:3]
        dims = norm_dims(dim, x.ndim)
        xn = g.value(x, _out_dtype(op))
        if not dims:
            return g.node("Identity", [xn])
        if op.opset >= axes_input_from:
            return g.node(onnx_op, [xn, g.ints(dims)], keepdims=int(bool(keepdim)))
        return g.node(onnx_op, [xn], axes=list(dims), keepdims=int(bool(keepdim)))
    return emit


def _amax(g, op):
    x, dim, keepdim, largest = op.args
    name = "ReduceMax" if largest else "ReduceMin"
    dims = norm_dims(dim, x.ndim)
    if op.opset >= 18:
        return g.node(name, [g.value(x), g.ints(dims)], keepdims=int(bool(keepdim)))
    return g.node(name, [g.value(x)], axes=list(dims), keepdims=int(bool(keepdim)))


def _max_all(g, op):
    x, largest = op.args
    return g.node("ReduceMax" if largest else "ReduceMin", [g.value(x)], keepdims=0)


def _target_shape(op, fill):
    """The result's shape as a Reshape/Expand target: the dims that change with the dynamic axes
    (op.alt) become `fill` (-1 for Reshape: at most one; 1 for Expand)."""
    out = list(op.result.shape)
    if op.alt is None:
        return out
    changed = [i for i, (a, b) in enumerate(zip(out, op.alt)) if a != b]
    if fill == -1 and len(changed) > 1:
        raise UnsupportedOperatorError(f"Exporting a reshape to {out} whose dims {changed} all "
                                       f"depend on the dynamic axes is not supported")
    for i in changed:
        out[i] = fill
    return out


def _reshape(g, op):
    return g.node("Reshape", [g.value(op.args[0]), g.ints(_target_shape(op, -1))])


def _expand(g, op):
    return g.node("Expand", [g.value(op.args[0]), g.ints(_target_shape(op, 1))])


def _permute(g, op):
    x, dims = op.args
    return g.node("Transpose", [g.value(x)], perm=[norm_dim(d, x.ndim) for d in dims])


def _transpose(g, op):
    x, d0, d1 = op.args
    perm = list(range(x.ndim))
    if x.ndim:
        a, b = norm_dim(d0, x.ndim), norm_dim(d1, x.ndim)
        perm[a], perm[b] = perm[b], perm[a]
    return g.node("Transpose", [g.value(x)], perm=perm)


def _squeeze(g, op):
    x, dim = op.args
    chosen = set(range(x.ndim)) if dim is None else set(norm_dims(dim, x.ndim))
    axes = [i for i in range(x.ndim) if i in chosen and x.shape[i] == 1]
    if not axes:
        return g.node("Identity", [g.value(x)])
    return g.node("Squeeze", [g.value(x), g.ints(axes)])


def _unsqueeze(g, op):
    x, dim = op.args
    return g.node("Unsqueeze", [g.value(x), g.ints([norm_dim(dim, x.ndim + 1)])])


def _to_copy(g, op):
    x = op.args[0]
    dt = op.result.array.dtype
    if dt == x.array.dtype:
        return g.node("Identity", [g.value(x)])
    return g.node("Cast", [g.value(x)], to=g.onnx_type(dt))


def _cat(g, op):
    dim, *tensors = op.args
    keep = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or tensors[:1]
    axis = norm_dim(dim, op.result.ndim)
    return g.node("Concat", [g.value(t, _out_dtype(op)) for t in keep], axis=axis)


def _stack(g, op):
    dim, *tensors = op.args
    axis = norm_dim(dim, op.result.ndim)
    parts = [g.node("Unsqueeze", [g.value(t, _out_dtype(op)), g.ints([axis])]) for t in tensors]
    return g.node("Concat", parts, axis=axis)


def _index(g, op):
    x, key = op.args
    keys = list(key) if isinstance(key, tuple) else [key]
    if Ellipsis in keys:
        i = keys.index(Ellipsis)
        used = sum(1 for k in keys if k is not None and k is not Ellipsis)
        keys[i:i + 1] = [slice(None)] * (x.ndim - used)
    arrays = [i for i, k in enumerate(keys) if not (k is None or isinstance(k, (slice, int)))]
    if arrays:
        if len(arrays) == 1 and all(k == slice(None) for i, k in enumerate(keys)
                                    if i != arrays[0]):
            idx = g.node("Cast", [g.value(keys[arrays[0]])], to=g.onnx.TensorProto.INT64)
            return g.node("Gather", [g.value(x), idx], axis=arrays[0])
        raise UnsupportedOperatorError("Exporting the operator 'index' with this advanced "
                                       "index to ONNX is not supported")
    starts, ends, axes, steps, squeeze, unsqueeze = [], [], [], [], [], []
    ax = out_pos = 0
    for k in keys:
        if k is None:
            unsqueeze.append(out_pos)
            out_pos += 1
            continue
        if isinstance(k, slice):
            if k != slice(None):
                starts.append(k.start if k.start is not None else 0)
                ends.append(k.stop if k.stop is not None else _INT64_MAX)
                axes.append(ax)
                steps.append(k.step if k.step is not None else 1)
            out_pos += 1
        else:
            starts.append(k)
            ends.append(k + 1 if k != -1 else _INT64_MAX)
            axes.append(ax)
            steps.append(1)
            squeeze.append(ax)
        ax += 1
    out = xin = g.value(x)
    if axes:
        out = g.node("Slice", [out, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps)])
    if squeeze:
        out = g.node("Squeeze", [out, g.ints(squeeze)])
    if unsqueeze:
        out = g.node("Unsqueeze", [out, g.ints(unsqueeze)])
    if out == xin:
        out = g.node("Identity", [out])
    return out


def _split(g, op):
    x, dim, sizes, _ = op.args
    names = []
    start = 0
    for size in sizes:  # a Slice per piece (what indexing each piece exported before)
        names.append(g.node("Slice", [g.value(x), g.ints([start]), g.ints([start + size]),
                                      g.ints([dim]), g.ints([1])]))
        start += size
    return names


def _sdpa(g, op):
    q, k, v, mask, causal, scale, dropout_p = op.args
    dt = q.array.dtype
    perm = list(range(k.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    s = g.node("MatMul", [g.value(q), g.node("Transpose", [g.value(k)], perm=perm)])
    s = g.node("Mul", [s, g.value(float(scale), dt)])
    neg_inf = g.value(float("-inf"), dt)
    if mask is not None:
        if mask.array.dtype.kind == "b":
            s = g.node("Where", [g.value(mask), s, neg_inf])
        else:
            s = g.node("Add", [s, g.value(mask, dt)])
    if causal:
        L, S = q.shape[-2], k.shape[-2]
        allowed = _np().tril(_np().ones((L, S), dtype=bool))
        s = g.node("Where", [g.constant(allowed, "causal_mask"), s, neg_inf])
    p = g.node("Softmax", [s], axis=-1)
    return g.node("MatMul", [p, g.value(v)])


SYMBOLICS = {
    E.Add: _binary("Add"), E.Sub: _binary("Sub"), E.Mul: _binary("Mul"), E.Div: _binary("Div"),
    E.Pow: _pow, E.Neg: _unary("Neg"), E.Maximum: _binary("Max"), E.Minimum: _binary("Min"),
    E.Where: _where, E.Clamp: _clamp,
    E.Relu: _unary("Relu"), E.Sigmoid: _unary("Sigmoid"), E.Tanh: _unary("Tanh"),
    E.Exp: _unary("Exp"), E.Log: _unary("Log"), E.Sqrt: _unary("Sqrt"), E.Sin: _unary("Sin"),
    E.Cos: _unary("Cos"), E.Abs: _unary("Abs"), E.Sign: _unary("Sign"),
    E.Floor: _unary("Floor"), E.Ceil: _unary("Ceil"), E.Erf: _unary("Erf"),
    N.Gelu: _gelu, N.LeakyRelu: _leaky_relu, N.Softplus: _softplus,
    reduce.Softmax: _softmax("Softmax"), reduce.LogSoftmax: _softmax("LogSoftmax"),
    MaskedSoftmax: _masked_softmax,
    reduce.Sum: _reduce("ReduceSum", 13), reduce.Mean: _reduce("ReduceMean", 18),
    reduce.AmaxDims: _amax, reduce.MaxAll: _max_all,
    linalg.MatMul: _matmul, N.Addmm: _addmm, N.Convolution: _conv,
    N.MaxPool2DWithIndices: _max_pool, N.AvgPool2D: _avg_pool,
    normalization.NativeLayerNorm: _layer_norm, N.Embedding: _embedding,
    ScaledDotProductAttention: _sdpa,
    shape.Reshape: _reshape, shape.Expand: _expand, shape.Permute: _permute,
    shape.Transpose: _transpose, shape.Squeeze: _squeeze, shape.Unsqueeze: _unsqueeze,
    shape.Clone: _identity, shape.ToCopy: _to_copy, shape.Cat: _cat, shape.Stack: _stack,
    shape.Index: _index, shape.Split: _split, shape.SplitWithSizes: _split,
}
SYMBOLICS.update(_CNN_SYMBOLICS)
